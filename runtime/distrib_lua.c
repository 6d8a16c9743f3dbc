/* Access and size distributions from Lua options; see distrib_lua.h. */
#include "distrib_lua.h"
#include "engine_lua.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

void cm_lua_access_spec(lua_State *L, const char *text, const char *what,
                        struct cm_access_spec *spec)
{
    char error[256];
    if (cm_access_parse(text, spec, error, sizeof error) < 0)
        luaL_error(L, "%s: %s", what, error);
}

/* A size at `index`, read as cm_lua_opt_size reads a field, with its messages. */
static uint64_t size_at(lua_State *L, int index, const char *what, const char *label)
{
    index = lua_absindex(L, index);
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, index);
    lua_setfield(L, -2, label);
    uint64_t value = cm_lua_opt_size(L, -1, label, 0, what);
    lua_pop(L, 1);
    return value;
}

/* { {"4K", 40}, {"64K", 30}, ... }: each bucket a size and a non-negative integer weight. */
static void read_buckets(lua_State *L, int table, const char *what, const char *name,
                         struct cm_size_dist *dist)
{
    lua_Integer n = luaL_len(L, table);
    if (n > CM_SIZE_BUCKETS_MAX)
        luaL_error(L, "%s: %s: at most %d size buckets, got %I", what, name, CM_SIZE_BUCKETS_MAX,
                   n);
    dist->kind = CM_SIZE_BUCKETS;
    for (lua_Integer i = 1; i <= n; i++) {
        char label[64];
        snprintf(label, sizeof label, "%s bucket %d", name, (int)i);
        if (lua_geti(L, table, i) != LUA_TTABLE)
            luaL_error(L, "%s: %s is {size, weight}, got a %s", what, label, luaL_typename(L, -1));
        int bucket = lua_gettop(L);
        if (luaL_len(L, bucket) != 2)
            luaL_error(L, "%s: %s is {size, weight} (a weight is missing or extra), got %I values",
                       what, label, luaL_len(L, bucket));
        lua_geti(L, bucket, 1);
        dist->sizes[i - 1] = size_at(L, -1, what, label);
        lua_geti(L, bucket, 2);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0 ||
            lua_tointeger(L, -1) > (lua_Integer)1 << 32)
            luaL_error(L, "%s: %s: the weight must be an integer from 0 to 2^32, got %s", what,
                       label, luaL_tolstring(L, -1, NULL));
        dist->weights[i - 1] = (uint64_t)lua_tointeger(L, -1);
        dist->total_weight += dist->weights[i - 1];
        lua_pop(L, 3);
    }
    dist->n_buckets = (size_t)n;
}

void cm_lua_size_dist(lua_State *L, int index, const char *what, const char *name,
                      struct cm_size_dist *dist)
{
    memset(dist, 0, sizeof *dist);
    index = lua_absindex(L, index);
    if (lua_type(L, index) != LUA_TTABLE) {
        dist->kind = CM_SIZE_FIXED;
        dist->low = dist->high = size_at(L, index, what, name);
    } else if (lua_geti(L, index, 1) == LUA_TTABLE) {
        lua_pop(L, 1);
        read_buckets(L, index, what, name, dist);
    } else {
        lua_pop(L, 1);
        if (luaL_len(L, index) != 2)
            luaL_error(L,
                       "%s: %s is a size, a range {low, high} or buckets { {size, weight}, ... }, "
                       "got a table of %I values",
                       what, name, luaL_len(L, index));
        char label[64];
        snprintf(label, sizeof label, "%s range", name);
        dist->kind = CM_SIZE_RANGE;
        lua_geti(L, index, 1);
        dist->low = size_at(L, -1, what, label);
        lua_geti(L, index, 2);
        dist->high = size_at(L, -1, what, label);
        lua_pop(L, 2);
    }
    char error[256];
    if (cm_size_check(dist, error, sizeof error) < 0)
        luaL_error(L, "%s: %s", what, error);
}
