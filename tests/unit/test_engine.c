/* Engine tests on the null target: latency with a fixed delay, bounds by time, op count and
 * bytes, warm-up exclusion, open-loop rate and coordinated-omission correction, and the
 * per-second series and the histogram of each second that the per-second callback sees.
 *
 * Only what machine load cannot change is asserted: a wake-up can come late, never early,
 * so latencies are never below the target's delay and rates never above what the slots
 * allow; counts equal the ops done, whatever their speed. How close the figures come to the
 * ideal on a quiet machine is a benchmark (bench/engine-fidelity.sh), not a test. */
#include "check.h"
#include "engine.h"
#include "engine_lua.h"
#include "null_target.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static int run_null(const struct cm_engine_config *config, const struct cm_null_config *null,
                    struct cm_engine_result *result)
{
    struct cm_null_target *target = cm_null_target_new(null, config->depth);
    int rc = cm_engine_run(config, &cm_null_target_ops, target, result);
    cm_null_target_free(target);
    return rc;
}

/* Generous bounds that only catch a hang or a run that ignores its time bound. */
#define HANG_SECONDS 30.0

static uint64_t series_ops(const struct cm_engine_result *result, bool skip_warmup)
{
    uint64_t total = 0;
    for (size_t i = 0; i < result->series_len; i++)
        if (!(skip_warmup && result->series[i].warmup))
            total += result->series[i].ops;
    return total;
}

static void test_fixed_delay_latency(void)
{
    struct cm_engine_config config = {.depth = 16, .seconds = 2};
    struct cm_null_config null = {.delay_ns = 1000000, .block_size = 4096};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK(result.errors == 0);
    CHECK(result.drained);
    CHECK(result.ops > 0);
    /* no op completes before its delay, so no percentile is below it */
    CHECK_MSG(cm_hist_min(result.latency) >= 1000000, "min %llu ns",
              (unsigned long long)cm_hist_min(result.latency));
    CHECK(cm_hist_percentile(result.latency, 50) >= 1000000);
    CHECK(cm_hist_percentile(result.latency, 99) >= cm_hist_percentile(result.latency, 50));
    /* every op done is counted once: in the histogram, the bytes and the series */
    CHECK(result.started == result.ops);
    CHECK(cm_hist_count(result.latency) == result.ops);
    CHECK(result.bytes == result.ops * 4096);
    CHECK_MSG(series_ops(&result, false) == result.ops, "series %llu ops, result %llu",
              (unsigned long long)series_ops(&result, false), (unsigned long long)result.ops);
    CHECK(result.series_len >= 2);
    CHECK(result.series[0].second == 1);
    CHECK(result.series[0].p99_latency_s >= 0.001);
    /* 16 slots of at least 1 ms each: never more than 16000 ops/s, at most a slot's worth
     * more over the run */
    CHECK_MSG(result.ops <= (uint64_t)(16000 * result.elapsed_s) + 16, "%llu ops in %.3f s",
              (unsigned long long)result.ops, result.elapsed_s);
    /* the time bound stops the run (how close to 2 s it ends depends on the scheduler) */
    CHECK_MSG(result.elapsed_s > 0 && result.elapsed_s < HANG_SECONDS, "elapsed %.3f s",
              result.elapsed_s);
    cm_engine_result_free(&result);
}

static void test_op_and_byte_bounds(void)
{
    struct cm_engine_config config = {.depth = 8, .max_ops = 1000};
    struct cm_null_config null = {.delay_ns = 0, .block_size = 4096};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK(result.started == 1000);
    CHECK(result.ops == 1000);
    CHECK(cm_hist_count(result.latency) == 1000);
    /* the run ends with its last op: it does not sleep on to the next second's tick when
     * the bound falls on a multiple of the depth (it did, for a whole second) */
    CHECK_MSG(result.series_len == 1 && result.series[0].partial,
              "%zu seconds in the series of a run of 1000 null ops", result.series_len);
    cm_engine_result_free(&result);

    config = (struct cm_engine_config){.depth = 4, .max_bytes = 4096 * 10 + 1};
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK_MSG(result.started == 11, "started %llu", (unsigned long long)result.started);
    cm_engine_result_free(&result);
}

static void test_warmup_excluded(void)
{
    struct cm_engine_config config = {.depth = 4, .seconds = 1, .warmup = 1};
    struct cm_null_config null = {.delay_ns = 1000000, .block_size = 1};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &result) == 0);
    /* two seconds ran, only the second one counts: the ops of the seconds after the
     * warm-up, exactly */
    CHECK(result.series_len >= 2 && result.series[0].warmup && !result.series[1].warmup);
    CHECK(result.series[0].ops > 0);
    CHECK_MSG(result.ops == series_ops(&result, true), "ops %llu, after warm-up %llu",
              (unsigned long long)result.ops, (unsigned long long)series_ops(&result, true));
    CHECK_MSG(result.started == series_ops(&result, false), "started %llu, series %llu",
              (unsigned long long)result.started, (unsigned long long)series_ops(&result, false));
    CHECK(cm_hist_count(result.latency) == result.ops);
    CHECK_MSG(result.elapsed_s > 0 && result.elapsed_s < HANG_SECONDS, "elapsed %.3f",
              result.elapsed_s);
    cm_engine_result_free(&result);
}

/* Open loop at 1000 ops/s with ops taking 5 ms and 2 slots: the system can do only 400
 * ops/s, so ops queue behind each other. The corrected latency grows with the backlog,
 * the uncorrected one stays at the service time. */
static void test_open_loop_coordinated_omission(void)
{
    struct cm_engine_config config = {.depth = 2, .rate = 1000, .seconds = 1};
    struct cm_null_config null = {.delay_ns = 5000000, .block_size = 1};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK(result.latency_uncorrected != NULL);
    double corrected_p99 = (double)cm_hist_percentile(result.latency, 99);
    double uncorrected_p50 = (double)cm_hist_percentile(result.latency_uncorrected, 50);
    /* the service time is the floor of the uncorrected latency */
    CHECK_MSG(uncorrected_p50 >= 5e6, "uncorrected p50 %.0f", uncorrected_p50);
    /* 2 slots of 5 ms serve at most 400 of the 1000 ops due in the second, so the ops
     * started late fall ever further behind their intended start; load can only add */
    CHECK_MSG(result.started <= 402, "started %llu", (unsigned long long)result.started);
    CHECK_MSG(corrected_p99 > 100e6, "corrected p99 %.0f should include the backlog",
              corrected_p99);
    CHECK(corrected_p99 >= (double)cm_hist_percentile(result.latency_uncorrected, 99));
    cm_engine_result_free(&result);

    /* below capacity: ops start on their schedule, never ahead of it, and each is counted
     * in both histograms; measured from the intended start, an op also carries the loop's
     * lateness in starting it, so the corrected figures are never below the others */
    config = (struct cm_engine_config){.depth = 16, .rate = 500, .seconds = 1};
    null.delay_ns = 1000000;
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK_MSG(result.started > 0 && result.started <= 501, "started %llu at 500/s in 1 s",
              (unsigned long long)result.started);
    CHECK(result.ops == result.started && result.errors == 0);
    CHECK(cm_hist_count(result.latency) == result.ops);
    CHECK(cm_hist_count(result.latency_uncorrected) == result.ops);
    CHECK(cm_hist_min(result.latency_uncorrected) >= 1000000);
    for (double p = 10; p <= 90; p += 40)
        CHECK(cm_hist_percentile(result.latency, p) >=
              cm_hist_percentile(result.latency_uncorrected, p));
    cm_engine_result_free(&result);
}

/* What the per-second callback sees of each second's latency histogram. */
struct second_view {
    unsigned calls, mismatches, missing;
    uint64_t ops;
};

static bool view_second(void *arg, const struct cm_engine_second *second)
{
    struct second_view *view = arg;
    view->calls++;
    if (!second->latency) {
        view->missing++;
        return true;
    }
    view->ops += cm_hist_count(second->latency);
    if (cm_hist_count(second->latency) != second->ops ||
        (second->ops && cm_hist_min(second->latency) < 2000000))
        view->mismatches++;
    return true;
}

/* The callback gets the second's own histogram: as many values as the second's ops, none
 * below the delay, and reset between seconds (their counts add up to the run's). */
static void test_second_histogram(void)
{
    struct second_view view = {0};
    struct cm_engine_config config = {
        .depth = 4, .seconds = 2, .on_second = view_second, .on_second_arg = &view};
    struct cm_null_config null = {.delay_ns = 2000000, .block_size = 4096};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK(view.calls == result.series_len);
    CHECK(view.missing == 0);
    CHECK_MSG(view.mismatches == 0, "%u seconds whose histogram is not the second's",
              view.mismatches);
    CHECK_MSG(view.ops == result.ops, "seconds' histograms %llu ops, result %llu",
              (unsigned long long)view.ops, (unsigned long long)result.ops);
    for (size_t i = 0; i < result.series_len; i++)
        CHECK(result.series[i].latency == NULL);
    cm_engine_result_free(&result);
}

static void test_bad_config(void)
{
    struct cm_engine_config config = {.depth = 0, .max_ops = 1};
    struct cm_null_config null = {0};
    struct cm_engine_result result;
    struct cm_null_target *target = cm_null_target_new(&null, 1);
    CHECK(cm_engine_run(&config, &cm_null_target_ops, target, &result) < 0);
    cm_null_target_free(target);
}

/* The memory check: the exact sentence, the 7/8 margin, overflow, and unknown memory. */
static void test_memory_check(void)
{
    const uint64_t MiB = 1 << 20, GiB = 1ULL << 30;
    char message[512] = "";
    uint64_t available = (uint64_t)(21.3 * (double)GiB);
    CHECK(!cm_memory_fits(65536, 64 * MiB, 64 * MiB, 65 * MiB, available, "read buffers",
                          "lower -t or -b", message, sizeof message));
    CHECK_STR(message, "65536 slots x 64 MiB = 4 TiB of read buffers (8 TiB with the library's "
                       "own), more than the 21.3 GiB this machine has available; lower -t or -b");
    /* 7/8 of what is available fits; a byte more leaves too little for everything else */
    CHECK(cm_memory_fits(7, GiB, 0, 0, 8 * GiB, "buffers", "lower", message, sizeof message));
    CHECK(!cm_memory_fits(7, GiB, 0, 1, 8 * GiB, "buffers", "lower", message, sizeof message));
    CHECK_STR(message, "7 slots x 1 GiB = 7 GiB of buffers, leaving less than 1/8 of the 8 GiB "
                       "this machine has available; lower");
    CHECK(!cm_memory_fits(UINT64_MAX / 2, 4 * GiB, 0, 0, 8 * GiB, "buffers", "lower", message,
                          sizeof message));
    CHECK(strstr(message, "more than 16 EiB of buffers") != NULL);
    CHECK(!cm_memory_fits(1, 0, 0, 9 * GiB, 8 * GiB, "payload memory", "lower -b", message,
                          sizeof message));
    CHECK_STR(message, "9 GiB of payload memory, more than the 8 GiB this machine has available; "
                       "lower -b");
    CHECK(cm_memory_fits(65536, 64 * MiB, 0, 0, 0, "buffers", "lower", message, sizeof message));
    CHECK(cm_memory_available() > 0);
}

int main(void)
{
    test_fixed_delay_latency();
    test_op_and_byte_bounds();
    test_warmup_excluded();
    test_open_loop_coordinated_omission();
    test_second_histogram();
    test_bad_config();
    test_memory_check();
    return check_summary("engine");
}
