/* The `cephmark.disk` Lua module: disk.bench runs the op engine against a file or block
 * device (disk_target.c: sequential or random reads or writes, O_DIRECT, fsync/fdatasync,
 * io_uring or synchronous I/O) and returns the engine's result with a dd-style summary;
 * disk.drop_caches empties the page cache (root only). */
#include "disk_target.h"
#include "engine_lua.h"
#include "lstate.h"
#include "registry.h"

#include <errno.h>
#include <lauxlib.h>
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

int luaopen_cephmark_disk(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"bench", disk_bench},
        {"drop_caches", disk_drop_caches},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    cm_lua_push_option_names(L, disk_bench_options, true);
    lua_setfield(L, -2, "bench_options");
    return 1;
}
