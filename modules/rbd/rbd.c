/* The `cephmark.rbd` Lua module: RBD images on a cephmark.rados pool handle (create,
 * remove, list, open), image I/O (blocking, or submitted asynchronously inside scripted
 * workers), and image:bench, the rbd target of the op engine (rbd_target.c). */
#include "bench_lua.h"
#include "distrib_lua.h"
#include "lstate.h"
#include "rados_lua.h"
#include "rbd_target.h"
#include "registry.h"
#include "units.h"
#include "workers.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define IMAGE_TYPE "cephmark.rbd.image"

/* The image keeps its pool handle (user value 1) alive, and with it the cluster. */
struct image_handle {
    struct cm_rbd_image image; /* image.image is NULL once closed */
    void *pool_token;          /* keeps the pool's librados handles alive while open */
};

static struct image_handle *check_image(lua_State *L, int arg)
{
    struct image_handle *handle = luaL_checkudata(L, arg, IMAGE_TYPE);
    if (handle->image.image == NULL)
        luaL_argerror(L, arg, "image handle is closed");
    return handle;
}

static int push_io_failure(lua_State *L, struct image_handle *handle, int rc, const char *verb,
                           uint64_t offset)
{
    return cm_lua_failure(L, rc,
                          lua_pushfstring(L, "%s image '%s' at offset %I: %s", verb,
                                          handle->image.name, (lua_Integer)offset, strerror(-rc)));
}

/* A size argument: a non-negative integer or a string like "1G". */
static uint64_t check_size_arg(lua_State *L, int arg, const char *what)
{
    if (lua_type(L, arg) == LUA_TSTRING) {
        uint64_t bytes;
        char error[256];
        if (cm_parse_size(lua_tostring(L, arg), &bytes, error, sizeof error) < 0)
            luaL_error(L, "%s: %s", what, error);
        return bytes;
    }
    int ok = 0;
    lua_Integer n = lua_tointegerx(L, arg, &ok);
    if (!ok || n < 0)
        luaL_error(L, "%s: size must be a non-negative integer or a string like \"1G\", got %s",
                   what, lua_isnoneornil(L, arg) ? "nothing" : luaL_tolstring(L, arg, NULL));
    return (uint64_t)n;
}

static uint64_t check_offset_arg(lua_State *L, int arg)
{
    lua_Integer offset = luaL_checkinteger(L, arg);
    if (offset < 0)
        luaL_argerror(L, arg, "offset must not be negative");
    return (uint64_t)offset;
}

/* Beyond the image: the caller's offsets are wrong (misuse), not the cluster. */
static void check_extent(lua_State *L, struct image_handle *handle, const char *what,
                         uint64_t offset, uint64_t length)
{
    uint64_t size = 0;
    int rc = rbd_get_size(handle->image.image, &size);
    if (rc < 0)
        luaL_error(L, "%s: cannot get the size of image '%s': %s", what, handle->image.name,
                   strerror(-rc));
    if (offset > size || length > size - offset) {
        char text[32];
        cm_format_size(size, text, sizeof text);
        luaL_error(L, "%s: offset %I + length %I is beyond the end of image '%s' (%I bytes, %s)",
                   what, (lua_Integer)offset, (lua_Integer)length, handle->image.name,
                   (lua_Integer)size, text);
    }
}

/* ---- module functions ---------------------------------------------------------------- */

static const char *check_image_name(lua_State *L, int arg)
{
    size_t length;
    const char *name = luaL_checklstring(L, arg, &length);
    if (length == 0)
        luaL_argerror(L, arg, "image name must not be empty");
    return name;
}

/* rbd.create(pool, name, {size=, object_size=, features={...}, data_pool=, overcommit=})
 *   -> true | nil, message, code */
static int rbd_lua_create(lua_State *L)
{
    static const char *const known[] = {"data_pool",  "features", "object_size",
                                        "overcommit", "size",     NULL};
    rados_ioctx_t io = cm_rados_check_pool(L, 1);
    const char *name = check_image_name(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    cm_lua_check_options(L, 3, "rbd.create", known, false);
    struct cm_rbd_create_options options = {0};

    if (lua_getfield(L, 3, "size") == LUA_TNIL)
        return luaL_error(L, "rbd.create: size is required (bytes, or a string like \"1G\")");
    lua_pop(L, 1);
    options.size = cm_lua_opt_size(L, 3, "size", 0, "rbd.create");

    uint64_t object_size = cm_lua_opt_size(L, 3, "object_size", 0, "rbd.create");
    if (object_size) {
        if ((object_size & (object_size - 1)) || object_size < 4096 || object_size > (32 << 20)) {
            char text[32];
            cm_format_size(object_size, text, sizeof text);
            return luaL_error(L,
                              "rbd.create: object_size must be a power of two between 4 KiB and "
                              "32 MiB, got %s (%I)",
                              text, (lua_Integer)object_size);
        }
        options.order = __builtin_ctzll(object_size);
    }

    int type = lua_getfield(L, 3, "features");
    if (type == LUA_TTABLE) {
        options.has_features = true;
        lua_Integer n = luaL_len(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            if (lua_geti(L, -1, i) != LUA_TSTRING)
                return luaL_error(L,
                                  "rbd.create: features must be an array of names, item %I "
                                  "is a %s",
                                  i, luaL_typename(L, -1));
            uint64_t bit = cm_rbd_feature_bit(lua_tostring(L, -1));
            if (!bit)
                return luaL_error(L, "rbd.create: unknown feature '%s' (expected %s)",
                                  lua_tostring(L, -1), cm_rbd_feature_choices());
            options.features |= bit;
            lua_pop(L, 1);
        }
        char error[256];
        if (cm_rbd_features_check(options.features, error, sizeof error) < 0)
            return luaL_error(L, "rbd.create: %s", error);
    } else if (type != LUA_TNIL) {
        return luaL_error(L,
                          "rbd.create: features must be an array of names like "
                          "{\"layering\", \"exclusive-lock\"}, got a %s",
                          luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    options.data_pool = cm_lua_opt_string(L, 3, "data_pool", NULL, "rbd.create");
    options.overcommit = cm_lua_opt_bool(L, 3, "overcommit", 0, "rbd.create");

    char error[1024];
    int rc = cm_rbd_create(io, name, &options, error, sizeof error);
    if (rc < 0)
        return cm_lua_failure(L, rc, error);
    lua_pushboolean(L, 1);
    return 1;
}

/* rbd.remove(pool, name) -> true | nil, message, code */
static int rbd_lua_remove(lua_State *L)
{
    rados_ioctx_t io = cm_rados_check_pool(L, 1);
    const char *name = check_image_name(L, 2);
    char error[512];
    int rc = cm_rbd_remove(io, name, error, sizeof error);
    if (rc < 0)
        return cm_lua_failure(L, rc, error);
    lua_pushboolean(L, 1);
    return 1;
}

/* rbd.list(pool) -> array of image names | nil, message, code */
static int rbd_lua_list(lua_State *L)
{
    rados_ioctx_t io = cm_rados_check_pool(L, 1);
    size_t max = 64;
    rbd_image_spec_t *images = NULL;
    int rc;
    for (;;) {
        rbd_image_spec_t *grown = realloc(images, max * sizeof *images);
        if (!grown) {
            free(images);
            return luaL_error(L, "rbd.list: out of memory");
        }
        images = grown;
        size_t n = max;
        rc = rbd_list2(io, images, &n);
        if (rc == -ERANGE) {
            max = n > max ? n : max * 2;
            continue;
        }
        if (rc < 0)
            break;
        lua_createtable(L, (int)n, 0);
        for (size_t i = 0; i < n; i++) {
            lua_pushstring(L, images[i].name);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        rbd_image_spec_list_cleanup(images, n);
        free(images);
        return 1;
    }
    free(images);
    char pool[160];
    if (rados_ioctx_get_pool_name(io, pool, sizeof pool) < 0)
        strcpy(pool, "?");
    lua_pushnil(L);
    lua_pushfstring(L, "cannot list the images of pool '%s': %s", pool, strerror(-rc));
    lua_pushinteger(L, rc);
    return 3;
}

/* rbd.open(pool, name [, {cache=, read_only=}]) -> image | nil, message, code */
static int rbd_lua_open(lua_State *L)
{
    static const char *const known[] = {"cache", "read_only", NULL};
    rados_ioctx_t io = cm_rados_check_pool(L, 1);
    const char *name = check_image_name(L, 2);
    int cache = CM_RBD_CACHE_DEFAULT;
    bool read_only = false;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        cm_lua_check_options(L, 3, "rbd.open", known, false);
        cache = cm_lua_opt_bool(L, 3, "cache", CM_RBD_CACHE_DEFAULT, "rbd.open");
        read_only = cm_lua_opt_bool(L, 3, "read_only", 0, "rbd.open");
    }
    lua_settop(L, 3);
    struct image_handle *handle = lua_newuserdatauv(L, sizeof *handle, 1);
    cm_rbd_image_init(&handle->image);
    handle->pool_token = NULL;
    luaL_setmetatable(L, IMAGE_TYPE);
    char error[1024];
    int rc = cm_rbd_open(&handle->image, io, name, cache, read_only, error, sizeof error);
    if (rc < 0)
        return cm_lua_failure(L, rc, error);
    handle->pool_token = cm_rados_pool_retain(L, 1);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

/* ---- image methods ------------------------------------------------------------------- */

static int image_close(lua_State *L)
{
    struct image_handle *handle = luaL_checkudata(L, 1, IMAGE_TYPE);
    if (handle->image.bench_run_id)
        return luaL_error(L, "image:close: a bench is running on image '%s'", handle->image.name);
    if (handle->image.worker_targets)
        return luaL_error(L,
                          "image:close: scripted workers are using image '%s' (close it after "
                          "their phase)",
                          handle->image.name);
    cm_rbd_close(&handle->image);
    cm_rados_pool_release(handle->pool_token);
    handle->pool_token = NULL;
    return 0;
}

static int image_tostring(lua_State *L)
{
    struct image_handle *handle = luaL_checkudata(L, 1, IMAGE_TYPE);
    if (handle->image.image == NULL)
        lua_pushliteral(L, "rbd image (closed)");
    else
        lua_pushfstring(L, "rbd image '%s/%s'", handle->image.pool, handle->image.name);
    return 1;
}

/* image:info() -> {name=, pool=, size=, object_size=, order=, objects=, features={...},
 *   data_pool=, block_name_prefix=, read_only=, cache=} */
static int image_info(lua_State *L)
{
    struct image_handle *handle = check_image(L, 1);
    rbd_image_t image = handle->image.image;
    rbd_image_info_t info;
    uint64_t features = 0;
    char prefix[RBD_MAX_BLOCK_NAME_SIZE + 8] = "";
    int rc = rbd_stat(image, &info, sizeof info);
    if (rc == 0)
        rc = rbd_get_features(image, &features);
    if (rc == 0)
        rc = rbd_get_block_name_prefix(image, prefix, sizeof prefix);
    if (rc < 0)
        return cm_lua_failure(
            L, rc, lua_pushfstring(L, "info of image '%s': %s", handle->image.name, strerror(-rc)));
    lua_createtable(L, 0, 12);
    lua_pushstring(L, handle->image.name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, handle->image.pool);
    lua_setfield(L, -2, "pool");
    lua_pushinteger(L, (lua_Integer)info.size);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, (lua_Integer)info.obj_size);
    lua_setfield(L, -2, "object_size");
    lua_pushinteger(L, info.order);
    lua_setfield(L, -2, "order");
    lua_pushinteger(L, (lua_Integer)info.num_objs);
    lua_setfield(L, -2, "objects");
    lua_newtable(L);
    lua_Integer n = 0;
    for (int bit = 0; bit < 64; bit++) {
        if (!(features & (1ULL << bit)))
            continue;
        const char *feature = cm_rbd_feature_name(1ULL << bit);
        if (feature)
            lua_pushstring(L, feature);
        else
            lua_pushfstring(L, "bit %d", bit);
        lua_rawseti(L, -2, ++n);
    }
    lua_setfield(L, -2, "features");
    lua_pushstring(L, prefix);
    lua_setfield(L, -2, "block_name_prefix");
    lua_pushboolean(L, handle->image.read_only);
    lua_setfield(L, -2, "read_only");
    lua_pushboolean(L, handle->image.cache);
    lua_setfield(L, -2, "cache");

    lua_getiuservalue(L, 1, 1);
    rados_ioctx_t io = cm_rados_check_pool(L, -1);
    lua_pop(L, 1);
    int64_t data_pool = rbd_get_data_pool_id(image);
    if (data_pool >= 0 && data_pool != rados_ioctx_get_id(io)) {
        char name[256];
        if (rados_pool_reverse_lookup(rados_ioctx_get_cluster(io), data_pool, name, sizeof name) <
            0)
            snprintf(name, sizeof name, "pool id %lld", (long long)data_pool);
        lua_pushstring(L, name);
        lua_setfield(L, -2, "data_pool");
    }
    return 1;
}

/* image:resize(size) -> true | nil, message, code (shrinking discards the tail) */
static int image_resize(lua_State *L)
{
    struct image_handle *handle = check_image(L, 1);
    uint64_t size = check_size_arg(L, 2, "image:resize");
    int rc = rbd_resize(handle->image.image, size);
    if (rc < 0)
        return cm_lua_failure(L, rc,
                              lua_pushfstring(L, "resize image '%s' to %I bytes: %s",
                                              handle->image.name, (lua_Integer)size,
                                              strerror(-rc)));
    lua_pushboolean(L, 1);
    return 1;
}

/* Inside a scripted worker, image:read and image:write go through the image's rbd target
 * for the worker phase (its submit_request, see runtime/workers.h) and yield until the op
 * completes; the read lands in the worker's scratch space. The target is made on the
 * image's first use in the phase; the image cannot be closed until the phase ends. */
struct image_worker_target {
    struct cm_rbd_target target;
    struct cm_rbd_image *image;
};

static void image_worker_release(void *instance)
{
    struct image_worker_target *worker = instance;
    /* nothing is in flight once the phase has drained: what is queued goes */
    if (worker->image->image)
        cm_rbd_drain_completions(worker->image, 0);
    worker->image->worker_targets--;
    cm_rbd_target_fini(&worker->target);
    free(worker);
}

static int image_worker_continue(lua_State *L, int status, lua_KContext context)
{
    (void)status;
    (void)context;
    struct cm_op *op = cm_worker_current(L);
    struct image_handle *handle = luaL_checkudata(L, 1, IMAGE_TYPE);
    const struct cm_request *request = cm_worker_request(op);
    int64_t result = cm_worker_result(op);
    bool read = request->verb == CM_REQUEST_READ;
    if (result < 0)
        return push_io_failure(L, handle, (int)result, read ? "read" : "write", request->offset);
    if (read)
        lua_pushlstring(L, request->buffer,
                        (size_t)result < request->length ? (size_t)result : request->length);
    else
        lua_pushboolean(L, 1);
    return 1;
}

static int image_worker_submit(lua_State *L, struct image_handle *handle,
                               struct cm_request *request)
{
    struct cm_worker_target *target = cm_worker_target_find(L, handle);
    if (!target) {
        struct image_worker_target *worker = malloc(sizeof *worker);
        if (!worker)
            return luaL_error(L, "out of memory for a worker's image target");
        cm_rbd_target_init_requests(&worker->target, &handle->image);
        worker->image = &handle->image;
        handle->image.worker_targets++;
        target = cm_worker_target_attach(L, 1, handle, &cm_rbd_target_ops, &worker->target,
                                         image_worker_release);
        if (!target)
            return luaL_error(L, "out of memory for a worker's image target");
    }
    if (request->verb == CM_REQUEST_READ) {
        struct cm_op *op = cm_worker_current(L);
        request->buffer = cm_worker_scratch(op, request->length ? request->length : 1);
        if (!request->buffer)
            return luaL_error(L, "out of memory for a %I-byte worker read",
                              (lua_Integer)request->length);
    }
    return cm_worker_submit(L, target, request, image_worker_continue, 0);
}

/* image:read(offset, length) -> data | nil, message, code */
static int image_read(lua_State *L)
{
    struct image_handle *handle = check_image(L, 1);
    uint64_t offset = check_offset_arg(L, 2);
    lua_Integer length = luaL_checkinteger(L, 3);
    if (length < 0)
        return luaL_argerror(L, 3, "length must not be negative");
    check_extent(L, handle, "image:read", offset, (uint64_t)length);
    lua_settop(L, 3);
    if (cm_worker_current(L))
        return image_worker_submit(L, handle,
                                   &(struct cm_request){.verb = CM_REQUEST_READ,
                                                        .offset = offset,
                                                        .length = (size_t)length});
    luaL_Buffer b;
    char *space = luaL_buffinitsize(L, &b, (size_t)length);
    ssize_t rc = length > 0 ? rbd_read2(handle->image.image, offset, (size_t)length, space, 0) : 0;
    if (rc < 0)
        return push_io_failure(L, handle, (int)rc, "read", offset);
    luaL_pushresultsize(&b, (size_t)rc);
    return 1;
}

/* image:write(offset, data) -> true | nil, message, code */
static int image_write(lua_State *L)
{
    struct image_handle *handle = check_image(L, 1);
    uint64_t offset = check_offset_arg(L, 2);
    size_t length;
    const char *data = luaL_checklstring(L, 3, &length);
    check_extent(L, handle, "image:write", offset, length);
    lua_settop(L, 3);
    if (cm_worker_current(L))
        return image_worker_submit(
            L, handle,
            &(struct cm_request){
                .verb = CM_REQUEST_WRITE, .offset = offset, .data = data, .data_length = length});
    ssize_t rc = length > 0 ? rbd_write2(handle->image.image, offset, length, data, 0) : 0;
    if (rc < 0)
        return push_io_failure(L, handle, (int)rc, "write", offset);
    lua_pushboolean(L, 1);
    return 1;
}

/* image:discard(offset, length) -> true | nil, message, code */
static int image_discard(lua_State *L)
{
    struct image_handle *handle = check_image(L, 1);
    uint64_t offset = check_offset_arg(L, 2);
    lua_Integer length = luaL_checkinteger(L, 3);
    if (length < 0)
        return luaL_argerror(L, 3, "length must not be negative");
    check_extent(L, handle, "image:discard", offset, (uint64_t)length);
    int rc = length > 0 ? rbd_discard(handle->image.image, offset, (uint64_t)length) : 0;
    if (rc < 0)
        return push_io_failure(L, handle, rc, "discard", offset);
    lua_pushboolean(L, 1);
    return 1;
}

/* image:flush() -> true | nil, message, code: written data is on the OSDs (and, with the
 * rbd cache, writeback starts after the first flush). */
static int image_flush(lua_State *L)
{
    struct image_handle *handle = check_image(L, 1);
    int rc = rbd_flush(handle->image.image);
    if (rc < 0)
        return cm_lua_failure(
            L, rc, lua_pushfstring(L, "flush image '%s': %s", handle->image.name, strerror(-rc)));
    lua_pushboolean(L, 1);
    return 1;
}

/* image:bench's own options, beside the engine's (also published as image.bench_options) */
/* What image:bench reads from its options table (image_options). */
struct image_lua_options {
    const char *access;
    int io_type, pattern;
    uint64_t io_size;
    int64_t rw_mix_read;
    bool verify;
};

static const char *const io_types[] = {"read", "write", "readwrite", NULL};
static const char *const patterns[] = {"seq", "rand", NULL};

#define IMAGE_OPTION(field) offsetof(struct image_lua_options, field)

static const struct cm_option image_options[] = {
    {"access", CM_OPTION_STRING, IMAGE_OPTION(access), "uniform", 0, 0, NULL, CM_OPTION_NO_RESULT,
     "random offsets: which blocks: uniform, zipf:θ, pareto:h or hotspot:A/B"},
    {"io_size", CM_OPTION_SIZE, IMAGE_OPTION(io_size), "4096", 0, 0, NULL, 0,
     "bytes per op, a positive multiple of 512 (rbd bench --io-size)"},
    {"io_type", CM_OPTION_CHOICE, IMAGE_OPTION(io_type), "write", 0, 0, io_types, 0,
     "reads, writes or a mix of both (rbd bench --io-type)"},
    {"pattern", CM_OPTION_CHOICE, IMAGE_OPTION(pattern), "seq", 0, 0, patterns, 0,
     "sequential or random offsets (rbd bench --io-pattern)"},
    {"rw_mix_read", CM_OPTION_INTEGER, IMAGE_OPTION(rw_mix_read), "50", 0, 100, NULL, 0,
     "readwrite: percent of reads (rbd bench --rw-mix-read)"},
    {"verify", CM_OPTION_BOOL, IMAGE_OPTION(verify), "true", 0, 0, NULL, 0,
     "check every read against what was written"},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL},
};

struct image_state {
    struct cm_rbd_target target;
    struct cm_rbd_target_options options;
    bool open;
};

/* image:bench{io_type=, io_size=, threads=, pattern=, access=, rw_mix_read=, seconds=, ops=,
 * bytes=, rate=, warmup=, verify=, on_second=} -> result table (raises on misuse) */
static void *image_object(lua_State *L, int arg)
{
    return check_image(L, arg);
}

static void image_bench_prepare(struct cm_bench *b)
{
    struct image_handle *handle = b->object;
    const struct image_lua_options *o = b->options;
    struct cm_rbd_target_options *options = &((struct image_state *)b->state)->options;
    if (handle->image.bench_run_id)
        luaL_error(b->L, "image:bench: a bench is already running on image '%s'",
                   handle->image.name);
    if (o->io_size == 0 || o->io_size % 512 != 0)
        luaL_error(b->L, "bench: io_size must be a positive multiple of 512 bytes, got %I",
                   (lua_Integer)o->io_size);
    options->io_type = (enum cm_rbd_io_type)o->io_type;
    options->pattern = (enum cm_rbd_pattern)o->pattern;
    options->io_size = o->io_size;
    options->rw_mix_read = options->io_type == CM_RBD_IO_READ    ? 100
                           : options->io_type == CM_RBD_IO_WRITE ? 0
                                                                 : (unsigned)o->rw_mix_read;
    options->verify = o->verify;
    cm_lua_access_spec(b->L, o->access, "image:bench", &options->access);
    if (cm_bench_given(b, "access") && options->pattern != CM_RBD_RAND)
        luaL_error(b->L, "image:bench: access applies to random offsets (pattern = \"rand\")");
}

static void image_bench_open(struct cm_bench *b)
{
    struct image_handle *handle = b->object;
    struct image_state *state = b->state;
    struct cm_rbd_target_options *options = &state->options;
    /* a buffer per slot, and librbd's copy of each op in flight; the payload and its stage */
    uint64_t rbd_slot = (options->io_size + 4095) / 4096 * 4096;
    cm_bench_check_memory(b, rbd_slot, options->io_size, 3 * options->io_size + (1 << 20),
                          "I/O buffers", "lower threads or io_size");
    options->depth = b->config.depth;
    char error[512];
    int rc = cm_rbd_target_init(&state->target, &handle->image, options, error, sizeof error);
    if (rc < 0) {
        if (rc == -EINVAL || rc == -EROFS)
            luaL_error(b->L, "bench: %s", error);
        cm_bench_raise_world(b, error);
    }
    state->open = true;
    handle->image.bench_run_id = state->target.run_id;
    b->ops = &cm_rbd_target_ops;
    b->target = &state->target;
}

static void image_bench_result(struct cm_bench *b)
{
    struct image_handle *handle = b->object;
    struct image_state *state = b->state;
    struct cm_rbd_target *target = &state->target;
    lua_State *L = b->L;
    cm_result_string(L, "op", "rbd");
    cm_result_integer(L, "rw_mix_read", state->options.rw_mix_read);
    if (state->options.pattern == CM_RBD_RAND) {
        char access[64];
        cm_access_format(&state->options.access, access, sizeof access);
        cm_result_string(L, "access", access);
    }
    cm_result_string(L, "image", handle->image.name);
    cm_result_string(L, "pool", handle->image.pool);
    cm_result_integer(L, "image_size", target->size);
    cm_result_bool(L, "cache", handle->image.cache);
    cm_result_integer(L, "verify_skipped", target->verify_skipped);
    cm_result_strings(L, "verify_errors", target->verify_errors[0], sizeof target->verify_errors[0],
                      target->n_verify_errors);
    if (target->metadata_error[0])
        cm_result_string(L, "metadata_error", target->metadata_error);
}

static void image_bench_close(struct cm_bench *b)
{
    struct image_handle *handle = b->object;
    struct image_state *state = b->state;
    if (!state->open)
        return;
    state->open = false;
    handle->image.bench_run_id = 0;
    cm_rbd_target_fini(&state->target);
}

/* The bench's description: the image:bench options above, run through cm_lua_bench. */
const struct cm_bench_def cm_rbd_bench = {
    .what = "bench",
    .name = "rbd",
    .options = image_options,
    .check_object = image_object,
    .options_size = sizeof(struct image_lua_options),
    .state_size = sizeof(struct image_state),
    .default_seconds = 10,
    .prepare = image_bench_prepare,
    .open = image_bench_open,
    .result = image_bench_result,
    .close = image_bench_close,
};

int luaopen_cephmark_rbd(lua_State *L)
{
    /* librbd is loaded when the module is first required (rbd_api.h) */
    char error[512];
    if (cm_rbd_load(error, sizeof error) < 0)
        return luaL_error(L, "cephmark.rbd: %s", error);
    static const luaL_Reg image_methods[] = {
        {"close", image_close}, {"discard", image_discard},
        {"flush", image_flush}, {"info", image_info},
        {"read", image_read},   {"resize", image_resize},
        {"write", image_write}, {NULL, NULL},
    };
    static const luaL_Reg functions[] = {
        {"create", rbd_lua_create}, {"list", rbd_lua_list}, {"open", rbd_lua_open},
        {"remove", rbd_lua_remove}, {NULL, NULL},
    };
    cm_lua_new_type(L, IMAGE_TYPE, image_methods, image_close, image_tostring);
    lua_getfield(L, -1, "__index");
    cm_bench_set_functions(L, &cm_rbd_bench);
    lua_pop(L, 2);

    luaL_newlib(L, functions);
    int major, minor, extra;
    rbd_version(&major, &minor, &extra);
    lua_pushfstring(L, "%d.%d.%d", major, minor, extra);
    lua_setfield(L, -2, "version");
    return 1;
}
