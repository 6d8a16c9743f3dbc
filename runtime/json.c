/* JSON codec between JSON text and Lua values (decoder, encoder and the "cephmark.json"
 * Lua module); the value mapping and error conventions are documented in json.h. */
#include "json.h"
#include "hex.h"

#include "value_walk.h"

#include <lauxlib.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stack slots a single nesting level may need, including luaL_Buffer's internal box. */
#define JSON_STACK_PER_LEVEL 12

/* The sentinel only needs a unique address; nothing ever reads through it. */
static char json_null_anchor;
void *const cm_json_null = &json_null_anchor;

void cm_json_push_null(lua_State *L)
{
    lua_pushlightuserdata(L, cm_json_null);
}

int cm_json_isnull(lua_State *L, int index)
{
    return lua_islightuserdata(L, index) && lua_touserdata(L, index) == cm_json_null;
}

/* luaL_newmetatable pushes the existing marker, or creates it on first use, so C callers
 * need not have opened the Lua module. */
static void json_push_array_mt(lua_State *L)
{
    luaL_newmetatable(L, CM_JSON_ARRAY_MT);
}

void cm_json_mark_array(lua_State *L, int index)
{
    index = lua_absindex(L, index);
    json_push_array_mt(L);
    lua_setmetatable(L, index);
}

int cm_json_isarray(lua_State *L, int index)
{
    int marked = 0;
    index = lua_absindex(L, index);
    if (lua_type(L, index) == LUA_TTABLE && lua_getmetatable(L, index)) {
        json_push_array_mt(L);
        marked = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
    }
    return marked;
}

/* ---------------------------------------------------------------------------------------
 * Decoder: recursive descent bounded by CM_JSON_MAX_DEPTH, building values directly on
 * the Lua stack. Errors return -1 up the recursion; the caller resets the stack. */

typedef struct {
    lua_State *L;
    const char *start; /* kept to turn an error position into line/column */
    const char *p;
    const char *end;
    int array_mt; /* stack slot of the array marker, fetched once per decode */
    char *err;
    size_t errlen;
} json_decoder;

static int json_value(json_decoder *d, int depth, int keep);

CM_PRINTF(3, 4)
static int json_fail(json_decoder *d, const char *at, const char *fmt, ...)
{
    if (d->err == NULL || d->errlen == 0)
        return -1;
    /* Positions are only needed on failure, so they are computed here rather than
     * tracked for every byte. */
    size_t line = 1;
    const char *line_start = d->start;
    for (const char *q = d->start; q < at; q++) {
        if (*q == '\n') {
            line++;
            line_start = q + 1;
        }
    }
    int n =
        snprintf(d->err, d->errlen, "line %zu column %zu: ", line, (size_t)(at - line_start) + 1);
    if (n >= 0 && (size_t)n < d->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->err + n, d->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Names the byte at p for messages; raw control bytes or UTF-8 would garble them. */
static const char *json_describe(const json_decoder *d, const char *p, char *buf, size_t n)
{
    if (p >= d->end)
        return "end of input";
    unsigned char c = (unsigned char)*p;
    if (c > 0x20 && c < 0x7f)
        snprintf(buf, n, "'%c'", c);
    else
        snprintf(buf, n, "byte 0x%02X", c);
    return buf;
}

static int json_unexpected(json_decoder *d, const char *expected)
{
    char buf[16];
    if (d->p < d->end && *d->p == '\'')
        return json_fail(d, d->p, "single quotes are not allowed (JSON strings use double quotes)");
    return json_fail(d, d->p, "unexpected %s (expected %s)",
                     json_describe(d, d->p, buf, sizeof buf), expected);
}

static void json_skip_ws(json_decoder *d)
{
    while (d->p < d->end && (*d->p == ' ' || *d->p == '\t' || *d->p == '\n' || *d->p == '\r'))
        d->p++;
}

static int json_is_digit(const char *p, const char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

/* Reads the four hex digits after "\u" at esc; returns the code unit or -1 (error set). */
static long json_hex4(json_decoder *d, const char *esc)
{
    long unit = 0;
    for (int i = 2; i < 6; i++) {
        if (esc + i >= d->end)
            return json_fail(d, d->end, "unexpected end of input in string");
        int v = cm_hex_value(esc[i]);
        if (v < 0)
            return json_fail(d, esc, "invalid \\u escape (expected 4 hex digits)");
        unit = unit * 16 + v;
    }
    return unit;
}

static void json_add_utf8(luaL_Buffer *b, unsigned long cp)
{
    char out[4];
    size_t n;
    if (cp < 0x80) {
        out[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    luaL_addlstring(b, out, n);
}

/* Decodes the escape at d->p (a backslash) into b and advances past it. */
static int json_escape(json_decoder *d, luaL_Buffer *b)
{
    const char *esc = d->p;
    if (esc + 1 >= d->end)
        return json_fail(d, d->end, "unexpected end of input in string");
    char c = esc[1];
    d->p = esc + 2;
    switch (c) {
    case '"':
    case '\\':
    case '/':
        luaL_addchar(b, c);
        return 0;
    case 'b':
        luaL_addchar(b, '\b');
        return 0;
    case 'f':
        luaL_addchar(b, '\f');
        return 0;
    case 'n':
        luaL_addchar(b, '\n');
        return 0;
    case 'r':
        luaL_addchar(b, '\r');
        return 0;
    case 't':
        luaL_addchar(b, '\t');
        return 0;
    case 'u':
        break;
    default: {
        char buf[16];
        return json_fail(d, esc, "invalid escape \\ followed by %s",
                         json_describe(d, esc + 1, buf, sizeof buf));
    }
    }

    long unit = json_hex4(d, esc);
    if (unit < 0)
        return -1;
    d->p = esc + 6;
    if (unit >= 0xDC00 && unit <= 0xDFFF)
        return json_fail(d, esc, "lone low surrogate \\u%04lX (no high surrogate before it)", unit);
    if (unit >= 0xD800 && unit <= 0xDBFF) {
        const char *low_esc = d->p;
        long low = -2;
        if (low_esc + 1 < d->end && low_esc[0] == '\\' && low_esc[1] == 'u') {
            low = json_hex4(d, low_esc);
            if (low < 0)
                return -1;
        }
        if (low < 0xDC00 || low > 0xDFFF)
            return json_fail(d, esc,
                             "lone high surrogate \\u%04lX (expected a low surrogate "
                             "\\uDC00-\\uDFFF after it)",
                             unit);
        d->p = low_esc + 6;
        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    }
    json_add_utf8(b, (unsigned long)unit);
    return 0;
}

/* Ends a string buffer on an error path, leaving the stack as before luaL_buffinit. Once the
 * buffer outgrows its first block its box is a to-be-closed slot, and Lua 5.4.4's lua_settop
 * keeps a stale stack pointer when closing that slot moves the stack (it can, deep in a
 * nested document): settop to below the box corrupted the stack. luaL_pushresult closes the
 * box with lua_closeslot, which does not, and only the finished string is popped. */
static void json_drop_buffer(luaL_Buffer *b)
{
    luaL_pushresult(b);
    lua_pop(b->L, 1);
}

/* Pushes the string starting at d->p (the opening quote). */
static int json_string(json_decoder *d)
{
    lua_State *L = d->L;
    const char *run = ++d->p;

    /* Most Ceph strings have no escapes: push them straight from the input. */
    while (d->p < d->end) {
        unsigned char c = (unsigned char)*d->p;
        if (c == '"') {
            lua_pushlstring(L, run, (size_t)(d->p - run));
            d->p++;
            return 0;
        }
        if (c == '\\')
            break;
        if (c < 0x20)
            return json_fail(d, d->p, "unescaped control character 0x%02X in string", c);
        d->p++;
    }
    if (d->p >= d->end)
        return json_fail(d, d->end, "unexpected end of input in string");

    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, run, (size_t)(d->p - run));
    for (;;) {
        run = d->p;
        while (d->p < d->end && *d->p != '"' && *d->p != '\\' && (unsigned char)*d->p >= 0x20)
            d->p++;
        luaL_addlstring(&b, run, (size_t)(d->p - run));
        if (d->p >= d->end) {
            json_drop_buffer(&b);
            return json_fail(d, d->end, "unexpected end of input in string");
        }
        unsigned char c = (unsigned char)*d->p;
        if (c == '"') {
            d->p++;
            luaL_pushresult(&b);
            return 0;
        }
        if (c < 0x20) {
            json_drop_buffer(&b);
            return json_fail(d, d->p, "unescaped control character 0x%02X in string", c);
        }
        if (json_escape(d, &b) != 0) {
            json_drop_buffer(&b);
            return -1;
        }
    }
}

/* Validates the JSON number grammar, then lets Lua convert it so that integers and floats
 * follow Lua's own rules (and the C locale's decimal point is handled). */
static int json_number_scan(json_decoder *d, const char **stop)
{
    const char *s = d->p;
    const char *q = s;
    const char *end = d->end;
    if (*q == '-')
        q++;
    if (q < end && *q == '0') {
        q++;
        if (json_is_digit(q, end))
            return json_fail(d, s, "leading zeros are not allowed in numbers");
    } else if (json_is_digit(q, end)) {
        while (json_is_digit(q, end))
            q++;
    } else {
        return json_fail(d, q, "expected a digit after '-'");
    }
    if (q < end && *q == '.') {
        q++;
        if (!json_is_digit(q, end))
            return json_fail(d, q, "expected a digit after the decimal point");
        while (json_is_digit(q, end))
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-'))
            q++;
        if (!json_is_digit(q, end))
            return json_fail(d, q, "expected a digit in the exponent");
        while (json_is_digit(q, end))
            q++;
    }
    *stop = q;
    return 0;
}

static int json_number(json_decoder *d)
{
    const char *s = d->p;
    const char *q = s;
    if (json_number_scan(d, &q) != 0)
        return -1;
    size_t len = (size_t)(q - s);
    size_t used;
    char small[64];
    if (len < sizeof small) {
        memcpy(small, s, len);
        small[len] = '\0';
        used = lua_stringtonumber(d->L, small);
    } else {
        /* Long literals (many digits) need a NUL-terminated copy; a Lua string is one. */
        lua_pushlstring(d->L, s, len);
        used = lua_stringtonumber(d->L, lua_tostring(d->L, -1));
        if (used != 0)
            lua_remove(d->L, -2);
        else
            lua_pop(d->L, 1);
    }
    if (used != len + 1) {
        if (used != 0)
            lua_pop(d->L, 1);
        return json_fail(d, s, "number out of range");
    }
    d->p = q;
    return 0;
}

static int json_literal(json_decoder *d, const char *word)
{
    size_t n = strlen(word);
    size_t avail = (size_t)(d->end - d->p);
    if (avail < n && memcmp(d->p, word, avail) == 0)
        return json_fail(d, d->end, "unexpected end of input (expected '%s')", word);
    if (avail < n || memcmp(d->p, word, n) != 0)
        return json_fail(d, d->p, "invalid literal (expected '%s')", word);
    d->p += n;
    if (word[0] == 'n')
        cm_json_push_null(d->L);
    else
        lua_pushboolean(d->L, word[0] == 't');
    return 0;
}

static int json_array(json_decoder *d, int depth)
{
    lua_State *L = d->L;
    if (depth >= CM_JSON_MAX_DEPTH)
        return json_fail(d, d->p, "nesting deeper than %d levels", CM_JSON_MAX_DEPTH);
    d->p++;
    lua_newtable(L);
    lua_pushvalue(L, d->array_mt);
    lua_setmetatable(L, -2);
    json_skip_ws(d);
    if (d->p < d->end && *d->p == ']') {
        d->p++;
        return 0;
    }
    for (lua_Integer n = 1;; n++) {
        if (json_value(d, depth + 1, 0) != 0)
            return -1;
        lua_rawseti(L, -2, n);
        json_skip_ws(d);
        if (d->p < d->end && *d->p == ']') {
            d->p++;
            return 0;
        }
        if (d->p >= d->end || *d->p != ',')
            return json_unexpected(d, "',' or ']'");
        d->p++;
        json_skip_ws(d);
        if (d->p < d->end && *d->p == ']')
            return json_fail(d, d->p, "trailing comma before ']'");
    }
}

/* A string left out: one without escapes is only scanned; one with escapes goes through
 * json_string, so that its faults read as decode's. */
static int json_skip_string(json_decoder *d)
{
    for (const char *q = d->p + 1; q < d->end; q++) {
        unsigned char c = (unsigned char)*q;
        if (c == '"') {
            d->p = q + 1;
            return 0;
        }
        if (c == '\\' || c < 0x20)
            break;
    }
    if (json_string(d) != 0)
        return -1;
    lua_pop(d->L, 1);
    return 0;
}

/* Parses a value that is not kept (see cm_json_decode_only): its grammar is checked as
 * decode would, but no container is built, which is what makes a filtered decode cheap. */
static int json_skip(json_decoder *d, int depth)
{
    json_skip_ws(d);
    if (d->p < d->end && (*d->p == '-' || (*d->p >= '0' && *d->p <= '9')))
        return json_number_scan(d, &d->p);
    if (d->p < d->end && *d->p == '"')
        return json_skip_string(d);
    if (d->p >= d->end || (*d->p != '{' && *d->p != '[')) {
        if (json_value(d, depth, 0) != 0) /* literals and faults, as decode sees them */
            return -1;
        lua_pop(d->L, 1);
        return 0;
    }
    if (depth >= CM_JSON_MAX_DEPTH)
        return json_fail(d, d->p, "nesting deeper than %d levels", CM_JSON_MAX_DEPTH);
    int object = *d->p == '{';
    char close = object ? '}' : ']';
    d->p++;
    json_skip_ws(d);
    if (d->p < d->end && *d->p == close) {
        d->p++;
        return 0;
    }
    const char *expected_key = "a string key or '}'";
    for (;;) {
        if (object) {
            if (d->p >= d->end || *d->p != '"')
                return json_unexpected(d, expected_key);
            expected_key = "a string key";
            if (json_skip_string(d) != 0)
                return -1;
            json_skip_ws(d);
            if (d->p >= d->end || *d->p != ':')
                return json_unexpected(d, "':' after the object key");
            d->p++;
        }
        if (json_skip(d, depth + 1) != 0)
            return -1;
        json_skip_ws(d);
        if (d->p < d->end && *d->p == close) {
            d->p++;
            return 0;
        }
        if (d->p >= d->end || *d->p != ',')
            return json_unexpected(d, object ? "',' or '}'" : "',' or ']'");
        d->p++;
        json_skip_ws(d);
        if (d->p < d->end && *d->p == close)
            return json_fail(d, d->p, "trailing comma before '%c'", close);
    }
}

/* keep: 0, or the stack slot of the table saying which keys to keep (see
 * cm_json_decode_only). */
static int json_object(json_decoder *d, int depth, int keep)
{
    lua_State *L = d->L;
    if (depth >= CM_JSON_MAX_DEPTH)
        return json_fail(d, d->p, "nesting deeper than %d levels", CM_JSON_MAX_DEPTH);
    d->p++;
    lua_newtable(L);
    json_skip_ws(d);
    if (d->p < d->end && *d->p == '}') {
        d->p++;
        return 0;
    }
    const char *expected_key = "a string key or '}'";
    for (;;) {
        if (d->p >= d->end || *d->p != '"')
            return json_unexpected(d, expected_key);
        if (json_string(d) != 0)
            return -1;
        json_skip_ws(d);
        if (d->p >= d->end || *d->p != ':')
            return json_unexpected(d, "':' after the object key");
        d->p++;
        enum { KEEP_WHOLE, KEEP_SOME, LEAVE_OUT } rule = KEEP_WHOLE;
        if (keep) {
            lua_pushvalue(L, -1);
            int type = lua_rawget(L, keep);
            rule = type == LUA_TTABLE ? KEEP_SOME : lua_toboolean(L, -1) ? KEEP_WHOLE : LEAVE_OUT;
            if (rule != KEEP_SOME)
                lua_pop(L, 1);
        }
        if (rule == LEAVE_OUT) {
            lua_pop(L, 1); /* the key */
            if (json_skip(d, depth + 1) != 0)
                return -1;
        } else {
            int sub = rule == KEEP_SOME ? lua_gettop(L) : 0;
            if (json_value(d, depth + 1, sub) != 0)
                return -1;
            if (sub)
                lua_remove(L, sub);
            lua_rawset(L, -3);
        }
        json_skip_ws(d);
        if (d->p < d->end && *d->p == '}') {
            d->p++;
            return 0;
        }
        if (d->p >= d->end || *d->p != ',')
            return json_unexpected(d, "',' or '}'");
        d->p++;
        json_skip_ws(d);
        if (d->p < d->end && *d->p == '}')
            return json_fail(d, d->p, "trailing comma before '}'");
        expected_key = "a string key";
    }
}

/* depth counts the arrays/objects enclosing this value; keep as for json_object (it
 * applies to objects only: an array or a scalar under a kept key is kept whole). */
static int json_value(json_decoder *d, int depth, int keep)
{
    if (!lua_checkstack(d->L, JSON_STACK_PER_LEVEL))
        return json_fail(d, d->p, "Lua stack exhausted");
    json_skip_ws(d);
    if (d->p >= d->end)
        return json_fail(d, d->p, "unexpected end of input (expected a JSON value)");
    switch (*d->p) {
    case '{':
        return json_object(d, depth, keep);
    case '[':
        return json_array(d, depth);
    case '"':
        return json_string(d);
    case 't':
        return json_literal(d, "true");
    case 'f':
        return json_literal(d, "false");
    case 'n':
        return json_literal(d, "null");
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        return json_number(d);
    default:
        return json_unexpected(d, "a JSON value");
    }
}

/* NOLINTNEXTLINE(readability-non-const-parameter): json_fail writes err through the decoder */
static int json_decode(lua_State *L, const char *text, size_t len, int keep, char *err,
                       size_t errlen)
{
    if (text == NULL)
        text = "";
    json_decoder d = {L, text, text, text + len, 0, err, errlen};
    int base = lua_gettop(L);
    if (!lua_checkstack(L, JSON_STACK_PER_LEVEL))
        return json_fail(&d, d.p, "Lua stack exhausted");
    json_push_array_mt(L);
    d.array_mt = base + 1;
    if (json_value(&d, 0, keep) != 0) {
        lua_settop(L, base);
        return -1;
    }
    json_skip_ws(&d);
    if (d.p < d.end) {
        char buf[16];
        lua_settop(L, base);
        return json_fail(&d, d.p, "unexpected %s after the JSON value",
                         json_describe(&d, d.p, buf, sizeof buf));
    }
    lua_replace(L, base + 1);
    return 0;
}

int cm_json_decode(lua_State *L, const char *text, size_t len, char *err, size_t errlen)
{
    return json_decode(L, text, len, 0, err, errlen);
}

int cm_json_decode_only(lua_State *L, const char *text, size_t len, int keep, char *err,
                        size_t errlen)
{
    return json_decode(L, text, len, lua_absindex(L, keep), err, errlen);
}

/* ---------------------------------------------------------------------------------------
 * Encoder: JSON text for the walk shared with the YAML encoder (value_walk.h), which owns
 * the output buffer, the path for error messages and the table checks. Errors return -1
 * up the recursion and leave the stack for cm_walk_close to reset. */

typedef struct {
    cm_walk walk;
    int indent;
} json_encoder;

static const cm_walk_codec json_codec = {"json.null", "JSON output too large", 1};

static void json_newline(json_encoder *e, int level)
{
    if (e->indent == 0)
        return;
    size_t n = (size_t)level * (size_t)e->indent;
    char *out = cm_walk_reserve(&e->walk, n + 1);
    out[0] = '\n';
    memset(out + 1, ' ', n);
    e->walk.len += n + 1;
}

static void json_put_string(cm_walk *w, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;
    cm_walk_putc(w, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        cm_walk_put(w, s + run, i - run);
        run = i + 1;
        char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
        size_t n = 2;
        switch (c) {
        case '"':
        case '\\':
            esc[1] = (char)c;
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            n = 6;
            break;
        }
        cm_walk_put(w, esc, n);
    }
    cm_walk_put(w, s + run, len - run);
    cm_walk_putc(w, '"');
}

/* Shortest digits that read back to the same double, written in plain notation for
 * moderate exponents (1000.0 rather than 1e+03), in JSON syntax whatever LC_NUMERIC says
 * (the text is built from the digits, not by printf), and always marked as a float so
 * that decoding gives a float back. */
static void json_put_float(cm_walk *w, double x)
{
    if (isnan(x) || isinf(x)) {
        cm_walk_put(w, "null", 4);
        return;
    }
    char digits[18];
    int exponent;
    int n = cm_walk_float_decimal(x, digits, &exponent);
    char out[48];
    size_t len = 0;
    if (signbit(x))
        out[len++] = '-';
    if (exponent >= -5 && exponent < 17) {
        if (exponent < 0) {
            out[len++] = '0';
            out[len++] = '.';
            for (int i = -1; i > exponent; i--)
                out[len++] = '0';
            memcpy(out + len, digits, (size_t)n);
            len += (size_t)n;
        } else {
            if (n <= exponent && exponent >= 15) {
                /* above 2^53 the zeros would stand for bits that are there: 99999999999999984
                 * rather than 99999999999999980, as the integer it is */
                len += (size_t)snprintf(out + len, sizeof out - len, "%.0f", fabs(x));
            } else {
                for (int i = 0; i <= exponent; i++)
                    out[len++] = (char)(i < n ? digits[i] : '0');
            }
            out[len++] = '.';
            if (n > exponent + 1) {
                memcpy(out + len, digits + exponent + 1, (size_t)(n - exponent - 1));
                len += (size_t)(n - exponent - 1);
            } else {
                out[len++] = '0';
            }
        }
    } else {
        out[len++] = digits[0];
        if (n > 1) {
            out[len++] = '.';
            memcpy(out + len, digits + 1, (size_t)(n - 1));
            len += (size_t)(n - 1);
        }
        len += (size_t)snprintf(out + len, sizeof out - len, "e%+03d", exponent);
    }
    cm_walk_put(w, out, len);
}

static int json_encode_value(json_encoder *e, int index);

static int json_encode_array(json_encoder *e, int index, lua_Integer count)
{
    cm_walk *w = &e->walk;
    if (count == 0) {
        cm_walk_put(w, "[]", 2);
        return 0;
    }
    cm_walk_putc(w, '[');
    for (lua_Integer i = 1; i <= count; i++) {
        if (i > 1)
            cm_walk_putc(w, ',');
        json_newline(e, w->depth + 1);
        lua_rawgeti(w->L, index, i);
        cm_walk_down_index(w, i);
        int rc = json_encode_value(e, lua_gettop(w->L));
        cm_walk_up(w);
        lua_pop(w->L, 1);
        if (rc != 0)
            return rc;
    }
    json_newline(e, w->depth);
    cm_walk_putc(w, ']');
    return 0;
}

static int json_encode_object(json_encoder *e, int index, lua_Integer count)
{
    cm_walk *w = &e->walk;
    if (count == 0) {
        cm_walk_put(w, "{}", 2);
        return 0;
    }
    int values;
    const cm_walk_member *members = cm_walk_sorted_members(w, index, count, &values);
    if (members == NULL)
        return -1;

    cm_walk_putc(w, '{');
    for (lua_Integer i = 0; i < count; i++) {
        const cm_walk_member *m = &members[i];
        if (i > 0)
            cm_walk_putc(w, ',');
        json_newline(e, w->depth + 1);
        json_put_string(w, m->key, m->len);
        if (e->indent > 0)
            cm_walk_put(w, ": ", 2);
        else
            cm_walk_putc(w, ':');
        lua_rawgeti(w->L, values, m->slot);
        cm_walk_down_key(w, m);
        int rc = json_encode_value(e, lua_gettop(w->L));
        cm_walk_up(w);
        lua_pop(w->L, 1);
        if (rc != 0)
            return rc;
    }
    json_newline(e, w->depth);
    cm_walk_putc(w, '}');
    lua_pop(w->L, CM_WALK_MEMBER_SLOTS);
    return 0;
}

static int json_encode_table(json_encoder *e, int index)
{
    lua_Integer count;
    int is_array;
    if (cm_walk_enter_table(&e->walk, index, &count, &is_array) != 0)
        return -1;
    int rc = is_array ? json_encode_array(e, index, count) : json_encode_object(e, index, count);
    if (rc != 0)
        return rc;
    cm_walk_leave_table(&e->walk, index);
    return 0;
}

static int json_encode_value(json_encoder *e, int index)
{
    cm_walk *w = &e->walk;
    lua_State *L = w->L;
    switch (lua_type(L, index)) {
    case LUA_TNIL:
        cm_walk_put(w, "null", 4);
        return 0;
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, index))
            cm_walk_put(w, "true", 4);
        else
            cm_walk_put(w, "false", 5);
        return 0;
    case LUA_TNUMBER:
        if (lua_isinteger(L, index))
            cm_walk_put_integer(w, lua_tointeger(L, index));
        else
            json_put_float(w, (double)lua_tonumber(L, index));
        return 0;
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, index, &len);
        json_put_string(w, s, len);
        return 0;
    }
    case LUA_TTABLE:
        return json_encode_table(e, index);
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, index) != cm_json_null)
            break;
        cm_walk_put(w, "null", 4);
        return 0;
    default:
        break;
    }
    return cm_walk_fail_unencodable(w, index);
}

int cm_json_encode(lua_State *L, int index, int indent, const char *name, char *err, size_t errlen)
{
    json_encoder e;
    cm_walk_init(&e.walk, L, &json_codec, name, err, errlen);
    e.indent = indent;
    if (indent < 0 || indent > CM_JSON_MAX_INDENT)
        return cm_walk_fail(&e.walk, "indent must be between 0 and %d, got %d", CM_JSON_MAX_INDENT,
                            indent);
    index = lua_absindex(L, index);
    if (cm_walk_open(&e.walk) != 0)
        return -1;
    return cm_walk_close(&e.walk, json_encode_value(&e, index));
}

/* ---------------------------------------------------------------------------------------
 * Lua module "cephmark.json". */

static int json_lua_array(lua_State *L)
{
    if (lua_isnoneornil(L, 1)) {
        lua_settop(L, 0);
        lua_newtable(L);
    } else {
        luaL_checktype(L, 1, LUA_TTABLE);
        lua_settop(L, 1);
    }
    if (lua_getmetatable(L, 1)) {
        json_push_array_mt(L);
        if (!lua_rawequal(L, -1, -2))
            return luaL_argerror(L, 1,
                                 "table already has a metatable (cannot mark it as a JSON array)");
        lua_settop(L, 1);
        return 1;
    }
    cm_json_mark_array(L, 1);
    return 1;
}

/* json.decode(text [, keep]) */
static int json_lua_decode(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TSTRING)
        return luaL_typeerror(L, 1, "string");
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    size_t len;
    const char *text = lua_tolstring(L, 1, &len);
    char err[256];
    int rc = lua_istable(L, 2) ? cm_json_decode_only(L, text, len, 2, err, sizeof err)
                               : cm_json_decode(L, text, len, err, sizeof err);
    if (rc != 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    return 1;
}

/* Reads encode's options table; unknown keys raise so that typos are not silently
 * ignored. */
static void json_lua_options(lua_State *L, int arg, int *indent, const char **name)
{
    if (lua_isnoneornil(L, arg))
        return;
    luaL_checktype(L, arg, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, arg)) {
        lua_pop(L, 1);
        const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (key == NULL || (strcmp(key, "indent") != 0 && strcmp(key, "name") != 0)) {
            char buf[64];
            luaL_argerror(L, arg,
                          lua_pushfstring(L, "unknown option %s (expected indent or name)",
                                          cm_describe_key(L, -1, buf, sizeof buf)));
        }
    }

    lua_getfield(L, arg, "indent");
    if (!lua_isnil(L, -1)) {
        int isinteger = 0;
        lua_Integer n = lua_tointegerx(L, -1, &isinteger);
        if (!isinteger || n < 0 || n > CM_JSON_MAX_INDENT)
            luaL_argerror(L, arg,
                          lua_pushfstring(L, "indent must be an integer from 0 to %d, got %s",
                                          CM_JSON_MAX_INDENT, luaL_tolstring(L, -1, NULL)));
        *indent = (int)n;
    }
    lua_pop(L, 1);

    lua_getfield(L, arg, "name");
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_argerror(
                L, arg, lua_pushfstring(L, "name must be a string, got %s", luaL_typename(L, -1)));
        *name = lua_tostring(L, -1);
    }
    /* name stays on the stack, anchored while it is used */
}

static int json_lua_encode(lua_State *L)
{
    int indent = 0;
    const char *name = NULL;
    luaL_checkany(L, 1);
    json_lua_options(L, 2, &indent, &name);
    char err[512];
    if (cm_json_encode(L, 1, indent, name, err, sizeof err) != 0)
        return luaL_error(L, "%s", err);
    return 1;
}

int luaopen_cephmark_json(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"array", json_lua_array},
        {"decode", json_lua_decode},
        {"encode", json_lua_encode},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    cm_json_push_null(L);
    lua_setfield(L, -2, "null");
    return 1;
}
