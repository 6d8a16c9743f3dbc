/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the SSE4.2 crc32 instruction when the
 * CPU has it, chosen at run time, else a portable slicing-by-8 table implementation. Payload
 * headers and bodies are checksummed with it. */
#ifndef CEPHMARK_CRC32C_H
#define CEPHMARK_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* zlib-style chaining: start with crc = 0; cm_crc32c(cm_crc32c(0, a, n), b, m) equals the CRC of
 * a followed by b. cm_crc32c(0, "123456789", 9) == 0xE3069283. buf may be NULL when len is 0.
 * Thread-safe; the first call builds tables once. */
uint32_t cm_crc32c(uint32_t crc, const void *buf, size_t len);

/* The CRC of A||B from crc_a = CRC(A), crc_b = CRC(B) and len_b = |B|, without touching the data:
 * O(log len_b) work. */
uint32_t cm_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

/* The individual implementations, exposed so tests can compare them; cm_crc32c_hw must only be
 * called when cm_crc32c_hw_available() is true. */
uint32_t cm_crc32c_sw(uint32_t crc, const void *buf, size_t len);
uint32_t cm_crc32c_hw(uint32_t crc, const void *buf, size_t len);
bool cm_crc32c_hw_available(void);

/* "sse4.2" or "slicing-by-8": which implementation cm_crc32c uses, for logs and reports. */
const char *cm_crc32c_implementation(void);

#endif
