/* Size and duration parsing; see units.h. */
#include "units.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *skip_space(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

/* "0x10": strtod and strtoull would read it in base 16, and an operator who typed it may
 * mean 16 or may have pasted the wrong thing; either way it is refused, never guessed. */
static bool is_hex(const char *s)
{
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

/* The length of the decimal number at s: digits with an optional fraction, then an
 * optional exponent; 0 if s does not start with one. strtod reads more (hex, "inf",
 * "nan"), so callers compare its end with this one. */
static size_t decimal_length(const char *s)
{
    size_t n = 0, digits = 0;
    while (isdigit((unsigned char)s[n]))
        n++, digits++;
    if (s[n] == '.') {
        n++;
        while (isdigit((unsigned char)s[n]))
            n++, digits++;
    }
    if (digits == 0)
        return 0;
    if (s[n] == 'e' || s[n] == 'E') {
        size_t e = n + 1;
        if (s[e] == '+' || s[e] == '-')
            e++;
        if (isdigit((unsigned char)s[e])) {
            while (isdigit((unsigned char)s[e]))
                e++;
            n = e;
        }
    }
    return n;
}

int cm_parse_number(const char *text, double *value, char *error, size_t error_size)
{
    const char *s = skip_space(text);
    const char *digits = (*s == '+' || *s == '-') ? s + 1 : s;
    if (is_hex(digits)) {
        snprintf(error, error_size, "hexadecimal: write it in decimal");
        return CM_NUMBER_HEX;
    }
    size_t length = decimal_length(digits);
    if (length == 0 || *skip_space(digits + length) != '\0') {
        snprintf(error, error_size, "not a number");
        return CM_NUMBER_SYNTAX;
    }
    double result = strtod(s, NULL);
    if (!isfinite(result)) {
        snprintf(error, error_size, "out of range");
        return CM_NUMBER_RANGE;
    }
    *value = result;
    return 0;
}

int cm_parse_size(const char *text, uint64_t *bytes, char *error, size_t error_size)
{
    static const struct {
        const char *suffix;
        unsigned shift;
    } suffixes[] = {
        {"", 0},    {"b", 0},    {"k", 10}, {"kb", 10}, {"kib", 10}, {"m", 20},
        {"mb", 20}, {"mib", 20}, {"g", 30}, {"gb", 30}, {"gib", 30}, {"t", 40},
        {"tb", 40}, {"tib", 40}, {"p", 50}, {"pb", 50}, {"pib", 50},
    };
    const char *s = skip_space(text);
    if (*s == '-') {
        snprintf(error, error_size, "size '%s' is negative", text);
        return -1;
    }
    if (!isdigit((unsigned char)*s)) {
        snprintf(error, error_size,
                 "size '%s' is not a number with an optional K, M, G or T suffix", text);
        return -1;
    }
    if (is_hex(s)) {
        snprintf(error, error_size, "size '%s' is hexadecimal: write it in decimal", text);
        return -1;
    }
    errno = 0;
    char *end;
    uint64_t value = strtoull(s, &end, 10);
    if (errno == ERANGE) {
        snprintf(error, error_size, "size '%s' is too large", text);
        return -1;
    }
    char suffix[8];
    size_t n = 0;
    const char *rest = skip_space(end);
    while (*rest && !isspace((unsigned char)*rest) && n < sizeof suffix - 1)
        suffix[n++] = (char)*rest++;
    suffix[n] = '\0';
    rest = skip_space(rest);
    if (*rest != '\0') {
        snprintf(error, error_size, "size '%s' has trailing text", text);
        return -1;
    }
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        if (strcasecmp(suffix, suffixes[i].suffix) != 0)
            continue;
        unsigned shift = suffixes[i].shift;
        if (shift && value > (UINT64_MAX >> shift)) {
            snprintf(error, error_size, "size '%s' is too large", text);
            return -1;
        }
        *bytes = value << shift;
        return 0;
    }
    snprintf(error, error_size, "size '%s' has an unknown suffix '%s' (use K, M, G, T or P)", text,
             suffix);
    return -1;
}

int cm_parse_duration(const char *text, double *seconds, char *error, size_t error_size)
{
    static const struct {
        const char *suffix;
        double scale;
    } suffixes[] = {
        {"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"m", 60}, {"min", 60}, {"h", 3600},
    };
    const char *s = skip_space(text);
    if (*s == '-') {
        snprintf(error, error_size, "duration '%s' is negative", text);
        return -1;
    }
    size_t length = decimal_length(s);
    if (length == 0) {
        snprintf(error, error_size,
                 "duration '%s' is not a number with an optional s, ms, m or h suffix", text);
        return -1;
    }
    if (is_hex(s)) {
        snprintf(error, error_size, "duration '%s' is hexadecimal: write it in decimal", text);
        return -1;
    }
    double value = strtod(s, NULL);
    if (!isfinite(value)) {
        snprintf(error, error_size, "duration '%s' is too long", text);
        return -1;
    }
    const char *suffix = skip_space(s + length);
    size_t len = strlen(suffix);
    while (len > 0 && isspace((unsigned char)suffix[len - 1]))
        len--;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        if (strlen(suffixes[i].suffix) == len &&
            strncasecmp(suffix, suffixes[i].suffix, len) == 0) {
            double result = value * suffixes[i].scale;
            if (result > 1e9) {
                snprintf(error, error_size, "duration '%s' is too long", text);
                return -1;
            }
            *seconds = result;
            return 0;
        }
    }
    snprintf(error, error_size, "duration '%s' has an unknown unit '%.*s' (use s, ms, m or h)",
             text, (int)len, suffix);
    return -1;
}

void cm_format_size(uint64_t bytes, char *out, size_t out_size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    unsigned unit = 0;
    double value = (double)bytes;
    while (value >= 1024 && unit < 5) {
        value /= 1024;
        unit++;
    }
    if (unit == 0 || value == floor(value))
        snprintf(out, out_size, "%.0f %s", value, units[unit]);
    else
        snprintf(out, out_size, "%.1f %s", value, units[unit]);
}
