/* RBD images over librbd: features, creation with the checks librbd leaves to its log,
 * removal, open with the completion event fd, and the drain of that fd's queue; see
 * rbd_image.h. */
#include "splitmix.h"
#include "rbd_image.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* ---- features ---------------------------------------------------------------------------- */

static const struct {
    const char *name;
    uint64_t bit;
    bool settable; /* a user may ask for it at creation */
} feature_table[] = {
    {RBD_FEATURE_NAME_LAYERING, RBD_FEATURE_LAYERING, true},
    {RBD_FEATURE_NAME_STRIPINGV2, RBD_FEATURE_STRIPINGV2, false},
    {RBD_FEATURE_NAME_EXCLUSIVE_LOCK, RBD_FEATURE_EXCLUSIVE_LOCK, true},
    {RBD_FEATURE_NAME_OBJECT_MAP, RBD_FEATURE_OBJECT_MAP, true},
    {RBD_FEATURE_NAME_FAST_DIFF, RBD_FEATURE_FAST_DIFF, true},
    {RBD_FEATURE_NAME_DEEP_FLATTEN, RBD_FEATURE_DEEP_FLATTEN, true},
    {RBD_FEATURE_NAME_JOURNALING, RBD_FEATURE_JOURNALING, true},
    {RBD_FEATURE_NAME_DATA_POOL, RBD_FEATURE_DATA_POOL, false},
    {RBD_FEATURE_NAME_OPERATIONS, RBD_FEATURE_OPERATIONS, false},
    {RBD_FEATURE_NAME_MIGRATING, RBD_FEATURE_MIGRATING, false},
    {RBD_FEATURE_NAME_NON_PRIMARY, RBD_FEATURE_NON_PRIMARY, false},
    {RBD_FEATURE_NAME_DIRTY_CACHE, RBD_FEATURE_DIRTY_CACHE, false},
};

#define N_FEATURES (sizeof feature_table / sizeof feature_table[0])

uint64_t cm_rbd_feature_bit(const char *name)
{
    for (size_t i = 0; i < N_FEATURES; i++)
        if (feature_table[i].settable && strcmp(name, feature_table[i].name) == 0)
            return feature_table[i].bit;
    return 0;
}

const char *cm_rbd_feature_name(uint64_t bit)
{
    for (size_t i = 0; i < N_FEATURES; i++)
        if (feature_table[i].bit == bit)
            return feature_table[i].name;
    return NULL;
}

const char *cm_rbd_feature_choices(void)
{
    return "layering, exclusive-lock, object-map, fast-diff, deep-flatten or journaling";
}

int cm_rbd_features_check(uint64_t features, char *error, size_t error_size)
{
    static const struct {
        uint64_t feature, needs;
    } rules[] = {
        {RBD_FEATURE_OBJECT_MAP, RBD_FEATURE_EXCLUSIVE_LOCK},
        {RBD_FEATURE_FAST_DIFF, RBD_FEATURE_OBJECT_MAP},
        {RBD_FEATURE_JOURNALING, RBD_FEATURE_EXCLUSIVE_LOCK},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if ((features & rules[i].feature) && !(features & rules[i].needs)) {
            snprintf(error, error_size, "feature %s needs %s",
                     cm_rbd_feature_name(rules[i].feature), cm_rbd_feature_name(rules[i].needs));
            return -EINVAL;
        }
    }
    return 0;
}

/* ---- mon queries --------------------------------------------------------------------------
 * The pool's quota and free space come from the mons as JSON. The few numbers needed are
 * found by key in the compact JSON the mons write, so the pure-C layer needs no parser. */

/* Runs a mon command; returns its JSON output as a NUL-terminated malloc'd string. */
static int mon_json(rados_t cluster, const char *command, char **json)
{
    const char *commands[1] = {command};
    char *out = NULL, *status = NULL;
    size_t out_len = 0, status_len = 0;
    *json = NULL;
    int rc = rados_mon_command(cluster, commands, 1, "", 0, &out, &out_len, &status, &status_len);
    rados_buffer_free(status);
    if (rc < 0) {
        rados_buffer_free(out);
        return rc;
    }
    char *text = malloc(out_len + 1);
    if (!text) {
        rados_buffer_free(out);
        return -ENOMEM;
    }
    if (out_len)
        memcpy(text, out, out_len);
    text[out_len] = '\0';
    rados_buffer_free(out);
    *json = text;
    return 0;
}

/* The unsigned number after "key": at or after `from`; false if there is none. */
static bool json_number(const char *from, const char *key, uint64_t *value)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\":", key);
    const char *at = from ? strstr(from, needle) : NULL;
    if (!at)
        return false;
    at += strlen(needle);
    while (*at == ' ')
        at++;
    if (*at < '0' || *at > '9')
        return false;
    *value = strtoull(at, NULL, 10);
    return true;
}

/* A pool's entry in `osd pool ls detail` (part of the osdmap: no mgr needed): its type
 * (1 replicated, 3 erasure) and quotas. -ENOENT when the pool is not listed. */
struct pool_detail {
    uint64_t type, max_bytes, max_objects;
};

#define POOL_TYPE_ERASURE 3

static int get_pool_detail(rados_t cluster, const char *pool, struct pool_detail *detail)
{
    char *json = NULL;
    memset(detail, 0, sizeof *detail);
    int rc = mon_json(
        cluster, "{\"prefix\":\"osd pool ls\",\"detail\":\"detail\",\"format\":\"json\"}", &json);
    if (rc < 0)
        return rc;
    char needle[256];
    snprintf(needle, sizeof needle, "\"pool_name\":\"%s\",", pool);
    const char *entry = strstr(json, needle);
    rc = entry ? 0 : -ENOENT;
    json_number(entry, "type", &detail->type);
    json_number(entry, "quota_max_bytes", &detail->max_bytes);
    json_number(entry, "quota_max_objects", &detail->max_objects);
    free(json);
    return rc;
}

/* Refuses an image its pool cannot hold: above the pool's quota (cephmark's images write
 * with FULL_TRY, so writes that grow the pool past it fail with EDQUOT), or above what the
 * pool can still store (`ceph df` MAX AVAIL, known only when a mgr reports statistics). */
static int check_pool_room(rados_t cluster, const char *image, const char *pool, uint64_t size,
                           uint64_t object_size, char *error, size_t error_size)
{
    char have[32], want[32];
    char *json = NULL;
    struct pool_detail detail;
    get_pool_detail(cluster, pool, &detail);
    uint64_t max_bytes = detail.max_bytes, max_objects = detail.max_objects;
    cm_format_size(size, want, sizeof want);
    if (max_bytes && size > max_bytes) {
        cm_format_size(max_bytes, have, sizeof have);
        snprintf(error, error_size,
                 "image '%s' (%s) is larger than the quota of pool '%s' (max_bytes %s): writes "
                 "past the quota fail with EDQUOT; raise it with `ceph osd pool set-quota %s "
                 "max_bytes N`, or pass overcommit = true",
                 image, want, pool, have, pool);
        return -EDQUOT;
    }
    uint64_t objects = object_size ? (size + object_size - 1) / object_size : 0;
    if (max_objects && objects > max_objects) {
        snprintf(error, error_size,
                 "image '%s' (%s) needs %" PRIu64 " objects, more than the quota of pool '%s' "
                 "(max_objects %" PRIu64 "): writes past the quota fail with EDQUOT; raise it "
                 "with `ceph osd pool set-quota %s max_objects N`, or pass overcommit = true",
                 image, want, objects, pool, max_objects, pool);
        return -EDQUOT;
    }

    if (mon_json(cluster, "{\"prefix\":\"df\",\"format\":\"json\"}", &json) < 0)
        return 0;
    uint64_t total = 0, avail = 0;
    char needle[256];
    snprintf(needle, sizeof needle, "\"name\":\"%s\",", pool);
    const char *entry = strstr(json, needle);
    if (json_number(json, "total_bytes", &total) && total > 0 && entry &&
        json_number(entry, "max_avail", &avail) && size > avail) {
        cm_format_size(avail, have, sizeof have);
        snprintf(error, error_size,
                 "image '%s' (%s) is larger than pool '%s' can still store (%s, `ceph df` MAX "
                 "AVAIL): pass overcommit = true to create it anyway",
                 image, want, pool, have);
        free(json);
        return -ENOSPC;
    }
    free(json);
    return 0;
}

/* ---- images ------------------------------------------------------------------------------ */

static void pool_name_of(rados_ioctx_t io, char *out, size_t n)
{
    if (rados_ioctx_get_pool_name(io, out, (unsigned)n) < 0)
        snprintf(out, n, "?");
}

/* Marks the pool as an rbd pool, as `rbd pool init` does (no POOL_APP_NOT_ENABLED warning).
 * A pool already tagged for another application is left as it is. */
static void enable_rbd_application(rados_ioctx_t io)
{
    (void)rados_application_enable(io, "rbd", 0);
}

/* The data pool: it must exist and accept partial overwrites (an EC pool needs
 * allow_ec_overwrites, which the mons only allow on bluestore OSDs). */
static int check_data_pool(rados_t cluster, const char *image, const char *data_pool, char *error,
                           size_t error_size)
{
    rados_ioctx_t data;
    int rc = rados_ioctx_create(cluster, data_pool, &data);
    if (rc == -ENOENT) {
        snprintf(error, error_size, "image '%s': data pool '%s' does not exist", image, data_pool);
        return rc;
    }
    if (rc < 0) {
        snprintf(error, error_size, "image '%s': cannot open data pool '%s': %s", image, data_pool,
                 strerror(-rc));
        return rc;
    }
    int requires_alignment = 0;
    rc = rados_ioctx_pool_requires_alignment2(data, &requires_alignment);
    if (rc == 0 && requires_alignment) {
        snprintf(error, error_size,
                 "image '%s': data pool '%s' is erasure-coded without overwrites; enable them "
                 "with `ceph osd pool set %s allow_ec_overwrites true` (the mons allow it only "
                 "when the pool's OSDs are all bluestore)",
                 image, data_pool, data_pool);
        rados_ioctx_destroy(data);
        return -EINVAL;
    }
    enable_rbd_application(data);
    rados_ioctx_destroy(data);
    return 0;
}

/* librbd's limit for images with an object map (RBD_OBJECT_MAP_MAX_OBJECTS). */
#define OBJECT_MAP_MAX 256000000ULL

int cm_rbd_create(rados_ioctx_t io, const char *name, const struct cm_rbd_create_options *options,
                  char *error, size_t error_size)
{
    rados_t cluster = rados_ioctx_get_cluster(io);
    char pool[160];
    pool_name_of(io, pool, sizeof pool);
    int rc;
    if (options->has_features &&
        (rc = cm_rbd_features_check(options->features, error, error_size)) < 0) {
        char why[160];
        snprintf(why, sizeof why, "%s", error);
        snprintf(error, error_size, "image '%s': %s", name, why);
        return rc;
    }
    if (options->data_pool &&
        (rc = check_data_pool(cluster, name, options->data_pool, error, error_size)) < 0)
        return rc;
    struct pool_detail detail;
    if (get_pool_detail(cluster, pool, &detail) == 0 && detail.type == POOL_TYPE_ERASURE) {
        snprintf(error, error_size,
                 "cannot create image '%s' in pool '%s': an erasure-coded pool cannot hold "
                 "image metadata; create the image in a replicated pool with data_pool = '%s'",
                 name, pool, pool);
        return -EINVAL;
    }
    char default_order[16] = "22";
    if (!options->order)
        rados_conf_get(cluster, "rbd_default_order", default_order, sizeof default_order);
    int order = options->order ? options->order : (int)strtol(default_order, NULL, 10);
    uint64_t object_size = 1ULL << (order >= 12 && order <= 25 ? order : 22);
    if (!options->overcommit) {
        const char *data_pool = options->data_pool ? options->data_pool : pool;
        if ((rc = check_pool_room(cluster, name, data_pool, options->size, object_size, error,
                                  error_size)) < 0)
            return rc;
    }

    rbd_image_options_t opts;
    rbd_image_options_create(&opts);
    rc = rbd_image_options_set_uint64(opts, RBD_IMAGE_OPTION_FORMAT, 2);
    if (rc == 0 && options->order)
        rc = rbd_image_options_set_uint64(opts, RBD_IMAGE_OPTION_ORDER, (uint64_t)options->order);
    if (rc == 0 && options->has_features)
        rc = rbd_image_options_set_uint64(opts, RBD_IMAGE_OPTION_FEATURES, options->features);
    if (rc == 0 && options->data_pool)
        rc = rbd_image_options_set_string(opts, RBD_IMAGE_OPTION_DATA_POOL, options->data_pool);
    if (rc == 0) {
        enable_rbd_application(io);
        rc = rbd_create4(io, name, options->size, opts);
    }
    rbd_image_options_destroy(opts);
    if (rc == -EEXIST)
        snprintf(error, error_size, "image '%s' already exists in pool '%s'", name, pool);
    else if (rc == -EINVAL && (options->size + object_size - 1) / object_size > OBJECT_MAP_MAX)
        snprintf(error, error_size,
                 "cannot create image '%s' in pool '%s': %s (%" PRIu64 " objects of %" PRIu64
                 " bytes are more than the object-map feature handles, %llu: use a larger "
                 "object_size, or features without object-map)",
                 name, pool, strerror(-rc), (options->size + object_size - 1) / object_size,
                 object_size, OBJECT_MAP_MAX);
    else if (rc < 0)
        snprintf(error, error_size, "cannot create image '%s' in pool '%s': %s", name, pool,
                 strerror(-rc));
    return rc;
}

int cm_rbd_remove(rados_ioctx_t io, const char *name, char *error, size_t error_size)
{
    char pool[160];
    pool_name_of(io, pool, sizeof pool);
    int rc = rbd_remove(io, name);
    if (rc == -ENOENT)
        snprintf(error, error_size, "image '%s' does not exist in pool '%s'", name, pool);
    else if (rc == -EBUSY)
        snprintf(error, error_size,
                 "image '%s' in pool '%s' is still open (it has watchers): close it first", name,
                 pool);
    else if (rc == -ENOTEMPTY)
        snprintf(error, error_size, "image '%s' in pool '%s' has snapshots: remove them first",
                 name, pool);
    else if (rc < 0)
        snprintf(error, error_size, "cannot remove image '%s' from pool '%s': %s", name, pool,
                 strerror(-rc));
    return rc;
}

void cm_rbd_image_init(struct cm_rbd_image *image)
{
    memset(image, 0, sizeof *image);
    image->image = NULL;
    image->io = NULL;
    image->event_fd = -1;
}

/* A boolean librbd option as it applies to the open image (client, pool or image
 * configuration), and where the value came from. */
int cm_rbd_config_bool(rbd_image_t image, const char *name, bool *value,
                       rbd_config_source_t *source)
{
    int max = 0;
    int rc = rbd_config_image_list(image, NULL, &max);
    if (rc < 0 && rc != -ERANGE)
        return rc;
    rbd_config_option_t *options = calloc((size_t)max + 1, sizeof *options);
    if (!options)
        return -ENOMEM;
    rc = rbd_config_image_list(image, options, &max);
    if (rc < 0) {
        free(options);
        return rc;
    }
    rc = -ENOENT;
    for (int i = 0; i < max; i++) {
        if (strcmp(options[i].name, name) == 0) {
            *value = strcmp(options[i].value, "true") == 0;
            *source = options[i].source;
            rc = 0;
        }
    }
    rbd_config_image_list_cleanup(options, max);
    free(options);
    return rc;
}

/* rbd_cache as librbd applied it to the open image, and where the value came from. */
static int effective_cache(rbd_image_t image, bool *cache, rbd_config_source_t *source)
{
    return cm_rbd_config_bool(image, "rbd_cache", cache, source);
}

/* The ioctx an image gets of its own, on `io`'s pool and namespace, with FULL_TRY: writes
 * to a pool past its quota or to a full cluster then fail with EDQUOT or ENOSPC instead of
 * waiting in librados until space appears, which would hang a bench and then the image's
 * close. 0 or -errno. */
static int open_image_ioctx(rados_ioctx_t io, rados_ioctx_t *own)
{
    char nspace[256];
    int rc = rados_ioctx_create2(rados_ioctx_get_cluster(io), rados_ioctx_get_id(io), own);
    if (rc < 0)
        return rc;
    int nspace_len = rados_ioctx_get_namespace(io, nspace, sizeof nspace);
    if (nspace_len > 0 && (size_t)nspace_len < sizeof nspace)
        rados_ioctx_set_namespace(*own, nspace);
    rados_set_pool_full_try(*own);
    return 0;
}

/* The sentence for an open whose rbd_cache is not the one asked for (`applied` is what
 * librbd applied): the pool's or image's own config (rbd config pool|image set) beats the
 * client's, and the sentence says where to look. */
static void cache_refused(const char *name, const char *pool, bool applied,
                          rbd_config_source_t source, char *error, size_t error_size)
{
    const char *by = applied ? "on" : "off", *want = applied ? "false" : "true";
    if (source == RBD_CONFIG_SOURCE_IMAGE)
        snprintf(error, error_size,
                 "image '%s': rbd_cache is %s by the image's configuration (`rbd config image "
                 "get %s/%s rbd_cache`), which overrides cache = %s",
                 name, by, pool, name, want);
    else if (source == RBD_CONFIG_SOURCE_POOL)
        snprintf(error, error_size,
                 "image '%s': rbd_cache is %s by the pool's configuration (`rbd config pool "
                 "get %s rbd_cache`), which overrides cache = %s",
                 name, by, pool, want);
    else
        snprintf(error, error_size, "image '%s': rbd_cache stayed %s, not cache = %s", name, by,
                 want);
}

/* rbd_cache is read when an image opens: it decides whether librbd puts a cache layer in
 * the image's I/O path, for the handle's life. A client has one configuration for all its
 * images, so a per-image choice sets the option on the cluster handle around rbd_open
 * only and restores it at once (the Lua state is single-threaded: no other open races). */
int cm_rbd_open(struct cm_rbd_image *image, rados_ioctx_t io, const char *name, int cache,
                bool read_only, char *error, size_t error_size)
{
    rados_t cluster = rados_ioctx_get_cluster(io);
    rados_ioctx_t own = NULL;
    rbd_image_t handle = NULL;
    bool applied = false;
    rbd_config_source_t source = RBD_CONFIG_SOURCE_CONFIG;
    char pool[160], previous[32] = "";
    int rc, fd = -1;
    pool_name_of(io, pool, sizeof pool);

    if ((rc = open_image_ioctx(io, &own)) < 0) {
        snprintf(error, error_size, "image '%s': cannot open pool '%s': %s", name, pool,
                 strerror(-rc));
        return rc;
    }

    if (cache != CM_RBD_CACHE_DEFAULT) {
        if ((rc = rados_conf_get(cluster, "rbd_cache", previous, sizeof previous)) < 0 ||
            (rc = rados_conf_set(cluster, "rbd_cache", cache ? "true" : "false")) < 0) {
            snprintf(error, error_size, "image '%s': cannot set rbd_cache on the client: %s", name,
                     strerror(-rc));
            goto fail_ioctx;
        }
    }
    rc = read_only ? rbd_open_read_only(own, name, &handle, NULL)
                   : rbd_open(own, name, &handle, NULL);
    /* read what the open applied before restoring the client's value: librbd watches the
     * client's configuration and refreshes open images when it changes, so afterwards the
     * image reports the restored value (its cache layer stays as it was opened) */
    int applied_rc = rc < 0 ? 0 : effective_cache(handle, &applied, &source);
    if (cache != CM_RBD_CACHE_DEFAULT)
        rados_conf_set(cluster, "rbd_cache", previous);
    if (rc == -ENOENT) {
        snprintf(error, error_size, "image '%s' does not exist in pool '%s'", name, pool);
        goto fail_ioctx;
    }
    if (rc < 0) {
        snprintf(error, error_size, "cannot open image '%s' in pool '%s': %s", name, pool,
                 strerror(-rc));
        goto fail_ioctx;
    }
    if ((rc = applied_rc) < 0) {
        snprintf(error, error_size, "image '%s': cannot read its rbd_cache setting: %s", name,
                 strerror(-rc));
        goto fail_image;
    }
    if (cache != CM_RBD_CACHE_DEFAULT && applied != (cache == CM_RBD_CACHE_ON)) {
        cache_refused(name, pool, applied, source, error, error_size);
        rc = -EINVAL;
        goto fail_image;
    }

    if ((fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        rc = -errno;
        snprintf(error, error_size, "image '%s': cannot make an event fd: %s", name, strerror(-rc));
        goto fail_image;
    }
    if ((rc = rbd_set_image_notification(handle, fd, EVENT_TYPE_EVENTFD)) < 0) {
        snprintf(error, error_size, "image '%s': cannot register its event fd: %s", name,
                 strerror(-rc));
        goto fail_fd;
    }
    cm_rbd_image_init(image);
    image->io = own;
    image->image = handle;
    image->event_fd = fd;
    image->read_only = read_only;
    image->cache = applied;
    snprintf(image->name, sizeof image->name, "%s", name);
    snprintf(image->pool, sizeof image->pool, "%s", pool);
    return 0;

fail_fd:
    close(fd);
fail_image:
    rbd_close(handle);
fail_ioctx:
    rados_ioctx_destroy(own);
    return rc;
}

/* ---- completions ---------------------------------------------------------------------- */

/* Takes everything queued on the image. Ops of the bench `run_id` (0: none) go to the
 * engine, their completion released later on the loop thread by the target's complete();
 * anything else is released here. Returns false when the fd had nothing to report. */
bool cm_rbd_drain_completions(struct cm_rbd_image *image, uint64_t run_id)
{
    uint64_t count;
    if (read(image->event_fd, &count, sizeof count) != sizeof count)
        return false; /* EAGAIN: librbd pushes before it writes the fd, so nothing waits */
    rbd_completion_t completions[64];
    int n;
    do {
        n = rbd_poll_io_events(image->image, completions, 64);
        for (int i = 0; i < n; i++) {
            rbd_completion_t completion = completions[i];
            struct cm_rbd_request *slot = rbd_aio_get_arg(completion);
            if (slot && slot->kind == CM_RBD_REQUEST_TARGET && run_id && slot->run_id == run_id &&
                slot->completion == completion) {
                cm_engine_complete(slot->op, rbd_aio_get_return_value(completion));
                continue;
            }
            /* a late op of a run that was abandoned: its slot was never freed */
            rbd_aio_release(completion);
        }
    } while (n == 64);
    return true;
}

void cm_rbd_close(struct cm_rbd_image *image)
{
    if (!image->image)
        return;
    cm_rbd_drain_completions(image, 0);
    rbd_close(image->image);
    image->image = NULL;
    rados_ioctx_destroy(image->io);
    image->io = NULL;
    close(image->event_fd);
    image->event_fd = -1;
}
