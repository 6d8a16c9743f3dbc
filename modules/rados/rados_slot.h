/* What the rados bench target's files share among themselves (rados_target.c,
 * rados_overwrite.c, rados_kv.c): the op slot and the passes' and omap/xattr ops'
 * functions. Not for other modules. */
#ifndef CEPHMARK_RADOS_SLOT_H
#define CEPHMARK_RADOS_SLOT_H

#include "mix.h"
#include "rados_target.h"

#include <time.h>

/* One op slot of a bench target (rados_target.c, rados_overwrite.c, rados_kv.c). */
struct bench_slot {
    rados_completion_t completion;
    struct cm_op *op;
    struct bench_slot *prev, *next; /* in flight, in submission order (blocking mode) */
    unsigned char *buffer;          /* reads; writes of overwrites, appends and omap runs */
    size_t buffer_size;
    unsigned char *expected; /* reads of a run with overwrites: a block as first written */
    uint64_t offset;
    uint64_t expected_size; /* reads of a sized run: the object's size */
    uint64_t block;         /* the write run's block number of a read (seq, rand) */
    uint64_t object_n;      /* the object's number (verify, mixed) */
    bool whole;             /* mixed: a read of the whole object */
    uint64_t stat_size;     /* mixed: a stat's outputs, written by librados */
    time_t stat_mtime;
    void *kv; /* omap and xattr ops' own state (rados_kv.c) */
    char object[160];
};

/* rados_target.c: rand's and overwrite's next block of the run, by the target's access
 * distribution (cm_rados_target_set_access). */
uint64_t cm_rados_pick_block(struct cm_rados_target *bench);

/* rados_overwrite.c: the later passes over a run's objects, and verification that knows
 * them. */
uint64_t cm_rados_object_blocks(const struct cm_rados_run_meta *meta, uint64_t object);
uint64_t cm_rados_object_size(const struct cm_rados_run_meta *meta, uint64_t object);
uint64_t cm_rados_largest_object(const struct cm_rados_run_meta *meta);
/* Checks a pass (overwrite, append, verify) of `block` bytes per op over the run `meta`,
 * refusing an erasure-coded pool without allow_ec_overwrites, and records it in `meta`
 * (the unit, the pass number): 0, or -EINVAL with one line in `error`. */
int cm_rados_pass_prepare(rados_ioctx_t io, enum cm_rados_target_op op, uint64_t block,
                          struct cm_rados_run_meta *meta, char *error, size_t size);
int cm_rados_pass_slot_init(struct cm_rados_target *bench, struct bench_slot *slot);
int cm_rados_pass_submit(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot);
/* Verifies a read of whole blocks of the write run (seq, rand, verify); false with a
 * message kept in the target when it fails. */
bool cm_rados_verify_blocks(struct cm_rados_target *bench, struct bench_slot *slot,
                            const unsigned char *data, size_t len, uint64_t offset,
                            uint64_t first_block);
void cm_rados_verify_complete(struct cm_rados_target *bench, struct cm_op *op,
                              struct bench_slot *slot);
void cm_rados_keep_verify_error(struct cm_rados_target *bench, const char *message);
/* An overwrite of one unit, at a seeded offset inside the run's block `block` (the overwrite
 * pass's ops and the mixed phase's writes). */
int cm_rados_overwrite_submit(struct cm_rados_target *bench, struct cm_op *op,
                              struct bench_slot *slot, uint64_t block);

/* rados_target.c: the name of the run's object number `object`. */
void cm_rados_object_name(const struct cm_rados_target *bench, uint64_t object, char *out,
                          size_t n);

/* rados_mixed.c: the mixed phase. init makes the live set (every object of the run) with
 * the kinds' generator seeded by `seed`; 0 or -ENOMEM. free is idempotent. */
int cm_rados_mixed_init(struct cm_rados_target *bench, const struct cm_mix *mix, uint64_t seed);
void cm_rados_mixed_free(struct cm_rados_target *bench);
int cm_rados_mixed_submit(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot);
void cm_rados_mixed_complete(struct cm_rados_target *bench, struct cm_op *op,
                             struct bench_slot *slot);

/* rados_kv.c: the ops of runs written to omap or xattrs (write, seq, rand). */
int cm_rados_kv_submit(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot,
                       uint64_t block);
void cm_rados_kv_complete(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot);
void cm_rados_kv_slot_free(struct bench_slot *slot);
/* Parses "object,omap,xattr" into CM_RADOS_TO_* bits; 0 when a word is unknown. */
unsigned cm_rados_parse_write_to(const char *text);
void cm_rados_format_write_to(unsigned write_to, char *out, size_t n);

#endif
