/* Payload generation and verification; see payload.h for the header layout and the contract. */
#include "payload.h"
#include "crc32c.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slack beyond max_block: the number of distinct body windows, so ops rarely share a body. */
#define PATTERN_SLACK ((size_t)1 << 20)
/* Full ops of small blocks start their body within the first 16 x max_block bytes of the
 * pattern (at least FULL_SPAN_MIN), not anywhere in it: a run of 4 KiB writes then reads
 * 68 KiB of pattern, which stays in the CPU cache, instead of a cold 4 KiB window of 1 MiB
 * per op (measured: ~3 us of a 4K rados write's client CPU went to that crc32c pass). */
#define FULL_SPAN_MIN       ((size_t)64 * 1024)
#define FULL_SPAN_PER_BLOCK 16
/* Full ops' windows start at multiples of FULL_START_ALIGN, so a stage can keep the crc32c
 * of every small body it may send in a table (one entry per start) built once, and send a
 * 4 KiB write without reading its body at all; the library's copy is then the one pass over
 * it, as in a client that writes a fixed buffer. Built when it costs at most
 * BODY_TABLE_BYTES of checksumming: 4096 starts x 4 KiB bodies = 16 MiB, about 1 ms. */
#define FULL_START_ALIGN ((size_t)16)
#define BODY_TABLE_BYTES ((size_t)32 << 20)
/* Bodies are copied and checksummed in pieces that stay in L1/L2 between the two passes. */
#define FILL_CHUNK ((size_t)64 * 1024)
/* The pattern's CRC prefix table has one entry per CRC_GRAIN bytes; bodies of at least
 * CRC_BY_TABLE bytes get their crc32c from it (a few combines and at most 2 grains read)
 * instead of a pass over the body. */
#define CRC_GRAIN    ((size_t)4096)
#define CRC_BY_TABLE ((size_t)64 * 1024)

#define OFF_MAGIC      0
#define OFF_VERSION    4
#define OFF_HEADER_LEN 6
#define OFF_RUN_ID     8
#define OFF_SEQUENCE   16
#define OFF_OFFSET     24
#define OFF_BODY_LEN   32
#define OFF_BODY_CRC   40
#define OFF_HEADER_CRC 44
#define OFF_NAME_CRC   48
#define OFF_NAME_LEN   52
#define OFF_NAME       56

_Static_assert(OFF_NAME + CM_PAYLOAD_NAME_MAX == CM_PAYLOAD_HEADER_SIZE, "header layout");

/* Domain separation, so a full op and a short op at the same place pick unrelated windows. */
#define WINDOW_TAG_FULL  0x66756c6c6f70ull /* "fullop" */
#define WINDOW_TAG_SHORT 0x73686f72746full /* "shorto" */

struct cm_payload {
    uint64_t seed;
    size_t pattern_size;
    size_t full_span; /* full ops' windows start below this offset; see FULL_SPAN_MIN */
    size_t max_block;
    unsigned char *pattern;
    /* prefix_crc[i]: crc32c of pattern[0, i * CRC_GRAIN) */
    uint32_t *prefix_crc;
};

static void put_le16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static uint16_t get_le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const unsigned char *p)
{
    return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* splitmix64's output function: a bijective 64-bit mixer, used both to seed xoshiro and to hash
 * op coordinates into window offsets. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256**: fast, and its output passes the statistical tests that matter for data which
 * must look random to compressors and dedup; reproducible from the seed on any platform. */
static uint64_t xoshiro_next(uint64_t s[4])
{
    uint64_t result = rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return result;
}

static void fill_pattern(unsigned char *pattern, size_t size, uint64_t seed)
{
    uint64_t s[4];
    uint64_t sm = seed;
    for (int i = 0; i < 4; i++) {
        sm += 0x9e3779b97f4a7c15ULL;
        s[i] = mix64(sm);
    }
    for (size_t i = 0; i < size; i += 8) {
        put_le64(pattern + i, xoshiro_next(s));
    }
}

cm_payload *cm_payload_new(uint64_t seed, size_t max_block)
{
    if (max_block > SIZE_MAX - PATTERN_SLACK - 8) {
        return NULL;
    }
    cm_payload *p = malloc(sizeof *p);
    if (!p) {
        return NULL;
    }
    p->seed = seed;
    p->max_block = max_block;
    p->pattern_size = (max_block + PATTERN_SLACK + 7) & ~(size_t)7;
    p->full_span = max_block < PATTERN_SLACK / FULL_SPAN_PER_BLOCK ? max_block * FULL_SPAN_PER_BLOCK
                                                                   : PATTERN_SLACK;
    if (p->full_span < FULL_SPAN_MIN) {
        p->full_span = FULL_SPAN_MIN;
    }
    p->pattern = malloc(p->pattern_size);
    size_t grains = p->pattern_size / CRC_GRAIN;
    p->prefix_crc = malloc((grains + 1) * sizeof *p->prefix_crc);
    if (!p->pattern || !p->prefix_crc) {
        cm_payload_free(p);
        return NULL;
    }
    fill_pattern(p->pattern, p->pattern_size, seed);
    p->prefix_crc[0] = 0;
    for (size_t i = 0; i < grains; i++) {
        p->prefix_crc[i + 1] = cm_crc32c(p->prefix_crc[i], p->pattern + i * CRC_GRAIN, CRC_GRAIN);
    }
    return p;
}

void cm_payload_free(cm_payload *p)
{
    if (p) {
        free(p->pattern);
        free(p->prefix_crc);
        free(p);
    }
}

/* crc32c of pattern[from, to) without reading it, but for the partial grains at both ends:
 * CRC(A) and CRC(A||B) give CRC(B) = CRC(A||B) ^ shift(CRC(A), |B|), which is what
 * cm_crc32c_combine computes when given them in that order. */
static uint32_t range_crc(const cm_payload *p, size_t from, size_t to)
{
    size_t first = (from + CRC_GRAIN - 1) / CRC_GRAIN, last = to / CRC_GRAIN;
    if (to - from < CRC_BY_TABLE || first >= last) {
        return cm_crc32c(0, p->pattern + from, to - from);
    }
    size_t mid_from = first * CRC_GRAIN, mid_to = last * CRC_GRAIN;
    uint32_t head = cm_crc32c(0, p->pattern + from, mid_from - from);
    uint32_t mid = cm_crc32c_combine(p->prefix_crc[first], p->prefix_crc[last], mid_to - mid_from);
    uint32_t crc = cm_crc32c_combine(head, mid, mid_to - mid_from);
    return cm_crc32c(crc, p->pattern + mid_to, to - mid_to);
}

/* crc32c of the n-byte window of the pattern starting at start, wrapping at its end. */
static uint32_t window_crc(const cm_payload *p, size_t start, size_t n)
{
    uint32_t crc = 0;
    int first = 1;
    while (n) {
        size_t piece = p->pattern_size - start;
        if (piece > n) {
            piece = n;
        }
        uint32_t piece_crc = range_crc(p, start, start + piece);
        crc = first ? piece_crc : cm_crc32c_combine(crc, piece_crc, piece);
        first = 0;
        n -= piece;
        start = 0;
    }
    return crc;
}

/* Where an op's window starts. Short ops (verified by regenerating them) may start anywhere
 * in the pattern, as they always did; full ops (verified by their header's crc32c only, so
 * where their body came from is nobody else's concern) start within p->full_span. */
static size_t window_start(const cm_payload *p, uint64_t tag, uint32_t name_crc, uint64_t offset,
                           uint64_t extra)
{
    uint64_t h = mix64(p->seed ^ tag);
    h = mix64(h ^ name_crc);
    h = mix64(h ^ offset);
    h = mix64(h ^ extra);
    if (tag == WINDOW_TAG_FULL) {
        return (size_t)(h % (p->full_span / FULL_START_ALIGN)) * FULL_START_ALIGN;
    }
    return (size_t)(h % p->pattern_size);
}

/* Copies n bytes of the pattern starting at start, wrapping at its end; returns the crc32c
 * continued over them when want_crc, computed per chunk right after copying it. */
static uint32_t copy_window(const cm_payload *p, unsigned char *dst, size_t start, size_t n,
                            int want_crc)
{
    uint32_t crc = 0;
    while (n) {
        size_t piece = p->pattern_size - start;
        if (piece > n) {
            piece = n;
        }
        if (piece > FILL_CHUNK) {
            piece = FILL_CHUNK;
        }
        memcpy(dst, p->pattern + start, piece);
        if (want_crc) {
            crc = cm_crc32c(crc, dst, piece);
        }
        dst += piece;
        n -= piece;
        start += piece;
        if (start == p->pattern_size) {
            start = 0;
        }
    }
    return crc;
}

static uint32_t header_crc(const unsigned char *header)
{
    unsigned char copy[CM_PAYLOAD_HEADER_SIZE];
    memcpy(copy, header, sizeof copy);
    memset(copy + OFF_HEADER_CRC, 0, 4);
    return cm_crc32c(0, copy, sizeof copy);
}

static void put_header(unsigned char *h, const char *object, size_t name_len, uint32_t name_crc,
                       uint64_t offset, uint64_t sequence, uint64_t run_id, size_t body_len,
                       uint32_t body_crc)
{
    memset(h, 0, CM_PAYLOAD_HEADER_SIZE);
    put_le32(h + OFF_MAGIC, CM_PAYLOAD_MAGIC);
    put_le16(h + OFF_VERSION, CM_PAYLOAD_VERSION);
    put_le16(h + OFF_HEADER_LEN, CM_PAYLOAD_HEADER_SIZE);
    put_le64(h + OFF_RUN_ID, run_id);
    put_le64(h + OFF_SEQUENCE, sequence);
    put_le64(h + OFF_OFFSET, offset);
    put_le64(h + OFF_BODY_LEN, body_len);
    put_le32(h + OFF_BODY_CRC, body_crc);
    put_le32(h + OFF_NAME_CRC, name_crc);
    put_le16(h + OFF_NAME_LEN, name_len > UINT16_MAX ? UINT16_MAX : (uint16_t)name_len);
    memcpy(h + OFF_NAME, object, name_len < CM_PAYLOAD_NAME_MAX ? name_len : CM_PAYLOAD_NAME_MAX);
    put_le32(h + OFF_HEADER_CRC, header_crc(h));
}

void cm_payload_fill(const cm_payload *p, unsigned char *buf, size_t len, const char *object,
                     uint64_t offset, uint64_t sequence, uint64_t run_id)
{
    if (!object) {
        object = "";
    }
    size_t name_len = strlen(object);
    uint32_t name_crc = cm_crc32c(0, object, name_len);

    if (len < CM_PAYLOAD_HEADER_SIZE) {
        copy_window(p, buf, window_start(p, WINDOW_TAG_SHORT, name_crc, offset, run_id), len, 0);
        return;
    }

    size_t body_len = len - CM_PAYLOAD_HEADER_SIZE;
    size_t start = window_start(p, WINDOW_TAG_FULL, name_crc, offset, sequence);
    uint32_t body_crc;
    if (body_len >= CRC_BY_TABLE) {
        copy_window(p, buf + CM_PAYLOAD_HEADER_SIZE, start, body_len, 0);
        body_crc = window_crc(p, start, body_len);
    } else {
        body_crc = copy_window(p, buf + CM_PAYLOAD_HEADER_SIZE, start, body_len, 1);
    }
    put_header(buf, object, name_len, name_crc, offset, sequence, run_id, body_len, body_crc);
}

struct cm_payload_stage {
    const cm_payload *p;
    /* CM_PAYLOAD_HEADER_SIZE bytes of headroom, the pattern, then its first max_block bytes
     * again, so that every window of up to max_block bytes is contiguous */
    unsigned char *storage;
    int owns_storage;       /* 0: the caller's (cm_payload_stage_new_at) */
    unsigned char *pattern; /* storage + CM_PAYLOAD_HEADER_SIZE */
    unsigned char *header;  /* where the current op's header was written, or NULL */
    unsigned char saved[CM_PAYLOAD_HEADER_SIZE];
    unsigned char *scratch; /* ops that do not fit the staged pattern are filled here */
    size_t scratch_size;
    /* body_crcs[i]: crc32c of the body_crcs_len bytes at pattern + i * FULL_START_ALIGN,
     * for the first small body length the stage was asked for (NULL: none yet) */
    uint32_t *body_crcs;
    size_t body_crcs_len;
};

size_t cm_payload_stage_size(const cm_payload *p)
{
    return CM_PAYLOAD_HEADER_SIZE + p->pattern_size + p->max_block;
}

cm_payload_stage *cm_payload_stage_new_at(const cm_payload *p, unsigned char *storage)
{
    cm_payload_stage *s = calloc(1, sizeof *s);
    if (!s) {
        return NULL;
    }
    s->p = p;
    s->storage = storage;
    memset(s->storage, 0, CM_PAYLOAD_HEADER_SIZE);
    s->pattern = s->storage + CM_PAYLOAD_HEADER_SIZE;
    memcpy(s->pattern, p->pattern, p->pattern_size);
    memcpy(s->pattern + p->pattern_size, p->pattern, p->max_block);
    return s;
}

cm_payload_stage *cm_payload_stage_new(const cm_payload *p)
{
    unsigned char *storage = malloc(cm_payload_stage_size(p));
    cm_payload_stage *s = storage ? cm_payload_stage_new_at(p, storage) : NULL;
    if (!s) {
        free(storage);
        return NULL;
    }
    s->owns_storage = 1;
    return s;
}

void cm_payload_stage_free(cm_payload_stage *s)
{
    if (s) {
        cm_payload_stage_release(s);
        if (s->owns_storage) {
            free(s->storage);
        }
        free(s->scratch);
        free(s->body_crcs);
        free(s);
    }
}

/* Whether s->body_crcs holds the crc32c of every full-op body of body_len bytes; builds the
 * table on the first call for a small length, when cheap enough (see FULL_START_ALIGN). */
static int body_crcs_for(cm_payload_stage *s, size_t body_len)
{
    if (s->body_crcs) {
        return s->body_crcs_len == body_len;
    }
    size_t starts = s->p->full_span / FULL_START_ALIGN;
    if (body_len == 0 || body_len > BODY_TABLE_BYTES / starts) {
        return 0;
    }
    uint32_t *crcs = malloc(starts * sizeof *crcs);
    if (!crcs) {
        return 0; /* the caller checksums the body instead */
    }
    for (size_t i = 0; i < starts; i++) {
        crcs[i] = cm_crc32c(0, s->pattern + i * FULL_START_ALIGN, body_len);
    }
    s->body_crcs = crcs;
    s->body_crcs_len = body_len;
    return 1;
}

/* The crc32c of the full-op body of body_len bytes at pattern offset start, without a pass
 * over it where a table has it. */
static uint32_t stage_body_crc(cm_payload_stage *s, size_t start, size_t body_len)
{
    if (body_len >= CRC_BY_TABLE) {
        return window_crc(s->p, start, body_len);
    }
    if (body_crcs_for(s, body_len)) {
        return s->body_crcs[start / FULL_START_ALIGN];
    }
    /* checksummed where the library will copy it from, so that copy finds it warm */
    return cm_crc32c(0, s->pattern + start, body_len);
}

const unsigned char *cm_payload_stage_op(cm_payload_stage *s, size_t len, const char *object,
                                         uint64_t offset, uint64_t sequence, uint64_t run_id)
{
    const cm_payload *p = s->p;
    cm_payload_stage_release(s);
    if (len < CM_PAYLOAD_HEADER_SIZE || len - CM_PAYLOAD_HEADER_SIZE > p->max_block) {
        if (!s->scratch || len > s->scratch_size) {
            unsigned char *grown = realloc(s->scratch, len ? len : 1);
            if (!grown) {
                return NULL;
            }
            s->scratch = grown;
            s->scratch_size = len;
        }
        cm_payload_fill(p, s->scratch, len, object, offset, sequence, run_id);
        return s->scratch;
    }
    /* the split op's header goes over the bytes just before its body, saved first */
    unsigned char header[CM_PAYLOAD_HEADER_SIZE];
    size_t body_offset;
    cm_payload_stage_split(s, len, object, offset, sequence, run_id, header, &body_offset);
    s->header = s->storage + body_offset - CM_PAYLOAD_HEADER_SIZE;
    memcpy(s->saved, s->header, CM_PAYLOAD_HEADER_SIZE);
    memcpy(s->header, header, CM_PAYLOAD_HEADER_SIZE);
    return s->header;
}

int cm_payload_stage_split(cm_payload_stage *s, size_t len, const char *object, uint64_t offset,
                           uint64_t sequence, uint64_t run_id,
                           unsigned char header[CM_PAYLOAD_HEADER_SIZE], size_t *body_offset)
{
    const cm_payload *p = s->p;
    if (!object) {
        object = "";
    }
    size_t name_len = strlen(object);
    uint32_t name_crc = cm_crc32c(0, object, name_len);
    if (len < CM_PAYLOAD_HEADER_SIZE) {
        /* no header: the op is one window, picked as cm_payload_fill picks it */
        if (len > p->max_block) {
            return -1;
        }
        size_t start = window_start(p, WINDOW_TAG_SHORT, name_crc, offset, run_id);
        *body_offset = (size_t)(s->pattern + start - s->storage);
        return 0;
    }
    size_t body_len = len - CM_PAYLOAD_HEADER_SIZE;
    if (body_len > p->max_block) {
        return -1;
    }
    size_t start = window_start(p, WINDOW_TAG_FULL, name_crc, offset, sequence);
    uint32_t body_crc = stage_body_crc(s, start, body_len);
    put_header(header, object, name_len, name_crc, offset, sequence, run_id, body_len, body_crc);
    *body_offset = (size_t)(s->pattern + start - s->storage);
    return CM_PAYLOAD_HEADER_SIZE;
}

void cm_payload_stage_release(cm_payload_stage *s)
{
    if (s->header) {
        memcpy(s->header, s->saved, CM_PAYLOAD_HEADER_SIZE);
        s->header = NULL;
    }
}

cm_payload_error_kind cm_payload_decode(const unsigned char *buf, size_t len, cm_payload_header *h)
{
    memset(h, 0, sizeof *h);
    if (len < CM_PAYLOAD_HEADER_SIZE) {
        return CM_PAYLOAD_ERR_LENGTH;
    }
    h->version = get_le16(buf + OFF_VERSION);
    h->header_len = get_le16(buf + OFF_HEADER_LEN);
    h->run_id = get_le64(buf + OFF_RUN_ID);
    h->sequence = get_le64(buf + OFF_SEQUENCE);
    h->offset = get_le64(buf + OFF_OFFSET);
    h->body_len = get_le64(buf + OFF_BODY_LEN);
    h->body_crc = get_le32(buf + OFF_BODY_CRC);
    h->header_crc = get_le32(buf + OFF_HEADER_CRC);
    h->name_crc = get_le32(buf + OFF_NAME_CRC);
    h->name_len = get_le16(buf + OFF_NAME_LEN);
    size_t stored = h->name_len < CM_PAYLOAD_NAME_MAX ? h->name_len : CM_PAYLOAD_NAME_MAX;
    memcpy(h->object, buf + OFF_NAME, stored);
    h->object[stored] = '\0';
    h->name_truncated = h->name_len > CM_PAYLOAD_NAME_MAX;

    if (get_le32(buf + OFF_MAGIC) != CM_PAYLOAD_MAGIC) {
        return CM_PAYLOAD_ERR_BAD_MAGIC;
    }
    /* Checked before the crc: a header of another size cannot be checksummed as ours. */
    if (h->version != CM_PAYLOAD_VERSION || h->header_len != CM_PAYLOAD_HEADER_SIZE) {
        return CM_PAYLOAD_ERR_BAD_VERSION;
    }
    if (header_crc(buf) != h->header_crc) {
        return CM_PAYLOAD_ERR_HEADER_CRC;
    }
    return CM_PAYLOAD_OK;
}

const char *cm_payload_error_kind_name(cm_payload_error_kind kind)
{
    switch (kind) {
    case CM_PAYLOAD_OK:
        return "ok";
    case CM_PAYLOAD_ERR_BAD_MAGIC:
        return "bad_magic";
    case CM_PAYLOAD_ERR_HEADER_CRC:
        return "header_crc";
    case CM_PAYLOAD_ERR_BAD_VERSION:
        return "bad_version";
    case CM_PAYLOAD_ERR_RUN_ID:
        return "run_id";
    case CM_PAYLOAD_ERR_OBJECT:
        return "object";
    case CM_PAYLOAD_ERR_OFFSET:
        return "offset";
    case CM_PAYLOAD_ERR_LENGTH:
        return "length";
    case CM_PAYLOAD_ERR_BODY_CRC:
        return "body_crc";
    case CM_PAYLOAD_ERR_SHORT_CONTENT:
        return "short_content";
    }
    return "unknown";
}

/* Object names are arbitrary bytes; messages get a bounded, printable rendering. */
static void printable_name(char *out, size_t out_size, const char *name, size_t len)
{
    const size_t limit = 80;
    size_t n = 0;
    for (size_t i = 0; i < len && i < limit && n + 1 < out_size; i++) {
        unsigned char c = (unsigned char)name[i];
        out[n++] = (char)((c >= 0x20 && c < 0x7f) ? c : '?');
    }
    out[n] = '\0';
    if (len > limit && n + 4 < out_size) {
        memcpy(out + n, "...", 4);
    }
}

/* What the reader expects, computed once per verify call and shared by every op it walks. */
struct verify_ctx {
    const cm_payload *p;
    const char *object;
    size_t name_len;
    uint32_t name_crc;
    uint64_t run_id;
    unsigned flags;
    cm_payload_error *err;
};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 5, 6)))
#endif
static cm_payload_error_kind
report(const struct verify_ctx *ctx, cm_payload_error_kind kind, uint64_t offset,
       const cm_payload_header *h, const char *fmt, ...)
{
    cm_payload_error *err = ctx->err;
    if (!err) {
        return kind;
    }
    err->kind = kind;
    err->offset = offset;
    err->has_sequence = h != NULL;
    err->sequence = h ? h->sequence : 0;

    char name[96];
    printable_name(name, sizeof name, ctx->object, ctx->name_len);
    int n;
    if (h) {
        n = snprintf(err->message, sizeof err->message,
                     "object %s offset %" PRIu64 " (seq %" PRIu64 "): ", name, offset, h->sequence);
    } else {
        n = snprintf(err->message, sizeof err->message, "object %s offset %" PRIu64 ": ", name,
                     offset);
    }
    if (n >= 0 && (size_t)n < sizeof err->message) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return kind;
}

static int all_zero(const unsigned char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i]) {
            return 0;
        }
    }
    return 1;
}

static cm_payload_error_kind verify_short(const struct verify_ctx *ctx, const unsigned char *buf,
                                          size_t len, uint64_t offset)
{
    if (len == 0 || (ctx->flags & CM_PAYLOAD_VERIFY_ANY_RUN)) {
        return CM_PAYLOAD_OK;
    }
    const cm_payload *p = ctx->p;
    size_t start = window_start(p, WINDOW_TAG_SHORT, ctx->name_crc, offset, ctx->run_id);
    for (size_t i = 0; i < len; i++) {
        unsigned char want = p->pattern[(start + i) % p->pattern_size];
        if (buf[i] != want) {
            return report(ctx, CM_PAYLOAD_ERR_SHORT_CONTENT, offset, NULL,
                          "%zu-byte headerless op differs from the written pattern at byte %zu "
                          "(0x%02x != 0x%02x)",
                          len, i, buf[i], want);
        }
    }
    return CM_PAYLOAD_OK;
}

/* Checks the op with a header at buf; on success *consumed is its total length. */
static cm_payload_error_kind verify_op(const struct verify_ctx *ctx, const unsigned char *buf,
                                       size_t len, uint64_t offset, size_t *consumed)
{
    cm_payload_header h;
    switch (cm_payload_decode(buf, len, &h)) {
    case CM_PAYLOAD_OK:
        break;
    case CM_PAYLOAD_ERR_BAD_MAGIC:
        return report(ctx, CM_PAYLOAD_ERR_BAD_MAGIC, offset, NULL,
                      "bad magic 0x%08" PRIx32 " (expected 0x%08x)%s", get_le32(buf + OFF_MAGIC),
                      CM_PAYLOAD_MAGIC,
                      all_zero(buf, CM_PAYLOAD_HEADER_SIZE) ? "; the header bytes are all zero"
                                                            : "");
    case CM_PAYLOAD_ERR_BAD_VERSION:
        return report(ctx, CM_PAYLOAD_ERR_BAD_VERSION, offset, NULL,
                      "header version %u length %u, expected %u and %u (other format or corrupt)",
                      h.version, h.header_len, CM_PAYLOAD_VERSION, CM_PAYLOAD_HEADER_SIZE);
    case CM_PAYLOAD_ERR_HEADER_CRC:
        return report(ctx, CM_PAYLOAD_ERR_HEADER_CRC, offset, NULL,
                      "header crc32c 0x%08" PRIx32 " != stored 0x%08" PRIx32 " (corrupt header)",
                      header_crc(buf), h.header_crc);
    default:
        return report(ctx, CM_PAYLOAD_ERR_LENGTH, offset, NULL, "no room for a header");
    }

    if (!(ctx->flags & CM_PAYLOAD_VERIFY_ANY_RUN) && h.run_id != ctx->run_id) {
        return report(ctx, CM_PAYLOAD_ERR_RUN_ID, offset, &h,
                      "run id 0x%" PRIx64 " != expected 0x%" PRIx64 " (stale data?)", h.run_id,
                      ctx->run_id);
    }
    size_t want_len = ctx->name_len > UINT16_MAX ? UINT16_MAX : ctx->name_len;
    size_t stored = want_len < CM_PAYLOAD_NAME_MAX ? want_len : CM_PAYLOAD_NAME_MAX;
    if (h.name_len != want_len || h.name_crc != ctx->name_crc ||
        memcmp(h.object, ctx->object, stored) != 0) {
        char found[96];
        printable_name(found, sizeof found, h.object, strlen(h.object));
        return report(ctx, CM_PAYLOAD_ERR_OBJECT, offset, &h,
                      "header belongs to object %s%s (misplaced data?)", found,
                      h.name_truncated ? "..." : "");
    }
    if (h.offset != offset) {
        return report(ctx, CM_PAYLOAD_ERR_OFFSET, offset, &h,
                      "header belongs to offset %" PRIu64 " (misplaced data?)", h.offset);
    }
    size_t body_room = len - CM_PAYLOAD_HEADER_SIZE;
    if (h.body_len > body_room) {
        return report(ctx, CM_PAYLOAD_ERR_LENGTH, offset, &h,
                      "header announces a %" PRIu64 "-byte body but only %zu bytes follow",
                      h.body_len, body_room);
    }
    const unsigned char *body = buf + CM_PAYLOAD_HEADER_SIZE;
    if (!(ctx->flags & CM_PAYLOAD_VERIFY_SKIP_BODY)) {
        uint32_t crc = cm_crc32c(0, body, (size_t)h.body_len);
        if (crc != h.body_crc) {
            return report(ctx, CM_PAYLOAD_ERR_BODY_CRC, offset, &h,
                          "body crc32c 0x%08" PRIx32 " != header 0x%08" PRIx32, crc, h.body_crc);
        }
    }
    *consumed = CM_PAYLOAD_HEADER_SIZE + (size_t)h.body_len;
    return CM_PAYLOAD_OK;
}

cm_payload_error_kind cm_payload_verify(const cm_payload *p, const unsigned char *buf, size_t len,
                                        const char *object, uint64_t offset, uint64_t run_id,
                                        unsigned flags, cm_payload_error *err)
{
    struct verify_ctx ctx = {
        .p = p,
        .object = object ? object : "",
        .run_id = run_id,
        .flags = flags,
        .err = err,
    };
    ctx.name_len = strlen(ctx.object);
    ctx.name_crc = cm_crc32c(0, ctx.object, ctx.name_len);
    if (err) {
        err->kind = CM_PAYLOAD_OK;
        err->offset = offset;
        err->sequence = 0;
        err->has_sequence = 0;
        err->message[0] = '\0';
    }

    size_t pos = 0;
    for (;;) {
        size_t remaining = len - pos;
        uint64_t op_offset = offset + pos;
        if (remaining < CM_PAYLOAD_HEADER_SIZE) {
            /* Also the normal end: an empty tail verifies trivially. */
            return verify_short(&ctx, buf + pos, remaining, op_offset);
        }
        size_t consumed = 0;
        cm_payload_error_kind kind = verify_op(&ctx, buf + pos, remaining, op_offset, &consumed);
        if (kind != CM_PAYLOAD_OK) {
            return kind;
        }
        pos += consumed;
    }
}

char *cm_payload_describe(const unsigned char *buf, size_t len, char *out, size_t out_size)
{
    if (out_size == 0) {
        return out;
    }
    cm_payload_header h;
    cm_payload_error_kind kind = cm_payload_decode(buf, len, &h);
    if (kind == CM_PAYLOAD_ERR_LENGTH) {
        snprintf(out, out_size, "no header: %zu bytes is shorter than a header", len);
        return out;
    }
    if (kind == CM_PAYLOAD_ERR_BAD_MAGIC) {
        snprintf(out, out_size, "no header: bad magic 0x%08" PRIx32, get_le32(buf + OFF_MAGIC));
        return out;
    }
    char name[96];
    printable_name(name, sizeof name, h.object, strlen(h.object));
    snprintf(out, out_size,
             "%sobject %s%s offset %" PRIu64 " seq %" PRIu64 " run 0x%" PRIx64 " body %" PRIu64
             " crc32c 0x%08" PRIx32,
             kind == CM_PAYLOAD_OK                ? ""
             : kind == CM_PAYLOAD_ERR_BAD_VERSION ? "(unknown version) "
                                                  : "(corrupt header) ",
             name, h.name_truncated ? "..." : "", h.offset, h.sequence, h.run_id, h.body_len,
             h.body_crc);
    return out;
}
