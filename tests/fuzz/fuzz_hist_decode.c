/* libFuzzer target for the histogram decoder (runtime/hist.c): it must never read outside
 * its input, and an input it accepts must be exactly what cm_hist_encode writes for the
 * decoded histogram. The first byte picks the mode: raw bytes, or the rest with the magic
 * in front and a correct CRC-32C trailer, so the fuzzer gets past the checksum into the
 * field and bucket decoding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "hist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cm_hist decoded;
static unsigned char input[CM_HIST_ENCODED_MAX + 16];
static unsigned char encoded[CM_HIST_ENCODED_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > CM_HIST_ENCODED_MAX)
        return 0;
    size_t length;
    if (data[0] & 1) {
        /* "CMHG" + body + CRC-32C of both, little-endian */
        memcpy(input, "CMHG", 4);
        memcpy(input + 4, data + 1, size - 1);
        size_t body = 4 + size - 1;
        uint32_t crc = cm_crc32c(0, input, body);
        for (int i = 0; i < 4; i++)
            input[body + (size_t)i] = (unsigned char)(crc >> (8 * i));
        length = body + 4;
    } else {
        memcpy(input, data + 1, size - 1);
        length = size - 1;
    }
    /* a heap copy of exactly `length` bytes, so ASan sees any read past the end */
    unsigned char *exact = malloc(length ? length : 1);
    if (exact == NULL)
        return 0;
    memcpy(exact, input, length);
    int result = cm_hist_decode(&decoded, exact, length);
    if (result == 0) {
        size_t written = cm_hist_encode(&decoded, encoded, sizeof encoded);
        if (written != length || memcmp(encoded, exact, length) != 0)
            abort();
        (void)cm_hist_percentile(&decoded, 99.0);
        (void)cm_hist_mean(&decoded);
    } else if (cm_hist_count(&decoded) != 0) {
        abort(); /* a refused input leaves the histogram empty */
    }
    free(exact);
    return 0;
}
