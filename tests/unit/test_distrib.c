/* Unit test of runtime/distrib.c: observed frequencies against each access distribution
 * and each size distribution (chi-square bounds at fixed seeds, so the test is
 * deterministic), uniform covering every object (ceph#23687 was a rados bench whose rand
 * did not), the scatter being a bijection, reproducibility by seed, parsing and its
 * messages, and memory that does not grow with the number of objects. */
#include "check.h"
#include "distrib.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Far out in the tail for any degrees of freedom: a correct sampler fails it with a
 * probability below 1e-6, and the seeds are fixed anyway. */
static double chi_square_bound(size_t cells)
{
    double dof = (double)cells - 1;
    return dof + 6 * sqrt(2 * dof) + 10;
}

static double chi_square(const uint64_t *observed, const double *expected, size_t cells)
{
    double sum = 0;
    for (size_t i = 0; i < cells; i++) {
        double d = (double)observed[i] - expected[i];
        sum += d * d / expected[i];
    }
    return sum;
}

static struct cm_access make_access(const char *text, uint64_t n, uint64_t seed)
{
    struct cm_access_spec spec;
    char error[256];
    struct cm_access a;
    int rc = cm_access_parse(text, &spec, error, sizeof error);
    CHECK_MSG(rc == 0, "%s: %s", text, error);
    CHECK(cm_access_init(&a, &spec, n, seed) == 0);
    return a;
}

/* Chi-square over ranks pooled in order until each cell expects at least 5 picks (the
 * test's approximation needs it; zipf:3's tail expects far less per object). */
static double pooled_chi_square(const uint64_t *observed, const double *expected, size_t n,
                                size_t *cells)
{
    double sum = 0, want = 0, got = 0;
    *cells = 0;
    for (size_t i = 0; i < n; i++) {
        want += expected[i];
        got += (double)observed[i];
        if (want >= 5 || i + 1 == n) {
            if (want > 0) {
                sum += (got - want) * (got - want) / want;
                (*cells)++;
            }
            want = got = 0;
        }
    }
    return sum;
}

/* Counts picks per object and compares them, rank by rank, with the model's probability
 * of the rank that scatters to each object. */
static double object_chi_square(const struct cm_access *a, const struct cm_access *model,
                                uint64_t draws, uint64_t seed, uint64_t *unpicked, size_t *cells)
{
    uint64_t n = a->n;
    uint64_t *observed = calloc(n, sizeof *observed);
    uint64_t *by_rank = calloc(n, sizeof *by_rank);
    double *expected = calloc(n, sizeof *expected);
    uint64_t rng = seed;
    for (uint64_t i = 0; i < draws; i++) {
        uint64_t object = cm_access_pick(a, &rng);
        CHECK(object < n);
        if (object < n)
            observed[object]++;
    }
    for (uint64_t rank = 0; rank < n; rank++) {
        expected[rank] = (double)draws * cm_access_rank_probability(model, rank);
        by_rank[rank] = observed[cm_access_rank_object(model, rank)];
    }
    *unpicked = 0;
    for (uint64_t i = 0; i < n; i++)
        *unpicked += observed[i] == 0;
    double chi = pooled_chi_square(by_rank, expected, n, cells);
    free(observed);
    free(by_rank);
    free(expected);
    return chi;
}

static void test_small(const char *text)
{
    struct cm_access a = make_access(text, 1000, 42);
    uint64_t unpicked;
    size_t cells;
    double chi = object_chi_square(&a, &a, 2000000, 7, &unpicked, &cells);
    CHECK_MSG(cells > 10 && chi < chi_square_bound(cells), "%s: chi-square %.1f over %zu cells",
              text, chi, cells);
    cm_access_fini(&a);
}

/* Uniform, as rados rand uses it: every object, equally (and an n that is no power of 2). */
static void test_uniform_covers_all(void)
{
    struct cm_access a = make_access("uniform", 1237, 1);
    uint64_t unpicked;
    size_t cells;
    double chi = object_chi_square(&a, &a, 1237 * 400, 99, &unpicked, &cells);
    CHECK_MSG(unpicked == 0, "%llu objects never picked", (unsigned long long)unpicked);
    CHECK(cells == 1237);
    CHECK_MSG(chi < chi_square_bound(1237), "uniform: chi-square %.1f over 1236 dof", chi);
    cm_access_fini(&a);
    struct cm_access one = make_access("uniform", 1, 1);
    uint64_t rng = 5;
    for (int i = 0; i < 100; i++)
        CHECK(cm_access_pick(&one, &rng) == 0);
    cm_access_fini(&one);
}

/* The test can fail: samples of one distribution against another's frequencies. */
static void test_detects_wrong_distribution(void)
{
    struct cm_access zipf12 = make_access("zipf:1.2", 1000, 42);
    struct cm_access zipf10 = make_access("zipf:1.0", 1000, 42);
    struct cm_access uniform = make_access("uniform", 1000, 42);
    uint64_t unpicked;
    size_t cells;
    CHECK(object_chi_square(&zipf12, &zipf10, 2000000, 7, &unpicked, &cells) >
          chi_square_bound(cells));
    CHECK(object_chi_square(&zipf12, &uniform, 2000000, 7, &unpicked, &cells) >
          chi_square_bound(cells));
    /* the scatter is part of the distribution: another seed puts the hot objects elsewhere */
    struct cm_access other_seed = make_access("zipf:1.2", 1000, 43);
    CHECK(object_chi_square(&zipf12, &other_seed, 2000000, 7, &unpicked, &cells) >
          chi_square_bound(cells));
    cm_access_fini(&zipf12);
    cm_access_fini(&zipf10);
    cm_access_fini(&uniform);
    cm_access_fini(&other_seed);
}

enum { BINS = 64 };

/* Ranks of n objects binned geometrically (one per rank up to 16, then each bin half as
 * wide again as the last). Returns the number of bins. */
static size_t geometric_bins(uint64_t n, uint64_t edges[BINS + 1])
{
    size_t bins = 0;
    edges[0] = 0;
    for (uint64_t edge = 1; edge < n && bins < BINS - 1;) {
        edges[++bins] = edge;
        edge = edge < 16 ? edge + 1 : edge + edge / 2;
    }
    edges[++bins] = n;
    return bins;
}

/* Draws 3 million ranks and returns the chi-square of their counts per bin against the
 * bins' weights in `expected` (scaled to the draws in place). */
static double binned_chi_square(const struct cm_access *a, const uint64_t *edges, size_t bins,
                                double *expected, uint64_t seed)
{
    const uint64_t draws = 3000000;
    uint64_t observed[BINS] = {0}, rng = seed;
    for (uint64_t i = 0; i < draws; i++) {
        uint64_t rank = cm_access_pick_rank(a, &rng);
        size_t b = 0;
        while (b + 1 < bins && rank >= edges[b + 1])
            b++;
        observed[b]++;
    }
    double total = 0;
    for (size_t b = 0; b < bins; b++)
        total += expected[b];
    for (size_t b = 0; b < bins; b++)
        expected[b] = expected[b] / total * (double)draws;
    return chi_square(observed, expected, bins);
}

/* Zipf over 10^7 objects, where the ranks come from blocks: the expected mass of each bin
 * summed rank by rank (independent of the sampler's Euler–Maclaurin block masses). */
static void test_zipf_large(const char *text, double theta)
{
    const uint64_t n = 10000000;
    struct cm_access a = make_access(text, n, 3);
    CHECK(a.n_entries < 1024);
    uint64_t edges[BINS + 1];
    double expected[BINS] = {0}, total = 0;
    size_t bins = geometric_bins(n, edges);
    for (size_t b = 0; b < bins; b++)
        for (uint64_t k = edges[b]; k < edges[b + 1]; k++)
            expected[b] += pow((double)k + 1, -theta);
    for (size_t b = 0; b < bins; b++)
        total += expected[b];
    double chi = binned_chi_square(&a, edges, bins, expected, 11);
    CHECK_MSG(chi < chi_square_bound(bins), "%s over 10^7: chi-square %.1f over %zu dof", text, chi,
              bins - 1);
    /* the model's own probabilities agree with the direct sum */
    CHECK(fabs(cm_access_rank_probability(&a, 0) * total - 1) < 1e-9);
    cm_access_fini(&a);
}

/* Pareto over 10^7 objects (its ranks come from blocks too, with the ratio's lines of
 * either curvature): the bins against fio's CDF, computed here directly. */
static void test_pareto_large(const char *text, double h)
{
    const uint64_t n = 10000000;
    struct cm_access a = make_access(text, n, 3);
    CHECK(a.n_entries < 1024);
    uint64_t edges[BINS + 1];
    double expected[BINS] = {0};
    size_t bins = geometric_bins(n, edges);
    double alpha = log(1 - h) / log(h); /* P(rank < x) = (x / n)^α from the hot end */
    for (size_t b = 0; b < bins; b++) {
        double lo = (double)edges[b] / (double)n, hi = (double)edges[b + 1] / (double)n;
        expected[b] =
            h < 0.5 ? pow(hi, alpha) - pow(lo, alpha) : pow(1 - lo, alpha) - pow(1 - hi, alpha);
    }
    double chi = binned_chi_square(&a, edges, bins, expected, 13);
    CHECK_MSG(chi < chi_square_bound(bins), "%s over 10^7: chi-square %.1f over %zu dof", text, chi,
              bins - 1);
    cm_access_fini(&a);
}

/* The batched stream gives cm_access_pick's sequence, for every kind and for a hotspot
 * whose scales do not fit (three draws a pick). */
static void test_stream_matches_pick(void)
{
    const char *specs[] = {"uniform",    "zipf:0.99",     "pareto:0.2",
                           "pareto:0.6", "hotspot:10/90", "hotspot:99/100"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        struct cm_access a = make_access(specs[i], 1000, 77);
        struct cm_access_stream stream;
        uint64_t rng = 123, differ = 0;
        cm_access_stream_init(&stream, &a, rng);
        for (int k = 0; k < 10000; k++)
            differ += cm_access_next(&stream) != cm_access_pick(&a, &rng);
        CHECK_MSG(differ == 0, "%s: %llu of 10000 stream picks differ", specs[i],
                  (unsigned long long)differ);
        cm_access_fini(&a);
    }
    struct cm_access all_hot = make_access("hotspot:99/100", 1000, 1);
    CHECK(!all_hot.one_draw); /* a cold share of 0: the three-draw path */
    cm_access_fini(&all_hot);
    struct cm_access one = make_access("hotspot:10/90", 1000, 1);
    CHECK(one.one_draw);
    cm_access_fini(&one);
}

static void test_scatter_bijection(void)
{
    const uint64_t sizes[] = {1, 2, 3, 7, 1000, 4096, 4097};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint64_t n = sizes[i];
        struct cm_access a = make_access("hotspot:10/90", n, 1234);
        unsigned char *seen = calloc(n, 1);
        uint64_t hits = 0;
        for (uint64_t rank = 0; rank < n; rank++) {
            uint64_t object = cm_access_rank_object(&a, rank);
            if (object < n && !seen[object]) {
                seen[object] = 1;
                hits++;
            }
        }
        CHECK_MSG(hits == n, "n %llu: %llu distinct objects", (unsigned long long)n,
                  (unsigned long long)hits);
        free(seen);
        cm_access_fini(&a);
    }
    /* scattered: the 100 hottest of 1000 objects are not the first 100 */
    struct cm_access a = make_access("zipf:1", 1000, 1);
    uint64_t low = 0;
    for (uint64_t rank = 0; rank < 100; rank++)
        low += cm_access_rank_object(&a, rank) < 100;
    CHECK_MSG(low < 40, "%llu of the 100 hottest are among the first 100", (unsigned long long)low);
    cm_access_fini(&a);
}

static void test_reproducible(void)
{
    const char *specs[] = {"uniform", "zipf:0.99", "pareto:0.3", "hotspot:5/95"};
    for (size_t s = 0; s < 4; s++) {
        struct cm_access a = make_access(specs[s], 100000, 77);
        struct cm_access b = make_access(specs[s], 100000, 77);
        uint64_t ra = 5, rb = 5, rc = 6, same = 0, differ = 0;
        for (int i = 0; i < 1000; i++) {
            uint64_t x = cm_access_pick(&a, &ra);
            same += x == cm_access_pick(&b, &rb);
            differ += x != cm_access_pick(&b, &rc);
        }
        CHECK_MSG(same == 1000, "%s: %llu of 1000 picks repeated", specs[s],
                  (unsigned long long)same);
        CHECK_MSG(differ > 100, "%s: another seed repeated %llu of 1000", specs[s],
                  (unsigned long long)(1000 - differ));
        cm_access_fini(&a);
        cm_access_fini(&b);
    }
}

static void expect_parse_error(const char *text, const char *message)
{
    struct cm_access_spec spec;
    char error[256] = "";
    CHECK_MSG(cm_access_parse(text, &spec, error, sizeof error) < 0, "%s parsed", text);
    CHECK_MSG(strstr(error, message) != NULL, "%s: got \"%s\"", text, error);
}

static void test_parse(void)
{
    struct cm_access_spec spec;
    char error[256], text[64];
    CHECK(cm_access_parse("zipf:1.1", &spec, error, sizeof error) == 0 && spec.theta == 1.1);
    cm_access_format(&spec, text, sizeof text);
    CHECK_STR(text, "zipf:1.1");
    CHECK(cm_access_parse("hotspot:10/90", &spec, error, sizeof error) == 0 &&
          spec.hot_objects == 10 && spec.hot_ops == 90);
    CHECK(cm_access_parse("pareto:0.2", &spec, error, sizeof error) == 0 && spec.h == 0.2);
    expect_parse_error("zipf:0", "zipf θ must be above 0 and at most 10");
    expect_parse_error("zipf:11", "zipf θ must be above 0 and at most 10");
    expect_parse_error("zipf:-1", "zipf θ must be above 0");
    expect_parse_error("zipf:nan", "zipf is zipf:θ");
    expect_parse_error("zipf", "zipf is zipf:θ");
    expect_parse_error("zipf:1x", "zipf is zipf:θ");
    expect_parse_error("pareto:1", "pareto h must be above 0 and below 1");
    expect_parse_error("hotspot:90/10", "must be above the hot share of the objects");
    expect_parse_error("hotspot:10", "hotspot is hotspot:A/B");
    expect_parse_error("hotspot:0/50", "hot share of the objects (A) must be above 0");
    expect_parse_error("normal", "unknown access 'normal'");
    expect_parse_error("uniform:1", "unknown access 'uniform:1'");
}

/* Hotspot with fewer objects than its percentage can split: at least one hot object. */
static void test_hotspot_edges(void)
{
    struct cm_access a = make_access("hotspot:10/90", 3, 1);
    CHECK(a.hot_count == 1);
    uint64_t unpicked;
    size_t cells;
    CHECK(object_chi_square(&a, &a, 300000, 2, &unpicked, &cells) < chi_square_bound(cells));
    CHECK(cells == 3 && unpicked == 0);
    cm_access_fini(&a);
    struct cm_access all = make_access("hotspot:99/100", 1, 1);
    uint64_t rng = 1;
    for (int i = 0; i < 10; i++)
        CHECK(cm_access_pick(&all, &rng) == 0);
    cm_access_fini(&all);
}

static void test_memory_flat(void)
{
    const char *specs[] = {"zipf:0.99", "pareto:0.2", "pareto:0.8"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        struct cm_access a = make_access(specs[i], (uint64_t)1 << 62, 5);
        CHECK_MSG(a.n_entries < 1024, "%s: %zu entries", specs[i], a.n_entries);
        uint64_t rng = 3;
        for (int k = 0; k < 100000; k++)
            CHECK(cm_access_pick(&a, &rng) < ((uint64_t)1 << 62));
        cm_access_fini(&a);
    }
}

/* ---- sizes ---------------------------------------------------------------------------------- */

static void test_size_range(void)
{
    struct cm_size_dist d = {.kind = CM_SIZE_RANGE, .low = 1000, .high = 1099};
    uint64_t observed[100] = {0};
    double expected[100];
    for (uint64_t i = 0; i < 200000; i++) {
        uint64_t size = cm_size_of(&d, 17, i);
        CHECK(size >= 1000 && size <= 1099);
        if (size >= 1000 && size <= 1099)
            observed[size - 1000]++;
    }
    for (int i = 0; i < 100; i++)
        expected[i] = 2000;
    double chi = chi_square(observed, expected, 100);
    CHECK_MSG(chi < chi_square_bound(100), "range: chi-square %.1f", chi);
    CHECK(cm_size_max(&d) == 1099);
}

static void test_size_buckets(void)
{
    struct cm_size_dist d = {.kind = CM_SIZE_BUCKETS,
                             .n_buckets = 3,
                             .sizes = {4096, 65536, 4194304},
                             .weights = {40, 30, 30},
                             .total_weight = 100};
    uint64_t observed[3] = {0};
    const double expected[3] = {40000, 30000, 30000};
    for (uint64_t i = 0; i < 100000; i++) {
        uint64_t size = cm_size_of(&d, 99, i);
        observed[0] += size == 4096;
        observed[1] += size == 65536;
        observed[2] += size == 4194304;
        /* a pure function of (seed, index) */
        CHECK(size == cm_size_of(&d, 99, i));
    }
    CHECK(observed[0] + observed[1] + observed[2] == 100000);
    double chi = chi_square(observed, expected, 3);
    CHECK_MSG(chi < chi_square_bound(3), "buckets: chi-square %.1f", chi);
    CHECK(cm_size_max(&d) == 4194304);
    /* another seed gives other sizes */
    uint64_t same = 0;
    for (uint64_t i = 0; i < 1000; i++)
        same += cm_size_of(&d, 99, i) == cm_size_of(&d, 100, i);
    CHECK(same < 600);
    char text[256];
    struct cm_size_dist back;
    CHECK(cm_size_format(&d, text, sizeof text) > 0);
    CHECK_STR(text, "buckets:4096*40,65536*30,4194304*30");
    CHECK(cm_size_parse(text, &back) && back.total_weight == 100 && back.sizes[2] == 4194304);
}

static void test_size_text(void)
{
    struct cm_size_dist d;
    char text[64], error[256];
    CHECK(cm_size_parse("range:4096-65536", &d) && d.kind == CM_SIZE_RANGE && d.low == 4096 &&
          d.high == 65536);
    CHECK(cm_size_format(&d, text, sizeof text) > 0);
    CHECK_STR(text, "range:4096-65536");
    CHECK(cm_size_parse("4096", &d) && d.kind == CM_SIZE_FIXED && cm_size_of(&d, 1, 5) == 4096);
    CHECK(!cm_size_parse("range:5-4", &d));
    CHECK(!cm_size_parse("buckets:4096*0", &d));
    CHECK(!cm_size_parse("buckets:4096", &d));
    CHECK(!cm_size_parse("0", &d));
    CHECK(!cm_size_parse("x", &d));
    struct cm_size_dist zero = {.kind = CM_SIZE_BUCKETS, .n_buckets = 1, .sizes = {4096}};
    CHECK(cm_size_check(&zero, error, sizeof error) < 0);
    CHECK_STR(error, "object size buckets: the weights add up to 0 (give each bucket a weight, "
                     "e.g. {\"4K\", 40})");
}

int main(void)
{
    test_parse();
    test_uniform_covers_all();
    test_small("uniform");
    test_small("zipf:0.99");
    test_small("zipf:1.2");
    test_small("zipf:3");
    test_small("pareto:0.2");
    test_small("pareto:0.8");
    test_small("pareto:0.6");
    test_small("hotspot:10/90");
    test_small("hotspot:2.5/60");
    test_detects_wrong_distribution();
    test_zipf_large("zipf:0.99", 0.99);
    test_zipf_large("zipf:1.2", 1.2);
    test_pareto_large("pareto:0.2", 0.2);
    test_pareto_large("pareto:0.6", 0.6);
    test_pareto_large("pareto:0.9", 0.9);
    test_stream_matches_pick();
    test_scatter_bijection();
    test_reproducible();
    test_hotspot_edges();
    test_memory_flat();
    test_size_range();
    test_size_buckets();
    test_size_text();
    return check_summary("test_distrib");
}
