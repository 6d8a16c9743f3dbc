/* The libcurl function table and its loader; see curl_api.h. */
#include "curl_api.h"

#include <pthread.h>

struct cm_curl_table cm_curl_functions;

#define CURL_SYMBOL(name) {#name, offsetof(struct cm_curl_table, fn_##name)},
static const struct cm_lazylib_symbol curl_symbols[] = {CM_CURL_FUNCTIONS(CURL_SYMBOL)};

struct cm_lazylib cm_curl_lib = {
    .soname = "libcurl.so.4",
    .package = "libcurl4",
    .table = &cm_curl_functions,
    .symbols = curl_symbols,
    .n_symbols = sizeof curl_symbols / sizeof curl_symbols[0],
};

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
