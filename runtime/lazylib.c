/* Loading shared libraries on first use; see lazylib.h. */
#include "lazylib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

int cm_lazylib_load(struct cm_lazylib *lib, char *error, size_t error_size)
{
    int rc = 0;
    pthread_mutex_lock(&load_lock);
    if (lib->loaded)
        goto out;
    /* RTLD_GLOBAL: the library's own plugins (librbd's, libcurl's TLS backends) may look
     * for its symbols the way they would in a process linked against it */
    void *handle = dlopen(lib->soname, RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(error, error_size, "cannot load %s (install the package %s): %s", lib->soname,
                 lib->package, why ? why : "unknown error");
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < lib->n_symbols; i++) {
        void *symbol = dlsym(handle, lib->symbols[i].name);
        if (!symbol) {
            snprintf(error, error_size, "%s has no function %s: a newer version is needed",
                     lib->soname, lib->symbols[i].name);
            dlclose(handle);
            rc = -1;
            goto out;
        }
        /* POSIX guarantees that a function's address survives this round trip */
        memcpy((char *)lib->table + lib->symbols[i].offset, &symbol, sizeof symbol);
    }
    lib->loaded = true; /* the handle stays open for the life of the process */
out:
    pthread_mutex_unlock(&load_lock);
    return rc;
}
