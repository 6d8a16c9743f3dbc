/* What cephmark.rados offers other C modules: the librados handle behind a Lua pool
 * handle, so that modules layered on a pool (cephmark.rbd) take `cluster:pool(name)`
 * objects as arguments. */
#ifndef CEPHMARK_RADOS_LUA_H
#define CEPHMARK_RADOS_LUA_H

#include <lua.h>
#include <rados/librados.h>

/* The pool handle at `arg` (a cephmark.rados.pool); raises an argument error when it is
 * something else or closed. The ioctx stays valid while the pool handle is alive: keep a
 * reference to it (e.g. as a user value) for as long as the ioctx is used. */
rados_ioctx_t cm_rados_check_pool(lua_State *L, int arg);

/* Keeps the pool's librados handles (its ioctx and its cluster connection) alive until
 * cm_rados_pool_release, even if the script closes the pool or the cluster first: what an
 * open rbd image needs. Returns a token for the release. */
void *cm_rados_pool_retain(lua_State *L, int arg);
void cm_rados_pool_release(void *token);

#endif
