/* The `cephmark.null` Lua module: runs the op engine against the null target (ops that
 * complete after a fixed or random delay and move no data), to measure the engine itself
 * and to test scenarios without a cluster. It does not stand in for Ceph. */
#include "engine_lua.h"
#include "registry.h"
#include "null_target.h"

#include <lauxlib.h>
#include <string.h>

/* null.bench's own options, beside the engine's (also published as null.bench_options) */
static const char *const null_bench_options[] = {"block_size", "delay", "delay_max", "seed", NULL};

/* null.bench{delay=, delay_max=, block_size=, threads=, seconds=, ops=, bytes=, rate=,
 *   warmup=, on_second=} -> result table */
static int null_bench(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    cm_lua_check_options(L, 1, "null.bench", null_bench_options, true);
    struct cm_null_config null = {
        .delay_ns = (uint64_t)(cm_lua_opt_duration(L, 1, "delay", 0, "null.bench") * 1e9),
        .block_size = cm_lua_opt_size(L, 1, "block_size", 4096, "null.bench"),
        .seed = (uint64_t)cm_lua_opt_integer(L, 1, "seed", 1, 0, INT64_MAX, "null.bench"),
    };
    null.delay_max_ns = (uint64_t)(cm_lua_opt_duration(L, 1, "delay_max", 0, "null.bench") * 1e9);
    if (null.delay_max_ns && null.delay_max_ns < null.delay_ns)
        return luaL_error(L, "null.bench: delay_max must not be below delay");
    struct cm_engine_config config;
    struct cm_engine_lua bridge;
    cm_engine_lua_config(L, 1, "null.bench", 10, &config, &bridge);
    struct cm_null_target *target = cm_null_target_new(&null, config.depth);
    if (!target) {
        cm_engine_lua_finish(&bridge);
        return luaL_error(L, "null.bench: out of memory");
    }
    struct cm_engine_result result;
    int rc = cm_engine_run(&config, &cm_null_target_ops, target, &result);
    cm_null_target_free(target);
    if (rc < 0) {
        cm_engine_lua_finish(&bridge);
        return luaL_error(L, "null.bench: cannot start: %s", strerror(-rc));
    }
    cm_engine_lua_push_result(L, &result, &config);
    cm_engine_result_free(&result);
    lua_pushliteral(L, "null");
    lua_setfield(L, -2, "op");
    lua_pushinteger(L, (lua_Integer)null.block_size);
    lua_setfield(L, -2, "block_size");
    cm_engine_lua_finish(&bridge);
    return 1;
}

int luaopen_cephmark_null(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"bench", null_bench},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    cm_lua_push_option_names(L, null_bench_options, true);
    lua_setfield(L, -2, "bench_options");
    return 1;
}
