/* YAML codec between YAML text and Lua values (libyaml-based decoder, block-style encoder
 * and the "cephmark.yaml" Lua module); the value mapping and error conventions are
 * documented in yaml_codec.h. */
#include "yaml_codec.h"
#include "hex.h"
#include "value_walk.h"

#include <yaml.h> /* libyaml */

#include <lauxlib.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Stack slots a single nesting level may need, including luaL_Buffer's internal box. */
#define YAML_STACK_PER_LEVEL 12
/* libyaml rejects implicit keys longer than 1024 characters; longer keys are written in the
 * explicit "? key" form. Counted in bytes, which are never fewer than characters. */
#define YAML_MAX_IMPLICIT_KEY 1000

#define YAML_TAG_PREFIX "tag:yaml.org,2002:"

/* Metatable of the userdata that owns load_file's descriptor until it is closed. */
#define YAML_FILE_MT "cephmark.yaml.file"

/* ---------------------------------------------------------------------------------------
 * Shared by decoder and encoder: the YAML 1.2 core schema's resolution of plain scalars,
 * so that the encoder quotes exactly the strings the decoder would not read back as
 * strings. */

typedef enum {
    PLAIN_STRING,
    PLAIN_NULL,
    PLAIN_TRUE,
    PLAIN_FALSE,
    PLAIN_DECIMAL,
    PLAIN_HEX,
    PLAIN_OCTAL,
    PLAIN_FLOAT,
    PLAIN_INF,
    PLAIN_NEG_INF,
    PLAIN_NAN,
} yaml_plain_kind;

static int yaml_is_word(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static int yaml_is_one_of(const char *s, size_t n, const char *const *words)
{
    for (; *words != NULL; words++) {
        if (yaml_is_word(s, n, *words))
            return 1;
    }
    return 0;
}

static int yaml_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
static int yaml_is_core_float(const char *s, size_t n)
{
    const char *p = s;
    const char *end = s + n;
    if (p < end && (*p == '-' || *p == '+'))
        p++;
    if (p < end && *p == '.') {
        p++;
        if (p == end || !yaml_is_digit(*p))
            return 0;
        while (p < end && yaml_is_digit(*p))
            p++;
    } else {
        if (p == end || !yaml_is_digit(*p))
            return 0;
        while (p < end && yaml_is_digit(*p))
            p++;
        if (p < end && *p == '.') {
            p++;
            while (p < end && yaml_is_digit(*p))
                p++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '-' || *p == '+'))
            p++;
        if (p == end || !yaml_is_digit(*p))
            return 0;
        while (p < end && yaml_is_digit(*p))
            p++;
    }
    return p == end;
}

static yaml_plain_kind yaml_classify_plain(const char *s, size_t n)
{
    static const char *const nulls[] = {"~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    static const char *const infs[] = {".inf", ".Inf", ".INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};

    if (n == 0 || yaml_is_one_of(s, n, nulls))
        return PLAIN_NULL;
    if (yaml_is_one_of(s, n, trues))
        return PLAIN_TRUE;
    if (yaml_is_one_of(s, n, falses))
        return PLAIN_FALSE;
    if (yaml_is_one_of(s, n, nans))
        return PLAIN_NAN;
    if (yaml_is_one_of(s, n, infs))
        return PLAIN_INF;
    if ((s[0] == '+' || s[0] == '-') && yaml_is_one_of(s + 1, n - 1, infs))
        return s[0] == '-' ? PLAIN_NEG_INF : PLAIN_INF;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
        int hex = s[1] == 'x';
        size_t i = 2;
        while (i < n && (hex ? cm_hex_value(s[i]) >= 0 : (s[i] >= '0' && s[i] <= '7')))
            i++;
        if (i == n)
            return hex ? PLAIN_HEX : PLAIN_OCTAL;
        return PLAIN_STRING;
    }
    size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
    if (i < n) {
        size_t digits = i;
        while (digits < n && yaml_is_digit(s[digits]))
            digits++;
        if (digits == n)
            return PLAIN_DECIMAL;
    }
    if (yaml_is_core_float(s, n))
        return PLAIN_FLOAT;
    return PLAIN_STRING;
}

/* Strict UTF-8, as libyaml's reader checks it: no overlong forms, surrogates or code points
 * past U+10FFFF. Returns the sequence length at s, or 0 if it is invalid. */
static size_t yaml_utf8_length(const unsigned char *s, size_t avail, unsigned long *cp)
{
    unsigned char c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        *cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        *cp = c & 0x0F;
        if (c == 0xE0)
            low = 0xA0;
        else if (c == 0xED)
            high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        *cp = c & 0x07;
        if (c == 0xF0)
            low = 0x90;
        else if (c == 0xF4)
            high = 0x8F;
    } else {
        return 0;
    }
    if (avail < n || s[1] < low || s[1] > high)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        *cp = (*cp << 6) | (s[i] & 0x3F);
    }
    return n;
}

static int yaml_valid_utf8(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned long cp;
        size_t n = yaml_utf8_length(p + i, len - i, &cp);
        if (n == 0)
            return 0;
        i += n;
    }
    return 1;
}

/* ---------------------------------------------------------------------------------------
 * Decoder: libyaml's event parser drives a recursive descent that builds values on the Lua
 * stack. The parser and its current event live in the caller's C frame and the building
 * runs under lua_pcall, so a Lua error (out of memory) unwinds to a point where both are
 * still freed; it is then raised again. Decode errors are not Lua errors: they set failed
 * and return -1 up the recursion. */

typedef struct {
    lua_State *L;
    yaml_parser_t parser;
    yaml_event_t event;
    int have_event; /* event holds memory that must be freed */
    const char *text;
    size_t len;
    const char *filename;
    char *err;
    size_t errlen;
    int failed;
    int array_mt; /* stack slots, valid inside the protected call */
    int anchors;  /* anchor name -> value, or the in-progress marker */
    long alias_nodes;
} yaml_decoder;

/* Marks an anchor whose collection is still being built: an alias to it is recursive. */
static char yaml_anchor_in_progress;

typedef enum {
    TAG_NONE,
    TAG_NONSPECIFIC,
    TAG_STR,
    TAG_NULL,
    TAG_BOOL,
    TAG_INT,
    TAG_FLOAT,
    TAG_BINARY,
    TAG_SEQ,
    TAG_MAP,
    TAG_UNKNOWN,
} yaml_tag_kind;

static yaml_tag_kind yaml_classify_tag(const yaml_char_t *tag)
{
    static const struct {
        const char *name;
        yaml_tag_kind kind;
    } known[] = {
        {"str", TAG_STR},     {"null", TAG_NULL},     {"bool", TAG_BOOL}, {"int", TAG_INT},
        {"float", TAG_FLOAT}, {"binary", TAG_BINARY}, {"seq", TAG_SEQ},   {"map", TAG_MAP},
    };
    if (tag == NULL)
        return TAG_NONE;
    const char *t = (const char *)tag;
    if (strcmp(t, "!") == 0)
        return TAG_NONSPECIFIC;
    size_t prefix = strlen(YAML_TAG_PREFIX);
    if (strncmp(t, YAML_TAG_PREFIX, prefix) != 0)
        return TAG_UNKNOWN;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(t + prefix, known[i].name) == 0)
            return known[i].kind;
    }
    return TAG_UNKNOWN;
}

/* Shows a tag as written in the common "!!name" shorthand when it has one. */
static void yaml_append_tag(char *dst, size_t cap, size_t *pos, const yaml_char_t *tag)
{
    const char *name = (const char *)tag;
    size_t len = strlen(name);
    size_t prefix = sizeof YAML_TAG_PREFIX - 1;
    if (len >= prefix && memcmp(name, YAML_TAG_PREFIX, prefix) == 0) {
        cm_message_append(dst, cap, pos, "!!");
        name += prefix;
        len -= prefix;
    }
    int bare = len > 0 && len <= CM_MESSAGE_MAX_SHOWN;
    for (size_t i = 0; i < len && bare; i++) {
        unsigned char c = (unsigned char)name[i];
        bare = c > ' ' && c < 0x7f && c != '"' && c != '\\';
    }
    if (bare)
        cm_message_append(dst, cap, pos, "%.*s", (int)len, name);
    else
        cm_message_append_quoted(dst, cap, pos, name, len);
}

CM_PRINTF(4, 0)
static int yaml_vfail(yaml_decoder *d, size_t line, size_t column, const char *fmt, va_list ap)
{
    d->failed = 1;
    if (d->err == NULL || d->errlen == 0)
        return -1;
    int n = snprintf(d->err, d->errlen, "%s:%zu:%zu: ", d->filename, line + 1, column + 1);
    if (n >= 0 && (size_t)n < d->errlen)
        vsnprintf(d->err + n, d->errlen - (size_t)n, fmt, ap);
    return -1;
}

/* line and column are 0-based, as in libyaml's marks. */
CM_PRINTF(4, 5)
static int yaml_fail_at(yaml_decoder *d, size_t line, size_t column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    yaml_vfail(d, line, column, fmt, ap);
    va_end(ap);
    return -1;
}

CM_PRINTF(3, 4)
static int yaml_fail(yaml_decoder *d, const yaml_mark_t *mark, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    yaml_vfail(d, mark->line, mark->column, fmt, ap);
    va_end(ap);
    return -1;
}

/* Skips the UTF-8 byte order mark, which libyaml does not count in its marks. */
static size_t yaml_text_start(const yaml_decoder *d)
{
    if (d->len >= 3 && memcmp(d->text, "\xEF\xBB\xBF", 3) == 0)
        return 3;
    return 0;
}

static int yaml_is_utf16(const yaml_decoder *d)
{
    if (d->len < 2)
        return 0;
    unsigned char a = (unsigned char)d->text[0];
    unsigned char b = (unsigned char)d->text[1];
    return (a == 0xFE && b == 0xFF) || (a == 0xFF && b == 0xFE);
}

/* The byte at libyaml's character index, or -1; used only to recognise a tab. */
static int yaml_byte_at_index(const yaml_decoder *d, size_t index)
{
    if (yaml_is_utf16(d))
        return -1;
    size_t chars = 0;
    for (size_t i = yaml_text_start(d); i < d->len; i++) {
        if (((unsigned char)d->text[i] & 0xC0) == 0x80)
            continue;
        if (chars++ == index)
            return (unsigned char)d->text[i];
    }
    return -1;
}

/* Reader errors (bad UTF-8, control characters) come with a byte offset, not a mark. Lines
 * break as in libyaml (\n, \r\n, lone \r); columns count characters. */
static int yaml_reader_error(yaml_decoder *d)
{
    const yaml_parser_t *p = &d->parser;
    size_t offset = p->problem_offset < d->len ? p->problem_offset : d->len;
    size_t line = 0;
    size_t column = 0;
    if (!yaml_is_utf16(d)) {
        for (size_t i = yaml_text_start(d); i < offset; i++) {
            unsigned char c = (unsigned char)d->text[i];
            if (c == '\n' || (c == '\r' && (i + 1 >= d->len || d->text[i + 1] != '\n'))) {
                line++;
                column = 0;
            } else if ((c & 0xC0) != 0x80 && c != '\r') {
                column++;
            }
        }
    }
    const char *problem = p->problem != NULL ? p->problem : "cannot read the text";
    if (p->problem_value == -1)
        return yaml_fail_at(d, line, column, "%s", problem);
    if (strstr(problem, "octet") != NULL)
        return yaml_fail_at(d, line, column, "%s (byte 0x%02X; YAML text must be UTF-8)", problem,
                            (unsigned)p->problem_value & 0xFF);
    return yaml_fail_at(d, line, column, "%s (U+%04X)", problem, (unsigned)p->problem_value);
}

static int yaml_syntax_error(yaml_decoder *d)
{
    const yaml_parser_t *p = &d->parser;
    const char *problem = p->problem != NULL ? p->problem : "syntax error";
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return yaml_fail(d, &p->mark, "out of memory while parsing");
    case YAML_READER_ERROR:
        return yaml_reader_error(d);
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
        break;
    default:
        return yaml_fail(d, &p->mark, "%s", problem);
    }
    /* The end of the text is no help in finding a quote that was never closed. */
    if (p->context != NULL && strcmp(p->context, "while scanning a quoted scalar") == 0 &&
        strcmp(problem, "found unexpected end of stream") == 0)
        return yaml_fail(d, &p->context_mark,
                         "unclosed quoted string (the text ends before its closing quote)");
    if (yaml_byte_at_index(d, p->problem_mark.index) == '\t')
        return yaml_fail(d, &p->problem_mark,
                         "tab character where YAML expects spaces (tabs cannot be used for "
                         "indentation)");
    if (p->context == NULL)
        return yaml_fail(d, &p->problem_mark, "%s", problem);
    if (p->context_mark.line == p->problem_mark.line &&
        p->context_mark.column == p->problem_mark.column)
        return yaml_fail(d, &p->problem_mark, "%s (%s)", problem, p->context);
    return yaml_fail(d, &p->problem_mark, "%s (%s at line %zu column %zu)", problem, p->context,
                     p->context_mark.line + 1, p->context_mark.column + 1);
}

static void yaml_release_event(yaml_decoder *d)
{
    if (d->have_event) {
        yaml_event_delete(&d->event);
        d->have_event = 0;
    }
}

static int yaml_next(yaml_decoder *d)
{
    yaml_release_event(d);
    if (!yaml_parser_parse(&d->parser, &d->event))
        return yaml_syntax_error(d);
    d->have_event = 1;
    return 0;
}

static const char *yaml_event_name(yaml_event_type_t type)
{
    switch (type) {
    case YAML_STREAM_START_EVENT:
        return "stream start";
    case YAML_STREAM_END_EVENT:
        return "end of stream";
    case YAML_DOCUMENT_START_EVENT:
        return "document start";
    case YAML_DOCUMENT_END_EVENT:
        return "document end";
    case YAML_ALIAS_EVENT:
        return "alias";
    case YAML_SCALAR_EVENT:
        return "scalar";
    case YAML_SEQUENCE_START_EVENT:
        return "sequence";
    case YAML_SEQUENCE_END_EVENT:
        return "end of sequence";
    case YAML_MAPPING_START_EVENT:
        return "mapping";
    case YAML_MAPPING_END_EVENT:
        return "end of mapping";
    default:
        return "nothing";
    }
}

/* libyaml only produces well-formed event sequences; this keeps a surprise from being
 * misread rather than trusted. */
static int yaml_expect(yaml_decoder *d, yaml_event_type_t type)
{
    if (d->event.type == type)
        return 0;
    return yaml_fail(d, &d->event.start_mark, "unexpected %s (expected %s)",
                     yaml_event_name(d->event.type), yaml_event_name(type));
}

static int yaml_node(yaml_decoder *d, int depth);

/* Pushes an anchor's name for yaml_anchor_define; the event that holds it is freed before
 * the collection ends. Collections are marked in progress meanwhile. */
static void yaml_anchor_begin(yaml_decoder *d, const yaml_char_t *anchor)
{
    lua_State *L = d->L;
    lua_pushstring(L, (const char *)anchor);
    lua_pushvalue(L, -1);
    lua_pushlightuserdata(L, &yaml_anchor_in_progress);
    lua_rawset(L, d->anchors);
}

/* Binds the anchor name at name_slot to the value on top, and drops the name. */
static void yaml_anchor_define(yaml_decoder *d, int name_slot)
{
    lua_State *L = d->L;
    lua_pushvalue(L, name_slot);
    lua_pushvalue(L, -2);
    lua_rawset(L, d->anchors);
    lua_remove(L, name_slot);
}

static int yaml_count_alias_node(yaml_decoder *d, const yaml_mark_t *mark)
{
    if (++d->alias_nodes > CM_YAML_MAX_ALIAS_NODES)
        return yaml_fail(d, mark,
                         "aliases expand to more than %d values (refusing what looks like an "
                         "alias bomb)",
                         CM_YAML_MAX_ALIAS_NODES);
    return 0;
}

/* Pushes a deep copy of the decoded table at src; depth counts the collections that will
 * enclose the copy. */
static int yaml_copy_table(yaml_decoder *d, int src, int depth, const yaml_mark_t *mark)
{
    lua_State *L = d->L;
    if (depth >= CM_YAML_MAX_DEPTH)
        return yaml_fail(d, mark, "nesting deeper than %d levels (through this alias)",
                         CM_YAML_MAX_DEPTH);
    if (yaml_count_alias_node(d, mark) != 0)
        return -1;
    if (!lua_checkstack(L, YAML_STACK_PER_LEVEL))
        return yaml_fail(d, mark, "Lua stack exhausted");
    lua_Unsigned length = lua_rawlen(L, src);
    lua_createtable(L, length < INT_MAX ? (int)length : 0, 0);
    int copy = lua_gettop(L);
    if (lua_getmetatable(L, src))
        lua_setmetatable(L, copy);
    lua_pushnil(L);
    while (lua_next(L, src)) {
        if (lua_type(L, -1) == LUA_TTABLE) {
            if (yaml_copy_table(d, lua_gettop(L), depth + 1, mark) != 0)
                return -1;
            lua_replace(L, -2);
        } else if (yaml_count_alias_node(d, mark) != 0) {
            return -1;
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, copy);
    }
    return 0;
}

static int yaml_alias(yaml_decoder *d, int depth)
{
    lua_State *L = d->L;
    const yaml_mark_t mark = d->event.start_mark;
    const char *name = (const char *)d->event.data.alias.anchor;
    lua_pushstring(L, name);
    lua_rawget(L, d->anchors);
    if (lua_isnil(L, -1))
        return yaml_fail(d, &mark, "unknown alias *%.*s (no anchor &%.*s before it)",
                         CM_MESSAGE_MAX_SHOWN, name, CM_MESSAGE_MAX_SHOWN, name);
    if (lua_touserdata(L, -1) == &yaml_anchor_in_progress)
        return yaml_fail(d, &mark,
                         "alias *%.*s is inside the node it refers to (recursive aliases are "
                         "not supported)",
                         CM_MESSAGE_MAX_SHOWN, name);
    if (lua_type(L, -1) != LUA_TTABLE)
        return yaml_count_alias_node(d, &mark);
    if (yaml_copy_table(d, lua_gettop(L), depth, &mark) != 0)
        return -1;
    lua_replace(L, -2);
    return 0;
}

static int yaml_base64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Pushes the bytes of a !!binary scalar; line breaks and spaces (folded or block scalars)
 * are skipped. */

/* Ends a string buffer on an error path and sets the stack back to `top`. Once the buffer
 * outgrows its first block its box is a to-be-closed slot, and Lua 5.4.4's lua_settop keeps a
 * stale stack pointer when closing that slot moves the stack: luaL_pushresult closes the box
 * with lua_closeslot, which does not, and the settop then only drops plain values (the same
 * repair as json.c's json_drop_buffer). */
static void yaml_drop_buffer(luaL_Buffer *b, int top)
{
    luaL_pushresult(b);
    lua_settop(b->L, top);
}

static int yaml_push_binary(yaml_decoder *d, const char *s, size_t n, const yaml_mark_t *mark)
{
    lua_State *L = d->L;
    int top = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    unsigned long bits = 0;
    int nbits = 0;
    size_t symbols = 0;
    size_t padding = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        symbols++;
        if (c == '=') {
            padding++;
            continue;
        }
        int v = yaml_base64_value(c);
        if (v < 0 || padding > 0) {
            yaml_drop_buffer(&b, top);
            return yaml_fail(d, mark, "invalid base64 in !!binary scalar (at character %zu)",
                             i + 1);
        }
        bits = (bits << 6) | (unsigned long)v;
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            luaL_addchar(&b, (char)((bits >> nbits) & 0xFF));
            bits &= (1UL << nbits) - 1;
        }
    }
    if (symbols % 4 != 0 || padding > 2) {
        yaml_drop_buffer(&b, top);
        return yaml_fail(d, mark,
                         "invalid base64 in !!binary scalar (length must be a multiple of 4)");
    }
    luaL_pushresult(&b);
    return 0;
}

/* Pushes a decimal integer or float whose text matched the core schema; Lua converts it so
 * that integers overflowing int64 become floats, as in JSON. */
static int yaml_push_number(yaml_decoder *d, const char *s, size_t n, const yaml_mark_t *mark)
{
    lua_State *L = d->L;
    size_t used;
    char small[64];
    if (n < sizeof small) {
        memcpy(small, s, n);
        small[n] = '\0';
        used = lua_stringtonumber(L, small);
    } else {
        lua_pushlstring(L, s, n);
        used = lua_stringtonumber(L, lua_tostring(L, -1));
        if (used != 0)
            lua_remove(L, -2);
        else
            lua_pop(L, 1);
    }
    if (used != n + 1) {
        if (used != 0)
            lua_pop(L, 1);
        return yaml_fail(d, mark, "number %.*s is out of range", CM_MESSAGE_MAX_SHOWN, s);
    }
    return 0;
}

/* 0x and 0o integers are bit patterns: rounding them to a float would be wrong. */
static int yaml_push_radix_integer(yaml_decoder *d, const char *s, size_t n, unsigned radix,
                                   const yaml_mark_t *mark)
{
    uint64_t value = 0;
    for (size_t i = 2; i < n; i++) {
        unsigned digit = (unsigned)cm_hex_value(s[i]);
        if (value > ((uint64_t)INT64_MAX - digit) / radix)
            return yaml_fail(d, mark, "integer %.*s does not fit in a signed 64-bit integer",
                             CM_MESSAGE_MAX_SHOWN, s);
        value = value * radix + digit;
    }
    lua_pushinteger(d->L, (lua_Integer)value);
    return 0;
}

/* Pushes the value of a scalar as kind resolves it; returns -2 (nothing pushed, no error)
 * when kind is a string, so that callers can check explicit tags. */
static int yaml_push_resolved(yaml_decoder *d, yaml_plain_kind kind, const char *s, size_t n,
                              const yaml_mark_t *mark)
{
    lua_State *L = d->L;
    switch (kind) {
    case PLAIN_NULL:
        cm_json_push_null(L);
        return 0;
    case PLAIN_TRUE:
    case PLAIN_FALSE:
        lua_pushboolean(L, kind == PLAIN_TRUE);
        return 0;
    case PLAIN_DECIMAL:
    case PLAIN_FLOAT:
        return yaml_push_number(d, s, n, mark);
    case PLAIN_HEX:
        return yaml_push_radix_integer(d, s, n, 16, mark);
    case PLAIN_OCTAL:
        return yaml_push_radix_integer(d, s, n, 8, mark);
    case PLAIN_INF:
        lua_pushnumber(L, (lua_Number)HUGE_VAL);
        return 0;
    case PLAIN_NEG_INF:
        lua_pushnumber(L, (lua_Number)-HUGE_VAL);
        return 0;
    case PLAIN_NAN:
        lua_pushnumber(L, (lua_Number)NAN);
        return 0;
    case PLAIN_STRING:
    default:
        return -2;
    }
}

/* Pushes a scalar tagged !!null, !!bool, !!int or !!float, which must read as that type. */
static int yaml_push_typed(yaml_decoder *d, yaml_tag_kind tag, const char *s, size_t n,
                           const yaml_mark_t *mark)
{
    static const char *const type_names[] = {
        [TAG_NULL] = "null",
        [TAG_BOOL] = "a boolean",
        [TAG_INT] = "an integer",
        [TAG_FLOAT] = "a number",
    };
    yaml_plain_kind kind = yaml_classify_plain(s, n);
    int ok;
    switch (tag) {
    case TAG_NULL:
        ok = kind == PLAIN_NULL;
        break;
    case TAG_BOOL:
        ok = kind == PLAIN_TRUE || kind == PLAIN_FALSE;
        break;
    case TAG_INT:
        ok = kind == PLAIN_DECIMAL || kind == PLAIN_HEX || kind == PLAIN_OCTAL;
        break;
    default:
        ok = kind == PLAIN_DECIMAL || kind == PLAIN_FLOAT || kind == PLAIN_INF ||
             kind == PLAIN_NEG_INF || kind == PLAIN_NAN;
        break;
    }
    if (!ok) {
        char shown[CM_MESSAGE_MAX_SHOWN * 4 + 8];
        size_t pos = 0;
        cm_message_append_quoted(shown, sizeof shown, &pos, s, n);
        return yaml_fail(d, mark, "%s is not %s (as its tag requires)", shown, type_names[tag]);
    }
    if (yaml_push_resolved(d, kind, s, n, mark) != 0)
        return -1;
    if (tag == TAG_INT && !lua_isinteger(d->L, -1)) {
        lua_pop(d->L, 1);
        return yaml_fail(d, mark, "integer %.*s does not fit in a signed 64-bit integer",
                         CM_MESSAGE_MAX_SHOWN, s);
    }
    if (tag == TAG_FLOAT && lua_isinteger(d->L, -1)) {
        lua_Number x = (lua_Number)lua_tointeger(d->L, -1);
        lua_pop(d->L, 1);
        lua_pushnumber(d->L, x);
    }
    return 0;
}

static int yaml_fail_tag(yaml_decoder *d, const yaml_mark_t *mark, const yaml_char_t *tag,
                         const char *what)
{
    char shown[CM_MESSAGE_MAX_SHOWN * 4 + 8];
    size_t pos = 0;
    yaml_append_tag(shown, sizeof shown, &pos, tag);
    if (yaml_classify_tag(tag) == TAG_UNKNOWN)
        return yaml_fail(d, mark,
                         "unsupported tag %s (supported: !!str, !!int, !!float, !!bool, "
                         "!!null, !!binary, !!seq, !!map)",
                         shown);
    return yaml_fail(d, mark, "tag %s cannot be used on a %s", shown, what);
}

static int yaml_scalar(yaml_decoder *d)
{
    lua_State *L = d->L;
    const yaml_event_t *ev = &d->event;
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    yaml_tag_kind tag = yaml_classify_tag(ev->data.scalar.tag);
    int rc = 0;
    switch (tag) {
    case TAG_NONE:
        rc = -2;
        if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
            rc = yaml_push_resolved(d, yaml_classify_plain(s, n), s, n, &ev->start_mark);
        if (rc == -2) {
            lua_pushlstring(L, s, n);
            rc = 0;
        }
        break;
    case TAG_NONSPECIFIC:
    case TAG_STR:
        lua_pushlstring(L, s, n);
        break;
    case TAG_NULL:
    case TAG_BOOL:
    case TAG_INT:
    case TAG_FLOAT:
        rc = yaml_push_typed(d, tag, s, n, &ev->start_mark);
        break;
    case TAG_BINARY:
        rc = yaml_push_binary(d, s, n, &ev->start_mark);
        break;
    default:
        return yaml_fail_tag(d, &ev->start_mark, ev->data.scalar.tag, "scalar");
    }
    if (rc == 0 && ev->data.scalar.anchor != NULL) {
        yaml_anchor_begin(d, ev->data.scalar.anchor);
        lua_pushvalue(L, -2);
        lua_rawset(L, d->anchors);
    }
    return rc;
}

static int yaml_sequence(yaml_decoder *d, int depth)
{
    lua_State *L = d->L;
    const yaml_event_t *ev = &d->event;
    if (depth >= CM_YAML_MAX_DEPTH)
        return yaml_fail(d, &ev->start_mark, "nesting deeper than %d levels", CM_YAML_MAX_DEPTH);
    yaml_tag_kind tag = yaml_classify_tag(ev->data.sequence_start.tag);
    if (tag != TAG_NONE && tag != TAG_NONSPECIFIC && tag != TAG_SEQ)
        return yaml_fail_tag(d, &ev->start_mark, ev->data.sequence_start.tag, "sequence");
    int name_slot = 0;
    if (ev->data.sequence_start.anchor != NULL) {
        yaml_anchor_begin(d, ev->data.sequence_start.anchor);
        name_slot = lua_gettop(L);
    }
    lua_newtable(L);
    lua_pushvalue(L, d->array_mt);
    lua_setmetatable(L, -2);
    for (lua_Integer n = 1;; n++) {
        if (yaml_next(d) != 0)
            return -1;
        if (d->event.type == YAML_SEQUENCE_END_EVENT)
            break;
        if (yaml_node(d, depth + 1) != 0)
            return -1;
        lua_rawseti(L, -2, n);
    }
    if (name_slot != 0)
        yaml_anchor_define(d, name_slot);
    return 0;
}

/* Pushes the key of a mapping entry (the current event) as a string, checked to be
 * usable and not yet in the mapping at map. */
static int yaml_key(yaml_decoder *d, int map)
{
    lua_State *L = d->L;
    const yaml_event_t *ev = &d->event;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        break;
    case YAML_SEQUENCE_START_EVENT:
        return yaml_fail(d, &ev->start_mark, "mapping key must be a scalar, got a sequence");
    case YAML_MAPPING_START_EVENT:
        return yaml_fail(d, &ev->start_mark, "mapping key must be a scalar, got a mapping");
    case YAML_ALIAS_EVENT:
        return yaml_fail(d, &ev->start_mark,
                         "mapping key must be a scalar, got an alias (aliases cannot be keys)");
    default:
        return yaml_fail(d, &ev->start_mark, "unexpected %s (expected a mapping key)",
                         yaml_event_name(ev->type));
    }

    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    yaml_tag_kind tag = yaml_classify_tag(ev->data.scalar.tag);
    if (tag == TAG_UNKNOWN || tag == TAG_SEQ || tag == TAG_MAP)
        return yaml_fail_tag(d, &ev->start_mark, ev->data.scalar.tag, "mapping key");
    if (tag == TAG_NONE && plain && n == 0)
        return yaml_fail(d, &ev->start_mark, "mapping key is empty");
    if (tag == TAG_NONE && plain && yaml_is_word(s, n, "<<"))
        return yaml_fail(d, &ev->start_mark,
                         "merge keys (<<) are not supported (write the keys out, or quote "
                         "\"<<\" to use it as a plain key)");
    if (tag == TAG_BINARY) {
        if (yaml_push_binary(d, s, n, &ev->start_mark) != 0)
            return -1;
    } else {
        lua_pushlstring(L, s, n);
    }
    if (ev->data.scalar.anchor != NULL) {
        yaml_anchor_begin(d, ev->data.scalar.anchor);
        lua_pushvalue(L, -2);
        lua_rawset(L, d->anchors);
    }

    lua_pushvalue(L, -1);
    if (lua_rawget(L, map) != LUA_TNIL) {
        char shown[CM_MESSAGE_MAX_SHOWN * 4 + 8];
        size_t pos = 0;
        size_t len;
        const char *key = lua_tolstring(L, -2, &len);
        cm_message_append_quoted(shown, sizeof shown, &pos, key, len);
        return yaml_fail(d, &ev->start_mark, "duplicate key %s", shown);
    }
    lua_pop(L, 1);
    return 0;
}

static int yaml_mapping(yaml_decoder *d, int depth)
{
    lua_State *L = d->L;
    const yaml_event_t *ev = &d->event;
    if (depth >= CM_YAML_MAX_DEPTH)
        return yaml_fail(d, &ev->start_mark, "nesting deeper than %d levels", CM_YAML_MAX_DEPTH);
    yaml_tag_kind tag = yaml_classify_tag(ev->data.mapping_start.tag);
    if (tag != TAG_NONE && tag != TAG_NONSPECIFIC && tag != TAG_MAP)
        return yaml_fail_tag(d, &ev->start_mark, ev->data.mapping_start.tag, "mapping");
    int name_slot = 0;
    if (ev->data.mapping_start.anchor != NULL) {
        yaml_anchor_begin(d, ev->data.mapping_start.anchor);
        name_slot = lua_gettop(L);
    }
    lua_newtable(L);
    int map = lua_gettop(L);
    for (;;) {
        if (yaml_next(d) != 0)
            return -1;
        if (d->event.type == YAML_MAPPING_END_EVENT)
            break;
        if (yaml_key(d, map) != 0 || yaml_next(d) != 0 || yaml_node(d, depth + 1) != 0)
            return -1;
        lua_rawset(L, map);
    }
    if (name_slot != 0)
        yaml_anchor_define(d, name_slot);
    return 0;
}

/* Pushes the node whose first event is current; leaves its last event current. depth
 * counts the collections enclosing it. */
static int yaml_node(yaml_decoder *d, int depth)
{
    if (!lua_checkstack(d->L, YAML_STACK_PER_LEVEL))
        return yaml_fail(d, &d->event.start_mark, "Lua stack exhausted");
    switch (d->event.type) {
    case YAML_SCALAR_EVENT:
        return yaml_scalar(d);
    case YAML_SEQUENCE_START_EVENT:
        return yaml_sequence(d, depth);
    case YAML_MAPPING_START_EVENT:
        return yaml_mapping(d, depth);
    case YAML_ALIAS_EVENT:
        return yaml_alias(d, depth);
    default:
        return yaml_fail(d, &d->event.start_mark, "unexpected %s (expected a value)",
                         yaml_event_name(d->event.type));
    }
}

static int yaml_stream(yaml_decoder *d)
{
    if (yaml_next(d) != 0 || yaml_expect(d, YAML_STREAM_START_EVENT) != 0 || yaml_next(d) != 0)
        return -1;
    if (d->event.type == YAML_STREAM_END_EVENT) {
        lua_pushnil(d->L);
        return 0;
    }
    if (yaml_expect(d, YAML_DOCUMENT_START_EVENT) != 0 || yaml_next(d) != 0 ||
        yaml_node(d, 0) != 0 || yaml_next(d) != 0 || yaml_expect(d, YAML_DOCUMENT_END_EVENT) != 0 ||
        yaml_next(d) != 0)
        return -1;
    if (d->event.type == YAML_DOCUMENT_START_EVENT)
        return yaml_fail(d, &d->event.start_mark,
                         "a second document starts here (expected a single document)");
    return yaml_expect(d, YAML_STREAM_END_EVENT);
}

/* Runs under lua_pcall: everything that may raise happens here. */
static int yaml_decode_protected(lua_State *L)
{
    yaml_decoder *d = lua_touserdata(L, 1);
    luaL_newmetatable(L, CM_JSON_ARRAY_MT);
    d->array_mt = lua_gettop(L);
    lua_newtable(L);
    d->anchors = lua_gettop(L);
    if (yaml_stream(d) != 0)
        return 0;
    return 1;
}

int cm_yaml_decode(lua_State *L, const char *text, size_t len, const char *filename, char *err,
                   size_t errlen)
{
    yaml_decoder d;
    memset(&d, 0, sizeof d);
    d.L = L;
    d.text = text != NULL ? text : "";
    d.len = text != NULL ? len : 0;
    d.filename = filename != NULL ? filename : "<string>";
    d.err = err;
    d.errlen = errlen;
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (!lua_checkstack(L, 3))
        return yaml_fail_at(&d, 0, 0, "Lua stack exhausted");
    if (!yaml_parser_initialize(&d.parser))
        return yaml_fail_at(&d, 0, 0, "out of memory while starting the parser");
    yaml_parser_set_input_string(&d.parser, (const unsigned char *)d.text, d.len);

    lua_pushcfunction(L, yaml_decode_protected);
    lua_pushlightuserdata(L, &d);
    int status = lua_pcall(L, 1, 1, 0);
    yaml_release_event(&d);
    yaml_parser_delete(&d.parser);
    if (status != LUA_OK)
        return lua_error(L);
    if (d.failed) {
        lua_pop(L, 1);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Encoder: events for libyaml's emitter, which lays out the block YAML (indentation,
 * escapes in double-quoted scalars, explicit keys), fed by the walk shared with the JSON
 * encoder (value_walk.h), which owns the output buffer, the path for error messages and the
 * table checks, so that both codecs agree on what is an array, an object or an error. What
 * stays here is what the emitter cannot know: which strings must be quoted to read back as
 * strings, how floats are written to read back exactly, and binary strings. */

static const cm_walk_codec yaml_codec = {"yaml.null", "YAML output too large", 0};

/* The walk refuses tables past its own limit, which yaml_codec.h promises to be this one. */
_Static_assert(CM_YAML_MAX_DEPTH == CM_WALK_MAX_DEPTH, "YAML and the walk disagree on depth");

typedef struct {
    cm_walk walk;
    yaml_emitter_t emitter;
} yaml_encoder;

/* Strings that YAML 1.1 readers (PyYAML, older tools) would take for booleans, numbers,
 * sexagesimals or timestamps, though the 1.2 core schema reads them as strings. */
static int yaml_is_yaml11_special(const char *s, size_t n)
{
    static const char *const words[] = {"y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no", "No",
                                        "NO", "on", "On",  "ON",  "off", "Off", "OFF", NULL};
    if (yaml_is_one_of(s, n, words))
        return 1;
    if (!yaml_is_digit(s[0]) && s[0] != '.')
        return 0;
    /* dates, times and sexagesimals: 2024-03-11, 2024-03-11T10:00:00Z, 190:20:30 */
    if (yaml_is_digit(s[0]) && (memchr(s, ':', n) != NULL || memchr(s, '-', n) != NULL))
        return 1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (cm_hex_value(c) < 0 && strchr("xXoObB_.:+-", c) == NULL)
            return 0;
    }
    return 1;
}

/* The one quoting decision the emitter cannot make: it lays out any string so that it
 * parses back as a scalar (plain when it can, else single or double quotes), but it does
 * not know that "3", "true", "~" or "1.5" would be resolved as a number, a boolean or null,
 * nor that a plain "<<" is a merge key. Those, and what YAML 1.1 readers (PyYAML) would
 * resolve so, go in double quotes; the emitter chooses for the rest. */
static yaml_scalar_style_t yaml_string_style(const char *s, size_t n)
{
    if (yaml_classify_plain(s, n) != PLAIN_STRING || yaml_is_yaml11_special(s, n) ||
        yaml_is_word(s, n, "<<"))
        return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return YAML_ANY_SCALAR_STYLE;
}

/* The emitter fails only when it cannot allocate: its events are built here, in order. */
static int yaml_emit(yaml_encoder *e, yaml_event_t *event, int initialized)
{
    if (initialized && yaml_emitter_emit(&e->emitter, event))
        return 0;
    return cm_walk_fail(&e->walk, "out of memory in the YAML emitter");
}

/* tag NULL: a scalar resolved as plain or quoted text reads it; otherwise tagged. */
static int yaml_emit_scalar(yaml_encoder *e, const char *tag, const char *s, size_t len,
                            yaml_scalar_style_t style)
{
    if (len > INT_MAX)
        return cm_walk_fail(&e->walk, "string of %zu bytes is too long for YAML", len);
    yaml_event_t event;
    int implicit = tag == NULL;
    return yaml_emit(e, &event,
                     yaml_scalar_event_initialize(&event, NULL, (yaml_char_t *)tag,
                                                  (yaml_char_t *)s, (int)len, implicit, implicit,
                                                  style));
}

/* YAML text is Unicode: bytes that are not UTF-8 can only travel as !!binary base64. */
static int yaml_emit_binary(yaml_encoder *e, const char *s, size_t len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    lua_State *L = e->walk.L;
    const unsigned char *p = (const unsigned char *)s;
    luaL_Buffer b;
    char *out = luaL_buffinitsize(L, &b, (len + 2) / 3 * 4);
    for (size_t i = 0; i < len; i += 3) {
        unsigned long group = (unsigned long)p[i] << 16;
        if (i + 1 < len)
            group |= (unsigned long)p[i + 1] << 8;
        if (i + 2 < len)
            group |= p[i + 2];
        *out++ = alphabet[(group >> 18) & 0x3F];
        *out++ = alphabet[(group >> 12) & 0x3F];
        *out++ = (char)(i + 1 < len ? alphabet[(group >> 6) & 0x3F] : '=');
        *out++ = (char)(i + 2 < len ? alphabet[group & 0x3F] : '=');
    }
    luaL_pushresultsize(&b, (len + 2) / 3 * 4);
    size_t n;
    const char *text = lua_tolstring(L, -1, &n);
    int rc =
        yaml_emit_scalar(e, YAML_TAG_PREFIX "binary", text, n, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    lua_pop(L, 1);
    return rc;
}

static int yaml_emit_string(yaml_encoder *e, const char *s, size_t len)
{
    if (!yaml_valid_utf8(s, len))
        return yaml_emit_binary(e, s, len);
    return yaml_emit_scalar(e, NULL, s, len, yaml_string_style(s, len));
}

/* Shortest "%.*g" that reads back to the same double, with a '.' whatever LC_NUMERIC says,
 * and always a float to the core schema so decoding gives a float back. Returns the
 * length written to out. */
static size_t yaml_format_float(double x, char out[static 48])
{
    if (isnan(x))
        return (size_t)snprintf(out, 48, ".nan");
    if (isinf(x))
        return (size_t)snprintf(out, 48, "%s", x > 0 ? ".inf" : "-.inf");
    char text[40];
    snprintf(text, sizeof text, "%.*g", cm_walk_float_digits(x), x);
    /* %g switches to an exponent once it has more integer digits than significant ones;
     * below 1e17 such a value is integral and reads better (and exactly) as 1000.0. */
    const char *exponent = strchr(text, 'e');
    if (exponent != NULL && exponent[1] == '+' && strtol(exponent + 2, NULL, 10) < 17)
        snprintf(text, sizeof text, "%.0f", x);
    /* YAML 1.1 readers (PyYAML) only take a float with a '.' in its mantissa: 1.0e-07. */
    size_t n = 0;
    int has_point = 0;
    for (const char *c = text; *c != '\0'; c++) {
        if (yaml_is_digit(*c) || *c == '-' || *c == '+') {
            out[n++] = *c;
        } else if (*c == 'e') {
            if (!has_point) {
                out[n++] = '.';
                out[n++] = '0';
                has_point = 1;
            }
            out[n++] = 'e';
        } else if (!has_point) {
            out[n++] = '.'; /* the locale's decimal point, possibly multibyte */
            has_point = 1;
        }
    }
    if (!has_point) {
        out[n++] = '.';
        out[n++] = '0';
    }
    return n;
}

static int yaml_encode_value(yaml_encoder *e, int index);

/* Emits the entries of a non-empty table: items of an array, sorted members of an object. */
static int yaml_encode_entries(yaml_encoder *e, int index, lua_Integer count, int is_array)
{
    cm_walk *w = &e->walk;
    lua_State *L = w->L;
    if (is_array) {
        for (lua_Integer i = 1; i <= count; i++) {
            lua_rawgeti(L, index, i);
            cm_walk_down_index(w, i);
            int rc = yaml_encode_value(e, lua_gettop(L));
            cm_walk_up(w);
            lua_pop(L, 1);
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    int values;
    const cm_walk_member *members = cm_walk_sorted_members(w, index, count, &values);
    if (members == NULL)
        return -1;
    for (lua_Integer i = 0; i < count; i++) {
        const cm_walk_member *m = &members[i];
        if (yaml_emit_string(e, m->key, m->len) != 0)
            return -1;
        lua_rawgeti(L, values, m->slot);
        cm_walk_down_key(w, m);
        int rc = yaml_encode_value(e, lua_gettop(L));
        cm_walk_up(w);
        lua_pop(L, 1);
        if (rc != 0)
            return rc;
    }
    lua_pop(L, CM_WALK_MEMBER_SLOTS);
    return 0;
}

/* Empty tables are written in flow style, "[]" and "{}", everything else in block style. */
static int yaml_encode_table(yaml_encoder *e, int index)
{
    lua_Integer count;
    int is_array;
    if (cm_walk_enter_table(&e->walk, index, &count, &is_array) != 0)
        return -1;
    yaml_event_t event;
    int initialized;
    if (is_array)
        initialized = yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
                                                           count == 0 ? YAML_FLOW_SEQUENCE_STYLE
                                                                      : YAML_BLOCK_SEQUENCE_STYLE);
    else
        initialized = yaml_mapping_start_event_initialize(
            &event, NULL, NULL, 1, count == 0 ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
    if (yaml_emit(e, &event, initialized) != 0 ||
        (count > 0 && yaml_encode_entries(e, index, count, is_array) != 0))
        return -1;
    initialized = is_array ? yaml_sequence_end_event_initialize(&event)
                           : yaml_mapping_end_event_initialize(&event);
    if (yaml_emit(e, &event, initialized) != 0)
        return -1;
    cm_walk_leave_table(&e->walk, index);
    return 0;
}

static int yaml_encode_value(yaml_encoder *e, int index)
{
    lua_State *L = e->walk.L;
    char text[48];
    size_t len;
    switch (lua_type(L, index)) {
    case LUA_TTABLE:
        return yaml_encode_table(e, index);
    case LUA_TBOOLEAN:
        len = (size_t)snprintf(text, sizeof text, "%s", lua_toboolean(L, index) ? "true" : "false");
        break;
    case LUA_TNUMBER:
        if (lua_isinteger(L, index))
            len = (size_t)snprintf(text, sizeof text, LUA_INTEGER_FMT, lua_tointeger(L, index));
        else
            len = yaml_format_float((double)lua_tonumber(L, index), text);
        break;
    case LUA_TSTRING: {
        const char *s = lua_tolstring(L, index, &len);
        return yaml_emit_string(e, s, len);
    }
    case LUA_TNIL:
        len = (size_t)snprintf(text, sizeof text, "null");
        break;
    default:
        if (!cm_json_isnull(L, index))
            return cm_walk_fail_unencodable(&e->walk, index);
        len = (size_t)snprintf(text, sizeof text, "null");
        break;
    }
    return yaml_emit_scalar(e, NULL, text, len, YAML_PLAIN_SCALAR_STYLE);
}

/* The emitter's flushes land in the walk's buffer; growing it may raise, which is why the
 * emitter only runs under lua_pcall. */
static int yaml_write_output(void *data, unsigned char *buffer, size_t size)
{
    cm_walk_put(data, (const char *)buffer, size);
    return 1;
}

/* One document without "---" or "...", in 2-space indentation, UTF-8 kept as is and no
 * line folding, so that a long string stays on its line. Runs under lua_pcall with the
 * encoder and the value to encode as arguments. */
static int yaml_encode_protected(lua_State *L)
{
    yaml_encoder *e = lua_touserdata(L, 1);
    cm_walk *w = &e->walk;
    if (cm_walk_open(w) != 0)
        return 0;
    yaml_emitter_set_output(&e->emitter, yaml_write_output, w);
    yaml_emitter_set_unicode(&e->emitter, 1);
    yaml_emitter_set_width(&e->emitter, -1);
    yaml_emitter_set_indent(&e->emitter, 2);
    yaml_event_t event;
    int rc = yaml_emit(e, &event, yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING));
    if (rc == 0)
        rc =
            yaml_emit(e, &event, yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 1));
    if (rc == 0)
        rc = yaml_encode_value(e, 2);
    if (rc == 0)
        rc = yaml_emit(e, &event, yaml_document_end_event_initialize(&event, 1));
    if (rc == 0)
        rc = yaml_emit(e, &event, yaml_stream_end_event_initialize(&event));
    return cm_walk_close(w, rc) == 0 ? 1 : 0;
}

int cm_yaml_encode_named(lua_State *L, int index, const char *name, char *err, size_t errlen)
{
    yaml_encoder e;
    cm_walk_init(&e.walk, L, &yaml_codec, name, err, errlen);
    index = lua_absindex(L, index);
    if (!lua_checkstack(L, 4))
        return cm_walk_fail(&e.walk, "Lua stack exhausted");
    if (!yaml_emitter_initialize(&e.emitter))
        return cm_walk_fail(&e.walk, "out of memory while starting the YAML emitter");
    int top = lua_gettop(L);
    lua_pushcfunction(L, yaml_encode_protected);
    lua_pushlightuserdata(L, &e);
    lua_pushvalue(L, index);
    int status = lua_pcall(L, 2, LUA_MULTRET, 0);
    yaml_emitter_delete(&e.emitter);
    if (status != LUA_OK)
        return lua_error(L);
    return lua_gettop(L) > top ? 0 : -1;
}

int cm_yaml_encode(lua_State *L, int index, char *err, size_t errlen)
{
    return cm_yaml_encode_named(L, index, NULL, err, errlen);
}

/* ---------------------------------------------------------------------------------------
 * Files: the descriptor is owned by a userdata whose __gc closes it, so a memory error
 * while the contents are collected cannot leak it. */

typedef struct {
    int fd;
} yaml_file;

static int yaml_file_gc(lua_State *L)
{
    yaml_file *f = luaL_checkudata(L, 1, YAML_FILE_MT);
    if (f->fd >= 0) {
        close(f->fd);
        f->fd = -1;
    }
    return 0;
}

static int yaml_read_fail(char *err, size_t errlen, const char *path, int error)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(error));
    return -1;
}

int cm_yaml_load_file(lua_State *L, const char *path, char *err, size_t errlen)
{
    int base = lua_gettop(L);
    if (!lua_checkstack(L, YAML_STACK_PER_LEVEL))
        return yaml_read_fail(err, errlen, path, ENOMEM);
    yaml_file *f = lua_newuserdatauv(L, sizeof *f, 0);
    f->fd = -1;
    if (luaL_newmetatable(L, YAML_FILE_MT)) {
        lua_pushcfunction(L, yaml_file_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);

    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        int error = errno;
        lua_settop(L, base);
        return yaml_read_fail(err, errlen, path, error);
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (;;) {
        char *space = luaL_prepbuffsize(&b, 65536);
        ssize_t n = read(f->fd, space, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int error = errno;
            close(f->fd);
            f->fd = -1;
            yaml_drop_buffer(&b, base);
            return yaml_read_fail(err, errlen, path, error);
        }
        if (n == 0)
            break;
        luaL_addsize(&b, (size_t)n);
    }
    close(f->fd);
    f->fd = -1;
    luaL_pushresult(&b);

    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    if (cm_yaml_decode(L, text, len, path, err, errlen) != 0) {
        lua_settop(L, base);
        return -1;
    }
    lua_replace(L, base + 1);
    lua_settop(L, base + 1);
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * Lua module "cephmark.yaml". Messages can name a long path or filename. */

#define YAML_LUA_ERRLEN 1024

static int yaml_lua_decode(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TSTRING)
        return luaL_typeerror(L, 1, "string");
    if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TSTRING)
        return luaL_typeerror(L, 2, "string or nil (a filename for error messages)");
    size_t len;
    const char *text = lua_tolstring(L, 1, &len);
    const char *filename = lua_tostring(L, 2);
    char err[YAML_LUA_ERRLEN];
    if (cm_yaml_decode(L, text, len, filename, err, sizeof err) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    return 1;
}

static int yaml_lua_load_file(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TSTRING)
        return luaL_typeerror(L, 1, "string (a file path)");
    char err[YAML_LUA_ERRLEN];
    if (cm_yaml_load_file(L, lua_tostring(L, 1), err, sizeof err) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    return 1;
}

/* Reads encode's options table; unknown keys raise so that typos are not silently
 * ignored. Leaves the name (if any) on the stack, anchored while it is used. */
static const char *yaml_lua_options(lua_State *L, int arg)
{
    if (lua_isnoneornil(L, arg))
        return NULL;
    if (lua_type(L, arg) != LUA_TTABLE)
        luaL_typeerror(L, arg, "table of options or nil");
    lua_pushnil(L);
    while (lua_next(L, arg)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || strcmp(lua_tostring(L, -1), "name") != 0) {
            char buf[64];
            luaL_argerror(L, arg,
                          lua_pushfstring(L, "unknown option %s (expected name)",
                                          cm_describe_key(L, -1, buf, sizeof buf)));
        }
    }
    lua_getfield(L, arg, "name");
    if (lua_isnil(L, -1))
        return NULL;
    if (lua_type(L, -1) != LUA_TSTRING)
        luaL_argerror(L, arg,
                      lua_pushfstring(L, "name must be a string, got %s", luaL_typename(L, -1)));
    return lua_tostring(L, -1);
}

static int yaml_lua_encode(lua_State *L)
{
    luaL_checkany(L, 1);
    const char *name = yaml_lua_options(L, 2);
    char err[YAML_LUA_ERRLEN];
    if (cm_yaml_encode_named(L, 1, name, err, sizeof err) != 0)
        return luaL_error(L, "%s", err);
    return 1;
}

int luaopen_cephmark_yaml(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"decode", yaml_lua_decode},
        {"encode", yaml_lua_encode},
        {"load_file", yaml_lua_load_file},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    cm_json_push_null(L);
    lua_setfield(L, -2, "null");
    return 1;
}
