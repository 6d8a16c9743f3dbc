/* CRC-32C: SSE4.2 hardware path with three interleaved streams, slicing-by-8 software fallback,
 * and length-only CRC combination; see crc32c.h. */
#include "crc32c.h"

#include <stdatomic.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CM_CRC32C_X86 1
#include <nmmintrin.h>
#endif

#define CRC32C_POLY 0x82F63B78u

/* The hardware path runs three independent crc32 chains over adjacent blocks, because one chain
 * is bound by the instruction's 3-cycle latency while the CPU can issue one per cycle; the three
 * partial CRCs are then merged with precomputed "append N zero bytes" tables. LONG blocks carry
 * large buffers, SHORT ones the remainder, so only < 3*SHORT bytes go through a single chain. */
#define CRC32C_LONG  8192
#define CRC32C_SHORT 256

/* Raw CRC state -> state after a fixed number of zero bytes, one lookup per state byte. */
struct shift_table {
    uint32_t by_byte[4][256];
};

static uint32_t sw_table[8][256];
static struct shift_table shift_long_table;
static struct shift_table shift_short_table;
/* x^(2^k) mod P for k = 0..67: enough for any 64-bit byte count (2^3 bits per byte). */
static uint32_t x2n_table[68];
static bool hw_supported;

/* 0 = not built, 1 = being built, 2 = ready: tables are built on first use so callers need no
 * init call, and built once even when several threads start at the same time. */
static atomic_int tables_state;

/* a(x) * b(x) mod P(x) in the reflected bit order CRCs use (bit 31 is x^0). */
static uint32_t multiply_mod_poly(uint32_t a, uint32_t b)
{
    uint32_t m = 1U << 31;
    uint32_t product = 0;
    for (;;) {
        if (a & m) {
            product ^= b;
            if ((a & (m - 1)) == 0) {
                break;
            }
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return product;
}

/* x^(n * 2^k) mod P; with k = 3 that is the operator for appending n zero bytes. */
static uint32_t x_pow_mod_poly(uint64_t n, unsigned k)
{
    uint32_t p = 1U << 31;
    while (n) {
        if (n & 1) {
            p = multiply_mod_poly(x2n_table[k], p);
        }
        n >>= 1;
        k++;
    }
    return p;
}

static void build_shift_table(struct shift_table *table, uint64_t zero_bytes)
{
    uint32_t op = x_pow_mod_poly(zero_bytes, 3);
    for (unsigned k = 0; k < 4; k++) {
        for (uint32_t b = 0; b < 256; b++) {
            table->by_byte[k][b] = multiply_mod_poly(op, b << (8 * k));
        }
    }
}

static void build_tables(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int bit = 0; bit < 8; bit++) {
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        }
        sw_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        for (int k = 1; k < 8; k++) {
            uint32_t prev = sw_table[k - 1][n];
            sw_table[k][n] = (prev >> 8) ^ sw_table[0][prev & 0xff];
        }
    }

    uint32_t p = 1U << 30; /* x^1 */
    x2n_table[0] = p;
    for (size_t k = 1; k < sizeof x2n_table / sizeof x2n_table[0]; k++) {
        p = multiply_mod_poly(p, p);
        x2n_table[k] = p;
    }
    build_shift_table(&shift_long_table, CRC32C_LONG);
    build_shift_table(&shift_short_table, CRC32C_SHORT);

#ifdef CM_CRC32C_X86
    __builtin_cpu_init();
    hw_supported = __builtin_cpu_supports("sse4.2");
#else
    hw_supported = false;
#endif
}

static void ensure_tables(void)
{
    if (atomic_load_explicit(&tables_state, memory_order_acquire) == 2) {
        return;
    }
    int expected = 0;
    if (atomic_compare_exchange_strong(&tables_state, &expected, 1)) {
        build_tables();
        atomic_store_explicit(&tables_state, 2, memory_order_release);
        return;
    }
    /* Another thread is building; that takes microseconds, so spinning is fine. */
    while (atomic_load_explicit(&tables_state, memory_order_acquire) != 2) {
    }
}

/* Byte loads keep the software path endian-independent; compilers fuse them into one load. */
static uint32_t load_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t cm_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    ensure_tables();
    const unsigned char *p = buf;
    uint32_t c = ~crc;
    while (len && ((uintptr_t)p & 7)) {
        c = sw_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
        len--;
    }
    while (len >= 8) {
        uint32_t lo = c ^ load_le32(p);
        uint32_t hi = load_le32(p + 4);
        c = sw_table[7][lo & 0xff] ^ sw_table[6][(lo >> 8) & 0xff] ^
            sw_table[5][(lo >> 16) & 0xff] ^ sw_table[4][lo >> 24] ^ sw_table[3][hi & 0xff] ^
            sw_table[2][(hi >> 8) & 0xff] ^ sw_table[1][(hi >> 16) & 0xff] ^ sw_table[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--) {
        c = sw_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    }
    return ~c;
}

#ifdef CM_CRC32C_X86

static uint64_t shift_crc(const struct shift_table *table, uint64_t crc)
{
    return table->by_byte[0][crc & 0xff] ^ table->by_byte[1][(crc >> 8) & 0xff] ^
           table->by_byte[2][(crc >> 16) & 0xff] ^ table->by_byte[3][(crc >> 24) & 0xff];
}

static uint64_t load_u64(const unsigned char *p)
{
    uint64_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

/* Three chains over adjacent blocks of `block` bytes each, merged; returns the new raw state. */
__attribute__((target("sse4.2"))) static uint64_t
hw_triple_blocks(uint64_t c0, const unsigned char **pp, size_t *lenp, size_t block,
                 const struct shift_table *shift_table)
{
    const unsigned char *p = *pp;
    size_t len = *lenp;
    while (len >= 3 * block) {
        uint64_t c1 = 0;
        uint64_t c2 = 0;
        const unsigned char *end = p + block;
        do {
            c0 = _mm_crc32_u64(c0, load_u64(p));
            c1 = _mm_crc32_u64(c1, load_u64(p + block));
            c2 = _mm_crc32_u64(c2, load_u64(p + 2 * block));
            p += 8;
        } while (p < end);
        c0 = shift_crc(shift_table, c0) ^ c1;
        c0 = shift_crc(shift_table, c0) ^ c2;
        p += 2 * block;
        len -= 3 * block;
    }
    *pp = p;
    *lenp = len;
    return c0;
}

__attribute__((target("sse4.2"))) uint32_t cm_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    ensure_tables();
    const unsigned char *p = buf;
    uint64_t c = (uint32_t)~crc;
    while (len && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        len--;
    }
    c = hw_triple_blocks(c, &p, &len, CRC32C_LONG, &shift_long_table);
    c = hw_triple_blocks(c, &p, &len, CRC32C_SHORT, &shift_short_table);
    while (len >= 8) {
        c = _mm_crc32_u64(c, load_u64(p));
        p += 8;
        len -= 8;
    }
    while (len--) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
    }
    return ~(uint32_t)c;
}

#else

uint32_t cm_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    return cm_crc32c_sw(crc, buf, len);
}

#endif

bool cm_crc32c_hw_available(void)
{
    ensure_tables();
    return hw_supported;
}

uint32_t cm_crc32c(uint32_t crc, const void *buf, size_t len)
{
    ensure_tables();
    return hw_supported ? cm_crc32c_hw(crc, buf, len) : cm_crc32c_sw(crc, buf, len);
}

uint32_t cm_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    ensure_tables();
    /* The pre/post inversions cancel out, so only crc_a needs moving past len_b zero bytes. */
    return multiply_mod_poly(x_pow_mod_poly(len_b, 3), crc_a) ^ crc_b;
}

const char *cm_crc32c_implementation(void)
{
    return cm_crc32c_hw_available() ? "sse4.2" : "slicing-by-8";
}
