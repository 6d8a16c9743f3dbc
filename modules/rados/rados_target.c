/* The rados target of the op engine; see rados_target.h. In closed loop the engine waits
 * for librados completions itself (no callbacks: see bench_block); in open loop librados
 * completes ops on its finisher thread, where the callback only hands the op to the
 * engine. Releasing the completion and verifying data happen on the engine's loop thread. */
#include "splitmix.h"
#include "rados_slot.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

uint64_t cm_rados_new_run_id(void)
{
    uint64_t id = 0;
    if (getrandom(&id, sizeof id, 0) != sizeof id)
        id = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    return id ? id : 1;
}

/* Reads of blocks from this size on keep the messenger's receive buffers in the heap
 * (keep_large_buffers). */
#define LARGE_BLOCK ((uint64_t)1 << 20)

static uint64_t blocks_per_object(const struct cm_rados_run_meta *meta)
{
    return meta->object_size / meta->block_size;
}

void cm_rados_object_name(const struct cm_rados_target *bench, uint64_t object, char *out, size_t n)
{
    snprintf(out, n, "%s_object%" PRIu64, bench->meta.prefix, object);
}

static int bench_slot_init(void *self, struct cm_op *op)
{
    struct cm_rados_target *bench = self;
    struct bench_slot *slot = calloc(1, sizeof *slot);
    if (!slot)
        return -ENOMEM;
    slot->op = op;
    bench->slots++;
    bench->blocking = cm_engine_blocking(op);
    bool object_reads = !(bench->meta.write_to & ~CM_RADOS_TO_OBJECT);
    if ((bench->op == CM_RADOS_SEQ || bench->op == CM_RADOS_RAND) && object_reads) {
        /* sized runs read one byte more than an object's size, to see one that grew */
        size_t size = (bench->meta.block_size + bench->meta.sized + 4095) / 4096 * 4096;
        slot->buffer = aligned_alloc(4096, size);
        if (!slot->buffer) {
            free(slot);
            return -ENOMEM;
        }
        /* fault the pages in now, not during the run */
        memset(slot->buffer, 0, size);
    }
    op->target_slot = slot;
    int rc = cm_rados_pass_slot_init(bench, slot);
    if (rc < 0) {
        op->target_slot = NULL;
        free(slot->buffer);
        free(slot);
        return rc;
    }
    return 0;
}

static void bench_slot_fini(void *self, struct cm_op *op)
{
    (void)self;
    struct bench_slot *slot = op->target_slot;
    if (slot) {
        cm_rados_kv_slot_free(slot);
        free(slot->buffer);
        free(slot->expected);
        free(slot);
        op->target_slot = NULL;
    }
}

/* librados's finisher thread, when the engine does not block (open loop): nothing but
 * hand-over (see engine.h). */
static void bench_completed(rados_completion_t completion, void *arg)
{
    cm_engine_complete(arg, rados_aio_get_return_value(completion));
}

static int create_completion(struct cm_rados_target *bench, struct cm_op *op,
                             struct bench_slot *slot)
{
    /* blocking mode: no callback, so librados never hops to its finisher thread; the loop
     * learns of completions by waiting and asking (bench_block, bench_poll) */
    if (bench->blocking)
        return rados_aio_create_completion2(NULL, NULL, &slot->completion);
    return rados_aio_create_completion2(op, bench_completed, &slot->completion);
}

static void link_newest(struct cm_rados_target *bench, struct bench_slot *slot)
{
    slot->next = NULL;
    slot->prev = bench->newest;
    if (bench->newest)
        bench->newest->next = slot;
    else
        bench->oldest = slot;
    bench->newest = slot;
}

static void unlink_slot(struct cm_rados_target *bench, struct bench_slot *slot)
{
    if (slot->prev)
        slot->prev->next = slot->next;
    else
        bench->oldest = slot->next;
    if (slot->next)
        slot->next->prev = slot->prev;
    else
        bench->newest = slot->prev;
    slot->prev = slot->next = NULL;
}

/* Hands finished in-flight ops to the engine, oldest first: all of them (`whole`), or only
 * the run of finished ops at the old end of the list, which costs one librados lock per op
 * plus one, where a whole scan costs one per op in flight. */
static unsigned report_completed(struct cm_rados_target *bench, bool whole)
{
    unsigned reported = 0;
    struct bench_slot *slot = bench->oldest;
    while (slot) {
        struct bench_slot *next = slot->next;
        if (rados_aio_is_complete(slot->completion)) {
            unlink_slot(bench, slot);
            cm_engine_complete(slot->op, rados_aio_get_return_value(slot->completion));
            reported++;
        } else if (!whole) {
            break;
        }
        slot = next;
    }
    return reported;
}

/* Every loop turn: the cheap scan. Ops that finished out of order are found by the whole
 * scan the loop's next block starts with. */
static void bench_poll(void *self, uint64_t now_ns)
{
    (void)now_ns;
    struct cm_rados_target *bench = self;
    if (bench->blocking)
        report_completed(bench, false);
}

/* Sleeps in librados until the oldest op completes (one wake-up: the messenger thread
 * signals the completion's condition variable), then reports it and the finished ops right
 * behind it. Ops that finished out of order during the wait are found by the whole scan
 * the next block starts with, after the freed slots were refilled, and never wait for
 * another sleep; a whole scan here as well would cost a librados lock per op in flight
 * per wake-up (measured: 1.5 of the 5.9 locks per 4K write). An op that finished while
 * the loop waited for an older one is timestamped when reported: its latency is
 * overstated by at most the older op's remaining time plus the refills. */
static void bench_block(void *self)
{
    struct cm_rados_target *bench = self;
    if (!bench->oldest)
        return;
    /* younger ops that finished out of order are reported (and their slots refilled)
     * instead of sleeping: a slot must not idle behind a slower, older op */
    if (report_completed(bench, true) > 0)
        return;
    struct bench_slot *oldest = bench->oldest;
    pthread_mutex_lock(&bench->block_lock);
    if (bench->block_cancelled) {
        pthread_mutex_unlock(&bench->block_lock);
        return;
    }
    bench->blocked_on = oldest->completion;
    pthread_mutex_unlock(&bench->block_lock);
    rados_aio_wait_for_complete(oldest->completion);
    pthread_mutex_lock(&bench->block_lock);
    bench->blocked_on = NULL;
    pthread_mutex_unlock(&bench->block_lock);
    report_completed(bench, false);
}

/* The engine's watchdog thread, once the drain deadline has passed: cancelling the op the
 * loop waits for completes it (-ECANCELED) and so ends the wait; later blocks return at
 * once. The lock keeps the completion alive while it is cancelled. */
static void bench_cancel_block(void *self)
{
    struct cm_rados_target *bench = self;
    pthread_mutex_lock(&bench->block_lock);
    bench->block_cancelled = true;
    if (bench->blocked_on)
        rados_aio_cancel(bench->io, bench->blocked_on);
    pthread_mutex_unlock(&bench->block_lock);
}

/* A write without a copy of its body: librados copies the 128-byte header and references
 * the body in the stage. */
static int submit_write(struct cm_rados_target *bench, struct bench_slot *slot, uint64_t sequence,
                        uint64_t length, bool full)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    unsigned char header[CM_PAYLOAD_HEADER_SIZE];
    size_t body_offset;
    int head_len = cm_payload_stage_split(bench->stage, length, slot->object, slot->offset,
                                          sequence, meta->run_id, header, &body_offset);
    if (head_len < 0)
        return -EINVAL; /* cannot happen: the payload was made for this block size */
    struct cm_rados_zc_write write = {
        .object = slot->object,
        .offset = slot->offset,
        .full = full,
        .head = header,
        .head_len = (size_t)head_len,
        .body = bench->stage_memory,
        .body_offset = body_offset,
        .body_len = length - (size_t)head_len,
        .hint_object_size = bench->alloc_hints ? (meta->sized ? length : meta->object_size) : 0,
    };
    return cm_rados_zc_aio_write(bench->io, slot->completion, &write);
}

/* rand's and overwrite's next block: uniform over the blocks written (rados bench's
 * rand), or a skewed pick of an object and then any of its blocks. */
uint64_t cm_rados_pick_block(struct cm_rados_target *bench)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    uint64_t object = cm_access_pick(&bench->access, &bench->rng);
    if (!bench->skewed)
        return object; /* over the blocks */
    uint64_t per_object = blocks_per_object(meta), first = object * per_object;
    uint64_t blocks = meta->blocks - first < per_object ? meta->blocks - first : per_object;
    return blocks > 1 ? first + cm_splitmix64(&bench->rng) % blocks : first;
}

static int bench_submit(void *self, struct cm_op *op)
{
    struct cm_rados_target *bench = self;
    struct bench_slot *slot = op->target_slot;
    const struct cm_rados_run_meta *meta = &bench->meta;
    uint64_t block;
    int rc;

    switch (bench->op) {
    case CM_RADOS_WRITE:
        block = op->sequence;
        break;
    case CM_RADOS_SEQ:
        if (op->sequence >= meta->blocks)
            return CM_TARGET_DONE;
        block = op->sequence;
        break;
    case CM_RADOS_RAND:
        block = cm_rados_pick_block(bench);
        break;
    case CM_RADOS_OVERWRITE:
    case CM_RADOS_APPEND:
    case CM_RADOS_VERIFY:
    case CM_RADOS_MIXED:
        if ((rc = create_completion(bench, op, slot)) < 0)
            return rc;
        rc = bench->op == CM_RADOS_MIXED ? cm_rados_mixed_submit(bench, op, slot)
                                         : cm_rados_pass_submit(bench, op, slot);
        goto submitted;
    case CM_RADOS_REMOVE:
    default:
        if (bench->names) {
            if (op->sequence >= bench->n_names)
                return CM_TARGET_DONE;
            snprintf(slot->object, sizeof slot->object, "%s", bench->names[op->sequence]);
        } else {
            if (op->sequence >= meta->objects)
                return CM_TARGET_DONE;
            cm_rados_object_name(bench, op->sequence, slot->object, sizeof slot->object);
        }
        op->kind = CM_OP_REMOVE;
        op->length = 0;
        if ((rc = create_completion(bench, op, slot)) < 0)
            return rc;
        rc = rados_aio_remove(bench->io, slot->object, slot->completion);
        goto submitted;
    }
    uint64_t per_object = blocks_per_object(meta);
    cm_rados_object_name(bench, block / per_object, slot->object, sizeof slot->object);
    slot->offset = (block % per_object) * meta->block_size;
    slot->block = block;
    /* sized runs: a block is a whole object of its own size */
    op->length = meta->sized ? cm_size_of(&meta->sizes, meta->run_id, block) : meta->block_size;
    slot->expected_size = op->length;
    if ((rc = create_completion(bench, op, slot)) < 0)
        return rc;
    if (meta->write_to & ~CM_RADOS_TO_OBJECT) {
        rc = cm_rados_kv_submit(bench, op, slot, block);
    } else if (bench->op == CM_RADOS_WRITE) {
        op->kind = CM_OP_WRITE;
        rc = submit_write(bench, slot, op->sequence, op->length, per_object == 1);
    } else {
        op->kind = CM_OP_READ;
        rc = rados_aio_read(bench->io, slot->object, slot->completion, (char *)slot->buffer,
                            op->length + meta->sized, slot->offset);
    }
submitted:
    if (rc < 0 || rc == CM_TARGET_DONE) {
        rados_aio_release(slot->completion);
        slot->completion = NULL;
    } else if (bench->blocking) {
        link_newest(bench, slot);
    }
    return rc;
}

static void bench_complete(void *self, struct cm_op *op)
{
    struct cm_rados_target *bench = self;
    struct bench_slot *slot = op->target_slot;
    if (slot->completion) {
        rados_aio_release(slot->completion);
        slot->completion = NULL;
    }
    if (bench->op == CM_RADOS_MIXED) {
        cm_rados_mixed_complete(bench, op, slot);
        return;
    }
    if (op->kind == CM_OP_REMOVE && op->result == -ENOENT)
        op->result = 0; /* already gone: cleanup's goal is met */
    if (slot->kv) {
        cm_rados_kv_complete(bench, op, slot);
        return;
    }
    if (op->kind != CM_OP_READ || op->result < 0 || !bench->verify)
        return;
    if (bench->op == CM_RADOS_VERIFY) {
        cm_rados_verify_complete(bench, op, slot);
        return;
    }
    if (bench->meta.sized && (uint64_t)op->result != slot->expected_size) {
        op->verify_failed = true;
        if (bench->n_verify_errors < CM_RADOS_VERIFY_ERRORS_KEPT)
            snprintf(bench->verify_errors[bench->n_verify_errors++], sizeof bench->verify_errors[0],
                     "object %s: %" PRId64 " bytes, the write run wrote %" PRIu64, slot->object,
                     op->result, slot->expected_size);
        return;
    }
    if (bench->meta.overwrite_block) {
        if (!cm_rados_verify_blocks(bench, slot, slot->buffer, (size_t)op->result, slot->offset,
                                    slot->block))
            op->verify_failed = true;
        return;
    }
    cm_payload_error error;
    if (cm_payload_verify(bench->payload, slot->buffer, (size_t)op->result, slot->object,
                          slot->offset, bench->meta.run_id, 0, &error) != CM_PAYLOAD_OK) {
        op->verify_failed = true;
        if (bench->n_verify_errors < CM_RADOS_VERIFY_ERRORS_KEPT)
            snprintf(bench->verify_errors[bench->n_verify_errors++], sizeof bench->verify_errors[0],
                     "%s", error.message);
    }
}

/* ---- requests chosen by the caller (scripted workers) ---------------------------------- */

struct request_slot {
    rados_completion_t completion;
    uint64_t size; /* stat's outputs, written by librados */
    time_t mtime;
};

static struct request_slot *request_slot(struct cm_rados_target *bench, uint32_t index)
{
    void **entry = cm_request_slot_entry(&bench->request_slots, &bench->n_request_slots, index);
    if (!entry)
        return NULL;
    if (!*entry)
        *entry = calloc(1, sizeof(struct request_slot));
    return *entry;
}

/* Completions call back on librados' finisher thread (the caller's run never blocks in
 * this target), which only hands the op over. */
static int bench_submit_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_rados_target *bench = self;
    struct request_slot *slot = request_slot(bench, op->slot);
    if (!slot)
        return -ENOMEM;
    if (!request->name)
        return -EINVAL;
    int rc = rados_aio_create_completion2(op, bench_completed, &slot->completion);
    if (rc < 0)
        return rc;
    switch ((enum cm_request_verb)request->verb) {
    case CM_REQUEST_WRITE:
        op->kind = CM_OP_WRITE;
        op->length = request->data_length;
        rc = rados_aio_write(bench->io, request->name, slot->completion, request->data,
                             request->data_length, request->offset);
        break;
    case CM_REQUEST_WRITE_FULL:
        op->kind = CM_OP_WRITE;
        op->length = request->data_length;
        rc = rados_aio_write_full(bench->io, request->name, slot->completion, request->data,
                                  request->data_length);
        break;
    case CM_REQUEST_READ:
        op->kind = CM_OP_READ;
        op->length = request->length;
        rc = rados_aio_read(bench->io, request->name, slot->completion, request->buffer,
                            request->length, request->offset);
        break;
    case CM_REQUEST_STAT:
        op->kind = CM_OP_STAT;
        op->length = 0;
        rc = rados_aio_stat(bench->io, request->name, slot->completion, &slot->size, &slot->mtime);
        break;
    case CM_REQUEST_REMOVE:
        op->kind = CM_OP_REMOVE;
        op->length = 0;
        rc = rados_aio_remove(bench->io, request->name, slot->completion);
        break;
    default:
        rc = -EOPNOTSUPP;
        break;
    }
    if (rc < 0) {
        rados_aio_release(slot->completion);
        slot->completion = NULL;
    }
    return rc;
}

static void bench_complete_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_rados_target *bench = self;
    struct request_slot *slot = bench->request_slots[op->slot];
    if (slot->completion) {
        rados_aio_release(slot->completion);
        slot->completion = NULL;
    }
    if (request->verb == CM_REQUEST_STAT && op->result >= 0) {
        request->size = slot->size;
        request->mtime = (int64_t)slot->mtime;
    }
}

void cm_rados_target_init_requests(struct cm_rados_target *bench, rados_ioctx_t io)
{
    memset(bench, 0, sizeof *bench);
    bench->io = io;
    pthread_mutex_init(&bench->block_lock, NULL);
}

const struct cm_target_ops cm_rados_target_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "rados",
    .slot_init = bench_slot_init,
    .slot_fini = bench_slot_fini,
    .submit = bench_submit,
    .complete = bench_complete,
    .poll = bench_poll,
    .block = bench_block,
    .cancel_block = bench_cancel_block,
    .submit_request = bench_submit_request,
    .complete_request = bench_complete_request,
};

/* The messenger receives every large read into new buffers. With glibc's default (dynamic)
 * thresholds, multi-MiB buffers keep being mapped and unmapped, and each of their pages
 * faults in again, per op: about 0.5 ms of system time per 4 MiB op here. With fixed
 * thresholds freed buffers stay in the heap and the next op reuses warm pages. Process-wide
 * and never undone, so only for runs of large blocks; the price is a heap that keeps its
 * peak size (about threads x block size) until the process exits. */
static void keep_large_buffers(uint64_t block_size)
{
    static bool done;
    if (done || block_size < LARGE_BLOCK)
        return;
    done = true;
    mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's maximum on 64-bit */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int cm_rados_target_init(struct cm_rados_target *bench, rados_ioctx_t io,
                         enum cm_rados_target_op op, const struct cm_rados_run_meta *meta,
                         bool verify, char *error, size_t error_size)
{
    memset(bench, 0, sizeof *bench);
    bench->io = io;
    bench->op = op;
    bench->meta = *meta;
    bench->verify = verify;
    bench->rng = meta->run_id ^ cm_rados_new_run_id();
    if (op == CM_RADOS_OVERWRITE || op == CM_RADOS_MIXED) {
        bench->op_block = meta->overwrite_block;
        bench->pass = meta->overwrite_passes;
    } else if (op == CM_RADOS_APPEND) {
        bench->op_block = meta->append_block;
    }
    pthread_mutex_init(&bench->block_lock, NULL);
    if (op != CM_RADOS_REMOVE) {
        if (meta->block_size == 0 || meta->object_size < meta->block_size) {
            snprintf(error, error_size,
                     "block size %" PRIu64 " must be between 1 and the object size %" PRIu64,
                     meta->block_size, meta->object_size);
            return -EINVAL;
        }
        if (op != CM_RADOS_WRITE && meta->blocks == 0) {
            snprintf(error, error_size, "the write run with prefix %s wrote no objects",
                     meta->prefix);
            return -ENOENT;
        }
        if (op != CM_RADOS_WRITE)
            keep_large_buffers(meta->block_size);
        struct cm_access_spec uniform = {.kind = CM_ACCESS_UNIFORM};
        if ((op == CM_RADOS_RAND || op == CM_RADOS_OVERWRITE) &&
            cm_access_init(&bench->access, &uniform, meta->blocks, 0) < 0)
            return -ENOMEM;
        bench->alloc_hints = true;
        bench->payload = cm_payload_new(meta->run_id, (size_t)meta->block_size);
        if (bench->payload && op == CM_RADOS_WRITE) {
            bench->stage_memory = cm_rados_zc_buffer_new(cm_payload_stage_size(bench->payload));
            if (bench->stage_memory)
                bench->stage = cm_payload_stage_new_at(
                    bench->payload, cm_rados_zc_buffer_data(bench->stage_memory));
        }
        if (!bench->payload || (op == CM_RADOS_WRITE && !bench->stage)) {
            cm_rados_zc_buffer_free(bench->stage_memory);
            bench->stage_memory = NULL;
            cm_payload_free(bench->payload);
            bench->payload = NULL;
            snprintf(error, error_size, "out of memory for a %" PRIu64 "-byte payload",
                     meta->block_size);
            return -ENOMEM;
        }
    }
    return 0;
}

int cm_rados_target_set_access(struct cm_rados_target *bench, const struct cm_access_spec *spec,
                               uint64_t seed)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    if (spec->kind == CM_ACCESS_UNIFORM && !seed)
        return 0;
    if (seed)
        bench->rng = seed;
    if (spec->kind == CM_ACCESS_UNIFORM)
        return 0;
    struct cm_access access;
    /* the hot objects are the write run's: the same for every rand over it */
    if (cm_access_init(&access, spec, meta->objects, meta->run_id) < 0)
        return -ENOMEM;
    cm_access_fini(&bench->access);
    bench->access = access;
    bench->skewed = true;
    return 0;
}

void cm_rados_target_fini(struct cm_rados_target *bench)
{
    cm_access_fini(&bench->access);
    cm_payload_stage_free(bench->stage);
    bench->stage = NULL;
    cm_rados_zc_buffer_free(bench->stage_memory); /* ops still in librados keep it alive */
    bench->stage_memory = NULL;
    cm_payload_free(bench->payload);
    bench->payload = NULL;
    for (size_t i = 0; i < bench->n_request_slots; i++)
        free(bench->request_slots[i]);
    free(bench->request_slots);
    bench->request_slots = NULL;
    bench->n_request_slots = 0;
    pthread_mutex_destroy(&bench->block_lock);
    cm_rados_mixed_free(bench);
}

int cm_rados_meta_version(const struct cm_rados_run_meta *meta)
{
    bool kv = meta->write_to && meta->write_to != CM_RADOS_TO_OBJECT;
    if (meta->sized || kv || meta->overwrite_block || meta->append_block)
        return CM_RADOS_META_VERSION;
    return 2;
}

/* The fields of omap and xattr runs and of later passes, only when they are set, so that
 * plain runs keep the format earlier versions read. */
static int format_passes(const struct cm_rados_run_meta *meta, char *text, size_t size)
{
    int n = 0;
    if (meta->write_to && meta->write_to != CM_RADOS_TO_OBJECT)
        n = snprintf(text, size, "write_to %u\nkeys_per_op %" PRIu64 "\nkey_size %" PRIu64 "\n",
                     meta->write_to, meta->keys_per_op, meta->key_size);
    if (n >= 0 && (size_t)n < size && meta->overwrite_block)
        n += snprintf(text + n, size - (size_t)n,
                      "overwrite_block %" PRIu64 "\noverwrite_passes %" PRIu64
                      "\noverwrites %" PRIu64 "\n",
                      meta->overwrite_block, meta->overwrite_passes, meta->overwrites);
    if (n >= 0 && (size_t)n < size && meta->append_block)
        n += snprintf(text + n, size - (size_t)n, "append_block %" PRIu64 "\nappends %" PRIu64 "\n",
                      meta->append_block, meta->appends);
    if (n >= 0 && (size_t)n < size && meta->removed)
        n += snprintf(text + n, size - (size_t)n, "removed %" PRIu64 "\n", meta->removed);
    return n < 0 || (size_t)n >= size ? -1 : n;
}

/* Reads one of format_passes's fields; false when `key` is none of them. */
static bool parse_pass_field(struct cm_rados_run_meta *meta, const char *key, const char *value)
{
    static const struct {
        const char *key;
        size_t offset;
    } fields[] = {
        {"keys_per_op", offsetof(struct cm_rados_run_meta, keys_per_op)},
        {"key_size", offsetof(struct cm_rados_run_meta, key_size)},
        {"overwrite_block", offsetof(struct cm_rados_run_meta, overwrite_block)},
        {"overwrite_passes", offsetof(struct cm_rados_run_meta, overwrite_passes)},
        {"overwrites", offsetof(struct cm_rados_run_meta, overwrites)},
        {"append_block", offsetof(struct cm_rados_run_meta, append_block)},
        {"appends", offsetof(struct cm_rados_run_meta, appends)},
        {"removed", offsetof(struct cm_rados_run_meta, removed)},
    };
    if (strcmp(key, "write_to") == 0) {
        meta->write_to = (unsigned)strtoul(value, NULL, 10);
        return true;
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strcmp(key, fields[i].key) == 0) {
            uint64_t *field = (uint64_t *)((char *)meta + fields[i].offset);
            *field = strtoull(value, NULL, 10);
            return true;
        }
    return false;
}

int cm_rados_meta_format(const struct cm_rados_run_meta *meta, bool complete, char *text,
                         size_t size)
{
    int n = snprintf(text, size,
                     "cephmark-run-metadata %d\nstate %s\n"
                     "prefix %s\nobject_size %" PRIu64 "\nblock_size %" PRIu64 "\nblocks %" PRIu64
                     "\nobjects %" PRIu64 "\n",
                     cm_rados_meta_version(meta), complete ? "complete" : "running", meta->prefix,
                     meta->object_size, meta->block_size, meta->blocks, meta->objects);
    if (n < 0 || (size_t)n >= size)
        return -ENAMETOOLONG;
    if (meta->sized) {
        int m = snprintf(text + n, size - (size_t)n, "object_sizes ");
        int k = m < 0 ? -1 : cm_size_format(&meta->sizes, text + n + m, size - (size_t)(n + m));
        if (k < 0 || (size_t)n + (size_t)m + (size_t)k + 1 >= size)
            return -ENAMETOOLONG;
        n += m + k;
        text[n++] = '\n';
        text[n] = 0;
    }
    int extra = format_passes(meta, text + n, size - (size_t)n);
    if (extra < 0)
        return -ENAMETOOLONG;
    n += extra;
    struct cm_owner owner = meta->owner;
    owner.run_id = meta->run_id;
    int m = cm_owner_format(&owner, text + n, size - (size_t)n);
    if (m < 0)
        return -ENAMETOOLONG;
    return n + m;
}

static int meta_store(rados_ioctx_t io, const char *run_name, const struct cm_rados_run_meta *meta,
                      bool complete, bool exclusive, double timeout)
{
    char text[2048];
    int n = cm_rados_meta_format(meta, complete, text, sizeof text);
    if (n < 0)
        return n;
    return cm_rados_create(io, run_name, text, (size_t)n, exclusive, false, timeout);
}

int cm_rados_meta_store(rados_ioctx_t io, const char *run_name,
                        const struct cm_rados_run_meta *meta, bool complete, double timeout)
{
    return meta_store(io, run_name, meta, complete, false, timeout);
}

int cm_rados_meta_claim(rados_ioctx_t io, const char *run_name,
                        const struct cm_rados_run_meta *meta, double timeout)
{
    return meta_store(io, run_name, meta, false, true, timeout);
}

int cm_rados_meta_complete(rados_ioctx_t io, const char *run_name,
                           const struct cm_rados_run_meta *meta, double timeout)
{
    return meta_store(io, run_name, meta, true, false, timeout);
}

bool cm_rados_meta_parse(char *text, struct cm_rados_run_meta *meta)
{
    memset(meta, 0, sizeof *meta);
    int fields = 0, version = 0;
    bool running = false;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char key[32], value[512];
        if (sscanf(line, "%31s %511s", key, value) != 2)
            continue;
        if (strcmp(key, "cephmark-run-metadata") == 0)
            version = (int)strtol(value, NULL, 10);
        else if (strcmp(key, "state") == 0)
            running = strcmp(value, "running") == 0;
        else if (strcmp(key, "prefix") == 0 && ++fields)
            snprintf(meta->prefix, sizeof meta->prefix, "%.127s", value);
        else if (strcmp(key, "object_size") == 0 && ++fields)
            meta->object_size = strtoull(value, NULL, 10);
        else if (strcmp(key, "block_size") == 0 && ++fields)
            meta->block_size = strtoull(value, NULL, 10);
        else if (strcmp(key, "blocks") == 0 && ++fields)
            meta->blocks = strtoull(value, NULL, 10);
        else if (strcmp(key, "objects") == 0 && ++fields)
            meta->objects = strtoull(value, NULL, 10);
        else if (strcmp(key, "run_id") == 0 && ++fields)
            meta->run_id = strtoull(value, NULL, 10);
        else if (strcmp(key, "object_sizes") == 0)
            meta->sized = cm_size_parse(value, &meta->sizes);
        else if (!parse_pass_field(meta, key, value))
            cm_owner_parse_field(&meta->owner, key, value);
    }
    meta->owner.run_id = meta->run_id;
    meta->version = version;
    meta->complete = !running;
    return version >= 1 && version <= CM_RADOS_META_VERSION && fields == 6 &&
           meta->block_size != 0 && meta->object_size >= meta->block_size && meta->prefix[0];
}

int cm_rados_meta_read(rados_ioctx_t io, const char *run_name, struct cm_rados_run_meta *meta,
                       char *error, size_t error_size, double timeout)
{
    char *text = NULL;
    int rc = cm_rados_read_small(io, run_name, &text, 4096, timeout);
    if (rc == -ENOENT) {
        snprintf(error, error_size,
                 "no benchmark run '%s' in this pool: run a write phase first (and keep its "
                 "objects: no cleanup)",
                 run_name);
        return rc;
    }
    if (rc < 0) {
        snprintf(error, error_size, "cannot read the run metadata '%s': %s", run_name,
                 rc == -ETIMEDOUT ? "no answer from the OSDs in time" : strerror(-rc));
        return rc;
    }
    bool ok = cm_rados_meta_parse(text, meta);
    free(text);
    if (!ok && meta->version > CM_RADOS_META_VERSION) {
        snprintf(error, error_size,
                 "run metadata '%s' is format %d, written by a newer cephmark: this one reads "
                 "formats 1 to %d (use the version that wrote the run)",
                 run_name, meta->version, CM_RADOS_META_VERSION);
        return -EINVAL;
    }
    if (!ok) {
        snprintf(error, error_size,
                 "object '%s' is not cephmark run metadata (written by another tool?)", run_name);
        return -EINVAL;
    }
    return 0;
}
