/* The `cephmark.swift` Lua module: a Swift endpoint (auth v1.0, as radosgw serves it under
 * /auth/v1.0 and /swift/v1) with containers, objects and conn:bench on the HTTP target of
 * the op engine. The glue is shared with cephmark.s3 (http_lua.c); the client below it is
 * pure C (http_client.c, http_target.c). See docs/rgw.md. */
#include "http_lua.h"
#include "registry.h"

int luaopen_cephmark_swift(lua_State *L)
{
    return cm_http_lua_open(L, CM_HTTP_SWIFT, "cephmark.swift.connection");
}
