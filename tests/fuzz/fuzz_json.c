/* libFuzzer target for the JSON codec (runtime/json.c), which reads Ceph's mon_command
 * answers and writes results.json: any text decodes to a value or fails with a
 * "line L column C: message" error, never a crash or leak; the filtered decode
 * (cm_json_decode_only) accepts and refuses exactly what decode does, with the same
 * message; and a decoded value encodes, compact and pretty, to text that decodes to a value
 * encoding to the same compact text, also when it goes through YAML (results.yaml). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "json.h"
#include "yaml_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A fresh state per input: every allocation of an input is freed by its end, so
 * libFuzzer's leak check (run when mallocs and frees differ) finds real leaks only. */
static lua_State *fuzz_state(void)
{
    lua_State *L = luaL_newstate();
    if (L == NULL)
        abort();
    luaL_requiref(L, "cephmark.json", luaopen_cephmark_json, 0);
    lua_settop(L, 0);
    return L;
}

/* The message of a decode error: a 1-based position, then what went wrong. */
static int is_position_message(const char *err)
{
    unsigned long line, column;
    int consumed = 0;
    if (sscanf(err, "line %lu column %lu: %n", &line, &column, &consumed) != 2 || consumed == 0)
        return 0;
    return line >= 1 && column >= 1 && err[consumed] != '\0';
}

/* Keeps one key whole and filters another, so that both kept and skipped values are met. */
static void push_keep_table(lua_State *L)
{
    lua_newtable(L);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "a");
    lua_newtable(L);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "c");
    lua_setfield(L, -2, "b");
}

/* Decodes text, which must succeed, and leaves its compact encoding on the stack. */
static void push_reencoded(lua_State *L, const char *text, size_t len)
{
    char err[512];
    if (cm_json_decode(L, text, len, err, sizeof err) != 0)
        abort(); /* what the encoder writes reads back */
    if (cm_json_encode(L, -1, 0, NULL, err, sizeof err) != 0)
        abort();
    lua_remove(L, -2);
}

static void check_same(lua_State *L, int a, int b)
{
    size_t a_len, b_len;
    const char *a_text = lua_tolstring(L, a, &a_len);
    const char *b_text = lua_tolstring(L, b, &b_len);
    if (a_len != b_len || memcmp(a_text, b_text, a_len) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    const char *text = (const char *)data;
    lua_State *L = fuzz_state();
    char err[512];
    char filtered_err[512];
    err[0] = filtered_err[0] = '\0';
    int rc = cm_json_decode(L, text, size, err, sizeof err);

    push_keep_table(L);
    int filtered_rc = cm_json_decode_only(L, text, size, -1, filtered_err, sizeof filtered_err);
    if (rc != filtered_rc)
        abort(); /* skipping a value checks the same grammar */
    if (rc != 0) {
        if (!is_position_message(err) || strcmp(err, filtered_err) != 0)
            abort();
        lua_close(L);
        return 0;
    }
    lua_settop(L, 1);

    if (cm_json_encode(L, 1, 0, NULL, err, sizeof err) != 0)
        abort(); /* whatever was decoded can be written back */
    int compact = lua_gettop(L);
    size_t len;
    const char *out = lua_tolstring(L, compact, &len);
    push_reencoded(L, out, len);
    check_same(L, compact, -1);

    if (cm_json_encode(L, 1, 2, NULL, err, sizeof err) != 0)
        abort();
    out = lua_tolstring(L, -1, &len);
    push_reencoded(L, out, len);
    check_same(L, compact, -1);

    /* results.yaml holds the same values as results.json */
    luaL_requiref(L, "cephmark.yaml", luaopen_cephmark_yaml, 0);
    if (cm_yaml_encode(L, 1, err, sizeof err) != 0)
        abort();
    out = lua_tolstring(L, -1, &len);
    if (cm_yaml_decode(L, out, len, NULL, err, sizeof err) != 0)
        abort();
    if (cm_json_encode(L, -1, 0, NULL, err, sizeof err) != 0)
        abort();
    check_same(L, compact, -1);
    lua_close(L);
    return 0;
}
