/* The value of one hexadecimal digit, shared by the JSON and YAML codecs and the HTTP
 * answer parser (chunk sizes). */
#ifndef CEPHMARK_HEX_H
#define CEPHMARK_HEX_H

/* 0-15 for [0-9a-fA-F], else -1. */
static inline int cm_hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
