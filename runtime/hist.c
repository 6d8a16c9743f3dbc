/* Log-linear latency histogram (see hist.h): bucket indexing, exact statistics kept as
 * multi-word integers, percentiles, iteration and the portable encoding.
 *
 * Bucket index of a tracked value v, with shift = floor(log2(v)) - 9 (v >= 512, so >= 0):
 *     index = (shift << 9) + (v >> shift) - CM_HIST_LOWEST_TRACKED
 * (v >> shift) is v's top 10 bits, 512..1023; consecutive powers of two therefore get
 * consecutive runs of 512 indexes, and 1000 (shift 0, top bits 1000) lands on index 0.
 *
 * Statistics: sum and sum of squares are exact integers (128 and 192 bits, enough for 2^64
 * values of up to 2^64 - 1), so recording needs no floating point, merging is exact and
 * order-independent, and decoded histograms are bit-identical. The standard deviation is
 * computed as sqrt(count * sum_sq - sum^2) / count with the numerator formed exactly in 256
 * bits, which avoids the catastrophic cancellation of the floating-point textbook formula
 * (values near 1 h differing by 1 ns still give the right answer).
 *
 * Encoding, version 1. "varint" is unsigned LEB128 (7 bits per byte, least significant
 * group first, high bit set on all but the last byte) in its shortest form only:
 *     4 bytes   magic "CMHG"
 *     1 byte    version, 1
 *     varints   sub-bucket bits, lowest tracked, highest tracked (the decoder requires its
 *               own layout, so a changed layout is rejected rather than misread)
 *     varints   count, min, max, underflow, overflow (min and max are 0 when empty)
 *     varints   sum low word, sum high word, sum_sq words 0, 1, 2
 *     varint    number of non-empty buckets, then for each in increasing index order:
 *               varint gap (index minus previous index minus 1; the first gap is its index)
 *               varint count (at least 1)
 *     4 bytes   CRC-32C (Castagnoli) of every preceding byte, little-endian
 * Every histogram has exactly one encoding and the decoder accepts nothing else, so
 * decode-then-encode reproduces the input byte for byte. */
#include "hist.h"
#include "crc32c.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB_BUCKET_COUNT (1u << CM_HIST_SUB_BUCKET_BITS)
#define LOWEST           CM_HIST_LOWEST_TRACKED
#define HIGHEST          CM_HIST_HIGHEST_TRACKED
#define FORMAT_VERSION   1
#define CRC_SIZE         4

/* The index formula assumes the lowest tracked value sits in the first group (width 1). */
_Static_assert(LOWEST >= SUB_BUCKET_COUNT && LOWEST < 2ULL * SUB_BUCKET_COUNT,
               "lowest tracked value must lie in [512, 1024)");
/* 3.6e12 lies in [2^41, 2^42): shift 32, top bits 838. */
_Static_assert((HIGHEST >> 32) >= SUB_BUCKET_COUNT && (HIGHEST >> 32) < 2ULL * SUB_BUCKET_COUNT,
               "highest tracked value must lie in the group with shift 32");
_Static_assert(CM_HIST_BUCKET_COUNT ==
                   (32U << CM_HIST_SUB_BUCKET_BITS) + (HIGHEST >> 32) - LOWEST + 1,
               "CM_HIST_BUCKET_COUNT must end exactly at the highest tracked value");
/* cm_hist_equal compares with memcmp, which is only sound without padding. */
_Static_assert(sizeof(cm_hist) == (10 + CM_HIST_BUCKET_COUNT) * sizeof(uint64_t),
               "cm_hist must have no padding");

#if defined(__GNUC__) || defined(__clang__)
#define LIKELY(condition) __builtin_expect(!!(condition), 1)
#else
#define LIKELY(condition) (condition)
#endif

static const unsigned char format_magic[4] = {'C', 'M', 'H', 'G'};

/* ---- word arithmetic -------------------------------------------------------------------- */

/* v must be non-zero. */
static inline unsigned highest_bit(uint64_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    return 63U - (unsigned)__builtin_clzll(v);
#else
    unsigned bit = 0;
    for (unsigned step = 32; step > 0; step /= 2) {
        if (v >> step) {
            v >>= step;
            bit += step;
        }
    }
    return bit;
#endif
}

#if defined(__SIZEOF_INT128__)
/* __extension__ keeps -Wpedantic quiet about a type ISO C lacks. */
__extension__ typedef unsigned __int128 double_word;
#endif

static inline void multiply_words(uint64_t a, uint64_t b, uint64_t *high, uint64_t *low)
{
#if defined(__SIZEOF_INT128__)
    double_word product = (double_word)a * b;
    *high = (uint64_t)(product >> 64);
    *low = (uint64_t)product;
#else
    uint64_t a_low = a & 0xffffffffu, a_high = a >> 32;
    uint64_t b_low = b & 0xffffffffu, b_high = b >> 32;
    uint64_t low_low = a_low * b_low, high_low = a_high * b_low;
    uint64_t low_high = a_low * b_high, high_high = a_high * b_high;
    uint64_t middle = (low_low >> 32) + (high_low & 0xffffffffu) + low_high;
    *high = high_high + (high_low >> 32) + (middle >> 32);
    *low = (middle << 32) | (low_low & 0xffffffffu);
#endif
}

/* dst += src over n little-endian words, dropping the final carry (callers guarantee room). */
static void add_words(uint64_t *dst, const uint64_t *src, size_t n)
{
    uint64_t carry = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t addend = src[i];
        uint64_t total = dst[i] + addend;
        uint64_t next_carry = total < addend;
        total += carry;
        next_carry |= total < carry;
        dst[i] = total;
        carry = next_carry;
    }
}

/* 256-bit unsigned integers, only for validation and stddev: every product formed there
 * (64 x 192 and 128 x 128 bits) fits. */
typedef struct {
    uint64_t word[4];
} uint256;

static uint256 uint256_from_words(const uint64_t *words, size_t n)
{
    uint256 result = {{0, 0, 0, 0}};
    memcpy(result.word, words, n * sizeof *words);
    return result;
}

static uint256 uint256_from_u64(uint64_t v)
{
    return uint256_from_words(&v, 1);
}

static uint256 uint256_add(uint256 a, uint256 b)
{
    add_words(a.word, b.word, 4);
    return a;
}

/* Requires a >= b. */
static uint256 uint256_subtract(uint256 a, uint256 b)
{
    uint64_t borrow = 0;
    for (size_t i = 0; i < 4; i++) {
        uint64_t difference = a.word[i] - b.word[i];
        uint64_t next_borrow = a.word[i] < b.word[i];
        next_borrow |= difference < borrow;
        a.word[i] = difference - borrow;
        borrow = next_borrow;
    }
    return a;
}

/* Product modulo 2^256. */
static uint256 uint256_multiply(uint256 a, uint256 b)
{
    uint256 result = {{0, 0, 0, 0}};
    for (size_t i = 0; i < 4; i++) {
        uint64_t carry = 0;
        for (size_t j = 0; i + j < 4; j++) {
            uint64_t high, low;
            multiply_words(a.word[i], b.word[j], &high, &low);
            /* a*b + r + carry < 2^128, so the new carry cannot overflow. */
            low += result.word[i + j];
            high += low < result.word[i + j];
            low += carry;
            high += low < carry;
            result.word[i + j] = low;
            carry = high;
        }
    }
    return result;
}

static int uint256_compare(uint256 a, uint256 b)
{
    for (size_t i = 4; i-- > 0;) {
        if (a.word[i] != b.word[i]) {
            return a.word[i] < b.word[i] ? -1 : 1;
        }
    }
    return 0;
}

static long double uint256_to_long_double(uint256 a)
{
    long double result = 0;
    for (size_t i = 4; i-- > 0;) {
        result = result * 18446744073709551616.0L + (long double)a.word[i];
    }
    return result;
}

/* ---- layout ----------------------------------------------------------------------------- */

/* ns must be within [LOWEST, HIGHEST]. */
static inline size_t bucket_index(uint64_t ns)
{
    unsigned shift = highest_bit(ns) - CM_HIST_SUB_BUCKET_BITS;
    return ((size_t)shift << CM_HIST_SUB_BUCKET_BITS) + (size_t)(ns >> shift) - (size_t)LOWEST;
}

/* Inclusive value range of a bucket, clipped to the tracked range (only the first and last
 * buckets are affected). */
static void bucket_bounds(size_t index, uint64_t *lowest, uint64_t *highest)
{
    size_t position = index + (size_t)LOWEST - SUB_BUCKET_COUNT;
    unsigned shift = (unsigned)(position >> CM_HIST_SUB_BUCKET_BITS);
    uint64_t top_bits = (position & (SUB_BUCKET_COUNT - 1)) + SUB_BUCKET_COUNT;
    uint64_t low = top_bits << shift;
    uint64_t high = low + ((uint64_t)1 << shift) - 1;
    *lowest = low < LOWEST ? LOWEST : low;
    *highest = high > HIGHEST ? HIGHEST : high;
}

static uint64_t clamp(uint64_t v, uint64_t low, uint64_t high)
{
    return v < low ? low : v > high ? high : v;
}

/* The midpoint is at most half a bucket width from any value in the bucket; clamping to the
 * recorded extremes can only move it closer to the values actually recorded. */
static uint64_t bucket_representative(const cm_hist *hist, size_t index)
{
    uint64_t lowest, highest;
    bucket_bounds(index, &lowest, &highest);
    return clamp(lowest + (highest - lowest) / 2, hist->min, hist->max);
}

/* ---- lifecycle and recording ------------------------------------------------------------ */

cm_hist *cm_hist_new(void)
{
    cm_hist *hist = malloc(sizeof *hist);
    if (hist) {
        cm_hist_init(hist);
    }
    return hist;
}

void cm_hist_free(cm_hist *hist)
{
    free(hist);
}

void cm_hist_init(cm_hist *hist)
{
    memset(hist, 0, sizeof *hist);
    hist->min = UINT64_MAX;
}

void cm_hist_reset(cm_hist *hist)
{
    cm_hist_init(hist);
}

void cm_hist_record(cm_hist *hist, uint64_t ns)
{
    hist->count++;
    if (ns < hist->min) {
        hist->min = ns;
    }
    if (ns > hist->max) {
        hist->max = ns;
    }

    hist->sum[0] += ns;
    hist->sum[1] += hist->sum[0] < ns;

    uint64_t square_high, square_low;
    multiply_words(ns, ns, &square_high, &square_low);
    hist->sum_sq[0] += square_low;
    /* A square's high word is at most 2^64 - 2, so adding the carry cannot wrap. */
    square_high += hist->sum_sq[0] < square_low;
    hist->sum_sq[1] += square_high;
    hist->sum_sq[2] += hist->sum_sq[1] < square_high;

    /* One unsigned comparison covers both ends of the range. */
    if (LIKELY(ns - LOWEST <= HIGHEST - LOWEST)) {
        hist->buckets[bucket_index(ns)]++;
    } else if (ns < LOWEST) {
        hist->underflow++;
    } else {
        hist->overflow++;
    }
}

void cm_hist_record_n(cm_hist *hist, uint64_t ns, uint64_t n)
{
    if (n == 0) {
        return; /* must not disturb min and max */
    }
    hist->count += n;
    if (ns < hist->min) {
        hist->min = ns;
    }
    if (ns > hist->max) {
        hist->max = ns;
    }

    uint64_t product[2];
    multiply_words(ns, n, &product[1], &product[0]);
    add_words(hist->sum, product, 2);

    /* (ns^2) * n as 192 bits: square = high:low, then each word times n. */
    uint64_t square_high, square_low, scaled[3], low_product_high, high_product_low;
    multiply_words(ns, ns, &square_high, &square_low);
    multiply_words(square_low, n, &low_product_high, &scaled[0]);
    multiply_words(square_high, n, &scaled[2], &high_product_low);
    scaled[1] = low_product_high + high_product_low;
    scaled[2] += scaled[1] < high_product_low;
    add_words(hist->sum_sq, scaled, 3);

    if (ns - LOWEST <= HIGHEST - LOWEST) {
        hist->buckets[bucket_index(ns)] += n;
    } else if (ns < LOWEST) {
        hist->underflow += n;
    } else {
        hist->overflow += n;
    }
}

int cm_hist_merge(cm_hist *dst, const cm_hist *src)
{
    if (src->count > UINT64_MAX - dst->count) {
        return -EOVERFLOW;
    }
    /* Every part is bounded by the total count, and the sums by count times the largest
     * value, so nothing below can overflow once the count fits. */
    dst->count += src->count;
    dst->min = src->min < dst->min ? src->min : dst->min;
    dst->max = src->max > dst->max ? src->max : dst->max;
    add_words(dst->sum, src->sum, 2);
    add_words(dst->sum_sq, src->sum_sq, 3);
    dst->underflow += src->underflow;
    dst->overflow += src->overflow;
    for (size_t i = 0; i < CM_HIST_BUCKET_COUNT; i++) {
        dst->buckets[i] += src->buckets[i];
    }
    return 0;
}

bool cm_hist_equal(const cm_hist *a, const cm_hist *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* ---- queries ---------------------------------------------------------------------------- */

uint64_t cm_hist_count(const cm_hist *hist)
{
    return hist->count;
}

uint64_t cm_hist_min(const cm_hist *hist)
{
    return hist->count ? hist->min : 0;
}

uint64_t cm_hist_max(const cm_hist *hist)
{
    return hist->max;
}

uint64_t cm_hist_underflow(const cm_hist *hist)
{
    return hist->underflow;
}

uint64_t cm_hist_overflow(const cm_hist *hist)
{
    return hist->overflow;
}

double cm_hist_mean(const cm_hist *hist)
{
    if (hist->count == 0) {
        return 0;
    }
    return (double)(uint256_to_long_double(uint256_from_words(hist->sum, 2)) /
                    (long double)hist->count);
}

/* count * sum_sq - sum^2, which is count^2 times the population variance. */
static uint256 scaled_variance(uint64_t count, const uint64_t sum[2], const uint64_t sum_sq[3])
{
    uint256 total = uint256_from_words(sum, 2);
    return uint256_subtract(
        uint256_multiply(uint256_from_u64(count), uint256_from_words(sum_sq, 3)),
        uint256_multiply(total, total));
}

double cm_hist_stddev(const cm_hist *hist)
{
    if (hist->count == 0) {
        return 0;
    }
    long double numerator =
        uint256_to_long_double(scaled_variance(hist->count, hist->sum, hist->sum_sq));
    return (double)(sqrtl(numerator) / (long double)hist->count);
}

/* Nearest rank ceil(p/100 * count). Percentiles are usually written in decimal (99.9), whose
 * binary approximation can sit a hair above an exact rank and make ceil jump to the next one;
 * the relative slack of 1e-12 absorbs that without merging genuinely distinct ranks for any
 * count below 10^12. */
static uint64_t nearest_rank(double p, uint64_t count)
{
    long double exact = (long double)p / 100.0L * (long double)count;
    long double rank = ceill(exact - exact * 1e-12L);
    if (rank < 1) {
        return 1;
    }
    if (rank >= (long double)count) {
        return count;
    }
    return (uint64_t)rank;
}

uint64_t cm_hist_percentile(const cm_hist *hist, double p)
{
    if (hist->count == 0) {
        return 0;
    }
    if (!(p > 0)) { /* also catches NaN */
        return hist->min;
    }
    if (p >= 100) {
        return hist->max;
    }
    uint64_t rank = nearest_rank(p, hist->count);
    /* The extreme ranks are known exactly, so never approximate them. */
    if (rank <= 1) {
        return hist->min;
    }
    if (rank >= hist->count) {
        return hist->max;
    }
    if (rank <= hist->underflow) {
        return hist->min;
    }
    uint64_t seen = hist->underflow;
    for (size_t i = 0; i < CM_HIST_BUCKET_COUNT; i++) {
        seen += hist->buckets[i];
        if (seen >= rank) {
            return bucket_representative(hist, i);
        }
    }
    return hist->max;
}

void cm_hist_iter_init(cm_hist_iter *iter, const cm_hist *hist)
{
    iter->hist = hist;
    iter->position = 0;
    iter->cumulative = 0;
}

bool cm_hist_iter_next(cm_hist_iter *iter, cm_hist_bucket *bucket)
{
    const cm_hist *hist = iter->hist;
    while (iter->position <= CM_HIST_BUCKET_COUNT + 1) {
        size_t position = iter->position++;
        if (position == 0) {
            if (hist->underflow == 0) {
                continue;
            }
            bucket->lowest = hist->min;
            bucket->highest = hist->max < LOWEST ? hist->max : LOWEST - 1;
            bucket->representative = hist->min;
            bucket->count = hist->underflow;
        } else if (position == CM_HIST_BUCKET_COUNT + 1) {
            if (hist->overflow == 0) {
                continue;
            }
            bucket->lowest = hist->min > HIGHEST ? hist->min : HIGHEST + 1;
            bucket->highest = hist->max;
            bucket->representative = hist->max;
            bucket->count = hist->overflow;
        } else {
            size_t index = position - 1;
            if (hist->buckets[index] == 0) {
                continue;
            }
            bucket_bounds(index, &bucket->lowest, &bucket->highest);
            bucket->representative = bucket_representative(hist, index);
            bucket->count = hist->buckets[index];
        }
        iter->cumulative += bucket->count;
        bucket->cumulative = iter->cumulative;
        return true;
    }
    return false;
}

/* ---- encoding --------------------------------------------------------------------------- */

enum {
    FIELD_SUB_BUCKET_BITS,
    FIELD_LOWEST,
    FIELD_HIGHEST,
    FIELD_COUNT,
    FIELD_MIN,
    FIELD_MAX,
    FIELD_UNDERFLOW,
    FIELD_OVERFLOW,
    FIELD_SUM_0,
    FIELD_SUM_1,
    FIELD_SUM_SQ_0,
    FIELD_SUM_SQ_1,
    FIELD_SUM_SQ_2,
    FIELD_BUCKET_ENTRIES,
    FIELD_TOTAL
};

/* The encoding's checksum: CRC-32C through crc32c.c (the SSE4.2 instruction, else
 * slicing-by-8), not bit by bit: the coordinator checks and writes one per merge of two
 * seconds' encodings, tens of thousands per phase on many agents. */
static uint32_t crc32c(const unsigned char *data, size_t length)
{
    return cm_crc32c(0, data, length);
}

static size_t varint_size(uint64_t v)
{
    size_t size = 1;
    while (v >= 0x80) {
        v >>= 7;
        size++;
    }
    return size;
}

static unsigned char *put_varint(unsigned char *out, uint64_t v)
{
    while (v >= 0x80) {
        *out++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *out++ = (unsigned char)v;
    return out;
}

static void header_fields(const cm_hist *hist, uint64_t fields[FIELD_TOTAL])
{
    size_t entries = 0;
    for (size_t i = 0; i < CM_HIST_BUCKET_COUNT; i++) {
        entries += hist->buckets[i] != 0;
    }
    fields[FIELD_SUB_BUCKET_BITS] = CM_HIST_SUB_BUCKET_BITS;
    fields[FIELD_LOWEST] = LOWEST;
    fields[FIELD_HIGHEST] = HIGHEST;
    fields[FIELD_COUNT] = hist->count;
    fields[FIELD_MIN] = cm_hist_min(hist);
    fields[FIELD_MAX] = hist->max;
    fields[FIELD_UNDERFLOW] = hist->underflow;
    fields[FIELD_OVERFLOW] = hist->overflow;
    fields[FIELD_SUM_0] = hist->sum[0];
    fields[FIELD_SUM_1] = hist->sum[1];
    fields[FIELD_SUM_SQ_0] = hist->sum_sq[0];
    fields[FIELD_SUM_SQ_1] = hist->sum_sq[1];
    fields[FIELD_SUM_SQ_2] = hist->sum_sq[2];
    fields[FIELD_BUCKET_ENTRIES] = entries;
}

size_t cm_hist_encoded_size(const cm_hist *hist)
{
    uint64_t fields[FIELD_TOTAL];
    header_fields(hist, fields);
    size_t size = sizeof format_magic + 1 + CRC_SIZE;
    for (size_t i = 0; i < FIELD_TOTAL; i++) {
        size += varint_size(fields[i]);
    }
    size_t next_index = 0;
    for (size_t i = 0; i < CM_HIST_BUCKET_COUNT; i++) {
        if (hist->buckets[i]) {
            size += varint_size(i - next_index) + varint_size(hist->buckets[i]);
            next_index = i + 1;
        }
    }
    return size;
}

size_t cm_hist_encode(const cm_hist *hist, unsigned char *buf, size_t cap)
{
    size_t size = cm_hist_encoded_size(hist);
    if (cap < size) {
        return 0;
    }
    uint64_t fields[FIELD_TOTAL];
    header_fields(hist, fields);

    unsigned char *out = buf;
    memcpy(out, format_magic, sizeof format_magic);
    out += sizeof format_magic;
    *out++ = FORMAT_VERSION;
    for (size_t i = 0; i < FIELD_TOTAL; i++) {
        out = put_varint(out, fields[i]);
    }
    size_t next_index = 0;
    for (size_t i = 0; i < CM_HIST_BUCKET_COUNT; i++) {
        if (hist->buckets[i]) {
            out = put_varint(out, i - next_index);
            out = put_varint(out, hist->buckets[i]);
            next_index = i + 1;
        }
    }
    uint32_t crc = crc32c(buf, (size_t)(out - buf));
    for (int i = 0; i < CRC_SIZE; i++) {
        *out++ = (unsigned char)(crc >> (8 * i));
    }
    return size;
}

typedef struct {
    const unsigned char *next;
    const unsigned char *end;
} reader;

/* Accepts only the shortest encoding of a value that fits in 64 bits, so that every value
 * has a single byte representation. */
static bool read_varint(reader *in, uint64_t *value)
{
    uint64_t result = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (in->next == in->end) {
            return false;
        }
        unsigned char byte = *in->next++;
        if (shift == 63 && byte > 1) {
            return false; /* the tenth byte may only carry bit 63 */
        }
        result |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            if (byte == 0 && shift != 0) {
                return false; /* a redundant zero group */
            }
            *value = result;
            return true;
        }
    }
    return false;
}

static bool in_range(uint64_t v, uint64_t low, uint64_t high)
{
    return v >= low && v <= high;
}

/* Could some multiset of values produce these statistics? Checks that min and max sit in the
 * lowest and highest occupied regions, and that the sums lie between what count values within
 * [min, max] (with min and max each occurring) allow. Besides rejecting corruption, this keeps
 * stddev's subtraction from going negative. */
static bool statistics_plausible(const cm_hist *hist, size_t first_bucket, size_t last_bucket,
                                 bool any_bucket)
{
    uint64_t lowest, highest;
    if (hist->underflow) {
        if (hist->min >= LOWEST) {
            return false;
        }
    } else if (any_bucket) {
        bucket_bounds(first_bucket, &lowest, &highest);
        if (!in_range(hist->min, lowest, highest)) {
            return false;
        }
    } else if (hist->min <= HIGHEST) {
        return false;
    }
    if (hist->overflow) {
        if (hist->max <= HIGHEST) {
            return false;
        }
    } else if (any_bucket) {
        bucket_bounds(last_bucket, &lowest, &highest);
        if (!in_range(hist->max, lowest, highest)) {
            return false;
        }
    } else if (hist->max >= LOWEST) {
        return false;
    }
    if (hist->min > hist->max) {
        return false;
    }

    uint256 sum = uint256_from_words(hist->sum, 2);
    uint256 sum_sq = uint256_from_words(hist->sum_sq, 3);
    uint256 min = uint256_from_u64(hist->min), max = uint256_from_u64(hist->max);
    uint256 min_sq = uint256_multiply(min, min), max_sq = uint256_multiply(max, max);
    if (hist->count == 1) {
        return hist->min == hist->max && uint256_compare(sum, min) == 0 &&
               uint256_compare(sum_sq, min_sq) == 0;
    }
    uint256 others = uint256_from_u64(hist->count - 2);
    uint256 both_sum = uint256_add(min, max), both_sq = uint256_add(min_sq, max_sq);
    uint256 sum_low = uint256_add(both_sum, uint256_multiply(others, min));
    uint256 sum_high = uint256_add(both_sum, uint256_multiply(others, max));
    uint256 sq_low = uint256_add(both_sq, uint256_multiply(others, min_sq));
    uint256 sq_high = uint256_add(both_sq, uint256_multiply(others, max_sq));
    if (uint256_compare(sum, sum_low) < 0 || uint256_compare(sum, sum_high) > 0 ||
        uint256_compare(sum_sq, sq_low) < 0 || uint256_compare(sum_sq, sq_high) > 0) {
        return false;
    }
    /* Cauchy-Schwarz: count * sum_sq >= sum^2 for real data. */
    uint256 count_times_sq = uint256_multiply(uint256_from_u64(hist->count), sum_sq);
    return uint256_compare(count_times_sq, uint256_multiply(sum, sum)) >= 0;
}

/* An encoding's frame: long enough, the magic and version, and the CRC-32C of the body
 * (everything before the last CRC_SIZE bytes) matching. 0 with the body's length, or
 * -EINVAL. */
static int check_framing(const unsigned char *buf, size_t len, size_t *body_length)
{
    size_t minimum = sizeof format_magic + 1 + FIELD_TOTAL + CRC_SIZE;
    if (buf == NULL || len < minimum || memcmp(buf, format_magic, sizeof format_magic) != 0 ||
        buf[sizeof format_magic] != FORMAT_VERSION)
        return -EINVAL;
    *body_length = len - CRC_SIZE;
    uint32_t stored_crc = 0;
    for (int i = 0; i < CRC_SIZE; i++)
        stored_crc |= (uint32_t)buf[*body_length + (size_t)i] << (8 * i);
    return crc32c(buf, *body_length) == stored_crc ? 0 : -EINVAL;
}

static int decode_into(cm_hist *out, const unsigned char *buf, size_t len)
{
    size_t body_length;
    if (check_framing(buf, len, &body_length) < 0)
        return -EINVAL;

    reader in = {buf + sizeof format_magic + 1, buf + body_length};
    uint64_t fields[FIELD_TOTAL];
    for (size_t i = 0; i < FIELD_TOTAL; i++) {
        if (!read_varint(&in, &fields[i])) {
            return -EINVAL;
        }
    }
    if (fields[FIELD_SUB_BUCKET_BITS] != CM_HIST_SUB_BUCKET_BITS ||
        fields[FIELD_LOWEST] != LOWEST || fields[FIELD_HIGHEST] != HIGHEST ||
        fields[FIELD_BUCKET_ENTRIES] > CM_HIST_BUCKET_COUNT) {
        return -EINVAL;
    }

    uint64_t total = fields[FIELD_UNDERFLOW];
    if (fields[FIELD_OVERFLOW] > UINT64_MAX - total) {
        return -EINVAL;
    }
    total += fields[FIELD_OVERFLOW];
    size_t next_index = 0, first_bucket = 0, last_bucket = 0;
    for (uint64_t entry = 0; entry < fields[FIELD_BUCKET_ENTRIES]; entry++) {
        uint64_t gap, count;
        if (!read_varint(&in, &gap) || !read_varint(&in, &count) || count == 0 ||
            gap >= CM_HIST_BUCKET_COUNT - next_index || count > UINT64_MAX - total) {
            return -EINVAL;
        }
        size_t index = next_index + (size_t)gap;
        if (entry == 0) {
            first_bucket = index;
        }
        last_bucket = index;
        out->buckets[index] = count;
        total += count;
        next_index = index + 1;
    }
    if (in.next != in.end || total != fields[FIELD_COUNT]) {
        return -EINVAL;
    }

    out->count = fields[FIELD_COUNT];
    out->underflow = fields[FIELD_UNDERFLOW];
    out->overflow = fields[FIELD_OVERFLOW];
    out->sum[0] = fields[FIELD_SUM_0];
    out->sum[1] = fields[FIELD_SUM_1];
    out->sum_sq[0] = fields[FIELD_SUM_SQ_0];
    out->sum_sq[1] = fields[FIELD_SUM_SQ_1];
    out->sum_sq[2] = fields[FIELD_SUM_SQ_2];
    if (out->count == 0) {
        /* An empty histogram has one encoding: everything zero. */
        bool all_zero = fields[FIELD_MIN] == 0 && fields[FIELD_MAX] == 0 && out->sum[0] == 0 &&
                        out->sum[1] == 0 && out->sum_sq[0] == 0 && out->sum_sq[1] == 0 &&
                        out->sum_sq[2] == 0;
        return all_zero ? 0 : -EINVAL;
    }
    out->min = fields[FIELD_MIN];
    out->max = fields[FIELD_MAX];
    bool any_bucket = fields[FIELD_BUCKET_ENTRIES] != 0;
    return statistics_plausible(out, first_bucket, last_bucket, any_bucket) ? 0 : -EINVAL;
}

int cm_hist_decode(cm_hist *out, const unsigned char *buf, size_t len)
{
    cm_hist_init(out);
    int result = decode_into(out, buf, len);
    if (result != 0) {
        cm_hist_init(out);
    }
    return result;
}

/* ---- merging encodings without expanding them ------------------------------------------- */

/* An encoding opened for merging: its header fields, and a reader at its first bucket. */
struct sparse_encoding {
    uint64_t fields[FIELD_TOTAL];
    reader buckets;
    uint64_t entries_left, next_index, total;
};

/* Checks the framing (magic, version, CRC, layout) and reads the header. */
static int sparse_open(struct sparse_encoding *s, const unsigned char *buf, size_t len)
{
    size_t body_length;
    if (check_framing(buf, len, &body_length) < 0)
        return -EINVAL;
    s->buckets = (reader){buf + sizeof format_magic + 1, buf + body_length};
    for (size_t i = 0; i < FIELD_TOTAL; i++) {
        if (!read_varint(&s->buckets, &s->fields[i])) {
            return -EINVAL;
        }
    }
    if (s->fields[FIELD_SUB_BUCKET_BITS] != CM_HIST_SUB_BUCKET_BITS ||
        s->fields[FIELD_LOWEST] != LOWEST || s->fields[FIELD_HIGHEST] != HIGHEST ||
        s->fields[FIELD_BUCKET_ENTRIES] > CM_HIST_BUCKET_COUNT ||
        s->fields[FIELD_OVERFLOW] > UINT64_MAX - s->fields[FIELD_UNDERFLOW]) {
        return -EINVAL;
    }
    s->entries_left = s->fields[FIELD_BUCKET_ENTRIES];
    s->next_index = 0;
    s->total = s->fields[FIELD_UNDERFLOW] + s->fields[FIELD_OVERFLOW];
    return 0;
}

/* The next bucket of an open encoding into *index and *count: 1, 0 at its end (the rest of
 * the encoding consumed and the counts adding up), or -EINVAL. */
static int sparse_next(struct sparse_encoding *s, size_t *index, uint64_t *count)
{
    if (s->entries_left == 0) {
        bool whole = s->buckets.next == s->buckets.end && s->total == s->fields[FIELD_COUNT];
        return whole ? 0 : -EINVAL;
    }
    uint64_t gap;
    if (!read_varint(&s->buckets, &gap) || !read_varint(&s->buckets, count) || *count == 0 ||
        gap >= CM_HIST_BUCKET_COUNT - s->next_index || *count > UINT64_MAX - s->total) {
        return -EINVAL;
    }
    *index = (size_t)(s->next_index + gap);
    s->next_index = *index + 1;
    s->total += *count;
    s->entries_left--;
    return 1;
}

/* The merged header: counts summed, min and max over the non-empty sides, sums added. */
static int merged_fields(const struct sparse_encoding *a, const struct sparse_encoding *b,
                         uint64_t fields[FIELD_TOTAL])
{
    const uint64_t *fa = a->fields, *fb = b->fields;
    if (fb[FIELD_COUNT] > UINT64_MAX - fa[FIELD_COUNT]) {
        return -EOVERFLOW;
    }
    memcpy(fields, fa, sizeof a->fields);
    fields[FIELD_COUNT] = fa[FIELD_COUNT] + fb[FIELD_COUNT];
    if (fa[FIELD_COUNT] == 0 || (fb[FIELD_COUNT] && fb[FIELD_MIN] < fa[FIELD_MIN])) {
        fields[FIELD_MIN] = fb[FIELD_MIN];
    }
    if (fb[FIELD_MAX] > fa[FIELD_MAX]) {
        fields[FIELD_MAX] = fb[FIELD_MAX];
    }
    fields[FIELD_UNDERFLOW] = fa[FIELD_UNDERFLOW] + fb[FIELD_UNDERFLOW];
    fields[FIELD_OVERFLOW] = fa[FIELD_OVERFLOW] + fb[FIELD_OVERFLOW];
    uint64_t sum[2] = {fa[FIELD_SUM_0], fa[FIELD_SUM_1]};
    uint64_t add_sum[2] = {fb[FIELD_SUM_0], fb[FIELD_SUM_1]};
    add_words(sum, add_sum, 2);
    uint64_t sq[3] = {fa[FIELD_SUM_SQ_0], fa[FIELD_SUM_SQ_1], fa[FIELD_SUM_SQ_2]};
    uint64_t add_sq[3] = {fb[FIELD_SUM_SQ_0], fb[FIELD_SUM_SQ_1], fb[FIELD_SUM_SQ_2]};
    add_words(sq, add_sq, 3);
    fields[FIELD_SUM_0] = sum[0];
    fields[FIELD_SUM_1] = sum[1];
    fields[FIELD_SUM_SQ_0] = sq[0];
    fields[FIELD_SUM_SQ_1] = sq[1];
    fields[FIELD_SUM_SQ_2] = sq[2];
    return 0;
}

/* Both bucket lists in increasing index order, a bucket in both summed, written as gap and
 * count pairs at *out; the entries written go to *entries. 0 or -EINVAL. */
static int merge_bucket_lists(struct sparse_encoding *a, struct sparse_encoding *b,
                              unsigned char **out, uint64_t *entries)
{
    size_t ia = 0, ib = 0, next = 0;
    uint64_t ca = 0, cb = 0;
    int ra = sparse_next(a, &ia, &ca), rb = sparse_next(b, &ib, &cb);
    *entries = 0;
    while (ra > 0 || rb > 0) {
        size_t index;
        uint64_t count;
        if (rb <= 0 || (ra > 0 && ia < ib)) {
            index = ia, count = ca;
            ra = sparse_next(a, &ia, &ca);
        } else if (ra <= 0 || ib < ia) {
            index = ib, count = cb;
            rb = sparse_next(b, &ib, &cb);
        } else {
            index = ia, count = ca + cb; /* no overflow: both are parts of a summed count */
            ra = sparse_next(a, &ia, &ca);
            rb = sparse_next(b, &ib, &cb);
        }
        *out = put_varint(put_varint(*out, index - next), count);
        next = index + 1;
        (*entries)++;
    }
    return ra < 0 || rb < 0 ? -EINVAL : 0;
}

/* An empty histogram's encoding (what cm_hist_encode writes for one) into buf; its length. */
static size_t empty_encoding(unsigned char *buf)
{
    unsigned char *at = buf;
    memcpy(at, format_magic, sizeof format_magic);
    at += sizeof format_magic;
    *at++ = FORMAT_VERSION;
    for (size_t i = 0; i < FIELD_TOTAL; i++) {
        uint64_t value = i == FIELD_SUB_BUCKET_BITS ? CM_HIST_SUB_BUCKET_BITS
                         : i == FIELD_LOWEST        ? LOWEST
                         : i == FIELD_HIGHEST       ? HIGHEST
                                                    : 0;
        at = put_varint(at, value);
    }
    uint32_t crc = crc32c(buf, (size_t)(at - buf));
    for (int i = 0; i < CRC_SIZE; i++) {
        *at++ = (unsigned char)(crc >> (8 * i));
    }
    return (size_t)(at - buf);
}

int cm_hist_merge_encoded(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen,
                          unsigned char **out, size_t *out_len)
{
    struct sparse_encoding sa, sb;
    unsigned char empty[sizeof format_magic + 1 + (size_t)10 * FIELD_TOTAL + CRC_SIZE] = {0};
    if (a == NULL || alen == 0) {
        alen = empty_encoding(empty);
        a = empty;
    }
    int rc = sparse_open(&sa, a, alen);
    if (rc == 0) {
        rc = sparse_open(&sb, b, blen);
    }
    uint64_t fields[FIELD_TOTAL];
    if (rc == 0) {
        rc = merged_fields(&sa, &sb, fields);
    }
    if (rc != 0) {
        return rc;
    }
    uint64_t entries = sa.fields[FIELD_BUCKET_ENTRIES] + sb.fields[FIELD_BUCKET_ENTRIES];
    size_t cap =
        sizeof format_magic + 1 + (size_t)10 * FIELD_TOTAL + (size_t)entries * 13 + CRC_SIZE;
    unsigned char *buckets = malloc((size_t)entries * 13 + 1), *buf = malloc(cap);
    unsigned char *end = buckets;
    if (!buckets || !buf) {
        free(buckets);
        free(buf);
        return -ENOMEM;
    }
    rc = merge_bucket_lists(&sa, &sb, &end, &fields[FIELD_BUCKET_ENTRIES]);
    if (rc != 0) {
        free(buckets);
        free(buf);
        return rc;
    }
    unsigned char *at = buf;
    memcpy(at, format_magic, sizeof format_magic);
    at += sizeof format_magic;
    *at++ = FORMAT_VERSION;
    for (size_t i = 0; i < FIELD_TOTAL; i++) {
        at = put_varint(at, fields[i]);
    }
    memcpy(at, buckets, (size_t)(end - buckets));
    at += end - buckets;
    free(buckets);
    uint32_t crc = crc32c(buf, (size_t)(at - buf));
    for (int i = 0; i < CRC_SIZE; i++) {
        *at++ = (unsigned char)(crc >> (8 * i));
    }
    *out = buf;
    *out_len = (size_t)(at - buf);
    return 0;
}
