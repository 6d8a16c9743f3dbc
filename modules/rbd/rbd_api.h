/* librbd, loaded on first use (see lazylib.h): include this instead of <rbd/librbd.h>. The
 * functions cephmark calls keep their names and reach librbd through a table, filled by
 * cm_rbd_load, which the RBD module's luaopen calls (every path into librbd starts there). */
#ifndef CEPHMARK_RBD_API_H
#define CEPHMARK_RBD_API_H

#include "lazylib.h"

#include <rbd/librbd.h>

#define CM_RBD_FUNCTIONS(X)                                                                        \
    X(rbd_version)                                                                                 \
    X(rbd_create4)                                                                                 \
    X(rbd_remove)                                                                                  \
    X(rbd_list2)                                                                                   \
    X(rbd_image_spec_list_cleanup)                                                                 \
    X(rbd_open)                                                                                    \
    X(rbd_open_read_only)                                                                          \
    X(rbd_close)                                                                                   \
    X(rbd_stat)                                                                                    \
    X(rbd_get_size)                                                                                \
    X(rbd_get_features)                                                                            \
    X(rbd_get_data_pool_id)                                                                        \
    X(rbd_get_block_name_prefix)                                                                   \
    X(rbd_resize)                                                                                  \
    X(rbd_flush)                                                                                   \
    X(rbd_discard)                                                                                 \
    X(rbd_read2)                                                                                   \
    X(rbd_write2)                                                                                  \
    X(rbd_metadata_get)                                                                            \
    X(rbd_metadata_set)                                                                            \
    X(rbd_config_image_list)                                                                       \
    X(rbd_config_image_list_cleanup)                                                               \
    X(rbd_image_options_create)                                                                    \
    X(rbd_image_options_destroy)                                                                   \
    X(rbd_image_options_set_string)                                                                \
    X(rbd_image_options_set_uint64)                                                                \
    X(rbd_set_image_notification)                                                                  \
    X(rbd_poll_io_events)                                                                          \
    X(rbd_aio_create_completion)                                                                   \
    X(rbd_aio_get_arg)                                                                             \
    X(rbd_aio_get_return_value)                                                                    \
    X(rbd_aio_read2)                                                                               \
    X(rbd_aio_write2)                                                                              \
    X(rbd_aio_release)

CM_LAZYLIB_TABLE(cm_rbd, CM_RBD_FUNCTIONS)

#define rbd_version                   (cm_rbd_functions.fn_rbd_version)
#define rbd_create4                   (cm_rbd_functions.fn_rbd_create4)
#define rbd_remove                    (cm_rbd_functions.fn_rbd_remove)
#define rbd_list2                     (cm_rbd_functions.fn_rbd_list2)
#define rbd_image_spec_list_cleanup   (cm_rbd_functions.fn_rbd_image_spec_list_cleanup)
#define rbd_open                      (cm_rbd_functions.fn_rbd_open)
#define rbd_open_read_only            (cm_rbd_functions.fn_rbd_open_read_only)
#define rbd_close                     (cm_rbd_functions.fn_rbd_close)
#define rbd_stat                      (cm_rbd_functions.fn_rbd_stat)
#define rbd_get_size                  (cm_rbd_functions.fn_rbd_get_size)
#define rbd_get_features              (cm_rbd_functions.fn_rbd_get_features)
#define rbd_get_data_pool_id          (cm_rbd_functions.fn_rbd_get_data_pool_id)
#define rbd_get_block_name_prefix     (cm_rbd_functions.fn_rbd_get_block_name_prefix)
#define rbd_resize                    (cm_rbd_functions.fn_rbd_resize)
#define rbd_flush                     (cm_rbd_functions.fn_rbd_flush)
#define rbd_discard                   (cm_rbd_functions.fn_rbd_discard)
#define rbd_read2                     (cm_rbd_functions.fn_rbd_read2)
#define rbd_write2                    (cm_rbd_functions.fn_rbd_write2)
#define rbd_metadata_get              (cm_rbd_functions.fn_rbd_metadata_get)
#define rbd_metadata_set              (cm_rbd_functions.fn_rbd_metadata_set)
#define rbd_config_image_list         (cm_rbd_functions.fn_rbd_config_image_list)
#define rbd_config_image_list_cleanup (cm_rbd_functions.fn_rbd_config_image_list_cleanup)
#define rbd_image_options_create      (cm_rbd_functions.fn_rbd_image_options_create)
#define rbd_image_options_destroy     (cm_rbd_functions.fn_rbd_image_options_destroy)
#define rbd_image_options_set_string  (cm_rbd_functions.fn_rbd_image_options_set_string)
#define rbd_image_options_set_uint64  (cm_rbd_functions.fn_rbd_image_options_set_uint64)
#define rbd_set_image_notification    (cm_rbd_functions.fn_rbd_set_image_notification)
#define rbd_poll_io_events            (cm_rbd_functions.fn_rbd_poll_io_events)
#define rbd_aio_create_completion     (cm_rbd_functions.fn_rbd_aio_create_completion)
#define rbd_aio_get_arg               (cm_rbd_functions.fn_rbd_aio_get_arg)
#define rbd_aio_get_return_value      (cm_rbd_functions.fn_rbd_aio_get_return_value)
#define rbd_aio_read2                 (cm_rbd_functions.fn_rbd_aio_read2)
#define rbd_aio_write2                (cm_rbd_functions.fn_rbd_aio_write2)
#define rbd_aio_release               (cm_rbd_functions.fn_rbd_aio_release)

/* Loads librbd, once: 0, or -1 with the reason in error. */
int cm_rbd_load(char *error, size_t error_size);

#endif
