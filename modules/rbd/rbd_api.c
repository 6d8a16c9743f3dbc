/* The librbd function table and its loader; see rbd_api.h. */
#include "rbd_api.h"

#define RBD_SYMBOL(name) {#name, offsetof(struct cm_rbd_table, fn_##name)},
CM_LAZYLIB_DEFINE(cm_rbd, "librbd.so.1", "librbd1", CM_RBD_FUNCTIONS, RBD_SYMBOL)

int cm_rbd_load(char *error, size_t error_size)
{
    return cm_lazylib_load(&cm_rbd_lib, error, error_size);
}
