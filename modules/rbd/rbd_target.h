/* The rbd target of the op engine over an open image (rbd_image.h): sequential or random
 * reads, writes or a mix of io_size extents, written with the payload format and verified
 * on read. Pure C, no Lua. */
#ifndef CEPHMARK_RBD_TARGET_H
#define CEPHMARK_RBD_TARGET_H

#include "distrib.h"
#include "payload.h"
#include "rbd_image.h"

/* ---- the bench target -------------------------------------------------------------------- */

enum cm_rbd_io_type { CM_RBD_IO_READ, CM_RBD_IO_WRITE, CM_RBD_IO_READWRITE };
enum cm_rbd_pattern { CM_RBD_SEQ, CM_RBD_RAND };

/* The image metadata key where write runs record their io size, so that later runs know
 * how to verify extents they did not write themselves (see docs/rbd.md). */
#define CM_RBD_METADATA_IO_SIZE "cephmark_write_io_size"
#define CM_RBD_PRIOR_NONE       0
#define CM_RBD_PRIOR_MIXED      UINT64_MAX

#define CM_RBD_VERIFY_ERRORS_KEPT 8

struct cm_rbd_target_options {
    enum cm_rbd_io_type io_type;
    enum cm_rbd_pattern pattern;
    uint64_t io_size;     /* > 0, a multiple of 512 */
    unsigned rw_mix_read; /* percent of reads for readwrite */
    bool verify;
    unsigned depth; /* the engine's depth: the image must hold at least as many blocks */
    struct cm_access_spec access; /* random offsets: which blocks (zeroed: uniform) */
};

struct cm_rbd_target {
    struct cm_rbd_image *image;
    struct cm_rbd_target_options options;
    uint64_t run_id; /* in every payload header, and the payload seed */
    uint64_t size;   /* the image size at the start */
    uint64_t blocks; /* io_size blocks in the image; offsets are block * io_size */
    uint64_t next_block;
    uint64_t rng;
    struct cm_access access; /* random offsets: the chooser over the blocks */
    /* io size of earlier cephmark write runs on the image, from its metadata */
    uint64_t prior_io_size;
    uint64_t *written; /* bitmap: blocks this run wrote successfully */
    uint64_t *busy;    /* bitmap: blocks with an op in flight (never two at once) */
    cm_payload *payload;
    /* Writes are assembled in place here instead of in the slot's buffer when librbd
     * copies the caller's buffer before rbd_aio_write2 returns (rbd_disable_zero_copy_writes,
     * true by default): no copy of the body by cephmark, no crc32c pass over it. NULL when
     * librbd may keep the caller's buffer until the write completes (zero-copy writes). */
    cm_payload_stage *stage;
    uint64_t verify_skipped; /* reads of foreign data that cannot be checked */
    char verify_errors[CM_RBD_VERIFY_ERRORS_KEPT][640];
    unsigned n_verify_errors;
    char metadata_error[400]; /* the io size record could not be written; empty if fine */
    /* requests chosen by the caller (submit_request): per caller slot, made on first use */
    void **request_slots; /* struct cm_rbd_request *, by op slot (cm_request_slot_entry) */
    size_t n_request_slots;
};

extern const struct cm_target_ops cm_rbd_target_ops;

/* Prepares a run on an open image. Returns 0, or -errno with a sentence (an io size that
 * does not fit, too few blocks for the depth, a write on a read-only image, no memory). */
int cm_rbd_target_init(struct cm_rbd_target *bench, struct cm_rbd_image *image,
                       const struct cm_rbd_target_options *options, char *error, size_t error_size);
void cm_rbd_target_fini(struct cm_rbd_target *bench);

/* Prepares a target that serves only requests chosen by its caller (submit_request: read
 * and write at an offset), for scripted workers; its completions come through the image's
 * event fd like a bench's (poll, wait_fd). Released with cm_rbd_target_fini. */
void cm_rbd_target_init_requests(struct cm_rbd_target *bench, struct cm_rbd_image *image);

#endif
