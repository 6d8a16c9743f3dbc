/* Commands to many OSDs at once (`ceph tell osd.N ...` through librados), in parallel and
 * with a deadline: what the cluster view of a phase needs to read every OSD's perf counters
 * before and after it without holding the phase up. Pure C, no Lua. See docs/telemetry.md. */
#ifndef CEPHMARK_RADOS_OSD_COMMAND_H
#define CEPHMARK_RADOS_OSD_COMMAND_H

#include <rados/librados.h>
#include <stddef.h>

#define CM_OSD_COMMANDS_MAX 4

/* One OSD's answers: rc is 0 when every command answered, else the first failure's
 * negative errno (-ETIMEDOUT when the deadline passed first) with the OSD's status text.
 * out[i] are librados buffers (rados_buffer_free); cm_osd_answers_free frees them all. */
struct cm_osd_answer {
    int osd;
    int rc;
    char *out[CM_OSD_COMMANDS_MAX];
    size_t out_len[CM_OSD_COMMANDS_MAX];
    char *status;
    size_t status_len;
    double seconds; /* from the first command sent to the last answer */
};

/* Sends `commands` (JSON, in order) to each of the `n` OSDs, up to 32 OSDs at a time, and
 * returns within `timeout` seconds. answers[i] is filled for osds[i]. A worker still
 * blocked at the deadline is left to finish on its own (it waits without CPU until the OSD
 * answers or is marked down); its late answer is dropped. The connection needs no
 * rados_osd_op_timeout, so a run's own connection serves. Returns 0, or a negative errno
 * when the workers could not be started. */
int cm_rados_osd_commands(rados_t cluster, const int *osds, size_t n, const char *const *commands,
                          size_t n_commands, double timeout, struct cm_osd_answer *answers);

void cm_osd_answers_free(struct cm_osd_answer *answers, size_t n);

#endif
