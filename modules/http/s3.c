/* The `cephmark.s3` Lua module: an S3 endpoint (path-style addressing, requests signed with
 * SigV4 by libcurl) with buckets, objects and conn:bench on the HTTP target of the op
 * engine. The glue is shared with cephmark.swift (http_lua.c); the client below it is pure
 * C (http_client.c, http_target.c). See docs/rgw.md. */
#include "http_lua.h"
#include "registry.h"

int luaopen_cephmark_s3(lua_State *L)
{
    return cm_http_lua_open(L, CM_HTTP_S3, "cephmark.s3.connection");
}
