/* The Lua glue shared by cephmark.swift and cephmark.s3 (modules/http/swift.c, modules/s3.c):
 * the connection handle over an http_client.h client, its object and container methods,
 * and conn:bench on the HTTP target (http_target.h). The client layer itself
 * (http_client.c, http_target.c) has no Lua types; this file is the only Lua over it. */
#ifndef CEPHMARK_HTTP_LUA_H
#define CEPHMARK_HTTP_LUA_H

#include "http_client.h"

#include <lua.h>

/* Builds the module table of cephmark.swift or cephmark.s3 (metatable named
 * `connection_type`, e.g. "cephmark.swift.connection") with `connect` reading the
 * credentials table of that API. Leaves the module table on the stack. */
int cm_http_lua_open(lua_State *L, enum cm_http_api api, const char *connection_type);

#endif
