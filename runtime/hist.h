/* Log-linear latency histogram: O(1) allocation-free recording of nanosecond latencies with
 * at most 0.1% relative error from 1 us to 1 h, exact count/min/max/mean/stddev, exact merging,
 * percentiles, bucket iteration and a portable byte encoding for merging across processes. */
#ifndef CEPHMARK_RUNTIME_HIST_H
#define CEPHMARK_RUNTIME_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values from CM_HIST_LOWEST_TRACKED to CM_HIST_HIGHEST_TRACKED (inclusive) go into buckets;
 * anything smaller is counted as underflow and anything larger as overflow. Out-of-range
 * values still count toward count, min, max, mean and stddev.
 *
 * Bucket layout: every power of two [2^k, 2^(k+1)) is split into 2^CM_HIST_SUB_BUCKET_BITS
 * equal-width buckets, so bucket width is 2^(k-9) and its lowest value is at least 512 widths.
 * Reporting the midpoint of a bucket is therefore off by at most half a width, i.e. less than
 * 1/1024 (0.0977%) of any value in it. 512 is the smallest power of two meeting 0.1%; 256
 * would allow 0.195%. Between 1000 and 1023 buckets are one nanosecond wide (exact). */
#define CM_HIST_LOWEST_TRACKED  1000ULL          /* 1 us */
#define CM_HIST_HIGHEST_TRACKED 3600000000000ULL /* 1 h */
#define CM_HIST_SUB_BUCKET_BITS 9
/* Buckets needed from 1000 (first group, width 1) to 3.6e12 (group 2^41, width 2^32). */
#define CM_HIST_BUCKET_COUNT 16223
/* Upper bound of cm_hist_encoded_size() for any histogram, for callers wanting a static
 * buffer: at most 120 bytes of header and checksum, plus per non-empty bucket a gap of at most
 * 2 bytes and a count of at most 10 (about 190 KiB; real encodings are a few to tens of KiB). */
#define CM_HIST_ENCODED_MAX (128 + 12 * (size_t)CM_HIST_BUCKET_COUNT)

/* The struct is public only so callers can embed one (e.g. one per worker thread) without
 * allocating; treat every field as private and go through the functions below. About
 * 127 KiB, almost all of it the bucket counts. An embedded histogram needs cm_hist_init(). */
typedef struct cm_hist {
    uint64_t count;     /* every recorded value, including underflow and overflow */
    uint64_t min;       /* UINT64_MAX while empty so recording needs no emptiness test */
    uint64_t max;       /* 0 while empty */
    uint64_t sum[2];    /* exact 128-bit sum, least significant word first */
    uint64_t sum_sq[3]; /* exact 192-bit sum of squares, least significant word first */
    uint64_t underflow; /* values below CM_HIST_LOWEST_TRACKED */
    uint64_t overflow;  /* values above CM_HIST_HIGHEST_TRACKED */
    uint64_t buckets[CM_HIST_BUCKET_COUNT];
} cm_hist;

/* One non-empty bucket as seen by the iterator. The underflow and overflow counters appear
 * as the first and last pseudo-buckets, bounded by the recorded min and max. */
typedef struct cm_hist_bucket {
    uint64_t lowest;         /* smallest value the bucket can hold */
    uint64_t highest;        /* largest value the bucket can hold (inclusive) */
    uint64_t representative; /* what cm_hist_percentile reports for ranks in this bucket,
                              * except the very first and last ranks (exact min and max) */
    uint64_t count;          /* values in this bucket */
    uint64_t cumulative;     /* values in this bucket and all lower ones */
} cm_hist_bucket;

typedef struct cm_hist_iter {
    const cm_hist *hist;
    size_t position; /* 0 underflow, 1..CM_HIST_BUCKET_COUNT buckets, then overflow */
    uint64_t cumulative;
} cm_hist_iter;

/* Heap allocation for callers that do not embed; NULL when out of memory. */
cm_hist *cm_hist_new(void);
void cm_hist_free(cm_hist *hist);

/* Makes an embedded or reused histogram empty; cm_hist_reset is the same operation. */
void cm_hist_init(cm_hist *hist);
void cm_hist_reset(cm_hist *hist);

/* Hot path: constant time, no allocation, no floating point. */
void cm_hist_record(cm_hist *hist, uint64_t ns);
/* Records the same value n times, exactly as n calls to cm_hist_record would. The caller must
 * keep the total count below 2^64 (584 years at a billion records per second). */
void cm_hist_record_n(cm_hist *hist, uint64_t ns, uint64_t n);

/* dst += src, exactly; dst may equal src. Returns 0, or -EOVERFLOW (leaving dst untouched)
 * when the combined count would not fit in 64 bits. */
int cm_hist_merge(cm_hist *dst, const cm_hist *src);

/* True when both hold exactly the same recorded information. */
bool cm_hist_equal(const cm_hist *a, const cm_hist *b);

uint64_t cm_hist_count(const cm_hist *hist);
uint64_t cm_hist_min(const cm_hist *hist); /* 0 when empty */
uint64_t cm_hist_max(const cm_hist *hist); /* 0 when empty */
uint64_t cm_hist_underflow(const cm_hist *hist);
uint64_t cm_hist_overflow(const cm_hist *hist);

/* Computed from the exact integer sums, so rounding happens only in the final conversion.
 * The standard deviation is the population one (divides by count): a benchmark observes every
 * operation rather than a sample. Both return 0 when empty. */
double cm_hist_mean(const cm_hist *hist);
double cm_hist_stddev(const cm_hist *hist);

/* Nearest-rank percentile, p in [0, 100] (clamped; NaN counts as 0): the value of rank
 * ceil(p/100 * count) in sorted order. The lowest and highest ranks return the exact min and
 * max; a rank inside a bucket returns the bucket midpoint clamped to [min, max], within 0.1% of
 * the true value; a rank in underflow returns min and one in overflow returns max. Returns 0
 * when empty. */
uint64_t cm_hist_percentile(const cm_hist *hist, double p);

/* Visits non-empty buckets in increasing value order:
 *     cm_hist_iter it; cm_hist_bucket b;
 *     for (cm_hist_iter_init(&it, h); cm_hist_iter_next(&it, &b);) ...
 * The histogram must not change during iteration. */
void cm_hist_iter_init(cm_hist_iter *iter, const cm_hist *hist);
bool cm_hist_iter_next(cm_hist_iter *iter, cm_hist_bucket *bucket);

/* Portable encoding (little-endian varints, sparse buckets, CRC-32C trailer; see hist.c).
 * cm_hist_encode writes cm_hist_encoded_size() bytes and returns that size, or returns 0 and
 * writes nothing when cap is too small. */
size_t cm_hist_encoded_size(const cm_hist *hist);
size_t cm_hist_encode(const cm_hist *hist, unsigned char *buf, size_t cap);
/* Returns 0, or -EINVAL for anything that is not exactly an encoding produced by
 * cm_hist_encode (truncated, corrupt, different layout, internally inconsistent); then *out
 * is left empty. Never reads outside buf[0, len) and never allocates. */
int cm_hist_decode(cm_hist *out, const unsigned char *buf, size_t len);

/* The encoding of the merge of two encodings, exactly what cm_hist_encode would give for
 * the merged histogram, computed without expanding either: the buckets are merged as the
 * two sparse lists they are, so the cost follows the encodings' lengths (a second's
 * histogram: a few hundred bytes), not the 127 KiB of a histogram. For merging many small
 * histograms, such as every agent's histogram of one second. `a` may be NULL (alen 0) for
 * an empty start. On success *out is malloc'd (the caller frees it) and *out_len set.
 * Returns 0, -EINVAL for an input that is not framed as an encoding (magic, version, CRC,
 * layout, bucket list, counts), -EOVERFLOW when the counts overflow, or -ENOMEM. The
 * statistics' plausibility is checked when the result is decoded, not here. */
int cm_hist_merge_encoded(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen,
                          unsigned char **out, size_t *out_len);

#endif
