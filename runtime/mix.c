/* The Lua check of an operation mix; see mix.h. */
#include "mix.h"

#include <lauxlib.h>
#include <string.h>

/* The offered names, "read, write, stat, remove", for the unknown-name message. */
static void push_offered(lua_State *L, const char *const *names)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    bool first = true;
    for (int kind = 0; kind < CM_OP_KINDS; kind++) {
        if (!names[kind])
            continue;
        if (!first)
            luaL_addstring(&b, ", ");
        luaL_addstring(&b, names[kind]);
        first = false;
    }
    luaL_pushresult(&b);
}

/* The kind named `name` among the offered ones, or -1. */
static int offered_kind(const char *const *names, const char *name)
{
    for (int kind = 0; kind < CM_OP_KINDS; kind++)
        if (names[kind] && strcmp(names[kind], name) == 0)
            return kind;
    return -1;
}

void cm_lua_check_mix(lua_State *L, int index, const char *what, const char *const *names,
                      struct cm_mix *mix)
{
    index = lua_absindex(L, index);
    memset(mix, 0, sizeof *mix);
    if (!lua_istable(L, index))
        luaL_error(L, "%s: mix must be a table of ratios such as {read = 60, write = 40}, got %s",
                   what, luaL_typename(L, index));
    lua_pushnil(L);
    while (lua_next(L, index)) {
        int kind = lua_type(L, -2) == LUA_TSTRING ? offered_kind(names, lua_tostring(L, -2)) : -1;
        if (kind < 0) {
            const char *given = luaL_tolstring(L, -2, NULL);
            push_offered(L, names);
            luaL_error(L, "%s: mix: unknown operation '%s' (expected one of %s)", what, given,
                       lua_tostring(L, -1));
        }
        int exact = 0;
        lua_Integer ratio = lua_tointegerx(L, -1, &exact);
        if (!exact || ratio < 0 || ratio > UINT32_MAX)
            luaL_error(L, "%s: mix: the ratio of %s must be an integer >= 0, got %s", what,
                       names[kind], luaL_tolstring(L, -1, NULL));
        mix->weight[kind] = (uint32_t)ratio;
        mix->total += (uint64_t)ratio;
        lua_pop(L, 1);
    }
    if (mix->total == 0)
        luaL_error(L, "%s: mix: the ratios sum to 0 (give at least one operation a ratio above 0)",
                   what);
}
