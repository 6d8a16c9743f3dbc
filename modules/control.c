/* cephmark.control: the RADOS primitives that coordinate multi-client runs through the
 * cluster itself: omap entries (the agent registry), watch/notify (the control channel and
 * phase barriers, with the acks and timeouts of every notify decoded), the client's
 * instance id (to match notify timeouts to agents), and the exact merge of encoded latency
 * histograms that agents write back.
 *
 *   control.omap_get(pool, oid) -> {key = value}
 *   control.omap_set(pool, oid, {key = value} [, "existing"])
 *   control.omap_remove(pool, oid, {key, ...})        control.instance_id(pool) -> integer
 *   control.watch(pool, oid) -> watch                 watch:next(timeout) -> message | nil
 *   watch:ack(message, reply)  watch:check() -> ms | nil, err  watch:cookie()  watch:close()
 *   control.notify(pool, oid, payload, timeout) -> acks, timeouts
 *   control.histogram(result) -> blob   the encoded latency histogram of a bench result
 *   control.merge_histograms({blob, ...}) -> latency table (as a bench result's lat), blob
 *   control.merge_encoded(a | nil, b) -> blob | nil, err   two encodings merged, sparse
 *   control.hist_quantiles(blob) -> {count, p50, p99, p999, min, max} | nil, err (seconds)
 *
 * Watch callbacks run on librados threads: they only copy the payload onto a queue and
 * write an eventfd; the Lua thread takes messages with watch:next.
 *
 * Every call to the cluster here is bounded (cm_rados_wait: 10 s, 3 s once SIGINT came,
 * and a stop signal ends it): an agent whose cluster went away keeps failing its
 * heartbeats instead of blocking in one, and a stop signal still ends it. */
#include "engine_lua.h"
#include "hist.h"
#include "interrupt.h"
#include "rados_lua.h"
#include "rados_owner.h"
#include "lstate.h"
#include "registry.h"

#include <errno.h>
#include <lauxlib.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define WATCH_TYPE "cephmark.control.watch"
#define OMAP_PAGE  1000
/* Seconds after which the OSD drops the watch of a client that stopped answering its pings:
 * until then every notify waits (up to its timeout) for a dead agent. librados pings at a
 * fraction of this, so a live agent keeps its watch. */
#define WATCH_TIMEOUT 10

/* ------------------------------------------------------------------ omap */

/* One page of omap entries after `last`, with a bounded wait. The op's outputs live on the
 * heap: after a timeout the op may still write them, so they are then left to it. */
struct omap_page {
    rados_omap_iter_t iter;
    unsigned char more;
    int prval;
};

static int read_page_bounded(rados_ioctx_t io, const char *oid, const char *last,
                             struct omap_page **out)
{
    *out = NULL;
    struct omap_page *page = calloc(1, sizeof *page);
    rados_read_op_t op = rados_create_read_op();
    rados_completion_t completion = NULL;
    int rc = page && op ? rados_aio_create_completion2(NULL, NULL, &completion) : -ENOMEM;
    if (rc == 0) {
        rados_read_op_omap_get_vals2(op, last, "", OMAP_PAGE, &page->iter, &page->more,
                                     &page->prval);
        rc = rados_aio_read_op_operate(op, io, completion, oid, 0);
        if (rc < 0)
            rados_aio_release(completion);
        else
            rc = cm_rados_wait(io, completion, 0);
    }
    if (op)
        rados_release_read_op(op);
    /* the page stays with the op, which may still write it: leaked on purpose */
    if (rc == -ETIMEDOUT || rc == -EINTR)
        return rc; // NOLINT(clang-analyzer-unix.Malloc)
    if (rc == 0 && page->prval < 0)
        rc = page->prval;
    if (rc < 0) {
        if (page && page->iter)
            rados_omap_get_end(page->iter);
        free(page);
        return rc;
    }
    *out = page;
    return 0;
}

/* control.omap_get(pool, oid) -> {key = value}; a missing object is an empty table. */
static int control_omap_get(lua_State *L)
{
    rados_ioctx_t io = cm_rados_check_pool(L, 1);
    const char *oid = luaL_checkstring(L, 2);
    lua_newtable(L);
    char last[512] = "";
    for (;;) {
        struct omap_page *page;
        int rc = read_page_bounded(io, oid, last, &page);
        if (rc == -ENOENT)
            return 1;
        if (rc < 0)
            return cm_lua_errno_failure(L, rc, "reading omap");
        rados_omap_iter_t iter = page->iter;
        bool more = page->more;
        free(page);
        unsigned count = 0;
        for (;;) {
            char *key = NULL, *value = NULL;
            size_t key_len = 0, value_len = 0;
            if (rados_omap_get_next2(iter, &key, &value, &key_len, &value_len) < 0 || key == NULL)
                break;
            lua_pushlstring(L, key, key_len);
            lua_pushlstring(L, value ? value : "", value_len);
            lua_rawset(L, -3);
            size_t n = key_len < sizeof last - 1 ? key_len : sizeof last - 1;
            memcpy(last, key, n);
            last[n] = '\0';
            count++;
        }
        rados_omap_get_end(iter);
        if (!more || count == 0)
            return 1;
    }
}

/* Collects the strings of a {key = value} table (values) or a {key, ...} list (keys only)
 * into arrays that stay valid while the table is on the stack. */
static size_t collect(lua_State *L, int table, bool with_values, const char ***keys,
                      const char ***values, size_t **lengths)
{
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, table)) {
        n++;
        lua_pop(L, 1);
    }
    *keys = lua_newuserdatauv(L, (n + 1) * sizeof **keys, 0);
    *values = lua_newuserdatauv(L, (n + 1) * sizeof **values, 0);
    *lengths = lua_newuserdatauv(L, (n + 1) * sizeof **lengths, 0);
    size_t i = 0;
    lua_pushnil(L);
    while (lua_next(L, table)) {
        if (with_values) {
            if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
                luaL_error(L, "omap entries must be string keys with string values");
            (*keys)[i] = lua_tostring(L, -2);
            (*values)[i] = lua_tolstring(L, -1, &(*lengths)[i]);
        } else {
            if (lua_type(L, -1) != LUA_TSTRING)
                luaL_error(L, "omap keys to remove must be strings");
            (*keys)[i] = lua_tostring(L, -1);
        }
        i++;
        lua_pop(L, 1);
    }
    return n;
}

/* One omap write op on the object at arg 2 from the table at arg 3: set its entries
 * (creating the object, or only into an existing one) or remove its keys. */
static int omap_write(lua_State *L, bool set, bool existing)
{
    rados_ioctx_t io = cm_rados_check_pool(L, 1);
    const char *oid = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    const char **keys, **values;
    size_t *lengths;
    size_t n = collect(L, 3, set, &keys, &values, &lengths);
    size_t *key_lengths = lua_newuserdatauv(L, (n + 1) * sizeof *key_lengths, 0);
    for (size_t i = 0; i < n; i++)
        key_lengths[i] = strlen(keys[i]);
    rados_write_op_t op = rados_create_write_op();
    if (op == NULL)
        return luaL_error(L, "out of memory");
    if (set && existing) {
        rados_write_op_assert_exists(op);
        rados_write_op_omap_set2(op, keys, values, key_lengths, lengths, n);
    } else if (set) {
        rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
        rados_write_op_omap_set2(op, keys, values, key_lengths, lengths, n);
    } else {
        rados_write_op_omap_rm_keys2(op, keys, key_lengths, n);
    }
    int rc = cm_rados_operate_bounded(io, oid, op, 0, 0);
    if (rc < 0 && !(rc == -ENOENT && !set))
        return cm_lua_errno_failure(L, rc, set ? "writing omap" : "removing omap keys");
    lua_pushboolean(L, 1);
    return 1;
}

/* control.omap_set(pool, oid, {key = value} [, "existing"]) -> true | nil, err, code.
 * Creates the object, unless "existing" is given: then a missing object fails with ENOENT,
 * so that a late writer cannot bring back an object its owner has removed. */
static int control_omap_set(lua_State *L)
{
    static const char *const modes[] = {"create", "existing", NULL};
    bool existing = luaL_checkoption(L, 4, "create", modes) == 1;
    return omap_write(L, true, existing);
}

/* control.omap_remove(pool, oid, {key, ...}) -> true | nil, err, code */
static int control_omap_remove(lua_State *L)
{
    return omap_write(L, false, false);
}

/* control.instance_id(pool) -> the client's global id (client.<id>), as notify acks name it */
static int control_instance_id(lua_State *L)
{
    rados_ioctx_t io = cm_rados_check_pool(L, 1);
    lua_pushinteger(L, (lua_Integer)rados_get_instance_id(rados_ioctx_get_cluster(io)));
    return 1;
}

/* ------------------------------------------------------------------ watch */

struct message {
    struct message *next;
    uint64_t notify_id;
    uint64_t notifier_id;
    size_t length;
    char data[];
};

struct watch {
    rados_ioctx_t io;
    void *retained; /* the pool's handles, kept alive while the watch is */
    char *oid;
    uint64_t cookie;
    bool watching;
    bool lock_ready;
    int event_fd;
    int error; /* set by the error callback: the watch was lost (-ENOTCONN, ...) */
    pthread_mutex_t lock;
    struct message *head, *tail;
};

static void watch_callback(void *arg, uint64_t notify_id, uint64_t handle, uint64_t notifier_id,
                           void *data, size_t length)
{
    (void)handle;
    struct watch *w = arg;
    struct message *m = malloc(sizeof *m + length + 1);
    if (m == NULL)
        return; /* the notifier sees a timeout for this watcher */
    m->next = NULL;
    m->notify_id = notify_id;
    m->notifier_id = notifier_id;
    m->length = length;
    if (length)
        memcpy(m->data, data, length);
    m->data[length] = '\0';
    pthread_mutex_lock(&w->lock);
    if (w->tail)
        w->tail->next = m;
    else
        w->head = m;
    w->tail = m;
    pthread_mutex_unlock(&w->lock);
    uint64_t one = 1;
    ssize_t written = write(w->event_fd, &one, sizeof one);
    (void)written;
}

static void watch_error_callback(void *arg, uint64_t cookie, int err)
{
    (void)cookie;
    struct watch *w = arg;
    pthread_mutex_lock(&w->lock);
    w->error = err;
    pthread_mutex_unlock(&w->lock);
    uint64_t one = 1;
    ssize_t written = write(w->event_fd, &one, sizeof one);
    (void)written;
}

static struct watch *check_watch(lua_State *L, int arg)
{
    struct watch *w = luaL_checkudata(L, arg, WATCH_TYPE);
    if (!w->watching)
        luaL_argerror(L, arg, "the watch is closed");
    return w;
}

static int watch_close(lua_State *L)
{
    struct watch *w = luaL_checkudata(L, 1, WATCH_TYPE);
    if (w->watching) {
        w->watching = false;
        /* the watch is cancelled here at once (no callback comes after the flush); only
         * the OSD's answer is waited for, bounded */
        rados_completion_t completion;
        if (rados_aio_create_completion2(NULL, NULL, &completion) == 0) {
            if (rados_aio_unwatch(w->io, w->cookie, completion) == 0)
                cm_rados_wait(w->io, completion, 0);
            else
                rados_aio_release(completion);
        } else {
            rados_unwatch2(w->io, w->cookie);
        }
        rados_watch_flush(rados_ioctx_get_cluster(w->io));
    }
    if (w->retained) {
        cm_rados_pool_release(w->retained);
        w->retained = NULL;
    }
    struct message *m = w->head;
    while (m) {
        struct message *next = m->next;
        free(m);
        m = next;
    }
    w->head = w->tail = NULL;
    if (w->event_fd >= 0) {
        close(w->event_fd);
        w->event_fd = -1;
    }
    if (w->lock_ready) {
        w->lock_ready = false;
        pthread_mutex_destroy(&w->lock);
    }
    free(w->oid);
    w->oid = NULL;
    return 0;
}

/* control.watch(pool, oid) -> watch | nil, err, code; the object is created if missing */
static int control_watch(lua_State *L)
{
    rados_ioctx_t io = cm_rados_check_pool(L, 1);
    const char *oid = luaL_checkstring(L, 2);
    struct watch *w = lua_newuserdatauv(L, sizeof *w, 0);
    memset(w, 0, sizeof *w);
    w->event_fd = -1;
    pthread_mutex_init(&w->lock, NULL);
    w->lock_ready = true;
    luaL_setmetatable(L, WATCH_TYPE);
    w->oid = strdup(oid);
    w->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->oid == NULL || w->event_fd < 0)
        return luaL_error(L, "cannot set up a watch: %s", strerror(errno));
    rados_write_op_t create = rados_create_write_op();
    if (create == NULL)
        return luaL_error(L, "out of memory");
    rados_write_op_create(create, LIBRADOS_CREATE_IDEMPOTENT, NULL);
    int rc = cm_rados_operate_bounded(io, oid, create, 0, 0);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, "creating the control object");
    w->io = io;
    w->retained = cm_rados_pool_retain(L, 1);
    rc = rados_watch3(io, oid, &w->cookie, watch_callback, watch_error_callback, WATCH_TIMEOUT, w);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, "watching the control object");
    w->watching = true;
    return 1;
}

/* watch:next(timeout_seconds) -> {notify_id, notifier_id, payload} | nil (timeout);
 * raises when the watch was lost or on SIGINT (the interrupted error). */
static int watch_next(lua_State *L)
{
    struct watch *w = check_watch(L, 1);
    double timeout = luaL_optnumber(L, 2, 0);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        pthread_mutex_lock(&w->lock);
        struct message *m = w->head;
        if (m) {
            w->head = m->next;
            if (w->head == NULL)
                w->tail = NULL;
        }
        int error = w->error;
        pthread_mutex_unlock(&w->lock);
        if (m) {
            lua_createtable(L, 0, 3);
            lua_pushinteger(L, (lua_Integer)m->notify_id);
            lua_setfield(L, -2, "notify_id");
            lua_pushinteger(L, (lua_Integer)m->notifier_id);
            lua_setfield(L, -2, "notifier_id");
            lua_pushlstring(L, m->data, m->length);
            lua_setfield(L, -2, "payload");
            free(m);
            return 1;
        }
        if (error)
            return luaL_error(L, "the watch on %s was lost: %s", w->oid, strerror(-error));
        cm_interrupt_check(L);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited =
            (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
        if (waited >= timeout)
            return 0;
        struct pollfd fds[2] = {{.fd = w->event_fd, .events = POLLIN},
                                {.fd = cm_interrupt_fd(), .events = POLLIN}};
        int left_ms = (int)((timeout - waited) * 1000) + 1;
        poll(fds, cm_interrupt_fd() >= 0 ? 2 : 1, left_ms);
        uint64_t drained;
        ssize_t got = read(w->event_fd, &drained, sizeof drained);
        (void)got;
    }
}

/* watch:ack(message, reply) -> true | nil, err, code */
static int watch_ack(lua_State *L)
{
    struct watch *w = check_watch(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t length = 0;
    const char *reply = luaL_optlstring(L, 3, "", &length);
    lua_getfield(L, 2, "notify_id");
    uint64_t notify_id = (uint64_t)luaL_checkinteger(L, -1);
    int rc = rados_notify_ack(w->io, w->oid, notify_id, w->cookie, reply, (int)length);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, "acknowledging a notify");
    lua_pushboolean(L, 1);
    return 1;
}

/* watch:check() -> milliseconds since the watch was last confirmed | nil, err, code */
static int watch_check(lua_State *L)
{
    struct watch *w = check_watch(L, 1);
    int rc = rados_watch_check(w->io, w->cookie);
    if (rc < 0)
        return cm_lua_errno_failure(L, rc, "checking the watch");
    lua_pushinteger(L, rc);
    return 1;
}

static int watch_cookie(lua_State *L)
{
    struct watch *w = check_watch(L, 1);
    lua_pushinteger(L, (lua_Integer)w->cookie);
    return 1;
}

/* ------------------------------------------------------------------ notify */

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* control.notify(pool, oid, payload, timeout_seconds) -> acks, timeouts
 * acks = {{gid =, cookie =, reply =}}, timeouts = {{gid =, cookie =}}. A notify that timed
 * out for some watchers still returns (rados reports -ETIMEDOUT with the reply buffer). */
static int control_notify(lua_State *L)
{
    rados_ioctx_t io = cm_rados_check_pool(L, 1);
    const char *oid = luaL_checkstring(L, 2);
    size_t length = 0;
    const char *payload = luaL_optlstring(L, 3, "", &length);
    double timeout = luaL_optnumber(L, 4, 10);
    luaL_argcheck(L, timeout > 0 && timeout <= 3600, 4, "timeout must be 0 < t <= 3600 seconds");
    char *reply = NULL;
    size_t reply_length = 0;
    int rc = rados_notify2(io, oid, payload, (int)length, (uint64_t)(timeout * 1000), &reply,
                           &reply_length);
    if (rc < 0 && rc != -ETIMEDOUT) {
        if (reply)
            rados_buffer_free(reply);
        return cm_lua_errno_failure(L, rc, "notify");
    }
    /* a timed-out notify may have no reply at all: then no acks */
    const unsigned char *p = (const unsigned char *)reply, *end = reply ? p + reply_length : p;
    lua_newtable(L); /* acks */
    lua_newtable(L); /* timeouts */
    if (reply == NULL)
        return 2;
#define NEED(n)                                                                                    \
    do {                                                                                           \
        if ((size_t)(end - p) < (size_t)(n))                                                       \
            goto malformed;                                                                        \
    } while (0)
    NEED(4);
    uint32_t acks = (uint32_t)get_le(p, 4);
    p += 4;
    for (uint32_t i = 0; i < acks; i++) {
        NEED(20);
        uint64_t gid = get_le(p, 8), cookie = get_le(p + 8, 8);
        uint32_t n = (uint32_t)get_le(p + 16, 4);
        p += 20;
        NEED(n);
        lua_createtable(L, 0, 3);
        lua_pushinteger(L, (lua_Integer)gid);
        lua_setfield(L, -2, "gid");
        lua_pushinteger(L, (lua_Integer)cookie);
        lua_setfield(L, -2, "cookie");
        lua_pushlstring(L, (const char *)p, n);
        lua_setfield(L, -2, "reply");
        lua_rawseti(L, -3, (lua_Integer)i + 1);
        p += n;
    }
    NEED(4);
    uint32_t timeouts = (uint32_t)get_le(p, 4);
    p += 4;
    for (uint32_t i = 0; i < timeouts; i++) {
        NEED(16);
        lua_createtable(L, 0, 2);
        lua_pushinteger(L, (lua_Integer)get_le(p, 8));
        lua_setfield(L, -2, "gid");
        lua_pushinteger(L, (lua_Integer)get_le(p + 8, 8));
        lua_setfield(L, -2, "cookie");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
        p += 16;
    }
#undef NEED
    rados_buffer_free(reply);
    return 2;
malformed:
    rados_buffer_free(reply);
    return luaL_error(L, "notify: malformed reply buffer (%d bytes)", (int)reply_length);
}

/* ------------------------------------------------------------------ histograms */

/* control.merge_histograms({blob, ...}) -> latency table, merged blob. Blobs come from
 * control.histogram(result) on each client. */
static int control_merge_histograms(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    cm_hist *merged = cm_hist_new();
    cm_hist *part = cm_hist_new();
    if (merged == NULL || part == NULL) {
        cm_hist_free(merged);
        cm_hist_free(part);
        return luaL_error(L, "out of memory");
    }
    lua_Integer n = luaL_len(L, 1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 1, i);
        size_t length = 0;
        const char *blob = lua_tolstring(L, -1, &length);
        int rc = blob ? cm_hist_decode(part, (const unsigned char *)blob, length) : -EINVAL;
        if (rc == 0)
            rc = cm_hist_merge(merged, part);
        lua_pop(L, 1);
        if (rc < 0) {
            cm_hist_free(merged);
            cm_hist_free(part);
            return luaL_error(L, "histogram %d cannot be merged: %s", (int)i, strerror(-rc));
        }
    }
    cm_engine_lua_push_latency(L, merged);
    size_t size = cm_hist_encoded_size(merged);
    luaL_Buffer buffer;
    unsigned char *out = (unsigned char *)luaL_buffinitsize(L, &buffer, size);
    size_t written = cm_hist_encode(merged, out, size);
    luaL_pushresultsize(&buffer, written);
    cm_hist_free(merged);
    cm_hist_free(part);
    return 2;
}

/* control.merge_encoded(a | nil, b) -> the encoding of the merge of two encodings, computed
 * on their sparse bucket lists (cm_hist_merge_encoded): folding many small histograms, such
 * as every agent's histogram of one second, costs their lengths, not 127 KiB each. An input
 * that is not an encoding is a failure of the data an agent wrote: nil, message. */
static int control_merge_encoded(lua_State *L)
{
    size_t alen = 0, blen = 0;
    const char *a = lua_isnoneornil(L, 1) ? NULL : luaL_checklstring(L, 1, &alen);
    const char *b = luaL_checklstring(L, 2, &blen);
    unsigned char *out = NULL;
    size_t out_len = 0;
    int rc = cm_hist_merge_encoded((const unsigned char *)a, alen, (const unsigned char *)b, blen,
                                   &out, &out_len);
    if (rc < 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "histograms cannot be merged: %s", strerror(-rc));
        return 2;
    }
    lua_pushlstring(L, (const char *)out, out_len);
    free(out);
    return 1;
}

static void set_seconds(lua_State *L, const char *name, uint64_t ns)
{
    lua_pushnumber(L, (double)ns / 1e9);
    lua_setfield(L, -2, name);
}

/* control.hist_quantiles(blob) -> {count, p50, p99, p999, min, max} (seconds) of one
 * encoding, or nil, message when it is not one. */
static int control_hist_quantiles(lua_State *L)
{
    size_t length = 0;
    const char *blob = luaL_checklstring(L, 1, &length);
    cm_hist *hist = cm_hist_new();
    if (hist == NULL)
        return luaL_error(L, "out of memory");
    int rc = cm_hist_decode(hist, (const unsigned char *)blob, length);
    if (rc < 0) {
        cm_hist_free(hist);
        lua_pushnil(L);
        lua_pushfstring(L, "not a histogram encoding: %s", strerror(-rc));
        return 2;
    }
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, (lua_Integer)cm_hist_count(hist));
    lua_setfield(L, -2, "count");
    set_seconds(L, "p50", cm_hist_percentile(hist, 50.0));
    set_seconds(L, "p99", cm_hist_percentile(hist, 99.0));
    set_seconds(L, "p999", cm_hist_percentile(hist, 99.9));
    set_seconds(L, "min", cm_hist_min(hist));
    set_seconds(L, "max", cm_hist_max(hist));
    cm_hist_free(hist);
    return 1;
}

/* control.histogram(result) -> the encoded latency histogram of a bench result | nil */
static int control_histogram(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    cm_engine_lua_push_histogram(L, 1);
    return 1;
}

int luaopen_cephmark_control(lua_State *L)
{
    static const luaL_Reg watch_methods[] = {
        {"ack", watch_ack},       {"check", watch_check}, {"close", watch_close},
        {"cookie", watch_cookie}, {"next", watch_next},   {NULL, NULL},
    };
    static const luaL_Reg functions[] = {
        {"hist_quantiles", control_hist_quantiles},
        {"histogram", control_histogram},
        {"instance_id", control_instance_id},
        {"merge_encoded", control_merge_encoded},
        {"merge_histograms", control_merge_histograms},
        {"notify", control_notify},
        {"omap_get", control_omap_get},
        {"omap_remove", control_omap_remove},
        {"omap_set", control_omap_set},
        {"watch", control_watch},
        {NULL, NULL},
    };
    cm_lua_new_type(L, WATCH_TYPE, watch_methods, watch_close, NULL);
    lua_pop(L, 1);
    luaL_newlib(L, functions);
    return 1;
}
