/* libFuzzer target for the size, duration and number parsers (runtime/units.c): any byte
 * string either parses or is refused with a message, what parses reads back the same, and
 * no parser lets a value become infinite or NaN. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0;
    char text[257];
    memcpy(text, data, size);
    text[size] = '\0';
    char error[256];

    uint64_t bytes = 0;
    error[0] = '\0';
    if (cm_parse_size(text, &bytes, error, sizeof error) == 0) {
        /* the decimal byte count is itself a size, and the same one */
        char again[32];
        uint64_t reread = 0;
        snprintf(again, sizeof again, "%llu", (unsigned long long)bytes);
        if (cm_parse_size(again, &reread, error, sizeof error) != 0 || reread != bytes)
            abort();
        char formatted[64];
        cm_format_size(bytes, formatted, sizeof formatted);
        if (formatted[0] == '\0')
            abort();
    } else if (error[0] == '\0') {
        abort(); /* a refusal always says why */
    }

    double seconds = -1;
    error[0] = '\0';
    if (cm_parse_duration(text, &seconds, error, sizeof error) == 0) {
        if (!(seconds >= 0) || isinf(seconds))
            abort();
    } else if (error[0] == '\0') {
        abort();
    }

    double number = 0;
    error[0] = '\0';
    int rc = cm_parse_number(text, &number, error, sizeof error);
    if (rc == 0) {
        if (!isfinite(number))
            abort();
    } else if (error[0] == '\0' ||
               (rc != CM_NUMBER_SYNTAX && rc != CM_NUMBER_HEX && rc != CM_NUMBER_RANGE)) {
        abort();
    }
    return 0;
}
