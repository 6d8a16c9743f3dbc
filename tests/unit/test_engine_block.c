/* Engine tests of the block hook (targets whose completions the loop waits for itself, as
 * the rados target does): latency and series with a fixed delay, a stall of several seconds
 * whose seconds are filled in afterwards, a hung op abandoned at the drain deadline by the
 * watchdog, and open loop, where the engine must not block. The target below completes
 * ops at a due time; it has no library thread, so only the loop's own waiting makes
 * progress, as with callback-less librados completions. */
#include "check.h"
#include "engine.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SLOTS 64
#define NEVER     UINT64_MAX

struct timed_target {
    uint64_t delay_ns;
    uint64_t stall_sequence; /* this op takes stall_ns instead (NEVER for none) */
    uint64_t stall_ns;       /* NEVER: the op never completes */
    bool blocking;           /* from cm_engine_blocking at slot_init */
    struct cm_op *in_flight[MAX_SLOTS];
    uint64_t due[MAX_SLOTS];
    unsigned n_in_flight;
    unsigned block_calls, cancel_calls;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool cancelled;
};

static int timed_slot_init(void *self, struct cm_op *op)
{
    struct timed_target *t = self;
    t->blocking = cm_engine_blocking(op);
    return op->slot < MAX_SLOTS ? 0 : -1;
}

static int timed_submit(void *self, struct cm_op *op)
{
    struct timed_target *t = self;
    op->kind = CM_OP_WRITE;
    op->length = 4096;
    uint64_t delay = op->sequence == t->stall_sequence ? t->stall_ns : t->delay_ns;
    t->due[t->n_in_flight] = delay == NEVER ? NEVER : op->start_ns + delay;
    t->in_flight[t->n_in_flight++] = op;
    return 0;
}

static void timed_complete(void *self, struct cm_op *op)
{
    (void)self;
    (void)op;
}

/* Completes every op that is due, keeping the rest in submission order. */
static void complete_due(struct timed_target *t)
{
    uint64_t now = cm_now_ns();
    unsigned kept = 0;
    for (unsigned i = 0; i < t->n_in_flight; i++) {
        if (t->due[i] <= now) {
            cm_engine_complete(t->in_flight[i], 0);
        } else {
            t->in_flight[kept] = t->in_flight[i];
            t->due[kept++] = t->due[i];
        }
    }
    t->n_in_flight = kept;
}

static uint64_t timed_next_deadline(void *self)
{
    struct timed_target *t = self;
    if (t->blocking || t->n_in_flight == 0)
        return UINT64_MAX;
    uint64_t earliest = UINT64_MAX;
    for (unsigned i = 0; i < t->n_in_flight; i++)
        if (t->due[i] < earliest)
            earliest = t->due[i];
    return earliest;
}

static void timed_poll(void *self, uint64_t now_ns)
{
    (void)now_ns;
    complete_due(self);
}

/* Waits for the oldest op's due time (or a cancel), as bench_block waits in librados. */
static void timed_block(void *self)
{
    struct timed_target *t = self;
    t->block_calls++;
    if (t->n_in_flight == 0)
        return;
    uint64_t due = t->due[0];
    pthread_mutex_lock(&t->lock);
    while (!t->cancelled && cm_now_ns() < due) {
        if (due == NEVER) {
            pthread_cond_wait(&t->cond, &t->lock);
        } else {
            /* the condition variable runs on CLOCK_REALTIME: wait in steps of at most 1 ms */
            uint64_t now = cm_now_ns();
            uint64_t step = due - now < 1000000 ? due - now : 1000000;
            struct timespec at;
            clock_gettime(CLOCK_REALTIME, &at);
            at.tv_nsec += (long)step;
            if (at.tv_nsec >= 1000000000) {
                at.tv_sec++;
                at.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&t->cond, &t->lock, &at);
        }
    }
    pthread_mutex_unlock(&t->lock);
    complete_due(t);
}

static void timed_cancel_block(void *self)
{
    struct timed_target *t = self;
    pthread_mutex_lock(&t->lock);
    t->cancel_calls++;
    t->cancelled = true;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

static const struct cm_target_ops timed_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "timed",
    .slot_init = timed_slot_init,
    .submit = timed_submit,
    .complete = timed_complete,
    .next_deadline = timed_next_deadline,
    .poll = timed_poll,
    .block = timed_block,
    .cancel_block = timed_cancel_block,
};

static void timed_init(struct timed_target *t, uint64_t delay_ns)
{
    memset(t, 0, sizeof *t);
    t->delay_ns = delay_ns;
    t->stall_sequence = NEVER;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
}

static void timed_fini(struct timed_target *t)
{
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->cond);
}

/* Seconds must be 1, 2, 3, ... without a gap, each closed once. */
static bool series_is_contiguous(const struct cm_engine_result *result)
{
    for (size_t i = 0; i < result->series_len; i++)
        if (result->series[i].second != i + 1)
            return false;
    return true;
}

static void test_block_fixed_delay(void)
{
    struct timed_target t;
    timed_init(&t, 2000000);
    struct cm_engine_config config = {.depth = 8, .seconds = 2};
    struct cm_engine_result result;
    CHECK(cm_engine_run(&config, &timed_ops, &t, &result) == 0);
    CHECK(t.blocking);
    CHECK(t.block_calls > 0);
    CHECK(t.cancel_calls == 0);
    CHECK(result.drained);
    CHECK(result.errors == 0);
    CHECK(cm_hist_min(result.latency) >= 2000000);
    /* load can only make ops slower: at least the delay, at most 8 slots / 2 ms */
    double p50 = (double)cm_hist_percentile(result.latency, 50);
    CHECK_MSG(p50 >= 2e6, "p50 %.0f ns, below the 2 ms delay", p50);
    CHECK_MSG(result.iops > 0 && result.iops < 4100, "iops %.0f", result.iops);
    CHECK(cm_hist_count(result.latency) == result.ops && result.started == result.ops);
    CHECK(series_is_contiguous(&result));
    CHECK(result.series_len >= 2);
    cm_engine_result_free(&result);
    timed_fini(&t);
}

/* An op stalls for 2.5 s in a 3 s run: the loop is blocked on it the whole time, and the
 * seconds that ended meanwhile are closed afterwards, with no op in them. */
static void test_block_stall_fills_seconds(void)
{
    struct timed_target t;
    timed_init(&t, 1000000);
    t.stall_sequence = 20;
    t.stall_ns = 2500000000ULL;
    struct cm_engine_config config = {.depth = 4, .seconds = 3};
    struct cm_engine_result result;
    CHECK(cm_engine_run(&config, &timed_ops, &t, &result) == 0);
    CHECK(result.drained);
    CHECK_MSG(series_is_contiguous(&result), "series of %zu seconds has a gap", result.series_len);
    CHECK_MSG(result.series_len >= 3, "%zu seconds", result.series_len);
    /* the first full second after the op started: nothing finished in it */
    CHECK(result.series_len >= 2 && result.series[1].ops == 0);
    CHECK(cm_hist_max(result.latency) >= 2500000000ULL);
    uint64_t total = 0;
    for (size_t i = 0; i < result.series_len; i++)
        total += result.series[i].ops;
    CHECK_MSG(total == result.started, "series counts %llu ops, %llu started",
              (unsigned long long)total, (unsigned long long)result.started);
    cm_engine_result_free(&result);
    timed_fini(&t);
}

/* An op never completes: the watchdog ends the block at stop + drain timeout, and the run
 * returns, not drained. */
static void test_block_hung_op_abandoned(void)
{
    struct timed_target t;
    timed_init(&t, 1000000);
    t.stall_sequence = 5;
    t.stall_ns = NEVER;
    struct cm_engine_config config = {.depth = 4, .seconds = 0.5, .drain_timeout = 0.5};
    struct cm_engine_result result;
    uint64_t start = cm_now_ns();
    CHECK(cm_engine_run(&config, &timed_ops, &t, &result) == 0);
    double took = (double)(cm_now_ns() - start) / 1e9;
    /* not before the stop time and drain timeout; the upper bound only catches a hang */
    CHECK_MSG(took >= 0.95 && took < 30.0, "run took %.3f s, expected about 1 s", took);
    CHECK(t.cancel_calls == 1);
    CHECK(!result.drained);
    CHECK(series_is_contiguous(&result));
    /* the watchdog fired about 1 s in: the first second is in the series */
    CHECK_MSG(result.series_len >= 1, "%zu seconds", result.series_len);
    cm_engine_result_free(&result);
    timed_fini(&t);
}

/* Open loop needs precise start times: the engine must not block in the target. */
static void test_open_loop_does_not_block(void)
{
    struct timed_target t;
    timed_init(&t, 1000000);
    struct cm_engine_config config = {.depth = 4, .rate = 500, .seconds = 1};
    struct cm_engine_result result;
    CHECK(cm_engine_run(&config, &timed_ops, &t, &result) == 0);
    CHECK(!t.blocking);
    CHECK(t.block_calls == 0);
    CHECK(result.drained);
    /* never ahead of the schedule (500 in 1 s); fewer when the loop runs late */
    CHECK_MSG(result.started > 0 && result.started <= 501, "started %llu",
              (unsigned long long)result.started);
    CHECK(result.ops == result.started);
    cm_engine_result_free(&result);
    timed_fini(&t);
}

int main(void)
{
    test_block_fixed_delay();
    test_block_stall_fills_seconds();
    test_block_hung_op_abandoned();
    test_open_loop_does_not_block();
    return check_summary("engine_block");
}
