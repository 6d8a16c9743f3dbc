/* Access and size distributions; see distrib.h.
 *
 * Zipf without a table of n entries: the ranks are grouped into blocks whose width is 1/16
 * of their start (the first 32 ranks one each; about 240 blocks for 10^7 ranks, at most
 * about 700 for any n below 2^64). An alias table (Vose) picks a block by its exact mass,
 * and inside a block a rank is proposed uniformly and accepted with probability
 * ((start + 1) / (rank + 1))^θ; since a block spans a factor of at most 17/16, a
 * precomputed floor of that ratio accepts about 94 % of the proposals at once, and the
 * block's precomputed tangent and chord (below and above the ratio, which is convex in
 * the rank) decide nearly all of the rest, so pow is called for about 0.2 % of them. Block masses
 * are exact sums up to 64 ranks and Euler–Maclaurin sums beyond (such blocks start past rank 1024,
 * where the first omitted term is below 1e-16 of the sum). A pick costs one splitmix64 draw (24
 * bits for the entry, 40 for the proposal) while the blocks are at most 2^24 ranks wide (n up to
 * about 2.7 * 10^8), one more per rejected proposal (about 3 %), and no division. */
#include "distrib.h"
#include "splitmix.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A block of ranks [start, start + width) of zipf or pareto: the 32-bit coin threshold
 * below which a uniform proposal in it is accepted at once (the acceptance ratio
 * P(rank) / P(start) at the block's last rank, its lowest); the slope of a line below the
 * ratio, rounded up, so that 1 - accept_slope * (rank - start) stays below it, and the
 * slope of one above, rounded down. The ratio is convex or concave in the rank (zipf's
 * always convex): the tangent at the start and the chord are the two lines. Between
 * them, about 0.2 % of the proposals, the exact ratio decides. */
struct zipf_block {
    uint64_t start, width;
    uint32_t accept_threshold;
    float accept_slope, reject_slope;
    /* side 0's: a 24-bit coin below it keeps side 0, else side 1 */
    // cppcheck-suppress unusedStructMember ; read through entry->side[0] in zipf_pick
    uint32_t alias_threshold;
};

/* One slot of the alias table, on one cache line: its own block and its alias's, so a
 * pick makes one random memory access. */
struct cm_access_entry {
    _Alignas(64) struct zipf_block side[2];
};

#define ZIPF_BLOCK_FACTOR 16
#define ZIPF_ENTRIES_MAX  1024 /* above the ~700 blocks that 2^64 ranks need */
/* Blocks up to this width take their proposal from the 40 bits of the entry's draw that
 * the entry does not use: the rank offset and the coin then resolve 2^-16 or better. */
#define ZIPF_NARROW ((uint64_t)1 << 24)
#define TWO_POW_64  18446744073709551616.0

static uint64_t mul_high(uint64_t x, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/* A probability in [0, 1] as a threshold for a uniform 64-bit draw. */
static uint64_t probability_threshold(double p)
{
    if (!(p > 0))
        return 0;
    if (p >= 1)
        return UINT64_MAX;
    return (uint64_t)(p * TWO_POW_64);
}

/* The same for a coin of `bits` bits (at most 32); 1 is 2^bits, above every coin. */
static uint32_t probability_threshold_bits(double p, unsigned bits)
{
    double scale = (double)((uint64_t)1 << bits);
    if (!(p > 0))
        return 0;
    if (p >= 1)
        return bits >= 32 ? UINT32_MAX : (uint32_t)1 << bits;
    return (uint32_t)(p * scale);
}

/* ---- parsing -------------------------------------------------------------------------------- */

static int parse_number(const char *text, double *value, const char **end)
{
    char *stop = NULL;
    errno = 0;
    *value = strtod(text, &stop);
    if (stop == text || errno != 0 || !isfinite(*value))
        return -1;
    *end = stop;
    return 0;
}

static int parse_failed(char *error, size_t size, const char *message, const char *text)
{
    snprintf(error, size, message, text);
    return -1;
}

static int parse_hotspot(const char *text, const char *args, struct cm_access_spec *spec,
                         char *error, size_t size)
{
    const char *end;
    if (parse_number(args, &spec->hot_objects, &end) < 0 || *end != '/' ||
        parse_number(end + 1, &spec->hot_ops, &end) < 0 || *end)
        return parse_failed(error, size,
                            "access '%s': hotspot is hotspot:A/B (A %% of the objects take "
                            "B %% of the ops, e.g. hotspot:10/90)",
                            text);
    if (!(spec->hot_objects > 0 && spec->hot_objects < 100))
        return parse_failed(error, size,
                            "access '%s': the hot share of the objects (A) must be above 0 and "
                            "below 100",
                            text);
    if (!(spec->hot_ops > spec->hot_objects && spec->hot_ops <= 100))
        return parse_failed(error, size,
                            "access '%s': the hot share of the ops (B) must be above the hot "
                            "share of the objects (A) and at most 100, e.g. hotspot:10/90",
                            text);
    return 0;
}

int cm_access_parse(const char *text, struct cm_access_spec *spec, char *error, size_t size)
{
    memset(spec, 0, sizeof *spec);
    const char *colon = strchr(text, ':');
    size_t name_len = colon ? (size_t)(colon - text) : strlen(text);
    const char *args = colon ? colon + 1 : NULL;
    const char *end;
    if (name_len == 7 && strncmp(text, "uniform", 7) == 0 && !args) {
        spec->kind = CM_ACCESS_UNIFORM;
        return 0;
    }
    if (name_len == 4 && strncmp(text, "zipf", 4) == 0) {
        spec->kind = CM_ACCESS_ZIPF;
        if (!args || parse_number(args, &spec->theta, &end) < 0 || *end)
            return parse_failed(error, size, "access '%s': zipf is zipf:θ, e.g. zipf:1.1", text);
        if (!(spec->theta > 0 && spec->theta <= CM_ZIPF_THETA_MAX))
            return parse_failed(error, size, "access '%s': zipf θ must be above 0 and at most 10",
                                text);
        return 0;
    }
    if (name_len == 6 && strncmp(text, "pareto", 6) == 0) {
        spec->kind = CM_ACCESS_PARETO;
        if (!args || parse_number(args, &spec->h, &end) < 0 || *end)
            return parse_failed(error, size, "access '%s': pareto is pareto:h, e.g. pareto:0.2",
                                text);
        if (!(spec->h > 0 && spec->h < 1))
            return parse_failed(error, size, "access '%s': pareto h must be above 0 and below 1",
                                text);
        return 0;
    }
    if (name_len == 7 && strncmp(text, "hotspot", 7) == 0 && args) {
        spec->kind = CM_ACCESS_HOTSPOT;
        return parse_hotspot(text, args, spec, error, size);
    }
    return parse_failed(error, size,
                        "unknown access '%s' (expected uniform, zipf:θ, pareto:h or "
                        "hotspot:A/B)",
                        text);
}

void cm_access_format(const struct cm_access_spec *spec, char *out, size_t size)
{
    switch (spec->kind) {
    case CM_ACCESS_ZIPF:
        snprintf(out, size, "zipf:%g", spec->theta);
        break;
    case CM_ACCESS_PARETO:
        snprintf(out, size, "pareto:%g", spec->h);
        break;
    case CM_ACCESS_HOTSPOT:
        snprintf(out, size, "hotspot:%g/%g", spec->hot_objects, spec->hot_ops);
        break;
    case CM_ACCESS_UNIFORM:
    default:
        snprintf(out, size, "uniform");
        break;
    }
}

/* ---- the scatter: a seeded bijection on [0, n) -------------------------------------------- */

/* Ranks below the largest power of two p <= n (all the hot ones: p > n / 2) go through
 * x -> (x * odd + c) mod p, a bijection on [0, p) whose multiplier is p times the golden
 * ratio's fraction (Fibonacci hashing: consecutive ranks land far apart, evenly); ranks
 * from p up (the coldest) stay in place; then everything is rotated by a seeded offset
 * mod n. Two steps without a division or a data-dependent loop: the cycle walk this
 * replaced cost 8 ns per pick in mispredicted branches. */
static void scatter_init(struct cm_access *a, uint64_t seed)
{
    unsigned bits = 0;
    while (bits < 63 && ((uint64_t)1 << (bits + 1)) <= a->n)
        bits++;
    a->span = (uint64_t)1 << bits;
    uint64_t state = seed;
    a->mul1 =
        ((uint64_t)(0.6180339887498949 * (double)a->span) ^ (cm_splitmix64(&state) & 0xfff)) | 1;
    a->add1 = cm_splitmix64(&state) & (a->span - 1);
    a->rotate = mul_high(cm_splitmix64(&state), a->n);
}

static uint64_t scatter(const struct cm_access *a, uint64_t rank)
{
    uint64_t x = rank < a->span ? (rank * a->mul1 + a->add1) & (a->span - 1) : rank;
    x += a->rotate;
    return x >= a->n ? x - a->n : x;
}

uint64_t cm_access_rank_object(const struct cm_access *access, uint64_t rank)
{
    return access->spec.kind == CM_ACCESS_UNIFORM ? rank : scatter(access, rank);
}

/* ---- zipf ---------------------------------------------------------------------------------- */

/* Σ k^-θ for k in [first, last], exactly for short ranges, else by Euler–Maclaurin with
 * terms up to the third derivative (first > 1024 wherever it is used: the next term is
 * below 1e-16 of the sum). */
static double zipf_mass(double theta, uint64_t first, uint64_t last)
{
    if (last - first < 64) {
        double sum = 0;
        for (uint64_t k = last + 1; k-- > first;)
            sum += pow((double)k, -theta);
        return sum;
    }
    double a = (double)first, b = (double)last;
    double log_ratio = log(b / a), t = (1 - theta) * log_ratio;
    double integral = pow(a, 1 - theta) * (fabs(t) < 1e-12 ? log_ratio : expm1(t) / (1 - theta));
    double fa = pow(a, -theta), fb = pow(b, -theta);
    double d1a = -theta * fa / a, d1b = -theta * fb / b;
    double c3 = -theta * (theta + 1) * (theta + 2);
    double d3a = c3 * fa / (a * a * a), d3b = c3 * fb / (b * b * b);
    return integral + (fa + fb) / 2 + (d1b - d1a) / 12 - (d3b - d3a) / 720;
}

/* Σ k^-θ for k in [1, n]: the head one by one, the tail by Euler–Maclaurin. */
static double zipf_total(double theta, uint64_t n)
{
    const uint64_t head = 1024;
    double sum = 0;
    for (uint64_t k = n < head ? n : head; k >= 1; k--)
        sum += pow((double)k, -theta);
    if (n <= head)
        return sum;
    return sum + zipf_mass(theta, head + 1, n);
}

/* Vose's alias method over the blocks' masses: entry i keeps block i with probability
 * threshold / 2^24, else goes to its alias. */
static void alias_build(struct cm_access_entry *entries, const struct zipf_block *blocks,
                        const double *mass, size_t n, uint32_t *small, uint32_t *large,
                        double *scaled)
{
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += mass[i];
    size_t n_small = 0, n_large = 0;
    for (size_t i = 0; i < n; i++) {
        scaled[i] = mass[i] * (double)n / total;
        entries[i].side[0] = entries[i].side[1] = blocks[i];
        entries[i].side[0].alias_threshold = (uint32_t)1 << 24; /* left at the end: 1 */
        if (scaled[i] < 1)
            small[n_small++] = (uint32_t)i;
        else
            large[n_large++] = (uint32_t)i;
    }
    while (n_small && n_large) {
        uint32_t s = small[--n_small], l = large[n_large - 1];
        entries[s].side[0].alias_threshold = probability_threshold_bits(scaled[s], 24);
        entries[s].side[1] = blocks[l];
        scaled[l] -= 1 - scaled[s];
        if (scaled[l] < 1) {
            n_large--;
            small[n_small++] = l;
        }
    }
}

/* ---- pareto ------------------------------------------------------------------------------- */

/* The pareto rank's CDF from the hot end: P(rank < x). */
static double pareto_cdf(const struct cm_access *a, double x)
{
    double n = (double)a->n;
    if (!a->hot_high)
        return pow(x / n, 1 / a->power);
    return 1 - pow((n - x) / n, 1 / a->power);
}

/* P(rank) up to a constant factor, without the cancellation of a difference of CDFs:
 * (r + 1)^α - r^α = r^α (e^(α ln(1 + 1/r)) - 1), with r counted from the end where the
 * CDF is a power. */
static double pareto_weight(const struct cm_access *a, uint64_t rank)
{
    double alpha = 1 / a->power;
    double r = (double)(a->hot_high ? a->n - 1 - rank : rank);
    return r < 1 ? 1 : pow(r, alpha) * expm1(alpha * log1p(1 / r));
}

/* P(rank) / P(start), the acceptance ratio of a proposal in the block from `start`. */
static double block_ratio(const struct cm_access *a, uint64_t start, uint64_t rank)
{
    if (a->spec.kind == CM_ACCESS_ZIPF)
        return pow(((double)start + 1) / ((double)rank + 1), a->spec.theta);
    return pareto_weight(a, rank) / pareto_weight(a, start);
}

/* ---- blocks of ranks, for zipf and pareto ----------------------------------------------- */

static double block_mass(const struct cm_access *a, uint64_t start, uint64_t width)
{
    if (a->spec.kind == CM_ACCESS_ZIPF)
        return zipf_mass(a->spec.theta, start + 1, start + width);
    return pareto_cdf(a, (double)(start + width)) - pareto_cdf(a, (double)start);
}

/* The lines below and above the ratio: zipf's tangent θ / (start + 1) (continuous, below
 * the convex ratio) and chord; pareto's step to the next rank and chord, whichever is
 * steeper below (the ratio's differences only grow if it is convex, only shrink if not). */
static void block_bounds(const struct cm_access *a, struct zipf_block *b, double last)
{
    if (b->width <= 1) {
        b->accept_slope = b->reject_slope = 0;
        return;
    }
    double chord = (1 - last) / (double)(b->width - 1);
    double step = a->spec.kind == CM_ACCESS_ZIPF ? a->spec.theta / ((double)b->start + 1)
                                                 : 1 - block_ratio(a, b->start, b->start + 1);
    b->accept_slope = nextafterf((float)(step > chord ? step : chord), INFINITY);
    b->reject_slope = nextafterf((float)(step > chord ? chord : step), 0);
}

static size_t zipf_layout(const struct cm_access *a, struct zipf_block *blocks, double *mass)
{
    size_t n = 0;
    uint64_t start = 0;
    while (start < a->n && n < ZIPF_ENTRIES_MAX) {
        uint64_t width = start < (uint64_t)ZIPF_BLOCK_FACTOR * 2 ? 1 : start / ZIPF_BLOCK_FACTOR;
        if (width > a->n - start)
            width = a->n - start;
        blocks[n].start = start;
        blocks[n].width = width;
        double last = width > 1 ? block_ratio(a, start, start + width - 1) : 1;
        blocks[n].accept_threshold = probability_threshold_bits(last, 32);
        block_bounds(a, &blocks[n], last);
        mass[n++] = block_mass(a, start, width);
        start += width;
    }
    return n;
}

static int zipf_init(struct cm_access *a)
{
    a->entries = aligned_alloc(64, ZIPF_ENTRIES_MAX * sizeof *a->entries);
    struct zipf_block *blocks = calloc(ZIPF_ENTRIES_MAX, sizeof *blocks);
    double *mass = calloc(ZIPF_ENTRIES_MAX, sizeof *mass);
    double *scaled = calloc(ZIPF_ENTRIES_MAX, sizeof *scaled);
    uint32_t *small = calloc(ZIPF_ENTRIES_MAX, sizeof *small);
    uint32_t *large = calloc(ZIPF_ENTRIES_MAX, sizeof *large);
    int rc = -ENOMEM;
    if (a->entries && blocks && mass && scaled && small && large) {
        a->n_entries = zipf_layout(a, blocks, mass);
        alias_build(a->entries, blocks, mass, a->n_entries, small, large, scaled);
        rc = 0;
    }
    free(large);
    free(small);
    free(scaled);
    free(mass);
    free(blocks);
    return rc;
}

/* A proposal that the block's floor did not accept: below the lower line it is accepted,
 * above the upper one rejected, and in between the exact ratio decides. */
static bool zipf_accept(const struct cm_access *a, const struct zipf_block *e, uint64_t rank,
                        uint32_t coin)
{
    double u = ((double)coin + 0.5) * 0x1p-32, offset = (double)(rank - e->start);
    if (u < 1.0 - (double)e->accept_slope * offset)
        return true;
    if (u >= 1.0 - (double)e->reject_slope * offset)
        return false;
    return u < block_ratio(a, e->start, rank);
}

/* One draw per pick: its top 24 bits pick the entry (the high part of their product with
 * the number of entries) and toss the alias coin (the low part, uniform given the entry);
 * its other 40 bits propose a rank in the block and toss its acceptance coin the same
 * way. Blocks wider than ZIPF_NARROW (only when n is above about 2.7 * 10^8) take a
 * 64-bit proposal from a generator seeded by the draw, as does a proposal after a
 * rejection: the caller's generator moves once per pick, so picks one at a time and in
 * batches (cm_access_stream_fill, which looks the blocks up first and then proposes) are
 * the same sequence. A singleton is a block of width 1 whose coin always accepts: no
 * branch on the entry's kind, which the processor could not predict. */
static inline const struct zipf_block *zipf_block_of(const struct cm_access *a, uint64_t draw)
{
    uint64_t slot = (draw >> 40) * a->n_entries;
    const struct cm_access_entry *entry = &a->entries[slot >> 24];
    return &entry->side[(uint32_t)(slot & 0xffffff) >= entry->side[0].alias_threshold];
}

static inline uint64_t zipf_rank(const struct cm_access *a, const struct zipf_block *e,
                                 uint64_t draw)
{
    uint64_t more = draw;
    uint64_t bits = e->width <= ZIPF_NARROW ? draw << 24 : cm_splitmix64(&more);
    for (;;) {
        unsigned __int128 proposal = (unsigned __int128)bits * e->width;
        uint64_t rank = e->start + (uint64_t)(proposal >> 64);
        uint32_t coin = (uint32_t)((uint64_t)proposal >> 32);
        if (coin < e->accept_threshold || zipf_accept(a, e, rank, coin))
            return rank;
        bits = cm_splitmix64(&more);
    }
}

static inline uint64_t zipf_pick(const struct cm_access *a, uint64_t *rng)
{
    uint64_t draw = cm_splitmix64(rng);
    return zipf_rank(a, zipf_block_of(a, draw), draw);
}

/* ---- hotspot ----------------------------------------------------------------------------- */

/* A draw below the threshold is uniform on [0, threshold): scaled by hot_count /
 * threshold (in fixed point: a 64-bit multiplier and a shift), it is a hot rank, uniform
 * to 2^-60. A draw above it, less the threshold, does the same for the cold ranks. One
 * draw and no branch per pick, where three draws and a branch the processor could not
 * predict (10 % of the time, for 10/90) cost 10 ns. A share of the draws smaller than its
 * count of objects (a probability below 10^-10 or so) keeps the three draws. */
static bool fixed_scale(uint64_t count, unsigned __int128 range, uint64_t *mul, uint8_t *shift)
{
    const unsigned __int128 two_pow_64 = (unsigned __int128)1 << 64;
    unsigned __int128 whole = ((unsigned __int128)count << 64) / range;
    if (count == 0 || whole + 1 >= two_pow_64)
        return false;
    unsigned k = 0;
    while (k < 63 && ((whole + 1) << (k + 1)) <= two_pow_64)
        k++;
    *mul = (uint64_t)((((unsigned __int128)count << k) << 64) / range);
    *shift = (uint8_t)k;
    return true;
}

static void hotspot_scales(struct cm_access *a)
{
    uint64_t cold = a->n - a->hot_count;
    a->one_draw = a->hot_threshold != 0 && a->hot_threshold != UINT64_MAX &&
                  fixed_scale(a->hot_count, a->hot_threshold, &a->hot_mul, &a->hot_shift) &&
                  fixed_scale(cold, ((unsigned __int128)1 << 64) - a->hot_threshold, &a->cold_mul,
                              &a->cold_shift);
}

static inline uint64_t hotspot_pick(const struct cm_access *a, uint64_t draw)
{
    bool hot = draw < a->hot_threshold;
    uint64_t base = hot ? 0 : a->hot_count, from = hot ? 0 : a->hot_threshold;
    unsigned __int128 scaled = (unsigned __int128)(draw - from) * (hot ? a->hot_mul : a->cold_mul);
    return base + ((uint64_t)(scaled >> 64) >> (hot ? a->hot_shift : a->cold_shift));
}

/* ---- the chooser ----------------------------------------------------------------------------- */

int cm_access_init(struct cm_access *access, const struct cm_access_spec *spec, uint64_t objects,
                   uint64_t seed)
{
    memset(access, 0, sizeof *access);
    access->spec = *spec;
    access->n = objects ? objects : 1;
    scatter_init(access, seed);
    switch (spec->kind) {
    case CM_ACCESS_ZIPF:
        return zipf_init(access);
    case CM_ACCESS_PARETO:
        /* fio's power: a share h of the objects takes 1 - h of the ops (or, for h > 0.5,
         * the share 1 - h takes h, at the other end, flipped here so rank 0 is hottest) */
        access->power = log(spec->h) / log(1 - spec->h);
        access->hot_high = spec->h > 0.5;
        return zipf_init(access);
    case CM_ACCESS_HOTSPOT: {
        double hot = floor(spec->hot_objects / 100 * (double)access->n + 0.5);
        access->hot_count = hot < 1 ? 1 : hot >= (double)access->n ? access->n : (uint64_t)hot;
        access->hot_threshold = probability_threshold(spec->hot_ops / 100);
        hotspot_scales(access);
        return 0;
    }
    case CM_ACCESS_UNIFORM:
    default:
        return 0;
    }
}

void cm_access_fini(struct cm_access *access)
{
    free(access->entries);
    access->entries = NULL;
    access->n_entries = 0;
}

uint64_t cm_access_pick_rank(const struct cm_access *a, uint64_t *rng)
{
    switch (a->spec.kind) {
    case CM_ACCESS_ZIPF:
    case CM_ACCESS_PARETO:
        return zipf_pick(a, rng);
    case CM_ACCESS_HOTSPOT: {
        if (a->one_draw)
            return hotspot_pick(a, cm_splitmix64(rng));
        uint64_t cold = a->n - a->hot_count;
        if (cold == 0 || cm_splitmix64(rng) < a->hot_threshold)
            return mul_high(cm_splitmix64(rng), a->hot_count);
        return a->hot_count + mul_high(cm_splitmix64(rng), cold);
    }
    case CM_ACCESS_UNIFORM:
    default:
        return mul_high(cm_splitmix64(rng), a->n);
    }
}

uint64_t cm_access_pick(const struct cm_access *access, uint64_t *rng)
{
    if (access->spec.kind == CM_ACCESS_ZIPF || access->spec.kind == CM_ACCESS_PARETO)
        return scatter(access, zipf_pick(access, rng));
    uint64_t rank = cm_access_pick_rank(access, rng);
    return access->spec.kind == CM_ACCESS_UNIFORM ? rank : scatter(access, rank);
}

void cm_access_stream_init(struct cm_access_stream *stream, const struct cm_access *access,
                           uint64_t rng)
{
    stream->access = access;
    stream->rng = rng;
    stream->next = stream->count = 0;
}

/* One loop per kind, so that the loop body has no branch on the kind. */
void cm_access_stream_fill(struct cm_access_stream *stream)
{
    const struct cm_access *a = stream->access;
    uint64_t *out = stream->picks, rng = stream->rng;
    switch (a->spec.kind) {
    case CM_ACCESS_ZIPF:
    case CM_ACCESS_PARETO: {
        /* every table lookup first, then the proposals: the lookups' loads overlap */
        const struct zipf_block *blocks[CM_ACCESS_BATCH];
        uint64_t draws[CM_ACCESS_BATCH];
        for (unsigned i = 0; i < CM_ACCESS_BATCH; i++) {
            draws[i] = cm_splitmix64(&rng);
            blocks[i] = zipf_block_of(a, draws[i]);
        }
        for (unsigned i = 0; i < CM_ACCESS_BATCH; i++)
            out[i] = scatter(a, zipf_rank(a, blocks[i], draws[i]));
        break;
    }
    case CM_ACCESS_HOTSPOT:
        if (!a->one_draw)
            goto other;
        for (unsigned i = 0; i < CM_ACCESS_BATCH; i++)
            out[i] = scatter(a, hotspot_pick(a, cm_splitmix64(&rng)));
        break;
    case CM_ACCESS_UNIFORM:
        for (unsigned i = 0; i < CM_ACCESS_BATCH; i++)
            out[i] = mul_high(cm_splitmix64(&rng), a->n);
        break;
    default:
    other:
        for (unsigned i = 0; i < CM_ACCESS_BATCH; i++)
            out[i] = scatter(a, cm_access_pick_rank(a, &rng));
        break;
    }
    stream->rng = rng;
    stream->next = 0;
    stream->count = CM_ACCESS_BATCH;
}

double cm_access_rank_probability(const struct cm_access *a, uint64_t rank)
{
    switch (a->spec.kind) {
    case CM_ACCESS_ZIPF:
        return pow((double)rank + 1, -a->spec.theta) / zipf_total(a->spec.theta, a->n);
    case CM_ACCESS_PARETO:
        return pareto_cdf(a, (double)rank + 1) - pareto_cdf(a, (double)rank);
    case CM_ACCESS_HOTSPOT: {
        uint64_t cold = a->n - a->hot_count;
        if (cold == 0)
            return 1.0 / (double)a->hot_count;
        if (rank < a->hot_count)
            return a->spec.hot_ops / 100 / (double)a->hot_count;
        return (1 - a->spec.hot_ops / 100) / (double)cold;
    }
    case CM_ACCESS_UNIFORM:
    default:
        return 1.0 / (double)a->n;
    }
}

/* ---- sizes ----------------------------------------------------------------------------------- */

uint64_t cm_size_of(const struct cm_size_dist *dist, uint64_t seed, uint64_t index)
{
    if (dist->kind == CM_SIZE_FIXED)
        return dist->low;
    /* element `index` of the splitmix64 stream seeded by the run: no state, any order */
    uint64_t state = seed + index * 0x9e3779b97f4a7c15ULL;
    uint64_t draw = cm_splitmix64(&state);
    if (dist->kind == CM_SIZE_RANGE)
        return dist->low + mul_high(draw, dist->high - dist->low + 1);
    uint64_t point = mul_high(draw, dist->total_weight);
    for (size_t i = 0; i < dist->n_buckets; i++) {
        if (point < dist->weights[i])
            return dist->sizes[i];
        point -= dist->weights[i];
    }
    return dist->sizes[dist->n_buckets - 1]; /* not reached: the weights sum to the total */
}

uint64_t cm_size_max(const struct cm_size_dist *dist)
{
    if (dist->kind != CM_SIZE_BUCKETS)
        return dist->high;
    uint64_t max = 0;
    for (size_t i = 0; i < dist->n_buckets; i++)
        if (dist->weights[i] > 0 && dist->sizes[i] > max)
            max = dist->sizes[i];
    return max;
}

int cm_size_check(const struct cm_size_dist *dist, char *error, size_t size)
{
    if (dist->kind != CM_SIZE_BUCKETS) {
        if (dist->low == 0) {
            snprintf(error, size, "object sizes must be at least 1 byte");
            return -1;
        }
        if (dist->low > dist->high) {
            snprintf(error, size,
                     "object size range {%" PRIu64 ", %" PRIu64 "}: the low end is above the "
                     "high end",
                     dist->low, dist->high);
            return -1;
        }
        return 0;
    }
    if (dist->n_buckets == 0 || dist->total_weight == 0) {
        snprintf(error, size,
                 "object size buckets: the weights add up to 0 (give each "
                 "bucket a weight, e.g. {\"4K\", 40})");
        return -1;
    }
    for (size_t i = 0; i < dist->n_buckets; i++)
        if (dist->sizes[i] == 0) {
            snprintf(error, size, "object size buckets: sizes must be at least 1 byte");
            return -1;
        }
    return 0;
}

int cm_size_format(const struct cm_size_dist *dist, char *out, size_t size)
{
    int n;
    if (dist->kind == CM_SIZE_FIXED)
        n = snprintf(out, size, "%" PRIu64, dist->low);
    else if (dist->kind == CM_SIZE_RANGE)
        n = snprintf(out, size, "range:%" PRIu64 "-%" PRIu64, dist->low, dist->high);
    else {
        n = snprintf(out, size, "buckets:");
        for (size_t i = 0; i < dist->n_buckets && n >= 0 && (size_t)n < size; i++)
            n += snprintf(out + n, size - (size_t)n, "%s%" PRIu64 "*%" PRIu64, i ? "," : "",
                          dist->sizes[i], dist->weights[i]);
    }
    return n < 0 || (size_t)n >= size ? -1 : n;
}

static bool parse_u64(const char *text, uint64_t *value, const char **end)
{
    char *stop = NULL;
    if (*text < '0' || *text > '9')
        return false;
    errno = 0;
    *value = strtoull(text, &stop, 10);
    *end = stop;
    return errno == 0;
}

static bool parse_buckets(const char *text, struct cm_size_dist *dist)
{
    const char *p = text;
    while (*p) {
        if (dist->n_buckets == CM_SIZE_BUCKETS_MAX)
            return false;
        uint64_t size, weight;
        if (!parse_u64(p, &size, &p) || *p != '*' || !parse_u64(p + 1, &weight, &p))
            return false;
        dist->sizes[dist->n_buckets] = size;
        dist->weights[dist->n_buckets++] = weight;
        dist->total_weight += weight;
        if (*p == ',')
            p++;
        else if (*p)
            return false;
    }
    return true;
}

bool cm_size_parse(const char *text, struct cm_size_dist *dist)
{
    memset(dist, 0, sizeof *dist);
    const char *end;
    char error[160];
    if (strncmp(text, "range:", 6) == 0) {
        dist->kind = CM_SIZE_RANGE;
        if (!parse_u64(text + 6, &dist->low, &end) || *end != '-' ||
            !parse_u64(end + 1, &dist->high, &end) || *end)
            return false;
    } else if (strncmp(text, "buckets:", 8) == 0) {
        dist->kind = CM_SIZE_BUCKETS;
        if (!parse_buckets(text + 8, dist))
            return false;
    } else {
        dist->kind = CM_SIZE_FIXED;
        if (!parse_u64(text, &dist->low, &end) || *end)
            return false;
        dist->high = dist->low;
    }
    return cm_size_check(dist, error, sizeof error) == 0;
}
