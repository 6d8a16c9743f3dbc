/* Ownership records, liveness of their holders, and bounded librados calls; see
 * rados_owner.h. */
#include "rados_owner.h"

#include "interrupt.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Field 22 of /proc/PID/stat: the process's start, in clock ticks after boot; 0 if unknown.
 * The command name (field 2) may hold spaces and parentheses: fields are counted after the
 * last ')'. */
static uint64_t process_start(int64_t pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%" PRId64 "/stat", pid);
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    size_t n = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[n] = '\0';
    char *field = strrchr(text, ')');
    if (!field)
        return 0;
    field++;
    for (int index = 3; index < 22 && field; index++) {
        field = strchr(field + 1, ' ');
    }
    return field ? strtoull(field + 1, NULL, 10) : 0;
}

static void read_boot_id(char *out, size_t size)
{
    out[0] = '\0';
    FILE *file = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!file)
        return;
    if (fgets(out, (int)size, file))
        out[strcspn(out, "\n")] = '\0';
    fclose(file);
}

void cm_owner_self(struct cm_owner *owner)
{
    static struct cm_owner self;
    if (self.pid != getpid()) {
        memset(&self, 0, sizeof self);
        gethostname(self.host, sizeof self.host - 1);
        if (!self.host[0])
            snprintf(self.host, sizeof self.host, "localhost");
        self.pid = getpid();
        self.pid_start = process_start(self.pid);
        read_boot_id(self.boot_id, sizeof self.boot_id);
        self.started = (int64_t)time(NULL);
    }
    uint64_t run_id = owner->run_id;
    *owner = self;
    owner->run_id = run_id;
}

int cm_owner_format(const struct cm_owner *owner, char *out, size_t size)
{
    int n = snprintf(out, size,
                     "run_id %" PRIu64 "\nhost %s\npid %" PRId64 "\npid_start %" PRIu64
                     "\nboot_id %s\nstarted %" PRId64 "\n",
                     owner->run_id, owner->host, owner->pid, owner->pid_start,
                     owner->boot_id[0] ? owner->boot_id : "-", owner->started);
    return n < 0 || (size_t)n >= size ? -1 : n;
}

bool cm_owner_parse_field(struct cm_owner *owner, const char *key, const char *value)
{
    if (strcmp(key, "run_id") == 0)
        owner->run_id = strtoull(value, NULL, 10);
    else if (strcmp(key, "host") == 0)
        snprintf(owner->host, sizeof owner->host, "%.63s", value);
    else if (strcmp(key, "pid") == 0)
        owner->pid = strtoll(value, NULL, 10);
    else if (strcmp(key, "pid_start") == 0)
        owner->pid_start = strtoull(value, NULL, 10);
    else if (strcmp(key, "boot_id") == 0)
        snprintf(owner->boot_id, sizeof owner->boot_id, "%.39s", strcmp(value, "-") ? value : "");
    else if (strcmp(key, "started") == 0)
        owner->started = strtoll(value, NULL, 10);
    else
        return false;
    return true;
}

void cm_owner_describe(const struct cm_owner *owner, char *out, size_t size)
{
    char when[64] = "at an unknown time";
    if (owner->started > 0) {
        time_t t = (time_t)owner->started;
        struct tm tm;
        if (gmtime_r(&t, &tm) == NULL ||
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
            snprintf(when, sizeof when, "at %.0f s since the epoch", (double)owner->started);
    }
    snprintf(out, size, "host %s, pid %" PRId64 ", started %s", owner->host[0] ? owner->host : "?",
             owner->pid, when);
}

enum cm_owner_state cm_owner_local_state(const struct cm_owner *owner)
{
    struct cm_owner self = {0};
    cm_owner_self(&self);
    if (strcmp(owner->host, self.host) != 0)
        return CM_OWNER_ELSEWHERE;
    /* same host name after a reboot: every process of the old boot is gone */
    if (owner->boot_id[0] && self.boot_id[0] && strcmp(owner->boot_id, self.boot_id) != 0)
        return CM_OWNER_GONE;
    if (owner->pid <= 0)
        return CM_OWNER_GONE;
    uint64_t start = process_start(owner->pid);
    if (start == 0)
        return CM_OWNER_GONE;
    /* a record without a start time (older writers) counts the pid alone */
    if (owner->pid_start && start != owner->pid_start)
        return CM_OWNER_GONE;
    return CM_OWNER_ALIVE;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double cm_rados_bound(double timeout)
{
    if (timeout <= 0)
        timeout = 10;
    /* a call made after SIGINT (the cleanup an interrupted run still does) gets at most
     * 3 s, so that the interrupt still acts within 15 s */
    return cm_interrupted() && timeout > 3 ? 3 : timeout;
}

/* The first pause of a bounded wait's polling, and its longest: the pauses double from
 * 0.25 ms, so that a call that completes in a few ms is seen within about twice its time
 * (a write phase's setup makes three of them before its first op, and a scheduled start
 * waits for that setup), and a slow one costs a wake-up every 20 ms. */
#define POLL_FIRST_NS   250000L
#define POLL_LONGEST_NS 20000000L

/* Sleeps `ns` (less than a second) or until the interrupt descriptor `fd` (when >= 0) is
 * readable. */
static void pause_ns(int fd, long ns)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = ns};
    if (fd >= 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        ppoll(&pfd, 1, &pause, NULL);
    } else {
        nanosleep(&pause, NULL);
    }
}

/* librados gives no descriptor to wait on: the wait polls the completion, with pauses that
 * grow from POLL_FIRST_NS to POLL_LONGEST_NS, sleeping on the interrupt descriptor. */
static int wait_completion(rados_ioctx_t io, rados_completion_t completion, double timeout,
                           bool *completed)
{
    *completed = false;
    /* an interrupt that arrives during the wait ends it, except in the cleanup the
     * interrupt started (a held section), which must run to its end */
    bool interrupted_before = cm_interrupted();
    double deadline = now_seconds() + cm_rados_bound(timeout);
    long pause = POLL_FIRST_NS;
    int rc;
    for (;;) {
        if (rados_aio_is_complete(completion)) {
            rc = rados_aio_get_return_value(completion);
            *completed = true;
            break;
        }
        if (!interrupted_before && cm_interrupt_should_stop()) {
            rc = -EINTR;
            break;
        }
        if (now_seconds() >= deadline) {
            rc = -ETIMEDOUT;
            break;
        }
        pause_ns(interrupted_before ? -1 : cm_interrupt_fd(), pause);
        pause = pause * 2 > POLL_LONGEST_NS ? POLL_LONGEST_NS : pause * 2;
    }
    if (rc == -EINTR || rc == -ETIMEDOUT) {
        /* the op may complete later: cancelling it drops the op; the completion is
         * reference-counted, so releasing it here is safe either way */
        if (!rados_aio_is_complete(completion))
            rados_aio_cancel(io, completion);
    }
    rados_aio_release(completion);
    return rc;
}

int cm_rados_wait(rados_ioctx_t io, rados_completion_t completion, double timeout)
{
    bool completed;
    return wait_completion(io, completion, timeout, &completed);
}

int cm_rados_operate_bounded(rados_ioctx_t io, const char *oid, rados_write_op_t op, int flags,
                             double timeout)
{
    rados_completion_t completion;
    int rc = rados_aio_create_completion2(NULL, NULL, &completion);
    if (rc == 0) {
        rc = rados_aio_write_op_operate(op, io, completion, oid, NULL, flags);
        if (rc < 0)
            rados_aio_release(completion);
        else
            rc = cm_rados_wait(io, completion, timeout);
    }
    rados_release_write_op(op);
    return rc;
}

int cm_rados_create(rados_ioctx_t io, const char *oid, const char *data, size_t len, bool exclusive,
                    bool full_try, double timeout)
{
    rados_write_op_t op = rados_create_write_op();
    if (!op)
        return -ENOMEM;
    if (exclusive)
        rados_write_op_create(op, LIBRADOS_CREATE_EXCLUSIVE, NULL);
    rados_write_op_write_full(op, data, len);
    return cm_rados_operate_bounded(io, oid, op, full_try ? LIBRADOS_OPERATION_FULL_TRY : 0,
                                    timeout);
}

int cm_rados_read_small(rados_ioctx_t io, const char *oid, char **data, size_t size, double timeout)
{
    *data = NULL;
    char *buffer = malloc(size + 1);
    if (!buffer)
        return -ENOMEM;
    rados_completion_t completion;
    int rc = rados_aio_create_completion2(NULL, NULL, &completion);
    if (rc < 0) {
        free(buffer);
        return rc;
    }
    rc = rados_aio_read(io, oid, completion, buffer, size, 0);
    if (rc < 0) {
        rados_aio_release(completion);
        free(buffer);
        return rc;
    }
    bool completed;
    rc = wait_completion(io, completion, timeout, &completed);
    if (!completed)
        return rc; /* the buffer stays with the cancelled op */
    if (rc < 0) {
        free(buffer);
        return rc;
    }
    buffer[rc] = '\0';
    *data = buffer;
    return rc;
}

int cm_rados_remove_bounded(rados_ioctx_t io, const char *oid, double timeout)
{
    rados_write_op_t op = rados_create_write_op();
    if (!op)
        return -ENOMEM;
    rados_write_op_remove(op);
    return cm_rados_operate_bounded(io, oid, op, LIBRADOS_OPERATION_FULL_TRY, timeout);
}

struct cm_owner_watch {
    rados_ioctx_t io;
    uint64_t handle;
    char oid[256];
};

/* librados's finisher thread: another host asks whether this run still lives */
static void owner_watch_notified(void *arg, uint64_t notify_id, uint64_t handle,
                                 uint64_t notifier_id, void *data, size_t data_len)
{
    (void)notifier_id;
    (void)data;
    (void)data_len;
    struct cm_owner_watch *watch = arg;
    rados_notify_ack(watch->io, watch->oid, notify_id, handle, "alive", 5);
}

static void owner_watch_error(void *arg, uint64_t handle, int err)
{
    (void)arg;
    (void)handle;
    (void)err; /* a lost watch only makes the holder look gone to other hosts */
}

int cm_owner_watch_start(rados_t cluster, int64_t pool_id, const char *nspace, const char *oid,
                         double timeout, struct cm_owner_watch **out)
{
    *out = NULL;
    struct cm_owner_watch *watch = calloc(1, sizeof *watch);
    if (!watch)
        return -ENOMEM;
    snprintf(watch->oid, sizeof watch->oid, "%s", oid);
    int rc = rados_ioctx_create2(cluster, pool_id, &watch->io);
    if (rc < 0) {
        free(watch);
        return rc;
    }
    rados_ioctx_set_namespace(watch->io, nspace);
    /* a watch is no data: registering and removing it go through on a full cluster, so a
     * run there still ends at once */
    rados_set_pool_full_try(watch->io);
    rados_completion_t completion;
    rc = rados_aio_create_completion2(NULL, NULL, &completion);
    if (rc == 0) {
        rc = rados_aio_watch2(watch->io, watch->oid, completion, &watch->handle,
                              owner_watch_notified, owner_watch_error, 0, watch);
        if (rc < 0)
            rados_aio_release(completion);
        else
            rc = cm_rados_wait(watch->io, completion, timeout);
    }
    if (rc < 0) {
        /* a watch that timed out may still register: keep its memory (never freed) so a
         * late callback finds it */
        if (rc != -ETIMEDOUT && rc != -EINTR && rc != -ECANCELED) {
            rados_ioctx_destroy(watch->io);
            free(watch);
        }
        return rc;
    }
    *out = watch;
    return 0;
}

void cm_owner_watch_stop(struct cm_owner_watch *watch, double timeout)
{
    if (!watch)
        return;
    rados_completion_t completion;
    if (rados_aio_create_completion2(NULL, NULL, &completion) < 0)
        return;
    if (rados_aio_unwatch(watch->io, watch->handle, completion) < 0) {
        rados_aio_release(completion);
        return;
    }
    bool completed;
    wait_completion(watch->io, completion, timeout, &completed);
    if (!completed)
        return; /* still registered: its memory stays for a late callback */
    /* no callback may still be running when the memory goes */
    rados_watch_flush(rados_ioctx_get_cluster(watch->io));
    rados_ioctx_destroy(watch->io);
    free(watch);
}

int cm_owner_probe(rados_ioctx_t io, const char *oid, double timeout)
{
    rados_completion_t completion;
    int rc = rados_aio_create_completion2(NULL, NULL, &completion);
    if (rc < 0)
        return rc;
    /* librados fills these when the notify ends: on the heap, and left to it if the wait
     * gives up first */
    struct reply {
        char *data;
        size_t len;
    } *reply = calloc(1, sizeof *reply);
    if (!reply) {
        rados_aio_release(completion);
        return -ENOMEM;
    }
    if (timeout <= 0)
        timeout = 5;
    rc = rados_aio_notify(io, oid, completion, "cephmark-probe", 14, (uint64_t)(timeout * 1000),
                          &reply->data, &reply->len);
    if (rc < 0) {
        rados_aio_release(completion);
        free(reply);
        return rc;
    }
    bool completed;
    rc = wait_completion(io, completion, timeout + 10, &completed);
    if (!completed)
        return rc;
    /* -ETIMEDOUT here is the notify's: some watcher did not answer (a dead client's watch
     * until the OSD drops it); the reply still lists those that did */
    int alive = rc < 0 && rc != -ETIMEDOUT ? rc : 0;
    struct notify_ack_t *acks = NULL;
    struct notify_timeout_t *timeouts = NULL;
    size_t n_acks = 0, n_timeouts = 0;
    if (reply->data && rados_decode_notify_response(reply->data, reply->len, &acks, &n_acks,
                                                    &timeouts, &n_timeouts) == 0) {
        alive = n_acks > 0;
        rados_free_notify_response(acks, n_acks, timeouts);
    }
    rados_buffer_free(reply->data);
    free(reply);
    return alive;
}
