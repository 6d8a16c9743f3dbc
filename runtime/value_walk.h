/* The walk over Lua values that the JSON and YAML encoders share (json.c, yaml_codec.c): the
 * output buffer, the path from the root to the value being encoded (for messages such as
 * "results.phases[2].fn: cannot encode a function"), cycle and depth detection, the choice
 * between array and object for a table, object members sorted by key, and the helpers that
 * build error messages. Both codecs follow the value model of json.h (array marker, null
 * sentinel); only the text they write differs.
 *
 * Memory: as the codecs promise, nothing is malloc'ed. cm_walk_open pushes the array marker,
 * and the output buffer (a growable full userdata: luaL_Buffer would forbid
 * using the stack while nested values are visited), and cm_walk_close pops them, so a Lua
 * error (out of memory) anywhere in between leaks nothing. Errors are not Lua errors: the
 * cm_walk_* functions that can fail write "path: message" to the caller's buffer and return
 * -1 (or NULL), and the encoder returns that up its recursion to cm_walk_close.
 */
#ifndef CEPHMARK_VALUE_WALK_H
#define CEPHMARK_VALUE_WALK_H

#include <stddef.h>
#include <string.h>

#include <lua.h>

#include "json.h"

#if defined(__GNUC__)
#define CM_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CM_PRINTF(fmt, args)
#endif

/* Deepest nesting either encoder accepts; YAML uses the JSON limit so that any value one codec
 * writes the other does too. */
#define CM_WALK_MAX_DEPTH CM_JSON_MAX_DEPTH
/* Stack slots a single nesting level may need, including luaL_Buffer's internal box. */
#define CM_WALK_STACK_PER_LEVEL 12
/* Values cm_walk_sorted_members leaves on the stack for its caller to pop. */
#define CM_WALK_MEMBER_SLOTS 3
/* Longest key or value quoted in error messages: enough to recognise it. */
#define CM_MESSAGE_MAX_SHOWN 40

/* What differs between the codecs' messages and limits. */
typedef struct {
    const char *null_name; /* how scripts spell the null sentinel: "json.null" */
    const char *too_large; /* raised when the output outgrows size_t */
    /* JSON keeps only the head and tail of paths deeper than 13 steps so that the message
     * itself survives truncation to a small buffer; YAML has always shown whole paths. */
    int shorten_paths;
} cm_walk_codec;

/* One step of the path; key is NULL for an array index. Keys are anchored by the parent's
 * key table (cm_walk_sorted_members) for as long as the step is on the path. */
typedef struct {
    const char *key;
    size_t len;
    lua_Integer index;
} cm_walk_segment;

/* One object member; key points into a string anchored by cm_walk_sorted_members. */
typedef struct {
    const char *key;
    size_t len;
    lua_Integer slot; /* index into the value table */
} cm_walk_member;

typedef struct {
    lua_State *L;
    const cm_walk_codec *codec;
    int base;     /* stack top before cm_walk_open */
    int array_mt; /* stack slots, valid between cm_walk_open and cm_walk_close */
    int buf_slot;
    char *buf;
    size_t len;
    size_t cap;
    int depth; /* number of entries in path */
    const char *name;
    char *err;
    size_t errlen;
    cm_walk_segment path[CM_WALK_MAX_DEPTH];
    /* the tables on the current path, to detect cycles: a scan of a few pointers costs
     * less than a Lua set, which took an insert and a removal per table written */
    const void *open_tables[CM_WALK_MAX_DEPTH];
    int open_count;
} cm_walk;

/* Appends to a fixed buffer, silently truncating: used only to build messages. */
CM_PRINTF(4, 5)
void cm_message_append(char *dst, size_t cap, size_t *pos, const char *fmt, ...);

/* Appends s as a quoted literal shortened to CM_MESSAGE_MAX_SHOWN bytes, with control and
 * non-ASCII bytes escaped: it is only there to be recognised, and raw bytes would garble the
 * message. */
void cm_message_append_quoted(char *dst, size_t cap, size_t *pos, const char *s, size_t len);

/* Describes the table key at index for messages ("name", 3, 1.5, true, of type table) in
 * buf, and returns buf. */
const char *cm_describe_key(lua_State *L, int index, char *buf, size_t n);

/* Prepares an encode without touching the stack, so that argument errors can already be
 * reported with cm_walk_fail. name labels the root in paths (NULL means "value"). */
void cm_walk_init(cm_walk *w, lua_State *L, const cm_walk_codec *codec, const char *name, char *err,
                  size_t errlen);

/* Pushes the array marker, and the output buffer. Returns 0, or -1 with the
 * error set (and nothing pushed). */
int cm_walk_open(cm_walk *w);

/* Ends an encode whose recursion returned rc: on 0 leaves just the output as a string where
 * cm_walk_open found the top and returns 0, otherwise restores the stack and returns -1. */
int cm_walk_close(cm_walk *w, int rc);

/* Writes "path: message" to the error buffer and returns -1. */
CM_PRINTF(2, 3)
int cm_walk_fail(cm_walk *w, const char *fmt, ...);

/* Fails for the value at index, which is neither nil, boolean, number, string, table nor the
 * null sentinel: "cannot encode a function", or for other light userdata a hint at null. */
int cm_walk_fail_unencodable(cm_walk *w, int index);

/* Starts on the table at index: refuses it past CM_WALK_MAX_DEPTH or if it is already on the
 * path (a cycle), otherwise puts it on the path. Sets *count to its number of entries and
 * *is_array to whether it encodes as an array: it carries the array marker (its keys must
 * then be exactly 1..n) or it is non-empty with keys exactly 1..n. Returns 0, or -1 with the
 * error set. */
int cm_walk_enter_table(cm_walk *w, int index, lua_Integer *count, int *is_array);

/* Takes a table that was encoded without error off the path. */
void cm_walk_leave_table(cm_walk *w, int index);

/* The shortest decimal that reads back exactly to x, a finite double: its significant
 * digits (1 to 17, no sign or point; digits has room for 18 bytes with the NUL), and in
 * *exponent the power of ten of the first one. Returns how many digits. Most values take
 * one conversion and one read-back, none more than three of each: writing floats was most
 * of the cost of writing results. */
int cm_walk_float_decimal(double x, char digits[static 18], int *exponent);

/* The fewest significant digits (1 to 17) with which x, a finite double, reads back
 * exactly ("%.*e" with digits - 1, or "%.*g" with digits). */
int cm_walk_float_digits(double x);

/* Collects the count (> 0) entries of the object at index, keys as strings (integers in
 * decimal) sorted by bytes so that output is deterministic. Pushes CM_WALK_MEMBER_SLOTS
 * values, which anchor the members until the caller pops them; *values is the stack slot of
 * the table holding member m's value at m->slot. Returns NULL with the error set for a key
 * that is not a string or an integer, an integer key equal to a string key, or a table that
 * changes meanwhile. */
const cm_walk_member *cm_walk_sorted_members(cm_walk *w, int index, lua_Integer count, int *values);

/* Grows the output so that n more bytes fit; raises codec->too_large past size_t. */
void cm_walk_grow(cm_walk *w, size_t n);

/* Writes the integer in decimal. */
void cm_walk_put_integer(cm_walk *w, lua_Integer value);

/* The output and path helpers run once or more per value encoded, so they are inline. */

static inline char *cm_walk_reserve(cm_walk *w, size_t n)
{
    if (w->cap - w->len < n)
        cm_walk_grow(w, n);
    return w->buf + w->len;
}

static inline void cm_walk_put(cm_walk *w, const char *s, size_t n)
{
    memcpy(cm_walk_reserve(w, n), s, n);
    w->len += n;
}

static inline void cm_walk_puts(cm_walk *w, const char *s)
{
    cm_walk_put(w, s, strlen(s));
}

static inline void cm_walk_putc(cm_walk *w, char c)
{
    *cm_walk_reserve(w, 1) = c;
    w->len++;
}

/* Path steps go down before a child value is encoded and up after it; cm_walk_enter_table
 * bounds depth, so the path cannot overflow. */
static inline void cm_walk_down_index(cm_walk *w, lua_Integer index)
{
    w->path[w->depth++] = (cm_walk_segment){NULL, 0, index};
}

static inline void cm_walk_down_key(cm_walk *w, const cm_walk_member *member)
{
    w->path[w->depth++] = (cm_walk_segment){member->key, member->len, 0};
}

static inline void cm_walk_up(cm_walk *w)
{
    w->depth--;
}

#endif
