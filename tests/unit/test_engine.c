/* Engine tests on the null target: latency accuracy with a fixed delay, bounds by time,
 * op count and bytes, warm-up exclusion, open-loop rate and coordinated-omission
 * correction, and the per-second series. */
#include "check.h"
#include "engine.h"
#include "target_null.h"

#include <math.h>
#include <stdlib.h>

static int run_null(const struct cm_engine_config *config, const struct cm_null_config *null,
                    struct cm_engine_result *result)
{
    struct cm_null_target *target = cm_null_target_new(null, config->depth);
    int rc = cm_engine_run(config, &cm_null_target_ops, target, result);
    cm_null_target_free(target);
    return rc;
}

static void test_fixed_delay_latency(void)
{
    struct cm_engine_config config = {.depth = 16, .seconds = 2};
    struct cm_null_config null = {.delay_ns = 1000000, .block_size = 4096};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &result) == 0);
    double p50 = (double)cm_hist_percentile(result.latency, 50);
    CHECK_MSG(fabs(p50 - 1e6) <= 1e4, "p50 %.0f ns is not within 1%% of 1 ms", p50);
    CHECK(cm_hist_min(result.latency) >= 1000000);
    /* 16 in flight, 1 ms each: about 16000 ops/s */
    CHECK_MSG(result.iops > 8000 && result.iops < 16100, "iops %.0f", result.iops);
    CHECK(result.errors == 0);
    CHECK(result.drained);
    CHECK(result.series_len >= 2);
    CHECK(result.series[0].second == 1);
    CHECK(result.series[0].p99_latency_s >= 0.001 && result.series[0].p99_latency_s < 0.01);
    CHECK_MSG(fabs(result.elapsed_s - 2.0) < 0.2, "elapsed %.3f", result.elapsed_s);
    CHECK(result.bytes == result.ops * 4096);
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
    /* two seconds ran, only the second one counts */
    CHECK_MSG(result.started > result.ops * 3 / 2, "started %llu ops %llu",
              (unsigned long long)result.started, (unsigned long long)result.ops);
    CHECK_MSG(fabs(result.elapsed_s - 1.0) < 0.2, "elapsed %.3f", result.elapsed_s);
    CHECK(result.series_len >= 2 && result.series[0].warmup && !result.series[1].warmup);
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
    CHECK_MSG(fabs(uncorrected_p50 - 5e6) < 5e5, "uncorrected p50 %.0f", uncorrected_p50);
    CHECK_MSG(corrected_p99 > 100e6, "corrected p99 %.0f should include the backlog",
              corrected_p99);
    cm_engine_result_free(&result);

    /* below capacity, the rate is met and both agree */
    config = (struct cm_engine_config){.depth = 16, .rate = 500, .seconds = 1};
    null.delay_ns = 1000000;
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK_MSG(result.started >= 495 && result.started <= 505, "started %llu at 500/s",
              (unsigned long long)result.started);
    double p50 = (double)cm_hist_percentile(result.latency, 50);
    CHECK_MSG(fabs(p50 - 1e6) < 5e4, "p50 %.0f", p50);
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

int main(void)
{
    test_fixed_delay_latency();
    test_op_and_byte_bounds();
    test_warmup_excluded();
    test_open_loop_coordinated_omission();
    test_bad_config();
    return check_summary("engine");
}
