/* Engine tests of pacing and of what the engine reports about it, on the null target: the
 * Poisson schedule's generator against the exponential distribution (Kolmogorov-Smirnov, at
 * fixed seeds), an open loop with Poisson arrivals never ahead of its schedule, think time
 * never letting a slot go faster than it allows, the mean ops in flight never above the
 * depth, the steady-state window's seconds and counts, and why a run stopped.
 *
 * As in test_engine.c, only what load cannot change is asserted: counts, floors, rates
 * against what the schedule or the slots allow, and generous hang bounds. */
#include "check.h"
#include "engine.h"
#include "null_target.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_null(const struct cm_engine_config *config, const struct cm_null_config *null,
                    struct cm_engine_result *result)
{
    struct cm_null_target *target = cm_null_target_new(null, config->depth);
    int rc = cm_engine_run(config, &cm_null_target_ops, target, result);
    cm_null_target_free(target);
    return rc;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The Kolmogorov-Smirnov statistic of `n` sorted gaps against the exponential distribution
 * of mean `mean`. */
static double ks_exponential(const uint64_t *sorted, size_t n, double mean)
{
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double f = 1 - exp(-(double)sorted[i] / mean);
        double below = f - (double)i / (double)n, above = (double)(i + 1) / (double)n - f;
        d = fmax(d, fmax(below, above));
    }
    return d;
}

static void test_poisson_gaps_are_exponential(void)
{
    enum { N = 100000 };
    uint64_t *gaps = malloc(N * sizeof *gaps);
    CHECK(gaps != NULL);
    if (!gaps)
        return;
    const double mean = 1e6; /* 1000 ops/s */
    for (uint64_t seed = 1; seed <= 3; seed++) {
        uint64_t state = seed;
        double sum = 0;
        for (size_t i = 0; i < N; i++) {
            gaps[i] = cm_arrival_gap_ns(&state, mean);
            sum += (double)gaps[i];
        }
        /* the mean within 1 % (its standard error here is 0.32 %) */
        CHECK_MSG(fabs(sum / N - mean) < 0.01 * mean, "seed %llu: mean gap %.0f ns",
                  (unsigned long long)seed, sum / N);
        qsort(gaps, N, sizeof *gaps, compare_u64);
        /* the 1 % critical value of the KS statistic is 1.63 / sqrt(n) */
        double d = ks_exponential(gaps, N, mean);
        CHECK_MSG(d < 1.63 / sqrt((double)N), "seed %llu: KS statistic %.5f (bound %.5f)",
                  (unsigned long long)seed, d, 1.63 / sqrt((double)N));
    }
    /* the same seed gives the same schedule, another seed another one */
    uint64_t a = 7, b = 7, c = 8;
    bool same = true, differs = false;
    for (int i = 0; i < 100; i++) {
        uint64_t x = cm_arrival_gap_ns(&a, mean), y = cm_arrival_gap_ns(&b, mean);
        same = same && x == y;
        differs = differs || x != cm_arrival_gap_ns(&c, mean);
    }
    CHECK(same);
    CHECK(differs);
    /* uniform gaps would fail the same test: it tells the distributions apart */
    for (size_t i = 0; i < N; i++)
        gaps[i] = (uint64_t)mean;
    CHECK(ks_exponential(gaps, N, mean) > 0.1);
    free(gaps);
}

/* How many intended starts of the Poisson schedule (seed, rate) fall at or before `limit_ns`
 * after the start (the first is at the start). */
static uint64_t schedule_points(uint64_t seed, double rate, uint64_t limit_ns)
{
    uint64_t state = seed, at = 0, n = 0;
    while (at <= limit_ns) {
        n++;
        at += cm_arrival_gap_ns(&state, 1e9 / rate);
    }
    return n;
}

static void test_poisson_open_loop(void)
{
    struct cm_engine_config config = {.depth = 64,
                                      .rate = 2000,
                                      .seconds = 1,
                                      .arrivals = CM_ARRIVALS_POISSON,
                                      .arrival_seed = 11};
    struct cm_null_config null = {.delay_ns = 1000000, .block_size = 4096};
    struct cm_engine_result result;
    uint64_t before = cm_now_ns();
    CHECK(run_null(&config, &null, &result) == 0);
    uint64_t wall = cm_now_ns() - before;
    /* never ahead of the schedule: no more ops started than intended starts had come by the
     * time the run ended (and the time bound: none after 1 s) */
    uint64_t allowed = schedule_points(11, 2000, wall < 1000000000 ? wall : 1000000000);
    CHECK_MSG(result.started <= allowed, "started %llu, the schedule allows %llu",
              (unsigned long long)result.started, (unsigned long long)allowed);
    CHECK(result.started > 0 && result.ops == result.started && result.errors == 0);
    CHECK(result.latency_uncorrected != NULL);
    CHECK(cm_hist_min(result.latency_uncorrected) >= 1000000);
    /* the correction is kept: from the intended start, never below the actual one */
    for (double p = 10; p <= 90; p += 40)
        CHECK(cm_hist_percentile(result.latency, p) >=
              cm_hist_percentile(result.latency_uncorrected, p));
    CHECK(result.stop_reason == CM_STOP_TIME);
    cm_engine_result_free(&result);
}

static void test_think_time(void)
{
    /* 4 slots, 1 ms ops, 200 ms of think: each slot starts at most one op per 201 ms */
    struct cm_engine_config config = {.depth = 4, .seconds = 2, .think = 0.2};
    struct cm_null_config null = {.delay_ns = 1000000, .block_size = 4096};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &result) == 0);
    uint64_t per_slot = (uint64_t)(result.stopped_after_s / 0.201) + 1;
    CHECK_MSG(result.started <= 4 * per_slot, "started %llu in %.3f s, at most %llu",
              (unsigned long long)result.started, result.stopped_after_s,
              (unsigned long long)(4 * per_slot));
    CHECK(result.started > 0 && result.ops == result.started);
    /* think time is not latency: no op's latency comes near it (a generous bound) */
    CHECK(cm_hist_min(result.latency) >= 1000000);
    CHECK_MSG(cm_hist_percentile(result.latency, 50) < 100000000, "p50 %llu ns",
              (unsigned long long)cm_hist_percentile(result.latency, 50));
    /* resting slots are not in flight: far fewer than 4 on average */
    CHECK_MSG(result.in_flight_mean < 1, "mean in flight %.3f", result.in_flight_mean);
    cm_engine_result_free(&result);
}

static void check_in_flight_bounded(const struct cm_engine_result *result, unsigned depth)
{
    for (size_t i = 0; i < result->series_len; i++)
        CHECK_MSG(result->series[i].in_flight_mean <= depth + 1e-9 &&
                      result->series[i].in_flight_mean >= 0,
                  "second %u: %.6f in flight of %u", result->series[i].second,
                  result->series[i].in_flight_mean, depth);
    CHECK(result->in_flight_mean <= depth + 1e-9);
    CHECK(result->steady.in_flight_mean <= depth + 1e-9);
}

/* The window's seconds are the series' seconds marked steady, in one run, and its counts
 * their sums. */
static void check_window(const struct cm_engine_result *result)
{
    const struct cm_engine_steady *steady = &result->steady;
    uint64_t ops = 0, bytes = 0;
    uint32_t seconds = 0;
    for (size_t i = 0; i < result->series_len; i++) {
        const struct cm_engine_second *s = &result->series[i];
        bool inside = steady->seconds && s->second >= steady->first_second &&
                      s->second < steady->first_second + steady->seconds;
        CHECK_MSG(s->steady == inside, "second %u steady %d", s->second, s->steady);
        if (!s->steady)
            continue;
        seconds++;
        ops += s->ops;
        bytes += s->bytes;
    }
    CHECK(seconds == steady->seconds);
    CHECK_MSG(ops == steady->ops, "window %llu ops, its seconds %llu",
              (unsigned long long)steady->ops, (unsigned long long)ops);
    CHECK(bytes == steady->bytes);
    CHECK(cm_hist_count(steady->latency) == steady->ops);
}

static void test_steady_window(void)
{
    /* closed loop, 3 s: every slot is busy at once, so ramp-up is second 1 and the window
     * seconds 2 and 3; the partial second of the drain is outside it */
    struct cm_engine_config config = {.depth = 8, .seconds = 3};
    struct cm_null_config null = {.delay_ns = 1000000, .block_size = 4096};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK_MSG(result.steady.first_second == 2 && result.steady.seconds == 2,
              "window s%u, %u seconds", result.steady.first_second, result.steady.seconds);
    CHECK(result.stop_reason == CM_STOP_TIME);
    check_window(&result);
    check_in_flight_bounded(&result, 8);
    CHECK(result.series_len >= 1 && result.series[0].in_flight_mean > 0);
    cm_engine_result_free(&result);

    /* with a 1 s warm-up: seconds 2 to 4 */
    config = (struct cm_engine_config){.depth = 8, .seconds = 3, .warmup = 1};
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK_MSG(result.steady.first_second == 2 && result.steady.seconds == 3,
              "window s%u, %u seconds", result.steady.first_second, result.steady.seconds);
    check_window(&result);
    cm_engine_result_free(&result);

    /* an open loop has no depth to reach: the first second is its ramp-up */
    config = (struct cm_engine_config){.depth = 16, .seconds = 2, .rate = 500};
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK(result.steady.first_second == 2 && result.steady.seconds == 1);
    check_window(&result);
    check_in_flight_bounded(&result, 16);
    cm_engine_result_free(&result);

    /* a closed loop that never fills its slots has no window */
    config = (struct cm_engine_config){.depth = 8, .max_ops = 4};
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK(result.steady.seconds == 0 && result.stop_reason == CM_STOP_OPS);
    check_window(&result);
    cm_engine_result_free(&result);
}

static void test_in_flight_never_above_depth(void)
{
    static const unsigned depths[] = {1, 16, 256};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        struct cm_engine_config config = {.depth = depths[i], .seconds = 2};
        struct cm_null_config null = {.delay_ns = 1000000, .delay_max_ns = 3000000, .seed = 5};
        struct cm_engine_result result;
        CHECK(run_null(&config, &null, &result) == 0);
        check_in_flight_bounded(&result, depths[i]);
        check_window(&result);
        cm_engine_result_free(&result);
    }
}

static void test_stop_reasons(void)
{
    struct cm_engine_config config = {.depth = 4, .seconds = 5};
    struct cm_null_config null = {.delay_ns = 1000000, .block_size = 4096, .work = 50};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK(result.stop_reason == CM_STOP_DONE);
    CHECK(result.ops == 50 && result.started == 50);
    CHECK_MSG(result.stopped_after_s < 5, "stopped after %.3f s", result.stopped_after_s);
    cm_engine_result_free(&result);

    config = (struct cm_engine_config){.depth = 4, .max_bytes = 4096 * 10};
    null.work = 0;
    CHECK(run_null(&config, &null, &result) == 0);
    CHECK(result.stop_reason == CM_STOP_BYTES && result.started == 10);
    cm_engine_result_free(&result);
    CHECK(strcmp(cm_stop_reason_name(CM_STOP_DONE), "done") == 0);
    CHECK(strcmp(cm_stop_reason_name(99), "none") == 0);
}

int main(void)
{
    test_poisson_gaps_are_exponential();
    test_poisson_open_loop();
    test_think_time();
    test_steady_window();
    test_in_flight_never_above_depth();
    test_stop_reasons();
    return check_summary("engine pacing");
}
