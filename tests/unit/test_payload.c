/* Unit tests for crc32c (known vectors, hardware == software) and payload fill/verify
 * (round trips, corruption and misplacement detection, incompressibility). Deterministic. */
#include "check.h"
#include "crc32c.h"
#include "payload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define H CM_PAYLOAD_HEADER_SIZE

static const uint64_t test_seed = 0x5eed5eed12345678ull;
static const uint64_t test_run = 0xabcdef0123456789ull;
static const size_t max_block = (size_t)4 << 20;

/* Test data comes from a fixed-seed generator so every run checks the same bytes. */
static uint64_t rng_state = 0x0123456789abcdefull;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_fill(unsigned char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (unsigned char)rng_next();
    }
}

static unsigned char *xmalloc(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static void test_crc_vectors(void)
{
    unsigned char buf[32];
    /* RFC 3720 (iSCSI) appendix B.4 vectors plus the common check value. */
    CHECK(cm_crc32c(0, "123456789", 9) == 0xE3069283u);
    CHECK(cm_crc32c_sw(0, "123456789", 9) == 0xE3069283u);
    CHECK(cm_crc32c(0, NULL, 0) == 0);
    memset(buf, 0, sizeof buf);
    CHECK(cm_crc32c(0, buf, 32) == 0x8A9136AAu);
    CHECK(cm_crc32c_sw(0, buf, 32) == 0x8A9136AAu);
    memset(buf, 0xff, sizeof buf);
    CHECK(cm_crc32c(0, buf, 32) == 0x62A8AB43u);
    for (int i = 0; i < 32; i++) {
        buf[i] = (unsigned char)i;
    }
    CHECK(cm_crc32c(0, buf, 32) == 0x46DD794Eu);
    for (int i = 0; i < 32; i++) {
        buf[i] = (unsigned char)(31 - i);
    }
    CHECK(cm_crc32c(0, buf, 32) == 0x113FDB5Cu);
    if (cm_crc32c_hw_available()) {
        CHECK(cm_crc32c_hw(0, "123456789", 9) == 0xE3069283u);
        CHECK(cm_crc32c_hw(0, buf, 32) == 0x113FDB5Cu);
    }
    printf("crc32c implementation: %s\n", cm_crc32c_implementation());
}

static void test_crc_hw_matches_sw(void)
{
    const size_t size = 3 * 8192 * 3 + 4096;
    unsigned char *buf = xmalloc(size + 16);
    rng_fill(buf, size + 16);
    int hw = cm_crc32c_hw_available();
    int mismatches = 0;
    for (size_t len = 0; len <= size; len = len < 1100 ? len + 1 : len * 3 / 2 + 7) {
        for (size_t align = 0; align < 16; align += (len < 1100 ? 5 : 1)) {
            uint32_t sw = cm_crc32c_sw(0, buf + align, len);
            uint32_t any = cm_crc32c(0, buf + align, len);
            uint32_t h = hw ? cm_crc32c_hw(0, buf + align, len) : sw;
            if (sw != any || sw != h) {
                mismatches++;
            }
        }
    }
    CHECK_MSG(mismatches == 0, "%d length/alignment cases differ", mismatches);
    /* The exact block sizes the hardware path switches at, and one byte either side. */
    const size_t edges[] = {767, 768, 769, 24575, 24576, 24577, 3 * 8192 * 3};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        CHECK(cm_crc32c_sw(0, buf + 3, edges[i]) == cm_crc32c(0, buf + 3, edges[i]));
    }

    uint32_t whole = cm_crc32c(0, buf, size);
    const size_t splits[] = {0, 1, 7, 100, 8192, 30000, size};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        size_t a = splits[i];
        uint32_t crc_a = cm_crc32c(0, buf, a);
        uint32_t crc_b = cm_crc32c(0, buf + a, size - a);
        CHECK(cm_crc32c(crc_a, buf + a, size - a) == whole);
        CHECK(cm_crc32c_sw(cm_crc32c_sw(0, buf, a), buf + a, size - a) == whole);
        CHECK(cm_crc32c_combine(crc_a, crc_b, size - a) == whole);
    }
    free(buf);
}

static int roundtrip(const cm_payload *p, size_t len, uint64_t offset, uint64_t seq)
{
    unsigned char *buf = xmalloc(len);
    cm_payload_fill(p, buf, len, "obj_roundtrip", offset, seq, test_run);
    cm_payload_error err;
    cm_payload_error_kind kind =
        cm_payload_verify(p, buf, len, "obj_roundtrip", offset, test_run, 0, &err);
    CHECK_MSG(kind == CM_PAYLOAD_OK, "len %zu: %s", len, err.message);
    CHECK(err.kind == kind);
    free(buf);
    return kind == CM_PAYLOAD_OK;
}

static void test_roundtrip_sizes(const cm_payload *p)
{
    const size_t sizes[] = {0,    1,         H - 1,   H,       H + 1,         4096,
                            4095, 65536 + 3, 1 << 20, 4 << 20, (4 << 20) + 1, (9 << 20) + 5};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        roundtrip(p, sizes[i], 4096 * i, 1000 + i);
    }
    /* Many sequences, so windows that wrap around the end of the pattern get exercised. */
    int failures = 0;
    for (uint64_t seq = 0; seq < 300; seq++) {
        failures += !roundtrip(p, 1 << 20, seq * 4096, seq);
    }
    CHECK(failures == 0);
}

static void test_single_byte_corruption(const cm_payload *p)
{
    const size_t lens[] = {4096, H, H + 1, (1 << 20) + 17};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t len = lens[li];
        unsigned char *buf = xmalloc(len);
        cm_payload_fill(p, buf, len, "obj_flip", 8192, 42, test_run);
        int missed = 0;
        int wrong_kind = 0;
        for (size_t pos = 0; pos < len; pos += pos < H ? 1 : (len > 8192 ? 4093 : 29)) {
            const unsigned char deltas[] = {0x01, 0x80, 0xff};
            for (size_t d = 0; d < sizeof deltas; d++) {
                buf[pos] ^= deltas[d];
                cm_payload_error err;
                cm_payload_error_kind kind =
                    cm_payload_verify(p, buf, len, "obj_flip", 8192, test_run, 0, &err);
                buf[pos] ^= deltas[d];
                if (kind == CM_PAYLOAD_OK) {
                    missed++;
                    continue;
                }
                int header_kind = kind == CM_PAYLOAD_ERR_BAD_MAGIC ||
                                  kind == CM_PAYLOAD_ERR_BAD_VERSION ||
                                  kind == CM_PAYLOAD_ERR_HEADER_CRC;
                if (pos < H ? !header_kind : kind != CM_PAYLOAD_ERR_BODY_CRC) {
                    wrong_kind++;
                }
                if (err.offset != 8192 || !strstr(err.message, "object obj_flip offset 8192")) {
                    wrong_kind++;
                }
            }
        }
        CHECK_MSG(missed == 0, "len %zu: %d corruptions missed", len, missed);
        CHECK_MSG(wrong_kind == 0, "len %zu: %d misclassified", len, wrong_kind);
        CHECK(cm_payload_verify(p, buf, len, "obj_flip", 8192, test_run, 0, NULL) == CM_PAYLOAD_OK);
        free(buf);
    }

    /* A body crc mismatch names both crcs and the sequence found in the header. */
    unsigned char *buf = xmalloc(4096);
    cm_payload_fill(p, buf, 4096, "obj_flip", 8192, 42, test_run);
    buf[1000] ^= 0x10;
    cm_payload_error err;
    CHECK(cm_payload_verify(p, buf, 4096, "obj_flip", 8192, test_run, 0, &err) ==
          CM_PAYLOAD_ERR_BODY_CRC);
    CHECK(err.has_sequence && err.sequence == 42);
    CHECK_MSG(strstr(err.message, "object obj_flip offset 8192 (seq 42): body crc32c 0x") != NULL,
              "%s", err.message);
    CHECK_MSG(strstr(err.message, "!= header 0x") != NULL, "%s", err.message);
    /* Skipping the body check is the caller's documented trade-off. */
    CHECK(cm_payload_verify(p, buf, 4096, "obj_flip", 8192, test_run, CM_PAYLOAD_VERIFY_SKIP_BODY,
                            NULL) == CM_PAYLOAD_OK);
    free(buf);
}

static void test_short_ops(const cm_payload *p)
{
    unsigned char buf[H];
    for (size_t len = 1; len < H; len += 7) {
        cm_payload_fill(p, buf, len, "obj_short", 512, 9, test_run);
        int missed = 0;
        for (size_t pos = 0; pos < len; pos++) {
            buf[pos] ^= 0x04;
            missed += cm_payload_verify(p, buf, len, "obj_short", 512, test_run, 0, NULL) !=
                      CM_PAYLOAD_ERR_SHORT_CONTENT;
            buf[pos] ^= 0x04;
        }
        CHECK_MSG(missed == 0, "len %zu: %d corruptions missed", len, missed);
        cm_payload_error err;
        CHECK(cm_payload_verify(p, buf, len, "obj_short", 512, test_run, 0, &err) == CM_PAYLOAD_OK);
        /* Sequence-independent, since the reader cannot know it. */
        unsigned char again[H];
        cm_payload_fill(p, again, len, "obj_short", 512, 10, test_run);
        CHECK(memcmp(buf, again, len) == 0);
        if (len >= 16) {
            CHECK(cm_payload_verify(p, buf, len, "obj_short", 1024, test_run, 0, &err) ==
                  CM_PAYLOAD_ERR_SHORT_CONTENT);
            CHECK_MSG(strstr(err.message, "object obj_short offset 1024") != NULL, "%s",
                      err.message);
            CHECK(cm_payload_verify(p, buf, len, "obj_other", 512, test_run, 0, NULL) ==
                  CM_PAYLOAD_ERR_SHORT_CONTENT);
            CHECK(cm_payload_verify(p, buf, len, "obj_short", 512, test_run + 1, 0, NULL) ==
                  CM_PAYLOAD_ERR_SHORT_CONTENT);
            CHECK(cm_payload_verify(p, buf, len, "obj_short", 512, test_run + 1,
                                    CM_PAYLOAD_VERIFY_ANY_RUN, NULL) == CM_PAYLOAD_OK);
        }
    }
}

static void test_misplaced_data(const cm_payload *p)
{
    unsigned char *buf = xmalloc(4096);
    cm_payload_fill(p, buf, 4096, "obj_a", 4096, 7, test_run);
    cm_payload_error err;

    CHECK(cm_payload_verify(p, buf, 4096, "obj_b", 4096, test_run, 0, &err) ==
          CM_PAYLOAD_ERR_OBJECT);
    CHECK_MSG(strstr(err.message, "object obj_b offset 4096 (seq 7)") != NULL, "%s", err.message);
    CHECK_MSG(strstr(err.message, "obj_a") != NULL, "%s", err.message);
    CHECK_STR(cm_payload_error_kind_name(err.kind), "object");

    CHECK(cm_payload_verify(p, buf, 4096, "obj_a", 8192, test_run, 0, &err) ==
          CM_PAYLOAD_ERR_OFFSET);
    CHECK_MSG(strstr(err.message,
                     "object obj_a offset 8192 (seq 7): header belongs to offset 4096") != NULL,
              "%s", err.message);
    CHECK(err.offset == 8192);

    CHECK(cm_payload_verify(p, buf, 4096, "obj_a", 4096, test_run ^ 1, 0, &err) ==
          CM_PAYLOAD_ERR_RUN_ID);
    CHECK_MSG(strstr(err.message, "object obj_a offset 4096 (seq 7): run id") != NULL, "%s",
              err.message);
    CHECK(cm_payload_verify(p, buf, 4096, "obj_a", 4096, test_run ^ 1, CM_PAYLOAD_VERIFY_ANY_RUN,
                            &err) == CM_PAYLOAD_OK);

    /* A name that is a prefix of the real one, or extends it, is still a different object. */
    CHECK(cm_payload_verify(p, buf, 4096, "obj_", 4096, test_run, 0, NULL) ==
          CM_PAYLOAD_ERR_OBJECT);
    CHECK(cm_payload_verify(p, buf, 4096, "obj_aa", 4096, test_run, 0, NULL) ==
          CM_PAYLOAD_ERR_OBJECT);

    /* Truncated reads and holes. */
    CHECK(cm_payload_verify(p, buf, 4000, "obj_a", 4096, test_run, 0, &err) ==
          CM_PAYLOAD_ERR_LENGTH);
    CHECK_MSG(strstr(err.message, "3968-byte body but only 3872") != NULL, "%s", err.message);
    memset(buf, 0, 4096);
    CHECK(cm_payload_verify(p, buf, 4096, "obj_a", 4096, test_run, 0, &err) ==
          CM_PAYLOAD_ERR_BAD_MAGIC);
    CHECK_MSG(strstr(err.message, "object obj_a offset 4096: bad magic 0x00000000") != NULL &&
                  strstr(err.message, "all zero") != NULL,
              "%s", err.message);
    CHECK(!err.has_sequence);
    free(buf);
}

static void test_long_names(const cm_payload *p)
{
    char name[200];
    char other[200];
    for (size_t i = 0; i < sizeof name - 1; i++) {
        name[i] = (char)('a' + i % 26);
    }
    name[sizeof name - 1] = '\0';
    memcpy(other, name, sizeof name);
    other[150] = '#';

    unsigned char buf[1024];
    cm_payload_fill(p, buf, sizeof buf, name, 0, 1, test_run);
    CHECK(cm_payload_verify(p, buf, sizeof buf, name, 0, test_run, 0, NULL) == CM_PAYLOAD_OK);
    /* Same stored 72-byte prefix and length; only the full-name crc tells them apart. */
    CHECK(cm_payload_verify(p, buf, sizeof buf, other, 0, test_run, 0, NULL) ==
          CM_PAYLOAD_ERR_OBJECT);

    cm_payload_header h;
    CHECK(cm_payload_decode(buf, sizeof buf, &h) == CM_PAYLOAD_OK);
    CHECK(h.name_truncated);
    CHECK(h.name_len == sizeof name - 1);
    CHECK(strlen(h.object) == CM_PAYLOAD_NAME_MAX);
    CHECK(strncmp(h.object, name, CM_PAYLOAD_NAME_MAX) == 0);

    /* Non-printable names are rendered safely in messages. */
    cm_payload_error err;
    CHECK(cm_payload_verify(p, buf, sizeof buf, "bad\nname", 0, test_run, 0, &err) ==
          CM_PAYLOAD_ERR_OBJECT);
    CHECK_MSG(strstr(err.message, "object bad?name offset 0") != NULL, "%s", err.message);

    /* NULL means the empty name. */
    cm_payload_fill(p, buf, sizeof buf, NULL, 0, 1, test_run);
    CHECK(cm_payload_verify(p, buf, sizeof buf, "", 0, test_run, 0, NULL) == CM_PAYLOAD_OK);
}

static void test_decode(const cm_payload *p)
{
    unsigned char buf[4096];
    cm_payload_fill(p, buf, sizeof buf, "obj_decode", 1 << 20, 123, test_run);
    cm_payload_header h;
    CHECK(cm_payload_decode(buf, sizeof buf, &h) == CM_PAYLOAD_OK);
    CHECK(h.version == CM_PAYLOAD_VERSION);
    CHECK(h.header_len == H);
    CHECK(h.run_id == test_run);
    CHECK(h.sequence == 123);
    CHECK(h.offset == 1 << 20);
    CHECK(h.body_len == sizeof buf - H);
    CHECK(h.body_crc == cm_crc32c(0, buf + H, sizeof buf - H));
    CHECK_STR(h.object, "obj_decode");
    CHECK(!h.name_truncated);
    /* The layout is part of the on-disk format: pin a few fields by byte position. */
    CHECK(memcmp(buf, "CMPL", 4) == 0);
    CHECK(buf[4] == CM_PAYLOAD_VERSION && buf[5] == 0 && buf[6] == H && buf[7] == 0);
    CHECK(buf[16] == 123 && buf[17] == 0);
    CHECK(memcmp(buf + 56, "obj_decode", 10) == 0);

    char text[256];
    cm_payload_describe(buf, sizeof buf, text, sizeof text);
    char want[256];
    snprintf(want, sizeof want,
             "object obj_decode offset 1048576 seq 123 run 0xabcdef0123456789 body 3968 "
             "crc32c 0x%08x",
             (unsigned)h.body_crc);
    CHECK_STR(text, want);
    CHECK(cm_payload_decode(buf, H - 1, &h) == CM_PAYLOAD_ERR_LENGTH);
    buf[100] ^= 1;
    CHECK(cm_payload_decode(buf, sizeof buf, &h) == CM_PAYLOAD_ERR_HEADER_CRC);
    cm_payload_describe(buf, sizeof buf, text, sizeof text);
    CHECK_MSG(strncmp(text, "(corrupt header) object obj_decode offset", 41) == 0, "%s", text);
    buf[0] ^= 1;
    CHECK(cm_payload_decode(buf, sizeof buf, &h) == CM_PAYLOAD_ERR_BAD_MAGIC);
}

/* One read covering several ops written in smaller blocks, ending in a headerless short op. */
static void test_multi_op_buffer(const cm_payload *p)
{
    const size_t block = 4096;
    const size_t tail = 100;
    const size_t len = 8 * block + tail;
    const uint64_t base = 1 << 20;
    unsigned char *buf = xmalloc(len);
    for (size_t i = 0; i < 8; i++) {
        cm_payload_fill(p, buf + i * block, block, "obj_multi", base + i * block, 500 + i,
                        test_run);
    }
    cm_payload_fill(p, buf + 8 * block, tail, "obj_multi", base + 8 * block, 600, test_run);
    cm_payload_error err;
    CHECK_MSG(cm_payload_verify(p, buf, len, "obj_multi", base, test_run, 0, &err) == CM_PAYLOAD_OK,
              "%s", err.message);

    buf[5 * block + 2000] ^= 0x20;
    CHECK(cm_payload_verify(p, buf, len, "obj_multi", base, test_run, 0, &err) ==
          CM_PAYLOAD_ERR_BODY_CRC);
    CHECK(err.offset == base + 5 * block && err.sequence == 505);
    CHECK_MSG(strstr(err.message, "object obj_multi offset 1069056 (seq 505)") != NULL, "%s",
              err.message);
    buf[5 * block + 2000] ^= 0x20;

    buf[8 * block + 50] ^= 0x20;
    CHECK(cm_payload_verify(p, buf, len, "obj_multi", base, test_run, 0, &err) ==
          CM_PAYLOAD_ERR_SHORT_CONTENT);
    CHECK(err.offset == base + 8 * block);
    CHECK_MSG(strstr(err.message, "at byte 50") != NULL, "%s", err.message);
    free(buf);
}

static void test_bodies_differ(const cm_payload *p)
{
    enum { N = 16, LEN = 4096 };
    static unsigned char bufs[N][LEN];
    int same = 0;
    for (int i = 0; i < N; i++) {
        cm_payload_fill(p, bufs[i], LEN, "obj_diff", 0, (uint64_t)i, test_run);
        for (int j = 0; j < i; j++) {
            same += memcmp(bufs[i] + H, bufs[j] + H, LEN - H) == 0;
        }
    }
    CHECK_MSG(same == 0, "%d pairs of sequences share a body", same);

    /* Same inputs, same bytes: runs are reproducible from the seed. */
    unsigned char again[LEN];
    cm_payload_fill(p, again, LEN, "obj_diff", 0, 3, test_run);
    CHECK(memcmp(again, bufs[3], LEN) == 0);
    cm_payload *twin = cm_payload_new(test_seed, max_block);
    CHECK(twin != NULL);
    cm_payload_fill(twin, again, LEN, "obj_diff", 0, 3, test_run);
    CHECK(memcmp(again, bufs[3], LEN) == 0);
    cm_payload_free(twin);

    cm_payload *other_seed = cm_payload_new(test_seed + 1, max_block);
    CHECK(other_seed != NULL);
    cm_payload_fill(other_seed, again, LEN, "obj_diff", 0, 3, test_run);
    CHECK(memcmp(again + H, bufs[3] + H, LEN - H) != 0);
    /* Full ops verify without the writer's seed: the body crc travels in the header. */
    CHECK(cm_payload_verify(p, again, LEN, "obj_diff", 0, test_run, 0, NULL) == CM_PAYLOAD_OK);
    cm_payload_free(other_seed);

    /* Consecutive small ops of one object must not be shifted copies of each other either. */
    int clashes = 0;
    uint64_t firsts[64];
    for (int i = 0; i < 64; i++) {
        cm_payload_fill(p, again, LEN, "obj_seqwrite", (uint64_t)i * LEN, 1000 + (uint64_t)i,
                        test_run);
        memcpy(&firsts[i], again + H, sizeof firsts[i]);
        for (int j = 0; j < i; j++) {
            clashes += firsts[i] == firsts[j];
        }
    }
    CHECK(clashes == 0);
}

/* Pearson's chi-square of the byte histogram against uniform: 255 degrees of freedom, so random
 * data scores about 255 +- 23 while any compressible bias scores far higher. Avoids libm. */
static double byte_chi_square(const unsigned char *buf, size_t len)
{
    static size_t counts[256];
    memset(counts, 0, sizeof counts);
    for (size_t i = 0; i < len; i++) {
        counts[buf[i]]++;
    }
    double expected = (double)len / 256;
    double chi = 0;
    for (int b = 0; b < 256; b++) {
        double d = (double)counts[b] - expected;
        chi += d * d / expected;
    }
    return chi;
}

static void test_incompressible(const cm_payload *p)
{
    const size_t len = (size_t)4 << 20;
    unsigned char *buf = xmalloc(len);
    cm_payload_fill(p, buf, len, "obj_entropy", 0, 77, test_run);
    double chi = byte_chi_square(buf + H, len - H);
    /* 400 is beyond the 99.999th percentile for random data. */
    CHECK_MSG(chi < 400, "byte histogram chi-square %.1f", chi);

    /* Pairs of adjacent bytes too, which catches short-period structure a histogram misses. */
    static uint32_t pairs[65536];
    memset(pairs, 0, sizeof pairs);
    for (size_t i = H; i + 1 < len; i += 2) {
        pairs[buf[i] << 8 | buf[i + 1]]++;
    }
    uint32_t most = 0;
    for (size_t i = 0; i < 65536; i++) {
        most = pairs[i] > most ? pairs[i] : most;
    }
    /* ~32 expected per pair; 80 would be a > 8-sigma outlier. */
    CHECK_MSG(most < 80, "most common byte pair seen %u times", most);
    free(buf);
}

/* A stage must produce exactly the bytes cm_payload_fill writes, for every size (short ops,
 * bodies checksummed by table, ops longer than max_block), and put the pattern back after
 * each op: thousands of small ops over the same pattern would disagree otherwise. */
static void test_stage_matches_fill(const cm_payload *p)
{
    cm_payload_stage *stage = cm_payload_stage_new(p);
    CHECK(stage != NULL);
    if (!stage) {
        return;
    }
    const size_t sizes[] = {0,
                            1,
                            H - 1,
                            H,
                            H + 1,
                            4096,
                            65536 + H,
                            1 << 20,
                            4 << 20,
                            (4 << 20) + H,
                            (4 << 20) + H + 1,
                            (9 << 20) + 5};
    unsigned char *expected = xmalloc((9 << 20) + 5);
    int mismatches = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (uint64_t seq = 0; seq < 8; seq++) {
            const unsigned char *got =
                cm_payload_stage_op(stage, sizes[i], "stage_obj", 4096 * i, seq, test_run);
            cm_payload_fill(p, expected, sizes[i], "stage_obj", 4096 * i, seq, test_run);
            if (got == NULL || memcmp(got, expected, sizes[i]) != 0) {
                fprintf(stderr, "size %zu seq %llu differs\n", sizes[i], (unsigned long long)seq);
                mismatches++;
            }
            if (got && sizes[i] >= H) {
                mismatches += cm_payload_verify(p, got, sizes[i], "stage_obj", 4096 * i, test_run,
                                                0, NULL) != CM_PAYLOAD_OK;
            }
            cm_payload_stage_release(stage);
        }
    }
    CHECK_MSG(mismatches == 0, "%d staged ops differ from cm_payload_fill", mismatches);
    mismatches = 0;
    for (uint64_t seq = 0; seq < 20000; seq++) {
        const unsigned char *got =
            cm_payload_stage_op(stage, 4096, "small", seq * 4096, seq, test_run);
        cm_payload_fill(p, expected, 4096, "small", seq * 4096, seq, test_run);
        mismatches += got == NULL || memcmp(got, expected, 4096) != 0;
        /* every other op without an explicit release: the next op releases it */
        if (seq % 2) {
            cm_payload_stage_release(stage);
        }
    }
    CHECK_MSG(mismatches == 0, "%d of 20000 staged 4 KiB ops differ", mismatches);
    free(expected);
    cm_payload_stage_free(stage);
}

/* A split op (header + a window of the stage) must be exactly the bytes cm_payload_fill
 * writes, for every size a stage holds, and must never change the stage: librados sends
 * split ops from it while more are being split. Longer ops are refused. */
static void test_stage_split(const cm_payload *p)
{
    size_t storage_size = cm_payload_stage_size(p);
    unsigned char *storage = xmalloc(storage_size);
    cm_payload_stage *stage = cm_payload_stage_new_at(p, storage);
    CHECK(stage != NULL);
    if (!stage) {
        free(storage);
        return;
    }
    /* the stage is primed with small ops' body table too, before the reference crc */
    unsigned char header[H];
    size_t body_offset;
    cm_payload_stage_split(stage, 4096, "prime", 0, 0, test_run, header, &body_offset);
    uint32_t before = cm_crc32c(0, storage, storage_size);

    const size_t sizes[] = {0,    1,         H - 1,   H,       H + 1,
                            4096, 65536 + H, 1 << 20, 4 << 20, (4 << 20) + H};
    unsigned char *expected = xmalloc((4 << 20) + H);
    unsigned char *got = xmalloc((4 << 20) + H);
    int mismatches = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (uint64_t seq = 0; seq < 8; seq++) {
            memset(header, 0xee, sizeof header);
            int head = cm_payload_stage_split(stage, sizes[i], "split_obj", 4096 * i, seq, test_run,
                                              header, &body_offset);
            cm_payload_fill(p, expected, sizes[i], "split_obj", 4096 * i, seq, test_run);
            int want_head = sizes[i] < H ? 0 : H;
            if (head != want_head || body_offset + sizes[i] - (size_t)want_head > storage_size) {
                fprintf(stderr, "size %zu: header %d, body at %zu\n", sizes[i], head, body_offset);
                mismatches++;
                continue;
            }
            memcpy(got, header, (size_t)head);
            memcpy(got + head, storage + body_offset, sizes[i] - (size_t)head);
            if (memcmp(got, expected, sizes[i]) != 0) {
                fprintf(stderr, "split size %zu seq %llu differs\n", sizes[i],
                        (unsigned long long)seq);
                mismatches++;
            }
        }
    }
    CHECK_MSG(mismatches == 0, "%d split ops differ from cm_payload_fill", mismatches);
    mismatches = 0;
    for (uint64_t seq = 0; seq < 20000; seq++) {
        cm_payload_stage_split(stage, 4096, "small", seq * 4096, seq, test_run, header,
                               &body_offset);
        cm_payload_fill(p, expected, 4096, "small", seq * 4096, seq, test_run);
        mismatches += memcmp(header, expected, H) != 0 ||
                      memcmp(storage + body_offset, expected + H, 4096 - H) != 0;
    }
    CHECK_MSG(mismatches == 0, "%d of 20000 split 4 KiB ops differ", mismatches);
    CHECK_MSG(cm_crc32c(0, storage, storage_size) == before, "split ops changed the stage");
    CHECK(cm_payload_stage_split(stage, (4 << 20) + H + 1, "long", 0, 0, test_run, header,
                                 &body_offset) == -1);
    cm_payload_stage_free(stage);
    CHECK_MSG(cm_crc32c(0, storage, storage_size) == before,
              "freeing a stage in the caller's storage changed it");
    free(storage);
    free(expected);
    free(got);
}

/* A payload made for small blocks keeps the bodies of full ops within its first 64 KiB (see
 * payload.h) and must still give thousands of ops distinct bodies, verify them, and stage
 * exactly what it fills. */
static void test_small_block_payload(void)
{
    enum { LEN = 4096, OPS = 2000 };
    cm_payload *p = cm_payload_new(test_seed, LEN);
    cm_payload_stage *stage = p ? cm_payload_stage_new(p) : NULL;
    CHECK(p != NULL && stage != NULL);
    if (!p || !stage) {
        cm_payload_free(p);
        return;
    }
    static uint64_t firsts[OPS];
    unsigned char buf[LEN];
    int mismatches = 0, failures = 0, distinct = 0;
    for (int i = 0; i < OPS; i++) {
        cm_payload_fill(p, buf, LEN, "small_obj", 0, (uint64_t)i, test_run);
        failures += cm_payload_verify(p, buf, LEN, "small_obj", 0, test_run, 0, NULL) != 0;
        const unsigned char *got =
            cm_payload_stage_op(stage, LEN, "small_obj", 0, (uint64_t)i, test_run);
        mismatches += got == NULL || memcmp(got, buf, LEN) != 0;
        cm_payload_stage_release(stage);
        memcpy(&firsts[i], buf + H, sizeof firsts[i]);
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen = firsts[j] == firsts[i];
        }
        distinct += !seen;
    }
    CHECK_MSG(failures == 0, "%d small-block ops fail verification", failures);
    CHECK_MSG(mismatches == 0, "%d staged small-block ops differ from cm_payload_fill", mismatches);
    /* 4096 possible starts: about 1580 distinct bodies in 2000 ops */
    CHECK_MSG(distinct >= 1450, "only %d distinct bodies in %d ops", distinct, OPS);
    cm_payload_stage_free(stage);
    cm_payload_free(p);
}

int main(void)
{
    test_crc_vectors();
    test_crc_hw_matches_sw();

    cm_payload *p = cm_payload_new(test_seed, max_block);
    CHECK(p != NULL);
    if (!p) {
        return check_summary("payload");
    }
    test_roundtrip_sizes(p);
    test_single_byte_corruption(p);
    test_short_ops(p);
    test_misplaced_data(p);
    test_long_names(p);
    test_decode(p);
    test_multi_op_buffer(p);
    test_bodies_differ(p);
    test_incompressible(p);
    test_stage_matches_fill(p);
    test_stage_split(p);
    test_small_block_payload();
    cm_payload_free(p);
    cm_payload_free(NULL);
    return check_summary("payload");
}
