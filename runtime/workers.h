/* Scripted workers: N Lua coroutines driven by the op engine, one per slot. Inside a
 * worker, blocking-style calls of the I/O modules (pool:write, image:read, conn:get,
 * file:read, sock:send, ...) submit their request asynchronously through the module's
 * engine target and yield; the engine resumes the coroutine when the request completes, so
 * latency and throughput are measured exactly as for native phases.
 *
 * A module makes a call worker-aware in four steps:
 *   struct cm_op *op = cm_worker_current(L);        NULL: not in a worker, run blocking
 *   struct cm_worker_target *t = cm_worker_target_find(L, handle);
 *   if (!t) t = cm_worker_target_attach(L, arg, handle, &ops, instance, release);
 *   struct cm_request request = {.verb = ..., ...};
 *   return cm_worker_submit(L, t, &request, continuation, context);
 * The instance is one of the module's engine targets (its ops with submit_request, see
 * engine.h), made for this run on the handle's first use in a worker; the run drives its
 * poll, next_deadline and wait_fd beside its own, and releases it when the run ends. The
 * continuation runs on the engine's loop thread when the coroutine is resumed, reads
 * cm_worker_result(op) and cm_worker_request(op) and pushes the call's results. */
#ifndef CEPHMARK_WORKERS_H
#define CEPHMARK_WORKERS_H

#include "engine.h"

#include <lua.h>
#include <stddef.h>

/* The op of the worker running on L, or NULL when L is not a worker coroutine. */
struct cm_op *cm_worker_current(lua_State *L);

/* The target the running worker phase keeps for `key` (a module's handle), or NULL when
 * none was attached yet. L must be a worker (cm_worker_current(L) != NULL). */
struct cm_worker_target *cm_worker_target_find(lua_State *L, const void *key);

/* Attaches a target instance to the running worker phase for `key`, keeping the Lua value
 * at `handle` (the module's handle) alive until the phase ends; then release(instance)
 * runs. Returns the attachment, or NULL when out of memory (release has run then). */
struct cm_worker_target *cm_worker_target_attach(lua_State *L, int handle, const void *key,
                                                 const struct cm_target_ops *ops, void *instance,
                                                 void (*release)(void *instance));

/* The instance given to cm_worker_target_attach. */
void *cm_worker_target_instance(const struct cm_worker_target *target);

/* Submits a copy of `request` through the attached target's submit_request and yields the
 * worker until it completes; then k(L, LUA_YIELD, context) runs. A request that fails at
 * once is accounted as a failed op and completes at once. */
int cm_worker_submit(lua_State *L, struct cm_worker_target *target,
                     const struct cm_request *request, lua_KFunction k, lua_KContext context);

/* In a continuation: the completed request, with the target's outputs. */
const struct cm_request *cm_worker_request(struct cm_op *op);

/* Per-slot scratch space for the module that submits the op (a completion handle, a read
 * buffer), grown to at least `size` bytes and kept for the slot's life; NULL if out of
 * memory. Zeroed when first allocated. */
void *cm_worker_scratch(struct cm_op *op, size_t size);

/* In a continuation: the completed op's result (>= 0 success, < 0 -errno). */
int64_t cm_worker_result(struct cm_op *op);

int luaopen_cephmark_workers(lua_State *L);

#endif
