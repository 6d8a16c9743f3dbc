/* The null target; see null_target.h. Pending ops wait in a binary min-heap keyed by due
 * time, and the engine's loop completes them when they are due (no threads involved). */
#include "splitmix.h"
#include "null_target.h"

#include <stdlib.h>

struct pending {
    uint64_t due_ns;
    struct cm_op *op;
};

struct cm_null_target {
    struct cm_null_config config;
    uint64_t rng;
    uint64_t mix_rng;
    uint64_t submitted;
    struct pending *heap;
    size_t heap_len, heap_cap;
    struct cm_access access;
    struct cm_access_stream picks;
    uint64_t picked;
};

static void heap_push(struct cm_null_target *t, uint64_t due, struct cm_op *op)
{
    size_t i = t->heap_len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (t->heap[parent].due_ns <= due)
            break;
        t->heap[i] = t->heap[parent];
        i = parent;
    }
    t->heap[i] = (struct pending){due, op};
}

static struct pending heap_pop(struct cm_null_target *t)
{
    struct pending top = t->heap[0];
    struct pending last = t->heap[--t->heap_len];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= t->heap_len)
            break;
        if (child + 1 < t->heap_len && t->heap[child + 1].due_ns < t->heap[child].due_ns)
            child++;
        if (last.due_ns <= t->heap[child].due_ns)
            break;
        t->heap[i] = t->heap[child];
        i = child;
    }
    if (t->heap_len > 0)
        t->heap[i] = last;
    return top;
}

static int null_submit(void *self, struct cm_op *op)
{
    struct cm_null_target *t = self;
    if (t->config.work && t->submitted >= t->config.work)
        return CM_TARGET_DONE;
    t->submitted++;
    op->kind = CM_OP_OTHER;
    op->length = t->config.block_size;
    if (t->config.mix.total) {
        op->kind = cm_mix_pick(&t->config.mix, &t->mix_rng);
        /* reads and writes move the block, the other kinds nothing (READ 0, WRITE 1) */
        op->length = op->kind <= CM_OP_WRITE ? t->config.block_size : 0;
    }
    if (t->config.pick)
        t->picked += cm_access_next(&t->picks);
    uint64_t delay = t->config.delay_ns;
    if (t->config.delay_max_ns > delay)
        delay += cm_splitmix64(&t->rng) % (t->config.delay_max_ns - delay + 1);
    if (delay == 0) {
        cm_engine_complete(op, 0);
        return 0;
    }
    heap_push(t, op->start_ns + delay, op);
    return 0;
}

static uint64_t null_next_deadline(void *self)
{
    struct cm_null_target *t = self;
    return t->heap_len ? t->heap[0].due_ns : UINT64_MAX;
}

static void null_poll(void *self, uint64_t now_ns)
{
    struct cm_null_target *t = self;
    while (t->heap_len && t->heap[0].due_ns <= now_ns) {
        struct pending due = heap_pop(t);
        cm_engine_complete(due.op, 0);
    }
}

const struct cm_target_ops cm_null_target_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "null",
    .submit = null_submit,
    .next_deadline = null_next_deadline,
    .poll = null_poll,
};

struct cm_null_target *cm_null_target_new(const struct cm_null_config *config, unsigned depth)
{
    struct cm_null_target *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->config = *config;
    t->rng = config->seed ? config->seed : 1;
    t->mix_rng = t->rng;
    t->heap_cap = depth;
    t->heap = calloc(depth ? depth : 1, sizeof *t->heap);
    uint64_t seed = config->seed ^ 0x6a09e667f3bcc909ULL;
    cm_access_stream_init(&t->picks, &t->access, cm_splitmix64(&seed));
    if (!t->heap || (config->pick && cm_access_init(&t->access, &config->access, config->objects,
                                                    cm_splitmix64(&seed)) < 0)) {
        free(t->heap);
        free(t);
        return NULL;
    }
    return t;
}

uint64_t cm_null_target_picked(const struct cm_null_target *t)
{
    return t->picked;
}

void cm_null_target_free(struct cm_null_target *t)
{
    if (t) {
        cm_access_fini(&t->access);
        free(t->heap);
        free(t);
    }
}
