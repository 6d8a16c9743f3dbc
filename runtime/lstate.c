/* The Lua host: state creation, module registration, protected calls and error reporting. */
#include "lstate.h"
#include "exitcode.h"
#include "interrupt.h"
#include "registry.h"
#include "stdlib_bundle.h"

#include <ctype.h>
#include <lualib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Error objects meant for the operator are tables tagged with this registry key, so the
 * reporter can tell them from a script's own errors (which get a traceback). */
static const char user_error_key[] = "cephmark.user_error";

static int stdlib_entry_loader(lua_State *L)
{
    const struct cm_stdlib_entry *entry = lua_touserdata(L, lua_upvalueindex(1));
    if (luaL_loadbufferx(L, entry->source, entry->size, entry->chunkname, "t") != LUA_OK)
        return lua_error(L);
    lua_pushstring(L, entry->module);
    lua_pushstring(L, entry->chunkname + 1);
    lua_call(L, 2, 1);
    return 1;
}

/* A searcher placed before all others when a stdlib folder is given, so a developer's
 * edited .lua file wins over the copy compiled into the binary. */
static int stdlib_dir_searcher(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    const char *dir = lua_tostring(L, lua_upvalueindex(1));
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, dir);
    luaL_addstring(&b, "/?.lua;");
    luaL_addstring(&b, dir);
    luaL_addstring(&b, "/?/init.lua");
    luaL_pushresult(&b);
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "searchpath");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -4);
    lua_call(L, 2, 2);
    if (lua_isnil(L, -2)) {
        lua_pushfstring(L, "no stdlib override '%s' in %s", name, dir);
        return 1;
    }
    const char *path = lua_tostring(L, -2);
    if (luaL_loadfilex(L, path, "t") != LUA_OK)
        return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, path,
                          lua_tostring(L, -1));
    lua_pushstring(L, path);
    return 2;
}

static void preload_modules(lua_State *L)
{
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    for (const struct cm_c_module *m = cm_c_modules; m->name; m++) {
        lua_pushcfunction(L, m->open);
        lua_setfield(L, -2, m->name);
    }
    for (const struct cm_stdlib_entry *e = cm_stdlib_entries; e->module; e++) {
        lua_pushlightuserdata(L, (void *)e);
        lua_pushcclosure(L, stdlib_entry_loader, 1);
        lua_setfield(L, -2, e->module);
    }
    lua_pop(L, 1);
}

static void install_stdlib_override(lua_State *L, const char *dir)
{
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "searchers");
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer i = n; i >= 1; i--) {
        lua_rawgeti(L, -1, i);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushstring(L, dir);
    lua_pushcclosure(L, stdlib_dir_searcher, 1);
    lua_rawseti(L, -2, 1);
    lua_pop(L, 2);
}

/* The scenario's own folder and -L folders come before LUA_PATH, so a team library next
 * to the scenario is found first. */
static void prepend_lua_path(lua_State *L, const char *dir)
{
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "path");
    lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s", dir, dir, lua_tostring(L, -1));
    lua_setfield(L, -3, "path");
    lua_pop(L, 2);
}

/* Rocks installed with `luarocks --local` live under ~/.luarocks; the system trees
 * (/usr/local/share/lua/5.4, /usr/share/lua/5.4) are already in Lua's default paths. The
 * user tree goes last, so LUA_PATH, -L and the scenario's folder win. */
static void add_luarocks_user_tree(lua_State *L)
{
    const char *home = getenv("HOME");
    if (!home || !*home)
        return;
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "path");
    lua_pushfstring(L, "%s;%s/.luarocks/share/lua/5.4/?.lua;%s/.luarocks/share/lua/5.4/?/init.lua",
                    lua_tostring(L, -1), home, home);
    lua_setfield(L, -3, "path");
    lua_pop(L, 1);
    lua_getfield(L, -1, "cpath");
    lua_pushfstring(L, "%s;%s/.luarocks/lib/lua/5.4/?.so", lua_tostring(L, -1), home);
    lua_setfield(L, -3, "cpath");
    lua_pop(L, 2);
}

lua_State *cm_lua_new(const struct cm_lua_config *config)
{
    lua_State *L = luaL_newstate();
    if (!L)
        return NULL;
    /* threads copy the main thread's extra space: NULL there means "not a worker" */
    *(void **)lua_getextraspace(L) = NULL;
    luaL_openlibs(L);
    /* before any coroutine exists, so that every thread inherits the watchdog hook */
    cm_interrupt_watch(L);
    preload_modules(L);
    const char *override = config->stdlib_dir;
    if (!override || !*override)
        override = getenv("CEPHMARK_STDLIB_DIR");
    if (override && *override)
        install_stdlib_override(L, override);
    add_luarocks_user_tree(L);
    for (size_t i = config->n_lib_dirs; i > 0; i--)
        prepend_lua_path(L, config->lib_dirs[i - 1]);
    if (config->script_dir)
        prepend_lua_path(L, config->script_dir);
    return L;
}

void cm_lua_close(lua_State *L)
{
    if (L)
        lua_close(L);
}

static int is_user_error(lua_State *L, int index)
{
    if (!lua_istable(L, index))
        return 0;
    int found = lua_getfield(L, index, user_error_key) != LUA_TNIL;
    lua_pop(L, 1);
    return found;
}

static int call_tostring_meta(lua_State *L)
{
    return luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING;
}

/* Fields shown of an error table, and the depth of nested tables shown. */
#define ERROR_FIELDS_SHOWN 16
#define ERROR_DEPTH_SHOWN  2

static void push_rendered(lua_State *L, int index, int depth);

/* A key as written in a table constructor: `code`, `[1]`, `["a b"]`. */
static void push_rendered_key(lua_State *L, int index)
{
    index = lua_absindex(L, index);
    if (lua_type(L, index) == LUA_TSTRING) {
        size_t len;
        const char *key = lua_tolstring(L, index, &len);
        int plain = len > 0 && !isdigit((unsigned char)key[0]);
        for (size_t i = 0; i < len && plain; i++)
            plain = isalnum((unsigned char)key[i]) || key[i] == '_';
        if (plain) {
            lua_pushvalue(L, index);
            return;
        }
    }
    lua_pushliteral(L, "[");
    push_rendered(L, index, ERROR_DEPTH_SHOWN);
    lua_pushliteral(L, "]");
    lua_concat(L, 3);
}

/* Pushes the value at `index` written roughly as Lua source, keys in order, so an error
 * raised with a table reads as what it holds. */
static void push_rendered(lua_State *L, int index, int depth)
{
    index = lua_absindex(L, index);
    switch (lua_type(L, index)) {
    case LUA_TSTRING:
        lua_pushfstring(L, "\"%s\"", lua_tostring(L, index));
        return;
    case LUA_TNUMBER:
    case LUA_TBOOLEAN:
    case LUA_TNIL:
        luaL_tolstring(L, index, NULL);
        return;
    case LUA_TTABLE:
        break;
    default:
        lua_pushfstring(L, "(a %s)", luaL_typename(L, index));
        return;
    }
    if (depth >= ERROR_DEPTH_SHOWN) {
        lua_pushliteral(L, "{...}");
        return;
    }
    lua_newtable(L);
    int parts = lua_gettop(L);
    lua_Integer n = 0;
    lua_pushnil(L);
    while (lua_next(L, index)) {
        push_rendered_key(L, -2);
        lua_pushliteral(L, " = ");
        push_rendered(L, -3, depth + 1);
        lua_concat(L, 3);
        /* insertion sort by text: tables have no order, and a message must be stable */
        lua_Integer at = ++n;
        while (at > 1) {
            lua_rawgeti(L, parts, at - 1);
            int later = lua_compare(L, -2, -1, LUA_OPLT);
            if (!later) {
                lua_pop(L, 1);
                break;
            }
            lua_rawseti(L, parts, at--);
        }
        lua_rawseti(L, parts, at);
        lua_pop(L, 1); /* the value; the key stays for lua_next */
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addchar(&b, '{');
    for (lua_Integer i = 1; i <= n && i <= ERROR_FIELDS_SHOWN; i++) {
        if (i > 1)
            luaL_addstring(&b, ", ");
        lua_rawgeti(L, parts, i);
        luaL_addvalue(&b);
    }
    if (n > ERROR_FIELDS_SHOWN)
        luaL_addstring(&b, ", ...");
    luaL_addchar(&b, '}');
    luaL_pushresult(&b);
    lua_remove(L, parts);
}

const char *cm_lua_error_text(lua_State *L, int index)
{
    index = lua_absindex(L, index);
    int type = lua_type(L, index);
    if (type == LUA_TSTRING || type == LUA_TNUMBER) {
        lua_pushvalue(L, index);
        return lua_tostring(L, -1);
    }
    /* a __tostring that raises must not turn one error into an error in error handling */
    cm_interrupt_hold();
    lua_pushcfunction(L, call_tostring_meta);
    lua_pushvalue(L, index);
    int described = lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING;
    cm_interrupt_release();
    if (described)
        return lua_tostring(L, -1);
    lua_pop(L, 1);
    lua_pushliteral(L, "error ");
    push_rendered(L, index, 0);
    lua_concat(L, 2);
    return lua_tostring(L, -1);
}

/* The message handler: operator-facing errors pass through untouched; anything else gets
 * a traceback, as lua.c does. An error object's __tostring runs held and protected: an
 * interrupt or an error there would replace the error being reported. */
static int traceback_handler(lua_State *L)
{
    if (is_user_error(L, 1))
        return 1;
    const char *message = cm_lua_error_text(L, 1);
    luaL_traceback(L, L, message, 1);
    return 1;
}

int cm_lua_docall(lua_State *L, int nargs, int nresults)
{
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, traceback_handler);
    lua_insert(L, base);
    int status = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    return status;
}

int cm_lua_report(lua_State *L, int status)
{
    if (status == LUA_OK)
        return CM_EXIT_OK;
    fflush(stdout);
    if (is_user_error(L, -1)) {
        lua_getfield(L, -1, "message");
        lua_getfield(L, -2, "exit_code");
        int code = (int)luaL_optinteger(L, -1, CM_EXIT_USAGE);
        const char *signal = cm_interrupt_signal_name();
        if (cm_interrupt_is_exit(L, -3))
            ; /* os.exit(code): the script's own choice, nothing to say */
        else if (cm_interrupt_is_error(L, -3) && signal && strcmp(signal, "SIGINT") != 0)
            fprintf(stderr, "cephmark: interrupted (%s)\n", signal);
        else
            fprintf(stderr, "cephmark: %s\n", luaL_optstring(L, -2, "error"));
        lua_pop(L, 3);
        return code;
    }
    fprintf(stderr, "cephmark: %s\n", cm_lua_error_text(L, -1));
    lua_pop(L, 2);
    return CM_EXIT_USAGE;
}

static int user_error_tostring(lua_State *L)
{
    lua_getfield(L, 1, "message");
    return 1;
}

void cm_push_user_error(lua_State *L, int exit_code, const char *message)
{
    lua_createtable(L, 0, 3);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, user_error_key);
    lua_pushstring(L, message);
    lua_setfield(L, -2, "message");
    lua_pushinteger(L, exit_code);
    lua_setfield(L, -2, "exit_code");
    /* tostring(err) gives the message, so Lua code that prints a caught error reads well */
    if (luaL_newmetatable(L, user_error_key)) {
        lua_pushcfunction(L, user_error_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_setmetatable(L, -2);
}

int cm_error_user(lua_State *L, int exit_code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *message = lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    cm_push_user_error(L, exit_code, message);
    lua_error(L);
    abort(); /* lua_error does not return */
}

int cm_lua_failure(lua_State *L, lua_Integer code, const char *message)
{
    lua_pushnil(L);
    lua_pushstring(L, message);
    lua_pushinteger(L, code);
    return 3;
}

int cm_lua_errno_failure(lua_State *L, int rc, const char *what)
{
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", what, strerror(rc < 0 ? -rc : rc));
    lua_pushinteger(L, rc);
    return 3;
}

void cm_lua_new_type(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction close,
                     lua_CFunction tostring)
{
    luaL_newmetatable(L, name);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__close");
    if (tostring) {
        lua_pushcfunction(L, tostring);
        lua_setfield(L, -2, "__tostring");
    }
}
