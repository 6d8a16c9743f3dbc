/* The librbd function table and its loader; see rbd_api.h. */
#include "rbd_api.h"

struct cm_rbd_table cm_rbd_functions;

#define RBD_SYMBOL(name) {#name, offsetof(struct cm_rbd_table, fn_##name)},
static const struct cm_lazylib_symbol rbd_symbols[] = {CM_RBD_FUNCTIONS(RBD_SYMBOL)};

struct cm_lazylib cm_rbd_lib = {
    .soname = "librbd.so.1",
    .package = "librbd1",
    .table = &cm_rbd_functions,
    .symbols = rbd_symbols,
    .n_symbols = sizeof rbd_symbols / sizeof rbd_symbols[0],
};

int cm_rbd_load(char *error, size_t error_size)
{
    return cm_lazylib_load(&cm_rbd_lib, error, error_size);
}
