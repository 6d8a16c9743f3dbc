/* RBD images over librbd. Pure C, no Lua.
 *
 * Images: create (with the checks librbd leaves to its log: feature dependencies, an
 * erasure-coded data pool without overwrites, a size above the pool's quota or free space),
 * remove, and open with a per-image rbd cache setting and librbd's completion event fd.
 *
 * Completions: every image handle owns an eventfd registered with
 * rbd_set_image_notification. librbd pushes each finished async op onto the image's queue
 * and writes the fd; the owner takes them with rbd_poll_io_events on its own thread. The
 * engine target (rbd_target.h) waits on that fd (wait_fd) and drains the queue in poll(), so
 * its completions never run code on librbd's threads. Scripted workers go through an rbd
 * target as well (its submit_request), which the workers' loop polls the same way. */
#ifndef CEPHMARK_RBD_IMAGE_H
#define CEPHMARK_RBD_IMAGE_H

#include "engine.h"

#include <rados/librados.h>
#include "rbd_api.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- features ---------------------------------------------------------------------------- */

/* The feature bit of a name ("layering", "exclusive-lock", ...), 0 if unknown. Only the
 * features a user may set at creation are known here. */
uint64_t cm_rbd_feature_bit(const char *name);
/* The name of one feature bit (any librbd knows), or NULL. */
const char *cm_rbd_feature_name(uint64_t bit);
/* "layering, exclusive-lock, object-map, fast-diff, deep-flatten or journaling" */
const char *cm_rbd_feature_choices(void);
/* Checks the dependencies librbd enforces (object-map needs exclusive-lock, ...); 0 or
 * -EINVAL with a sentence. */
int cm_rbd_features_check(uint64_t features, char *error, size_t error_size);

/* ---- images ------------------------------------------------------------------------------ */

struct cm_rbd_create_options {
    uint64_t size;
    int order;             /* object size 1 << order; 0: librbd's default (rbd_default_order) */
    bool has_features;     /* false: librbd's default (rbd_default_features) */
    uint64_t features;     /* checked with cm_rbd_features_check */
    const char *data_pool; /* NULL: data in the image's own pool */
    bool overcommit;       /* skip the quota and free-space checks */
};

/* Creates an image (format 2). Returns 0, or -errno with a sentence naming the image and
 * pool: -EEXIST, -ENOENT (data pool missing), -EINVAL (data pool erasure-coded without
 * allow_ec_overwrites), -EDQUOT (larger than the pool's quota), -ENOSPC (larger than what
 * the pool can still store), or librbd's own error. Enables the "rbd" application on the
 * pools, as `rbd pool init` does. */
int cm_rbd_create(rados_ioctx_t io, const char *name, const struct cm_rbd_create_options *options,
                  char *error, size_t error_size);
/* Removes an image: 0, or -errno with a sentence (-ENOENT, -EBUSY when still open). */
int cm_rbd_remove(rados_ioctx_t io, const char *name, char *error, size_t error_size);

enum cm_rbd_cache { CM_RBD_CACHE_DEFAULT = -1, CM_RBD_CACHE_OFF = 0, CM_RBD_CACHE_ON = 1 };

struct cm_rbd_image {
    rados_ioctx_t io;  /* the image's own ioctx on its pool (FULL_TRY); NULL once closed */
    rbd_image_t image; /* NULL once closed */
    int event_fd;      /* librbd writes it when async ops complete; -1 once closed */
    bool read_only;
    bool cache;              /* rbd_cache as librbd applied it at open */
    uint64_t bench_run_id;   /* the bench running on the image, 0 when none */
    unsigned worker_targets; /* scripted-worker phases' targets using the image */
    char name[RBD_MAX_IMAGE_NAME_SIZE + 160];
    char pool[160];
};

/* Marks a handle closed, before cm_rbd_open (handles are created closed). */
void cm_rbd_image_init(struct cm_rbd_image *image);
/* Opens `name` with rbd_cache on, off, or as the cluster handle's configuration says
 * (CM_RBD_CACHE_DEFAULT). Returns 0 or -errno with a sentence; the handle stays closed on
 * failure. */
int cm_rbd_open(struct cm_rbd_image *image, rados_ioctx_t io, const char *name, int cache,
                bool read_only, char *error, size_t error_size);
/* Closes the image (idempotent): releases queued completions, closes the image and its
 * fd. */
void cm_rbd_close(struct cm_rbd_image *image);

/* Takes everything queued on the image. Ops of the run `run_id` (0: none) go to the engine,
 * their completion released later on the loop thread by the target's complete(); anything
 * else is released here. Returns false when the fd had nothing to report. */
bool cm_rbd_drain_completions(struct cm_rbd_image *image, uint64_t run_id);
/* A boolean setting as the open image applies it, and where it came from. 0 or -errno. */
int cm_rbd_config_bool(rbd_image_t image, const char *name, bool *value,
                       rbd_config_source_t *source);

/* The head of a target slot's completion argument: the drain hands the op of a running
 * target's run (`run_id`) to the engine and releases anything else it finds. */
#define CM_RBD_REQUEST_TARGET 0x72626462
struct cm_rbd_request {
    uint32_t kind;   /* CM_RBD_REQUEST_TARGET */
    uint64_t run_id; /* the run that made the slot */
    struct cm_op *op;
    rbd_completion_t completion;
};

#endif
