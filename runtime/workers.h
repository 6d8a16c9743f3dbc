/* Scripted workers: N Lua coroutines driven by the op engine, one per slot. Inside a
 * worker, blocking-style calls of the I/O modules (pool:write, pool:read, ...) submit
 * their op asynchronously and yield; the engine resumes the coroutine when the op
 * completes, so latency and throughput are measured exactly as for native phases.
 *
 * A module makes a call worker-aware in three steps:
 *   struct cm_op *op = cm_worker_current(L);      NULL: not in a worker, run blocking
 *   ...set op->kind and op->length, cm_worker_started(op), submit the async op whose
 *      completion calls cm_engine_complete(op, result)...
 *   return cm_worker_yield(L, continuation, context);
 * The continuation runs on the engine's loop thread when the coroutine is resumed, reads
 * cm_worker_result(op) (and the module's per-slot state from cm_worker_scratch) and pushes the
 * call's results. */
#ifndef CEPHMARK_WORKERS_H
#define CEPHMARK_WORKERS_H

#include "engine.h"

#include <lua.h>
#include <stddef.h>

/* The op of the worker running on L, or NULL when L is not a worker coroutine. */
struct cm_op *cm_worker_current(lua_State *L);

/* Marks the op's real start: the time between resuming the worker and its submission is
 * the script's own, not the op's. Call right before submitting. */
void cm_worker_started(struct cm_op *op);

/* Per-slot scratch space for the module that submits the op (a completion handle, a read
 * buffer), grown to at least `size` bytes and kept for the slot's life; NULL if out of
 * memory. Zeroed when first allocated. */
void *cm_worker_scratch(struct cm_op *op, size_t size);

/* In a continuation: the completed op's result (>= 0 success, < 0 -errno). */
int64_t cm_worker_result(struct cm_op *op);

/* Yields the worker until its op completes; then k(L, LUA_YIELD, context) runs. */
int cm_worker_yield(lua_State *L, lua_KFunction k, lua_KContext context);

int luaopen_cephmark_workers(lua_State *L);

#endif
