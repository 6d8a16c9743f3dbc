/* Parsing of the sizes and durations operators type: "4K", "4MiB", "64k", "1G"; "10",
 * "10s", "500ms", "2m", "1h". Sizes are binary (K = 1024), as in rados bench and fio. */
#ifndef CEPHMARK_UNITS_H
#define CEPHMARK_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* 0 and *bytes set, or -1 with a sentence in `error` ("size '4X' has an unknown suffix
 * 'X' (use K, M, G, T or P)"). Negative numbers and overflow are refused. */
int cm_parse_size(const char *text, uint64_t *bytes, char *error, size_t error_size);

/* 0 and *seconds set (>= 0), or -1 with a sentence in `error`. Decimal only: "0x10" and
 * overflow ("1e309") are refused, like sizes. */
int cm_parse_duration(const char *text, double *seconds, char *error, size_t error_size);

/* Why cm_parse_number refused a text. */
enum { CM_NUMBER_SYNTAX = -1, CM_NUMBER_HEX = -2, CM_NUMBER_RANGE = -3 };

/* A plain decimal number ("12", "-0.5", "1e3"), surrounding spaces allowed: 0 and *value
 * set, or one of the CM_NUMBER_* codes with the reason in `error` ("not a number",
 * "hexadecimal: write it in decimal", "out of range"). Lua's tonumber and strtod also read
 * hex, "inf", "nan" and let 1e309 become infinity; this refuses all of them. */
int cm_parse_number(const char *text, double *value, char *error, size_t error_size);

/* "4 KiB", "4 MiB", "1.5 GiB", "512 B": for messages and tables. */
void cm_format_size(uint64_t bytes, char *out, size_t out_size);

#endif
