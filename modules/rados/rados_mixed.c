/* The mixed phase over a write run's objects (op = "mixed"): each op's kind is drawn from
 * the mix's ratios (runtime/mix.h) and goes to one of the run's live objects. Reads are
 * whole-object or one block at a block offset, verified as the verify pass and seq/rand
 * verify (rados_overwrite.c: units either as first written or an intact overwrite); writes
 * are overwrites through the overwrite pass's own path; stats check the object's size;
 * removes take an object out of the live set for the rest of the phase.
 *
 * The live set is an array of object numbers with each object's place in it, so that a
 * pick is one draw and a remove one swap. Objects with an op in flight are busy: a remove
 * never picks one (it takes the next idle object after its draw), so no read, stat or
 * write in flight races the remove of its object, and no op is started on an object once
 * its remove was. An ENOENT on an object the phase believed live is a miss.
 *
 * The kinds come from their own generator, seeded by the phase's seed, so that a phase
 * bounded by ops repeats its counts per kind. A remove drawn when no more objects are live
 * than there are slots ends the phase (its work ran out): that too depends only on the
 * draws, not on timing. Objects are picked uniformly (choose_object is the one place an
 * access distribution would plug in). */
#include "mix.h"
#include "rados_slot.h"
#include "splitmix.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct cm_rados_mixed {
    struct cm_mix mix;
    uint64_t kind_rng;
    uint64_t *live;  /* the live objects' numbers, in no order */
    uint64_t n_live; /* how many */
    uint64_t *where; /* where[object]: its index in live (meaningless once removed) */
    uint32_t *busy;  /* ops in flight per object */
};

int cm_rados_mixed_init(struct cm_rados_target *bench, const struct cm_mix *mix, uint64_t seed)
{
    uint64_t objects = bench->meta.objects;
    struct cm_rados_mixed *m = calloc(1, sizeof *m);
    if (!m)
        return -ENOMEM;
    m->mix = *mix;
    m->kind_rng = seed ^ 0xd1b54a32d192ed03ULL;
    m->live = malloc(objects * sizeof *m->live);
    m->where = malloc(objects * sizeof *m->where);
    m->busy = calloc(objects, sizeof *m->busy);
    if (!m->live || !m->where || !m->busy) {
        free(m->live);
        free(m->where);
        free(m->busy);
        free(m);
        return -ENOMEM;
    }
    for (uint64_t i = 0; i < objects; i++)
        m->live[i] = m->where[i] = i;
    m->n_live = objects;
    bench->mixed = m;
    return 0;
}

void cm_rados_mixed_free(struct cm_rados_target *bench)
{
    struct cm_rados_mixed *m = bench->mixed;
    if (!m)
        return;
    free(m->live);
    free(m->where);
    free(m->busy);
    free(m);
    bench->mixed = NULL;
}

/* The object of the next op, uniformly among the live ones; an `idle` one (for a remove)
 * is the first without an op in flight from the draw on. The caller makes sure one is. */
static uint64_t choose_object(struct cm_rados_target *bench, bool idle)
{
    struct cm_rados_mixed *m = bench->mixed;
    uint64_t at = cm_splitmix64(&bench->rng) % m->n_live;
    while (idle && m->busy[m->live[at]])
        at = (at + 1) % m->n_live;
    return m->live[at];
}

/* Takes an object out of the live set. */
static void forget_object(struct cm_rados_mixed *m, uint64_t object)
{
    uint64_t at = m->where[object], last = m->live[--m->n_live];
    m->live[at] = last;
    m->where[last] = at;
}

/* A read: the whole object (as the verify pass reads it, one byte more to find an object
 * that grew) or one of its blocks, by a coin from the objects' generator. */
static int submit_read(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    uint64_t draw = cm_splitmix64(&bench->rng);
    uint64_t blocks = cm_rados_object_blocks(meta, slot->object_n);
    slot->whole = (draw & 1) != 0;
    op->kind = CM_OP_READ;
    if (slot->whole) {
        slot->offset = 0;
        op->length = cm_rados_object_size(meta, slot->object_n);
        return rados_aio_read(bench->io, slot->object, slot->completion, (char *)slot->buffer,
                              (size_t)op->length + 1, 0);
    }
    uint64_t block = (draw >> 1) % blocks;
    slot->block = slot->object_n * (meta->object_size / meta->block_size) + block;
    slot->offset = block * meta->block_size;
    op->length = meta->block_size;
    return rados_aio_read(bench->io, slot->object, slot->completion, (char *)slot->buffer,
                          (size_t)meta->block_size, slot->offset);
}

int cm_rados_mixed_submit(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot)
{
    struct cm_rados_mixed *m = bench->mixed;
    uint8_t kind = cm_mix_pick(&m->mix, &m->kind_rng);
    /* a remove needs an idle object, and there is one while more objects are live than
     * ops can be in flight; with fewer, the phase's work ran out */
    if (m->n_live == 0 || (kind == CM_OP_REMOVE && m->n_live <= bench->slots))
        return CM_TARGET_DONE;
    slot->object_n = choose_object(bench, kind == CM_OP_REMOVE);
    cm_rados_object_name(bench, slot->object_n, slot->object, sizeof slot->object);
    m->busy[slot->object_n]++;
    bench->mixed_started[kind]++;
    op->length = 0;
    switch (kind) {
    case CM_OP_READ:
        return submit_read(bench, op, slot);
    case CM_OP_WRITE: {
        const struct cm_rados_run_meta *meta = &bench->meta;
        uint64_t blocks = cm_rados_object_blocks(meta, slot->object_n);
        uint64_t block = slot->object_n * (meta->object_size / meta->block_size) +
                         cm_splitmix64(&bench->rng) % blocks;
        return cm_rados_overwrite_submit(bench, op, slot, block);
    }
    case CM_OP_STAT:
        op->kind = CM_OP_STAT;
        return rados_aio_stat(bench->io, slot->object, slot->completion, &slot->stat_size,
                              &slot->stat_mtime);
    case CM_OP_REMOVE:
    default:
        op->kind = CM_OP_REMOVE;
        forget_object(m, slot->object_n);
        return rados_aio_remove(bench->io, slot->object, slot->completion);
    }
}

/* A stat's size against the run's. */
static void verify_stat(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot)
{
    uint64_t size = cm_rados_object_size(&bench->meta, slot->object_n);
    if (slot->stat_size == size)
        return;
    char message[384];
    snprintf(message, sizeof message,
             "object %s: stat says %" PRIu64 " bytes, the run wrote %" PRIu64, slot->object,
             slot->stat_size, size);
    cm_rados_keep_verify_error(bench, message);
    op->verify_failed = true;
}

/* A block read: the whole block came back, and its units verify. */
static void verify_block(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot)
{
    uint64_t size = bench->meta.block_size;
    if ((uint64_t)op->result != size) {
        char message[384];
        snprintf(message, sizeof message,
                 "object %s offset %" PRIu64 ": %" PRId64 " bytes read, a block is %" PRIu64,
                 slot->object, slot->offset, op->result, size);
        cm_rados_keep_verify_error(bench, message);
        op->verify_failed = true;
        return;
    }
    if (!cm_rados_verify_blocks(bench, slot, slot->buffer, (size_t)size, slot->offset, slot->block))
        op->verify_failed = true;
}

void cm_rados_mixed_complete(struct cm_rados_target *bench, struct cm_op *op,
                             struct bench_slot *slot)
{
    struct cm_rados_mixed *m = bench->mixed;
    m->busy[slot->object_n]--;
    if (op->result == -ENOENT)
        bench->misses++; /* an object this phase believed live */
    if (op->result < 0 || !bench->verify)
        return;
    if (op->kind == CM_OP_STAT)
        verify_stat(bench, op, slot);
    else if (op->kind == CM_OP_READ && slot->whole)
        cm_rados_verify_complete(bench, op, slot);
    else if (op->kind == CM_OP_READ)
        verify_block(bench, op, slot);
}
