/* JSON codec between JSON text and Lua values: parses Ceph mon_command JSON output into
 * Lua tables and writes results files, from C (cm_json_*) and from Lua ("cephmark.json").
 *
 * Value mapping, JSON -> Lua (cm_json_decode, json.decode):
 *   object  -> table with string keys (even "1" stays a string); duplicate keys: last wins.
 *   array   -> sequence 1..n whose metatable is the shared array marker stored in the
 *              registry under CM_JSON_ARRAY_MT, so that [] and {} stay distinct when
 *              re-encoded. Replacing the metatable drops the marker.
 *   null    -> the light userdata cm_json_null (json.null in Lua), never nil, so keys and
 *              array slots holding null survive a round trip.
 *   number  -> integer when the text has no fraction/exponent and fits int64 (so "-0" is
 *              integer 0), float otherwise (9223372036854775808 and 1e3 are floats;
 *              exponents beyond double range give +-inf, as Lua's own parser does).
 *   string  -> Lua string; escapes and \uXXXX (surrogate pairs included) become UTF-8.
 *              Other bytes pass through unchecked: invalid UTF-8 is not rejected.
 * Rejected: trailing garbage, unescaped control characters in strings, leading zeros,
 * lone surrogates, single quotes, trailing commas, nesting deeper than CM_JSON_MAX_DEPTH.
 *
 * Value mapping, Lua -> JSON (cm_json_encode, json.encode):
 *   table   -> array if it carries the array marker (its keys must then be exactly 1..n;
 *              empty gives []) or if it is a non-empty table with keys exactly 1..n;
 *              otherwise an object ({} for an empty unmarked table) with keys sorted by
 *              bytes for deterministic output. Object keys must be strings or integers;
 *              integers become decimal strings (an integer key colliding with an equal
 *              string key is an error). Metatables are otherwise ignored (raw access).
 *   integer -> decimal.
 *   float   -> the fewest significant digits that read back to the same double, in plain
 *              notation for decimal exponents -5..16 and exponent notation otherwise, and
 *              always with a '.' or an exponent so it decodes as a float again:
 *              1.0, -0.0, 1000.0, 0.00001, 0.1, 1e+20, 1.5e-06. The '.' is written
 *              whatever LC_NUMERIC says.
 *              NaN and +-inf -> null (a NaN latency must not make a results file unwritable).
 *   string  -> quoted; '"', '\\' and control characters escaped (\n-style where JSON has
 *              one, else \u00XX); other bytes, UTF-8 or not, are copied as is.
 *   boolean -> true/false; cm_json_null and nil -> null.
 *   functions, userdata, threads, other light userdata, cycles, nesting deeper than
 *              CM_JSON_MAX_DEPTH -> error naming the path, e.g.
 *              "results.phases[2].lat: cannot encode a function".
 * Pretty output (indent > 0) puts each element on its own line indented by indent spaces
 * per level, writes "key": value, keeps [] and {} for empty containers and has no
 * trailing newline.
 *
 * Memory: nothing is malloc'ed; all temporaries live on the Lua stack, so a Lua memory
 * error (raised, like any Lua API call) leaks nothing. Parse and encode errors never
 * raise: they return -1 with a message in err (NUL-terminated, truncated to errlen; err
 * may be NULL when errlen is 0).
 */
#ifndef CEPHMARK_JSON_H
#define CEPHMARK_JSON_H

#include <stddef.h>

#include <lua.h>

/* Registry key of the metatable that marks decoded (or json.array'ed) tables as arrays. */
#define CM_JSON_ARRAY_MT "cephmark.json.array"
/* Deepest nesting of arrays/objects accepted by decode and encode. */
#define CM_JSON_MAX_DEPTH 200
/* Largest indent accepted by encode. */
#define CM_JSON_MAX_INDENT 32

/* The light userdata that stands for JSON null. */
extern void *const cm_json_null;

/* Pushes the null sentinel. */
void cm_json_push_null(lua_State *L);

/* Returns 1 if the value at index is the null sentinel, else 0. */
int cm_json_isnull(lua_State *L, int index);

/* Sets the array marker as the metatable of the table at index (replacing any other). */
void cm_json_mark_array(lua_State *L, int index);

/* Returns 1 if the value at index is a table carrying the array marker, else 0. */
int cm_json_isarray(lua_State *L, int index);

/* Decodes len bytes of JSON text (a single value, surrounding whitespace allowed).
 * Success: pushes the value and returns 0. Error: pushes nothing, returns -1 and writes
 * "line L column C: message" to err (1-based; column counts bytes). */
int cm_json_decode(lua_State *L, const char *text, size_t len, char *err, size_t errlen);

/* As cm_json_decode, keeping only what the table at stack index `keep` names: in an object,
 * a key whose entry in `keep` is true is kept whole, a key whose entry is a table is kept
 * with that table applied to its value (when the value is an object), and any other key is
 * left out. Values left out are checked against the JSON grammar as decode checks it (with
 * the same messages) but build nothing, so reading 20 counters out of a perf dump of 200
 * costs a fraction of a full decode. Arrays are kept whole. In Lua: json.decode(text, keep). */
int cm_json_decode_only(lua_State *L, const char *text, size_t len, int keep, char *err,
                        size_t errlen);

/* Encodes the value at index; indent 0 gives compact output, 1..CM_JSON_MAX_INDENT
 * pretty output. name labels the root in error paths (NULL means "value").
 * Success: pushes the JSON text as a string and returns 0. Error: pushes nothing,
 * returns -1 and writes "path: message" to err. */
int cm_json_encode(lua_State *L, int index, int indent, const char *name, char *err, size_t errlen);

/* Lua module "cephmark.json" (registered by the runtime via package.preload):
 *   decode(text)               -> value | nil, "line L column C: message"
 *   encode(value [, options])  -> string; raises "path: message" on unencodable values.
 *                                 options: { indent = 0..32, name = "root label" }
 *   array([t])                 -> t (or a new table) marked as a JSON array
 *   null                       -> the null sentinel */
int luaopen_cephmark_json(lua_State *L);

#endif
