/* YAML codec between YAML text and Lua values, built on libyaml: reads scenario parameter
 * files (`--params FILE.yaml`) and writes results files, from C (cm_yaml_*) and from Lua
 * ("cephmark.yaml"). It shares the JSON codec's value model (json.h): the same array
 * marker and null sentinel, so a value decoded from JSON encodes to YAML and back equal.
 *
 * Value mapping, YAML -> Lua (cm_yaml_decode, yaml.decode, yaml.load_file):
 *   stream  -> exactly one document. A stream with no document at all (empty text, only
 *              comments) pushes nil, so an empty parameter file means "no parameters".
 *              A second document is an error at its start.
 *   mapping -> table with string keys. Keys must be scalars and are taken verbatim,
 *              without type resolution (`1:`, `"1":` and `true:` give the keys "1",
 *              "1" and "true"; like JSON object keys, they stay strings), so `1:` and
 *              `"1":` are duplicates. A duplicate key, an empty plain key, a sequence or
 *              mapping used as a key, an alias used as a key and a plain `<<` key (YAML 1.1
 *              merge keys are not supported; silently ignoring one would drop defaults)
 *              are errors at that key.
 *   sequence -> array 1..n carrying the array marker (CM_JSON_ARRAY_MT); null entries are
 *              the null sentinel, so there are no holes.
 *   scalar  -> quoted ('..', "..") and block (|, >) scalars are always strings. Plain
 *              scalars follow the YAML 1.2 core schema:
 *                null, Null, NULL, ~, empty          -> cm_json_null
 *                true/True/TRUE, false/False/FALSE  -> boolean (yes/no/on/off are strings)
 *                [-+]?[0-9]+                         -> integer, decimal even with leading
 *                                                       zeros ("010" is 10); beyond int64
 *                                                       it is a float, as in JSON
 *                0x[0-9a-fA-F]+, 0o[0-7]+            -> integer; beyond 64 bits: error
 *                [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? -> float
 *                [-+]?(.inf|.Inf|.INF), .nan/.NaN/.NAN                 -> float
 *                anything else ("4K", "1.2.3", "yes", "2024-03-11")   -> string
 *   tags    -> !!str and "!" force a string; !!null, !!bool, !!int and !!float force that
 *              type (error if the text is not one); !!binary decodes base64 to a string
 *              (the encoder's form for strings that are not UTF-8); !!seq and !!map are
 *              accepted on matching nodes; any other tag is an error.
 *   aliases -> *name gives a deep copy of the anchored value (tables are not shared, so
 *              editing one parameter never changes another). All copies in a document
 *              together may create at most CM_YAML_MAX_ALIAS_NODES values (the "billion
 *              laughs" guard); an alias inside the node it refers to is an error.
 * Nesting deeper than CM_YAML_MAX_DEPTH collections (copies included) is an error.
 * Errors: "FILE:LINE:COLUMN: message", 1-based, the column counting characters as libyaml
 * does; FILE is the filename argument, or "<string>" when it is NULL. libyaml's syntax
 * errors are reported at the problem with libyaml's words, except an unclosed quoted
 * scalar (reported at its opening quote) and tabs used as indentation (named as such).
 *
 * Value mapping, Lua -> YAML (cm_yaml_encode, yaml.encode): the JSON encoder's rules for
 * what is an array and what is an object (marker, or keys exactly 1..n; integer keys
 * become decimal strings; keys sorted by bytes), written as block YAML with 2-space
 * indentation, "[]" and "{}" for empty containers, no "---" and a trailing newline.
 *   string  -> plain when it reads back as the same string (also in YAML 1.1 readers
 *              such as PyYAML, so "yes", "n", "0777", "1_000", "12:30" and "2024-03-11"
 *              are quoted);
 *              otherwise double-quoted with escapes (\n, \t, \x07, \u2028, ...), UTF-8
 *              kept as is. Strings that are not valid UTF-8 (YAML text must be) are written
 *              as !!binary base64, which decodes back to the same bytes. Keys longer than
 *              the 1024-character implicit-key limit use the explicit "? key" form.
 *   integer -> decimal; float -> shortest digits that read back to the same double, with
 *              a '.' in the mantissa so that both the core schema and YAML 1.1 readers see a
 *              float (1.0, -0.0, 0.1, 1000.0, 1.0e-07, 1.5e+20); inf/nan -> .inf/-.inf/.nan.
 *   boolean -> true/false; cm_json_null and nil -> null (null decodes as the sentinel).
 *   functions, userdata, threads, other light userdata, cycles, nesting deeper than
 *              CM_YAML_MAX_DEPTH -> error naming the path, e.g.
 *              "results.phases[2].fn: cannot encode a function".
 *
 * Memory: Lua errors (in practice memory errors) raised while decoding propagate to the
 * caller like any Lua API error, but only after the libyaml parser and its current event
 * are freed: the Lua-building part runs inside lua_pcall and the parser lives in the
 * caller's C frame, so nothing leaks. The encoder and load_file keep every temporary on
 * the Lua stack (the file descriptor in a userdata with __gc). Decode/encode errors never
 * raise: they return -1 with a NUL-terminated message in err (truncated to errlen; err
 * may be NULL when errlen is 0).
 */
#ifndef CEPHMARK_YAML_CODEC_H
#define CEPHMARK_YAML_CODEC_H

#include <stddef.h>

#include <lua.h>

#include "json.h"

/* Deepest nesting of sequences/mappings accepted by decode and encode (as for JSON, so any
 * value one codec accepts the other does too). */
#define CM_YAML_MAX_DEPTH CM_JSON_MAX_DEPTH
/* Most values that alias expansion may create in one document. */
#define CM_YAML_MAX_ALIAS_NODES 100000

/* Decodes len bytes of YAML text holding at most one document. filename names the text in
 * error messages (NULL means "<string>"). Success: pushes the value (nil for a stream with
 * no document) and returns 0. Error: pushes nothing, returns -1 and writes
 * "FILE:LINE:COLUMN: message" to err. */
int cm_yaml_decode(lua_State *L, const char *text, size_t len, const char *filename, char *err,
                   size_t errlen);

/* Reads the file at path and decodes it with path as the filename. Success: pushes the
 * value and returns 0. Error: pushes nothing, returns -1 and writes either
 * "cannot read PATH: strerror" or a decode error to err. */
int cm_yaml_load_file(lua_State *L, const char *path, char *err, size_t errlen);

/* Encodes the value at index as block YAML; error paths start with "value". Success:
 * pushes the YAML text as a string and returns 0. Error: pushes nothing, returns -1 and
 * writes "path: message" to err. */
int cm_yaml_encode(lua_State *L, int index, char *err, size_t errlen);

/* As cm_yaml_encode, with name labelling the root in error paths (NULL means "value"),
 * e.g. "results" gives "results.phases[2].fn: cannot encode a function". */
int cm_yaml_encode_named(lua_State *L, int index, const char *name, char *err, size_t errlen);

/* Lua module "cephmark.yaml":
 *   decode(text [, filename])  -> value (nil for no document) | nil, "FILE:LINE:COLUMN: message"
 *   load_file(path)            -> value | nil, "cannot read PATH: strerror" or decode error
 *   encode(value [, options])  -> string; raises "path: message" on unencodable values.
 *                                 options: { name = "root label" }
 *   null                       -> the null sentinel (the same value as json.null) */
int luaopen_cephmark_yaml(lua_State *L);

#endif
