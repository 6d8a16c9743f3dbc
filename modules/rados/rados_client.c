/* The pure-C rados client layer; see rados_client.h. */
#include "rados_client.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int set_option(rados_t cluster, const char *key, const char *value, char *error,
                      size_t error_size)
{
    int rc = rados_conf_set(cluster, key, value);
    if (rc < 0)
        snprintf(error, error_size, "cannot set %s = %s: %s", key, value, strerror(-rc));
    return rc;
}

int cm_rados_connect(const struct cm_rados_connect_options *options, rados_t *cluster_out,
                     char *error, size_t error_size)
{
    const char *id = options->id && *options->id ? options->id : "admin";
    const char *conf_name = options->conf ? options->conf : "the default ceph.conf";
    char seconds[32], timeout_text[32];
    rados_t cluster;
    /* librados takes whole seconds here ("2.5" is refused): round up */
    snprintf(timeout_text, sizeof timeout_text, "%.0f",
             ceil(options->timeout > 0 ? options->timeout : 10.0));
    int rc = rados_create(&cluster, id);
    if (rc < 0) {
        snprintf(error, error_size, "cannot create a rados client for client.%s: %s", id,
                 strerror(-rc));
        return rc;
    }
    rc = rados_conf_read_file(cluster, options->conf);
    if (rc < 0) {
        snprintf(error, error_size, "cannot read %s: %s", conf_name, strerror(-rc));
        goto fail;
    }
    /* the environment (CEPH_ARGS) may override the file, as for the ceph CLI */
    rados_conf_parse_env(cluster, NULL);
    if (options->keyring &&
        (rc = set_option(cluster, "keyring", options->keyring, error, error_size)) < 0)
        goto fail;
    if ((rc = set_option(cluster, "client_mount_timeout", timeout_text, error, error_size)) < 0 ||
        (rc = set_option(cluster, "rados_mon_op_timeout", timeout_text, error, error_size)) < 0)
        goto fail;
    if (options->osd_timeout > 0) {
        snprintf(seconds, sizeof seconds, "%.0f", ceil(options->osd_timeout));
        if ((rc = set_option(cluster, "rados_osd_op_timeout", seconds, error, error_size)) < 0)
            goto fail;
    }
    for (size_t i = 0; i < options->n_options; i++)
        if ((rc = set_option(cluster, options->options[i].key, options->options[i].value, error,
                             error_size)) < 0)
            goto fail;
    rc = rados_connect(cluster);
    if (rc < 0) {
        if (rc == -ETIMEDOUT || rc == -EINTR)
            snprintf(error, error_size,
                     "cannot connect to the cluster as client.%s using %s: no answer from the "
                     "monitors within %s s",
                     id, conf_name, timeout_text);
        else
            snprintf(error, error_size, "cannot connect to the cluster as client.%s using %s: %s",
                     id, conf_name, strerror(-rc));
        goto fail;
    }
    *cluster_out = cluster;
    return 0;
fail:
    rados_shutdown(cluster);
    return rc;
}
