/* The libcurl function table and its loader; see curl_api.h. */
#include "curl_api.h"

#include <pthread.h>

#define CURL_SYMBOL(name) {#name, offsetof(struct cm_curl_table, fn_##name)},
CM_LAZYLIB_DEFINE(cm_curl, "libcurl.so.4", "libcurl4", CM_CURL_FUNCTIONS, CURL_SYMBOL)

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

int cm_curl_load(char *error, size_t error_size)
{
    if (cm_lazylib_load(&cm_curl_lib, error, error_size) < 0)
        return -1;
    pthread_once(&global_once, global_init);
    return 0;
}
