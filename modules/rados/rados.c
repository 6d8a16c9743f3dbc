/* The `cephmark.rados` Lua module: cluster connections, pools and object I/O over
 * librados, and mon commands returning parsed JSON. Pool policy (create, delete, EC
 * profiles, placement checks) is written in Lua in stdlib/cephmark/rados/pools.lua and
 * installed on the cluster type when this module loads. */
#include "bench_lua.h"
#include "distrib_lua.h"
#include "exitcode.h"
#include "interrupt.h"
#include "json.h"
#include "lstate.h"
#include "rados_slot.h"
#include "rados_client.h"
#include "rados_osd_command.h"
#include "rados_owner.h"
#include "registry.h"
#include "units.h"
#include "workers.h"

#include <errno.h>
#include <inttypes.h>
#include <lauxlib.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CLUSTER_TYPE "cephmark.rados.cluster"
#define POOL_TYPE    "cephmark.rados.pool"

/* Handles close in any order the script likes: a cluster or pool closed while something
 * still uses its librados handle (a pool, an rbd image) is only marked closed, and the
 * handle is released when its last user lets go. */
struct cluster_handle {
    rados_t cluster; /* NULL once shut down */
    double timeout;  /* the bound of calls made outside the engine (connect's timeout) */
    unsigned users;  /* open pools */
    bool closed;     /* closed by the script: no new use */
    lua_Integer mon_commands, osd_commands; /* sent through this handle's Lua calls */
};

/* A watch this process keeps on an owner object (rados_owner.h) while the pool is open. */
struct owner_watch_entry {
    struct cm_owner_watch *watch;
    struct owner_watch_entry *next;
    char key[320]; /* namespace, '/', object */
};

struct pool_handle {
    rados_ioctx_t ioctx; /* NULL once destroyed */
    struct cluster_handle *cluster;
    struct owner_watch_entry *watches;
    unsigned users; /* rbd images and other retainers (rados_lua.h) */
    bool closed;
};

static int record_ioctx(struct pool_handle *pool, const char *nspace, rados_ioctx_t *io);
static void record_ioctx_done(struct pool_handle *pool, rados_ioctx_t io);

static struct cluster_handle *check_cluster(lua_State *L, int arg)
{
    struct cluster_handle *handle = luaL_checkudata(L, arg, CLUSTER_TYPE);
    if (handle->cluster == NULL || handle->closed)
        luaL_argerror(L, arg, "cluster connection is closed");
    return handle;
}

static struct pool_handle *check_pool(lua_State *L, int arg)
{
    struct pool_handle *handle = luaL_checkudata(L, arg, POOL_TYPE);
    if (handle->ioctx == NULL || handle->closed)
        luaL_argerror(L, arg, "pool handle is closed");
    return handle;
}

/* Reads options[key], falling back to rados.defaults[key] (set by `cephmark run` from
 * -c/--id/--keyring/--timeout; it may start the local cluster on first use). */
static int get_option(lua_State *L, int table, const char *key)
{
    if (lua_getfield(L, table, key) != LUA_TNIL)
        return 1;
    lua_pop(L, 1);
    if (lua_getfield(L, lua_upvalueindex(1), "defaults") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_pushnil(L);
        return 1;
    }
    lua_getfield(L, -1, key);
    lua_remove(L, -2);
    if (!lua_isnil(L, -1)) { /* keep the default alive while connect uses it */
        lua_pushvalue(L, -1);
        lua_setfield(L, table, key);
    }
    return 1;
}

static const char *opt_string_field(lua_State *L, int table, const char *key)
{
    get_option(L, table, key);
    const char *value = NULL;
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "connect: option '%s' must be a string, got %s", key,
                       luaL_typename(L, -1));
        value = lua_tostring(L, -1);
    }
    lua_pop(L, 1); /* the options table keeps the string alive */
    return value;
}

static double opt_number_field(lua_State *L, int table, const char *key, double fallback)
{
    get_option(L, table, key);
    double value = fallback;
    if (!lua_isnil(L, -1)) {
        if (!lua_isnumber(L, -1))
            luaL_error(L, "connect: option '%s' must be a number of seconds, got %s", key,
                       luaL_typename(L, -1));
        value = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    return value;
}

/* rados.connect{conf=, id=, keyring=, timeout=, osd_timeout=, options={k=v}}
 *   -> cluster | nil, message, code */
static int rados_lua_connect(lua_State *L)
{
    /* work on a copy: defaults get filled in, and the caller's table stays untouched */
    if (!lua_isnoneornil(L, 1))
        luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_newtable(L);
    if (lua_istable(L, 1)) {
        lua_pushnil(L);
        while (lua_next(L, 1)) {
            lua_pushvalue(L, -2);
            lua_insert(L, -2);
            lua_settable(L, -4);
        }
    }
    lua_replace(L, 1);
    lua_settop(L, 1);
    struct cm_rados_connect_options options = {
        .conf = opt_string_field(L, 1, "conf"),
        .id = opt_string_field(L, 1, "id"),
        .keyring = opt_string_field(L, 1, "keyring"),
        .timeout = opt_number_field(L, 1, "timeout", 10),
        .osd_timeout = opt_number_field(L, 1, "osd_timeout", 0),
    };
    if (options.timeout <= 0)
        return luaL_error(L, "connect: timeout must be positive, got %f", options.timeout);

    struct cm_rados_config_option extra[64];
    lua_getfield(L, 1, "options");
    if (lua_istable(L, -1)) {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (options.n_options == sizeof extra / sizeof extra[0])
                return luaL_error(L, "connect: at most 64 extra options");
            if (lua_type(L, -2) != LUA_TSTRING)
                return luaL_error(L, "connect: option names must be strings");
            lua_pushvalue(L, -1);
            extra[options.n_options].key = lua_tostring(L, -3);
            extra[options.n_options].value = luaL_tolstring(L, -1, NULL);
            /* keep the converted value alive in the options table itself */
            lua_pushvalue(L, -4);
            lua_pushvalue(L, -2);
            lua_settable(L, -6);
            lua_pop(L, 3);
            options.n_options++;
        }
    }
    lua_pop(L, 1);
    options.options = extra;

    struct cluster_handle *handle = lua_newuserdatauv(L, sizeof *handle, 0);
    memset(handle, 0, sizeof *handle);
    luaL_setmetatable(L, CLUSTER_TYPE);
    char error[512];
    handle->timeout = options.timeout;
    int rc = cm_rados_connect(&options, &handle->cluster, error, sizeof error);
    if (rc < 0) {
        lua_pushnil(L);
        lua_pushstring(L, error);
        lua_pushinteger(L, rc);
        return 3;
    }
    return 1;
}

static void cluster_release(struct cluster_handle *handle)
{
    if (handle->cluster && handle->closed && handle->users == 0) {
        rados_shutdown(handle->cluster);
        handle->cluster = NULL;
    }
}

static int cluster_close(lua_State *L)
{
    struct cluster_handle *handle = luaL_checkudata(L, 1, CLUSTER_TYPE);
    handle->closed = true;
    cluster_release(handle);
    return 0;
}

static int cluster_tostring(lua_State *L)
{
    struct cluster_handle *handle = luaL_checkudata(L, 1, CLUSTER_TYPE);
    lua_pushfstring(L, "rados cluster (%s)",
                    handle->cluster && !handle->closed ? "connected" : "closed");
    return 1;
}

static int cluster_fsid(lua_State *L)
{
    struct cluster_handle *handle = check_cluster(L, 1);
    char fsid[64];
    int rc = rados_cluster_fsid(handle->cluster, fsid, sizeof fsid);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, "fsid");
    lua_pushstring(L, fsid);
    return 1;
}

/* cluster:command_counts() -> mon, osd: the commands sent through mon_command and
 * osd_commands on this handle so far (one per OSD and command), so that a run can say what
 * its readings of the cluster cost around each phase. */
static int cluster_command_counts(lua_State *L)
{
    struct cluster_handle *handle = luaL_checkudata(L, 1, CLUSTER_TYPE);
    lua_pushinteger(L, handle->mon_commands);
    lua_pushinteger(L, handle->osd_commands);
    return 2;
}

/* The command at stack index 2 as JSON text, pushed: a table is encoded from a copy with
 * format=json unless the caller chose one (the caller's table is left as it was); a string
 * is taken as it is. */
static const char *push_mon_command_text(lua_State *L)
{
    if (!lua_istable(L, 2))
        return lua_pushstring(L, luaL_checkstring(L, 2));
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
    if (lua_getfield(L, -1, "format") == LUA_TNIL) {
        lua_pushliteral(L, "json");
        lua_setfield(L, -3, "format");
    }
    lua_pop(L, 1);
    char err[512];
    if (cm_json_encode(L, -1, 0, NULL, err, sizeof err) != 0)
        luaL_error(L, "%s", err);
    lua_remove(L, -2);
    return lua_tostring(L, -1);
}

/* cluster:mon_command(command [, input]) -> result, status_text | nil, message, code
 * `command` is a table (encoded to JSON, format=json added) or a JSON string. A JSON
 * answer comes back parsed into Lua tables; any other answer as a string. */
static int cluster_mon_command(lua_State *L)
{
    struct cluster_handle *handle = check_cluster(L, 1);
    size_t input_len = 0;
    const char *input = luaL_optlstring(L, 3, "", &input_len);
    const char *commands[1] = {push_mon_command_text(L)};
    char *out = NULL, *status = NULL;
    size_t out_len = 0, status_len = 0;
    handle->mon_commands++;
    int rc = rados_mon_command(handle->cluster, commands, 1, input, input_len, &out, &out_len,
                               &status, &status_len);
    if (rc < 0) {
        /* the monitor's status text says why (e.g. "pool 'x' does not exist") */
        if (status_len > 0)
            lua_pushlstring(L, status, status_len);
        else
            lua_pushstring(L, strerror(-rc));
        rados_buffer_free(out);
        rados_buffer_free(status);
        return cm_lua_failure(L, rc, lua_tostring(L, -1));
    }
    char err[256];
    if (out_len == 0)
        lua_pushnil(L);
    else if (cm_json_decode(L, out, out_len, err, sizeof err) != 0)
        lua_pushlstring(L, out, out_len); /* not JSON: the text itself */
    lua_pushlstring(L, status ? status : "", status_len);
    rados_buffer_free(out);
    rados_buffer_free(status);
    return 2;
}

/* cluster:osd_commands(osds, commands [, timeout]) -> {[osd] = {texts...} or
 * {error = text, code = -errno}}: each JSON command sent to every OSD in the list, all OSDs
 * in parallel, giving up on an OSD after `timeout` seconds (2 by default; see
 * rados_osd_command.h). The answers come back as text: the caller decodes what it needs. */
static int cluster_osd_commands(lua_State *L)
{
    struct cluster_handle *handle = check_cluster(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    double timeout = luaL_optnumber(L, 4, 2);
    if (!(timeout > 0))
        return luaL_argerror(L, 4, "timeout must be a positive number of seconds");
    lua_Integer n_osds = luaL_len(L, 2), n_commands = luaL_len(L, 3);
    if (n_commands < 1 || n_commands > CM_OSD_COMMANDS_MAX)
        return luaL_argerror(L, 3, "expected 1 to 4 commands");
    const char *commands[CM_OSD_COMMANDS_MAX];
    for (lua_Integer i = 1; i <= n_commands; i++) {
        lua_geti(L, 3, i);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, 3, "commands must be JSON strings");
        commands[i - 1] = lua_tostring(L, -1); /* kept alive by the table */
        lua_pop(L, 1);
    }
    int *osds = lua_newuserdatauv(L, (size_t)(n_osds ? n_osds : 1) * sizeof *osds, 0);
    for (lua_Integer i = 1; i <= n_osds; i++) {
        lua_geti(L, 2, i);
        int isnum = 0;
        lua_Integer id = lua_tointegerx(L, -1, &isnum);
        if (!isnum || id < 0 || id > 0x7fffffff)
            return luaL_argerror(L, 2, "OSD ids must be integers >= 0");
        osds[i - 1] = (int)id;
        lua_pop(L, 1);
    }
    struct cm_osd_answer *answers =
        lua_newuserdatauv(L, (size_t)(n_osds ? n_osds : 1) * sizeof *answers, 0);
    handle->osd_commands += n_osds * n_commands;
    int rc = cm_rados_osd_commands(handle->cluster, osds, (size_t)n_osds, commands,
                                   (size_t)n_commands, cm_rados_bound(timeout), answers);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, "osd commands");
    lua_createtable(L, 0, (int)n_osds);
    for (lua_Integer i = 0; i < n_osds; i++) {
        struct cm_osd_answer *answer = &answers[i];
        lua_createtable(L, (int)n_commands, 2);
        if (answer->rc < 0) {
            if (answer->status_len > 0)
                lua_pushlstring(L, answer->status, answer->status_len);
            else
                lua_pushstring(L, strerror(-answer->rc));
            lua_setfield(L, -2, "error");
            lua_pushinteger(L, answer->rc);
            lua_setfield(L, -2, "code");
        } else {
            for (lua_Integer c = 0; c < n_commands; c++) {
                lua_pushlstring(L, answer->out[c] ? answer->out[c] : "", answer->out_len[c]);
                lua_rawseti(L, -2, c + 1);
            }
        }
        lua_pushnumber(L, answer->seconds);
        lua_setfield(L, -2, "seconds");
        lua_rawseti(L, -2, answer->osd);
    }
    cm_osd_answers_free(answers, (size_t)n_osds);
    return 1;
}

/* cluster:conf_get(name) -> the client's value of a config option, as a string */
static int cluster_conf_get(lua_State *L)
{
    struct cluster_handle *handle = check_cluster(L, 1);
    const char *name = luaL_checkstring(L, 2);
    char value[4096];
    int rc = rados_conf_get(handle->cluster, name, value, sizeof value);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, lua_pushfstring(L, "config option %s", name));
    lua_pushstring(L, value);
    return 1;
}

/* cluster:wait_for_latest_osdmap(): after the mons changed pools, the client's view must
 * catch up before pool lookups see the change. */
static int cluster_wait_for_latest_osdmap(lua_State *L)
{
    struct cluster_handle *handle = check_cluster(L, 1);
    int rc = rados_wait_for_latest_osdmap(handle->cluster);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, "wait for the latest osdmap");
    lua_pushboolean(L, 1);
    return 1;
}

static int cluster_pool_exists(lua_State *L)
{
    struct cluster_handle *handle = check_cluster(L, 1);
    int64_t id = rados_pool_lookup(handle->cluster, luaL_checkstring(L, 2));
    lua_pushboolean(L, id >= 0);
    return 1;
}

/* cluster:pool(name) -> pool | nil, message, code */
static int cluster_open_pool(lua_State *L)
{
    struct cluster_handle *handle = check_cluster(L, 1);
    const char *name = luaL_checkstring(L, 2);
    struct pool_handle *pool = lua_newuserdatauv(L, sizeof *pool, 1);
    memset(pool, 0, sizeof *pool);
    luaL_setmetatable(L, POOL_TYPE);
    int rc = rados_ioctx_create(handle->cluster, name, &pool->ioctx);
    if (rc < 0) {
        pool->ioctx = NULL;
        lua_pushnil(L);
        if (rc == -ENOENT)
            lua_pushfstring(L, "pool '%s' does not exist", name);
        else
            lua_pushfstring(L, "cannot open pool '%s': %s", name, strerror(-rc));
        lua_pushinteger(L, rc);
        return 3;
    }
    /* the pool keeps its cluster alive, so the cluster is never shut down under it */
    pool->cluster = handle;
    handle->users++;
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static void pool_release(struct pool_handle *pool)
{
    if (pool->ioctx && pool->closed && pool->users == 0) {
        while (pool->watches) {
            struct owner_watch_entry *entry = pool->watches;
            pool->watches = entry->next;
            cm_owner_watch_stop(entry->watch, pool->cluster->timeout);
            free(entry);
        }
        rados_ioctx_destroy(pool->ioctx);
        pool->ioctx = NULL;
        pool->cluster->users--;
        cluster_release(pool->cluster);
    }
}

static int pool_close(lua_State *L)
{
    struct pool_handle *pool = luaL_checkudata(L, 1, POOL_TYPE);
    pool->closed = true;
    pool_release(pool);
    return 0;
}

static int pool_tostring(lua_State *L)
{
    struct pool_handle *pool = luaL_checkudata(L, 1, POOL_TYPE);
    if (pool->ioctx == NULL || pool->closed) {
        lua_pushliteral(L, "rados pool (closed)");
        return 1;
    }
    char name[256];
    int rc = rados_ioctx_get_pool_name(pool->ioctx, name, sizeof name);
    lua_pushfstring(L, "rados pool '%s'", rc < 0 ? "?" : name);
    return 1;
}

static int pool_name(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    char name[256];
    int rc = rados_ioctx_get_pool_name(pool->ioctx, name, sizeof name);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, "pool name");
    lua_pushstring(L, name);
    return 1;
}

/* Inside a scripted worker, the object calls below go through the pool's rados target for
 * the worker phase (its submit_request, see runtime/workers.h) and yield until the op
 * completes. The target is made on the pool's first use in the phase and keeps the pool's
 * librados handles alive until the phase ends. */
struct pool_worker_target {
    struct cm_rados_target target;
    struct pool_handle *pool;
};

static void pool_worker_release(void *instance)
{
    struct pool_worker_target *worker = instance;
    cm_rados_target_fini(&worker->target);
    worker->pool->users--;
    pool_release(worker->pool); /* destroys the ioctx if the script closed the pool meanwhile */
    free(worker);
}

/* The phase's target for the pool at index 1. */
static struct cm_worker_target *pool_worker_target(lua_State *L, struct pool_handle *pool)
{
    struct cm_worker_target *attached = cm_worker_target_find(L, pool);
    if (attached)
        return attached;
    struct pool_worker_target *worker = malloc(sizeof *worker);
    if (!worker) {
        luaL_error(L, "out of memory for a worker's pool target");
        return NULL;
    }
    cm_rados_target_init_requests(&worker->target, pool->ioctx);
    worker->pool = pool;
    pool->users++;
    attached = cm_worker_target_attach(L, 1, pool, &cm_rados_target_ops, &worker->target,
                                       pool_worker_release);
    if (!attached)
        luaL_error(L, "out of memory for a worker's pool target");
    return attached;
}

static int pool_worker_continue(lua_State *L, int status, lua_KContext context)
{
    (void)status;
    (void)context;
    struct cm_op *op = cm_worker_current(L);
    const struct cm_request *request = cm_worker_request(op);
    int64_t result = cm_worker_result(op);
    if (result < 0) {
        const char *verb = request->verb == CM_REQUEST_READ     ? "read"
                           : request->verb == CM_REQUEST_STAT   ? "stat"
                           : request->verb == CM_REQUEST_REMOVE ? "remove"
                                                                : "write";
        return cm_lua_errno_failure(L, (int)result,
                                    lua_pushfstring(L, "%s %s", verb, request->name));
    }
    switch ((enum cm_request_verb)request->verb) {
    case CM_REQUEST_READ:
        lua_pushlstring(L, request->buffer, (size_t)result);
        return 1;
    case CM_REQUEST_STAT:
        lua_pushinteger(L, (lua_Integer)request->size);
        lua_pushinteger(L, (lua_Integer)request->mtime);
        return 2;
    default:
        lua_pushboolean(L, 1);
        return 1;
    }
}

/* Submits a pool call of a worker; the read buffer is the worker's scratch space. */
static int pool_worker_submit(lua_State *L, struct cm_op *op, struct pool_handle *pool,
                              struct cm_request *request)
{
    struct cm_worker_target *target = pool_worker_target(L, pool);
    if (request->verb == CM_REQUEST_READ) {
        request->buffer = cm_worker_scratch(op, request->length ? request->length : 1);
        if (!request->buffer)
            return luaL_error(L, "out of memory for a %I-byte worker read",
                              (lua_Integer)request->length);
    }
    return cm_worker_submit(L, target, request, pool_worker_continue, 0);
}

static uint64_t check_offset(lua_State *L, int arg)
{
    lua_Integer offset = luaL_optinteger(L, arg, 0);
    if (offset < 0)
        luaL_argerror(L, arg, "offset must not be negative");
    return (uint64_t)offset;
}

/* pool:write(name, data [, offset]) -> true | nil, message, code */
static int pool_write(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    size_t len;
    const char *data = luaL_checklstring(L, 3, &len);
    uint64_t offset = check_offset(L, 4);
    struct cm_op *op = cm_worker_current(L);
    if (op)
        return pool_worker_submit(L, op, pool,
                                  &(struct cm_request){.verb = CM_REQUEST_WRITE,
                                                       .name = name,
                                                       .data = data,
                                                       .data_length = len,
                                                       .offset = offset});
    int rc = rados_write(pool->ioctx, name, data, len, offset);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, lua_pushfstring(L, "write %s", name));
    lua_pushboolean(L, 1);
    return 1;
}

/* pool:write_full(name, data) replaces the whole object. */
static int pool_write_full(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    size_t len;
    const char *data = luaL_checklstring(L, 3, &len);
    struct cm_op *op = cm_worker_current(L);
    if (op)
        return pool_worker_submit(
            L, op, pool,
            &(struct cm_request){
                .verb = CM_REQUEST_WRITE_FULL, .name = name, .data = data, .data_length = len});
    int rc = rados_write_full(pool->ioctx, name, data, len);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, lua_pushfstring(L, "write %s", name));
    lua_pushboolean(L, 1);
    return 1;
}

/* pool:stat(name) -> size, mtime | nil, message, code */
static int pool_stat(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    uint64_t size;
    time_t mtime;
    struct cm_op *op = cm_worker_current(L);
    if (op)
        return pool_worker_submit(L, op, pool,
                                  &(struct cm_request){.verb = CM_REQUEST_STAT, .name = name});
    int rc = rados_stat(pool->ioctx, name, &size, &mtime);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, lua_pushfstring(L, "stat %s", name));
    lua_pushinteger(L, (lua_Integer)size);
    lua_pushinteger(L, (lua_Integer)mtime);
    return 2;
}

/* pool:read(name [, length [, offset]]) -> data | nil, message, code
 * Without a length the whole object is read. */
static int pool_read(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    uint64_t offset = check_offset(L, 4);
    lua_Integer length;
    if (lua_isnoneornil(L, 3)) {
        if (cm_worker_current(L))
            return luaL_error(L, "pool:read in a worker needs a length (a stat first would "
                                 "stall every worker)");
        uint64_t size;
        time_t mtime;
        int rc = rados_stat(pool->ioctx, name, &size, &mtime);
        if (rc < 0)
            return cm_lua_errno_failure(L, rc, lua_pushfstring(L, "read %s", name));
        length = size > offset ? (lua_Integer)(size - offset) : 0;
    } else {
        length = luaL_checkinteger(L, 3);
        if (length < 0)
            return luaL_argerror(L, 3, "length must not be negative");
    }
    struct cm_op *op = cm_worker_current(L);
    if (op)
        return pool_worker_submit(
            L, op, pool,
            &(struct cm_request){
                .verb = CM_REQUEST_READ, .name = name, .length = (size_t)length, .offset = offset});
    luaL_Buffer b;
    char *space = luaL_buffinitsize(L, &b, (size_t)length);
    int rc = length > 0 ? rados_read(pool->ioctx, name, space, (size_t)length, offset) : 0;
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, lua_pushfstring(L, "read %s", name));
    luaL_pushresultsize(&b, (size_t)rc);
    return 1;
}

/* pool:remove(name) -> true | nil, message, code */
static int pool_remove(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    struct cm_op *op = cm_worker_current(L);
    if (op)
        return pool_worker_submit(L, op, pool,
                                  &(struct cm_request){.verb = CM_REQUEST_REMOVE, .name = name});
    int rc = rados_remove(pool->ioctx, name);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, lua_pushfstring(L, "remove %s", name));
    lua_pushboolean(L, 1);
    return 1;
}

/* pool:objects([prefix [, namespace]]) -> array of object names (in the default namespace,
 * or the one given). */
static int pool_objects(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    size_t prefix_len = 0;
    const char *prefix = luaL_optlstring(L, 2, "", &prefix_len);
    rados_ioctx_t io;
    rados_list_ctx_t list;
    int rc = record_ioctx(pool, luaL_optstring(L, 3, NULL), &io);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, "list objects");
    rc = rados_nobjects_list_open(io, &list);
    if (rc < 0) {
        record_ioctx_done(pool, io);
        return cm_lua_errno_failure(L, rc, "list objects");
    }
    lua_newtable(L);
    lua_Integer n = 0;
    const char *entry, *key, *nspace;
    while ((rc = rados_nobjects_list_next(list, &entry, &key, &nspace)) == 0) {
        if (strncmp(entry, prefix, prefix_len) != 0)
            continue;
        lua_pushstring(L, entry);
        lua_rawseti(L, -2, ++n);
    }
    rados_nobjects_list_close(list);
    record_ioctx_done(pool, io);
    if (rc != -ENOENT)
        return cm_lua_errno_failure(L, rc, "list objects");
    return 1;
}

/* Small records (owner and metadata objects) go through bounded calls in their own
 * namespace; an ioctx for another namespace is made for the call. */
static int record_ioctx(struct pool_handle *pool, const char *nspace, rados_ioctx_t *io)
{
    if (!nspace || !*nspace) {
        *io = pool->ioctx;
        return 0;
    }
    int rc = rados_ioctx_create2(pool->cluster->cluster, rados_ioctx_get_id(pool->ioctx), io);
    if (rc == 0)
        rados_ioctx_set_namespace(*io, nspace);
    return rc;
}

static void record_ioctx_done(struct pool_handle *pool, rados_ioctx_t io)
{
    if (io != pool->ioctx)
        rados_ioctx_destroy(io);
}

/* A bounded call's failure: SIGINT raises "interrupted"; a call with no answer says so. */
static int push_bounded_failure(lua_State *L, struct pool_handle *pool, int rc, const char *what)
{
    if (rc == -EINTR)
        cm_interrupt_check(L);
    if (rc == -ETIMEDOUT) {
        return cm_lua_failure(L, rc,
                              lua_pushfstring(L, "%s: no answer from the OSDs within %d s", what,
                                              (int)(cm_rados_bound(pool->cluster->timeout) + 0.5)));
    }
    return cm_lua_errno_failure(L, rc, what);
}

/* The bounded write of a small record object (owner, marker), created exclusively or
 * replaced whole; `verb` names the call in a failure. */
static int write_record(lua_State *L, bool exclusive, const char *verb)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    size_t len;
    const char *data = luaL_checklstring(L, 3, &len);
    rados_ioctx_t io;
    int rc = record_ioctx(pool, luaL_optstring(L, 4, NULL), &io);
    if (rc == 0) {
        rc = cm_rados_create(io, name, data, len, exclusive, lua_toboolean(L, 5),
                             pool->cluster->timeout);
        record_ioctx_done(pool, io);
    }
    if (rc < 0)
        return push_bounded_failure(L, pool, rc, lua_pushfstring(L, "%s %s", verb, name));
    lua_pushboolean(L, 1);
    return 1;
}

/* pool:create_exclusive(name, data [, namespace [, full_try]]) -> true | nil, message, code
 * (-17 when the object exists): the atomic claim of an owner or metadata object. */
static int pool_create_exclusive(lua_State *L)
{
    return write_record(L, true, "create");
}

/* pool:put(name, data [, namespace [, full_try]]) -> true | nil, message, code: a bounded
 * write_full */
static int pool_put(lua_State *L)
{
    return write_record(L, false, "write");
}

/* pool:get(name [, namespace]) -> data (at most 64 KiB) | nil, message, code: bounded */
static int pool_get(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    rados_ioctx_t io;
    char *data = NULL;
    int rc = record_ioctx(pool, luaL_optstring(L, 3, NULL), &io);
    if (rc == 0) {
        rc = cm_rados_read_small(io, name, &data, 65536, pool->cluster->timeout);
        record_ioctx_done(pool, io);
    }
    if (rc < 0)
        return push_bounded_failure(L, pool, rc, lua_pushfstring(L, "read %s", name));
    lua_pushlstring(L, data, (size_t)rc);
    free(data);
    return 1;
}

/* pool:delete(name [, namespace]) -> true | nil, message, code: a bounded remove that goes
 * through on a full cluster (full_try) */
static int pool_delete_record(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    rados_ioctx_t io;
    int rc = record_ioctx(pool, luaL_optstring(L, 3, NULL), &io);
    if (rc == 0) {
        rc = cm_rados_remove_bounded(io, name, pool->cluster->timeout);
        record_ioctx_done(pool, io);
    }
    if (rc < 0)
        return push_bounded_failure(L, pool, rc, lua_pushfstring(L, "remove %s", name));
    lua_pushboolean(L, 1);
    return 1;
}

static int start_watch(struct pool_handle *pool, const char *nspace, const char *name)
{
    struct owner_watch_entry *entry = calloc(1, sizeof *entry);
    if (!entry)
        return -ENOMEM;
    snprintf(entry->key, sizeof entry->key, "%s/%s", nspace ? nspace : "", name);
    int rc =
        cm_owner_watch_start(pool->cluster->cluster, rados_ioctx_get_id(pool->ioctx),
                             nspace ? nspace : "", name, pool->cluster->timeout, &entry->watch);
    if (rc < 0) {
        free(entry);
        return rc;
    }
    entry->next = pool->watches;
    pool->watches = entry;
    return 0;
}

static void stop_watch(struct pool_handle *pool, const char *nspace, const char *name)
{
    char key[320];
    snprintf(key, sizeof key, "%s/%s", nspace ? nspace : "", name);
    for (struct owner_watch_entry **at = &pool->watches; *at; at = &(*at)->next) {
        if (strcmp((*at)->key, key) == 0) {
            struct owner_watch_entry *entry = *at;
            *at = entry->next;
            cm_owner_watch_stop(entry->watch, pool->cluster->timeout);
            free(entry);
            return;
        }
    }
}

/* pool:watch(name [, namespace]) -> true | nil, message, code: this process answers probes
 * on the owner object while the pool handle is open (pool:probe from any host). */
static int pool_watch(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    int rc = start_watch(pool, luaL_optstring(L, 3, NULL), name);
    if (rc < 0)
        return push_bounded_failure(L, pool, rc, lua_pushfstring(L, "watch %s", name));
    lua_pushboolean(L, 1);
    return 1;
}

/* pool:unwatch(name [, namespace]) */
static int pool_unwatch(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    stop_watch(pool, luaL_optstring(L, 3, NULL), luaL_checkstring(L, 2));
    return 0;
}

/* pool:probe(name [, namespace [, seconds]]) -> true (a live process watches it), false, or
 * nil, message, code */
static int pool_probe(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    const char *name = luaL_checkstring(L, 2);
    double seconds = luaL_optnumber(L, 4, 5);
    rados_ioctx_t io;
    int rc = record_ioctx(pool, luaL_optstring(L, 3, NULL), &io);
    if (rc == 0) {
        rc = cm_owner_probe(io, name, seconds);
        record_ioctx_done(pool, io);
    }
    if (rc < 0)
        return push_bounded_failure(L, pool, rc, lua_pushfstring(L, "probe %s", name));
    lua_pushboolean(L, rc > 0);
    return 1;
}

/* pool:id() -> the pool's id */
static int pool_id(lua_State *L)
{
    struct pool_handle *pool = check_pool(L, 1);
    lua_pushinteger(L, (lua_Integer)rados_ioctx_get_id(pool->ioctx));
    return 1;
}

static void push_owner(lua_State *L, const struct cm_owner *owner)
{
    char run_id[24];
    snprintf(run_id, sizeof run_id, "%016" PRIx64, owner->run_id);
    lua_createtable(L, 0, 6);
    lua_pushstring(L, run_id);
    lua_setfield(L, -2, "run_id");
    lua_pushstring(L, owner->host);
    lua_setfield(L, -2, "host");
    lua_pushinteger(L, (lua_Integer)owner->pid);
    lua_setfield(L, -2, "pid");
    lua_pushinteger(L, (lua_Integer)owner->pid_start);
    lua_setfield(L, -2, "pid_start");
    lua_pushstring(L, owner->boot_id);
    lua_setfield(L, -2, "boot_id");
    lua_pushinteger(L, (lua_Integer)owner->started);
    lua_setfield(L, -2, "started");
}

/* rados.owner() -> this process as an owner, with a new run id: {run_id=, host=, pid=,
 * pid_start=, boot_id=, started=} */
static int rados_lua_owner(lua_State *L)
{
    struct cm_owner owner = {.run_id = cm_rados_new_run_id()};
    cm_owner_self(&owner);
    push_owner(L, &owner);
    return 1;
}

/* rados.owner_state{host=, pid=, pid_start=, boot_id=} -> "alive", "gone" or "elsewhere"
 * (another host's process: probe its owner object) */
static int rados_lua_owner_state(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    struct cm_owner owner = {0};
    static const char *const fields[] = {"host", "pid", "pid_start", "boot_id", "started", NULL};
    for (int i = 0; fields[i]; i++) {
        lua_getfield(L, 1, fields[i]);
        const char *value = lua_tostring(L, -1);
        if (value)
            cm_owner_parse_field(&owner, fields[i], value);
        lua_pop(L, 1);
    }
    static const char *const names[] = {"gone", "alive", "elsewhere"};
    lua_pushstring(L, names[cm_owner_local_state(&owner)]);
    return 1;
}

/* The largest object the OSDs accept, as the monitors' config says (osd_max_object_size);
 * falls back to the client's view of the option. 0 when unknown. */
static uint64_t cluster_max_object_size(lua_State *L, int pool_index)
{
    uint64_t size = 0;
    lua_getiuservalue(L, pool_index, 1);
    struct cluster_handle *cluster = luaL_testudata(L, -1, CLUSTER_TYPE);
    lua_pop(L, 1);
    if (!cluster || !cluster->cluster)
        return 0;
    const char *cmd[] = {
        "{\"prefix\":\"config get\",\"who\":\"osd\",\"key\":\"osd_max_object_size\"}"};
    char *out = NULL, *status = NULL;
    size_t out_len = 0, status_len = 0;
    if (rados_mon_command(cluster->cluster, cmd, 1, "", 0, &out, &out_len, &status, &status_len) >=
            0 &&
        out_len > 0 && out_len < 64) {
        char text[64];
        memcpy(text, out, out_len);
        text[out_len] = '\0';
        size = strtoull(text, NULL, 10);
    }
    rados_buffer_free(out);
    rados_buffer_free(status);
    if (size == 0) {
        char value[64];
        if (rados_conf_get(cluster->cluster, "osd_max_object_size", value, sizeof value) == 0)
            size = strtoull(value, NULL, 10);
    }
    return size;
}

static void default_prefix(char *out, size_t n)
{
    char host[64] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(out, n, "benchmark_data_%s_%d", host, (int)getpid());
}

/* Runs' markers live in their own namespace, so that `cephmark cleanup --leftovers` finds
 * a run killed in a pool cephmark did not create without listing the pool's own objects. */
#define RUN_MARKER_NAMESPACE "cephmark"

static void marker_name(const char *run_name, char *out, size_t n)
{
    snprintf(out, n, "run.%s", run_name);
}

/* A benchmark object under `prefix`: <prefix>_object<N>, or <prefix>object<N> when the
 * prefix ends with its separator. Nothing else matches: a prefix names one run, so
 * benchmark_data_host_12 never selects benchmark_data_host_123's objects, and other objects
 * that start with the prefix are never removed. */
static bool is_benchmark_object(const char *name, const char *prefix)
{
    size_t prefix_len = strlen(prefix);
    if (strncmp(name, prefix, prefix_len) != 0)
        return false;
    const char *tail = name + prefix_len;
    if (prefix_len > 0 && prefix[prefix_len - 1] == '_' && strncmp(tail, "object", 6) == 0)
        tail += 6;
    else if (strncmp(tail, "_object", 7) == 0)
        tail += 7;
    else
        return false;
    if (!*tail)
        return false;
    for (const char *c = tail; *c; c++)
        if (*c < '0' || *c > '9')
            return false;
    return true;
}

/* Lists the pool's benchmark objects under `prefix` (is_benchmark_object), for a cleanup
 * without complete metadata. The names are kept in a Lua table (at the top of the stack)
 * and an array of pointers. */
static int collect_names(lua_State *L, rados_ioctx_t io, const char *prefix, char ***names_out,
                         size_t *n_out)
{
    rados_list_ctx_t list;
    int rc = rados_nobjects_list_open(io, &list);
    if (rc < 0)
        return rc;
    lua_newtable(L);
    size_t n = 0;
    const char *entry, *key, *nspace;
    while ((rc = rados_nobjects_list_next(list, &entry, &key, &nspace)) == 0) {
        if ((nspace && *nspace) || !is_benchmark_object(entry, prefix))
            continue;
        lua_pushstring(L, entry);
        lua_rawseti(L, -2, (lua_Integer)++n);
    }
    rados_nobjects_list_close(list);
    if (rc != -ENOENT)
        return rc;
    char **names = lua_newuserdatauv(L, (n ? n : 1) * sizeof *names, 0);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, -2, (lua_Integer)i + 1);
        names[i] = (char *)lua_tostring(L, -1);
        lua_pop(L, 1); /* the table keeps each name alive */
    }
    lua_setfield(L, -2, "pointers"); /* keep the array alive with the table */
    *names_out = names;
    *n_out = n;
    return 0;
}

static bool owner_is_self(const struct cm_owner *owner)
{
    struct cm_owner self = {0};
    cm_owner_self(&self);
    return strcmp(owner->host, self.host) == 0 && owner->pid == self.pid &&
           (owner->pid_start == 0 || owner->pid_start == self.pid_start);
}

/* Whether the process writing a run still lives: from /proc on this host, else by probing
 * the run's marker, which its writer watches. No answer at all counts as alive. */
static enum cm_owner_state holder_state(struct pool_handle *pool, const struct cm_owner *owner,
                                        const char *marker)
{
    enum cm_owner_state state = cm_owner_local_state(owner);
    if (state != CM_OWNER_ELSEWHERE)
        return state;
    rados_ioctx_t io;
    if (record_ioctx(pool, RUN_MARKER_NAMESPACE, &io) < 0)
        return CM_OWNER_ALIVE;
    int rc = cm_owner_probe(io, marker, 5);
    record_ioctx_done(pool, io);
    return rc == 0 || rc == -ENOENT ? CM_OWNER_GONE : CM_OWNER_ALIVE;
}

/* Why writes to the pool do not go through, from the osdmap (cluster:write_blocked_reason
 * in pools.lua): pushes a string, or nil when nothing there explains it. */
static void push_blocked_reason(lua_State *L, int pool_index)
{
    struct pool_handle *pool = lua_touserdata(L, pool_index);
    char name[256] = "?";
    rados_ioctx_get_pool_name(pool->ioctx, name, sizeof name);
    lua_getiuservalue(L, pool_index, 1);
    if (lua_getfield(L, -1, "write_blocked_reason") != LUA_TFUNCTION) {
        lua_pop(L, 2);
        lua_pushnil(L);
        return;
    }
    lua_insert(L, -2);
    lua_pushstring(L, name);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK || !lua_isstring(L, -1)) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
}

/* The message for a bounded call that failed: `what` failed in pool P, and why the
 * osdmap says writes are blocked when the call got no answer. SIGINT raises "interrupted". */
static const char *push_bounded_message(lua_State *L, int pool_index, int rc, const char *what)
{
    struct pool_handle *pool = lua_touserdata(L, pool_index);
    char name[256] = "?";
    rados_ioctx_get_pool_name(pool->ioctx, name, sizeof name);
    if (rc == -EINTR)
        cm_interrupt_check(L);
    if (rc != -ETIMEDOUT)
        return lua_pushfstring(L, "cannot %s in pool '%s': %s", what, name, strerror(-rc));
    int bound = (int)(cm_rados_bound(pool->cluster->timeout) + 0.5);
    push_blocked_reason(L, pool_index);
    const char *message;
    if (lua_isstring(L, -1))
        message =
            lua_pushfstring(L, "%s: cannot %s in pool '%s' (no answer from the OSDs within %d s)",
                            lua_tostring(L, -1), what, name, bound);
    else
        message = lua_pushfstring(L, "cannot %s in pool '%s': no answer from the OSDs within %d s",
                                  what, name, bound);
    lua_remove(L, -2);
    return message;
}

static int raise_bounded(lua_State *L, int pool_index, int rc, const char *what)
{
    const char *message = push_bounded_message(L, pool_index, rc, what);
    char text[1024];
    snprintf(text, sizeof text, "bench: %s", message);
    cm_push_user_error(L, CM_EXIT_USAGE, text);
    return lua_error(L);
}

/* The run name holds a run this very process wrote earlier (a scenario's second write
 * under one name): it is this run's to overwrite. Returns -EEXIST when it is not. */
static int reclaim_own_run(struct pool_handle *pool, const char *run_name,
                           const struct cm_rados_run_meta *meta)
{
    struct cm_rados_run_meta existing;
    char error[512], text[2048];
    if (cm_rados_meta_read(pool->ioctx, run_name, &existing, error, sizeof error,
                           pool->cluster->timeout) < 0 ||
        existing.version < 2 || !owner_is_self(&existing.owner))
        return -EEXIST;
    int n = cm_rados_meta_format(meta, false, text, sizeof text);
    if (n < 0)
        return n;
    return cm_rados_create(pool->ioctx, run_name, text, (size_t)n, false, false,
                           pool->cluster->timeout);
}

/* A write's run name is taken: say by what, and how to go on. */
static int raise_name_taken(lua_State *L, struct pool_handle *pool, const char *run_name,
                            const char *marker)
{
    char name[256] = "?", error[512], holder[256], text[1400];
    rados_ioctx_get_pool_name(pool->ioctx, name, sizeof name);
    struct cm_rados_run_meta kept;
    int rc = cm_rados_meta_read(pool->ioctx, run_name, &kept, error, sizeof error,
                                pool->cluster->timeout);
    if (rc == -EINTR)
        cm_interrupt_check(L);
    if (rc == -EINVAL) {
        snprintf(text, sizeof text,
                 "bench: object '%s' already exists in pool '%s' and is not cephmark run "
                 "metadata: write under another run name (--run-name, run_name =)",
                 run_name, name);
    } else if (rc < 0) {
        snprintf(text, sizeof text, "bench: run name '%s' is taken in pool '%s' (%s)", run_name,
                 name, error);
    } else {
        cm_owner_describe(&kept.owner, holder, sizeof holder);
        if (kept.complete)
            snprintf(text, sizeof text,
                     "bench: pool '%s' already holds a kept run '%s' (%s, %" PRIu64
                     " objects): remove it with `cephmark rados-cleanup -p %s --run-name %s`, "
                     "or write under another run name (--run-name, run_name =)",
                     name, run_name, kept.version == 1 ? "written by an earlier cephmark" : holder,
                     kept.objects, name, run_name);
        else if (holder_state(pool, &kept.owner, marker) == CM_OWNER_ALIVE)
            snprintf(text, sizeof text,
                     "bench: run '%s' in pool '%s' is being written by another cephmark run "
                     "(%s): wait for it to end, or write under another run name (--run-name, "
                     "run_name =)",
                     run_name, name, holder);
        else
            snprintf(text, sizeof text,
                     "bench: run '%s' in pool '%s' was left by a cephmark run that is gone "
                     "(%s): remove it with `cephmark cleanup --leftovers --yes` or `cephmark "
                     "rados-cleanup -p %s --run-name %s`",
                     run_name, name, holder, name, run_name);
    }
    cm_push_user_error(L, CM_EXIT_USAGE, text);
    return lua_error(L);
}

/* A write's claim, once everything else was checked: the metadata object is created
 * exclusively in state running (or replaces this very process's own earlier run), then the
 * run's marker is written and watched. On failure nothing of the claim is left; `what`
 * says which step failed. */
static int claim_run(struct pool_handle *pool, const char *run_name, const char *marker,
                     const struct cm_rados_run_meta *meta, int temporary, const char **what)
{
    double timeout = pool->cluster->timeout;
    *what = "create the run metadata";
    int rc = cm_rados_meta_claim(pool->ioctx, run_name, meta, timeout);
    if (rc == -EEXIST)
        rc = reclaim_own_run(pool, run_name, meta);
    if (rc < 0)
        return rc;
    char text[2048];
    int n = cm_rados_meta_format(meta, false, text, sizeof text);
    if (n > 0)
        n += snprintf(text + n, sizeof text - (size_t)n, "run_name %s\ntemporary %d\n", run_name,
                      temporary);
    rados_ioctx_t io;
    *what = "create the run marker";
    rc = record_ioctx(pool, RUN_MARKER_NAMESPACE, &io);
    if (rc == 0) {
        rc = cm_rados_create(io, marker, text, (size_t)n, false, false, timeout);
        record_ioctx_done(pool, io);
    }
    if (rc == 0)
        rc = start_watch(pool, RUN_MARKER_NAMESPACE, marker);
    if (rc < 0) {
        cm_rados_remove_bounded(pool->ioctx, run_name, timeout);
        if (record_ioctx(pool, RUN_MARKER_NAMESPACE, &io) == 0) {
            cm_rados_remove_bounded(io, marker, timeout);
            record_ioctx_done(pool, io);
        }
    }
    return rc;
}

/* The buffers a slot of a pass or of an omap/xattr run holds besides a read's block. */
static uint64_t pass_slot_bytes(int op, const struct cm_rados_run_meta *meta)
{
    if (op == CM_RADOS_VERIFY || op == CM_RADOS_MIXED)
        return cm_rados_largest_object(meta) + 4096 +
               (meta->overwrite_block ? meta->block_size : 0);
    if (op == CM_RADOS_OVERWRITE)
        return meta->overwrite_block;
    if (op == CM_RADOS_APPEND)
        return meta->append_block;
    if (meta->write_to & ~CM_RADOS_TO_OBJECT)
        return meta->keys_per_op * meta->block_size;
    return (op == CM_RADOS_SEQ || op == CM_RADOS_RAND) && meta->overwrite_block ? meta->block_size
                                                                                : 0;
}

/* Bounds the slots of a run before anything is allocated. Reads hold a buffer of the block
 * size per slot, and librados one more per read in flight; every run but a cleanup holds
 * the payload pattern (a block and 1 MiB), and writes the stage librados sends from (two
 * blocks more). A run that would not fit in memory is refused with the figure
 * (engine_lua.h). A seq run reads each block of the write run once, so slots beyond its
 * block count would stay idle with their buffers: they are not made. */
static void bench_bound_slots(struct cm_bench *b, int op, const struct cm_rados_run_meta *meta)
{
    struct cm_engine_config *config = &b->config;
    if (op == CM_RADOS_REMOVE)
        return;
    uint64_t per_slot = 0, block = meta->block_size;
    if (op == CM_RADOS_SEQ || op == CM_RADOS_RAND)
        per_slot = (block + 4095) / 4096 * 4096;
    per_slot += pass_slot_bytes(op, meta);
    uint64_t blocks = op == CM_RADOS_WRITE ? 3 : 1;
    uint64_t shared = block <= UINT64_MAX / 4 ? blocks * block + (1 << 20) : UINT64_MAX;
    /* mixed: the live set, 20 bytes per object (rados_mixed.c) */
    if (op == CM_RADOS_MIXED && shared != UINT64_MAX)
        shared += meta->objects < UINT64_MAX / 64 ? meta->objects * 20 : UINT64_MAX / 2;
    /* librados receives each read into a buffer of its own, then copies it into the slot's
     * (measured: seq of 2 x 64 MiB objects peaks at 4 x 64 MiB beside the payload) */
    cm_bench_check_memory(b, per_slot, per_slot, shared,
                          per_slot ? "read buffers" : "payload memory",
                          "lower -t or -b (threads, block_size)");
    if (op == CM_RADOS_SEQ && meta->blocks > 0 && config->depth > meta->blocks)
        config->depth = (unsigned)meta->blocks;
}

/* What pool:bench reads from its options table (pool_bench_options). */
struct pool_lua_options {
    int op;
    const char *run_name, *prefix, *access;
    uint64_t block_size;
    int object_size; /* the stack index of the value given: a size or a distribution */
    bool verify, hints, temporary;
    const char *write_to;
    int64_t keys_per_op, seed;
    uint64_t key_size;
    int mix; /* stack index of the mix table, 0 when absent */
};

/* in the order of enum cm_rados_target_op */
static const char *const rados_ops[] = {"write",  "seq",    "rand",  "cleanup", "overwrite",
                                        "append", "verify", "mixed", NULL};

/* The kinds a mixed phase offers (op = "mixed"), and its mix when none is given. */
static const char *const rados_mix_names[CM_OP_KINDS] = {[CM_OP_READ] = "read",
                                                         [CM_OP_WRITE] = "write",
                                                         [CM_OP_REMOVE] = "remove",
                                                         [CM_OP_STAT] = "stat"};
static const struct cm_mix rados_default_mix = {
    .weight = {[CM_OP_READ] = 60, [CM_OP_WRITE] = 30, [CM_OP_STAT] = 5, [CM_OP_REMOVE] = 5},
    .total = 100};

#define POOL_OPTION(field) offsetof(struct pool_lua_options, field)

static const struct cm_option pool_bench_options[] = {
    {"access", CM_OPTION_STRING, POOL_OPTION(access), "uniform", 0, 0, NULL, 0,
     "rand, overwrite: which objects: uniform, zipf:θ, pareto:h or hotspot:A/B (A % take B % "
     "of the ops)"},
    {"block_size", CM_OPTION_SIZE, POOL_OPTION(block_size), "4M", 0, 0, NULL, 0,
     "write, overwrite, append: bytes per op (rados bench -b); reads use the run's"},
    {"hints", CM_OPTION_BOOL, POOL_OPTION(hints), "true", 0, 0, NULL, CM_OPTION_NO_RESULT,
     "write: allocation hints with each object, as rados bench sends"},
    {"key_size", CM_OPTION_SIZE, POOL_OPTION(key_size), "0", 0, 4096, NULL, CM_OPTION_NO_RESULT,
     "write to omap/xattr: key name length (zero-padded); 0: rados bench's names"},
    {"keys_per_op", CM_OPTION_INTEGER, POOL_OPTION(keys_per_op), "1", 1, 1024, NULL,
     CM_OPTION_NO_RESULT,
     "write to omap/xattr: keys set (and read back) per op, each a block_size value"},
    {"mix", CM_OPTION_TABLE, POOL_OPTION(mix), NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "mixed: ratios of read, write (overwrites), stat and remove over the run's objects; "
     "default {read = 60, write = 30, stat = 5, remove = 5}"},
    {"object_size", CM_OPTION_TABLE, POOL_OPTION(object_size), NULL, 0, 0, NULL, 0,
     "write: object size, a multiple of block_size (rados bench -O; default block_size), or "
     "sizes written whole: {low, high} or { {\"4K\", 40}, {\"4M\", 60} }"},
    {"op", CM_OPTION_CHOICE, POOL_OPTION(op), "write", 0, 0, rados_ops, 0,
     "write, seq or rand reads of a write run, cleanup; overwrite, append, verify or mixed "
     "ops over a run"},
    {"prefix", CM_OPTION_STRING, POOL_OPTION(prefix), NULL, 0, 0, NULL, 0,
     "object name prefix; default benchmark_data_<host>_<pid>; cleanup: objects under it"},
    {"run_name", CM_OPTION_STRING, POOL_OPTION(run_name), "cephmark_bench_last_metadata", 0, 0,
     NULL, 0, "the run's metadata object (rados bench --run-name)"},
    {"seed", CM_OPTION_INTEGER, POOL_OPTION(seed), "0", 0, INT64_MAX, NULL, 0,
     "rand, overwrite, mixed: seed of the picks and offsets (and of a mix's kinds); 0: rand a "
     "fresh one, overwrite and mixed one derived from the run and the pass"},
    {"temporary", CM_OPTION_BOOL, POOL_OPTION(temporary), "false", 0, 0, NULL, 0,
     "write: a run the scenario removes itself (listed as a leftover if it does not)"},
    {"verify", CM_OPTION_BOOL, POOL_OPTION(verify), "true", 0, 0, NULL, 0,
     "seq, rand: check every block read against what the write run wrote"},
    {"write_to", CM_OPTION_STRING, POOL_OPTION(write_to), "object", 0, 0, NULL, CM_OPTION_NO_RESULT,
     "write: object, omap, xattr or a list (rados bench --write-object/-omap/-xattr)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL},
};

struct pool_bench_state {
    struct cm_rados_target target;
    struct cm_rados_run_meta meta;
    char marker[300];
    char **names; /* cleanup without metadata, or of a write that never finished */
    size_t n_names;
    bool have_meta;   /* cleanup: the run's metadata object exists */
    bool target_open; /* cm_rados_target_init succeeded, fini not yet called */
    bool claimed;     /* write: the run name is this run's */
    bool full_try;
    int meta_rc;
    const char *meta_what;
    struct cm_access_spec access;
    struct cm_rados_run_meta before; /* overwrite, append: the metadata as the pass found it */
    bool pass_stored;                /* overwrite, append, mixed: the metadata says running */
    struct cm_mix mix;               /* mixed */
};

/* pool:bench{op="write"|"seq"|"rand"|"cleanup", seconds=, ops=, bytes=, threads=,
 *   block_size=, object_size=, access=, seed=, rate=, warmup=, run_name=, prefix=,
 *   verify=, hints=, temporary=, on_second=}
 *   -> result table (raises on misuse and when the run cannot start) */
static void *pool_object(lua_State *L, int arg)
{
    return check_pool(L, arg);
}

/* object_size: a size (rados bench -O), or a distribution of sizes, each object then
 * written whole at its own size (block and object sizes hold the largest). */
static void pool_bench_object_size(struct cm_bench *b, struct cm_rados_run_meta *meta)
{
    const struct pool_lua_options *o = b->options;
    lua_State *L = b->L;
    meta->block_size = meta->object_size = o->block_size;
    if (!o->object_size)
        return;
    struct cm_size_dist sizes;
    if (lua_type(L, o->object_size) != LUA_TTABLE) {
        meta->object_size = cm_lua_opt_size(L, b->table, "object_size", 0, "bench");
        return;
    }
    if (cm_bench_given(b, "block_size"))
        luaL_error(L, "bench: object_size as a distribution writes each object whole in one op: "
                      "leave block_size out");
    cm_lua_size_dist(L, o->object_size, "bench", "object_size", &sizes);
    meta->sized = true;
    meta->sizes = sizes;
    meta->block_size = meta->object_size = cm_size_max(&sizes);
}

/* A write's destinations (rados bench --write-object, --write-omap, --write-xattr). */
static void pool_bench_write_to(struct cm_bench *b, struct cm_rados_run_meta *meta)
{
    const struct pool_lua_options *o = b->options;
    meta->write_to = cm_rados_parse_write_to(o->write_to);
    if (!meta->write_to)
        luaL_error(b->L,
                   "bench: write_to '%s' is not object, omap, xattr or a list of them "
                   "(\"object,omap\")",
                   o->write_to);
    meta->keys_per_op = (uint64_t)o->keys_per_op;
    meta->key_size = o->key_size;
    if (meta->write_to == CM_RADOS_TO_OBJECT) {
        meta->write_to = 0; /* a plain run, written as before */
        return;
    }
    if (meta->sized)
        luaL_error(b->L, "bench: object_size as a distribution sizes object data: leave write_to "
                         "out (omap and xattr values are block_size each)");
    uint64_t per_op = meta->keys_per_op * meta->block_size;
    if (per_op > ((uint64_t)64 << 20))
        luaL_error(b->L,
                   "bench: keys_per_op x block_size is %I bytes per op: at most 64 MiB "
                   "(lower keys_per_op or block_size)",
                   (lua_Integer)per_op);
}

/* A write's metadata, once its options are checked. */
static void pool_bench_new_run(struct cm_bench *b)
{
    const struct pool_lua_options *o = b->options;
    struct cm_rados_run_meta *meta = &((struct pool_bench_state *)b->state)->meta;
    lua_State *L = b->L;
    pool_bench_object_size(b, meta);
    if (meta->block_size == 0) {
        luaL_error(L, "bench: block_size must be at least 1 byte");
        return;
    }
    if (meta->block_size > meta->object_size)
        luaL_error(L, "bench: block_size (%I) is larger than object_size (%I)",
                   (lua_Integer)meta->block_size, (lua_Integer)meta->object_size);
    if (meta->object_size % meta->block_size != 0)
        luaL_error(L, "bench: object_size (%I) must be a multiple of block_size (%I)",
                   (lua_Integer)meta->object_size, (lua_Integer)meta->block_size);
    uint64_t max_object = cluster_max_object_size(L, b->self);
    if (max_object && meta->object_size > max_object) {
        char limit[32];
        cm_format_size(max_object, limit, sizeof limit);
        luaL_error(L, "bench: object_size %I is above the cluster's osd_max_object_size (%s)",
                   (lua_Integer)meta->object_size, limit);
    }
    pool_bench_write_to(b, meta);
    if (o->prefix)
        snprintf(meta->prefix, sizeof meta->prefix, "%s", o->prefix);
    else
        default_prefix(meta->prefix, sizeof meta->prefix);
    meta->run_id = cm_rados_new_run_id();
    meta->owner.run_id = meta->run_id;
    cm_owner_self(&meta->owner);
    meta->version = cm_rados_meta_version(meta);
}

/* The objects of a run without usable metadata, listed by prefix. */
static void pool_bench_collect(struct cm_bench *b, struct pool_handle *pool, const char *prefix)
{
    struct pool_bench_state *state = b->state;
    int rc = collect_names(b->L, pool->ioctx, prefix, &state->names, &state->n_names);
    if (rc < 0)
        luaL_error(b->L, "bench: cannot list objects: %s", strerror(-rc));
    cm_bench_keep(b); /* the names stay alive during the run */
}

/* A read's or cleanup's run: its metadata, or (cleanup) the objects under the prefix. */
static void pool_bench_existing_run(struct cm_bench *b, struct pool_handle *pool)
{
    const struct pool_lua_options *o = b->options;
    struct pool_bench_state *state = b->state;
    struct cm_rados_run_meta *meta = &state->meta;
    lua_State *L = b->L;
    char error[512];
    int rc = cm_rados_meta_read(pool->ioctx, o->run_name, meta, error, sizeof error,
                                pool->cluster->timeout);
    if (rc == -EINTR)
        cm_interrupt_check(L);
    if (rc == -ENOENT && o->op == CM_RADOS_REMOVE && o->prefix) {
        /* no metadata: the benchmark objects under the prefix the operator named */
        pool_bench_collect(b, pool, o->prefix);
        snprintf(meta->prefix, sizeof meta->prefix, "%s", o->prefix);
        return;
    }
    if (rc < 0)
        cm_error_user(L, CM_EXIT_USAGE, "%s", error);
    state->have_meta = true;
    if (meta->complete)
        return;
    char holder[256], name[256] = "?";
    rados_ioctx_get_pool_name(pool->ioctx, name, sizeof name);
    cm_owner_describe(&meta->owner, holder, sizeof holder);
    bool alive = !owner_is_self(&meta->owner) &&
                 holder_state(pool, &meta->owner, state->marker) == CM_OWNER_ALIVE;
    if (alive)
        cm_error_user(L, CM_EXIT_USAGE,
                      "bench: run '%s' in pool '%s' is being written by a live cephmark run "
                      "(%s): refused; that run removes or keeps its own objects",
                      o->run_name, name, holder);
    if (o->op != CM_RADOS_REMOVE)
        cm_error_user(L, CM_EXIT_USAGE,
                      "bench: run '%s' in pool '%s' is incomplete: its write (%s) ended before "
                      "finishing; remove it with `cephmark rados-cleanup -p %s --run-name %s`",
                      o->run_name, name, holder, name, o->run_name);
    /* a write that never finished: its objects are found by its recorded prefix */
    pool_bench_collect(b, pool, meta->prefix);
}

/* An overwrite, append or verify pass over the run: its checks, and the metadata it will
 * leave (the unit, the pass number). */
static void pool_bench_pass_prepare(struct cm_bench *b, struct pool_handle *pool)
{
    const struct pool_lua_options *o = b->options;
    struct pool_bench_state *state = b->state;
    char error[512];
    enum cm_rados_target_op op = (enum cm_rados_target_op)o->op;
    uint64_t block = cm_bench_given(b, "block_size") ? o->block_size : state->meta.block_size;
    if (op == CM_RADOS_MIXED) {
        /* its writes are overwrites (in the unit of the run's earlier ones by default); a
         * mix without writes is checked as a reading pass */
        if (!cm_bench_given(b, "block_size") && state->meta.overwrite_block)
            block = state->meta.overwrite_block;
        op = state->mix.weight[CM_OP_WRITE] ? CM_RADOS_OVERWRITE : CM_RADOS_VERIFY;
    }
    state->before = state->meta;
    if (cm_rados_pass_prepare(pool->ioctx, op, block, &state->meta, error, sizeof error) < 0)
        cm_error_user(b->L, CM_EXIT_USAGE, "%s", error);
}

/* A mixed phase's ratios (before the run is looked up), or mix given to another op. */
static void pool_bench_mix(struct cm_bench *b)
{
    const struct pool_lua_options *o = b->options;
    struct pool_bench_state *state = b->state;
    if (o->mix && o->op != CM_RADOS_MIXED)
        luaL_error(b->L, "bench: mix is for op = \"mixed\", not op = \"%s\"", rados_ops[o->op]);
    if (o->op == CM_RADOS_MIXED && o->mix)
        cm_lua_check_mix(b->L, o->mix, "bench", rados_mix_names, &state->mix);
    else if (o->op == CM_RADOS_MIXED)
        state->mix = rados_default_mix;
    if (o->op == CM_RADOS_MIXED)
        cm_mix_prepare(&state->mix);
}

/* Before an overwrite or append pass's first op: its offsets' seed, and the metadata in
 * state running, so that a pass that dies leaves a run that reads refuse. */
static void pool_bench_pass_start(struct cm_bench *b, struct pool_handle *pool)
{
    const struct pool_lua_options *o = b->options;
    struct pool_bench_state *state = b->state;
    uint64_t seed =
        o->seed ? (uint64_t)o->seed
                : state->meta.run_id ^ (state->meta.overwrite_passes * 0x9e3779b97f4a7c15ULL);
    state->target.rng = seed;
    if (o->op == CM_RADOS_MIXED && cm_rados_mixed_init(&state->target, &state->mix, seed) < 0)
        luaL_error(b->L, "bench: out of memory for the live set of %I objects",
                   (lua_Integer)state->meta.objects);
    int rc =
        cm_rados_meta_store(pool->ioctx, o->run_name, &state->meta, false, pool->cluster->timeout);
    if (rc < 0)
        raise_bounded(b->L, b->self, rc,
                      lua_pushfstring(b->L, "update the run metadata '%s'", o->run_name));
    state->pass_stored = true;
}

/* After a pass: its ops counted into the metadata, complete again. */
static void pool_bench_pass_end(struct cm_bench *b, struct pool_handle *pool, bool ran)
{
    const struct pool_lua_options *o = b->options;
    struct pool_bench_state *state = b->state;
    if (!state->pass_stored)
        return;
    state->pass_stored = false;
    /* a mixed phase's removes are recorded even when it failed: the objects are gone */
    const uint64_t *started = state->target.mixed_started;
    bool mixed = o->op == CM_RADOS_MIXED && (ran || started[CM_OP_REMOVE]);
    struct cm_rados_run_meta *meta = ran || mixed ? &state->meta : &state->before;
    if (mixed) {
        meta->overwrites += started[CM_OP_WRITE];
        meta->removed += started[CM_OP_REMOVE];
    } else if (ran && o->op == CM_RADOS_OVERWRITE) {
        meta->overwrites += b->result.started;
    } else if (ran) {
        meta->appends += b->result.started;
    }
    state->meta_rc =
        cm_rados_meta_store(pool->ioctx, o->run_name, meta, true, pool->cluster->timeout);
    state->meta_what = "complete the run metadata";
}

static void pool_bench_prepare(struct cm_bench *b)
{
    const struct pool_lua_options *o = b->options;
    struct pool_bench_state *state = b->state;
    struct pool_handle *pool = b->object;
    lua_State *L = b->L;
    if (!*o->run_name)
        luaL_error(L, "bench: run_name must not be empty");
    if (o->prefix && !*o->prefix)
        cm_error_user(L, CM_EXIT_USAGE,
                      "bench: an empty prefix names every object in the pool: refused (give "
                      "the run's own prefix, e.g. benchmark_data_HOST_PID)");
    marker_name(o->run_name, state->marker, sizeof state->marker);
    pool_bench_mix(b);
    cm_lua_access_spec(L, o->access, "bench", &state->access);
    if (cm_bench_given(b, "access") && o->op != CM_RADOS_RAND && o->op != CM_RADOS_OVERWRITE)
        luaL_error(L, "bench: access applies to rand and overwrite only");
    if (cm_bench_given(b, "seed") && o->op != CM_RADOS_RAND && o->op != CM_RADOS_OVERWRITE &&
        o->op != CM_RADOS_MIXED)
        luaL_error(L, "bench: seed applies to rand, overwrite and mixed only");
    if (o->op == CM_RADOS_WRITE)
        pool_bench_new_run(b);
    else
        pool_bench_existing_run(b, pool);
    if (o->op != CM_RADOS_REMOVE && o->op != CM_RADOS_WRITE && state->meta.removed) {
        char why[400];
        snprintf(why, sizeof why,
                 "bench: run '%s' had %" PRIu64 " of its objects removed by a mixed phase: only "
                 "cleanup works on it now",
                 o->run_name, state->meta.removed);
        cm_error_user(L, CM_EXIT_USAGE, "%s", why);
    }
    if (o->op >= CM_RADOS_OVERWRITE)
        pool_bench_pass_prepare(b, pool);
    b->defaults.seconds = o->op == CM_RADOS_WRITE || o->op == CM_RADOS_RAND ||
                                  o->op == CM_RADOS_OVERWRITE || o->op == CM_RADOS_APPEND ||
                                  o->op == CM_RADOS_MIXED
                              ? 10
                              : 0;
    if (o->op == CM_RADOS_REMOVE) {
        b->defaults.threads = 256; /* many removes in flight (docs/performance.md, finding 4) */
        /* cleanup finishes even after SIGINT, so an interrupted run leaves no garbage */
        b->defaults.ignore_interrupt = true;
    }
}

/* Removes the run's marker (and stops watching it); with `meta` also the metadata. */
static int pool_bench_unclaim(struct pool_handle *pool, const char *run_name, const char *marker,
                              bool meta)
{
    rados_ioctx_t io;
    int rc = 0;
    stop_watch(pool, RUN_MARKER_NAMESPACE, marker);
    if (meta)
        rc = cm_rados_remove_bounded(pool->ioctx, run_name, pool->cluster->timeout);
    if (record_ioctx(pool, RUN_MARKER_NAMESPACE, &io) == 0) {
        cm_rados_remove_bounded(io, marker, pool->cluster->timeout);
        record_ioctx_done(pool, io);
    }
    return rc;
}

static void pool_bench_open(struct cm_bench *b)
{
    const struct pool_lua_options *o = b->options;
    struct pool_bench_state *state = b->state;
    struct pool_handle *pool = b->object;
    lua_State *L = b->L;
    bench_bound_slots(b, o->op, &state->meta);
    char error[512];
    if (cm_rados_target_init(&state->target, pool->ioctx, (enum cm_rados_target_op)o->op,
                             &state->meta, o->verify, error, sizeof error) < 0)
        cm_error_user(L, CM_EXIT_USAGE, "%s", error);
    state->target_open = true;
    /* overwrite: the seed of its places is set by pool_bench_pass_start */
    if ((o->op == CM_RADOS_RAND || o->op == CM_RADOS_OVERWRITE) &&
        cm_rados_target_set_access(&state->target, &state->access,
                                   o->op == CM_RADOS_RAND ? (uint64_t)o->seed : 0) < 0)
        luaL_error(L, "bench: out of memory");
    state->target.names = state->names;
    state->target.n_names = state->n_names;
    state->target.alloc_hints = o->hints;
    if (o->op == CM_RADOS_OVERWRITE || o->op == CM_RADOS_APPEND || o->op == CM_RADOS_MIXED)
        pool_bench_pass_start(b, pool);
    if (o->op == CM_RADOS_WRITE) {
        /* the run name is this run's from here on: exclusively, before the first write */
        const char *what;
        int rc = claim_run(pool, o->run_name, state->marker, &state->meta, o->temporary, &what);
        if (rc == -EEXIST)
            raise_name_taken(L, pool, o->run_name, state->marker);
        if (rc < 0)
            raise_bounded(L, b->self, rc, lua_pushfstring(L, "%s '%s'", what, o->run_name));
        state->claimed = true;
    }
    /* removing benchmark data is how a full cluster is freed: removes go through even when
     * the pool or the cluster is flagged full, as `rados cleanup` does */
    if (o->op == CM_RADOS_REMOVE) {
        rados_set_pool_full_try(pool->ioctx);
        state->full_try = true;
    }
    b->ops = &cm_rados_target_ops;
    b->target = &state->target;
}

/* The target and the pool's full-try flag, right after the run or after an error. */
static void pool_bench_release(struct pool_bench_state *state, struct pool_handle *pool)
{
    if (state->full_try) {
        rados_unset_pool_full_try(pool->ioctx);
        state->full_try = false;
    }
    if (state->target_open) {
        cm_rados_target_fini(&state->target);
        state->target_open = false;
    }
}

/* After the run: the write's metadata completed (a kept run is the operator's from now on:
 * no marker for --leftovers), or a clean cleanup's records removed. */
static void pool_bench_after_run(struct cm_bench *b, int rc)
{
    const struct pool_lua_options *o = b->options;
    struct pool_bench_state *state = b->state;
    struct pool_handle *pool = b->object;
    struct cm_rados_run_meta *meta = &state->meta;
    pool_bench_release(state, pool);
    pool_bench_pass_end(b, pool, rc == 0);
    if (rc < 0) {
        if (state->claimed) /* nothing was written: the claim goes again */
            pool_bench_unclaim(pool, o->run_name, state->marker, true);
        state->claimed = false;
        return;
    }
    const struct cm_engine_result *result = &b->result;
    if (o->op == CM_RADOS_WRITE) {
        meta->blocks = result->started;
        uint64_t per_object = meta->object_size / meta->block_size;
        meta->objects = (meta->blocks + per_object - 1) / per_object;
        state->meta_rc =
            cm_rados_meta_complete(pool->ioctx, o->run_name, meta, pool->cluster->timeout);
        state->meta_what = "complete the run metadata";
        if (state->meta_rc == 0 && !o->temporary)
            pool_bench_unclaim(pool, o->run_name, state->marker, false);
    } else if (o->op == CM_RADOS_REMOVE && result->errors == 0 && !result->interrupted) {
        if (state->have_meta) {
            state->meta_rc = pool_bench_unclaim(pool, o->run_name, state->marker, true);
            state->meta_what = "remove the run metadata";
        } else {
            stop_watch(pool, RUN_MARKER_NAMESPACE, state->marker);
        }
    }
    state->claimed = false;
    if (state->meta_rc == -ENOENT)
        state->meta_rc = 0;
}

/* The fields of omap/xattr runs and of the passes over a run. */
static void pool_bench_pass_result(struct cm_bench *b)
{
    const struct cm_rados_run_meta *meta = &((struct pool_bench_state *)b->state)->meta;
    lua_State *L = b->L;
    char write_to[64];
    cm_rados_format_write_to(meta->write_to, write_to, sizeof write_to);
    cm_result_string(L, "write_to", write_to);
    if (meta->write_to & ~CM_RADOS_TO_OBJECT) {
        cm_result_integer(L, "keys_per_op", meta->keys_per_op);
        cm_result_integer(L, "key_size", meta->key_size);
    }
    if (meta->overwrite_block) {
        cm_result_integer(L, "overwrite_block", meta->overwrite_block);
        cm_result_integer(L, "overwrite_passes", meta->overwrite_passes);
        cm_result_integer(L, "overwrites", meta->overwrites);
    }
    if (meta->append_block) {
        cm_result_integer(L, "append_block", meta->append_block);
        cm_result_integer(L, "appends", meta->appends);
    }
    const struct cm_rados_target *target = &((struct pool_bench_state *)b->state)->target;
    if (target->op == CM_RADOS_MIXED) {
        cm_result_integer(L, "misses", target->misses);
        cm_result_integer(L, "objects_removed", target->mixed_started[CM_OP_REMOVE]);
    }
}

static void pool_bench_result(struct cm_bench *b)
{
    const struct pool_lua_options *o = b->options;
    struct pool_bench_state *state = b->state;
    const struct cm_rados_run_meta *meta = &state->meta;
    lua_State *L = b->L;
    cm_result_string(L, "prefix", meta->prefix);
    cm_result_integer(L, "block_size", meta->block_size);
    cm_result_integer(L, "object_size", meta->object_size);
    cm_result_integer(L, "objects", state->names ? state->n_names : meta->objects);
    if (meta->sized) {
        char sizes[400];
        if (cm_size_format(&meta->sizes, sizes, sizeof sizes) > 0)
            cm_result_string(L, "object_sizes", sizes);
    }
    if (o->op == CM_RADOS_WRITE)
        cm_result_bool(L, "hints", o->hints);
    pool_bench_pass_result(b);
    if (state->meta_rc < 0) {
        int result_index = lua_gettop(L);
        int rc = state->meta_rc == -EINTR ? -ETIMEDOUT : state->meta_rc;
        /* the result still goes back: an interrupted answer is one that did not come */
        push_bounded_message(L, b->self, rc,
                             lua_pushfstring(L, "%s '%s'", state->meta_what, o->run_name));
        lua_setfield(L, result_index, "metadata_error");
        lua_settop(L, result_index);
    }
    cm_result_strings(L, "verify_errors", state->target.verify_errors[0],
                      sizeof state->target.verify_errors[0], state->target.n_verify_errors);
}

/* Releases the target; a write whose run never started gives its claim back. */
static void pool_bench_close(struct cm_bench *b)
{
    struct pool_bench_state *state = b->state;
    struct pool_handle *pool = b->object;
    pool_bench_release(state, pool);
    pool_bench_pass_end(b, pool, false);
    if (state->claimed) {
        const struct pool_lua_options *o = b->options;
        pool_bench_unclaim(pool, o->run_name, state->marker, true);
        state->claimed = false;
    }
}

/* The bench's description: the pool:bench options above, run through cm_lua_bench. */
const struct cm_bench_def cm_rados_bench = {
    .what = "bench",
    .name = "rados",
    .options = pool_bench_options,
    .check_object = pool_object,
    .options_size = sizeof(struct pool_lua_options),
    .state_size = sizeof(struct pool_bench_state),
    .default_seconds = 10,
    .prepare = pool_bench_prepare,
    .open = pool_bench_open,
    .after_run = pool_bench_after_run,
    .result = pool_bench_result,
    .close = pool_bench_close,
};

int luaopen_cephmark_rados(lua_State *L)
{
    static const luaL_Reg cluster_methods[] = {
        {"close", cluster_close},
        {"conf_get", cluster_conf_get},
        {"fsid", cluster_fsid},
        {"mon_command", cluster_mon_command},
        {"command_counts", cluster_command_counts},
        {"osd_commands", cluster_osd_commands},
        {"pool", cluster_open_pool},
        {"pool_exists", cluster_pool_exists},
        {"wait_for_latest_osdmap", cluster_wait_for_latest_osdmap},
        {NULL, NULL},
    };
    static const luaL_Reg pool_methods[] = {
        {"close", pool_close},
        {"create_exclusive", pool_create_exclusive},
        {"delete", pool_delete_record},
        {"get", pool_get},
        {"id", pool_id},
        {"name", pool_name},
        {"objects", pool_objects},
        {"probe", pool_probe},
        {"put", pool_put},
        {"read", pool_read},
        {"remove", pool_remove},
        {"stat", pool_stat},
        {"unwatch", pool_unwatch},
        {"watch", pool_watch},
        {"write", pool_write},
        {"write_full", pool_write_full},
        {NULL, NULL},
    };
    static const luaL_Reg functions[] = {
        {"connect", rados_lua_connect},
        {"owner", rados_lua_owner},
        {"owner_state", rados_lua_owner_state},
        {NULL, NULL},
    };
    cm_lua_new_type(L, CLUSTER_TYPE, cluster_methods, cluster_close, cluster_tostring);
    lua_getfield(L, -1, "__index");
    int cluster_index = lua_gettop(L);
    cm_lua_new_type(L, POOL_TYPE, pool_methods, pool_close, pool_tostring);
    lua_getfield(L, -1, "__index");
    cm_bench_set_functions(L, &cm_rados_bench);
    lua_pop(L, 2);

    luaL_newlibtable(L, functions);
    lua_pushvalue(L, -1);
    luaL_setfuncs(L, functions, 1); /* functions see the module table: rados.defaults */
    lua_newtable(L);
    lua_setfield(L, -2, "defaults");
    int major, minor, extra;
    rados_version(&major, &minor, &extra);
    lua_pushfstring(L, "%d.%d.%d", major, minor, extra);
    lua_setfield(L, -2, "version");

    /* pool management is policy, written in Lua: it extends the cluster methods */
    lua_getglobal(L, "require");
    lua_pushliteral(L, "cephmark.rados.pools");
    lua_call(L, 1, 1);
    lua_pushvalue(L, cluster_index);
    lua_call(L, 1, 0);
    lua_remove(L, cluster_index - 1);
    lua_remove(L, cluster_index - 1);
    return 1;
}

/* For other C modules (rados_lua.h): included here, so this file's other parts stay as
 * they are. */
#include "rados_lua.h"

rados_ioctx_t cm_rados_check_pool(lua_State *L, int arg)
{
    return check_pool(L, arg)->ioctx;
}

void *cm_rados_pool_retain(lua_State *L, int arg)
{
    struct pool_handle *pool = check_pool(L, arg);
    pool->users++;
    return pool;
}

void cm_rados_pool_release(void *token)
{
    struct pool_handle *pool = token;
    if (pool && pool->users > 0) {
        pool->users--;
        pool_release(pool);
    }
}
