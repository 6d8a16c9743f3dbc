/* Unit tests for the latency histogram (runtime/hist.c): percentile accuracy against exact
 * sorted data, bucket layout and error bound over the whole tracked range, statistics,
 * merging, and the encoding, including a decoder fed truncated, corrupted and crafted input.
 * Deterministic: all randomness comes from a seeded generator defined here. */
#include "check.h"
#include "hist.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

static uint64_t random_state;

/* splitmix64: tiny, full-period, and good enough to drive test data. */
static uint64_t random_next(void)
{
    uint64_t z = (random_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double random_unit(void)
{
    return (double)(random_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [low, high]; the slight modulo bias does not matter for tests. */
static uint64_t random_between(uint64_t low, uint64_t high)
{
    uint64_t span = high - low + 1;
    return span == 0 ? random_next() : low + random_next() % span;
}

/* Converts a double to uint64_t without the undefined behaviour of out-of-range casts. */
static uint64_t saturate(double v)
{
    if (!(v > 0)) {
        return 0;
    }
    if (v >= 18446744073709551616.0) {
        return UINT64_MAX;
    }
    return (uint64_t)v;
}

static uint64_t log_uniform(double low, double high)
{
    return saturate(exp(log(low) + random_unit() * (log(high) - log(low))));
}

static int compare_values(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t *sorted_copy(const uint64_t *values, size_t n)
{
    uint64_t *sorted = malloc((n ? n : 1) * sizeof *sorted);
    memcpy(sorted, values, n * sizeof *values);
    qsort(sorted, n, sizeof *sorted, compare_values);
    return sorted;
}

static cm_hist *hist_of(const uint64_t *values, size_t n)
{
    cm_hist *hist = cm_hist_new();
    for (size_t i = 0; i < n; i++) {
        cm_hist_record(hist, values[i]);
    }
    return hist;
}

static size_t layout_index(uint64_t v)
{
    unsigned shift = 0;
    while ((v >> shift) >= 1024) {
        shift++;
    }
    return ((size_t)shift << 9) + (size_t)(v >> shift) - 1000;
}

/* ---- accuracy --------------------------------------------------------------------------- */

static double worst_relative_error;

/* Compares every percentile on a 0.1% grid plus the far tail against the exact nearest-rank
 * value. Percentiles are given in thousandths of a percent so the expected rank is integer
 * arithmetic, independent of the library's floating-point rank computation. */
static void check_percentiles(const char *name, const cm_hist *hist, const uint64_t *sorted,
                              size_t n)
{
    static const uint32_t tail[] = {1, 10, 100, 99990, 99999};
    for (uint32_t step = 0; step <= 1000 + 5; step++) {
        uint32_t milli = step <= 1000 ? step * 100 : tail[step - 1001];
        uint64_t rank = ((uint64_t)n * milli + 99999) / 100000;
        rank = rank < 1 ? 1 : rank;
        uint64_t exact = sorted[rank - 1];
        uint64_t got = cm_hist_percentile(hist, milli / 1000.0);
        if (rank == 1 || rank == n || exact < CM_HIST_LOWEST_TRACKED) {
            /* Extreme ranks are exact, and underflow reports the min (= exact at rank 1). */
            uint64_t want = rank == n ? sorted[n - 1] : sorted[0];
            CHECK_MSG(got == want, "%s p=%g: got %llu want %llu", name, milli / 1000.0,
                      (unsigned long long)got, (unsigned long long)want);
        } else if (exact > CM_HIST_HIGHEST_TRACKED) {
            CHECK_MSG(got == sorted[n - 1], "%s p=%g overflow: got %llu", name, milli / 1000.0,
                      (unsigned long long)got);
        } else {
            uint64_t error = got > exact ? got - exact : exact - got;
            double relative = (double)error / (double)exact;
            if (relative > worst_relative_error) {
                worst_relative_error = relative;
            }
            CHECK_MSG(error * 1000 <= exact, "%s p=%g: got %llu exact %llu (%.4f%%)", name,
                      milli / 1000.0, (unsigned long long)got, (unsigned long long)exact,
                      relative * 100);
        }
    }
}

/* Walks the iterator alongside the sorted values: each bucket must hold exactly the values
 * within its bounds, buckets must be ordered and disjoint, and every tracked bucket's
 * representative must be within 0.1% of both its ends (hence of anything inside). */
static void check_buckets(const char *name, const cm_hist *hist, const uint64_t *sorted, size_t n)
{
    cm_hist_iter iter;
    cm_hist_bucket bucket;
    size_t next = 0;
    uint64_t cumulative = 0;
    bool first = true;
    uint64_t previous_highest = 0;
    for (cm_hist_iter_init(&iter, hist); cm_hist_iter_next(&iter, &bucket);) {
        CHECK_MSG(first || bucket.lowest > previous_highest, "%s: buckets overlap", name);
        CHECK_MSG(bucket.lowest <= bucket.highest, "%s: empty bucket range", name);
        CHECK_MSG(bucket.count > 0, "%s: iterator yielded an empty bucket", name);
        size_t inside = 0;
        while (next < n && sorted[next] <= bucket.highest) {
            CHECK_MSG(sorted[next] >= bucket.lowest, "%s: value %llu in no bucket", name,
                      (unsigned long long)sorted[next]);
            next++;
            inside++;
        }
        CHECK_MSG(inside == bucket.count, "%s: bucket [%llu, %llu] count %llu, holds %zu", name,
                  (unsigned long long)bucket.lowest, (unsigned long long)bucket.highest,
                  (unsigned long long)bucket.count, inside);
        cumulative += bucket.count;
        CHECK(bucket.cumulative == cumulative);
        CHECK(bucket.representative >= bucket.lowest && bucket.representative <= bucket.highest);
        if (bucket.lowest >= CM_HIST_LOWEST_TRACKED && bucket.highest <= CM_HIST_HIGHEST_TRACKED) {
            /* Only values within [min, max] can be in the bucket. */
            uint64_t low = bucket.lowest > sorted[0] ? bucket.lowest : sorted[0];
            uint64_t high = bucket.highest < sorted[n - 1] ? bucket.highest : sorted[n - 1];
            uint64_t r = bucket.representative;
            CHECK_MSG(r >= low && r <= high && (r - low) * 1000 <= low && (high - r) * 1000 <= high,
                      "%s: representative %llu of [%llu, %llu] off by more than 0.1%%", name,
                      (unsigned long long)r, (unsigned long long)bucket.lowest,
                      (unsigned long long)bucket.highest);
        }
        previous_highest = bucket.highest;
        first = false;
    }
    CHECK_MSG(next == n, "%s: %zu of %zu values in buckets", name, next, n);
    CHECK(cumulative == cm_hist_count(hist));
}

static void check_statistics(const char *name, const cm_hist *hist, const uint64_t *sorted,
                             size_t n)
{
    uint64_t underflow = 0, overflow = 0;
    long double sum = 0;
    for (size_t i = 0; i < n; i++) {
        underflow += sorted[i] < CM_HIST_LOWEST_TRACKED;
        overflow += sorted[i] > CM_HIST_HIGHEST_TRACKED;
        sum += sorted[i];
    }
    long double mean = sum / n, squares = 0;
    for (size_t i = 0; i < n; i++) {
        long double deviation = sorted[i] - mean;
        squares += deviation * deviation;
    }
    double stddev = (double)sqrtl(squares / n);
    CHECK_MSG(cm_hist_count(hist) == n, "%s count", name);
    CHECK_MSG(cm_hist_min(hist) == sorted[0], "%s min", name);
    CHECK_MSG(cm_hist_max(hist) == sorted[n - 1], "%s max", name);
    CHECK_MSG(cm_hist_underflow(hist) == underflow, "%s underflow", name);
    CHECK_MSG(cm_hist_overflow(hist) == overflow, "%s overflow", name);
    CHECK_MSG(fabs(cm_hist_mean(hist) - (double)mean) <= 1e-12 * (double)mean,
              "%s mean %.17g vs %.17g", name, cm_hist_mean(hist), (double)mean);
    CHECK_MSG(fabs(cm_hist_stddev(hist) - stddev) <= 1e-9 * stddev, "%s stddev %.17g vs %.17g",
              name, cm_hist_stddev(hist), stddev);
}

static void check_round_trip(const char *name, const cm_hist *hist)
{
    size_t size = cm_hist_encoded_size(hist);
    CHECK(size <= CM_HIST_ENCODED_MAX);
    unsigned char *buf = malloc(size + 1);
    memset(buf, 0xa5, size + 1);
    CHECK_MSG(cm_hist_encode(hist, buf, size - 1) == 0, "%s: encode into a short buffer", name);
    CHECK_MSG(buf[0] == 0xa5, "%s: short encode wrote anyway", name);
    CHECK_MSG(cm_hist_encode(hist, buf, size + 1) == size, "%s encode size", name);
    CHECK_MSG(buf[size] == 0xa5, "%s: encode wrote past its size", name);
    cm_hist *decoded = cm_hist_new();
    CHECK_MSG(cm_hist_decode(decoded, buf, size) == 0, "%s decode", name);
    CHECK_MSG(cm_hist_equal(decoded, hist), "%s: decoded histogram differs", name);
    unsigned char *again = malloc(size);
    CHECK(cm_hist_encode(decoded, again, size) == size && memcmp(buf, again, size) == 0);
    free(again);
    cm_hist_free(decoded);
    free(buf);
}

/* Splitting the data three ways and merging must equal recording it all at once. */
static void check_merge_parts(const char *name, const cm_hist *whole, const uint64_t *values,
                              size_t n)
{
    cm_hist *parts[3] = {cm_hist_new(), cm_hist_new(), cm_hist_new()};
    for (size_t i = 0; i < n; i++) {
        cm_hist_record(parts[random_next() % 3], values[i]);
    }
    CHECK(cm_hist_merge(parts[1], parts[2]) == 0);
    CHECK(cm_hist_merge(parts[0], parts[1]) == 0);
    CHECK_MSG(cm_hist_equal(parts[0], whole), "%s: merged parts differ from the whole", name);
    for (int i = 0; i < 3; i++) {
        cm_hist_free(parts[i]);
    }
}

static void check_dataset(const char *name, const uint64_t *values, size_t n)
{
    cm_hist *hist = hist_of(values, n);
    uint64_t *sorted = sorted_copy(values, n);
    check_statistics(name, hist, sorted, n);
    check_percentiles(name, hist, sorted, n);
    check_buckets(name, hist, sorted, n);
    check_round_trip(name, hist);
    check_merge_parts(name, hist, values, n);
    free(sorted);
    cm_hist_free(hist);
}

static void test_random_distributions(void)
{
    enum { N = 100000 };
    uint64_t *values = malloc(N * sizeof *values);
    random_state = 1;

    for (size_t i = 0; i < N; i++) {
        values[i] = random_between(CM_HIST_LOWEST_TRACKED, CM_HIST_HIGHEST_TRACKED);
    }
    check_dataset("uniform over the tracked range", values, N);

    for (size_t i = 0; i < N; i++) {
        values[i] = random_between(0, 2000000);
    }
    check_dataset("uniform 0..2ms", values, N);

    for (size_t i = 0; i < N; i++) {
        values[i] = log_uniform(1e3, 3.6e12);
    }
    check_dataset("log-uniform 1us..1h", values, N);

    for (size_t i = 0; i < N; i++) {
        values[i] = log_uniform(1, 1.8e19);
    }
    check_dataset("log-uniform over all of uint64", values, N);

    for (size_t i = 0; i < N; i++) {
        values[i] = saturate(-1e6 * log(1 - random_unit()));
    }
    check_dataset("exponential mean 1ms", values, N);

    /* Two tight modes far apart: percentiles near the split must not blur across it. */
    for (size_t i = 0; i < N; i++) {
        values[i] =
            i % 10 == 0 ? random_between(40000000, 41000000) : random_between(180000, 220000);
    }
    check_dataset("bimodal 200us / 40ms", values, N);

    for (size_t i = 0; i < N; i++) {
        values[i] = i % 2 ? 5000 : 7000000;
    }
    check_dataset("two exact values", values, N);
    free(values);
}

static void test_adversarial_values(void)
{
    static const uint64_t constants[] = {0,
                                         1,
                                         999,
                                         1000,
                                         1001,
                                         1023,
                                         1024,
                                         1025,
                                         123456789,
                                         3600000000000ull,
                                         3600000000001ull,
                                         UINT64_MAX};
    for (size_t i = 0; i < sizeof constants / sizeof *constants; i++) {
        uint64_t values[1000];
        for (size_t j = 0; j < 1000; j++) {
            values[j] = constants[i];
        }
        cm_hist *hist = hist_of(values, 1000);
        /* With a single distinct value every percentile must be exact. */
        for (int p = 0; p <= 100; p += 5) {
            CHECK_MSG(cm_hist_percentile(hist, p) == constants[i], "all %llu: p%d = %llu",
                      (unsigned long long)constants[i], p,
                      (unsigned long long)cm_hist_percentile(hist, p));
        }
        CHECK(cm_hist_stddev(hist) == 0);
        cm_hist_free(hist);
        check_dataset("all one value", values, 1000);
    }

    /* Powers of two, their neighbours and the special constants, each a few times. */
    uint64_t values[64 * 3 * 4 + 4 * 12];
    size_t n = 0;
    for (int repeat = 0; repeat < 4; repeat++) {
        for (unsigned k = 0; k < 64; k++) {
            uint64_t power = (uint64_t)1 << k;
            values[n++] = power - 1;
            values[n++] = power;
            values[n++] = power + 1;
        }
        for (size_t i = 0; i < sizeof constants / sizeof *constants; i++) {
            values[n++] = constants[i];
        }
    }
    check_dataset("powers of two and neighbours", values, n);
}

/* Records both ends of every bucket of the documented layout, so check_buckets sees every
 * bucket and verifies the layout, contiguity and the 0.1% bound over the whole range. */
static void test_every_bucket(void)
{
    size_t capacity = 2 * CM_HIST_BUCKET_COUNT + 2, n = 0;
    uint64_t *values = malloc(capacity * sizeof *values);
    for (unsigned shift = 0; shift <= 32; shift++) {
        for (uint64_t top = 512; top < 1024; top++) {
            uint64_t low = top << shift, high = low + ((uint64_t)1 << shift) - 1;
            if (high < CM_HIST_LOWEST_TRACKED || low > CM_HIST_HIGHEST_TRACKED) {
                continue;
            }
            values[n++] = low < CM_HIST_LOWEST_TRACKED ? CM_HIST_LOWEST_TRACKED : low;
            values[n++] = high > CM_HIST_HIGHEST_TRACKED ? CM_HIST_HIGHEST_TRACKED : high;
        }
    }
    CHECK(n == 2 * CM_HIST_BUCKET_COUNT);
    CHECK(layout_index(CM_HIST_HIGHEST_TRACKED) == CM_HIST_BUCKET_COUNT - 1);

    cm_hist *hist = hist_of(values, n);
    uint64_t *sorted = sorted_copy(values, n);
    check_buckets("every bucket", hist, sorted, n);
    cm_hist_iter iter;
    cm_hist_bucket bucket;
    size_t buckets = 0;
    uint64_t expected_lowest = CM_HIST_LOWEST_TRACKED, last_highest = 0;
    for (cm_hist_iter_init(&iter, hist); cm_hist_iter_next(&iter, &bucket); buckets++) {
        CHECK_MSG(bucket.lowest == expected_lowest, "gap before bucket %zu", buckets);
        expected_lowest = bucket.highest + 1;
        last_highest = bucket.highest;
    }
    CHECK(buckets == CM_HIST_BUCKET_COUNT);
    CHECK(last_highest == CM_HIST_HIGHEST_TRACKED);
    check_percentiles("every bucket", hist, sorted, n);
    free(sorted);
    cm_hist_free(hist);
    free(values);
}

static void test_out_of_range(void)
{
    cm_hist *hist = cm_hist_new();
    static const uint64_t low[] = {0, 1, 500, 999}, high[] = {3600000000001ull, UINT64_MAX};
    for (int i = 0; i < 4; i++) {
        cm_hist_record(hist, low[i]);
    }
    for (int i = 0; i < 2; i++) {
        cm_hist_record(hist, high[i]);
    }
    for (int i = 0; i < 94; i++) {
        cm_hist_record(hist, 1000000);
    }
    CHECK(cm_hist_count(hist) == 100);
    CHECK(cm_hist_underflow(hist) == 4);
    CHECK(cm_hist_overflow(hist) == 2);
    CHECK(cm_hist_min(hist) == 0);
    CHECK(cm_hist_max(hist) == UINT64_MAX);
    CHECK(cm_hist_percentile(hist, 3) == 0);        /* lands in underflow: the min */
    uint64_t median = cm_hist_percentile(hist, 50); /* min and max are too far to clamp it */
    CHECK(median != 1000000 && median >= 999000 && median <= 1001000);
    CHECK(cm_hist_percentile(hist, 99) == UINT64_MAX);
    /* Mean over values that overflow 64-bit sums. */
    long double exact_mean = ((long double)UINT64_MAX + 3600000000001.0L + 1500.0L + 94e6L) / 100;
    CHECK(fabs(cm_hist_mean(hist) - (double)exact_mean) <= 1e-12 * (double)exact_mean);

    cm_hist_iter iter;
    cm_hist_bucket bucket;
    cm_hist_iter_init(&iter, hist);
    CHECK(cm_hist_iter_next(&iter, &bucket));
    CHECK(bucket.lowest == 0 && bucket.highest == 999 && bucket.count == 4);
    CHECK(cm_hist_iter_next(&iter, &bucket));
    CHECK(bucket.count == 94 && bucket.lowest <= 1000000 && bucket.highest >= 1000000);
    CHECK(cm_hist_iter_next(&iter, &bucket));
    CHECK(bucket.lowest == 3600000000001ull && bucket.highest == UINT64_MAX && bucket.count == 2);
    CHECK(bucket.cumulative == 100);
    CHECK(!cm_hist_iter_next(&iter, &bucket));
    cm_hist_free(hist);
}

static void test_statistics_exactness(void)
{
    /* Values near 1 h that differ by 1 ns: the naive floating-point formula loses this. */
    cm_hist *hist = cm_hist_new();
    for (uint64_t i = 0; i < 1000; i++) {
        cm_hist_record(hist, 3599999999999ull + i % 2);
    }
    CHECK_MSG(cm_hist_stddev(hist) == 0.5, "stddev %.17g", cm_hist_stddev(hist));
    CHECK(cm_hist_mean(hist) == 3599999999999.5);

    cm_hist_reset(hist);
    cm_hist_record(hist, UINT64_MAX);
    cm_hist_record(hist, UINT64_MAX - 2);
    CHECK_MSG(cm_hist_stddev(hist) == 1, "stddev %.17g", cm_hist_stddev(hist));

    cm_hist_reset(hist);
    CHECK(cm_hist_count(hist) == 0 && cm_hist_min(hist) == 0 && cm_hist_max(hist) == 0);
    CHECK(cm_hist_mean(hist) == 0 && cm_hist_stddev(hist) == 0);
    CHECK(cm_hist_percentile(hist, 50) == 0);

    cm_hist_record(hist, 5000);
    CHECK(cm_hist_percentile(hist, 0) == 5000 && cm_hist_percentile(hist, 100) == 5000);
    CHECK(cm_hist_percentile(hist, NAN) == 5000 && cm_hist_percentile(hist, -3) == 5000);
    CHECK(cm_hist_percentile(hist, 250) == 5000);
    cm_hist_free(hist);
}

static void test_record_n_and_merge(void)
{
    static const uint64_t samples[] = {0,          7,         999, 1000, 48213, 3600000000000ull,
                                       1ull << 50, UINT64_MAX};
    cm_hist *single = cm_hist_new(), *batched = cm_hist_new(), *fresh = cm_hist_new();
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        for (int j = 0; j < 37; j++) {
            cm_hist_record(single, samples[i]);
        }
        cm_hist_record_n(batched, samples[i], 37);
    }
    CHECK(cm_hist_equal(single, batched));
    cm_hist_record_n(fresh, 12345, 0);
    cm_hist *empty = cm_hist_new();
    CHECK_MSG(cm_hist_equal(fresh, empty), "record_n with n = 0 must change nothing");

    /* Large n exercises the 192-bit products: n at once equals n/2 merged into itself. */
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        cm_hist_reset(single);
        cm_hist_reset(batched);
        cm_hist_record_n(single, samples[i], 3ull << 60);
        cm_hist_record_n(batched, samples[i], 3ull << 59);
        CHECK(cm_hist_merge(batched, batched) == 0);
        CHECK_MSG(cm_hist_equal(single, batched), "record_n(%llu, 3<<60)",
                  (unsigned long long)samples[i]);
    }

    random_state = 7;
    for (int trial = 0; trial < 2000; trial++) {
        uint64_t value = random_next() >> (random_next() % 64), half = random_next() >> 2;
        cm_hist_reset(single);
        cm_hist_reset(batched);
        cm_hist_record_n(single, value, 2 * half);
        cm_hist_record_n(batched, value, half);
        CHECK(cm_hist_merge(batched, batched) == 0);
        CHECK_MSG(cm_hist_equal(single, batched), "record_n(%llu, %llu)", (unsigned long long)value,
                  (unsigned long long)(2 * half));
    }

    /* Sums of squares chosen so merging carries out of word 0 into a word 1 that is about to
     * wrap: {UINT64_MAX} has words (1, 2^64 - 2, 0), the rest sums to 2^65 - 1. The reference
     * records the same values singly so its carries go through the other code path. */
    cm_hist *rest = cm_hist_new(), *reference = cm_hist_new();
    cm_hist_reset(single);
    cm_hist_record(single, UINT64_MAX);
    cm_hist_record(rest, 1ull << 32);
    cm_hist_record(rest, (1ull << 32) - 1);
    cm_hist_record_n(rest, 1, (1ull << 33) - 2);
    CHECK(cm_hist_merge(single, rest) == 0);
    for (uint64_t i = 0; i < 2; i++) {
        cm_hist_record(reference, (1ull << 32) - i);
    }
    cm_hist_record_n(reference, 1, (1ull << 33) - 2);
    cm_hist_record(reference, UINT64_MAX);
    CHECK_MSG(cm_hist_equal(single, reference), "carry lost while merging sums of squares");
    cm_hist_free(rest);
    cm_hist_free(reference);

    /* Merging empties changes nothing; merging into an empty copies. */
    cm_hist_reset(single);
    cm_hist_reset(batched);
    CHECK(cm_hist_merge(single, empty) == 0 && cm_hist_equal(single, empty));
    cm_hist_record(batched, 4242);
    cm_hist_record(batched, 17);
    CHECK(cm_hist_merge(single, batched) == 0 && cm_hist_equal(single, batched));
    CHECK(cm_hist_merge(single, empty) == 0 && cm_hist_equal(single, batched));

    /* A merge whose count would wrap is refused and leaves the destination alone. */
    cm_hist_reset(single);
    cm_hist_record_n(single, 5000, UINT64_MAX - 1);
    cm_hist_reset(batched);
    cm_hist_record(batched, 6000);
    CHECK(cm_hist_merge(single, batched) == 0);
    CHECK(cm_hist_count(single) == UINT64_MAX);
    cm_hist *before = cm_hist_new();
    CHECK(cm_hist_merge(before, single) == 0);
    CHECK(cm_hist_merge(single, batched) == -EOVERFLOW);
    CHECK(cm_hist_equal(single, before));
    check_round_trip("near-full count", single);

    /* reset returns to the freshly allocated state, and init matches new. */
    cm_hist_reset(single);
    CHECK(cm_hist_equal(single, empty));
    cm_hist embedded;
    cm_hist_init(&embedded);
    CHECK(cm_hist_equal(&embedded, empty));
    check_round_trip("empty", empty);

    cm_hist_free(before);
    cm_hist_free(empty);
    cm_hist_free(fresh);
    cm_hist_free(single);
    cm_hist_free(batched);
}

/* ---- encoding ----------------------------------------------------------------------------- */

/* Independent implementations of the format's building blocks, to check the library's output
 * byte for byte and to craft malformed input. */
static uint32_t test_crc32c(const unsigned char *data, size_t length)
{
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < length; i++) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; bit++) {
            crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
        }
    }
    return ~crc;
}

/* Replaces the trailing CRC so corruption reaches the parser instead of the checksum. */
static void reseal(unsigned char *buf, size_t len)
{
    if (len < 4) {
        return;
    }
    uint32_t crc = test_crc32c(buf, len - 4);
    for (int i = 0; i < 4; i++) {
        buf[len - 4 + (size_t)i] = (unsigned char)(crc >> (8 * i));
    }
}

static size_t put_varint(unsigned char *out, uint64_t v)
{
    size_t n = 0;
    do {
        out[n++] = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

enum { HEADER_FIELDS = 14 };

/* Builds an encoding from header field values (layout, count, min, max, underflow, overflow,
 * sum words, sum_sq words, entry count) and (gap, count) pairs, appending `extra` raw bytes
 * before the CRC. */
static size_t build_encoding(unsigned char *out, const uint64_t fields[HEADER_FIELDS],
                             const uint64_t *pairs, size_t pair_count, const unsigned char *extra,
                             size_t extra_length)
{
    size_t n = 0;
    memcpy(out, "CMHG\x01", 5);
    n += 5;
    for (int i = 0; i < HEADER_FIELDS; i++) {
        n += put_varint(out + n, fields[i]);
    }
    for (size_t i = 0; i < 2 * pair_count; i++) {
        n += put_varint(out + n, pairs[i]);
    }
    if (extra_length) {
        memcpy(out + n, extra, extra_length);
    }
    n += extra_length + 4;
    reseal(out, n);
    return n;
}

static bool decode_fails_cleanly(cm_hist *out, const unsigned char *buf, size_t len)
{
    static cm_hist empty;
    cm_hist_init(&empty);
    return cm_hist_decode(out, buf, len) == -EINVAL && cm_hist_equal(out, &empty);
}

/* For input that passes: decoding then encoding must reproduce it exactly, since the format
 * has one encoding per histogram. */
static void check_decode_outcome(cm_hist *out, const unsigned char *buf, size_t len,
                                 size_t *accepted)
{
    static unsigned char again[CM_HIST_ENCODED_MAX];
    static cm_hist empty;
    cm_hist_init(&empty);
    int result = cm_hist_decode(out, buf, len);
    if (result == 0) {
        ++*accepted;
        size_t size = cm_hist_encode(out, again, sizeof again);
        CHECK_MSG(size == len && memcmp(again, buf, len) == 0,
                  "accepted input does not re-encode identically");
    } else {
        CHECK(result == -EINVAL && cm_hist_equal(out, &empty));
    }
}

static void test_encoding_format(void)
{
    static const unsigned char check_input[] = "123456789";
    CHECK(test_crc32c(check_input, 9) == 0xe3069283u); /* the standard CRC-32C check value */

    cm_hist *hist = cm_hist_new();
    cm_hist_record(hist, 1500);
    cm_hist_record(hist, 2000);
    cm_hist_record(hist, 1500);
    unsigned char expected[128], got[128];
    uint64_t fields[HEADER_FIELDS] = {9,    1000, 3600000000000ull, 3, 1500, 2000, 0, 0,
                                      5000, 0,    8500000,          0, 0,    2};
    size_t first = layout_index(1500), second = layout_index(2000);
    CHECK(first == 262 && second == 512);
    uint64_t pairs[] = {first, 2, second - first - 1, 1};
    size_t expected_length = build_encoding(expected, fields, pairs, 2, NULL, 0);
    CHECK(cm_hist_encoded_size(hist) == expected_length);
    CHECK(cm_hist_encode(hist, got, sizeof got) == expected_length);
    CHECK_MSG(memcmp(got, expected, expected_length) == 0, "encoding differs from the spec");
    cm_hist_free(hist);
}

static void test_decoder_rejects_crafted_input(void)
{
    cm_hist *out = cm_hist_new();
    unsigned char buf[256];
    const uint64_t valid[HEADER_FIELDS] = {9,    1000, 3600000000000ull, 3, 1500, 2000, 0, 0,
                                           5000, 0,    8500000,          0, 0,    2};
    const uint64_t pairs[] = {262, 2, 249, 1};
    uint64_t fields[HEADER_FIELDS];
    size_t len;

    len = build_encoding(buf, valid, pairs, 2, NULL, 0);
    CHECK_MSG(cm_hist_decode(out, buf, len) == 0, "crafted baseline must decode");
    CHECK(cm_hist_count(out) == 3 && cm_hist_percentile(out, 50) == 1500);

    /* One or two fields changed; each case is invalid for the reason given, with everything
     * else kept consistent so that reason is what gets tested. */
    struct {
        int field;
        uint64_t value;
        int other_field; /* -1 for none */
        uint64_t other_value;
        const char *why;
    } field_cases[] = {
        {0, 8, -1, 0, "other sub-bucket bits"},
        {1, 1024, -1, 0, "other lowest tracked"},
        {2, 3600000000001ull, -1, 0, "other highest tracked"},
        {3, 4, -1, 0, "count above the bucket total"},
        {3, 2, -1, 0, "count below the bucket total"},
        {4, 1400, -1, 0, "min below its bucket"},
        {4, 1600, -1, 0, "min above its bucket"},
        {5, 2010, -1, 0, "max outside its bucket"},
        {4, 2000, 5, 1500, "min above max"},
        {6, 1, 3, 4, "underflow counted but min in range"},
        {7, 1, 3, 4, "overflow counted but max in range"},
        {8, 4999, -1, 0, "sum too small for min and max"},
        {8, 5501, -1, 0, "sum too large for min and max"},
        {9, 1, -1, 0, "sum high word"},
        {10, 8499999, -1, 0, "sum of squares too small"},
        {12, 1, -1, 0, "sum of squares top word"},
        {13, 3, -1, 0, "more entries than present"},
        {13, 1, -1, 0, "fewer entries than present"},
        {13, UINT64_MAX, -1, 0, "absurd entry count"},
    };
    for (size_t i = 0; i < sizeof field_cases / sizeof *field_cases; i++) {
        memcpy(fields, valid, sizeof fields);
        fields[field_cases[i].field] = field_cases[i].value;
        if (field_cases[i].other_field >= 0) {
            fields[field_cases[i].other_field] = field_cases[i].other_value;
        }
        len = build_encoding(buf, fields, pairs, 2, NULL, 0);
        CHECK_MSG(decode_fails_cleanly(out, buf, len), "accepted: %s", field_cases[i].why);
    }

    /* Sums inside the min/max bounds but impossible together (count * sum_sq < sum^2). */
    uint64_t spread[HEADER_FIELDS] = {
        9, 1000, 3600000000000ull, 3, 1000, 3000, 0, 0, 7000, 0, 1000000 + 9000000 + 1000000, 0,
        0, 2};
    uint64_t spread_pairs[] = {0, 2, layout_index(3000) - 1, 1};
    len = build_encoding(buf, spread, spread_pairs, 2, NULL, 0);
    CHECK_MSG(decode_fails_cleanly(out, buf, len), "accepted count*sum_sq < sum^2");

    memcpy(fields, valid, sizeof fields);
    const uint64_t zero_count[] = {262, 0, 249, 1};
    len = build_encoding(buf, fields, zero_count, 2, NULL, 0);
    CHECK_MSG(decode_fails_cleanly(out, buf, len), "accepted a zero-count entry");
    const uint64_t past_end[] = {262, 2, CM_HIST_BUCKET_COUNT, 1};
    len = build_encoding(buf, fields, past_end, 2, NULL, 0);
    CHECK_MSG(decode_fails_cleanly(out, buf, len), "accepted a bucket past the end");
    const uint64_t wrapping_gap[] = {262, 2, UINT64_MAX, 1};
    len = build_encoding(buf, fields, wrapping_gap, 2, NULL, 0);
    CHECK_MSG(decode_fails_cleanly(out, buf, len), "accepted a wrapping gap");
    const unsigned char trailing[] = {0};
    len = build_encoding(buf, valid, pairs, 2, trailing, 1);
    CHECK_MSG(decode_fails_cleanly(out, buf, len), "accepted trailing bytes");

    /* Counts whose sum wraps around 2^64. */
    uint64_t wrapping[HEADER_FIELDS] = {
        9, 1000, 3600000000000ull, 0, 5, 4000000000000ull, UINT64_MAX, 1, 0, 0, 0, 0, 0, 0};
    len = build_encoding(buf, wrapping, NULL, 0, NULL, 0);
    CHECK_MSG(decode_fails_cleanly(out, buf, len), "accepted wrapping counts");

    /* An empty histogram has exactly one encoding. */
    uint64_t empty_fields[HEADER_FIELDS] = {9, 1000, 3600000000000ull, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                            0, 0};
    len = build_encoding(buf, empty_fields, NULL, 0, NULL, 0);
    CHECK(cm_hist_decode(out, buf, len) == 0 && cm_hist_count(out) == 0);
    empty_fields[4] = 7;
    len = build_encoding(buf, empty_fields, NULL, 0, NULL, 0);
    CHECK_MSG(decode_fails_cleanly(out, buf, len), "accepted an empty histogram with a min");

    /* Non-shortest varints: count 3 as 0x83 0x00, and a ten-byte varint above 2^64. */
    len = build_encoding(buf, valid, pairs, 2, NULL, 0);
    unsigned char overlong[256];
    size_t count_offset = 5 + 1 + 2 + 6; /* magic+version, then 9, 1000, 3.6e12 */
    CHECK(buf[count_offset] == 3);
    memcpy(overlong, buf, count_offset);
    overlong[count_offset] = 0x83;
    overlong[count_offset + 1] = 0x00;
    memcpy(overlong + count_offset + 2, buf + count_offset + 1, len - count_offset - 1);
    reseal(overlong, len + 1);
    CHECK_MSG(decode_fails_cleanly(out, overlong, len + 1), "accepted an overlong varint");
    memcpy(overlong, buf, count_offset);
    memset(overlong + count_offset, 0xff, 9);
    overlong[count_offset + 9] = 0x02;
    memcpy(overlong + count_offset + 10, buf + count_offset + 1, len - count_offset - 1);
    reseal(overlong, len + 9);
    CHECK_MSG(decode_fails_cleanly(out, overlong, len + 9), "accepted a 65-bit varint");

    /* Wrong magic, version and checksum. */
    len = build_encoding(buf, valid, pairs, 2, NULL, 0);
    buf[0] = 'X';
    reseal(buf, len);
    CHECK(decode_fails_cleanly(out, buf, len));
    len = build_encoding(buf, valid, pairs, 2, NULL, 0);
    buf[4] = 2;
    reseal(buf, len);
    CHECK(decode_fails_cleanly(out, buf, len));
    len = build_encoding(buf, valid, pairs, 2, NULL, 0);
    buf[len - 1] ^= 1;
    CHECK(decode_fails_cleanly(out, buf, len));
    CHECK(decode_fails_cleanly(out, NULL, 0));
    CHECK(decode_fails_cleanly(out, NULL, 100));
    cm_hist_free(out);
}

/* Exercises the decoder with every truncation and many random corruptions of a real
 * encoding, both as is (the CRC must catch them) and resealed (the parser must). */
static void test_decoder_survives_corruption(void)
{
    random_state = 99;
    cm_hist *hist = cm_hist_new(), *out = cm_hist_new();
    for (int i = 0; i < 400; i++) {
        cm_hist_record(hist, log_uniform(1e2, 1e13));
    }
    cm_hist_record(hist, 0);
    cm_hist_record(hist, UINT64_MAX);
    size_t size = cm_hist_encoded_size(hist);
    unsigned char *original = malloc(size), *mutated = malloc(size + 16);
    CHECK(cm_hist_encode(hist, original, size) == size);
    size_t accepted = 0;

    for (size_t length = 0; length < size; length++) {
        memcpy(mutated, original, length);
        CHECK_MSG(decode_fails_cleanly(out, mutated, length), "truncation to %zu accepted", length);
        reseal(mutated, length);
        CHECK_MSG(decode_fails_cleanly(out, mutated, length), "resealed truncation to %zu accepted",
                  length);
    }

    for (int trial = 0; trial < 20000; trial++) {
        size_t length = size;
        memcpy(mutated, original, size);
        int edits = 1 + (int)(random_next() % 4);
        for (int edit = 0; edit < edits; edit++) {
            size_t at = random_next() % length;
            switch (random_next() % 4) {
            case 0: /* flip one bit */
                mutated[at] ^= (unsigned char)(1u << (random_next() % 8));
                break;
            case 1: /* replace a byte */
                mutated[at] ^= (unsigned char)(1 + random_next() % 255);
                break;
            case 2: /* insert a byte */
                if (length < size + 16) {
                    memmove(mutated + at + 1, mutated + at, length - at);
                    mutated[at] = (unsigned char)random_next();
                    length++;
                }
                break;
            default: /* delete a byte */
                if (length > 1) {
                    memmove(mutated + at, mutated + at + 1, length - at - 1);
                    length--;
                }
                break;
            }
        }
        if (length == size && memcmp(mutated, original, size) == 0) {
            continue;
        }
        CHECK_MSG(decode_fails_cleanly(out, mutated, length), "corruption %d slipped past the CRC",
                  trial);
        reseal(mutated, length);
        check_decode_outcome(out, mutated, length, &accepted);
    }

    /* Pure noise, sometimes dressed with a valid magic, version and CRC. */
    unsigned char noise[300];
    for (int trial = 0; trial < 20000; trial++) {
        size_t length = random_next() % sizeof noise;
        for (size_t i = 0; i < length; i++) {
            noise[i] = (unsigned char)random_next();
        }
        if (trial % 2 && length >= 5) {
            memcpy(noise, "CMHG\x01", 5);
            reseal(noise, length);
        }
        check_decode_outcome(out, noise, length, &accepted);
    }
    printf("hist: %zu of the resealed corruptions and noise decoded (and re-encoded identically)\n",
           accepted);

    free(original);
    free(mutated);
    cm_hist_free(hist);
    cm_hist_free(out);
}

/* An encoding of `hist` in a malloc'd buffer (*len set). */
static unsigned char *encoded(const cm_hist *hist, size_t *len)
{
    *len = cm_hist_encoded_size(hist);
    unsigned char *buf = malloc(*len);
    CHECK(buf && cm_hist_encode(hist, buf, *len) == *len);
    return buf;
}

/* A random histogram of up to `max_values` values, a share of them below and above the
 * tracked range, sometimes empty. */
static void fill_random(cm_hist *hist, size_t max_values)
{
    cm_hist_reset(hist);
    size_t n = random_next() % 5 == 0 ? 0 : (size_t)random_between(1, max_values);
    for (size_t i = 0; i < n; i++) {
        uint64_t kind = random_next() % 20;
        uint64_t v = kind == 0   ? random_between(0, CM_HIST_LOWEST_TRACKED - 1)
                     : kind == 1 ? random_between(CM_HIST_HIGHEST_TRACKED + 1, UINT64_MAX / 4)
                                 : log_uniform(1e3, 1e10);
        cm_hist_record(hist, v);
    }
}

/* cm_hist_merge_encoded gives, byte for byte, the encoding of cm_hist_merge's result: for
 * random pairs (empties, underflow and overflow included), from an empty start (NULL), and
 * folding many encodings one after another as a coordinator folds its agents' seconds; it
 * refuses what is not an encoding. */
static void test_merge_encoded(void)
{
    random_state = 11;
    cm_hist *a = cm_hist_new(), *b = cm_hist_new(), *sum = cm_hist_new();
    for (int trial = 0; trial < 300; trial++) {
        fill_random(a, 2000);
        fill_random(b, 2000);
        size_t alen, blen, want_len, got_len;
        unsigned char *ea = encoded(a, &alen), *eb = encoded(b, &blen), *got = NULL;
        CHECK(cm_hist_merge_encoded(ea, alen, eb, blen, &got, &got_len) == 0);
        cm_hist_reset(sum);
        CHECK(cm_hist_merge(sum, a) == 0 && cm_hist_merge(sum, b) == 0);
        unsigned char *want = encoded(sum, &want_len);
        CHECK_MSG(got && got_len == want_len && memcmp(got, want, want_len) == 0,
                  "trial %d: merged encoding differs from the encoding of the merge", trial);
        free(got);
        got = NULL;
        CHECK(cm_hist_merge_encoded(NULL, 0, eb, blen, &got, &got_len) == 0);
        CHECK_MSG(got && got_len == blen && memcmp(got, eb, blen) == 0,
                  "trial %d: from an empty start, the encoding itself", trial);
        free(got);
        free(ea);
        free(eb);
        free(want);
    }

    /* 200 small histograms folded in one by one */
    unsigned char *acc = NULL;
    size_t acc_len = 0;
    cm_hist_reset(sum);
    for (int i = 0; i < 200; i++) {
        fill_random(a, 300);
        CHECK(cm_hist_merge(sum, a) == 0);
        size_t len, next_len;
        unsigned char *e = encoded(a, &len), *next = NULL;
        CHECK(cm_hist_merge_encoded(acc, acc_len, e, len, &next, &next_len) == 0);
        free(acc);
        free(e);
        acc = next, acc_len = next_len;
    }
    size_t want_len;
    unsigned char *want = encoded(sum, &want_len);
    CHECK_MSG(acc_len == want_len && memcmp(acc, want, want_len) == 0,
              "200 encodings folded one by one differ from the encoding of their merge");
    cm_hist *decoded = cm_hist_new();
    CHECK(cm_hist_decode(decoded, acc, acc_len) == 0 && cm_hist_equal(decoded, sum));

    /* what is not an encoding: a flipped byte (the CRC), a cut, another magic */
    unsigned char *bad = malloc(want_len), *out = NULL;
    size_t out_len = 0;
    for (size_t i = 0; i < want_len; i += 1 + want_len / 64) {
        memcpy(bad, want, want_len);
        bad[i] ^= 0x40;
        CHECK_MSG(cm_hist_merge_encoded(acc, acc_len, bad, want_len, &out, &out_len) == -EINVAL,
                  "a flipped byte at %zu is refused", i);
        CHECK_MSG(cm_hist_merge_encoded(bad, want_len, acc, acc_len, &out, &out_len) == -EINVAL,
                  "on either side (byte %zu)", i);
    }
    CHECK(cm_hist_merge_encoded(acc, acc_len, want, want_len - 1, &out, &out_len) == -EINVAL);
    CHECK(cm_hist_merge_encoded(acc, acc_len, want, 3, &out, &out_len) == -EINVAL);
    CHECK(out == NULL);
    free(bad);
    free(want);
    free(acc);
    cm_hist_free(decoded);
    cm_hist_free(a);
    cm_hist_free(b);
    cm_hist_free(sum);
}

int main(void)
{
    test_random_distributions();
    test_adversarial_values();
    test_every_bucket();
    test_out_of_range();
    test_statistics_exactness();
    test_record_n_and_merge();
    test_encoding_format();
    test_decoder_rejects_crafted_input();
    test_decoder_survives_corruption();
    test_merge_encoded();
    printf("hist: worst relative percentile error %.5f%%\n", worst_relative_error * 100);
    return check_summary("hist");
}
