/* Commands to many OSDs in parallel with a deadline; see rados_osd_command.h.
 *
 * rados_osd_command blocks until the OSD answers (or until the connection's
 * rados_osd_op_timeout, which a run's own connection leaves at 0: its ops may wait for
 * recovery), so each OSD is asked from a worker thread and the caller waits on a condition
 * variable until every OSD answered or the deadline passed. The shared state is
 * reference-counted: a worker still blocked when the caller gives up keeps it alive and
 * frees it when it returns (when the OSD answers at last, or librados fails the command
 * because the OSD map marked that OSD down), so the caller never waits for a stuck OSD. */
#include "rados_osd_command.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORKERS_MAX 32

struct osd_batch {
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    rados_t cluster;
    const char **commands; /* copies, owned by the batch */
    size_t n_commands;
    struct cm_osd_answer *answers; /* the batch's own, copied out by the caller */
    bool *finished;
    size_t n, next, done;
    unsigned refs;  /* the caller and each worker */
    bool abandoned; /* the caller returned: late answers are dropped */
};

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void free_answer(struct cm_osd_answer *answer)
{
    for (size_t i = 0; i < CM_OSD_COMMANDS_MAX; i++) {
        if (answer->out[i])
            rados_buffer_free(answer->out[i]);
        answer->out[i] = NULL;
    }
    if (answer->status)
        rados_buffer_free(answer->status);
    answer->status = NULL;
}

static void batch_free(struct osd_batch *batch)
{
    for (size_t i = 0; i < batch->n; i++)
        free_answer(&batch->answers[i]);
    for (size_t i = 0; i < batch->n_commands; i++)
        free((void *)batch->commands[i]);
    free(batch->commands);
    free(batch->answers);
    free(batch->finished);
    pthread_cond_destroy(&batch->done_cond);
    pthread_mutex_destroy(&batch->lock);
    free(batch);
}

/* Drops one reference; the last one frees the batch. Called with the lock held; returns
 * with it released. */
static void batch_release_locked(struct osd_batch *batch)
{
    bool last = --batch->refs == 0;
    pthread_mutex_unlock(&batch->lock);
    if (last)
        batch_free(batch);
}

static void ask_one(struct osd_batch *batch, struct cm_osd_answer *answer)
{
    double started = monotonic_seconds();
    for (size_t c = 0; c < batch->n_commands; c++) {
        const char *command[1] = {batch->commands[c]};
        char *out = NULL, *status = NULL;
        size_t out_len = 0, status_len = 0;
        int rc = rados_osd_command(batch->cluster, answer->osd, command, 1, "", 0, &out, &out_len,
                                   &status, &status_len);
        if (rc < 0) {
            if (out)
                rados_buffer_free(out);
            answer->rc = rc;
            answer->status = status;
            answer->status_len = status_len;
            break;
        }
        if (status)
            rados_buffer_free(status);
        answer->out[c] = out;
        answer->out_len[c] = out_len;
    }
    answer->seconds = monotonic_seconds() - started;
}

static void *worker_main(void *arg)
{
    struct osd_batch *batch = arg;
    pthread_mutex_lock(&batch->lock);
    while (!batch->abandoned && batch->next < batch->n) {
        size_t index = batch->next++;
        struct cm_osd_answer answer = {.osd = batch->answers[index].osd};
        pthread_mutex_unlock(&batch->lock);
        ask_one(batch, &answer);
        pthread_mutex_lock(&batch->lock);
        if (batch->abandoned) {
            free_answer(&answer);
        } else {
            batch->answers[index] = answer;
            batch->finished[index] = true;
            batch->done++;
            pthread_cond_signal(&batch->done_cond);
        }
    }
    batch_release_locked(batch);
    return NULL;
}

static struct osd_batch *batch_new(rados_t cluster, const int *osds, size_t n,
                                   const char *const *commands, size_t n_commands)
{
    struct osd_batch *batch = calloc(1, sizeof *batch);
    if (!batch)
        return NULL;
    batch->cluster = cluster;
    batch->n = n;
    batch->answers = calloc(n ? n : 1, sizeof *batch->answers);
    batch->finished = calloc(n ? n : 1, sizeof *batch->finished);
    batch->commands = calloc(n_commands, sizeof *batch->commands);
    if (!batch->answers || !batch->finished || !batch->commands)
        goto fail;
    for (size_t i = 0; i < n_commands; i++) {
        batch->commands[i] = strdup(commands[i]);
        if (!batch->commands[i])
            goto fail;
        batch->n_commands++;
    }
    for (size_t i = 0; i < n; i++)
        batch->answers[i].osd = osds[i];
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&batch->done_cond, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&batch->lock, NULL);
    batch->refs = 1;
    return batch;
fail:
    for (size_t i = 0; i < batch->n_commands; i++)
        free((void *)batch->commands[i]);
    free(batch->commands);
    free(batch->answers);
    free(batch->finished);
    free(batch);
    return NULL;
}

int cm_rados_osd_commands(rados_t cluster, const int *osds, size_t n, const char *const *commands,
                          size_t n_commands, double timeout, struct cm_osd_answer *answers)
{
    if (n_commands == 0 || n_commands > CM_OSD_COMMANDS_MAX)
        return -EINVAL;
    memset(answers, 0, n * sizeof *answers);
    if (n == 0)
        return 0;
    struct osd_batch *batch = batch_new(cluster, osds, n, commands, n_commands);
    if (!batch)
        return -ENOMEM;
    size_t workers = n < WORKERS_MAX ? n : WORKERS_MAX;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    size_t started = 0;
    pthread_mutex_lock(&batch->lock);
    // cppcheck-suppress knownConditionTrueFalse ; workers >= 1 here (n > 0), cppcheck loses it
    for (; started < workers; started++) {
        pthread_t thread;
        batch->refs++;
        if (pthread_create(&thread, &attr, worker_main, batch) != 0) {
            batch->refs--;
            break;
        }
    }
    pthread_attr_destroy(&attr);
    if (started == 0) {
        batch->abandoned = true;
        batch_release_locked(batch);
        return -EAGAIN;
    }
    double deadline = monotonic_seconds() + (timeout > 0 ? timeout : 2);
    while (batch->done < n) {
        double left = deadline - monotonic_seconds();
        if (left <= 0)
            break;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t)left;
        until.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&batch->done_cond, &batch->lock, &until);
    }
    for (size_t i = 0; i < n; i++) {
        if (batch->finished[i]) {
            answers[i] = batch->answers[i];
        } else {
            answers[i].osd = osds[i];
            answers[i].rc = -ETIMEDOUT;
        }
    }
    batch->abandoned = true;
    /* the answers moved to the caller: the batch must not free them */
    memset(batch->finished, 0, n * sizeof *batch->finished);
    memset(batch->answers, 0, n * sizeof *batch->answers);
    batch_release_locked(batch);
    return 0;
}

void cm_osd_answers_free(struct cm_osd_answer *answers, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free_answer(&answers[i]);
}
