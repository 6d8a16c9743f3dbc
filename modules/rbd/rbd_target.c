/* The rbd target of the op engine; see rbd_target.h. The target's completions arrive
 * through the image's event fd (rbd_image.c) and are taken on the engine's loop thread,
 * where they are accounted, verified and released. */
#include "rbd_target.h"
#include "rados_target.h"
#include "splitmix.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One op slot: the tagged request the image's drain recognises, then the slot's own. */
struct bench_slot {
    struct cm_rbd_request request;
    uint64_t block;
    uint64_t offset;
    unsigned char *buffer;
};

/* ---- the bench target -------------------------------------------------------------------- */

static bool bit_get(const uint64_t *map, uint64_t bit)
{
    return (map[bit / 64] >> (bit % 64)) & 1;
}

static void bit_set(uint64_t *map, uint64_t bit)
{
    map[bit / 64] |= 1ULL << (bit % 64);
}

static void bit_clear(uint64_t *map, uint64_t bit)
{
    map[bit / 64] &= ~(1ULL << (bit % 64));
}

static int bench_slot_init(void *self, struct cm_op *op)
{
    struct cm_rbd_target *bench = self;
    struct bench_slot *slot = calloc(1, sizeof *slot);
    if (!slot)
        return -ENOMEM;
    slot->buffer = aligned_alloc(4096, (bench->options.io_size + 4095) / 4096 * 4096);
    if (!slot->buffer) {
        free(slot);
        return -ENOMEM;
    }
    slot->request.kind = CM_RBD_REQUEST_TARGET;
    slot->request.run_id = bench->run_id;
    slot->request.op = op;
    op->target_slot = slot;
    return 0;
}

static void bench_slot_fini(void *self, struct cm_op *op)
{
    (void)self;
    struct bench_slot *slot = op->target_slot;
    if (slot) {
        free(slot->buffer);
        free(slot);
        op->target_slot = NULL;
    }
}

/* The next block, never one with an op in flight: two ops on one block could leave a torn
 * block (a write split over two objects) or make a read's expected content ambiguous. The
 * image holds at least as many blocks as the depth, and a slot's own block is freed before
 * the slot is refilled, so a free one exists. seq wraps at the end of the image, like rbd
 * bench. */
static uint64_t pick_block(struct cm_rbd_target *bench)
{
    uint64_t block;
    if (bench->options.pattern == CM_RBD_SEQ) {
        do {
            block = bench->next_block;
            bench->next_block = block + 1 == bench->blocks ? 0 : block + 1;
        } while (bit_get(bench->busy, block));
        return block;
    }
    block = cm_access_pick(&bench->access, &bench->rng);
    for (int tries = 0; tries < 8 && bit_get(bench->busy, block); tries++)
        block = cm_access_pick(&bench->access, &bench->rng);
    while (bit_get(bench->busy, block))
        block = block + 1 == bench->blocks ? 0 : block + 1;
    return block;
}

static int bench_submit(void *self, struct cm_op *op)
{
    struct cm_rbd_target *bench = self;
    struct bench_slot *slot = op->target_slot;
    bool write;
    switch (bench->options.io_type) {
    case CM_RBD_IO_WRITE:
        write = true;
        break;
    case CM_RBD_IO_READ:
        write = false;
        break;
    case CM_RBD_IO_READWRITE:
    default:
        write = cm_splitmix64(&bench->rng) % 100 >= bench->options.rw_mix_read;
        break;
    }
    uint64_t io_size = bench->options.io_size;
    slot->block = pick_block(bench);
    slot->offset = slot->block * io_size;
    bit_set(bench->busy, slot->block);
    op->kind = write ? CM_OP_WRITE : CM_OP_READ;
    op->length = io_size;
    int rc = rbd_aio_create_completion(slot, NULL, &slot->request.completion);
    if (rc < 0) {
        slot->request.completion = NULL;
        return rc;
    }
    if (write) {
        const unsigned char *data =
            bench->stage ? cm_payload_stage_op(bench->stage, io_size, bench->image->name,
                                               slot->offset, op->sequence, bench->run_id)
                         : NULL;
        if (!data) {
            cm_payload_fill(bench->payload, slot->buffer, io_size, bench->image->name, slot->offset,
                            op->sequence, bench->run_id);
            data = slot->buffer;
        }
        rc = rbd_aio_write2(bench->image->image, slot->offset, io_size, (const char *)data,
                            slot->request.completion, 0);
        /* librbd has copied the staged bytes (see write_copies) */
        if (bench->stage)
            cm_payload_stage_release(bench->stage);
    } else {
        rc = rbd_aio_read2(bench->image->image, slot->offset, io_size, (char *)slot->buffer,
                           slot->request.completion, 0);
    }
    if (rc < 0) {
        rbd_aio_release(slot->request.completion);
        slot->request.completion = NULL;
    }
    return rc;
}

static bool all_zero(const unsigned char *buffer, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (buffer[i])
            return false;
    return true;
}

/* "image 'x' offset N (seq S): what differed", from the payload's "object x offset N ..." */
static void record_failure(struct cm_rbd_target *bench, const cm_payload_error *error)
{
    if (bench->n_verify_errors >= CM_RBD_VERIFY_ERRORS_KEPT)
        return;
    char prefix[320];
    snprintf(prefix, sizeof prefix, "object %s offset %" PRIu64, bench->image->name, error->offset);
    char *out = bench->verify_errors[bench->n_verify_errors++];
    size_t n = strlen(prefix);
    if (strncmp(error->message, prefix, n) == 0)
        snprintf(out, sizeof bench->verify_errors[0], "image '%s' offset %" PRIu64 "%s",
                 bench->image->name, error->offset, error->message + n);
    else
        snprintf(out, sizeof bench->verify_errors[0], "image '%s': %s", bench->image->name,
                 error->message);
}

/* A read of a block this run wrote must hold this run's payload. Any other block holds
 * zeros (never written), or what earlier cephmark write runs left: payloads of any run,
 * in blocks of the io size they recorded, each checked on its own. Foreign data (no
 * record, or runs of mixed io sizes) cannot be checked and is counted as skipped. */
static void verify_read(struct cm_rbd_target *bench, struct bench_slot *slot, struct cm_op *op)
{
    const unsigned char *buffer = slot->buffer;
    size_t length = (size_t)bench->options.io_size;
    cm_payload_error error;
    if (bit_get(bench->written, slot->block)) {
        if (cm_payload_verify(bench->payload, buffer, length, bench->image->name, slot->offset,
                              bench->run_id, 0, &error) != CM_PAYLOAD_OK) {
            op->verify_failed = true;
            record_failure(bench, &error);
        }
        return;
    }
    uint64_t prior = bench->prior_io_size;
    if (prior == CM_RBD_PRIOR_NONE || prior == CM_RBD_PRIOR_MIXED || length % prior != 0) {
        if (!all_zero(buffer, length))
            bench->verify_skipped++;
        return;
    }
    for (size_t at = 0; at < length; at += (size_t)prior) {
        if (all_zero(buffer + at, (size_t)prior))
            continue;
        if (cm_payload_verify(bench->payload, buffer + at, (size_t)prior, bench->image->name,
                              slot->offset + at, bench->run_id, CM_PAYLOAD_VERIFY_ANY_RUN,
                              &error) != CM_PAYLOAD_OK) {
            op->verify_failed = true;
            record_failure(bench, &error);
            return;
        }
    }
}

static void bench_complete(void *self, struct cm_op *op)
{
    struct cm_rbd_target *bench = self;
    struct bench_slot *slot = op->target_slot;
    if (slot->request.completion) {
        rbd_aio_release(slot->request.completion);
        slot->request.completion = NULL;
    }
    bit_clear(bench->busy, slot->block);
    if (!bench->options.verify)
        return;
    if (op->kind == CM_OP_WRITE) {
        /* a failed write leaves the block's content unknown: later reads check it as
         * any run's data */
        if (op->result >= 0)
            bit_set(bench->written, slot->block);
        else
            bit_clear(bench->written, slot->block);
        return;
    }
    if (op->result >= 0)
        verify_read(bench, slot, op);
}

static void bench_poll(void *self, uint64_t now_ns)
{
    (void)now_ns;
    struct cm_rbd_target *bench = self;
    cm_rbd_drain_completions(bench->image, bench->run_id);
}

static int bench_wait_fd(void *self)
{
    struct cm_rbd_target *bench = self;
    return bench->image->event_fd;
}

/* ---- requests chosen by the caller (scripted workers) ---------------------------------- */

static struct cm_rbd_request *request_slot(struct cm_rbd_target *bench, struct cm_op *op)
{
    uint32_t index = op->slot;
    void **entry = cm_request_slot_entry(&bench->request_slots, &bench->n_request_slots, index);
    if (!entry)
        return NULL;
    struct cm_rbd_request *slot = *entry;
    if (!slot) {
        slot = *entry = calloc(1, sizeof *slot);
        if (!slot)
            return NULL;
        slot->kind = CM_RBD_REQUEST_TARGET;
        slot->run_id = bench->run_id;
    }
    slot->op = op;
    return slot;
}

/* Like a bench op, without a callback: the completion is taken from the image's queue by
 * the caller's poll of this target. */
static int bench_submit_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_rbd_target *bench = self;
    bool write = request->verb == CM_REQUEST_WRITE;
    if (!write && request->verb != CM_REQUEST_READ)
        return -EOPNOTSUPP;
    struct cm_rbd_request *slot = request_slot(bench, op);
    if (!slot)
        return -ENOMEM;
    op->kind = write ? CM_OP_WRITE : CM_OP_READ;
    op->length = write ? request->data_length : request->length;
    int rc = rbd_aio_create_completion(slot, NULL, &slot->completion);
    if (rc < 0) {
        slot->completion = NULL;
        return rc;
    }
    rc = write ? rbd_aio_write2(bench->image->image, request->offset, request->data_length,
                                request->data, slot->completion, 0)
               : rbd_aio_read2(bench->image->image, request->offset, request->length,
                               request->buffer, slot->completion, 0);
    if (rc < 0) {
        rbd_aio_release(slot->completion);
        slot->completion = NULL;
    }
    return rc;
}

static void bench_complete_request(void *self, struct cm_op *op, struct cm_request *request)
{
    (void)request;
    struct cm_rbd_target *bench = self;
    struct cm_rbd_request *slot = bench->request_slots[op->slot];
    if (slot->completion) {
        rbd_aio_release(slot->completion);
        slot->completion = NULL;
    }
}

void cm_rbd_target_init_requests(struct cm_rbd_target *bench, struct cm_rbd_image *image)
{
    memset(bench, 0, sizeof *bench);
    bench->image = image;
    bench->run_id = cm_rados_new_run_id();
}

const struct cm_target_ops cm_rbd_target_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "rbd",
    .slot_init = bench_slot_init,
    .slot_fini = bench_slot_fini,
    .submit = bench_submit,
    .complete = bench_complete,
    .poll = bench_poll,
    .wait_fd = bench_wait_fd,
    .submit_request = bench_submit_request,
    .complete_request = bench_complete_request,
};

/* Reads the io size earlier write runs recorded, and records this run's when it writes:
 * a different io size than the record makes it "mixed". */
static void io_size_record(struct cm_rbd_target *bench)
{
    rbd_image_t image = bench->image->image;
    char value[64];
    size_t length = sizeof value;
    int rc = rbd_metadata_get(image, CM_RBD_METADATA_IO_SIZE, value, &length);
    bench->prior_io_size = CM_RBD_PRIOR_NONE;
    if (rc >= 0) {
        value[sizeof value - 1] = '\0';
        uint64_t recorded = strtoull(value, NULL, 10);
        bench->prior_io_size = recorded ? recorded : CM_RBD_PRIOR_MIXED;
    }
    if (bench->options.io_type == CM_RBD_IO_READ || bench->prior_io_size == CM_RBD_PRIOR_MIXED ||
        bench->prior_io_size == bench->options.io_size)
        return;
    if (bench->prior_io_size == CM_RBD_PRIOR_NONE)
        snprintf(value, sizeof value, "%" PRIu64, bench->options.io_size);
    else
        snprintf(value, sizeof value, "mixed");
    rc = rbd_metadata_set(image, CM_RBD_METADATA_IO_SIZE, value);
    if (rc < 0)
        snprintf(bench->metadata_error, sizeof bench->metadata_error,
                 "cannot record the io size in image '%s' metadata (%s): later runs may "
                 "not verify this run's data",
                 bench->image->name, strerror(-rc));
}

/* Whether rbd_aio_write2 copies the caller's buffer before it returns, so the bytes may
 * change at once: librbd does unless zero-copy writes are enabled
 * (rbd_disable_zero_copy_writes = false), in which case it keeps a reference to the
 * caller's buffer until the write completes. Read per run: the option can change at run
 * time. When in doubt (the option cannot be read), assume zero-copy. */
static bool write_copies(rbd_image_t image)
{
    bool disabled = false;
    rbd_config_source_t source;
    return cm_rbd_config_bool(image, "rbd_disable_zero_copy_writes", &disabled, &source) == 0 &&
           disabled;
}

/* Bitmaps of this many blocks at most (2 x 256 MiB, touched lazily). */
#define MAX_BLOCKS (1ULL << 31)

int cm_rbd_target_init(struct cm_rbd_target *bench, struct cm_rbd_image *image,
                       const struct cm_rbd_target_options *options, char *error, size_t error_size)
{
    memset(bench, 0, sizeof *bench);
    bench->image = image;
    bench->options = *options;
    uint64_t io_size = options->io_size;
    char have[32], want[32];
    if (io_size == 0 || io_size % 512 != 0) {
        snprintf(error, error_size,
                 "io_size must be a positive multiple of 512 bytes, got %" PRIu64, io_size);
        return -EINVAL;
    }
    int rc = rbd_get_size(image->image, &bench->size);
    if (rc < 0) {
        snprintf(error, error_size, "image '%s': cannot get its size: %s", image->name,
                 strerror(-rc));
        return rc;
    }
    cm_format_size(io_size, want, sizeof want);
    cm_format_size(bench->size, have, sizeof have);
    if (io_size > bench->size) {
        snprintf(error, error_size, "io_size %s is larger than image '%s' (%s)", want, image->name,
                 have);
        return -EINVAL;
    }
    bench->blocks = bench->size / io_size;
    if (bench->blocks < options->depth) {
        snprintf(error, error_size,
                 "image '%s' (%s) holds %" PRIu64 " blocks of %s: it needs at least threads "
                 "(%u), since no two ops in flight share a block",
                 image->name, have, bench->blocks, want, options->depth);
        return -EINVAL;
    }
    if (bench->blocks > MAX_BLOCKS) {
        snprintf(error, error_size,
                 "image '%s' (%s) holds %" PRIu64 " blocks of %s, more than the %" PRIu64
                 " a run tracks: use a larger io_size",
                 image->name, have, bench->blocks, want, (uint64_t)MAX_BLOCKS);
        return -EINVAL;
    }
    if (image->read_only && options->io_type != CM_RBD_IO_READ) {
        snprintf(error, error_size,
                 "image '%s' is open read-only: io_type %s needs it opened with read_only = false",
                 image->name, options->io_type == CM_RBD_IO_WRITE ? "write" : "readwrite");
        return -EROFS;
    }
    bench->run_id = cm_rados_new_run_id();
    bench->rng = bench->run_id ^ cm_rados_new_run_id();
    size_t words = (size_t)((bench->blocks + 63) / 64);
    bench->busy = calloc(words, sizeof *bench->busy);
    bench->written = calloc(words, sizeof *bench->written);
    bench->payload = cm_payload_new(bench->run_id, (size_t)io_size);
    int access_rc = cm_access_init(&bench->access, &options->access, bench->blocks, bench->run_id);
    if (!bench->busy || !bench->written || !bench->payload || access_rc < 0) {
        cm_rbd_target_fini(bench);
        snprintf(error, error_size, "out of memory for a run over %" PRIu64 " blocks",
                 bench->blocks);
        return -ENOMEM;
    }
    /* without a stage (out of memory) writes are filled into the slots' buffers */
    if (options->io_type != CM_RBD_IO_READ && write_copies(image->image))
        bench->stage = cm_payload_stage_new(bench->payload);
    io_size_record(bench);
    return 0;
}

void cm_rbd_target_fini(struct cm_rbd_target *bench)
{
    cm_access_fini(&bench->access);
    free(bench->busy);
    free(bench->written);
    cm_payload_stage_free(bench->stage);
    cm_payload_free(bench->payload);
    bench->busy = bench->written = NULL;
    bench->stage = NULL;
    bench->payload = NULL;
    for (size_t i = 0; i < bench->n_request_slots; i++)
        free(bench->request_slots[i]);
    free(bench->request_slots);
    bench->request_slots = NULL;
    bench->n_request_slots = 0;
}
