/* libcurl, loaded on first use (see lazylib.h): include this instead of <curl/curl.h>. The
 * functions cephmark calls keep their names and reach libcurl through a table, filled by
 * cm_curl_load, which every path into libcurl calls first (cm_http_client_init and the
 * Swift and S3 modules' luaopen). */
#ifndef CEPHMARK_CURL_API_H
#define CEPHMARK_CURL_API_H

#include "lazylib.h"

#include <curl/curl.h>

#define CM_CURL_FUNCTIONS(X)                                                                       \
    X(curl_global_init)                                                                            \
    X(curl_version_info)                                                                           \
    X(curl_easy_init)                                                                              \
    X(curl_easy_setopt)                                                                            \
    X(curl_easy_getinfo)                                                                           \
    X(curl_easy_perform)                                                                           \
    X(curl_easy_reset)                                                                             \
    X(curl_easy_cleanup)                                                                           \
    X(curl_easy_strerror)                                                                          \
    X(curl_slist_append)                                                                           \
    X(curl_slist_free_all)                                                                         \
    X(curl_multi_init)                                                                             \
    X(curl_multi_setopt)                                                                           \
    X(curl_multi_add_handle)                                                                       \
    X(curl_multi_remove_handle)                                                                    \
    X(curl_multi_socket_action)                                                                    \
    X(curl_multi_info_read)                                                                        \
    X(curl_multi_assign)                                                                           \
    X(curl_multi_cleanup)

CM_LAZYLIB_TABLE(cm_curl, CM_CURL_FUNCTIONS)

/* curl's typecheck-gcc.h wraps some of these in checking macros; calls go to the table */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#define curl_global_init         (cm_curl_functions.fn_curl_global_init)
#define curl_version_info        (cm_curl_functions.fn_curl_version_info)
#define curl_easy_init           (cm_curl_functions.fn_curl_easy_init)
#define curl_easy_setopt         (cm_curl_functions.fn_curl_easy_setopt)
#define curl_easy_getinfo        (cm_curl_functions.fn_curl_easy_getinfo)
#define curl_easy_perform        (cm_curl_functions.fn_curl_easy_perform)
#define curl_easy_reset          (cm_curl_functions.fn_curl_easy_reset)
#define curl_easy_cleanup        (cm_curl_functions.fn_curl_easy_cleanup)
#define curl_easy_strerror       (cm_curl_functions.fn_curl_easy_strerror)
#define curl_slist_append        (cm_curl_functions.fn_curl_slist_append)
#define curl_slist_free_all      (cm_curl_functions.fn_curl_slist_free_all)
#define curl_multi_init          (cm_curl_functions.fn_curl_multi_init)
#define curl_multi_setopt        (cm_curl_functions.fn_curl_multi_setopt)
#define curl_multi_add_handle    (cm_curl_functions.fn_curl_multi_add_handle)
#define curl_multi_remove_handle (cm_curl_functions.fn_curl_multi_remove_handle)
#define curl_multi_socket_action (cm_curl_functions.fn_curl_multi_socket_action)
#define curl_multi_info_read     (cm_curl_functions.fn_curl_multi_info_read)
#define curl_multi_assign        (cm_curl_functions.fn_curl_multi_assign)
#define curl_multi_cleanup       (cm_curl_functions.fn_curl_multi_cleanup)

/* Loads libcurl and runs its global init, once: 0, or -1 with the reason in error. */
int cm_curl_load(char *error, size_t error_size);

#endif
