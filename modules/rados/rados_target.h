/* The rados target of the op engine: rados bench's workloads (write, seq, rand, remove)
 * over librados async I/O, with verified payloads and a metadata object per run so that
 * later phases and cleanups find the run's objects. Pure C, no Lua. */
#ifndef CEPHMARK_RADOS_TARGET_H
#define CEPHMARK_RADOS_TARGET_H

#include "distrib.h"
#include "engine.h"
#include "payload.h"
#include "rados_owner.h"
#include "rados_zerocopy.h"

#include <pthread.h>
#include <rados/librados.h>
#include <stdbool.h>
#include <stdint.h>

/* The order of pool:bench's op names (rados.c, rados_ops). */
enum cm_rados_target_op {
    CM_RADOS_WRITE,
    CM_RADOS_SEQ,
    CM_RADOS_RAND,
    CM_RADOS_REMOVE,
    CM_RADOS_OVERWRITE, /* partial writes inside a run's blocks (rados_overwrite.c) */
    CM_RADOS_APPEND,    /* writes at the end of a run's objects (rados_overwrite.c) */
    CM_RADOS_VERIFY,    /* reads every object of a run whole and verifies it */
    CM_RADOS_MIXED,     /* reads, overwrites, stats and removes by ratios (rados_mixed.c) */
};

/* Where a write run's blocks go (rados bench --write-object, --write-omap, --write-xattr):
 * bits; 0 reads as object data only. */
#define CM_RADOS_TO_OBJECT 1u
#define CM_RADOS_TO_OMAP   2u
#define CM_RADOS_TO_XATTR  4u

/* What a write run leaves behind, stored as the run's metadata object. */
struct cm_rados_run_meta {
    char prefix[128]; /* object names are <prefix>_object<N> */
    uint64_t object_size;
    uint64_t block_size;
    uint64_t blocks;  /* blocks started by the write run, in write order */
    uint64_t objects; /* objects touched: ceil(blocks / blocks per object) */
    uint64_t run_id;  /* in every payload header, and the payload seed */
    /* format 2 (written at the start of a write, completed at its end); format 1 runs,
     * written by earlier versions at the end only, read as complete; format 3 for runs that
     * format 2's readers would misread (cm_rados_meta_version) */
    int version;
    bool complete;
    struct cm_owner owner; /* the writing process */
    /* each object's size drawn from `sizes` by (run_id, object index), written whole (one
     * block per object); object_size and block_size hold the largest */
    bool sized;
    struct cm_size_dist sizes;
    /* omap and xattr runs (rados_kv.c): destinations, keys per op, key name length */
    unsigned write_to;
    uint64_t keys_per_op, key_size;
    /* later passes over the run (rados_overwrite.c): the overwrite unit and the number of
     * overwrite passes and ops; the append unit and the appends made, in order */
    uint64_t overwrite_block, overwrite_passes, overwrites;
    uint64_t append_block, appends;
    /* objects removed by mixed phases: the run is then only for cleanup */
    uint64_t removed;
};

#define CM_RADOS_VERIFY_ERRORS_KEPT 8

struct request_slot;

struct bench_slot;
struct cm_rados_mixed;

struct cm_rados_target {
    rados_ioctx_t io;
    enum cm_rados_target_op op;
    struct cm_rados_run_meta meta; /* the run being written, or the one being read */
    bool verify;
    uint64_t rng;
    /* rand: the object chooser (uniform: over blocks, as rados bench's rand; skewed: over
     * objects, then a block of the object); set with cm_rados_target_set_access */
    struct cm_access access;
    bool skewed;
    cm_payload *payload;
    /* remove by name list (cleanup by prefix) instead of by metadata */
    char **names;
    size_t n_names;
    /* writes: each op's header is written into its slot and its body referenced in the
     * stage, whose storage librados reads without copying (rados_zerocopy.h) */
    cm_payload_stage *stage;
    cm_rados_zc_buffer *stage_memory;
    /* writes: start each op with rados bench's allocation hint (true after init; false is
     * rados bench's --no-hints) */
    bool alloc_hints;
    /* When the engine blocks in the target (cm_engine_blocking): completions have no
     * callback, the in-flight ops are kept in submission order, and the loop waits for the
     * oldest. blocked_on and block_cancelled are shared with the engine's watchdog thread,
     * under block_lock. */
    bool blocking;
    struct bench_slot *oldest, *newest;
    pthread_mutex_t block_lock;
    rados_completion_t blocked_on;
    bool block_cancelled;
    /* the first verify failures, for the report */
    char verify_errors[CM_RADOS_VERIFY_ERRORS_KEPT][384];
    unsigned n_verify_errors;
    /* overwrite, append and mixed: bytes per write, this pass's number (the rng above is
     * the one of its offsets) */
    uint64_t op_block, pass;
    /* mixed: the live objects (rados_mixed.c), the ops started per kind, and the misses
     * (ENOENT on an object the phase believed live); kept after fini for the result */
    struct cm_rados_mixed *mixed;
    uint64_t mixed_started[CM_OP_KINDS];
    uint64_t misses;
    unsigned slots; /* op slots made (slot_init) */
    /* requests chosen by the caller (submit_request): per caller slot, made on first use */
    void **request_slots; /* struct request_slot *, by op slot (cm_request_slot_entry) */
    size_t n_request_slots;
};

extern const struct cm_target_ops cm_rados_target_ops;

/* Prepares a bench target; for seq/rand/remove, `meta` is the write run's metadata. Returns
 * 0 or -errno with a sentence in `error`. */
int cm_rados_target_init(struct cm_rados_target *bench, rados_ioctx_t io,
                         enum cm_rados_target_op op, const struct cm_rados_run_meta *meta,
                         bool verify, char *error, size_t error_size);
void cm_rados_target_fini(struct cm_rados_target *bench);

/* rand: picks objects by `spec` from here on, with picks drawn from `seed` (0: a fresh
 * seed); the hot objects are fixed by the write run (its run id). 0 or -ENOMEM. */
int cm_rados_target_set_access(struct cm_rados_target *bench, const struct cm_access_spec *spec,
                               uint64_t seed);

/* Prepares a target that serves only requests chosen by its caller (submit_request:
 * read, write, write_full, stat, remove of named objects), for scripted workers. Released
 * with cm_rados_target_fini once no request is in flight. */
void cm_rados_target_init_requests(struct cm_rados_target *bench, rados_ioctx_t io);

/* The metadata object: a small text object named after the run. claim creates it
 * exclusively in state running before the first write (-EEXIST: the name is taken);
 * complete replaces it with the counts at the end. Both are bounded (cm_rados_wait). */
int cm_rados_meta_claim(rados_ioctx_t io, const char *run_name,
                        const struct cm_rados_run_meta *meta, double timeout);
int cm_rados_meta_complete(rados_ioctx_t io, const char *run_name,
                           const struct cm_rados_run_meta *meta, double timeout);
/* The metadata as text, for the run's marker object (docs/rados.md, "Ownership"). */
int cm_rados_meta_format(const struct cm_rados_run_meta *meta, bool complete, char *text,
                         size_t size);
/* Reads a run's metadata: 0, or -ENOENT / -EINVAL / a librados error with a sentence. */
int cm_rados_meta_read(rados_ioctx_t io, const char *run_name, struct cm_rados_run_meta *meta,
                       char *error, size_t error_size, double timeout);
/* The newest run metadata format this version reads and writes. Format 3 adds the fields
 * of sized runs (object_sizes), omap/xattr runs (write_to, keys_per_op, key_size) and later
 * passes (overwrite_block, overwrite_passes, overwrites, append_block, appends); a run
 * without any of them is still written as format 2, which earlier versions read. */
#define CM_RADOS_META_VERSION 3

/* The format `meta` is written in: 3 when it has any of format 3's fields, else 2. */
int cm_rados_meta_version(const struct cm_rados_run_meta *meta);

/* Parses metadata text (formats 1 to CM_RADOS_META_VERSION; format 2 text carrying
 * format 3's pass and omap/xattr fields, as the first versions with overwrites wrote it,
 * reads too); false if it is not cephmark run metadata or is of a newer format
 * (meta->version then says which). */
bool cm_rados_meta_parse(char *text, struct cm_rados_run_meta *meta);

/* The metadata object rewritten in place (an overwrite or append pass: running at its
 * start, complete at its end), bounded like claim. */
int cm_rados_meta_store(rados_ioctx_t io, const char *run_name,
                        const struct cm_rados_run_meta *meta, bool complete, double timeout);

/* A fresh 64-bit run id from the kernel's random source. */
uint64_t cm_rados_new_run_id(void);

#endif
