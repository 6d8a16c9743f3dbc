/* libFuzzer target for the YAML loader behind `--params FILE.yaml` (runtime/yaml_codec.c):
 * any text decodes to a value or fails with a "FILE:LINE:COLUMN: message" error, never a
 * crash, leak or unbounded expansion; a decoded value encodes, and encoding is stable
 * (decode(encode(v)) encodes to the same text). */
#include <stdint.h>
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
    luaL_requiref(L, "cephmark.yaml", luaopen_cephmark_yaml, 0);
    lua_settop(L, 0);
    return L;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    lua_State *L = fuzz_state();
    char err[512];
    err[0] = '\0';
    if (cm_yaml_decode(L, (const char *)data, size, "params.yaml", err, sizeof err) != 0) {
        if (strncmp(err, "params.yaml:", 12) != 0)
            abort(); /* every error names the file and a position */
        lua_close(L);
        return 0;
    }
    if (cm_yaml_encode(L, 1, err, sizeof err) != 0)
        abort(); /* whatever was decoded can be written back */
    size_t first_length;
    const char *first = lua_tolstring(L, 2, &first_length);
    if (cm_yaml_decode(L, first, first_length, NULL, err, sizeof err) != 0)
        abort();
    if (cm_yaml_encode(L, 3, err, sizeof err) != 0)
        abort();
    size_t second_length;
    const char *second = lua_tolstring(L, 4, &second_length);
    if (first_length != second_length || memcmp(first, second, first_length) != 0)
        abort();
    lua_close(L);
    return 0;
}
