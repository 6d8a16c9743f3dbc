/* The `cephmark.disk` Lua module: disk.bench runs the op engine against a file or block
 * device (disk_target.c: sequential or random reads or writes, O_DIRECT, fsync/fdatasync,
 * io_uring or synchronous I/O) and returns the engine's result with a dd-style summary;
 * disk.drop_caches empties the page cache (root only); disk.open returns a file handle whose
 * reads and writes block outside scripted workers and go through the disk target's
 * per-request submit inside them. */
#include "disk_target.h"
#include "bench_lua.h"
#include "distrib_lua.h"
#include "lstate.h"
#include "registry.h"
#include "workers.h"

#include <errno.h>
#include <lauxlib.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The region of a file that does not exist yet (or is empty) when no size is given. */
#define DEFAULT_NEW_FILE_SIZE (64ULL << 20)

/* What disk.bench reads from its options table (disk_options); open turns it into the
 * target's cm_disk_options. */
struct disk_lua_options {
    const char *path, *access;
    int io_type, pattern, engine, sync, sync_when;
    uint64_t block_size, size;
    bool direct, allow_block_device, overwrite, remove, huge_pages;
    int64_t seed, count;
};

static const char *const io_types[] = {"read", "write", NULL};
static const char *const patterns[] = {"seq", "rand", NULL};
static const char *const engines[] = {"auto", "io_uring", "sync", NULL};
static const char *const syncs[] = {"none", "fsync", "fdatasync", NULL};
static const char *const sync_whens[] = {"end", "op", NULL};

#define DISK_OPTION(field) offsetof(struct disk_lua_options, field)

static const struct cm_option disk_options[] = {
    {"access", CM_OPTION_STRING, DISK_OPTION(access), "uniform", 0, 0, NULL, CM_OPTION_NO_RESULT,
     "rand: which blocks: uniform, zipf:θ, pareto:h or hotspot:A/B (seeded by seed)"},
    {"allow_block_device", CM_OPTION_BOOL, DISK_OPTION(allow_block_device), "false", 0, 0, NULL, 0,
     "writes to a block device must be asked for (never to a mounted one)"},
    {"block_size", CM_OPTION_SIZE, DISK_OPTION(block_size), "4096", 0, 0, NULL, 0,
     "bytes per op, 1 byte to 1G (dd's bs)"},
    {"count", CM_OPTION_INTEGER, DISK_OPTION(count), "0", 0, INT64_MAX, NULL, CM_OPTION_NO_RESULT,
     "ops to run, dd's word for ops"},
    {"direct", CM_OPTION_BOOL, DISK_OPTION(direct), "true", 0, 0, NULL, 0,
     "O_DIRECT: bypass the page cache"},
    {"engine", CM_OPTION_CHOICE, DISK_OPTION(engine), "auto", 0, 0, engines, 0,
     "io_uring, or synchronous I/O with one op in flight; auto falls back to sync"},
    {"huge_pages", CM_OPTION_BOOL, DISK_OPTION(huge_pages), "true", 0, 0, NULL, 0,
     "buffers on transparent huge pages where the kernel gives them"},
    {"io_type", CM_OPTION_CHOICE, DISK_OPTION(io_type), "read", 0, 0, io_types, 0,
     "reads or writes"},
    {"overwrite", CM_OPTION_BOOL, DISK_OPTION(overwrite), "false", 0, 0, NULL, 0,
     "writes to a regular file that existed before must be asked for"},
    {"path", CM_OPTION_STRING, DISK_OPTION(path), NULL, 0, 0, NULL, 0,
     "the file, or block device, ops go to (required)"},
    {"pattern", CM_OPTION_CHOICE, DISK_OPTION(pattern), "seq", 0, 0, patterns, 0,
     "sequential offsets (wrapping at size) or random ones"},
    {"remove", CM_OPTION_BOOL, DISK_OPTION(remove), "false", 0, 0, NULL, 0,
     "remove the file afterwards if this run created it"},
    {"seed", CM_OPTION_INTEGER, DISK_OPTION(seed), "0", 0, INT64_MAX, NULL, 0,
     "seed of the random offsets; 0: from the clock"},
    {"size", CM_OPTION_SIZE, DISK_OPTION(size), "0", 0, 0, NULL, 0,
     "the region ops fall in; 0: the file's or device's size (a new file: what the bounds ask, "
     "or 64M)"},
    {"sync", CM_OPTION_CHOICE, DISK_OPTION(sync), "none", 0, 0, syncs, 0,
     "after writes: nothing, fsync or fdatasync"},
    {"sync_when", CM_OPTION_CHOICE, DISK_OPTION(sync_when), "end", 0, 0, sync_whens, 0,
     "sync once at the end, or after every write"},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL},
};

struct disk_state {
    struct cm_disk disk;
    struct cm_access_spec access;
    bool open;
    int sync_rc;
    double sync_seconds;
};

static void disk_bench_prepare(struct cm_bench *b)
{
    const struct disk_lua_options *o = b->options;
    lua_State *L = b->L;
    if (!o->path || !o->path[0])
        luaL_error(L, "disk.bench: path is required (a file, or a block device with "
                      "allow_block_device = true for writes)");
    if (o->block_size == 0 || o->block_size > (1ULL << 30))
        luaL_error(L, "disk.bench: block_size must be between 1 byte and 1G, got %I",
                   (lua_Integer)o->block_size);
    struct disk_state *state = b->state;
    cm_lua_access_spec(L, o->access, "disk.bench", &state->access);
    if (cm_bench_given(b, "access") && o->pattern != 1)
        luaL_error(L, "disk.bench: access applies to random offsets (pattern = \"rand\")");
}

static void disk_bench_open(struct cm_bench *b)
{
    const struct disk_lua_options *o = b->options;
    struct disk_state *state = b->state;
    struct cm_engine_config *config = &b->config;
    if (cm_bench_given(b, "count"))
        config->max_ops = (uint64_t)o->count;
    cm_bench_check_memory(b, o->block_size, 0, 0, "I/O buffers", "lower threads or block_size");
    if (o->engine == CM_DISK_SYNC && config->depth > 1)
        luaL_error(b->L,
                   "disk.bench: engine \"sync\" keeps one op in flight; use threads = 1, "
                   "or engine = \"io_uring\" for threads = %d",
                   (int)config->depth);
    struct cm_disk_options options = {
        .path = o->path,
        .write = o->io_type == 1,
        .random = o->pattern == 1,
        .block_size = o->block_size,
        .size = o->size,
        .direct = o->direct,
        .engine = (enum cm_disk_engine)o->engine,
        .sync = (enum cm_disk_sync)o->sync,
        .sync_each = o->sync_when == 1,
        .allow_block_device = o->allow_block_device,
        .overwrite = o->overwrite,
        .depth = config->depth,
        .seed = (uint64_t)o->seed,
        .access = state->access,
        .huge_pages = o->huge_pages,
    };
    /* a file that is not there yet (or empty) gets the region the bounds ask for */
    struct stat st;
    bool fresh = stat(o->path, &st) != 0 || (S_ISREG(st.st_mode) && st.st_size == 0);
    if (options.size == 0 && fresh) {
        options.size = DEFAULT_NEW_FILE_SIZE;
        if (config->max_bytes)
            options.size = config->max_bytes;
        else if (config->max_ops)
            options.size = config->max_ops * options.block_size;
    }
    char error[1024];
    if (cm_disk_open(&state->disk, &options, error, sizeof error) < 0)
        cm_bench_raise_world(b, error);
    state->open = true;
    if (!state->disk.use_uring)
        config->depth = 1;
    if (config->seconds == 0 && config->max_ops == 0 && config->max_bytes == 0)
        config->max_bytes = state->disk.size; /* one pass over the region, like dd */
    b->ops = &cm_disk_ops;
    b->target = &state->disk;
}

static void disk_bench_after_run(struct cm_bench *b, int rc)
{
    struct disk_state *state = b->state;
    if (rc == 0)
        state->sync_seconds = cm_disk_sync_end(&state->disk, &state->sync_rc);
}

static void disk_bench_result(struct cm_bench *b)
{
    const struct disk_lua_options *o = b->options;
    struct disk_state *state = b->state;
    struct cm_disk *disk = &state->disk;
    lua_State *L = b->L;
    cm_result_string(L, "op", "disk");
    cm_result_integer(L, "size", disk->size);
    cm_result_bool(L, "block_device", disk->block_device);
    cm_result_string(L, "engine", disk->use_uring ? "io_uring" : "sync");
    cm_result_bool(L, "huge_pages", disk->huge_buffers);
    if (o->pattern == 1) {
        char access[64];
        cm_access_format(&state->access, access, sizeof access);
        cm_result_string(L, "access", access);
    }
    if (disk->fallback[0])
        cm_result_string(L, "fallback", disk->fallback);
    if (disk->prepared_bytes) {
        cm_result_integer(L, "prepared_bytes", disk->prepared_bytes);
        cm_result_number(L, "prepare_seconds", disk->prepare_seconds);
    }
    double sync_seconds = state->sync_seconds;
    if (state->sync_rc < 0) {
        lua_pushfstring(L, "the final %s of %s failed: %s", syncs[o->sync], o->path,
                        strerror(-state->sync_rc));
        lua_setfield(L, -2, "sync_error");
        lua_getfield(L, -1, "errors");
        lua_Integer errors = lua_tointeger(L, -1) + 1;
        lua_pop(L, 1);
        cm_result_integer(L, "errors", (uint64_t)errors);
        sync_seconds = 0;
    }
    cm_result_number(L, "sync_seconds", sync_seconds);
    /* dd's summary: bytes moved, seconds including the final sync, MB/s in powers of 1000 */
    uint64_t bytes = b->result.bytes;
    double seconds = b->result.elapsed_s + sync_seconds;
    lua_createtable(L, 0, 3);
    cm_result_integer(L, "bytes", bytes);
    cm_result_number(L, "seconds", seconds);
    cm_result_number(L, "mb_s", seconds > 0 ? (double)bytes / seconds / 1e6 : 0);
    lua_setfield(L, -2, "dd");
}

static void disk_bench_close(struct cm_bench *b)
{
    const struct disk_lua_options *o = b->options;
    struct disk_state *state = b->state;
    if (!state->open)
        return;
    state->open = false;
    bool created = state->disk.created;
    cm_disk_close(&state->disk);
    if (o->remove && created && !state->disk.block_device)
        unlink(o->path);
}

const struct cm_bench_def cm_disk_bench = {
    .what = "disk.bench",
    .name = "disk",
    .options = disk_options,
    .options_size = sizeof(struct disk_lua_options),
    .state_size = sizeof(struct disk_state),
    .default_seconds = 0,
    .default_threads = 1,
    .prepare = disk_bench_prepare,
    .open = disk_bench_open,
    .after_run = disk_bench_after_run,
    .result = disk_bench_result,
    .close = disk_bench_close,
};

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
        return cm_lua_failure(L, rc, error);
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
            return cm_lua_failure(L, (int)result, request->message);
        return cm_lua_failure(
            L, (int)result,
            lua_pushfstring(L, "cannot %s %s at offset %I: %s", write ? "write" : "read",
                            file->path, (lua_Integer)request->offset, strerror((int)-result)));
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
        return cm_lua_failure(L, (int)rc, error);
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
        return cm_lua_failure(L, (int)rc, error);
    lua_pushboolean(L, 1);
    return 1;
}

/* file:size() -> bytes | nil, message, code */
static int file_size(lua_State *L)
{
    struct disk_file *file = check_file(L, 1);
    int64_t size = cm_disk_file_size(&file->disk);
    if (size < 0)
        return cm_lua_failure(
            L, (int)size,
            lua_pushfstring(L, "cannot stat %s: %s", file->path, strerror((int)-size)));
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
        {"drop_caches", disk_drop_caches},
        {"open", disk_open},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    /* disk.bench{path=, io_type="read"|"write", pattern="seq"|"rand", block_size=, size=,
     *   direct=true, engine="auto"|"io_uring"|"sync", sync="none"|"fsync"|"fdatasync",
     *   sync_when="end"|"op", allow_block_device=false, overwrite=false, remove=false,
     *   threads=1, seconds=, count= (or ops=), bytes=, rate=, warmup=, seed=,
     *   huge_pages=true, on_second=} -> result table */
    cm_bench_set_functions(L, &cm_disk_bench);
    cm_lua_push_option_names(L, disk_open_options, false);
    lua_setfield(L, -2, "open_options");
    return 1;
}
