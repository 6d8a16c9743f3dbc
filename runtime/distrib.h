/* Distributions a bench draws from, seeded and reproducible, with memory independent of the
 * number of objects (they work for 10^7 objects and more):
 *
 * - access: which object an op goes to, among n. "uniform" (the default), "zipf:θ",
 *   "pareto:h" and "hotspot:A/B" (A % of the objects take B % of the ops). The skewed ones
 *   rank the objects by heat (rank 0 hottest) and scatter the ranks over the object
 *   indices with a seeded bijection, so that the hot objects are not the first ones
 *   written (nor, for block devices, one hot region at the start). Picks cost O(1), with
 *   no division.
 * - sizes: each object's size as a function of (seed, object index) only: fixed, a
 *   uniform range {low, high}, or weighted buckets (4K 40 %, 64K 30 %, 4M 30 %), so a
 *   reader knows every object's size without a stored list.
 *
 * Pure C; docs/dsl.md ("Access and size distributions") says what each means. */
#ifndef CEPHMARK_DISTRIB_H
#define CEPHMARK_DISTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- access ------------------------------------------------------------------------------ */

enum cm_access_kind { CM_ACCESS_UNIFORM, CM_ACCESS_ZIPF, CM_ACCESS_PARETO, CM_ACCESS_HOTSPOT };

/* Bounds of the parameters (docs/dsl.md). */
#define CM_ZIPF_THETA_MAX 10.0

/* A parsed access specification, before it knows the number of objects. */
struct cm_access_spec {
    enum cm_access_kind kind;
    double theta;       /* zipf: P(rank k) ∝ (k + 1)^-θ, 0 < θ <= CM_ZIPF_THETA_MAX */
    double h;           /* pareto: 0 < h < 1, fio's meaning (h = 0.2: 20 % take 80 %) */
    double hot_objects; /* hotspot: A, percent of the objects, 0 < A < 100 */
    double hot_ops;     /* hotspot: B, percent of the ops, A < B <= 100 */
};

/* Parses "uniform", "zipf:1.1", "pareto:0.2", "hotspot:10/90". Returns 0, or -1 with one
 * sentence in `error` (unknown name, a parameter missing or out of range). */
int cm_access_parse(const char *text, struct cm_access_spec *spec, char *error, size_t size);

/* The specification as text ("zipf:1.1"), for results. */
void cm_access_format(const struct cm_access_spec *spec, char *out, size_t size);

struct cm_access_entry; /* zipf: a singleton rank or a block of ranks */

/* A chooser over n objects. Its picks draw from the caller's generator state, so one
 * chooser may serve several streams; the scatter is fixed by the seed given to init. */
struct cm_access {
    struct cm_access_spec spec;
    uint64_t n;
    /* the scatter (distrib.c): ranks below `span` mixed, then all rotated */
    uint64_t span, mul1, add1, rotate;
    /* zipf: an alias table over singleton ranks and geometric blocks of ranks */
    struct cm_access_entry *entries;
    size_t n_entries;
    /* pareto: rank = n * u^power, from the hot end */
    double power;
    bool hot_high; /* pareto with h > 0.5: the hot end is the high ranks, flipped */
    /* hotspot: a draw below the threshold is hot, and scales to a rank by hot_mul and
     * hot_shift; one above it is cold, and scales by cold_mul and cold_shift */
    uint64_t hot_count, hot_threshold, hot_mul, cold_mul;
    uint8_t hot_shift, cold_shift;
    bool one_draw;
};

/* Prepares a chooser over `objects` (>= 1) objects; the seed fixes the scatter. Returns 0
 * or -ENOMEM. Memory: at most 64 KiB (zipf's table), whatever `objects` is. */
int cm_access_init(struct cm_access *access, const struct cm_access_spec *spec, uint64_t objects,
                   uint64_t seed);
void cm_access_fini(struct cm_access *access);

/* The next object index in [0, n), drawing from *rng (splitmix64 state). */
uint64_t cm_access_pick(const struct cm_access *access, uint64_t *rng);

/* The heat rank of a pick before scattering, and the object a rank scatters to: the
 * tests check frequencies by rank against the distribution's own probabilities. */
uint64_t cm_access_pick_rank(const struct cm_access *access, uint64_t *rng);
uint64_t cm_access_rank_object(const struct cm_access *access, uint64_t rank);

/* A stream of picks from one chooser, with a generator of its own, computed
 * CM_ACCESS_BATCH at a time. The steps of one pick depend on each other (the draw, the
 * table entry it selects, the proposal, the scatter), the picks of a batch do not, so the
 * processor overlaps them: a zipf pick costs a third of a lone one (docs/performance.md).
 * The sequence is the one cm_access_pick gives from the same generator state. */
#define CM_ACCESS_BATCH 16
struct cm_access_stream {
    const struct cm_access *access;
    uint64_t rng;
    unsigned next, count;
    uint64_t picks[CM_ACCESS_BATCH];
};

void cm_access_stream_init(struct cm_access_stream *stream, const struct cm_access *access,
                           uint64_t rng);
void cm_access_stream_fill(struct cm_access_stream *stream);

static inline uint64_t cm_access_next(struct cm_access_stream *stream)
{
    if (stream->next == stream->count)
        cm_access_stream_fill(stream);
    return stream->picks[stream->next++];
}

/* The probability of rank r (exact up to rounding), for tests. */
double cm_access_rank_probability(const struct cm_access *access, uint64_t rank);

/* ---- sizes -------------------------------------------------------------------------------- */

enum cm_size_kind { CM_SIZE_FIXED, CM_SIZE_RANGE, CM_SIZE_BUCKETS };

#define CM_SIZE_BUCKETS_MAX 16

struct cm_size_dist {
    enum cm_size_kind kind;
    uint64_t low, high; /* FIXED: low = high; RANGE: inclusive, uniform */
    size_t n_buckets;
    uint64_t sizes[CM_SIZE_BUCKETS_MAX];
    uint64_t weights[CM_SIZE_BUCKETS_MAX];
    uint64_t total_weight;
};

/* The size of object `index` of the run seeded `seed`: a pure function of both. */
uint64_t cm_size_of(const struct cm_size_dist *dist, uint64_t seed, uint64_t index);

/* The largest size the distribution can give (buffers are sized by it). */
uint64_t cm_size_max(const struct cm_size_dist *dist);

/* Checks a filled distribution: sizes >= 1, low <= high, buckets with a positive total
 * weight. 0, or -1 with one sentence in `error`. */
int cm_size_check(const struct cm_size_dist *dist, char *error, size_t size);

/* One token without spaces for the run metadata and results: "4096",
 * "range:4096-65536", "buckets:4096*40,65536*30". Returns the length, or -1 when it does
 * not fit. */
int cm_size_format(const struct cm_size_dist *dist, char *out, size_t size);

/* Parses what cm_size_format wrote; false when it is not such a token. */
bool cm_size_parse(const char *text, struct cm_size_dist *dist);

#endif
