/* Later passes over a write run's objects: overwrites (partial writes at block offsets
 * inside the blocks the run wrote), appends (writes at the end of its objects) and the
 * verify pass (every object read whole), with the verification of reads that knows what
 * the passes left. The design is in docs/rados.md, "Overwrites and appends".
 *
 * An overwrite writes `overwrite_block` bytes (a divisor of the run's block size) at an
 * offset that is a multiple of it inside one of the run's blocks, chosen by a seeded
 * generator; its bytes are a payload with its own header (object, offset, run id, crc32c).
 * A block read later is checked unit by unit: each unit either holds exactly the bytes the
 * write run put there (regenerated from the run id, the object, the offset and the block's
 * sequence) or is a whole, intact overwrite payload for that object and offset. So the
 * verification needs no record of which units were overwritten, only the unit size, which
 * the run's metadata keeps with the number of passes and overwrites.
 *
 * Appends go to the objects in turn: the run's append number g lands on object
 * g mod objects at offset (its blocks x block size) + (g / objects) x append_block, so the
 * metadata's count of appends gives every object's size and every append's offset. They are
 * writes at that offset rather than CEPH_OSD_OP_APPEND, so that appends to one object in
 * flight together still land at known offsets. */
#include "rados_slot.h"
#include "splitmix.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t per_object(const struct cm_rados_run_meta *meta)
{
    return meta->object_size / meta->block_size;
}

uint64_t cm_rados_object_blocks(const struct cm_rados_run_meta *meta, uint64_t object)
{
    uint64_t first = object * per_object(meta);
    if (first >= meta->blocks)
        return 0;
    uint64_t left = meta->blocks - first;
    return left < per_object(meta) ? left : per_object(meta);
}

static uint64_t appends_of(const struct cm_rados_run_meta *meta, uint64_t object)
{
    if (meta->objects == 0)
        return 0;
    return meta->appends / meta->objects + (object < meta->appends % meta->objects ? 1 : 0);
}

uint64_t cm_rados_object_size(const struct cm_rados_run_meta *meta, uint64_t object)
{
    if (meta->sized) /* one block per object, of its own size; no appends */
        return object < meta->blocks ? cm_size_of(&meta->sizes, meta->run_id, object) : 0;
    return cm_rados_object_blocks(meta, object) * meta->block_size +
           appends_of(meta, object) * meta->append_block;
}

/* Object 0 has the most blocks and the most appends; a sized run's largest possible
 * object is its object_size. */
uint64_t cm_rados_largest_object(const struct cm_rados_run_meta *meta)
{
    if (meta->sized)
        return meta->object_size;
    return cm_rados_object_size(meta, 0);
}

int cm_rados_pass_slot_init(struct cm_rados_target *bench, struct bench_slot *slot)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    size_t size = 0;
    if (bench->op == CM_RADOS_OVERWRITE || bench->op == CM_RADOS_APPEND)
        size = (size_t)bench->op_block;
    else if (bench->op == CM_RADOS_VERIFY || bench->op == CM_RADOS_MIXED)
        size = (size_t)((cm_rados_largest_object(meta) + 4096) / 4096 * 4096);
    if (size) {
        slot->buffer = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
        if (!slot->buffer)
            return -ENOMEM;
        memset(slot->buffer, 0, size);
        slot->buffer_size = size;
    }
    bool reads = bench->op == CM_RADOS_SEQ || bench->op == CM_RADOS_RAND ||
                 bench->op == CM_RADOS_VERIFY || bench->op == CM_RADOS_MIXED;
    if (reads && meta->overwrite_block) {
        slot->expected = malloc((size_t)meta->block_size);
        if (!slot->expected)
            return -ENOMEM;
    }
    return 0;
}

static void name_object(const struct cm_rados_target *bench, uint64_t object,
                        struct bench_slot *slot)
{
    cm_rados_object_name(bench, object, slot->object, sizeof slot->object);
}

/* Writes an op_block-byte payload with its header at the slot's object and offset. */
static int write_payload(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot,
                         uint64_t sequence)
{
    cm_payload_fill(bench->payload, slot->buffer, (size_t)bench->op_block, slot->object,
                    slot->offset, sequence, bench->meta.run_id);
    op->kind = CM_OP_WRITE;
    op->length = bench->op_block;
    return rados_aio_write(bench->io, slot->object, slot->completion, (const char *)slot->buffer,
                           (size_t)bench->op_block, slot->offset);
}

int cm_rados_overwrite_submit(struct cm_rados_target *bench, struct cm_op *op,
                              struct bench_slot *slot, uint64_t block)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    uint64_t unit = cm_splitmix64(&bench->rng) % (meta->block_size / bench->op_block);
    name_object(bench, block / per_object(meta), slot);
    slot->offset = (block % per_object(meta)) * meta->block_size + unit * bench->op_block;
    return write_payload(bench, op, slot, (bench->pass << 40) | op->sequence);
}

/* An append's place: the run's append number `g` (see the file's comment). */
static void append_place(struct cm_rados_target *bench, uint64_t g, struct bench_slot *slot)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    uint64_t object = g % meta->objects;
    name_object(bench, object, slot);
    slot->offset = cm_rados_object_blocks(meta, object) * meta->block_size +
                   (g / meta->objects) * meta->append_block;
}

int cm_rados_pass_submit(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    if (bench->op == CM_RADOS_VERIFY) {
        if (op->sequence >= meta->objects)
            return CM_TARGET_DONE;
        slot->object_n = op->sequence;
        name_object(bench, op->sequence, slot);
        slot->offset = 0;
        uint64_t size = cm_rados_object_size(meta, op->sequence);
        op->kind = CM_OP_READ;
        op->length = size;
        /* one byte more than expected: an object that grew is found too */
        return rados_aio_read(bench->io, slot->object, slot->completion, (char *)slot->buffer,
                              (size_t)size + 1, 0);
    }
    /* an overwrite's block: seeded, uniform or by the phase's access distribution as rand
     * picks them */
    if (bench->op == CM_RADOS_OVERWRITE)
        return cm_rados_overwrite_submit(bench, op, slot, cm_rados_pick_block(bench));
    uint64_t g = meta->appends + op->sequence;
    append_place(bench, g, slot);
    return write_payload(bench, op, slot, ((uint64_t)1 << 63) | g);
}

void cm_rados_keep_verify_error(struct cm_rados_target *bench, const char *message)
{
    if (bench->n_verify_errors < CM_RADOS_VERIFY_ERRORS_KEPT)
        snprintf(bench->verify_errors[bench->n_verify_errors++], sizeof bench->verify_errors[0],
                 "%s", message);
}

static bool verify_plain(struct cm_rados_target *bench, const char *object,
                         const unsigned char *data, size_t len, uint64_t offset)
{
    cm_payload_error error;
    if (cm_payload_verify(bench->payload, data, len, object, offset, bench->meta.run_id, 0,
                          &error) == CM_PAYLOAD_OK)
        return true;
    cm_rados_keep_verify_error(bench, error.message);
    return false;
}

/* One block of the run with overwrites: unit by unit, the write run's bytes or an intact
 * overwrite payload. */
static bool verify_overwritten_block(struct cm_rados_target *bench, struct bench_slot *slot,
                                     const unsigned char *data, uint64_t offset, uint64_t block)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    size_t size = (size_t)meta->block_size, unit = (size_t)meta->overwrite_block;
    cm_payload_fill(bench->payload, slot->expected, size, slot->object, offset, block,
                    meta->run_id);
    for (size_t at = 0; at + unit <= size; at += unit) {
        if (memcmp(data + at, slot->expected + at, unit) == 0)
            continue;
        if (!verify_plain(bench, slot->object, data + at, unit, offset + at))
            return false;
    }
    return true;
}

bool cm_rados_verify_blocks(struct cm_rados_target *bench, struct bench_slot *slot,
                            const unsigned char *data, size_t len, uint64_t offset,
                            uint64_t first_block)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    if (!meta->overwrite_block)
        return verify_plain(bench, slot->object, data, len, offset);
    size_t size = (size_t)meta->block_size;
    for (size_t at = 0; at < len; at += size) {
        if (len - at < size) {
            char message[384];
            snprintf(message, sizeof message,
                     "object %s offset %" PRIu64 ": %zu bytes read, a block is %zu", slot->object,
                     offset + at, len - at, size);
            cm_rados_keep_verify_error(bench, message);
            return false;
        }
        if (!verify_overwritten_block(bench, slot, data + at, offset + at, first_block + at / size))
            return false;
    }
    return true;
}

/* The verify pass: the object's size, its blocks, then its appends. */
void cm_rados_verify_complete(struct cm_rados_target *bench, struct cm_op *op,
                              struct bench_slot *slot)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    uint64_t size = cm_rados_object_size(meta, slot->object_n);
    uint64_t base =
        meta->sized ? size : cm_rados_object_blocks(meta, slot->object_n) * meta->block_size;
    if ((uint64_t)op->result != size) {
        char message[384];
        snprintf(message, sizeof message, "object %s: %" PRId64 "%s bytes, the run wrote %" PRIu64,
                 slot->object, op->result > (int64_t)size ? (int64_t)size : op->result,
                 op->result > (int64_t)size ? " or more" : "", size);
        cm_rados_keep_verify_error(bench, message);
        op->verify_failed = true;
        return;
    }
    if (!cm_rados_verify_blocks(bench, slot, slot->buffer, (size_t)base, 0,
                                slot->object_n * per_object(meta)) ||
        (size > base &&
         !verify_plain(bench, slot->object, slot->buffer + base, (size_t)(size - base), base)))
        op->verify_failed = true;
}

int cm_rados_pass_prepare(rados_ioctx_t io, enum cm_rados_target_op op, uint64_t block,
                          struct cm_rados_run_meta *meta, char *error, size_t size)
{
    if (meta->write_to & ~CM_RADOS_TO_OBJECT) {
        snprintf(error, size,
                 "bench: the run under prefix %s was written to omap or xattrs: overwrite, "
                 "append and verify work on runs of object data only",
                 meta->prefix);
        return -EINVAL;
    }
    if (op == CM_RADOS_VERIFY)
        return 0;
    if (meta->sized) {
        snprintf(error, size,
                 "bench: the run under prefix %s has objects of many sizes (object_size as a "
                 "distribution): overwrite and append work on runs of one object size; seq, "
                 "rand and verify read it",
                 meta->prefix);
        return -EINVAL;
    }
    int aligned = 0;
    if (rados_ioctx_pool_requires_alignment2(io, &aligned) == 0 && aligned) {
        char pool[256] = "?";
        rados_ioctx_get_pool_name(io, pool, sizeof pool);
        snprintf(error, size,
                 "bench: pool '%s' is erasure-coded without allow_ec_overwrites: %s refused; "
                 "enable it with `ceph osd pool set %s allow_ec_overwrites true` (bluestore "
                 "OSDs)",
                 pool, op == CM_RADOS_OVERWRITE ? "overwrite" : "append", pool);
        return -EINVAL;
    }
    if (block < CM_PAYLOAD_HEADER_SIZE) {
        snprintf(error, size,
                 "bench: block_size %" PRIu64 " is below %d bytes: each overwrite or append "
                 "carries a verified header",
                 block, CM_PAYLOAD_HEADER_SIZE);
        return -EINVAL;
    }
    if (op == CM_RADOS_OVERWRITE) {
        if (block > meta->block_size || meta->block_size % block != 0) {
            snprintf(error, size,
                     "bench: overwrite block_size %" PRIu64
                     " must divide the run's block size %" PRIu64,
                     block, meta->block_size);
            return -EINVAL;
        }
        if (meta->overwrite_block && meta->overwrite_block != block) {
            snprintf(error, size,
                     "bench: the run's earlier overwrites are %" PRIu64
                     " bytes: later overwrite passes use the same size, not %" PRIu64,
                     meta->overwrite_block, block);
            return -EINVAL;
        }
        meta->overwrite_block = block;
        meta->overwrite_passes++;
    } else {
        if (meta->append_block && meta->append_block != block) {
            snprintf(error, size,
                     "bench: the run's earlier appends are %" PRIu64
                     " bytes: later append passes use the same size, not %" PRIu64,
                     meta->append_block, block);
            return -EINVAL;
        }
        meta->append_block = block;
    }
    return 0;
}
