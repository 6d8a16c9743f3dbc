/* Scripted workers on the op engine; see workers.h.
 *
 * Each engine slot owns one coroutine. The slot's submit resumes it: the first time with
 * fn(worker), later with nothing (the pending call's continuation pushes the results).
 * The coroutine runs script code until a worker-aware call submits an op and yields
 * (submit returns 0: op in flight), until fn returns (the slot retires), or until it
 * raises (the run stops, the error and that worker's traceback are kept and raised once
 * every op has drained). A coroutine finds its slot through its thread's extra space,
 * which is NULL in every thread that is not a worker.
 *
 * A worker that never yields would keep the loop inside lua_resume for ever: each
 * resumption arms the watchdog (interrupt.h) with the run's stop time, so the worker is
 * stopped there (the slot retires and the result counts it in stopped_at_deadline), and on
 * an interrupt (the run ends as interrupted, as with any other target).
 *
 * The modules' requests go through engine targets attached to the run (one per handle,
 * made on first use): their completions may come from library threads (librados) or on
 * the loop thread through the target's poll (librbd's event fd, HTTP, files, sockets), so
 * the workers target fans its own poll, next_deadline and wait_fd out to every attached
 * target, the wait fd being an epoll set over theirs. */
#include "workers.h"
#include "bench_lua.h"
#include "engine_lua.h"
#include "interrupt.h"
#include "registry.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define WORKER_TYPE "cephmark.worker"

struct worker_run;

/* A module's target instance attached to the run for one handle (workers.h). */
struct cm_worker_target {
    const void *key;
    const struct cm_target_ops *ops;
    void *instance;
    void (*release)(void *instance);
    int handle_ref; /* keeps the module's handle alive while the instance uses it */
    int watched_fd; /* the target's wait fd in the run's epoll set, -1 if none */
    struct worker_run *run;
    struct cm_worker_target *next;
};

struct worker_slot {
    struct worker_run *run;
    lua_State *thread;
    int thread_ref; /* keeps the coroutine alive */
    int worker_ref; /* the `w` table passed to fn */
    bool started;
    bool submitted; /* set by worker_yield: the yield carries an op */
    int64_t result; /* the completed op's result, kept for the continuation (the engine
                     * resets op->result before resuming the worker) */
    struct cm_op *op;
    void *scratch;
    size_t scratch_size;
    struct cm_request request;        /* the request in flight or just completed */
    struct cm_worker_target *pending; /* whose complete_request the request awaits */
};

struct worker_run {
    lua_State *L;
    int fn_ref;
    unsigned n;
    struct worker_slot *slots;
    int error_ref; /* the first worker error (message with traceback), LUA_NOREF if none */
    bool stop_on_interrupt;
    unsigned stopped_at_deadline;     /* workers stopped at the stop time without yielding */
    unsigned first_stopped;           /* the first of them (worker id), 0 if none */
    struct cm_worker_target *targets; /* attached to the run, newest first */
    int epoll_fd;                     /* over the targets' wait fds; -1 until one has one */
};

static struct worker_slot **extra_space(lua_State *thread)
{
    return (struct worker_slot **)lua_getextraspace(thread);
}

struct cm_op *cm_worker_current(lua_State *L)
{
    struct worker_slot *slot = *extra_space(L);
    return slot && slot->thread == L ? slot->op : NULL;
}

/* Marks the op's real start: the time between resuming the worker and its submission is
 * the script's own, not the op's. */
static void worker_started(struct cm_op *op)
{
    uint64_t now = cm_now_ns();
    if (op->intended_ns == op->start_ns) /* closed loop: measure from the submission */
        op->intended_ns = now;
    op->start_ns = now;
}

void *cm_worker_scratch(struct cm_op *op, size_t size)
{
    struct worker_slot *slot = op->target_slot;
    if (slot->scratch_size < size) {
        void *grown = realloc(slot->scratch, size);
        if (!grown)
            return NULL;
        memset((char *)grown + slot->scratch_size, 0, size - slot->scratch_size);
        slot->scratch = grown;
        slot->scratch_size = size;
    }
    return slot->scratch;
}

/* Yields the worker until its op completes; then k(L, LUA_YIELD, context) runs. */
static int worker_yield(lua_State *L, lua_KFunction k, lua_KContext context)
{
    struct worker_slot *slot = *extra_space(L);
    slot->submitted = true;
    return lua_yieldk(L, 0, context, k);
}

struct cm_worker_target *cm_worker_target_find(lua_State *L, const void *key)
{
    struct worker_slot *slot = *extra_space(L);
    for (struct cm_worker_target *target = slot->run->targets; target; target = target->next)
        if (target->key == key)
            return target;
    return NULL;
}

struct cm_worker_target *cm_worker_target_attach(lua_State *L, int handle, const void *key,
                                                 const struct cm_target_ops *ops, void *instance,
                                                 void (*release)(void *instance))
{
    struct worker_slot *slot = *extra_space(L);
    struct cm_worker_target *target = calloc(1, sizeof *target);
    if (!target) {
        release(instance);
        return NULL;
    }
    target->key = key;
    target->ops = ops;
    target->instance = instance;
    target->release = release;
    target->watched_fd = -1;
    target->run = slot->run;
    lua_pushvalue(L, handle);
    target->handle_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    target->next = slot->run->targets;
    slot->run->targets = target;
    return target;
}

void *cm_worker_target_instance(const struct cm_worker_target *target)
{
    return target->instance;
}

/* The kind and length a request moves, before the target says more. */
static void request_accounting(struct cm_op *op, const struct cm_request *request)
{
    switch ((enum cm_request_verb)request->verb) {
    case CM_REQUEST_READ:
    case CM_REQUEST_RECEIVE:
        op->kind = CM_OP_READ;
        op->length = request->length;
        break;
    case CM_REQUEST_WRITE:
    case CM_REQUEST_WRITE_FULL:
    case CM_REQUEST_SEND:
        op->kind = CM_OP_WRITE;
        op->length = request->data_length;
        break;
    case CM_REQUEST_REMOVE:
        op->kind = CM_OP_REMOVE;
        op->length = 0;
        break;
    case CM_REQUEST_EXCHANGE:
        op->kind = CM_OP_OTHER;
        op->length = request->data_length + request->length;
        break;
    case CM_REQUEST_STAT:
    default:
        op->kind = CM_OP_STAT;
        op->length = 0;
        break;
    }
}

int cm_worker_submit(lua_State *L, struct cm_worker_target *target,
                     const struct cm_request *request, lua_KFunction k, lua_KContext context)
{
    struct worker_slot *slot = *extra_space(L);
    struct cm_op *op = slot->op;
    slot->request = *request;
    slot->request.size = 0;
    slot->request.mtime = 0;
    slot->request.status = 0;
    slot->request.reply = NULL;
    slot->request.reply_length = 0;
    slot->request.message[0] = '\0';
    request_accounting(op, &slot->request);
    worker_started(op);
    int rc = target->ops->submit_request(target->instance, op, &slot->request);
    if (rc < 0) {
        slot->pending = NULL; /* nothing in flight: no complete_request */
        cm_engine_complete(op, rc);
    } else {
        slot->pending = target;
    }
    return worker_yield(L, k, context);
}

const struct cm_request *cm_worker_request(struct cm_op *op)
{
    struct worker_slot *slot = op->target_slot;
    return &slot->request;
}

static int worker_slot_init(void *self, struct cm_op *op)
{
    struct worker_run *run = self;
    struct worker_slot *slot = &run->slots[op->slot];
    lua_State *L = run->L;
    slot->run = run;
    slot->op = op;
    slot->thread = lua_newthread(L);
    slot->thread_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    *extra_space(slot->thread) = slot;
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, op->slot + 1);
    lua_setfield(L, -2, "id");
    luaL_setmetatable(L, WORKER_TYPE);
    slot->worker_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    op->target_slot = slot;
    return 0;
}

static void worker_slot_fini(void *self, struct cm_op *op)
{
    struct worker_run *run = self;
    struct worker_slot *slot = op->target_slot;
    if (!slot)
        return;
    *extra_space(slot->thread) = NULL; /* a suspended worker can never submit again */
    luaL_unref(run->L, LUA_REGISTRYINDEX, slot->thread_ref);
    luaL_unref(run->L, LUA_REGISTRYINDEX, slot->worker_ref);
    free(slot->scratch);
    memset(slot, 0, sizeof *slot);
}

/* Keeps the first worker error with its own traceback, for raising after the drain. */
static void keep_error(struct worker_run *run, struct worker_slot *slot, int status)
{
    if (run->error_ref != LUA_NOREF)
        return;
    lua_State *L = run->L;
    const char *message = lua_tostring(slot->thread, -1);
    if (status == LUA_ERRRUN && message) {
        luaL_traceback(L, slot->thread, message, 0);
        lua_pushfstring(L, "worker %d: %s", (int)slot->op->slot + 1, lua_tostring(L, -1));
        lua_remove(L, -2);
    } else {
        lua_xmove(slot->thread, L, 1); /* an error object (e.g. the interrupt): keep it */
    }
    run->error_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

static int worker_submit(void *self, struct cm_op *op)
{
    struct worker_run *run = self;
    struct worker_slot *slot = op->target_slot;
    if (run->error_ref != LUA_NOREF)
        return CM_TARGET_DONE;
    int nargs = 0, nresults = 0;
    if (!slot->started) {
        slot->started = true;
        lua_rawgeti(slot->thread, LUA_REGISTRYINDEX, run->fn_ref);
        lua_rawgeti(slot->thread, LUA_REGISTRYINDEX, slot->worker_ref);
        nargs = 1;
    }
    op->kind = CM_OP_OTHER;
    op->length = 0;
    slot->submitted = false;
    struct cm_interrupt_arming previous =
        cm_interrupt_arm(cm_engine_stop_time(op), run->stop_on_interrupt);
    int status = lua_resume(slot->thread, run->L, nargs, &nresults);
    cm_interrupt_disarm(previous);
    if (status == LUA_YIELD) {
        lua_pop(slot->thread, nresults);
        if (slot->submitted)
            return 0; /* a worker-aware call submitted the op */
        lua_pushfstring(slot->thread,
                        "worker %d yielded without an op: coroutine.yield cannot be used "
                        "directly in a worker",
                        (int)op->slot + 1);
        keep_error(run, slot, LUA_ERRERR);
        return CM_TARGET_DONE;
    }
    if (status == LUA_OK) {
        lua_pop(slot->thread, nresults);
        return CM_TARGET_SLOT_DONE;
    }
    if (cm_interrupt_is_deadline(slot->thread, -1)) {
        lua_pop(slot->thread, 1);
        if (run->stopped_at_deadline++ == 0)
            run->first_stopped = op->slot + 1;
        return CM_TARGET_SLOT_DONE;
    }
    if (cm_interrupt_is_error(slot->thread, -1) && cm_interrupted()) {
        /* not an error of the worker's: the engine sees the interrupt and marks the
         * result interrupted, and the phase ends with what it measured */
        lua_pop(slot->thread, 1);
        return CM_TARGET_DONE;
    }
    keep_error(run, slot, status);
    return CM_TARGET_DONE;
}

static void worker_complete(void *self, struct cm_op *op)
{
    (void)self;
    struct worker_slot *slot = op->target_slot;
    struct cm_worker_target *target = slot->pending;
    slot->pending = NULL;
    if (target && target->ops->complete_request)
        target->ops->complete_request(target->instance, op, &slot->request);
    slot->result = op->result; /* the continuation turns it into Lua values when resumed */
}

/* ---- the attached targets' loop hooks, fanned out ------------------------------------- */

static void worker_poll(void *self, uint64_t now_ns)
{
    struct worker_run *run = self;
    for (struct cm_worker_target *target = run->targets; target; target = target->next)
        if (target->ops->poll)
            target->ops->poll(target->instance, now_ns);
}

static uint64_t worker_next_deadline(void *self)
{
    struct worker_run *run = self;
    uint64_t earliest = UINT64_MAX;
    for (struct cm_worker_target *target = run->targets; target; target = target->next) {
        if (!target->ops->next_deadline)
            continue;
        uint64_t deadline = target->ops->next_deadline(target->instance);
        if (deadline < earliest)
            earliest = deadline;
    }
    return earliest;
}

/* One epoll set over the attached targets' wait fds, kept up to date here: a target may
 * get its fd late (a connection made on first use) or change it. */
static int worker_wait_fd(void *self)
{
    struct worker_run *run = self;
    for (struct cm_worker_target *target = run->targets; target; target = target->next) {
        int fd = target->ops->wait_fd ? target->ops->wait_fd(target->instance) : -1;
        if (fd == target->watched_fd)
            continue;
        if (run->epoll_fd < 0 && fd >= 0) {
            run->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
            if (run->epoll_fd < 0)
                return -1; /* the loop still polls every turn, at least once a second */
        }
        if (target->watched_fd >= 0)
            epoll_ctl(run->epoll_fd, EPOLL_CTL_DEL, target->watched_fd, NULL);
        target->watched_fd = -1;
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = target};
        if (fd >= 0 && epoll_ctl(run->epoll_fd, EPOLL_CTL_ADD, fd, &event) == 0)
            target->watched_fd = fd;
    }
    return run->epoll_fd;
}

/* After the run: every attached target is released, newest first. */
static void release_targets(struct worker_run *run)
{
    while (run->targets) {
        struct cm_worker_target *target = run->targets;
        run->targets = target->next;
        target->release(target->instance);
        luaL_unref(run->L, LUA_REGISTRYINDEX, target->handle_ref);
        free(target);
    }
    if (run->epoll_fd >= 0)
        close(run->epoll_fd);
    run->epoll_fd = -1;
}

int64_t cm_worker_result(struct cm_op *op)
{
    struct worker_slot *slot = op->target_slot;
    return slot->result;
}

static const struct cm_target_ops worker_target_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "workers",
    .slot_init = worker_slot_init,
    .slot_fini = worker_slot_fini,
    .submit = worker_submit,
    .complete = worker_complete,
    .next_deadline = worker_next_deadline,
    .poll = worker_poll,
    .wait_fd = worker_wait_fd,
};

/* w:op([bytes]): a no-op that completes at once, through the engine like any op: the
 * scripted path's own cost, measured on the null target. */
static int worker_null_continue(lua_State *L, int status, lua_KContext context)
{
    (void)status;
    (void)context;
    lua_pushboolean(L, 1);
    return 1;
}

static int worker_op(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    struct cm_op *op = cm_worker_current(L);
    if (!op)
        return luaL_error(L, "w:op() can only be called inside a worker");
    lua_Integer bytes = luaL_optinteger(L, 2, 0);
    op->kind = CM_OP_OTHER;
    op->length = bytes > 0 ? (uint64_t)bytes : 0;
    worker_started(op);
    cm_engine_complete(op, 0);
    return worker_yield(L, worker_null_continue, 0);
}

/* workers.run's own options, beside the engine's (also published as workers.run_options) */
static const char *const workers_run_options[] = {"fn", "n", NULL};

/* workers.run{n=, fn=function(w) ... end, seconds=, ops=, bytes=, rate=, warmup=,
 *   on_second=} -> result table (as pool:bench) */
static int workers_run(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    cm_lua_check_options(L, 1, "workers", workers_run_options, true);
    lua_Integer n = cm_lua_opt_integer(L, 1, "n", 0, 1, 65536, "workers");
    if (n == 0)
        return luaL_error(L, "workers: n (the number of workers) is required");
    if (lua_getfield(L, 1, "fn") != LUA_TFUNCTION)
        return luaL_error(L, "workers: fn must be a function(w), got a %s", luaL_typename(L, -1));
    lua_pop(L, 1);
    /* one slot per worker; the caller's table is only read */
    struct cm_engine_config config;
    struct cm_engine_lua bridge;
    struct cm_bench_defaults defaults = {.threads = (unsigned)n};
    cm_bench_engine_config(L, 1, "workers", &defaults, &config, &bridge);
    config.depth = (unsigned)n;

    struct worker_run *run = lua_newuserdatauv(L, sizeof *run, 0);
    memset(run, 0, sizeof *run);
    run->L = L;
    run->n = (unsigned)n;
    run->error_ref = LUA_NOREF;
    run->epoll_fd = -1;
    run->stop_on_interrupt = !config.ignore_interrupt;
    run->slots = lua_newuserdatauv(L, sizeof *run->slots * (size_t)n, 0);
    memset(run->slots, 0, sizeof *run->slots * (size_t)n);
    lua_getfield(L, 1, "fn");
    run->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);

    struct cm_engine_result result;
    int rc = cm_engine_run(&config, &worker_target_ops, run, &result);
    luaL_unref(L, LUA_REGISTRYINDEX, run->fn_ref);
    /* ops the engine abandoned (drain timeout) may still complete into their targets' state:
     * like the engine's own slots, those targets (and the handles under them) are then kept
     * for the life of the process instead of released */
    if (rc < 0 || result.drained)
        release_targets(run);
    if (rc < 0) {
        cm_engine_lua_finish(&bridge);
        return luaL_error(L, "workers: cannot start: %s", strerror(-rc));
    }
    if (run->error_ref != LUA_NOREF) {
        cm_engine_result_free(&result);
        cm_engine_lua_finish(&bridge);
        lua_rawgeti(L, LUA_REGISTRYINDEX, run->error_ref);
        luaL_unref(L, LUA_REGISTRYINDEX, run->error_ref);
        return lua_error(L);
    }
    cm_engine_lua_push_result(L, &result, &config);
    cm_engine_result_free(&result);
    lua_pushliteral(L, "workers");
    lua_setfield(L, -2, "op");
    if (run->stopped_at_deadline) {
        lua_pushinteger(L, run->stopped_at_deadline);
        lua_setfield(L, -2, "stopped_at_deadline");
        lua_pushfstring(L,
                        "%d of %d workers ran past the phase's end without yielding and were "
                        "stopped there (worker %d first)",
                        (int)run->stopped_at_deadline, (int)run->n, (int)run->first_stopped);
        lua_setfield(L, -2, "warning");
    }
    cm_engine_lua_finish(&bridge);
    return 1;
}

int luaopen_cephmark_workers(lua_State *L)
{
    static const luaL_Reg worker_methods[] = {
        {"op", worker_op},
        {NULL, NULL},
    };
    static const luaL_Reg functions[] = {
        {"run", workers_run},
        {NULL, NULL},
    };
    luaL_newmetatable(L, WORKER_TYPE);
    lua_newtable(L);
    luaL_setfuncs(L, worker_methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_newlib(L, functions);
    cm_lua_push_option_names(L, workers_run_options, true);
    lua_setfield(L, -2, "run_options");
    return 1;
}
