/* The pure-C rados client layer under the `cephmark.rados` glue: connecting with the
 * timeouts a benchmark needs, and errno-to-text helpers. No Lua types here, so the engine
 * and the drop-in commands can use it directly. */
#ifndef CEPHMARK_RADOS_CLIENT_H
#define CEPHMARK_RADOS_CLIENT_H

#include <rados/librados.h>
#include <stddef.h>

struct cm_rados_config_option {
    const char *key;
    const char *value;
};

struct cm_rados_connect_options {
    const char *conf;    /* ceph.conf path; NULL reads the default search path */
    const char *id;      /* client id without "client.", default "admin" */
    const char *keyring; /* NULL: as the conf says */
    double timeout;      /* client_mount_timeout and rados_mon_op_timeout, seconds; 0: 10 */
    double osd_timeout;  /* rados_osd_op_timeout, seconds; 0: none (ops wait for recovery) */
    const struct cm_rados_config_option *options; /* extra conf settings */
    size_t n_options;
};

/* Connects, or returns a negative errno with a sentence in `error` naming the step that
 * failed and the conf and client used. */
int cm_rados_connect(const struct cm_rados_connect_options *options, rados_t *cluster, char *error,
                     size_t error_size);

#endif
