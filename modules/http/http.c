/* The `cephmark.http` Lua module: a plain blocking GET with a bounded timeout, for the small
 * JSON APIs the stdlib reads (Prometheus's query API), and the percent-encoding of query
 * values. One libcurl handle per Lua state is kept between calls, so that a run's queries
 * reuse one connection; libcurl itself is loaded on the first request. Object stores have
 * their own modules (cephmark.swift, cephmark.s3). */
#include "http_client.h"
#include "registry.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_TYPE "cephmark.http.session"

/* The default of `timeout`: a query API that has not answered in this time is not going to
 * answer usefully, and a caller's run must go on. */
#define DEFAULT_TIMEOUT 10.0

struct session {
    CURL *easy;
};

static int session_gc(lua_State *L)
{
    struct session *session = luaL_checkudata(L, 1, SESSION_TYPE);
    if (session->easy) {
        curl_easy_cleanup(session->easy);
        session->easy = NULL;
    }
    return 0;
}

/* The state's handle (the first upvalue of get), created and libcurl loaded on first use;
 * raises when libcurl cannot be loaded or initialised. */
static CURL *session_handle(lua_State *L)
{
    struct session *session = luaL_checkudata(L, lua_upvalueindex(1), SESSION_TYPE);
    if (!session->easy) {
        char error[256];
        if (cm_curl_load(error, sizeof error) < 0)
            luaL_error(L, "http.get: %s", error);
        session->easy = curl_easy_init();
        if (!session->easy)
            luaL_error(L, "http.get: cannot initialise libcurl");
    }
    return session->easy;
}

/* http.get(url [, {timeout = seconds}]) -> body, status, content_type when a response came
 * (any status: the caller judges it); nil, message, code (a negative errno: -ECONNREFUSED,
 * -ETIMEDOUT, ...) when none did. */
static int http_get(lua_State *L)
{
    const char *url = luaL_checkstring(L, 1);
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return luaL_argerror(L, 1, "expected an http:// or https:// URL");
    if (strlen(url) >= (size_t)CM_HTTP_URL_MAX * 8)
        return luaL_argerror(L, 1, "URL too long");
    double timeout = DEFAULT_TIMEOUT;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_pushnil(L);
        while (lua_next(L, 2)) {
            lua_pop(L, 1);
            if (lua_type(L, -1) != LUA_TSTRING || strcmp(lua_tostring(L, -1), "timeout") != 0)
                return luaL_error(L, "http.get: unknown option '%s' (options: timeout)",
                                  luaL_tolstring(L, -1, NULL));
        }
        lua_getfield(L, 2, "timeout");
        if (!lua_isnil(L, -1)) {
            int is_number = 0;
            timeout = lua_tonumberx(L, -1, &is_number);
            if (!is_number || !(timeout > 0) || timeout > 3600)
                return luaL_error(L, "http.get: timeout must be a number of seconds above 0 and "
                                     "at most 3600");
        }
        lua_pop(L, 1);
    }
    CURL *easy = session_handle(L);
    struct cm_http_response response = {0};
    char error[CM_HTTP_URL_MAX + 512];
    int rc = cm_http_get(easy, url, timeout, &response, error, sizeof error);
    if (rc < 0) {
        cm_http_response_fini(&response);
        lua_pushnil(L);
        lua_pushstring(L, error);
        lua_pushinteger(L, rc);
        return 3;
    }
    lua_pushlstring(L, response.body ? response.body : "", response.body_len);
    lua_pushinteger(L, response.status);
    lua_pushstring(L, response.content_type);
    cm_http_response_fini(&response);
    return 3;
}

/* http.escape(text) -> text with every byte but letters, digits and -_.~ percent-encoded:
 * a value for a URL's query string. */
static int http_escape(lua_State *L)
{
    size_t length;
    const char *text = luaL_checklstring(L, 1, &length);
    if (strlen(text) != length)
        return luaL_argerror(L, 1, "contains a NUL byte");
    size_t size = length * 3 + 1;
    char *out = malloc(size);
    if (!out)
        return luaL_error(L, "http.escape: out of memory");
    int rc = cm_http_escape(text, false, out, size);
    if (rc < 0) {
        free(out);
        return luaL_error(L, "http.escape: text too long");
    }
    lua_pushstring(L, out);
    free(out);
    return 1;
}

int luaopen_cephmark_http(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"escape", http_escape},
        {"get", NULL},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    struct session *session = lua_newuserdatauv(L, sizeof *session, 0);
    session->easy = NULL;
    if (luaL_newmetatable(L, SESSION_TYPE)) {
        lua_pushcfunction(L, session_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    lua_pushcclosure(L, http_get, 1);
    lua_setfield(L, -2, "get");
    lua_pushnumber(L, DEFAULT_TIMEOUT);
    lua_setfield(L, -2, "DEFAULT_TIMEOUT");
    return 1;
}
