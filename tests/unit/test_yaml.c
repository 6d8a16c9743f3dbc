/* Unit tests for the YAML codec (runtime/yaml.c): a realistic parameter file, the core
 * schema's scalar typing, round trips of results-shaped tables (and of JSON-decoded
 * values), the exact encoder layout, error messages with file:line:column, alias bombs,
 * deep nesting, random mutations of a valid document, Lua memory errors at every
 * allocation (leaks show up under ASan) and the "cephmark.yaml" module.
 * Deterministic: all randomness comes from a seeded generator defined here. */
#include "check.h"
#include "json.h"
#include "yaml_codec.h"

#include <lauxlib.h>
#include <lualib.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------------------- */

static uint64_t random_state;

/* splitmix64: tiny, full-period, and good enough to drive mutations. */
static uint64_t random_next(void)
{
    uint64_t z = (random_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t random_below(size_t n)
{
    return n == 0 ? 0 : (size_t)(random_next() % n);
}

/* Deep equality that also tells integers from floats, compares NaN equal to NaN, -0.0
 * unequal to 0.0 and requires the same array marker: what "round trip" must preserve. */
static const char *const deep_equal_lua =
    "local function eq(a, b, path)\n"
    "  if type(a) ~= type(b) then\n"
    "    return false, path .. ': ' .. type(a) .. ' vs ' .. type(b)\n"
    "  end\n"
    "  if type(a) == 'number' then\n"
    "    if math.type(a) ~= math.type(b) then\n"
    "      return false, path .. ': ' .. math.type(a) .. ' vs ' .. math.type(b)\n"
    "    end\n"
    "    if a ~= a and b ~= b then return true end\n"
    "    if a ~= b or (a == 0 and 1 / a ~= 1 / b) then\n"
    "      return false, path .. ': ' .. tostring(a) .. ' vs ' .. tostring(b)\n"
    "    end\n"
    "    return true\n"
    "  end\n"
    "  if type(a) ~= 'table' then\n"
    "    if a == b then return true end\n"
    "    return false, path .. ': ' .. tostring(a) .. ' vs ' .. tostring(b)\n"
    "  end\n"
    "  if getmetatable(a) ~= getmetatable(b) then\n"
    "    return false, path .. ': array marker differs'\n"
    "  end\n"
    "  for k, v in pairs(a) do\n"
    "    local ok, why = eq(v, rawget(b, k), path .. '.' .. tostring(k))\n"
    "    if not ok then return ok, why end\n"
    "  end\n"
    "  for k in pairs(b) do\n"
    "    if rawget(a, k) == nil then\n"
    "      return false, path .. '.' .. tostring(k) .. ': only on the right'\n"
    "    end\n"
    "  end\n"
    "  return true\n"
    "end\n"
    "return eq\n";

static lua_State *new_state(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "cephmark.json", luaopen_cephmark_json, 0);
    luaL_requiref(L, "cephmark.yaml", luaopen_cephmark_yaml, 0);
    lua_pop(L, 2);
    if (luaL_dostring(L, deep_equal_lua) != LUA_OK) {
        fprintf(stderr, "deep_equal: %s\n", lua_tostring(L, -1));
        exit(2);
    }
    lua_setfield(L, LUA_REGISTRYINDEX, "test.deep_equal");
    return L;
}

/* Returns 1 if the values at a and b are deep-equal, else 0 with the difference in why. */
static int values_equal(lua_State *L, int a, int b, char *why, size_t n)
{
    a = lua_absindex(L, a);
    b = lua_absindex(L, b);
    lua_getfield(L, LUA_REGISTRYINDEX, "test.deep_equal");
    lua_pushvalue(L, a);
    lua_pushvalue(L, b);
    lua_pushliteral(L, "value");
    lua_call(L, 3, 2);
    int equal = lua_toboolean(L, -2);
    snprintf(why, n, "%s", equal ? "" : lua_tostring(L, -1));
    lua_pop(L, 2);
    return equal;
}

/* Runs a Lua chunk that returns one value, and leaves that value on the stack. */
static void push_lua_value(lua_State *L, const char *chunk)
{
    if (luaL_dostring(L, chunk) != LUA_OK) {
        fprintf(stderr, "test chunk failed: %s\n", lua_tostring(L, -1));
        exit(2);
    }
}

/* Decodes text expecting an error; returns the message (static storage). */
static const char *decode_error(lua_State *L, const char *text, size_t len, const char *file)
{
    static char err[512];
    int top = lua_gettop(L);
    if (cm_yaml_decode(L, text, len, file, err, sizeof err) == 0) {
        lua_pop(L, 1);
        snprintf(err, sizeof err, "(no error)");
    }
    CHECK(lua_gettop(L) == top);
    return err;
}

#define CHECK_DECODE_ERROR(L, text, file, want)                                                    \
    do {                                                                                           \
        const char *got_ = decode_error((L), (text), strlen(text), (file));                        \
        CHECK_STR(got_, (want));                                                                   \
    } while (0)

/* Decodes "v: TEXT" and leaves the value of v on the stack; returns 0 on success. */
static int decode_scalar(lua_State *L, const char *text)
{
    char doc[256];
    char err[256];
    snprintf(doc, sizeof doc, "v: %s\n", text);
    if (cm_yaml_decode(L, doc, strlen(doc), "scalar.yaml", err, sizeof err) != 0) {
        fprintf(stderr, "decoding %s: %s\n", doc, err);
        lua_pushnil(L);
        return -1;
    }
    lua_getfield(L, -1, "v");
    lua_remove(L, -2);
    return 0;
}

static void check_null(lua_State *L, const char *text)
{
    CHECK_MSG(decode_scalar(L, text) == 0 && cm_json_isnull(L, -1), "%s should be null", text);
    lua_pop(L, 1);
}

static void check_boolean(lua_State *L, const char *text, int want)
{
    CHECK_MSG(decode_scalar(L, text) == 0 && lua_type(L, -1) == LUA_TBOOLEAN &&
                  lua_toboolean(L, -1) == want,
              "%s should be %s", text, want ? "true" : "false");
    lua_pop(L, 1);
}

static void check_integer(lua_State *L, const char *text, lua_Integer want)
{
    CHECK_MSG(decode_scalar(L, text) == 0 && lua_isinteger(L, -1) && lua_tointeger(L, -1) == want,
              "%s should be the integer %lld", text, (long long)want);
    lua_pop(L, 1);
}

static void check_float(lua_State *L, const char *text, double want)
{
    int ok = decode_scalar(L, text) == 0 && lua_type(L, -1) == LUA_TNUMBER && !lua_isinteger(L, -1);
    double got = ok ? (double)lua_tonumber(L, -1) : 0;
    ok = ok && (isnan(want) ? isnan(got) : got == want && signbit(got) == signbit(want));
    CHECK_MSG(ok, "%s should be the float %.17g", text, want);
    lua_pop(L, 1);
}

static void check_string(lua_State *L, const char *text, const char *want)
{
    int ok = decode_scalar(L, text) == 0 && lua_type(L, -1) == LUA_TSTRING;
    CHECK_MSG(ok && strcmp(lua_tostring(L, -1), want) == 0, "%s should be the string \"%s\"", text,
              want);
    lua_pop(L, 1);
}

/* Encodes the value on top, checks it decodes back deep-equal, and leaves the YAML text on
 * the stack (the value is popped). */
static void check_round_trip(lua_State *L, const char *what)
{
    char err[512];
    char why[512];
    int value = lua_gettop(L);
    if (cm_yaml_encode(L, value, err, sizeof err) != 0) {
        CHECK_MSG(0, "%s: encode failed: %s", what, err);
        lua_settop(L, value - 1);
        lua_pushliteral(L, "");
        return;
    }
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    if (cm_yaml_decode(L, text, len, what, err, sizeof err) != 0) {
        CHECK_MSG(0, "%s: decode of the encoding failed: %s\n%s", what, err, text);
    } else {
        CHECK_MSG(values_equal(L, value, -1, why, sizeof why), "%s: %s\n%s", what, why, text);
        lua_pop(L, 1);
    }
    lua_remove(L, value);
}

/* ---- the realistic parameter file ------------------------------------------------------- */

static const char *const params_yaml =
    "# rados write/read benchmark, 4M objects on a replicated and an EC pool\n"
    "seconds: 10\n"
    "threads: 16\n"
    "block_size: 4M\n"
    "pools: [replica, ec]\n"
    "verify: true\n"
    "label: \"run 7: warm cache\"\n"
    "note: 'it''s fine'\n"
    "cleanup: ~\n"
    "rados:\n"
    "  pool: rbd-bench   # created by the scenario\n"
    "  object_size: 4M\n"
    "  mix:\n"
    "    read: 70\n"
    "    write: 30\n"
    "  latency_target_ms: 2.5\n"
    "phases:\n"
    "  - name: warmup\n"
    "    seconds: 5\n"
    "  - name: measure\n"
    "    seconds: 60\n"
    "    queue_depths: [1, 8, 32]\n"
    "description: |\n"
    "  Writes then reads back.\n"
    "  Two lines.\n";

static void test_params_file(void)
{
    lua_State *L = new_state();
    char err[256];
    int rc = cm_yaml_decode(L, params_yaml, strlen(params_yaml), "bench.yaml", err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc != 0) {
        lua_close(L);
        return;
    }
    int params = lua_gettop(L);
    CHECK(lua_type(L, params) == LUA_TTABLE && !cm_json_isarray(L, params));

    CHECK(lua_getfield(L, params, "seconds") == LUA_TNUMBER && lua_isinteger(L, -1) &&
          lua_tointeger(L, -1) == 10);
    CHECK(lua_getfield(L, params, "threads") == LUA_TNUMBER && lua_tointeger(L, -1) == 16);
    CHECK(lua_getfield(L, params, "block_size") == LUA_TSTRING);
    CHECK_STR(lua_tostring(L, -1), "4M");
    CHECK(lua_getfield(L, params, "verify") == LUA_TBOOLEAN && lua_toboolean(L, -1));
    CHECK(lua_getfield(L, params, "label") == LUA_TSTRING);
    CHECK_STR(lua_tostring(L, -1), "run 7: warm cache");
    CHECK(lua_getfield(L, params, "note") == LUA_TSTRING);
    CHECK_STR(lua_tostring(L, -1), "it's fine");
    lua_getfield(L, params, "cleanup");
    CHECK(cm_json_isnull(L, -1));
    CHECK(lua_getfield(L, params, "description") == LUA_TSTRING);
    CHECK_STR(lua_tostring(L, -1), "Writes then reads back.\nTwo lines.\n");
    lua_settop(L, params);

    CHECK(lua_getfield(L, params, "pools") == LUA_TTABLE && cm_json_isarray(L, -1));
    CHECK(lua_rawlen(L, -1) == 2);
    CHECK(lua_rawgeti(L, -1, 1) == LUA_TSTRING);
    CHECK_STR(lua_tostring(L, -1), "replica");
    CHECK(lua_rawgeti(L, -2, 2) == LUA_TSTRING);
    CHECK_STR(lua_tostring(L, -1), "ec");
    lua_settop(L, params);

    CHECK(lua_getfield(L, params, "rados") == LUA_TTABLE && !cm_json_isarray(L, -1));
    CHECK(lua_getfield(L, -1, "pool") == LUA_TSTRING);
    CHECK_STR(lua_tostring(L, -1), "rbd-bench");
    CHECK(lua_getfield(L, -2, "latency_target_ms") == LUA_TNUMBER && !lua_isinteger(L, -1) &&
          lua_tonumber(L, -1) == 2.5);
    CHECK(lua_getfield(L, -3, "mix") == LUA_TTABLE);
    CHECK(lua_getfield(L, -1, "read") == LUA_TNUMBER && lua_tointeger(L, -1) == 70);
    CHECK(lua_getfield(L, -2, "write") == LUA_TNUMBER && lua_tointeger(L, -1) == 30);
    lua_settop(L, params);

    CHECK(lua_getfield(L, params, "phases") == LUA_TTABLE && cm_json_isarray(L, -1) &&
          lua_rawlen(L, -1) == 2);
    CHECK(lua_rawgeti(L, -1, 2) == LUA_TTABLE);
    CHECK(lua_getfield(L, -1, "name") == LUA_TSTRING);
    CHECK_STR(lua_tostring(L, -1), "measure");
    CHECK(lua_getfield(L, -2, "queue_depths") == LUA_TTABLE && cm_json_isarray(L, -1) &&
          lua_rawlen(L, -1) == 3);
    CHECK(lua_rawgeti(L, -1, 3) == LUA_TNUMBER && lua_tointeger(L, -1) == 32);
    lua_settop(L, params);

    lua_pushvalue(L, params);
    check_round_trip(L, "params");
    lua_settop(L, 0);
    lua_close(L);
}

/* ---- scalar typing (YAML 1.2 core schema) ------------------------------------------------ */

static void test_scalar_types(void)
{
    lua_State *L = new_state();

    check_null(L, "null");
    check_null(L, "Null");
    check_null(L, "NULL");
    check_null(L, "~");
    check_null(L, "");
    check_null(L, "# only a comment");
    check_null(L, "!!null ''");

    check_boolean(L, "true", 1);
    check_boolean(L, "True", 1);
    check_boolean(L, "TRUE", 1);
    check_boolean(L, "false", 0);
    check_boolean(L, "False", 0);
    check_boolean(L, "FALSE", 0);
    check_boolean(L, "!!bool \"true\"", 1);
    /* YAML 1.1 booleans are strings in 1.2 */
    check_string(L, "yes", "yes");
    check_string(L, "No", "No");
    check_string(L, "on", "on");
    check_string(L, "off", "off");
    check_string(L, "tRue", "tRue");

    check_integer(L, "0", 0);
    check_integer(L, "42", 42);
    check_integer(L, "-17", -17);
    check_integer(L, "+5", 5);
    check_integer(L, "-0", 0);
    check_integer(L, "010", 10); /* decimal in the core schema, not octal */
    check_integer(L, "0x1F", 31);
    check_integer(L, "0xff", 255);
    check_integer(L, "0o17", 15);
    check_integer(L, "0x7FFFFFFFFFFFFFFF", INT64_MAX);
    check_integer(L, "9223372036854775807", INT64_MAX);
    check_integer(L, "-9223372036854775808", INT64_MIN);
    check_integer(L, "!!int \"42\"", 42);
    check_float(L, "9223372036854775808", 9223372036854775808.0); /* beyond int64, as JSON */
    check_string(L, "0x", "0x");
    check_string(L, "0o8", "0o8");
    check_string(L, "-0x10", "-0x10");
    check_string(L, "1_000", "1_000");
    check_string(L, "0b101", "0b101");

    check_float(L, "1.5", 1.5);
    check_float(L, "-0.25", -0.25);
    check_float(L, ".5", 0.5);
    check_float(L, "1.", 1.0);
    check_float(L, "1e3", 1000.0);
    check_float(L, "1E-7", 1e-7);
    check_float(L, "+1.5e+3", 1500.0);
    check_float(L, "-0.0", -0.0);
    check_float(L, ".inf", INFINITY);
    check_float(L, ".Inf", INFINITY);
    check_float(L, "+.INF", INFINITY);
    check_float(L, "-.inf", -INFINITY);
    check_float(L, ".nan", NAN);
    check_float(L, ".NaN", NAN);
    check_float(L, ".NAN", NAN);
    check_float(L, "!!float 3", 3.0);
    check_float(L, "!!float '.inf'", INFINITY);
    check_string(L, "inf", "inf");
    check_string(L, "nan", "nan");
    check_string(L, ".infinity", ".infinity");
    check_string(L, "1e", "1e");
    check_string(L, "1.2.3", "1.2.3");

    /* what the size and duration parsers get */
    check_string(L, "4K", "4K");
    check_string(L, "4M", "4M");
    check_string(L, "1.5G", "1.5G");
    check_string(L, "30s", "30s");
    check_string(L, "2024-03-11", "2024-03-11");
    check_string(L, "12:30", "12:30");
    check_string(L, "10.0.0.1:6789", "10.0.0.1:6789");
    check_string(L, "hello world", "hello world");

    /* quoted and block scalars are always strings */
    check_string(L, "\"10\"", "10");
    check_string(L, "'10'", "10");
    check_string(L, "\"true\"", "true");
    check_string(L, "'null'", "null");
    check_string(L, "\"~\"", "~");
    check_string(L, "\"\"", "");
    check_string(L, "''", "");
    check_string(L, "\".inf\"", ".inf");
    check_string(L, "|\n  123\n", "123\n");
    check_string(L, ">-\n  1\n  2\n", "1 2");
    check_string(L, "!!str 10", "10");
    check_string(L, "! 10", "10");
    check_string(L, "\"tab\\there\\x41\\u00e9\\0\"",
                 "tab\there"
                 "A\xc3\xa9");
    CHECK(decode_scalar(L, "\"a\\0b\"") == 0 && lua_rawlen(L, -1) == 3);
    lua_pop(L, 1);
    check_string(L, "!!binary aGVsbG8=", "hello");
    check_string(L, "!!binary |\n  aGVs\n  bG8=\n", "hello");

    /* keys are strings, never typed */
    const char *keys = "1: one\ntrue: yes\nnull: n\n0x10: hex\n\"2\": two\n";
    char err[256];
    CHECK_MSG(cm_yaml_decode(L, keys, strlen(keys), "keys.yaml", err, sizeof err) == 0, "%s", err);
    CHECK(lua_getfield(L, -1, "1") == LUA_TSTRING);
    CHECK(lua_getfield(L, -2, "true") == LUA_TSTRING);
    CHECK(lua_getfield(L, -3, "null") == LUA_TSTRING);
    CHECK(lua_getfield(L, -4, "0x10") == LUA_TSTRING);
    CHECK(lua_getfield(L, -5, "2") == LUA_TSTRING);
    lua_rawgeti(L, -6, 1);
    CHECK(lua_isnil(L, -1));
    lua_settop(L, 0);

    /* an empty stream has no document: nil; an empty document is null */
    CHECK(cm_yaml_decode(L, "", 0, "e.yaml", err, sizeof err) == 0 && lua_isnil(L, -1));
    CHECK(cm_yaml_decode(L, "# nothing\n", 10, "e.yaml", err, sizeof err) == 0 && lua_isnil(L, -1));
    CHECK(cm_yaml_decode(L, "---\n", 4, "e.yaml", err, sizeof err) == 0 && cm_json_isnull(L, -1));
    CHECK(cm_yaml_decode(L, NULL, 0, NULL, err, sizeof err) == 0 && lua_isnil(L, -1));
    CHECK(cm_yaml_decode(L, "42", 2, NULL, err, sizeof err) == 0 && lua_tointeger(L, -1) == 42);
    CHECK(lua_gettop(L) == 5);
    lua_settop(L, 0);

    /* aliases copy the anchored value; the copies are separate tables */
    const char *aliased = "defaults: &d {threads: 16, sizes: [4K, 4M]}\n"
                          "read: *d\n"
                          "write: *d\n"
                          "name: &n rbd\n"
                          "pool: *n\n";
    CHECK_MSG(cm_yaml_decode(L, aliased, strlen(aliased), "a.yaml", err, sizeof err) == 0, "%s",
              err);
    lua_getfield(L, 1, "defaults");
    lua_getfield(L, 1, "read");
    lua_getfield(L, 1, "write");
    char why[256];
    CHECK_MSG(values_equal(L, 2, 3, why, sizeof why), "%s", why);
    CHECK_MSG(values_equal(L, 2, 4, why, sizeof why), "%s", why);
    CHECK(!lua_rawequal(L, 2, 3) && !lua_rawequal(L, 3, 4));
    lua_getfield(L, 3, "sizes");
    lua_getfield(L, 4, "sizes");
    CHECK(!lua_rawequal(L, -1, -2) && cm_json_isarray(L, -1));
    CHECK(lua_getfield(L, 1, "pool") == LUA_TSTRING);
    CHECK_STR(lua_tostring(L, -1), "rbd");
    lua_settop(L, 0);
    lua_close(L);
}

/* ---- encoder ------------------------------------------------------------------------------ */

static const char *const results_lua =
    "local json = require 'cephmark.json'\n"
    "local A = json.array\n"
    "return {\n"
    "  scenario = 'rados-bench', seconds = 10, ok = true, failed = false, failed_ops = 0,\n"
    "  latency = { p50 = 0.1, p99 = 1e-7, mean = 0.003141592653589793, max = 12.0,\n"
    "              min = -0.0, tiny = 5e-324, huge = 1.7976931348623157e308, big = 1e20,\n"
    "              third = 1 / 3, thousand = 1000.0 },\n"
    "  extremes = A{ math.maxinteger, math.mininteger, -1, 0, math.huge, -math.huge, 0/0 },\n"
    "  counts = A{ 1, 2, 3 }, empty_array = A{}, empty_object = {},\n"
    "  nested_seq = A{ A{ 1, 2 }, A{}, A{ A{} }, {} },\n"
    "  nulls = A{ json.null, 1, json.null },\n"
    "  phases = A{ { name = 'write', ops = 1000, bytes = 4194304 },\n"
    "              { name = 'read', errors = A{ 'ENOENT', 'ETIMEDOUT' } } },\n"
    "  strings = A{ 'true', 'True', '1', '-1', '1.5', '1e3', 'null', '~', '4', '', 'a: b',\n"
    "    '  leading', 'trailing ', '#x', 'a #b', '- x', '-', '?', ':', 'a:', '@x', '`x',\n"
    "    '!x', '&x', '*x', '|', '>', '%x', '{', '}', '[', ']', ',', \"'\", '\"',\n"
    "    'line\\nbreak', 'tab\\there', 'cr\\rhere', 'quote\"s', 'back\\\\slash', 'yes', 'off',\n"
    "    'y', '0777', '1_000', '0x1F', '0o7', '2024-03-11', '12:30', '...', '---', '<<',\n"
    "    '.inf', '.nan', '.mgr', '4K', '1.5G', 'http://x:1/y', 'hello world', 'NuLL',\n"
    "    '\\u{e9} \\u{fc} \\u{65e5}\\u{672c}', '\\0nul', '\\x7f', '\\u{85}', '\\u{a0}',\n"
    "    '\\u{2028}\\u{2029}', '\\u{feff}bom', '\\u{fffe}', '\\u{10ffff}', '\\xff\\xfe',\n"
    "    '\\xc0\\x80', '\\xed\\xa0\\x80', 'ok\\x80', string.rep('x', 5000) },\n"
    "  ['key with spaces'] = 1, ['1'] = 'one', ['true'] = 't', [''] = 'empty key',\n"
    "  ['a: b'] = 2, ['\\xff'] = 'binary key', ['-'] = 'dash', ['?'] = 'question',\n"
    "  [string.rep('k', 2000)] = A{ 1, { [string.rep('j', 1500)] = { x = 1 } } },\n"
    "  deep = { a = { b = { c = { d = {} } } } },\n"
    "}\n";

static void test_round_trip(void)
{
    lua_State *L = new_state();
    push_lua_value(L, results_lua);
    lua_pushvalue(L, -1);
    check_round_trip(L, "results");
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    CHECK(len > 0 && text[len - 1] == '\n');
    CHECK(strncmp(text, "---", 3) != 0);
    /* deterministic: the same value encodes to the same bytes */
    char err[256];
    CHECK(cm_yaml_encode(L, -2, err, sizeof err) == 0);
    CHECK(lua_rawequal(L, -1, -2));
    lua_settop(L, 0);

    /* root scalars */
    static const char *const scalars[] = {
        "return 42",           "return -0.0",      "return 'x'",    "return ''",
        "return '...'",        "return '--- x'",   "return 'a: b'", "return true",
        "return 0/0",          "return 2^63",      "return 0.1",    "return '\\n'",
        "return '# c'",        "return '%YAML'",   "return '  x'",  "return {}",
        "return json.array()", "return json.null",
    };
    lua_getglobal(L, "require");
    lua_pushliteral(L, "cephmark.json");
    lua_call(L, 1, 1);
    lua_setglobal(L, "json");
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        push_lua_value(L, scalars[i]);
        check_round_trip(L, scalars[i]);
        lua_pop(L, 1);
    }

    /* unmarked sequences encode as sequences and come back marked */
    push_lua_value(L, "return { list = { 'a', 'b' }, map = { [1] = 'x', [3] = 'y' } }");
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == 0);
    CHECK_STR(lua_tostring(L, -1), "list:\n- a\n- b\nmap:\n  \"1\": x\n  \"3\": \"y\"\n");
    lua_settop(L, 0);

    /* integer keys become strings, as in JSON, so an equal string key collides */
    push_lua_value(L, "return { [1] = 'a', ['1'] = 'b' }");
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == -1);
    CHECK_STR(err, "value: integer key and string key both encode as \"1\"");
    lua_settop(L, 0);
    lua_close(L);
}

static void test_encode_layout(void)
{
    lua_State *L = new_state();
    push_lua_value(L, "local A = require('cephmark.json').array\n"
                      "return { name = 'rbd', size = 3, pools = A{ 'a', 'b' }, empty = {},\n"
                      "  none = A{}, nested = { x = 1.5, y = 'yes' },\n"
                      "  list = A{ { a = 1, b = 2 }, A{ 1, A{ 2, 3 } }, {}, 'x' },\n"
                      "  ratio = 1e-07, whole = 2.0, big = 1e17, flags = A{ true, false } }");
    char err[256];
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == 0);
    CHECK_STR(lua_tostring(L, -1), "big: 1.0e+17\n"
                                   "empty: {}\n"
                                   "flags:\n"
                                   "- true\n"
                                   "- false\n"
                                   "list:\n"
                                   "- a: 1\n"
                                   "  b: 2\n"
                                   "- - 1\n"
                                   "  - - 2\n"
                                   "    - 3\n"
                                   "- {}\n"
                                   "- x\n"
                                   "name: rbd\n"
                                   "nested:\n"
                                   "  x: 1.5\n"
                                   "  \"y\": \"yes\"\n"
                                   "none: []\n"
                                   "pools:\n"
                                   "- a\n"
                                   "- b\n"
                                   "ratio: 1.0e-07\n"
                                   "size: 3\n"
                                   "whole: 2.0\n");
    lua_settop(L, 0);

    push_lua_value(L, "return { s = 'a\\tb\\n\\\"c\\\\', u = '\\u{e9}\\u{85}\\x01', "
                      "b = '\\xff\\x00\\x01', e = '', t = 'true', n = '12', f = '1.5', "
                      "sp = ' x', c = 'x: y', h = 'x #y', i = 0.1, ni = -math.huge, nan = 0/0 }");
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == 0);
    CHECK_STR(lua_tostring(L, -1), "b: !!binary \"/wAB\"\n"
                                   "c: 'x: y'\n"
                                   "e: \"\"\n"
                                   "f: \"1.5\"\n"
                                   "h: 'x #y'\n"
                                   "i: 0.1\n"
                                   "\"n\": \"12\"\n" /* "n" is a YAML 1.1 boolean */
                                   "nan: .nan\n"
                                   "ni: -.inf\n"
                                   "s: \"a\\tb\\n\\\"c\\\\\"\n"
                                   "sp: ' x'\n"
                                   "t: \"true\"\n"
                                   "u: \"\xc3\xa9\\N\\x01\"\n");
    lua_settop(L, 0);

    /* explicit keys past libyaml's implicit key limit */
    push_lua_value(L, "return { [string.rep('k', 1001)] = 1 }");
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == 0);
    const char *text = lua_tostring(L, -1);
    CHECK(strncmp(text, "? kkk", 5) == 0 && strcmp(text + strlen(text) - 5, "\n: 1\n") == 0);
    lua_settop(L, 0);

    /* root scalars and empty containers have a trailing newline and no document marker */
    push_lua_value(L, "return 'x'");
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == 0);
    CHECK_STR(lua_tostring(L, -1), "x\n");
    lua_settop(L, 0);
    lua_pushnil(L);
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == 0);
    CHECK_STR(lua_tostring(L, -1), "null\n");
    lua_settop(L, 0);
    lua_newtable(L);
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == 0);
    CHECK_STR(lua_tostring(L, -1), "{}\n");
    lua_settop(L, 0);
    lua_close(L);
}

static void check_encode_error(lua_State *L, const char *chunk, const char *name, const char *want)
{
    char err[256];
    push_lua_value(L, chunk);
    int top = lua_gettop(L);
    CHECK_MSG(cm_yaml_encode_named(L, -1, name, err, sizeof err) == -1, "%s encoded", chunk);
    CHECK(lua_gettop(L) == top);
    CHECK_STR(err, want);
    lua_settop(L, 0);
}

static void test_encode_errors(void)
{
    lua_State *L = new_state();
    check_encode_error(L, "return { phases = { {}, { fn = print } } }", "results",
                       "results.phases[2].fn: cannot encode a function");
    check_encode_error(L, "return { phases = { {}, { fn = print } } }", NULL,
                       "value.phases[2].fn: cannot encode a function");
    check_encode_error(L, "return { ['a b'] = { coroutine.create(print) } }", "r",
                       "r[\"a b\"][1]: cannot encode a thread");
    check_encode_error(L, "local t = { x = {} }; t.x.y = t; return t", "r",
                       "r.x.y: cycle: table contains itself");
    check_encode_error(L, "return { [true] = 1 }", "r",
                       "r: cannot encode table key true (keys must be strings or integers)");
    check_encode_error(L, "local t = require('cephmark.json').array{ 1, 2 }; t[4] = 4; return t",
                       "r",
                       "r: array has holes (3 elements but largest index 4; use yaml.null for "
                       "null elements)");
    check_encode_error(L, "return print", NULL, "value: cannot encode a function");
    lua_settop(L, 0);

    /* the 201st nested table is refused, with its path */
    push_lua_value(L, "local t = {}; local c = t; for i = 1, 200 do c[1] = {}; c = c[1] end "
                      "return t");
    char err[4096];
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == -1);
    CHECK(strncmp(err, "value[1][1]", 11) == 0 &&
          strstr(err, ": nesting deeper than 200 levels") != NULL);
    lua_settop(L, 0);
    push_lua_value(L, "local A = require('cephmark.json').array\n"
                      "local t = A{}; local c = t; for i = 1, 199 do c[1] = A{}; c = c[1] end "
                      "return t");
    check_round_trip(L, "200 levels");
    lua_settop(L, 0);

    lua_newuserdatauv(L, 8, 0);
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == -1);
    CHECK_STR(err, "value: cannot encode a userdata");
    lua_settop(L, 0);
    lua_pushlightuserdata(L, &err);
    CHECK(cm_yaml_encode(L, -1, err, sizeof err) == -1);
    CHECK_STR(err, "value: cannot encode a light userdata (only yaml.null is allowed)");
    lua_settop(L, 0);
    lua_close(L);
}

/* JSON-decoded values encode to YAML and back equal, and YAML-decoded values re-encode to
 * the same JSON. */
static void test_json_interplay(void)
{
    static const char *const json_text =
        "{\"pool_id\":2,\"pool_name\":\"rbd-bench\",\"flags_names\":\"hashpspool\","
        "\"size\":3,\"quota_max_bytes\":107374182400,\"tier_of\":-1,\"fast_read\":false,"
        "\"options\":{},\"pool_snaps\":[],\"removed_snaps\":\"[]\",\"last_change\":\"412\","
        "\"application_metadata\":{\"rbd\":{}},\"read_balance\":{\"score_acting\":1.5,"
        "\"primary_affinity_weighted\":0.99999994039535522,\"average\":1.0},"
        "\"quorum\":[0,1,2],\"names\":[\"a\",null,\"c\"],\"weird\":\"yes: no # 1\"}";
    lua_State *L = new_state();
    char err[256];
    CHECK(cm_json_decode(L, json_text, strlen(json_text), err, sizeof err) == 0);
    int from_json = lua_gettop(L);
    CHECK(cm_yaml_encode(L, from_json, err, sizeof err) == 0);
    size_t len;
    const char *yaml_text = lua_tolstring(L, -1, &len);
    CHECK_MSG(cm_yaml_decode(L, yaml_text, len, "j.yaml", err, sizeof err) == 0, "%s", err);
    int from_yaml = lua_gettop(L);
    char why[256];
    CHECK_MSG(values_equal(L, from_json, from_yaml, why, sizeof why), "%s", why);
    CHECK(cm_json_encode(L, from_json, 0, NULL, err, sizeof err) == 0);
    CHECK(cm_json_encode(L, from_yaml, 0, NULL, err, sizeof err) == 0);
    CHECK(lua_rawequal(L, -1, -2));
    lua_settop(L, 0);
    lua_close(L);
}

/* ---- decode errors ------------------------------------------------------------------------ */

static void test_decode_errors(void)
{
    lua_State *L = new_state();

    CHECK_DECODE_ERROR(L, "seconds: 10\nrados:\n\tpool: rbd\n", "params.yaml",
                       "params.yaml:3:1: tab character where YAML expects spaces (tabs cannot "
                       "be used for indentation)");
    CHECK_DECODE_ERROR(L, "rados:\n  pool: rbd\n\tsize: 3\n", "params.yaml",
                       "params.yaml:3:1: tab character where YAML expects spaces (tabs cannot "
                       "be used for indentation)");
    CHECK_DECODE_ERROR(L, "seconds: 10\npool: \"rbd\nthreads: 4\n", "params.yaml",
                       "params.yaml:2:7: unclosed quoted string (the text ends before its "
                       "closing quote)");
    CHECK_DECODE_ERROR(L, "pool: 'rbd\n", "params.yaml",
                       "params.yaml:1:7: unclosed quoted string (the text ends before its "
                       "closing quote)");
    CHECK_DECODE_ERROR(L, "threads: 4\nseconds: 10\nthreads: 8\n", "params.yaml",
                       "params.yaml:3:1: duplicate key \"threads\"");
    CHECK_DECODE_ERROR(L, "rados:\n  pool: a\n  size: 3\n  \"pool\": b\n", "params.yaml",
                       "params.yaml:4:3: duplicate key \"pool\"");
    CHECK_DECODE_ERROR(L, "x: {a: 1, b: 2, a: 3}\n", "p.yaml", "p.yaml:1:17: duplicate key \"a\"");
    CHECK_DECODE_ERROR(L, "1: x\n\"1\": y\n", "p.yaml", "p.yaml:2:1: duplicate key \"1\"");
    CHECK_DECODE_ERROR(L, "pools: x\n[a, b]: c\n", "params.yaml",
                       "params.yaml:2:1: mapping key must be a scalar, got a sequence");
    CHECK_DECODE_ERROR(L, "? - a\n  - b\n: c\n", "p.yaml",
                       "p.yaml:1:3: mapping key must be a scalar, got a sequence");
    CHECK_DECODE_ERROR(L, "? {a: 1}\n: c\n", "p.yaml",
                       "p.yaml:1:3: mapping key must be a scalar, got a mapping");
    CHECK_DECODE_ERROR(L, "a: &k x\n*k : y\n", "p.yaml",
                       "p.yaml:2:1: mapping key must be a scalar, got an alias (aliases cannot "
                       "be keys)");
    CHECK_DECODE_ERROR(L, "seconds: 10\n---\nseconds: 20\n", "params.yaml",
                       "params.yaml:2:1: a second document starts here (expected a single "
                       "document)");
    CHECK_DECODE_ERROR(L, "--- 1\n--- 2\n", "p.yaml",
                       "p.yaml:2:1: a second document starts here (expected a single document)");
    CHECK_DECODE_ERROR(L, "a: 1\nb: *nope\n", "p.yaml",
                       "p.yaml:2:4: unknown alias *nope (no anchor &nope before it)");
    CHECK_DECODE_ERROR(L, "a: &x\n  - 1\n  - *x\n", "p.yaml",
                       "p.yaml:3:5: alias *x is inside the node it refers to (recursive aliases "
                       "are not supported)");
    CHECK_DECODE_ERROR(L, "base: &b {a: 1}\n<<: *b\n", "p.yaml",
                       "p.yaml:2:1: merge keys (<<) are not supported (write the keys out, or "
                       "quote \"<<\" to use it as a plain key)");
    CHECK_DECODE_ERROR(L, "? \n: v\n", "p.yaml", "p.yaml:1:2: mapping key is empty");
    CHECK_DECODE_ERROR(L, "a: !!int abc\n", "p.yaml",
                       "p.yaml:1:4: \"abc\" is not an integer (as its tag requires)");
    CHECK_DECODE_ERROR(L, "a: !!int 1.5\n", "p.yaml",
                       "p.yaml:1:4: \"1.5\" is not an integer (as its tag requires)");
    CHECK_DECODE_ERROR(L, "a: !!bool yes\n", "p.yaml",
                       "p.yaml:1:4: \"yes\" is not a boolean (as its tag requires)");
    CHECK_DECODE_ERROR(L, "a: !!int 9223372036854775808\n", "p.yaml",
                       "p.yaml:1:4: integer 9223372036854775808 does not fit in a signed 64-bit "
                       "integer");
    CHECK_DECODE_ERROR(L, "a: 0x8000000000000000\n", "p.yaml",
                       "p.yaml:1:4: integer 0x8000000000000000 does not fit in a signed 64-bit "
                       "integer");
    CHECK_DECODE_ERROR(L, "a: !custom x\n", "p.yaml",
                       "p.yaml:1:4: unsupported tag !custom (supported: !!str, !!int, "
                       "!!float, !!bool, !!null, !!binary, !!seq, !!map)");
    CHECK_DECODE_ERROR(L, "a: !!map [1]\n", "p.yaml",
                       "p.yaml:1:4: tag !!map cannot be used on a sequence");
    CHECK_DECODE_ERROR(L, "a: !!binary \"a$==\"\n", "p.yaml",
                       "p.yaml:1:4: invalid base64 in !!binary scalar (at character 2)");
    CHECK_DECODE_ERROR(L, "a: !!binary abc\n", "p.yaml",
                       "p.yaml:1:4: invalid base64 in !!binary scalar (length must be a "
                       "multiple of 4)");
    CHECK_DECODE_ERROR(L, "a: ok\nb: x\xffy\n", "p.yaml",
                       "p.yaml:2:5: invalid leading UTF-8 octet (byte 0xFF; YAML text must be "
                       "UTF-8)");
    CHECK_DECODE_ERROR(L, "a: ok\r\nb: \xc3\xa9x\x07\n", "p.yaml",
                       "p.yaml:2:6: control characters are not allowed (U+0007)");
    CHECK_DECODE_ERROR(L, "a: [1, 2\nb: 3\n", "p.yaml",
                       "p.yaml:2:2: did not find expected ',' or ']' (while parsing a flow "
                       "sequence at line 1 column 4)");
    CHECK_DECODE_ERROR(L, "a: b: c\n", NULL,
                       "<string>:1:5: mapping values are not allowed in this context");
    CHECK_DECODE_ERROR(L, "a:\n  - 1\n b: 2\n", "p.yaml",
                       "p.yaml:3:2: did not find expected key (while parsing a block mapping at "
                       "line 1 column 1)");
    const char nul_text[] = "a: x\0y\n";
    const char *got = decode_error(L, nul_text, sizeof nul_text - 1, "p.yaml");
    CHECK_STR(got, "p.yaml:1:5: control characters are not allowed (U+0000)");

    /* a NULL err buffer is allowed */
    CHECK(cm_yaml_decode(L, "a: [", 4, "p.yaml", NULL, 0) == -1);
    char tiny[8];
    CHECK(cm_yaml_decode(L, "a: [", 4, "p.yaml", tiny, sizeof tiny) == -1);
    CHECK_STR(tiny, "p.yaml:");
    CHECK(lua_gettop(L) == 0);
    lua_close(L);
}

/* A "billion laughs": each level holds nine aliases to the previous one. */
static const char *const alias_bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                                      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                                      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                                      "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                                      "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                                      "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                                      "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
                                      "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";

static char *repeat(const char *unit, size_t times, const char *tail)
{
    size_t n = strlen(unit);
    size_t tail_len = strlen(tail);
    char *text = malloc(n * times + tail_len + 1);
    for (size_t i = 0; i < times; i++)
        memcpy(text + i * n, unit, n);
    memcpy(text + n * times, tail, tail_len + 1);
    return text;
}

static void test_limits(void)
{
    lua_State *L = new_state();

    /* Copies of e (66430 values each) on top of the 74718 made for b..e exceed the budget
     * at the first alias of line 6. */
    CHECK_DECODE_ERROR(L, alias_bomb, "bomb.yaml",
                       "bomb.yaml:6:8: aliases expand to more than 100000 values (refusing what "
                       "looks like an alias bomb)");

    char *deep = repeat("[", 10000, "");
    CHECK_DECODE_ERROR(L, deep, "deep.yaml", "deep.yaml:1:201: nesting deeper than 200 levels");
    free(deep);
    deep = repeat("{a: ", 10000, "1");
    CHECK_DECODE_ERROR(L, deep, "deep.yaml", "deep.yaml:1:801: nesting deeper than 200 levels");
    free(deep);
    deep = repeat("- ", 10000, "x\n");
    CHECK_DECODE_ERROR(L, deep, "deep.yaml", "deep.yaml:1:401: nesting deeper than 200 levels");
    free(deep);

    /* block mappings, one level per line: line 201 holds the 201st */
    size_t cap = 0;
    for (int i = 0; i < 300; i++)
        cap += (size_t)i * 2 + 3;
    char *block = malloc(cap + 1);
    size_t pos = 0;
    for (int i = 0; i < 300; i++) {
        memset(block + pos, ' ', (size_t)i * 2);
        pos += (size_t)i * 2;
        memcpy(block + pos, "a:\n", 3);
        pos += 3;
    }
    block[pos] = '\0';
    CHECK_DECODE_ERROR(L, block, "deep.yaml", "deep.yaml:201:401: nesting deeper than 200 levels");
    free(block);

    /* exactly 200 levels is fine, in both directions */
    char *ok = malloc(401);
    memset(ok, '[', 200);
    memset(ok + 200, ']', 200);
    ok[400] = '\0';
    char err[256];
    CHECK_MSG(cm_yaml_decode(L, ok, 400, "ok.yaml", err, sizeof err) == 0, "%s", err);
    check_round_trip(L, "200 levels");
    lua_settop(L, 0);
    free(ok);

    /* an alias whose copy would nest too deep */
    char *nest = repeat("[", 150, "");
    char *closing = repeat("]", 150, "");
    size_t doc_len = 4 * 150 + 64;
    char *doc = malloc(doc_len);
    snprintf(doc, doc_len, "a: &x %s%s\nb: %sx, *x%s\n", nest, closing, nest, closing);
    CHECK_DECODE_ERROR(L, doc, "alias.yaml",
                       "alias.yaml:2:157: nesting deeper than 200 levels (through this alias)");
    free(nest);
    free(closing);
    free(doc);

    /* many small aliases within the budget are fine */
    const char *fine = "a: &a [1, 2, 3]\nb: [*a, *a, *a, *a]\n";
    CHECK(cm_yaml_decode(L, fine, strlen(fine), "f.yaml", err, sizeof err) == 0);
    lua_settop(L, 0);
    lua_close(L);
}

/* ---- robustness: mutations and memory errors --------------------------------------------- */

static const char *const fuzz_seed =
    "%YAML 1.2\n"
    "---\n"
    "# comment\n"
    "seconds: 10\n"
    "block_size: 4M\n"
    "pools: [replica, ec, {name: x, size: 3}]\n"
    "defaults: &d {threads: 16, ratio: 0.5, flags: [true, ~, .inf]}\n"
    "phase: *d\n"
    "quoted: \"a\\tb\\u00e9 \\x41\"\n"
    "single: 'it''s'\n"
    "block: |\n"
    "  line one\n"
    "  line two\n"
    "folded: >-\n"
    "  folded\n"
    "  text\n"
    "? complex key\n"
    ": !!str 12\n"
    "bin: !!binary aGVsbG8=\n"
    "list:\n"
    "  - - 1\n"
    "    - 0x1F\n"
    "  - k: v\n"
    "    j: -1.5e3\n"
    "  - &s scalar\n"
    "  - *s\n"
    "...\n";

static void test_mutations(void)
{
    static const char interesting[] = "[]{}:,-?&*!|>'\"%@`#\t\n\r \\0~.";
    lua_State *L = new_state();
    size_t seed_len = strlen(fuzz_seed);
    char *text = malloc(seed_len * 2 + 64);
    char err[512];
    char why[512];
    int decoded = 0;
    random_state = 0x5eed;
    for (int round = 0; round < 20000; round++) {
        size_t len = seed_len;
        memcpy(text, fuzz_seed, seed_len);
        int edits = 1 + (int)random_below(4);
        for (int k = 0; k < edits; k++) {
            size_t at = random_below(len + 1);
            switch (random_below(5)) {
            case 0: /* random byte */
                if (at < len)
                    text[at] = (char)random_below(256);
                break;
            case 1: /* YAML-significant byte */
                if (at < len)
                    text[at] = interesting[random_below(sizeof interesting - 1)];
                break;
            case 2: /* delete */
                if (at < len) {
                    memmove(text + at, text + at + 1, len - at - 1);
                    len--;
                }
                break;
            case 3: /* insert */
                if (len < seed_len * 2) {
                    memmove(text + at + 1, text + at, len - at);
                    text[at] = interesting[random_below(sizeof interesting - 1)];
                    len++;
                }
                break;
            default: /* truncate */
                len = at;
                break;
            }
        }
        int top = lua_gettop(L);
        if (cm_yaml_decode(L, text, len, "fuzz.yaml", err, sizeof err) != 0) {
            CHECK_MSG(strncmp(err, "fuzz.yaml:", 10) == 0, "%s", err);
            CHECK(lua_gettop(L) == top);
            continue;
        }
        decoded++;
        if (lua_isnil(L, -1)) { /* no document: nil, which encodes as null */
            lua_settop(L, top);
            continue;
        }
        /* whatever decodes must survive a round trip */
        int value = lua_gettop(L);
        if (cm_yaml_encode(L, value, err, sizeof err) != 0) {
            CHECK_MSG(0, "encode of a decoded value failed: %s", err);
        } else {
            size_t n;
            const char *again = lua_tolstring(L, -1, &n);
            if (cm_yaml_decode(L, again, n, "again.yaml", err, sizeof err) != 0) {
                CHECK_MSG(0, "re-decode failed: %s\n%s", err, again);
            } else {
                CHECK_MSG(values_equal(L, value, -1, why, sizeof why), "%s", why);
            }
        }
        lua_settop(L, top);
    }
    CHECK(decoded > 1000); /* the mutations must not all be trivially rejected */
    free(text);
    lua_close(L);
}

/* Random strings built from pieces YAML gives meaning to must come back unchanged, as
 * values, as keys and inside sequences: this exercises the plain/quoted decision. */
static void test_random_strings(void)
{
    static const char *const pieces[] = {
        "a",
        "Z",
        "0",
        "9",
        "_",
        ".",
        "/",
        "-",
        "+",
        "e",
        "x",
        "o",
        ":",
        " ",
        "  ",
        "#",
        "?",
        "!",
        "&",
        "*",
        "|",
        ">",
        "'",
        "\"",
        "\\",
        "%",
        "@",
        "`",
        "{",
        "}",
        "[",
        "]",
        ",",
        "~",
        "=",
        "<<",
        "---",
        "...",
        "\t",
        "\n",
        "\r",
        "\0",
        "\x7f",
        "\xc2\x85",
        "\xe2\x80\xa8",
        "\xef\xbb\xbf",
        "\xc3\xa9",
        "\xff",
        "\x80",
        "null",
        "true",
        "yes",
        "inf",
        ".inf",
        "nan",
        "0x",
        "0o",
        "1e",
        "4K",
    };
    const size_t npieces = sizeof pieces / sizeof pieces[0];
    lua_State *L = new_state();
    char err[512];
    char why[512];
    char text[256];
    random_state = 0xc0ffee;
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        int count = (int)random_below(7);
        for (int k = 0; k < count; k++) {
            const char *piece = pieces[random_below(npieces)];
            size_t n = strlen(piece);
            n = n == 0 ? 1 : n; /* "\0" has strlen 0 but is one NUL byte */
            memcpy(text + len, piece, n);
            len += n;
        }
        lua_newtable(L);
        lua_pushlstring(L, text, len);
        lua_setfield(L, -2, "value");
        lua_pushlstring(L, text, len);
        lua_pushinteger(L, round);
        lua_settable(L, -3);
        lua_createtable(L, 2, 0);
        cm_json_mark_array(L, -1);
        lua_pushlstring(L, text, len);
        lua_rawseti(L, -2, 1);
        lua_pushlstring(L, text, len);
        lua_rawseti(L, -2, 2);
        lua_setfield(L, -2, "list");
        int value = lua_gettop(L);
        if (cm_yaml_encode(L, value, err, sizeof err) != 0) {
            /* only a key that collides with "value" or "list" is refused: never */
            CHECK_MSG(0, "%s", err);
        } else {
            size_t n;
            const char *yaml_text = lua_tolstring(L, -1, &n);
            if (cm_yaml_decode(L, yaml_text, n, "random.yaml", err, sizeof err) != 0)
                CHECK_MSG(0, "%s\n%s", err, yaml_text);
            else
                CHECK_MSG(values_equal(L, value, -1, why, sizeof why), "%s\n%s", why, yaml_text);
        }
        lua_settop(L, 0);
        /* and as the root */
        lua_pushlstring(L, text, len);
        check_round_trip(L, "random root string");
        lua_settop(L, 0);
    }
    lua_close(L);
}

/* An allocator that fails once its budget is spent, to raise Lua memory errors at every
 * possible point; ASan's leak checker then catches any libyaml state left behind. */
static long alloc_budget = -1;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    if (alloc_budget == 0)
        return NULL;
    if (alloc_budget > 0)
        alloc_budget--;
    return realloc(ptr, nsize);
}

static int protected_decode(lua_State *L)
{
    size_t len;
    const char *text = lua_tolstring(L, 1, &len);
    char err[256];
    int rc = cm_yaml_decode(L, text, len, "mem.yaml", err, sizeof err);
    lua_pushinteger(L, rc);
    return 1;
}

static int protected_encode(lua_State *L)
{
    char err[256];
    int rc = cm_yaml_encode(L, 1, err, sizeof err);
    lua_pushinteger(L, rc);
    return 1;
}

static void test_memory_errors(void)
{
    lua_State *L = lua_newstate(failing_alloc, NULL);
    luaL_openlibs(L);
    lua_pushstring(L, fuzz_seed);
    int text = lua_gettop(L);
    int succeeded = 0;
    int memory_errors = 0;
    for (long budget = 0; budget < 5000 && !succeeded; budget++) {
        lua_pushcfunction(L, protected_decode);
        lua_pushvalue(L, text);
        alloc_budget = budget;
        int status = lua_pcall(L, 1, 1, 0);
        alloc_budget = -1;
        if (status == LUA_OK) {
            succeeded = lua_tointeger(L, -1) == 0;
            CHECK(succeeded);
        } else {
            CHECK(status == LUA_ERRMEM);
            memory_errors++;
        }
        lua_settop(L, text);
        lua_gc(L, LUA_GCCOLLECT);
    }
    CHECK(succeeded && memory_errors > 10);

    /* the encoder keeps everything on the Lua stack; it must still fail cleanly */
    char err[256];
    CHECK(cm_yaml_decode(L, fuzz_seed, strlen(fuzz_seed), "mem.yaml", err, sizeof err) == 0);
    int value = lua_gettop(L);
    succeeded = 0;
    for (long budget = 0; budget < 5000 && !succeeded; budget++) {
        lua_pushcfunction(L, protected_encode);
        lua_pushvalue(L, value);
        alloc_budget = budget;
        int status = lua_pcall(L, 1, 1, 0);
        alloc_budget = -1;
        if (status == LUA_OK)
            succeeded = lua_tointeger(L, -1) == 0;
        else
            CHECK(status == LUA_ERRMEM);
        lua_settop(L, value);
    }
    CHECK(succeeded);
    lua_close(L);
}

/* ---- the Lua module ----------------------------------------------------------------------- */

static const char *const module_lua =
    "local yaml = require 'cephmark.yaml'\n"
    "local json = require 'cephmark.json'\n"
    "local path = ...\n"
    "assert(yaml.null == json.null)\n"
    "local v = assert(yaml.decode('a: 1\\nb: [x, ~]\\n'))\n"
    "assert(v.a == 1 and math.type(v.a) == 'integer')\n"
    "assert(v.b[1] == 'x' and v.b[2] == yaml.null and getmetatable(v.b) ~= nil)\n"
    "assert(yaml.encode(v) == 'a: 1\\nb:\\n- x\\n- null\\n')\n"
    "assert(json.encode(v) == '{\"a\":1,\"b\":[\"x\",null]}')\n"
    "assert(select('#', yaml.decode('')) == 1 and yaml.decode('') == nil)\n"
    "local bad, err = yaml.decode('a: [', 'x.yaml')\n"
    "assert(bad == nil and err:match('^x%.yaml:2:1: '), err)\n"
    "bad, err = yaml.decode('a: 1\\na: 2')\n"
    "assert(err == '<string>:2:1: duplicate key \"a\"', err)\n"
    "local ok, msg = pcall(yaml.encode, { phases = { {}, { fn = print } } }, { name = 'results' "
    "})\n"
    "assert(not ok and msg:find('results.phases[2].fn: cannot encode a function', 1, true), msg)\n"
    "ok, msg = pcall(yaml.encode, print)\n"
    "assert(not ok and msg:find('value: cannot encode a function', 1, true), msg)\n"
    "ok, msg = pcall(yaml.decode, 42)\n"
    "assert(not ok and msg:find('bad argument #1 to', 1, true) and\n"
    "       msg:find('(string expected, got number)', 1, true), msg)\n"
    "ok, msg = pcall(yaml.decode, 'a', {})\n"
    "assert(not ok and msg:find('string or nil (a filename for error messages) expected, got "
    "table', 1, true), msg)\n"
    "ok, msg = pcall(yaml.encode, {}, { indent = 2 })\n"
    "assert(not ok and msg:find('unknown option \"indent\" (expected name)', 1, true), msg)\n"
    "ok, msg = pcall(yaml.encode, {}, 'results')\n"
    "assert(not ok and msg:find('table of options or nil expected, got string', 1, true), msg)\n"
    "ok, msg = pcall(yaml.encode, {}, { name = 3 })\n"
    "assert(not ok and msg:find('name must be a string, got number', 1, true), msg)\n"
    "ok, msg = pcall(yaml.encode)\n"
    "assert(not ok and msg:find('value expected', 1, true), msg)\n"
    "ok, msg = pcall(yaml.load_file)\n"
    "assert(not ok and msg:find('string (a file path) expected, got no value', 1, true), msg)\n"
    "local f = assert(io.open(path, 'w'))\n"
    "f:write('seconds: 10\\nblock_size: 4M\\n')\n"
    "f:close()\n"
    "local p = assert(yaml.load_file(path))\n"
    "assert(p.seconds == 10 and p.block_size == '4M')\n"
    "f = assert(io.open(path, 'w'))\n"
    "f:write('seconds: 10\\nseconds: 20\\n')\n"
    "f:close()\n"
    "bad, err = yaml.load_file(path)\n"
    "assert(bad == nil and err == path .. ':2:1: duplicate key \"seconds\"', err)\n"
    "os.remove(path)\n"
    "bad, err = yaml.load_file(path)\n"
    "assert(bad == nil and err == 'cannot read ' .. path .. ': No such file or directory', err)\n"
    "bad, err = yaml.load_file('/')\n"
    "assert(bad == nil and err == 'cannot read /: Is a directory', err)\n"
    "return true\n";

static void test_module(void)
{
    lua_State *L = new_state();
    char path[64];
    snprintf(path, sizeof path, "/tmp/cephmark_test_yaml_%d.yaml", (int)getpid());
    if (luaL_loadstring(L, module_lua) != LUA_OK) {
        CHECK_MSG(0, "%s", lua_tostring(L, -1));
    } else {
        lua_pushstring(L, path);
        int status = lua_pcall(L, 1, 1, 0);
        CHECK_MSG(status == LUA_OK, "%s", lua_tostring(L, -1));
    }
    lua_settop(L, 0);

    /* the module's table is sorted and complete */
    luaL_requiref(L, "cephmark.yaml", luaopen_cephmark_yaml, 0);
    CHECK(lua_getfield(L, -1, "decode") == LUA_TFUNCTION);
    CHECK(lua_getfield(L, -2, "encode") == LUA_TFUNCTION);
    CHECK(lua_getfield(L, -3, "load_file") == LUA_TFUNCTION);
    lua_getfield(L, -4, "null");
    CHECK(cm_json_isnull(L, -1));
    lua_settop(L, 0);

    /* C load_file */
    char err[256];
    CHECK(cm_yaml_load_file(L, "/nonexistent/p.yaml", err, sizeof err) == -1);
    CHECK_STR(err, "cannot read /nonexistent/p.yaml: No such file or directory");
    CHECK(lua_gettop(L) == 0);
    lua_close(L);
}

int main(void)
{
    test_params_file();
    test_scalar_types();
    test_round_trip();
    test_encode_layout();
    test_encode_errors();
    test_json_interplay();
    test_decode_errors();
    test_limits();
    test_mutations();
    test_random_strings();
    test_memory_errors();
    test_module();
    return check_summary("yaml");
}
