/* Unit tests for the JSON codec (runtime/json.c): Ceph-shaped documents, round trips,
 * escapes, numbers, error positions, encoder determinism and the "cephmark.json" module. */
#include "check.h"
#include "json.h"
#include "value_walk.h"

#include <lauxlib.h>
#include <lualib.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shaped like `ceph osd pool ls detail -f json` on a reef cluster (pretty-printed, as
 * with -f json-pretty, so that error positions span several lines). */
static const char *const pool_ls_detail =
    "[\n"
    "  {\n"
    "    \"pool_id\": 1,\n"
    "    \"pool_name\": \".mgr\",\n"
    "    \"create_time\": \"2024-03-11T09:14:27.532761+0000\",\n"
    "    \"flags\": 1,\n"
    "    \"flags_names\": \"hashpspool\",\n"
    "    \"type\": 1,\n"
    "    \"size\": 3,\n"
    "    \"min_size\": 2,\n"
    "    \"crush_rule\": 0,\n"
    "    \"peering_crush_bucket_mandatory_member\": 2147483647,\n"
    "    \"object_hash\": 2,\n"
    "    \"pg_autoscale_mode\": \"on\",\n"
    "    \"pg_num\": 1,\n"
    "    \"pg_placement_num\": 1,\n"
    "    \"last_pg_merge_meta\": {\n"
    "      \"source_pgid\": \"0.0\",\n"
    "      \"ready_epoch\": 0,\n"
    "      \"source_version\": \"0'0\",\n"
    "      \"target_version\": \"0'0\"\n"
    "    },\n"
    "    \"last_change\": \"20\",\n"
    "    \"snap_mode\": \"selfmanaged\",\n"
    "    \"pool_snaps\": [],\n"
    "    \"removed_snaps\": \"[]\",\n"
    "    \"quota_max_bytes\": 0,\n"
    "    \"tiers\": [],\n"
    "    \"tier_of\": -1,\n"
    "    \"cache_mode\": \"none\",\n"
    "    \"hit_set_params\": {\n"
    "      \"type\": \"none\"\n"
    "    },\n"
    "    \"fast_read\": false,\n"
    "    \"options\": {\n"
    "      \"pg_num_max\": 32,\n"
    "      \"pg_num_min\": 1\n"
    "    },\n"
    "    \"application_metadata\": {\n"
    "      \"mgr\": {}\n"
    "    },\n"
    "    \"read_balance\": {\n"
    "      \"score_acting\": 3,\n"
    "      \"score_stable\": 3,\n"
    "      \"optimal_score\": 1,\n"
    "      \"primary_affinity_weighted\": 1,\n"
    "      \"average_primary_affinity\": 1\n"
    "    }\n"
    "  },\n"
    "  {\n"
    "    \"pool_id\": 2,\n"
    "    \"pool_name\": \"rbd-bench\",\n"
    "    \"create_time\": \"2024-03-11T09:20:03.118204+0000\",\n"
    "    \"flags\": 8193,\n"
    "    \"flags_names\": \"hashpspool,selfmanaged_snaps\",\n"
    "    \"type\": 1,\n"
    "    \"size\": 3,\n"
    "    \"min_size\": 2,\n"
    "    \"crush_rule\": 0,\n"
    "    \"peering_crush_bucket_mandatory_member\": 2147483647,\n"
    "    \"object_hash\": 2,\n"
    "    \"pg_autoscale_mode\": \"on\",\n"
    "    \"pg_num\": 128,\n"
    "    \"pg_placement_num\": 128,\n"
    "    \"last_pg_merge_meta\": {\n"
    "      \"source_pgid\": \"0.0\",\n"
    "      \"ready_epoch\": 0,\n"
    "      \"source_version\": \"0'0\",\n"
    "      \"target_version\": \"0'0\"\n"
    "    },\n"
    "    \"last_change\": \"412\",\n"
    "    \"snap_mode\": \"selfmanaged\",\n"
    "    \"pool_snaps\": [],\n"
    "    \"removed_snaps\": \"[]\",\n"
    "    \"quota_max_bytes\": 107374182400,\n"
    "    \"tiers\": [],\n"
    "    \"tier_of\": -1,\n"
    "    \"cache_mode\": \"none\",\n"
    "    \"hit_set_params\": {\n"
    "      \"type\": \"none\"\n"
    "    },\n"
    "    \"fast_read\": false,\n"
    "    \"options\": {},\n"
    "    \"application_metadata\": {\n"
    "      \"rbd\": {}\n"
    "    },\n"
    "    \"read_balance\": {\n"
    "      \"score_acting\": 1.5,\n"
    "      \"score_stable\": 1.5,\n"
    "      \"optimal_score\": 1,\n"
    "      \"primary_affinity_weighted\": 0.99999994039535522,\n"
    "      \"average_primary_affinity\": 1\n"
    "    }\n"
    "  }\n"
    "]\n";

/* Shaped like `ceph status -f json` (compact, as the mon returns it). */
static const char *const ceph_status =
    "{\"fsid\":\"3f4b2c1e-8a7d-11ee-9c1a-525400e1a2b3\",\"health\":{\"status\":\"HEALTH_WARN\","
    "\"checks\":{\"POOL_NO_REDUNDANCY\":{\"severity\":\"HEALTH_WARN\",\"summary\":{\"message\":"
    "\"1 pool(s) have no replicas configured\",\"count\":1},\"muted\":false}},\"mutes\":[]},"
    "\"election_epoch\":12,\"quorum\":[0,1,2],\"quorum_names\":[\"a\",\"b\",\"c\"],"
    "\"quorum_age\":86127,\"monmap\":{\"epoch\":3,\"min_mon_release_name\":\"reef\","
    "\"num_mons\":3},\"osdmap\":{\"epoch\":412,\"num_osds\":6,\"num_up_osds\":6,"
    "\"osd_up_since\":1710148512,\"num_in_osds\":6,\"osd_in_since\":1710148480,"
    "\"num_remapped_pgs\":0},\"pgmap\":{\"pgs_by_state\":[{\"state_name\":\"active+clean\","
    "\"count\":129}],\"num_pgs\":129,\"num_pools\":3,\"num_objects\":25631,"
    "\"data_bytes\":104857600000,\"bytes_used\":318767104000,\"bytes_avail\":5679235072000,"
    "\"bytes_total\":5998002176000,\"read_bytes_sec\":52428800,\"write_bytes_sec\":104857600,"
    "\"read_op_per_sec\":1250,\"write_op_per_sec\":2500},\"fsmap\":{\"epoch\":1,\"by_rank\":[],"
    "\"up:standby\":0},\"mgrmap\":{\"available\":true,\"num_standbys\":1,\"modules\":[\"cephadm\","
    "\"dashboard\",\"iostat\",\"nfs\",\"prometheus\",\"restful\"],\"services\":{\"dashboard\":"
    "\"https://10.0.0.11:8443/\",\"prometheus\":\"http://10.0.0.11:9283/\"}},"
    "\"servicemap\":{\"epoch\":57,\"modified\":\"2024-03-12T10:02:44.118260+0000\","
    "\"services\":{}},\"progress_events\":{},\"stretch_mode\":null}";

static lua_State *new_state(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    /* The runtime registers modules the same way, so scripts reach it through require. */
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "preload");
    lua_pushcfunction(L, luaopen_cephmark_json);
    lua_setfield(L, -2, "cephmark.json");
    lua_pop(L, 2);
    return L;
}

/* Runs a Lua chunk with one string argument and returns its string result (or the error,
 * prefixed with "ERROR: "), copied so the caller need not manage the stack. */
static const char *run_lua(lua_State *L, const char *code, const char *arg)
{
    static char result[4096];
    int top = lua_gettop(L);
    if (luaL_loadstring(L, code) != LUA_OK) {
        snprintf(result, sizeof result, "ERROR: %s", lua_tostring(L, -1));
    } else {
        lua_pushstring(L, arg != NULL ? arg : "");
        if (lua_pcall(L, 1, 1, 0) != LUA_OK)
            snprintf(result, sizeof result, "ERROR: %s", lua_tostring(L, -1));
        else
            snprintf(result, sizeof result, "%s", luaL_tolstring(L, -1, NULL));
    }
    lua_settop(L, top);
    return result;
}

/* Decodes text and re-encodes it; returns the encoding or "ERROR: ..." */
static const char *reencode(lua_State *L, const char *text, int indent)
{
    static char result[8192];
    char err[256];
    int top = lua_gettop(L);
    if (cm_json_decode(L, text, strlen(text), err, sizeof err) != 0) {
        snprintf(result, sizeof result, "ERROR: %s", err);
    } else if (cm_json_encode(L, -1, indent, NULL, err, sizeof err) != 0) {
        snprintf(result, sizeof result, "ERROR: %s", err);
    } else {
        snprintf(result, sizeof result, "%s", lua_tostring(L, -1));
    }
    lua_settop(L, top);
    return result;
}

/* Encodes the result of a Lua expression (evaluated with cephmark.json as `json`). */
static const char *encode_expr(lua_State *L, const char *expr, int indent)
{
    static char result[8192];
    char code[2048];
    char err[512];
    snprintf(code, sizeof code, "local json = require('cephmark.json') return %s", expr);
    int top = lua_gettop(L);
    if (luaL_dostring(L, code) != LUA_OK) {
        snprintf(result, sizeof result, "LUA ERROR: %s", lua_tostring(L, -1));
    } else if (cm_json_encode(L, top + 1, indent, "results", err, sizeof err) != 0) {
        CHECK(lua_gettop(L) == top + 1);
        snprintf(result, sizeof result, "ERROR: %s", err);
    } else {
        CHECK(lua_gettop(L) == top + 2);
        snprintf(result, sizeof result, "%s", lua_tostring(L, -1));
    }
    lua_settop(L, top);
    return result;
}

static void test_ceph_documents(lua_State *L)
{
    const char *got = run_lua(L,
                              "local json = require('cephmark.json')\n"
                              "local pools = assert(json.decode(...))\n"
                              "local p1, p2 = pools[1], pools[2]\n"
                              "return table.concat({#pools, p1.pool_name, p2.pool_name,\n"
                              "  math.type(p1.size), math.type(p2.read_balance.score_acting),\n"
                              "  p2.read_balance.score_acting, tostring(p1.fast_read),\n"
                              "  #p1.pool_snaps, next(p1.pool_snaps) == nil and 'empty' or 'x',\n"
                              "  p1.removed_snaps, p2.quota_max_bytes,\n"
                              "  p1.last_pg_merge_meta.source_version,\n"
                              "  tostring(getmetatable(p1.tiers) ~= nil),\n"
                              "  tostring(getmetatable(p1.options) == nil),\n"
                              "  p1.peering_crush_bucket_mandatory_member}, ' ')",
                              pool_ls_detail);
    CHECK_STR(got, "2 .mgr rbd-bench integer float 1.5 false 0 empty [] 107374182400 0'0 "
                   "true true 2147483647");

    got = run_lua(L,
                  "local json = require('cephmark.json')\n"
                  "local s = assert(json.decode(...))\n"
                  "return table.concat({s.fsid, s.health.status,\n"
                  "  s.health.checks.POOL_NO_REDUNDANCY.summary.message,\n"
                  "  #s.quorum, s.quorum_names[3], s.pgmap.pgs_by_state[1].state_name,\n"
                  "  s.pgmap.bytes_total, s.fsmap['up:standby'], #s.mgrmap.modules,\n"
                  "  tostring(s.stretch_mode == json.null), tostring(s.mgrmap.available)}, ' ')",
                  ceph_status);
    CHECK_STR(got, "3f4b2c1e-8a7d-11ee-9c1a-525400e1a2b3 HEALTH_WARN 1 pool(s) have no "
                   "replicas configured 3 c active+clean 5998002176000 0 6 true true");

    /* The mon's compact output has no insignificant whitespace; sorting the keys gives the
     * canonical form, which must then be a fixed point. */
    char first[8192];
    snprintf(first, sizeof first, "%s", reencode(L, ceph_status, 0));
    CHECK(strncmp(first, "{\"election_epoch\":12,\"fsid\":", 27) == 0);
    CHECK(strstr(first, "\"stretch_mode\":null") != NULL);
    CHECK(strstr(first, "\"by_rank\":[],\"epoch\":1,\"up:standby\":0") != NULL);
    CHECK(strstr(first, "\"progress_events\":{}") != NULL);
    CHECK(strlen(first) == strlen(ceph_status));
    CHECK_STR(reencode(L, first, 0), first);

    snprintf(first, sizeof first, "%s", reencode(L, pool_ls_detail, 2));
    CHECK(strstr(first, "\"pool_snaps\": [],\n") != NULL);
    CHECK(strstr(first, "\"options\": {},\n") != NULL);
    CHECK(strstr(first, "\"score_acting\": 1.5,\n") != NULL);
    CHECK(strstr(first, "\"primary_affinity_weighted\": 0.9999999403953552") != NULL);
    CHECK_STR(reencode(L, first, 2), first);
}

static void test_round_trips(lua_State *L)
{
    static const char *const canonical[] = {
        "null",
        "true",
        "false",
        "0",
        "-17",
        "1.5",
        "\"\"",
        "[]",
        "{}",
        "[[]]",
        "[{}]",
        "{\"a\":[]}",
        "{\"a\":{}}",
        "[1,null,3]",
        "{\"a\":null}",
        "{\"\":1,\"A\":2,\"a\":3,\"aa\":4,\"b\":[true,false,null,{},[]]}",
        "[\"\\u0000\\u001f\\\"\\\\/\\b\\f\\n\\r\\t\"]",
        "{\"k\":[1,2.5,\"x\",{\"n\":null,\"z\":[[],[{}]]}]}",
    };
    for (size_t i = 0; i < sizeof canonical / sizeof canonical[0]; i++)
        CHECK_STR(reencode(L, canonical[i], 0), canonical[i]);

    CHECK_STR(reencode(L, " \t\r\n[ 1 , { \"b\" : 2 , \"a\" : 1 } ] \n", 0),
              "[1,{\"a\":1,\"b\":2}]");
    /* Duplicate keys: the last one wins, as in most parsers. */
    CHECK_STR(reencode(L, "{\"a\":1,\"a\":2}", 0), "{\"a\":2}");
    /* Invalid UTF-8 is passed through rather than rejected. */
    CHECK_STR(reencode(L, "\"\xff\xfe\"", 0), "\"\xff\xfe\"");
}

static void test_escapes(lua_State *L)
{
    static const char text[] =
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20AC\\ud83d\\ude00\\u0000z\"";
    static const char want[] = "\"\\/\b\f\n\r\t"
                               "A"
                               "\xc3\xa9"
                               "\xe2\x82\xac"
                               "\xf0\x9f\x98\x80"
                               "\0z";
    char err[256];
    int top = lua_gettop(L);
    CHECK(cm_json_decode(L, text, sizeof text - 1, err, sizeof err) == 0);
    size_t len = 0;
    const char *s = lua_tolstring(L, -1, &len);
    CHECK(len == sizeof want - 1);
    CHECK(s != NULL && memcmp(s, want, sizeof want - 1) == 0);
    lua_settop(L, top);

    /* Surrogate pair for U+10FFFF and the largest BMP character. */
    CHECK(cm_json_decode(L, "\"\\uDBFF\\uDFFF\\uFFFF\"", 20, err, sizeof err) == 0);
    CHECK_STR(lua_tostring(L, -1), "\xf4\x8f\xbf\xbf\xef\xbf\xbf");
    lua_settop(L, top);

    /* Escapes in keys, and a raw UTF-8 key kept as is. */
    CHECK_STR(reencode(L, "{\"a\\tb\":1,\"\xc3\xa9\":2}", 0), "{\"a\\tb\":1,\"\xc3\xa9\":2}");

    /* Every control character is escaped; the short forms are used where JSON has them. */
    char all[40];
    for (int c = 0; c < 0x20; c++)
        all[c] = (char)c;
    memcpy(all + 0x20, "\"\\/\x7f\xc3\xa9", 6);
    lua_pushlstring(L, all, 0x20 + 6);
    CHECK(cm_json_encode(L, -1, 0, NULL, err, sizeof err) == 0);
    CHECK_STR(lua_tostring(L, -1),
              "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r"
              "\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018"
              "\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\\\"\\\\/\x7f\xc3\xa9\"");
    /* And decoding the encoding gives the original bytes back. */
    const char *encoded = lua_tolstring(L, -1, &len);
    CHECK(cm_json_decode(L, encoded, len, err, sizeof err) == 0);
    CHECK(lua_rawequal(L, -1, -3));
    lua_settop(L, top);
}

static void test_numbers(lua_State *L)
{
    static const struct {
        const char *text;
        int integer;
        double value;
        const char *reencoded;
    } cases[] = {
        {"0", 1, 0, "0"},
        {"-0", 1, 0, "0"},
        {"1e3", 0, 1000.0, "1000.0"},
        {"1.5", 0, 1.5, "1.5"},
        {"-1e-7", 0, -1e-7, "-1e-07"},
        {"1E+2", 0, 100.0, "100.0"},
        {"0.1", 0, 0.1, "0.1"},
        {"-0.0", 0, -0.0, "-0.0"},
        {"123456789012", 1, 123456789012.0, "123456789012"},
        {"9223372036854775807", 1, 0, "9223372036854775807"},
        {"-9223372036854775808", 1, 0, "-9223372036854775808"},
        {"9223372036854775808", 0, 9223372036854775808.0, "9.223372036854776e+18"},
        {"-9223372036854775809", 0, -9223372036854775808.0, "-9.223372036854776e+18"},
        {"1e20", 0, 1e20, "1e+20"},
        {"1e16", 0, 1e16, "10000000000000000.0"},
        {"1e17", 0, 1e17, "1e+17"},
        {"1e-5", 0, 1e-5, "0.00001"},
        {"1.5e-6", 0, 1.5e-6, "1.5e-06"},
        {"123.456", 0, 123.456, "123.456"},
        {"99.99999999999999", 0, 99.99999999999999, "99.99999999999999"},
        {"5e-324", 0, 5e-324, "5e-324"},
        {"1.7976931348623157e308", 0, 1.7976931348623157e308, "1.7976931348623157e+308"},
        {"0.30000000000000004", 0, 0.30000000000000004, "0.30000000000000004"},
        /* Longer than the decoder's small buffer. */
        {"1.00000000000000000000000000000000000000000000000000000000000000000001", 0, 1.0, "1.0"},
    };
    char err[256];
    int top = lua_gettop(L);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *text = cases[i].text;
        int rc = cm_json_decode(L, text, strlen(text), err, sizeof err);
        CHECK_MSG(rc == 0, "%s: %s", text, err);
        if (rc != 0)
            continue;
        CHECK_MSG(lua_isinteger(L, -1) == cases[i].integer, "%s", text);
        if (!cases[i].integer) {
            double got = (double)lua_tonumber(L, -1);
            CHECK_MSG(got == cases[i].value && signbit(got) == signbit(cases[i].value),
                      "%s decoded as %.17g", text, got);
        }
        lua_settop(L, top);
        CHECK_STR(reencode(L, text, 0), cases[i].reencoded);
    }

    CHECK(cm_json_decode(L, "9223372036854775807", 19, err, sizeof err) == 0);
    CHECK(lua_tointeger(L, -1) == INT64_MAX);
    lua_settop(L, top);
    CHECK(cm_json_decode(L, "-9223372036854775808", 20, err, sizeof err) == 0);
    CHECK(lua_tointeger(L, -1) == INT64_MIN);
    lua_settop(L, top);

    CHECK_STR(encode_expr(L, "1/3", 0), "0.3333333333333333");
    CHECK_STR(encode_expr(L, "2^53", 0), "9007199254740992.0");
    CHECK_STR(encode_expr(L, "math.mininteger", 0), "-9223372036854775808");
    CHECK_STR(encode_expr(L, "{1.0, 2.25, -3}", 0), "[1.0,2.25,-3]");

    /* Floats must read back identically for a spread of magnitudes. */
    double x = 1.0 / 7.0;
    for (int i = 0; i < 200; i++, x *= -3.7) {
        lua_pushnumber(L, x);
        CHECK(cm_json_encode(L, -1, 0, NULL, err, sizeof err) == 0);
        size_t len;
        const char *text = lua_tolstring(L, -1, &len);
        CHECK(cm_json_decode(L, text, len, err, sizeof err) == 0);
        CHECK_MSG(!lua_isinteger(L, -1) && lua_tonumber(L, -1) == x, "%s", text);
        lua_settop(L, top);
    }
}

static void check_decode_error(lua_State *L, const char *text, size_t len, const char *want)
{
    char err[256] = "";
    int top = lua_gettop(L);
    int rc = cm_json_decode(L, text, len, err, sizeof err);
    CHECK_MSG(rc == -1, "decoding %.40s should fail", text);
    CHECK_MSG(lua_gettop(L) == top, "decoding %.40s left the stack at %d, not %d", text,
              lua_gettop(L), top);
    CHECK_STR(err, want);
    lua_settop(L, top);
}

#define DECODE_ERROR(L, text, want) check_decode_error((L), (text), strlen(text), (want))

static void test_decode_errors(lua_State *L)
{
    DECODE_ERROR(L, "", "line 1 column 1: unexpected end of input (expected a JSON value)");
    DECODE_ERROR(L, "  \n ", "line 2 column 2: unexpected end of input (expected a JSON value)");
    DECODE_ERROR(L, "[1, 2", "line 1 column 6: unexpected end of input (expected ',' or ']')");
    DECODE_ERROR(L, "{\"a\": 1", "line 1 column 8: unexpected end of input (expected ',' or '}')");
    DECODE_ERROR(L, "{\"a\"",
                 "line 1 column 5: unexpected end of input (expected ':' after the object key)");
    DECODE_ERROR(L, "{\"ab", "line 1 column 5: unexpected end of input in string");
    DECODE_ERROR(L, "[1,2,]", "line 1 column 6: trailing comma before ']'");
    DECODE_ERROR(L, "{\"a\": 1,\n }", "line 2 column 2: trailing comma before '}'");
    DECODE_ERROR(L, "[1 2]", "line 1 column 4: unexpected '2' (expected ',' or ']')");
    DECODE_ERROR(L, "{\"a\" 1}",
                 "line 1 column 6: unexpected '1' (expected ':' after the object key)");
    DECODE_ERROR(L, "{1: 2}", "line 1 column 2: unexpected '1' (expected a string key or '}')");
    DECODE_ERROR(L, "{\"a\":1,2}", "line 1 column 8: unexpected '2' (expected a string key)");
    DECODE_ERROR(L, "\"\\x\"", "line 1 column 2: invalid escape \\ followed by 'x'");
    DECODE_ERROR(L, "\"ab\\", "line 1 column 5: unexpected end of input in string");
    DECODE_ERROR(L, "\"\\u12g4\"", "line 1 column 2: invalid \\u escape (expected 4 hex digits)");
    DECODE_ERROR(L, "\"\\u12", "line 1 column 6: unexpected end of input in string");
    DECODE_ERROR(L, "\"\\ud800\"",
                 "line 1 column 2: lone high surrogate \\uD800 (expected a low surrogate "
                 "\\uDC00-\\uDFFF after it)");
    DECODE_ERROR(L, "\"x\\ud83d\\u0041\"",
                 "line 1 column 3: lone high surrogate \\uD83D (expected a low surrogate "
                 "\\uDC00-\\uDFFF after it)");
    DECODE_ERROR(L, "\"\\ude00\"",
                 "line 1 column 2: lone low surrogate \\uDE00 (no high surrogate before it)");
    DECODE_ERROR(L, "\"a\tb\"", "line 1 column 3: unescaped control character 0x09 in string");
    DECODE_ERROR(L, "\"a\\n\nb\"", "line 1 column 5: unescaped control character 0x0A in string");
    DECODE_ERROR(L, "01", "line 1 column 1: leading zeros are not allowed in numbers");
    DECODE_ERROR(L, "[-007]", "line 1 column 2: leading zeros are not allowed in numbers");
    DECODE_ERROR(L, "-", "line 1 column 2: expected a digit after '-'");
    DECODE_ERROR(L, "-x", "line 1 column 2: expected a digit after '-'");
    DECODE_ERROR(L, "1.", "line 1 column 3: expected a digit after the decimal point");
    DECODE_ERROR(L, "1.e5", "line 1 column 3: expected a digit after the decimal point");
    DECODE_ERROR(L, "1e", "line 1 column 3: expected a digit in the exponent");
    DECODE_ERROR(L, "1e+", "line 1 column 4: expected a digit in the exponent");
    DECODE_ERROR(L, ".5", "line 1 column 1: unexpected '.' (expected a JSON value)");
    DECODE_ERROR(L, "+1", "line 1 column 1: unexpected '+' (expected a JSON value)");
    DECODE_ERROR(L, "hello", "line 1 column 1: unexpected 'h' (expected a JSON value)");
    DECODE_ERROR(L, "nan", "line 1 column 1: invalid literal (expected 'null')");
    DECODE_ERROR(L, "[tru", "line 1 column 5: unexpected end of input (expected 'true')");
    DECODE_ERROR(L, "True", "line 1 column 1: unexpected 'T' (expected a JSON value)");
    DECODE_ERROR(L, "'a'",
                 "line 1 column 1: single quotes are not allowed (JSON strings use double quotes)");
    DECODE_ERROR(L, "{'a': 1}",
                 "line 1 column 2: single quotes are not allowed (JSON strings use double quotes)");
    DECODE_ERROR(L, "[1] x", "line 1 column 5: unexpected 'x' after the JSON value");
    DECODE_ERROR(L, "{} {}", "line 1 column 4: unexpected '{' after the JSON value");
    DECODE_ERROR(L, "truex", "line 1 column 5: unexpected 'x' after the JSON value");
    DECODE_ERROR(L, "\xef\xbb\xbf{}",
                 "line 1 column 1: unexpected byte 0xEF (expected a JSON value)");
    check_decode_error(L, "[1]\0", 4, "line 1 column 4: unexpected byte 0x00 after the JSON value");
    check_decode_error(L, "\"a\0b\"", 5,
                       "line 1 column 3: unescaped control character 0x00 in string");
    /* A realistic multi-line document with a mistake deep inside. */
    DECODE_ERROR(L, "{\n  \"pools\": [\n    {\"pool_id\": 1, \"size\": 03}\n  ]\n}",
                 "line 3 column 28: leading zeros are not allowed in numbers");

    /* Nesting: 200 levels are accepted, 201 and 10000 are refused without recursing. */
    enum { deep = 10000 };
    static char nested[2 * deep + 1];
    memset(nested, '[', deep);
    memset(nested + deep, ']', deep);
    char err[256];
    int top = lua_gettop(L);
    CHECK(cm_json_decode(L, nested + deep - 200, 400, err, sizeof err) == 0);
    lua_settop(L, top);
    check_decode_error(L, nested + deep - 201, 402,
                       "line 1 column 201: nesting deeper than 200 levels");
    check_decode_error(L, nested, 2 * deep, "line 1 column 201: nesting deeper than 200 levels");
    check_decode_error(L, nested, deep, "line 1 column 201: nesting deeper than 200 levels");
    for (int i = 0; i < deep; i++)
        nested[i] = i % 2 ? '[' : '{';
    check_decode_error(L, nested, deep,
                       "line 1 column 2: unexpected '[' (expected a string key or '}')");
    char objects[5 * 201 + 1] = "";
    for (int i = 0; i < 201; i++)
        strcat(objects, "{\"a\":");
    check_decode_error(L, objects, strlen(objects),
                       "line 1 column 1001: nesting deeper than 200 levels");

    /* A NULL text with no length is just empty input; err may be omitted. */
    check_decode_error(L, NULL, 0,
                       "line 1 column 1: unexpected end of input (expected a JSON value)");
    CHECK(cm_json_decode(L, "[", 1, NULL, 0) == -1);
    CHECK(lua_gettop(L) == top);
    char tiny[8];
    CHECK(cm_json_decode(L, "[", 1, tiny, sizeof tiny) == -1);
    CHECK_STR(tiny, "line 1 ");
}

/* A string that fails after its buffer has grown past the first block: the buffer's box must
 * be released without corrupting the stack, which settop over the box did in Lua 5.4.4 when
 * closing it moved the stack (at depth 14 with these strings). Each case gets a fresh state,
 * whose stack grows from its initial size as in a real decode. */
static void test_failed_long_strings(void)
{
    enum { escapes = 1200, deepest = 40 };
    static char text[deepest + 1 + 2 * escapes + 8]; /* the longest ending has 6 bytes */
    static const char *const endings[] = {"", "\\x", "\\ud800", "\\u12", "\\/\x01"};
    static const char *const messages[] = {
        "unexpected end of input in string",
        "invalid escape \\ followed by 'x'",
        "lone high surrogate \\uD800 (expected a low surrogate \\uDC00-\\uDFFF after it)",
        "unexpected end of input in string",
        "unescaped control character 0x01 in string",
    };
    for (int depth = 0; depth <= deepest; depth++) {
        for (size_t e = 0; e < sizeof endings / sizeof endings[0]; e++) {
            size_t n = 0;
            memset(text, '[', (size_t)depth);
            n += (size_t)depth;
            text[n++] = '"';
            for (int i = 0; i < escapes; i++) {
                text[n++] = '\\';
                text[n++] = 'n';
            }
            /* at the end of input, the faulty escape, the end again, the control byte */
            size_t message_column = n + 1;
            if (e == 3)
                message_column = n + strlen(endings[e]) + 1;
            else if (e == 4)
                message_column = n + 3;
            memcpy(text + n, endings[e], strlen(endings[e]));
            n += strlen(endings[e]);
            char want[160];
            snprintf(want, sizeof want, "line 1 column %zu: %s", message_column, messages[e]);
            lua_State *L = new_state();
            check_decode_error(L, text, n, want);
            CHECK(lua_gettop(L) == 0);
            lua_close(L);
        }
    }
}

static void test_encode(lua_State *L)
{
    /* Keys are sorted by bytes whatever the insertion order; integer keys of a
     * non-sequence become strings and sort as strings. */
    CHECK_STR(encode_expr(L, "{b=1, a=2, A=3, aa=4, ['a b']=5, [10]=6, [2]=7}", 0),
              "{\"10\":6,\"2\":7,\"A\":3,\"a\":2,\"a b\":5,\"aa\":4,\"b\":1}");
    CHECK_STR(encode_expr(L,
                          "(function() local t = {} for i = 100, 1, -1 do t['k' .. i] = i end "
                          "for i = 3, 100 do t['k' .. i] = nil end return t end)()",
                          0),
              "{\"k1\":1,\"k2\":2}");
    CHECK_STR(encode_expr(L, "{1, 2, x = 3}", 0), "{\"1\":1,\"2\":2,\"x\":3}");
    CHECK_STR(encode_expr(L, "{[1] = 'a', [3] = 'c'}", 0), "{\"1\":\"a\",\"3\":\"c\"}");
    CHECK_STR(encode_expr(L, "{[0] = 'z', 'a'}", 0), "{\"0\":\"z\",\"1\":\"a\"}");
    CHECK_STR(encode_expr(L, "{'a', 'b', 'c'}", 0), "[\"a\",\"b\",\"c\"]");
    CHECK_STR(encode_expr(L, "{[1.0] = true, [2] = false}", 0), "[true,false]");

    /* Empty array vs empty object. */
    CHECK_STR(encode_expr(L, "{}", 0), "{}");
    CHECK_STR(encode_expr(L, "json.array()", 0), "[]");
    CHECK_STR(encode_expr(L, "json.array({})", 0), "[]");
    CHECK_STR(encode_expr(L, "{a = json.array(), o = {}}", 0), "{\"a\":[],\"o\":{}}");
    CHECK_STR(encode_expr(L, "json.decode('{\"a\":[],\"o\":{}}')", 0), "{\"a\":[],\"o\":{}}");
    CHECK_STR(encode_expr(L, "json.decode('[]')", 0), "[]");
    CHECK_STR(encode_expr(L, "json.decode('{}')", 0), "{}");

    /* Nulls, booleans, nil at the root, metatables other than the marker ignored. */
    CHECK_STR(encode_expr(L, "{json.null, true, false}", 0), "[null,true,false]");
    CHECK_STR(encode_expr(L, "nil", 0), "null");
    CHECK_STR(encode_expr(L, "setmetatable({x = 1}, {__index = function() return 9 end})", 0),
              "{\"x\":1}");

    /* NaN and infinities become null (documented in json.h). */
    CHECK_STR(encode_expr(L, "0/0", 0), "null");
    CHECK_STR(encode_expr(L, "{lat = 0/0, max = math.huge, min = -math.huge}", 0),
              "{\"lat\":null,\"max\":null,\"min\":null}");

    /* Errors name the path to the offending value and leave the stack as it was. */
    CHECK_STR(encode_expr(L, "{phases = {{lat = 1}, {lat = print}}}", 0),
              "ERROR: results.phases[2].lat: cannot encode a function");
    CHECK_STR(encode_expr(L, "print", 0), "ERROR: results: cannot encode a function");
    CHECK_STR(encode_expr(L, "{co = coroutine.create(print)}", 0),
              "ERROR: results.co: cannot encode a thread");
    CHECK_STR(encode_expr(L, "{f = io.stdout}", 0), "ERROR: results.f: cannot encode a userdata");
    CHECK_STR(encode_expr(L, "{['pool name'] = {['x\"y'] = {print}}}", 0),
              "ERROR: results[\"pool name\"][\"x\\\"y\"][1]: cannot encode a function");
    CHECK_STR(encode_expr(L, "{a = {[true] = 1}}", 0),
              "ERROR: results.a: cannot encode table key true (keys must be strings or integers)");
    CHECK_STR(encode_expr(L, "{[1.5] = 1}", 0),
              "ERROR: results: cannot encode table key 1.5 (keys must be strings or integers)");
    CHECK_STR(encode_expr(L, "{[{}] = 1}", 0),
              "ERROR: results: cannot encode table key of type table (keys must be strings or "
              "integers)");
    CHECK_STR(encode_expr(L, "{[1] = 'a', ['1'] = 'b'}", 0),
              "ERROR: results: integer key and string key both encode as \"1\"");
    CHECK_STR(encode_expr(L, "json.array({1, nil, 3})", 0),
              "ERROR: results: array has holes (2 elements but largest index 3; use json.null "
              "for null elements)");
    CHECK_STR(encode_expr(L, "{list = json.array({1, 2, name = 'x'})}", 0),
              "ERROR: results.list: array has key \"name\" (arrays may only have keys 1..n)");

    /* Cycles are reported where the table reappears; shared subtables are fine. */
    CHECK_STR(encode_expr(L, "(function() local t = {a = {}} t.a.back = t return t end)()", 0),
              "ERROR: results.a.back: cycle: table contains itself");
    CHECK_STR(encode_expr(L, "(function() local t = json.array() t[1] = t return t end)()", 0),
              "ERROR: results[1]: cycle: table contains itself");
    CHECK_STR(encode_expr(L, "(function() local s = {1} return {a = s, b = {s, s}} end)()", 0),
              "{\"a\":[1],\"b\":[[1],[1]]}");

    /* Depth: 200 nested tables encode, 201 do not. */
    const char *deep_fmt = "(function() local t = {} for i = 2, %d do t = {t} end return t end)()";
    char expr[128];
    snprintf(expr, sizeof expr, deep_fmt, 200);
    const char *got = encode_expr(L, expr, 0);
    CHECK(strncmp(got, "[[[[", 4) == 0 && strlen(got) == 400 - 2 + 2);
    snprintf(expr, sizeof expr, deep_fmt, 201);
    got = encode_expr(L, expr, 0);
    CHECK_STR(got, "ERROR: results[1][1][1][1]...[1][1][1][1][1][1][1][1]: nesting deeper than "
                   "200 levels");

    char err[128];
    int top = lua_gettop(L);
    lua_newtable(L);
    CHECK(cm_json_encode(L, -1, 33, NULL, err, sizeof err) == -1);
    CHECK_STR(err, "value: indent must be between 0 and 32, got 33");
    CHECK(cm_json_encode(L, -1, -1, NULL, NULL, 0) == -1);
    CHECK(lua_gettop(L) == top + 1);
    lua_pushlightuserdata(L, err);
    CHECK(cm_json_encode(L, -1, 0, NULL, err, sizeof err) == -1);
    CHECK_STR(err, "value: cannot encode a light userdata (only json.null is allowed)");
    lua_settop(L, top);

    /* Long output exercises the growable buffer. */
    got = run_lua(L,
                  "local json = require('cephmark.json')\n"
                  "local t = {}\n"
                  "for i = 1, 5000 do t[i] = {id = i, name = ('osd.' .. i):rep(3)} end\n"
                  "local s = json.encode(t, {indent = 4})\n"
                  "local back = assert(json.decode(s))\n"
                  "assert(json.encode(back, {indent = 4}) == s)\n"
                  "return #back .. ' ' .. back[4321].name .. ' ' .. #s",
                  NULL);
    CHECK_STR(got, "5000 osd.4321osd.4321osd.4321 375574");
}

static void test_pretty(lua_State *L)
{
    CHECK_STR(encode_expr(L,
                          "{name = 'rbd-bench', pgs = json.array({1, 2}), empty = json.array(), "
                          "opts = {}, nested = {b = {c = json.null}, a = 1.5}}",
                          2),
              "{\n"
              "  \"empty\": [],\n"
              "  \"name\": \"rbd-bench\",\n"
              "  \"nested\": {\n"
              "    \"a\": 1.5,\n"
              "    \"b\": {\n"
              "      \"c\": null\n"
              "    }\n"
              "  },\n"
              "  \"opts\": {},\n"
              "  \"pgs\": [\n"
              "    1,\n"
              "    2\n"
              "  ]\n"
              "}");
    CHECK_STR(encode_expr(L, "{x = {1, {y = true}}}", 4), "{\n"
                                                          "    \"x\": [\n"
                                                          "        1,\n"
                                                          "        {\n"
                                                          "            \"y\": true\n"
                                                          "        }\n"
                                                          "    ]\n"
                                                          "}");
    CHECK_STR(encode_expr(L, "42", 2), "42");
    CHECK_STR(encode_expr(L, "{x = {1, {y = true}}}", 0), "{\"x\":[1,{\"y\":true}]}");
}

static void test_lua_module(lua_State *L)
{
    const char *got = run_lua(L,
                              "local json = require('cephmark.json')\n"
                              "local names = {}\n"
                              "for k in pairs(json) do names[#names + 1] = k end\n"
                              "table.sort(names)\n"
                              "return table.concat(names, ' ') .. ' ' .. type(json.null) ..\n"
                              "  ' ' .. tostring(rawget(_G, 'json'))",
                              NULL);
    CHECK_STR(got, "array decode encode null userdata nil");

    got = run_lua(L,
                  "local json = require('cephmark.json')\n"
                  "local v, err = json.decode(...)\n"
                  "return tostring(v) .. ' | ' .. err",
                  "{\"a\": [1, 2,]}");
    CHECK_STR(got, "nil | line 1 column 13: trailing comma before ']'");

    got = run_lua(L,
                  "local json = require('cephmark.json')\n"
                  "local t = json.decode('{\"a\":null,\"b\":[null,null]}')\n"
                  "return tostring(t.a == json.null) .. ' ' .. #t.b .. ' ' ..\n"
                  "  tostring(getmetatable(t.b) == debug.getregistry()['cephmark.json.array'])\n"
                  "  .. ' ' .. tostring(getmetatable(json.array()) == getmetatable(t.b))\n"
                  "  .. ' ' .. json.encode(t)",
                  NULL);
    CHECK_STR(got, "true 2 true true {\"a\":null,\"b\":[null,null]}");

    got = run_lua(L,
                  "local json = require('cephmark.json')\n"
                  "local t = {}\n"
                  "return tostring(json.array(t) == t) .. ' ' .. json.encode(json.array(t))",
                  NULL);
    CHECK_STR(got, "true []");

    got = run_lua(L,
                  "local json = require('cephmark.json')\n"
                  "local r = {phases = {{lat = 1}, {lat = print}}}\n"
                  "local ok, err = pcall(json.encode, r, {name = 'results'})\n"
                  "return tostring(ok) .. ' ' .. err",
                  NULL);
    CHECK_STR(got, "false results.phases[2].lat: cannot encode a function");

    /* Raised from Lua code, the message carries the caller's position. */
    got = run_lua(L,
                  "local json = require('cephmark.json')\n"
                  "return json.encode({f = print})",
                  NULL);
    CHECK_STR(got, "ERROR: [string \"local json = require('cephmark.json')...\"]:2: "
                   "value.f: cannot encode a function");

    CHECK_STR(run_lua(L, "return require('cephmark.json').encode({b = {1}}, {indent = 1})", NULL),
              "{\n \"b\": [\n  1\n ]\n}");

    static const struct {
        const char *code;
        const char *want;
    } misuse[] = {
        {"json.encode()", "bad argument #1 to 'encode' (value expected)"},
        {"json.encode({}, 2)", "bad argument #2 to 'encode' (table expected, got number)"},
        {"json.encode({}, {indent = 40})",
         "bad argument #2 to 'encode' (indent must be an integer from 0 to 32, got 40)"},
        {"json.encode({}, {indent = 1.5})",
         "bad argument #2 to 'encode' (indent must be an integer from 0 to 32, got 1.5)"},
        {"json.encode({}, {indnet = 2})",
         "bad argument #2 to 'encode' (unknown option \"indnet\" (expected indent or name))"},
        {"json.encode({}, {name = 1})",
         "bad argument #2 to 'encode' (name must be a string, got number)"},
        {"json.decode()", "bad argument #1 to 'decode' (string expected, got no value)"},
        {"json.decode(12)", "bad argument #1 to 'decode' (string expected, got number)"},
        {"json.array(5)", "bad argument #1 to 'array' (table expected, got number)"},
        {"json.array(setmetatable({}, {}))",
         "bad argument #1 to 'array' (table already has a metatable (cannot mark it as a JSON "
         "array))"},
    };
    for (size_t i = 0; i < sizeof misuse / sizeof misuse[0]; i++) {
        char code[512];
        snprintf(code, sizeof code,
                 "local json = require('cephmark.json')\n"
                 "local ok, err = pcall(function() %s end)\n"
                 "return ok and 'no error' or err:gsub('^.-:%%d+: ', '')",
                 misuse[i].code);
        CHECK_STR(run_lua(L, code, NULL), misuse[i].want);
    }
}

static void test_c_helpers(lua_State *L)
{
    int top = lua_gettop(L);
    cm_json_push_null(L);
    CHECK(cm_json_isnull(L, -1));
    CHECK(lua_touserdata(L, -1) == cm_json_null);
    lua_pushboolean(L, 0);
    CHECK(!cm_json_isnull(L, -1));
    lua_newtable(L);
    CHECK(!cm_json_isarray(L, -1));
    cm_json_mark_array(L, -1);
    CHECK(cm_json_isarray(L, -1));
    CHECK(!cm_json_isarray(L, -2));
    CHECK(lua_gettop(L) == top + 3);
    char err[64];
    CHECK(cm_json_encode(L, -1, 0, NULL, err, sizeof err) == 0);
    CHECK_STR(lua_tostring(L, -1), "[]");
    lua_settop(L, top);
}

/* Truncations and random corruptions of real documents must fail cleanly or succeed, and
 * always leave the stack balanced; ASan/UBSan catch anything worse. */
/* decode_only keeps what `keep` names and nothing else, and fails exactly where (and as)
 * a full decode fails, also when the fault is in a value it leaves out. */
static void test_decode_only(lua_State *L)
{
    CHECK_STR(run_lua(L,
                      "local json = require 'cephmark.json'\n"
                      "local keep = { osd = { op = true, op_w = true, gone = true }, arr = true }\n"
                      "return json.encode(assert(json.decode(..., keep)))",
                      "{\"osd\":{\"op\":1,\"op_w\":{\"avgcount\":2,\"sum\":0.5},"
                      "\"skip\":{\"x\":[1,{\"y\":\"z\"}],\"t\":true}},"
                      "\"other\":{\"a\":null},\"arr\":[{\"b\":1}]}"),
              "{\"arr\":[{\"b\":1}],\"osd\":{\"op\":1,\"op_w\":{\"avgcount\":2,\"sum\":0.5}}}");
    /* a table rule on a scalar or an array keeps it whole; false leaves the key out */
    CHECK_STR(run_lua(L,
                      "local json = require 'cephmark.json'\n"
                      "return json.encode(assert(json.decode(..., { a = { x = true }, b = { y = "
                      "true }, c = false })))",
                      "{\"a\":5,\"b\":[{\"z\":1}],\"c\":{}}"),
              "{\"a\":5,\"b\":[{\"z\":1}]}");
    CHECK(strstr(run_lua(L, "return (require 'cephmark.json').decode('{}', 5)", ""),
                 "bad argument #2 to 'decode' (table expected, got number)") != NULL);
    static const char *const faults[] = {
        "{\"skip\":{\"a\":1,}}",    "{\"skip\":[1 2]}",       "{\"skip\":tru}",
        "{\"skip\":\"\x01\"}",      "{\"skip\":{\"a\" 1}}",   "{\"skip\":{1:2}}",
        "{\"skip\":[1,]}",          "{\"skip\":{\"a\":01}}",  "{\"skip\":{}",
        "{\"skip\":[\"\\uD800\"]}", "{\"skip\":{\"k\":1} x}", "{\"skip\":{\"\\q\":1}}",
    };
    lua_newtable(L); /* keep: nothing of "skip" */
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "kept");
    int keep = lua_gettop(L);
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        char full[256] = "", only[256] = "";
        int top = lua_gettop(L);
        int rc_full = cm_json_decode(L, faults[i], strlen(faults[i]), full, sizeof full);
        lua_settop(L, top);
        int rc_only = cm_json_decode_only(L, faults[i], strlen(faults[i]), keep, only, sizeof only);
        CHECK_MSG(rc_full == -1 && rc_only == -1 && lua_gettop(L) == top, "%s", faults[i]);
        CHECK_STR(only, full);
        lua_settop(L, top);
    }
    /* nesting deeper than the limit inside a value left out */
    static char deep[2 * CM_JSON_MAX_DEPTH + 32];
    size_t n = (size_t)snprintf(deep, sizeof deep, "{\"skip\":");
    for (int i = 0; i < CM_JSON_MAX_DEPTH + 1; i++)
        deep[n++] = '[';
    for (int i = 0; i < CM_JSON_MAX_DEPTH + 1; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    char err[256] = "", full[256] = "";
    CHECK(cm_json_decode_only(L, deep, n, keep, err, sizeof err) == -1);
    CHECK(cm_json_decode(L, deep, n, full, sizeof full) == -1);
    CHECK_STR(err, full);
    CHECK(strstr(err, "nesting deeper than 200 levels") != NULL);
    lua_settop(L, keep - 1);
}

/* The digits found (one 15-digit conversion for most values, bisection for subnormals)
 * are what counting up from one digit finds, for doubles of every kind: random bit
 * patterns, decimals of few digits, integers and their neighbours, and subnormals. */
static void test_float_digits(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15u;
    int checked = 0;
    for (int i = 0; i < 60000; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        double x;
        if (i % 4 == 0) {
            memcpy(&x, &seed, sizeof x);
        } else if (i % 4 == 1) {
            x = (double)(seed % 100000) / (double)(1u << (seed >> 60)) / 1000.0;
        } else if (i % 4 == 3) {
            uint64_t bits = seed >> (12 + seed % 40); /* exponent field 0: subnormal */
            memcpy(&x, &bits, sizeof x);
        } else {
            x = nextafter((double)(seed % 1000000), (seed & 1) ? 1e300 : -1e300);
        }
        if (!isfinite(x))
            continue;
        int reference = 1;
        char text[48];
        for (; reference < 17; reference++) {
            snprintf(text, sizeof text, "%.*e", reference - 1, x);
            if (strtod(text, NULL) == x)
                break;
        }
        CHECK_MSG(cm_walk_float_digits(x) == reference, "%.17g: %d digits, want %d", x,
                  cm_walk_float_digits(x), reference);
        char digits[18];
        int exponent;
        cm_walk_float_decimal(x, digits, &exponent);
        snprintf(text, sizeof text, "%se%d", digits, exponent - reference + 1);
        CHECK_MSG(strtod(text, NULL) == fabs(x), "%.17g: digits %s, exponent %d", x, digits,
                  exponent);
        checked++;
    }
    CHECK(checked > 50000);
    CHECK(cm_walk_float_digits(5e-324) == 1);
    CHECK(cm_walk_float_digits(DBL_MIN) == 17);
}

static void test_mutations(lua_State *L)
{
    char err[256];
    int top = lua_gettop(L);
    const char *docs[] = {pool_ls_detail, ceph_status};
    for (size_t d = 0; d < 2; d++) {
        /* Every prefix that stops before the final bracket is incomplete. */
        size_t len = (size_t)(strrchr(docs[d], docs[d][0] == '[' ? ']' : '}') - docs[d]);
        for (size_t cut = 0; cut <= len; cut++) {
            int rc = cm_json_decode(L, docs[d], cut, err, sizeof err);
            CHECK_MSG(rc == -1 && lua_gettop(L) == top, "prefix %zu of doc %zu", cut, d);
            lua_settop(L, top);
        }
    }
    static const char alphabet[] = "{}[]\",:\\u0123456789abcdefEe+-.tnrl \n\x01\x80\xff'";
    static char buf[4096];
    uint32_t seed = 12345;
    int ok = 0;
    for (int iter = 0; iter < 30000; iter++) {
        const char *src = docs[iter % 2];
        size_t len = strlen(src);
        if (len > sizeof buf)
            len = sizeof buf;
        memcpy(buf, src, len);
        int edits = 1 + iter % 4;
        for (int i = 0; i < edits; i++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            buf[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        int rc = cm_json_decode(L, buf, len, err, sizeof err);
        CHECK(lua_gettop(L) == top + (rc == 0));
        if (rc == 0) {
            ok++;
            CHECK(cm_json_encode(L, -1, iter % 3, NULL, err, sizeof err) == 0);
        } else {
            CHECK(strncmp(err, "line ", 5) == 0);
        }
        lua_settop(L, top);
        /* keeping one key of each document (none kept of most values) fails exactly as the
         * full decode does */
        char only[256] = "";
        lua_newtable(L);
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, iter % 2 ? "health" : "pool_name");
        int rc_only = cm_json_decode_only(L, buf, len, top + 1, only, sizeof only);
        CHECK_MSG(rc_only == rc && (rc == 0 || strcmp(only, err) == 0), "iteration %d: %s / %s",
                  iter, err, only);
        CHECK(lua_gettop(L) == top + 1 + (rc_only == 0));
        lua_settop(L, top);
    }
    CHECK(ok > 0);
}

/* An allocator that fails past a budget, to check that memory errors raised in the middle
 * of decoding or encoding unwind cleanly (LeakSanitizer reports any C leak at exit). */
typedef struct {
    size_t used;
    size_t limit;
} budget;

static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    budget *b = ud;
    size_t old = ptr != NULL ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        b->used -= old;
        return NULL;
    }
    if (nsize > old && b->used + (nsize - old) > b->limit)
        return NULL;
    void *p = realloc(ptr, nsize);
    if (p != NULL)
        b->used = b->used - old + nsize;
    return p;
}

static int roundtrip_protected(lua_State *L)
{
    char err[256];
    size_t len;
    const char *text = lua_tolstring(L, 1, &len);
    if (cm_json_decode(L, text, len, err, sizeof err) != 0)
        return luaL_error(L, "decode: %s", err);
    if (cm_json_encode(L, -1, 2, NULL, err, sizeof err) != 0)
        return luaL_error(L, "encode: %s", err);
    return 1;
}

static void test_memory_errors(void)
{
    budget b = {0, SIZE_MAX};
    lua_State *L = lua_newstate(budget_alloc, &b);
    CHECK(L != NULL);
    if (L == NULL)
        return;
    int memerrs = 0, oks = 0;
    /* Escapes force the luaL_Buffer path, whose box must be released on failure too. */
    static const char escaped[] =
        "{\"k\\u00e9y\":[\"a\\nb\\ud83d\\ude00 long enough to need the buffer box: "
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "\"],\"n\":[1.5,2,null]}";
    const char *docs[] = {ceph_status, pool_ls_detail, escaped};
    /* Lua 5.4.4's lauxlib registers the luaL_Buffer box metatable before filling it in,
     * so a memory error at that exact point leaves a metatable without __close; create
     * it with memory to spare so that only this codec's own paths are under test. */
    lua_pushcfunction(L, roundtrip_protected);
    lua_pushstring(L, escaped);
    CHECK(lua_pcall(L, 1, 1, 0) == LUA_OK);
    lua_pop(L, 1);
    for (size_t d = 0; d < 3; d++) {
        for (size_t extra = 0; extra < 200000; extra += 97) {
            lua_gc(L, LUA_GCCOLLECT);
            b.limit = SIZE_MAX;
            lua_pushcfunction(L, roundtrip_protected);
            lua_pushstring(L, docs[d]);
            b.limit = b.used + extra;
            int rc = lua_pcall(L, 1, 1, 0);
            b.limit = SIZE_MAX;
            if (rc == LUA_ERRMEM) {
                memerrs++;
            } else {
                CHECK_MSG(rc == LUA_OK, "%s", lua_tostring(L, -1));
                oks++;
            }
            lua_pop(L, 1);
            if (rc == LUA_OK)
                break;
        }
    }
    CHECK(memerrs > 100);
    CHECK(oks == 3);
    CHECK(lua_gettop(L) == 0);
    lua_close(L);
    CHECK(b.used == 0);
}

int main(void)
{
    lua_State *L = new_state();
    test_ceph_documents(L);
    test_round_trips(L);
    test_escapes(L);
    test_numbers(L);
    test_decode_errors(L);
    test_failed_long_strings();
    test_encode(L);
    test_pretty(L);
    test_lua_module(L);
    test_c_helpers(L);
    test_decode_only(L);
    test_float_digits();
    test_mutations(L);
    CHECK(lua_gettop(L) == 0);
    lua_close(L);
    test_memory_errors();
    return check_summary("json");
}
