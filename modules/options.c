/* The `cephmark.options` Lua module: every native bench target's option table, as the
 * targets declare it (bench_lua.h), for `cephmark options` and the generated reference
 * docs/options.md. Reading the tables loads no library: librbd and libcurl stay unopened. */
#include "bench_lua.h"
#include "registry.h"

#include <lauxlib.h>

/* The benches, in the order the reference lists them. */
static const struct {
    const char *call; /* how a scenario calls it */
    const struct cm_bench_def *def;
} benches[] = {
    {"pool:bench", &cm_rados_bench},    {"image:bench", &cm_rbd_bench},
    {"conn:bench", &cm_http_bench},     {"disk.bench", &cm_disk_bench},
    {"socket.bench", &cm_socket_bench}, {"null.bench", &cm_null_bench},
};

/* options.list() -> { {name=, call=, options={...}}, ..., {name="engine", options={...}} } */
static int options_list(lua_State *L)
{
    size_t n = sizeof benches / sizeof benches[0];
    lua_createtable(L, (int)n + 1, 0);
    for (size_t i = 0; i <= n; i++) {
        lua_createtable(L, 0, 3);
        lua_pushstring(L, i < n ? benches[i].def->name : "engine");
        lua_setfield(L, -2, "name");
        lua_pushstring(L, i < n ? benches[i].call : "every bench");
        lua_setfield(L, -2, "call");
        cm_bench_push_option_table(L, i < n ? benches[i].def->options : cm_engine_options);
        lua_setfield(L, -2, "options");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

int luaopen_cephmark_options(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"list", options_list},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    return 1;
}
