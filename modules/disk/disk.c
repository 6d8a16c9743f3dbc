/* The `cephmark.disk` Lua module: disk.bench runs the op engine against a file or block
 * device (disk_target.c: sequential or random reads or writes, O_DIRECT, fsync/fdatasync,
 * io_uring or synchronous I/O) and returns the engine's result with a dd-style summary;
 * disk.drop_caches empties the page cache (root only); disk.open returns a file handle whose
 * reads and writes block outside scripted workers and go through the disk target's
 * per-request submit inside them. */
#include "disk_target.h"
#include "engine_lua.h"
#include "lstate.h"
#include "registry.h"
#include "workers.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The region of a file that does not exist yet (or is empty) when no size is given. */
#define DEFAULT_NEW_FILE_SIZE (64ULL << 20)

/* Raises a failure of the world (the path, the filesystem) as one line for the operator. */
static int raise_world(lua_State *L, const char *message)
{
    lua_pushfstring(L, "disk.bench: %s", message);
    cm_push_user_error(L, 2, lua_tostring(L, -1));
    return lua_error(L);
}

static void set_number(lua_State *L, const char *key, double value)
{
    lua_pushnumber(L, value);
    lua_setfield(L, -2, key);
}

static void set_integer(lua_State *L, const char *key, uint64_t value)
{
    lua_pushinteger(L, (lua_Integer)value);
    lua_setfield(L, -2, key);
}

static void set_string(lua_State *L, const char *key, const char *value)
{
    lua_pushstring(L, value);
    lua_setfield(L, -2, key);
}

/* disk.bench's own options, beside the engine's (also published as disk.bench_options) */
static const char *const disk_bench_options[] = {
    "allow_block_device", "block_size", "count",   "direct", "engine", "huge_pages", "io_type",
    "overwrite",          "path",       "pattern", "remove", "seed",   "size",       "sync",
    "sync_when",          NULL};

/* disk.bench{path=, io_type="read"|"write", pattern="seq"|"rand", block_size=, size=,
 *   direct=true, engine="auto"|"io_uring"|"sync", sync="none"|"fsync"|"fdatasync",
 *   sync_when="end"|"op", allow_block_device=false, overwrite=false, remove=false,
 *   threads=1, seconds=, count= (or ops=), bytes=, rate=, warmup=, seed=, huge_pages=true,
 *   on_second=}
 *   -> result table */
static int disk_bench(lua_State *L)
{
    static const char *const io_types[] = {"read", "write", NULL};
    static const char *const patterns[] = {"seq", "rand", NULL};
    static const char *const engines[] = {"auto", "io_uring", "sync", NULL};
    static const char *const syncs[] = {"none", "fsync", "fdatasync", NULL};
    static const char *const sync_whens[] = {"end", "op", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    cm_lua_check_options(L, 1, "disk.bench", disk_bench_options, true);
    struct cm_disk_options options = {0};
    options.path = cm_lua_opt_string(L, 1, "path", NULL, "disk.bench");
    if (!options.path || !options.path[0])
        return luaL_error(L, "disk.bench: path is required (a file, or a block device with "
                             "allow_block_device = true for writes)");
    options.write =
        cm_lua_opt_choice(L, 1, "io_type", io_types, 0, "read or write", "disk.bench") == 1;
    options.random =
        cm_lua_opt_choice(L, 1, "pattern", patterns, 0, "seq or rand", "disk.bench") == 1;
    options.block_size = cm_lua_opt_size(L, 1, "block_size", 4096, "disk.bench");
    if (options.block_size == 0 || options.block_size > (1ULL << 30))
        return luaL_error(L, "disk.bench: block_size must be between 1 byte and 1G, got %I",
                          (lua_Integer)options.block_size);
    options.size = cm_lua_opt_size(L, 1, "size", 0, "disk.bench");
    options.direct = cm_lua_opt_bool(L, 1, "direct", 1, "disk.bench");
    options.engine = (enum cm_disk_engine)cm_lua_opt_choice(L, 1, "engine", engines, 0,
                                                            "auto, io_uring or sync", "disk.bench");
    options.sync = (enum cm_disk_sync)cm_lua_opt_choice(L, 1, "sync", syncs, 0,
                                                        "none, fsync or fdatasync", "disk.bench");
    options.sync_each =
        cm_lua_opt_choice(L, 1, "sync_when", sync_whens, 0, "end or op", "disk.bench") == 1;
    options.allow_block_device = cm_lua_opt_bool(L, 1, "allow_block_device", 0, "disk.bench");
    options.overwrite = cm_lua_opt_bool(L, 1, "overwrite", 0, "disk.bench");
    int remove_after = cm_lua_opt_bool(L, 1, "remove", 0, "disk.bench");
    options.seed = (uint64_t)cm_lua_opt_integer(L, 1, "seed", 0, 0, INT64_MAX, "disk.bench");
    options.huge_pages = cm_lua_opt_bool(L, 1, "huge_pages", 1, "disk.bench");

    /* dd's words: count is ops; one op in flight unless threads says otherwise */
    if (lua_getfield(L, 1, "count") != LUA_TNIL) {
        lua_setfield(L, 1, "ops");
    } else {
        lua_pop(L, 1);
    }
    if (lua_getfield(L, 1, "threads") == LUA_TNIL) {
        lua_pushinteger(L, 1);
        lua_setfield(L, 1, "threads");
    }
    lua_pop(L, 1);
    struct cm_engine_config config;
    struct cm_engine_lua bridge;
    cm_engine_lua_config(L, 1, "disk.bench", 0, &config, &bridge);
    cm_engine_lua_check_memory(L, &config, &bridge, options.block_size, 0, 0, "I/O buffers",
                               "lower threads or block_size", "disk.bench");
    if (options.engine == CM_DISK_SYNC && config.depth > 1) {
        cm_engine_lua_finish(&bridge);
        return luaL_error(L,
                          "disk.bench: engine \"sync\" keeps one op in flight; use threads = 1, "
                          "or engine = \"io_uring\" for threads = %d",
                          (int)config.depth);
    }
    options.depth = config.depth;

    /* a file that is not there yet (or empty) gets the region the bounds ask for */
    struct stat st;
    bool fresh = stat(options.path, &st) != 0 || (S_ISREG(st.st_mode) && st.st_size == 0);
    if (options.size == 0 && fresh) {
        options.size = DEFAULT_NEW_FILE_SIZE;
        if (config.max_bytes)
            options.size = config.max_bytes;
        else if (config.max_ops)
            options.size = config.max_ops * options.block_size;
    }

    struct cm_disk *disk = lua_newuserdatauv(L, sizeof *disk, 0);
    char error[1024];
    int rc = cm_disk_open(disk, &options, error, sizeof error);
    if (rc < 0) {
        cm_engine_lua_finish(&bridge);
        return raise_world(L, error);
    }
    if (!disk->use_uring)
        config.depth = 1;
    if (config.seconds == 0 && config.max_ops == 0 && config.max_bytes == 0)
        config.max_bytes = disk->size; /* one pass over the region, like dd */

    struct cm_engine_result result;
    rc = cm_engine_run(&config, &cm_disk_ops, disk, &result);
    int sync_rc = 0;
    double sync_seconds = rc == 0 ? cm_disk_sync_end(disk, &sync_rc) : 0;
    bool created = disk->created;
    cm_disk_close(disk);
    if (remove_after && created && !disk->block_device)
        unlink(options.path);
    if (rc < 0) {
        cm_engine_lua_finish(&bridge);
        return luaL_error(L, "disk.bench: cannot start: %s", strerror(-rc));
    }
    cm_engine_lua_push_result(L, &result, &config);
    cm_engine_result_free(&result);
    set_string(L, "op", "disk");
    set_string(L, "path", options.path);
    set_string(L, "io_type", io_types[options.write]);
    set_string(L, "pattern", patterns[options.random]);
    set_integer(L, "block_size", options.block_size);
    set_integer(L, "size", disk->size);
    lua_pushboolean(L, options.direct);
    lua_setfield(L, -2, "direct");
    lua_pushboolean(L, disk->block_device);
    lua_setfield(L, -2, "block_device");
    set_string(L, "engine", disk->use_uring ? "io_uring" : "sync");
    lua_pushboolean(L, disk->huge_buffers);
    lua_setfield(L, -2, "huge_pages");
    if (disk->fallback[0])
        set_string(L, "fallback", disk->fallback);
    set_string(L, "sync", syncs[options.sync]);
    set_string(L, "sync_when", sync_whens[options.sync_each]);
    if (disk->prepared_bytes) {
        set_integer(L, "prepared_bytes", disk->prepared_bytes);
        set_number(L, "prepare_seconds", disk->prepare_seconds);
    }
    if (sync_rc < 0) {
        lua_pushfstring(L, "the final %s of %s failed: %s", syncs[options.sync], options.path,
                        strerror(-sync_rc));
        lua_setfield(L, -2, "sync_error");
        lua_getfield(L, -1, "errors");
        lua_Integer errors = lua_tointeger(L, -1) + 1;
        lua_pop(L, 1);
        lua_pushinteger(L, errors);
        lua_setfield(L, -2, "errors");
        sync_seconds = 0;
    }
    set_number(L, "sync_seconds", sync_seconds);
    /* dd's summary: bytes moved, seconds including the final sync, MB/s in powers of 1000 */
    lua_getfield(L, -1, "bytes");
    lua_Integer bytes = lua_tointeger(L, -1);
    lua_getfield(L, -2, "elapsed");
    double seconds = lua_tonumber(L, -1) + sync_seconds;
    lua_pop(L, 2);
    lua_createtable(L, 0, 3);
    set_integer(L, "bytes", (uint64_t)bytes);
    set_number(L, "seconds", seconds);
    set_number(L, "mb_s", seconds > 0 ? (double)bytes / seconds / 1e6 : 0);
    lua_setfield(L, -2, "dd");
    cm_engine_lua_finish(&bridge);
    return 1;
}

/* disk.drop_caches() -> true | nil, message, code */
static int disk_drop_caches(lua_State *L)
{
    char error[256];
    int rc = cm_disk_drop_caches(error, sizeof error);
    if (rc < 0) {
        lua_pushnil(L);
        lua_pushstring(L, error);
        lua_pushinteger(L, rc);
        return 3;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- file handles ---------------------------------------------------------------------- */

#define FILE_TYPE "cephmark.disk.file"

struct disk_file {
    struct cm_disk disk; /* disk.fd is -1 once closed */
    bool remove;         /* unlink at close, when this handle created the file */
    char *path;          /* kept until collected: a worker phase's target (which keeps the handle
                          * alive) names the file with it */
};

static struct disk_file *check_file(lua_State *L, int arg)
{
    struct disk_file *file = luaL_checkudata(L, arg, FILE_TYPE);
    if (file->disk.fd < 0)
        luaL_argerror(L, arg, "file handle is closed");
    return file;
}

static int push_failure(lua_State *L, const char *message, int rc)
{
    lua_pushnil(L);
    lua_pushstring(L, message);
    lua_pushinteger(L, rc);
    return 3;
}

static int file_close(lua_State *L)
{
    struct disk_file *file = luaL_checkudata(L, 1, FILE_TYPE);
    if (file->disk.fd >= 0) {
        bool unlink_it = file->remove && file->disk.created && !file->disk.block_device;
        cm_disk_close(&file->disk);
        if (unlink_it)
            unlink(file->path);
    }
    return 0;
}

static int file_gc(lua_State *L)
{
    file_close(L);
    struct disk_file *file = luaL_checkudata(L, 1, FILE_TYPE);
    free(file->path);
    file->path = NULL;
    return 0;
}

static int file_tostring(lua_State *L)
{
    struct disk_file *file = luaL_checkudata(L, 1, FILE_TYPE);
    if (file->disk.fd < 0)
        lua_pushliteral(L, "disk file (closed)");
    else
        lua_pushfstring(L, "disk file '%s'", file->path);
    return 1;
}

/* disk.open's options (also published as disk.open_options) */
static const char *const disk_open_options[] = {
    "allow_block_device", "direct", "engine", "overwrite", "remove", "write", NULL};

/* disk.open(path [, {write=false, direct=false, overwrite=false, allow_block_device=false,
 *   remove=false, engine="auto"}]) -> file | nil, message, code
 * Writes follow disk.bench's rules: a missing file is created (exclusively), an existing
 * file is only written with overwrite = true, a block device only with
 * allow_block_device = true and never while mounted. */
static int disk_open(lua_State *L)
{
    static const char *const engines[] = {"auto", "io_uring", "sync", NULL};
    const char *path = luaL_checkstring(L, 1);
    if (!path[0])
        return luaL_argerror(L, 1, "path must not be empty");
    struct cm_disk_options options = {.path = path};
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        cm_lua_check_options(L, 2, "disk.open", disk_open_options, false);
        options.write = cm_lua_opt_bool(L, 2, "write", 0, "disk.open");
        options.direct = cm_lua_opt_bool(L, 2, "direct", 0, "disk.open");
        options.overwrite = cm_lua_opt_bool(L, 2, "overwrite", 0, "disk.open");
        options.allow_block_device = cm_lua_opt_bool(L, 2, "allow_block_device", 0, "disk.open");
        options.engine = (enum cm_disk_engine)cm_lua_opt_choice(
            L, 2, "engine", engines, 0, "auto, io_uring or sync", "disk.open");
    }
    bool remove = !lua_isnoneornil(L, 2) && cm_lua_opt_bool(L, 2, "remove", 0, "disk.open");
    struct disk_file *file = lua_newuserdatauv(L, sizeof *file, 0);
    memset(file, 0, sizeof *file);
    file->disk.fd = -1;
    luaL_setmetatable(L, FILE_TYPE);
    file->path = strdup(path);
    if (!file->path)
        return luaL_error(L, "disk.open: out of memory");
    options.path = file->path;
    char error[1024];
    int rc = cm_disk_open_file(&file->disk, &options, error, sizeof error);
    if (rc < 0)
        return push_failure(L, error, rc);
    file->disk.options.path = file->path;
    file->remove = remove;
    return 1;
}

/* Inside a scripted worker, file:read and file:write go through the file's disk target for
 * the worker phase (its submit_request, see runtime/workers.h), on a descriptor of its own,
 * and yield until the I/O completes. */
static void file_worker_release(void *instance)
{
    cm_disk_close(instance);
    free(instance);
}

static int file_worker_continue(lua_State *L, int status, lua_KContext context)
{
    (void)status;
    (void)context;
    struct cm_op *op = cm_worker_current(L);
    const struct cm_request *request = cm_worker_request(op);
    int64_t result = cm_worker_result(op);
    struct disk_file *file = luaL_checkudata(L, 1, FILE_TYPE);
    bool write = request->verb == CM_REQUEST_WRITE;
    if (result < 0) {
        if (request->message[0])
            return push_failure(L, request->message, (int)result);
        return push_failure(L,
                            lua_pushfstring(L, "cannot %s %s at offset %I: %s",
                                            write ? "write" : "read", file->path,
                                            (lua_Integer)request->offset, strerror((int)-result)),
                            (int)result);
    }
    if (write)
        lua_pushboolean(L, 1);
    else
        lua_pushlstring(L, request->buffer, (size_t)result);
    return 1;
}

static int file_worker_submit(lua_State *L, struct disk_file *file, struct cm_request *request)
{
    struct cm_worker_target *attached = cm_worker_target_find(L, file);
    if (!attached) {
        struct cm_disk *requests = malloc(sizeof *requests);
        if (!requests)
            return luaL_error(L, "out of memory for a worker's file target");
        char error[512];
        if (cm_disk_requests_init(requests, &file->disk, error, sizeof error) < 0) {
            cm_disk_close(requests);
            free(requests);
            return luaL_error(L, "%s", error);
        }
        attached = cm_worker_target_attach(L, 1, file, &cm_disk_ops, requests, file_worker_release);
        if (!attached)
            return luaL_error(L, "out of memory for a worker's file target");
    }
    if (request->verb == CM_REQUEST_READ) {
        request->buffer =
            cm_worker_scratch(cm_worker_current(L), request->length ? request->length : 1);
        if (!request->buffer)
            return luaL_error(L, "out of memory for a %I-byte worker read",
                              (lua_Integer)request->length);
    }
    return cm_worker_submit(L, attached, request, file_worker_continue, 0);
}

static uint64_t check_offset(lua_State *L, int arg)
{
    lua_Integer offset = luaL_checkinteger(L, arg);
    if (offset < 0)
        luaL_argerror(L, arg, "offset must not be negative");
    return (uint64_t)offset;
}

/* file:read(offset, length) -> data (shorter at the end of the file) | nil, message, code */
static int file_read(lua_State *L)
{
    struct disk_file *file = check_file(L, 1);
    uint64_t offset = check_offset(L, 2);
    lua_Integer length = luaL_checkinteger(L, 3);
    if (length < 0 || length > (1 << 30))
        return luaL_argerror(L, 3, "length must be between 0 and 1G");
    lua_settop(L, 3);
    if (cm_worker_current(L))
        return file_worker_submit(L, file,
                                  &(struct cm_request){.verb = CM_REQUEST_READ,
                                                       .offset = offset,
                                                       .length = (size_t)length});
    char error[512];
    luaL_Buffer b;
    char *space = luaL_buffinitsize(L, &b, (size_t)length);
    int64_t rc =
        cm_disk_file_io(&file->disk, false, offset, space, (size_t)length, error, sizeof error);
    if (rc < 0)
        return push_failure(L, error, (int)rc);
    luaL_pushresultsize(&b, (size_t)rc);
    return 1;
}

/* file:write(offset, data) -> true | nil, message, code */
static int file_write(lua_State *L)
{
    struct disk_file *file = check_file(L, 1);
    uint64_t offset = check_offset(L, 2);
    size_t length;
    const char *data = luaL_checklstring(L, 3, &length);
    if (!file->disk.options.write)
        return luaL_error(L,
                          "file:write: %s is open for reading only (disk.open with write = "
                          "true)",
                          file->path);
    lua_settop(L, 3);
    if (cm_worker_current(L))
        return file_worker_submit(
            L, file,
            &(struct cm_request){
                .verb = CM_REQUEST_WRITE, .offset = offset, .data = data, .data_length = length});
    char error[512];
    int64_t rc =
        cm_disk_file_io(&file->disk, true, offset, (void *)data, length, error, sizeof error);
    if (rc < 0)
        return push_failure(L, error, (int)rc);
    lua_pushboolean(L, 1);
    return 1;
}

/* file:size() -> bytes | nil, message, code */
static int file_size(lua_State *L)
{
    struct disk_file *file = check_file(L, 1);
    int64_t size = cm_disk_file_size(&file->disk);
    if (size < 0)
        return push_failure(
            L, lua_pushfstring(L, "cannot stat %s: %s", file->path, strerror((int)-size)),
            (int)size);
    lua_pushinteger(L, (lua_Integer)size);
    return 1;
}

int luaopen_cephmark_disk(lua_State *L)
{
    static const luaL_Reg file_methods[] = {
        {"close", file_close}, {"read", file_read}, {"size", file_size},
        {"write", file_write}, {NULL, NULL},
    };
    luaL_newmetatable(L, FILE_TYPE);
    luaL_newlib(L, file_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, file_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, file_close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, file_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    static const luaL_Reg functions[] = {
        {"bench", disk_bench},
        {"drop_caches", disk_drop_caches},
        {"open", disk_open},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    cm_lua_push_option_names(L, disk_bench_options, true);
    lua_setfield(L, -2, "bench_options");
    cm_lua_push_option_names(L, disk_open_options, false);
    lua_setfield(L, -2, "open_options");
    return 1;
}
