/* The walk over Lua values shared by the JSON and YAML encoders (see value_walk.h): output
 * buffer, path tracking and messages, cycle and depth checks, table classification and
 * sorted object members. */
#include "value_walk.h"

#include <lauxlib.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void cm_message_append(char *dst, size_t cap, size_t *pos, const char *fmt, ...)
{
    if (*pos + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst + *pos, cap - *pos, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos += (size_t)n < cap - *pos ? (size_t)n : cap - *pos - 1;
}

void cm_message_append_quoted(char *dst, size_t cap, size_t *pos, const char *s, size_t len)
{
    cm_message_append(dst, cap, pos, "\"");
    for (size_t i = 0; i < len && i < CM_MESSAGE_MAX_SHOWN; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            cm_message_append(dst, cap, pos, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            cm_message_append(dst, cap, pos, "\\x%02X", c);
        else
            cm_message_append(dst, cap, pos, "%c", c);
    }
    cm_message_append(dst, cap, pos, len > CM_MESSAGE_MAX_SHOWN ? "...\"" : "\"");
}

const char *cm_describe_key(lua_State *L, int index, char *buf, size_t n)
{
    size_t pos = 0;
    buf[0] = '\0';
    switch (lua_type(L, index)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, index, &len);
        cm_message_append_quoted(buf, n, &pos, s, len);
        break;
    }
    case LUA_TNUMBER:
        if (lua_isinteger(L, index))
            cm_message_append(buf, n, &pos, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, index));
        else
            cm_message_append(buf, n, &pos, "%.14g", (double)lua_tonumber(L, index));
        break;
    case LUA_TBOOLEAN:
        cm_message_append(buf, n, &pos, "%s", lua_toboolean(L, index) ? "true" : "false");
        break;
    default:
        cm_message_append(buf, n, &pos, "of type %s", luaL_typename(L, index));
        break;
    }
    return buf;
}

/* Keys that can be written as ".key" in a path; the others are written as ["key"]. */
static int walk_is_identifier(const char *s, size_t len)
{
    if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return 0;
    }
    return 1;
}

void cm_walk_init(cm_walk *w, lua_State *L, const cm_walk_codec *codec, const char *name, char *err,
                  size_t errlen)
{
    w->L = L;
    w->codec = codec;
    w->depth = 0;
    w->open_count = 0;
    w->name = name != NULL ? name : "value";
    w->err = err;
    w->errlen = errlen;
}

int cm_walk_open(cm_walk *w)
{
    lua_State *L = w->L;
    w->base = lua_gettop(L);
    if (!lua_checkstack(L, CM_WALK_STACK_PER_LEVEL))
        return cm_walk_fail(w, "Lua stack exhausted");
    /* luaL_newmetatable pushes the existing marker, or creates it, so C callers need not
     * have opened the Lua module. */
    luaL_newmetatable(L, CM_JSON_ARRAY_MT);
    w->array_mt = w->base + 1;
    w->cap = 256;
    w->len = 0;
    w->buf = lua_newuserdatauv(L, w->cap, 0);
    w->buf_slot = w->base + 2;
    return 0;
}

int cm_walk_close(cm_walk *w, int rc)
{
    lua_State *L = w->L;
    if (rc != 0) {
        lua_settop(L, w->base);
        return -1;
    }
    lua_pushlstring(L, w->buf, w->len);
    lua_replace(L, w->base + 1);
    lua_settop(L, w->base + 1);
    return 0;
}

int cm_walk_fail(cm_walk *w, const char *fmt, ...)
{
    if (w->err == NULL || w->errlen == 0)
        return -1;
    size_t pos = 0;
    w->err[0] = '\0';
    cm_message_append(w->err, w->errlen, &pos, "%s", w->name);
    /* Shortened paths keep their head and tail, so the message after them is not truncated
     * away. */
    const int head = 4, tail = 8;
    for (int i = 0; i < w->depth; i++) {
        if (w->codec->shorten_paths && w->depth > head + tail + 1 && i == head) {
            cm_message_append(w->err, w->errlen, &pos, "...");
            i = w->depth - tail;
        }
        const cm_walk_segment *seg = &w->path[i];
        if (seg->key == NULL) {
            cm_message_append(w->err, w->errlen, &pos, "[" LUA_INTEGER_FMT "]",
                              (LUAI_UACINT)seg->index);
        } else if (walk_is_identifier(seg->key, seg->len)) {
            cm_message_append(w->err, w->errlen, &pos, ".%.*s", (int)seg->len, seg->key);
        } else {
            cm_message_append(w->err, w->errlen, &pos, "[");
            cm_message_append_quoted(w->err, w->errlen, &pos, seg->key, seg->len);
            cm_message_append(w->err, w->errlen, &pos, "]");
        }
    }
    cm_message_append(w->err, w->errlen, &pos, ": ");
    if (pos + 1 < w->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->err + pos, w->errlen - pos, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int cm_walk_fail_unencodable(cm_walk *w, int index)
{
    if (lua_type(w->L, index) == LUA_TLIGHTUSERDATA)
        return cm_walk_fail(w, "cannot encode a light userdata (only %s is allowed)",
                            w->codec->null_name);
    return cm_walk_fail(w, "cannot encode a %s", luaL_typename(w->L, index));
}

int cm_walk_enter_table(cm_walk *w, int index, lua_Integer *count, int *is_array)
{
    lua_State *L = w->L;
    if (w->depth >= CM_WALK_MAX_DEPTH)
        return cm_walk_fail(w, "nesting deeper than %d levels", CM_WALK_MAX_DEPTH);
    if (!lua_checkstack(L, CM_WALK_STACK_PER_LEVEL))
        return cm_walk_fail(w, "Lua stack exhausted");

    const void *table = lua_topointer(L, index);
    for (int i = 0; i < w->open_count; i++) {
        if (w->open_tables[i] == table)
            return cm_walk_fail(w, "cycle: table contains itself");
    }
    w->open_tables[w->open_count++] = table;

    int marked = 0;
    if (lua_getmetatable(L, index)) {
        marked = lua_rawequal(L, -1, w->array_mt);
        lua_pop(L, 1);
    }

    /* A table is a sequence when all its keys are positive integers and the largest
     * equals the count: distinct keys in 1..n, n of them, are exactly 1..n. */
    lua_Integer entries = 0;
    lua_Integer largest = 0;
    int sequence = 1;
    char bad_key[64] = "";
    lua_pushnil(L);
    while (lua_next(L, index)) {
        entries++;
        if (sequence) {
            lua_Integer k = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
            if (k >= 1) {
                if (k > largest)
                    largest = k;
            } else {
                sequence = 0;
                if (marked) /* only an array marked as one has to say which key */
                    cm_describe_key(L, -2, bad_key, sizeof bad_key);
            }
        }
        lua_pop(L, 1);
    }
    if (sequence && largest != entries)
        sequence = 0;

    if (marked && !sequence) {
        if (bad_key[0] != '\0')
            return cm_walk_fail(w, "array has key %s (arrays may only have keys 1..n)", bad_key);
        return cm_walk_fail(w,
                            "array has holes (" LUA_INTEGER_FMT
                            " elements but largest index " LUA_INTEGER_FMT
                            "; use %s for null elements)",
                            (LUAI_UACINT)entries, (LUAI_UACINT)largest, w->codec->null_name);
    }
    *count = entries;
    *is_array = marked || (sequence && entries > 0);
    return 0;
}

void cm_walk_leave_table(cm_walk *w, int index)
{
    /* Only the current path is tracked: a table shared by two branches is not a cycle. */
    (void)index;
    w->open_count--;
}

static int walk_member_cmp(const void *a, const void *b)
{
    const cm_walk_member *x = a;
    const cm_walk_member *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    if (c != 0)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

const cm_walk_member *cm_walk_sorted_members(cm_walk *w, int index, lua_Integer count, int *values)
{
    lua_State *L = w->L;
    if ((uint64_t)count > SIZE_MAX / sizeof(cm_walk_member)) {
        cm_walk_fail(w, "table too large");
        return NULL;
    }
    /* Integer keys are converted to strings, which must stay alive while the members
     * point into them: the key table anchors them, and the value table keeps each value
     * next to its member without a second lookup by key. */
    int hint = count < INT_MAX ? (int)count : 0;
    lua_createtable(L, hint, 0);
    int keys = lua_gettop(L);
    lua_createtable(L, hint, 0);
    *values = keys + 1;
    cm_walk_member *members = lua_newuserdatauv(L, (size_t)count * sizeof *members, 0);

    lua_Integer n = 0;
    lua_pushnil(L);
    while (lua_next(L, index)) {
        if (n == count) {
            cm_walk_fail(w, "table changed while being encoded");
            return NULL;
        }
        cm_walk_member *m = &members[n++];
        lua_rawseti(L, *values, n);
        if (lua_type(L, -1) == LUA_TSTRING) {
            lua_pushvalue(L, -1);
        } else if (lua_isinteger(L, -1)) {
            char digits[32];
            snprintf(digits, sizeof digits, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, -1));
            lua_pushstring(L, digits);
        } else {
            char buf[64];
            cm_walk_fail(w, "cannot encode table key %s (keys must be strings or integers)",
                         cm_describe_key(L, -1, buf, sizeof buf));
            return NULL;
        }
        m->key = lua_tolstring(L, -1, &m->len);
        m->slot = n;
        lua_rawseti(L, keys, n);
    }
    if (n != count) {
        cm_walk_fail(w, "table changed while being encoded");
        return NULL;
    }

    qsort(members, (size_t)count, sizeof *members, walk_member_cmp);
    for (lua_Integer i = 1; i < count; i++) {
        if (walk_member_cmp(&members[i - 1], &members[i]) == 0) {
            cm_walk_fail(w, "integer key and string key both encode as \"%.*s\"",
                         (int)(members[i].len > CM_MESSAGE_MAX_SHOWN ? CM_MESSAGE_MAX_SHOWN
                                                                     : members[i].len),
                         members[i].key);
            return NULL;
        }
    }
    return members;
}

void cm_walk_grow(cm_walk *w, size_t n)
{
    size_t cap = w->cap;
    while (cap - w->len < n) {
        if (cap > SIZE_MAX / 2)
            luaL_error(w->L, "%s", w->codec->too_large);
        cap *= 2;
    }
    /* The old block stays anchored in buf_slot until replaced, so the copy is safe even if
     * this allocation runs the collector. */
    char *grown = lua_newuserdatauv(w->L, cap, 0);
    memcpy(grown, w->buf, w->len);
    lua_replace(w->L, w->buf_slot);
    w->buf = grown;
    w->cap = cap;
}

void cm_walk_put_integer(cm_walk *w, lua_Integer value)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, LUA_INTEGER_FMT, (LUAI_UACINT)value);
    cm_walk_put(w, digits, (size_t)n);
}

/* Rounded to 15 significant digits, a double whose shortest form has 15 digits or fewer
 * comes out as that form padded with zeros: x lies within half a binary ulp (1.1e-16 of x)
 * of it, under half a step of the 15-digit grid (at least 5e-16 of x). One conversion and
 * one read-back then settle most values, such as those measured in ms, ticks or bytes. */
int cm_walk_float_decimal(double x, char digits[static 18], int *exponent)
{
    char text[48];
    if (x == 0 || fabs(x) >= DBL_MIN) {
        snprintf(text, sizeof text, "%.14e", x);
        if (strtod(text, NULL) != x) {
            snprintf(text, sizeof text, "%.15e", x);
            if (strtod(text, NULL) != x)
                snprintf(text, sizeof text, "%.16e", x); /* 17 digits always read back */
        }
    } else {
        /* A subnormal has fewer bits than that argument needs (4.94065645841247e-324 reads
         * back, and so does 5e-324): bisection, since a value that reads back at d digits
         * also does at d + 1. */
        int low = 1, high = 17;
        while (low < high) {
            int middle = (low + high) / 2;
            snprintf(text, sizeof text, "%.*e", middle - 1, x);
            if (strtod(text, NULL) == x)
                high = middle;
            else
                low = middle + 1;
        }
        snprintf(text, sizeof text, "%.*e", low - 1, x);
    }
    int n = 0;
    const char *c = text;
    for (; *c != '\0' && *c != 'e'; c++) {
        if (*c >= '0' && *c <= '9')
            digits[n++] = *c;
    }
    *exponent = *c == 'e' ? (int)strtol(c + 1, NULL, 10) : 0;
    while (n > 1 && digits[n - 1] == '0')
        n--; /* the padding of a shorter form: the shortest has no trailing zero */
    digits[n] = '\0';
    return n;
}

int cm_walk_float_digits(double x)
{
    char digits[18];
    int exponent;
    return cm_walk_float_decimal(x, digits, &exponent);
}
