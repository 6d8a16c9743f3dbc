/* The C Lua modules built into cephmark; lstate.c preloads each under its require name.
 * To add a module: write modules/<name>.c exporting luaopen_cephmark_<name>, declare it
 * here and list it in registry.c. */
#ifndef CEPHMARK_MODULES_REGISTRY_H
#define CEPHMARK_MODULES_REGISTRY_H

#include <lua.h>

struct cm_c_module {
    const char *name;
    lua_CFunction open;
};

int luaopen_cephmark_control(lua_State *L);
int luaopen_cephmark_disk(lua_State *L);
int luaopen_cephmark_http(lua_State *L);
int luaopen_cephmark_null(lua_State *L);
int luaopen_cephmark_options(lua_State *L);
int luaopen_cephmark_rados(lua_State *L);
int luaopen_cephmark_rbd(lua_State *L);
int luaopen_cephmark_s3(lua_State *L);
int luaopen_cephmark_swift(lua_State *L);
int luaopen_cephmark_socket(lua_State *L);
int luaopen_cephmark_sys(lua_State *L);
/* cephmark.json, cephmark.yaml and cephmark.workers are the runtime's: json.h,
 * yaml_codec.h and workers.h declare them */

/* The native benches' descriptions (bench_lua.h), for cephmark.options. */
struct cm_bench_def;
extern const struct cm_bench_def cm_disk_bench, cm_http_bench, cm_null_bench, cm_rados_bench,
    cm_rbd_bench, cm_socket_bench;

/* Terminated by an entry whose name is NULL. */
extern const struct cm_c_module cm_c_modules[];

#endif
