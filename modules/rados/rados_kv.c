/* Write runs whose blocks go to omap keys and xattrs, as rados bench's --write-omap and
 * --write-xattr do, and the seq and rand reads that get them back and verify them.
 *
 * A write op of block b (object b / blocks per object, offset o inside it) sets
 * keys_per_op keys named like rados bench's, "bench-omap-key-<o>" and
 * "bench-xattr-key-<o>" (with ".<j>" for the j-th key when keys_per_op > 1, and the number
 * zero-padded so that the name is key_size bytes when key_size is larger), in one librados
 * write op with the object data when the run also writes it (--write-object). Value j is a
 * block_size payload for the object at offset o + j, so its header names the key's place
 * and a read verifies it like any block. A read op gets the same keys back by name, with the
 * data, in one op (rados_kv_read.cc). */
#include "rados_kv_read.h"
#include "rados_slot.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 4096

struct kv_slot {
    unsigned char *values; /* keys_per_op values of block_size bytes */
    char *names;           /* 2 x keys_per_op names (omap, then xattr), KEY_MAX + 1 apart */
    const char **omap_keys;
    const char **values_at;
    size_t *key_lens, *value_lens;
    const char **xattr_names;
    rados_write_op_t write;
    cm_rados_kv_read *read;
};

unsigned cm_rados_parse_write_to(const char *text)
{
    unsigned bits = 0;
    char copy[128];
    snprintf(copy, sizeof copy, "%s", text);
    char *save = NULL;
    for (char *word = strtok_r(copy, ", ", &save); word; word = strtok_r(NULL, ", ", &save)) {
        if (strcmp(word, "object") == 0)
            bits |= CM_RADOS_TO_OBJECT;
        else if (strcmp(word, "omap") == 0)
            bits |= CM_RADOS_TO_OMAP;
        else if (strcmp(word, "xattr") == 0)
            bits |= CM_RADOS_TO_XATTR;
        else
            return 0;
    }
    return bits;
}

void cm_rados_format_write_to(unsigned write_to, char *out, size_t n)
{
    if (write_to == 0)
        write_to = CM_RADOS_TO_OBJECT;
    snprintf(out, n, "%s%s%s%s%s", write_to & CM_RADOS_TO_OBJECT ? "object" : "",
             (write_to & CM_RADOS_TO_OBJECT) && (write_to & ~CM_RADOS_TO_OBJECT) ? "," : "",
             write_to & CM_RADOS_TO_OMAP ? "omap" : "",
             (write_to & CM_RADOS_TO_OMAP) && (write_to & CM_RADOS_TO_XATTR) ? "," : "",
             write_to & CM_RADOS_TO_XATTR ? "xattr" : "");
}

static void kv_slot_release_ops(struct kv_slot *kv)
{
    if (kv->write)
        rados_release_write_op(kv->write);
    kv->write = NULL;
}

/* Frees a slot's key state, whole or partly made. */
static void kv_slot_destroy(struct kv_slot *kv)
{
    kv_slot_release_ops(kv);
    cm_rados_kv_read_free(kv->read);
    free(kv->xattr_names);
    free(kv->values);
    free(kv->names);
    free(kv->omap_keys);
    free(kv->values_at);
    free(kv->key_lens);
    free(kv->value_lens);
    free(kv);
}

void cm_rados_kv_slot_free(struct bench_slot *slot)
{
    if (!slot->kv)
        return;
    kv_slot_destroy(slot->kv);
    slot->kv = NULL;
}

static struct kv_slot *kv_slot_new(const struct cm_rados_run_meta *meta)
{
    size_t keys = (size_t)meta->keys_per_op;
    struct kv_slot *kv = calloc(1, sizeof *kv);
    if (!kv)
        return NULL;
    kv->values = malloc(keys * (size_t)meta->block_size);
    kv->names = calloc(2 * keys, KEY_MAX + 1);
    kv->omap_keys = calloc(keys, sizeof *kv->omap_keys);
    kv->values_at = calloc(keys, sizeof *kv->values_at);
    kv->key_lens = calloc(keys, sizeof *kv->key_lens);
    kv->value_lens = calloc(keys, sizeof *kv->value_lens);
    kv->xattr_names = calloc(keys, sizeof *kv->xattr_names);
    kv->read = cm_rados_kv_read_new();
    if (!kv->values || !kv->names || !kv->omap_keys || !kv->values_at || !kv->key_lens ||
        !kv->value_lens || !kv->xattr_names || !kv->read) {
        kv_slot_destroy(kv);
        return NULL;
    }
    return kv;
}

/* "bench-omap-key-<offset>[.<j>]", the number zero-padded to make key_size bytes. */
static size_t key_name(const struct cm_rados_run_meta *meta, const char *kind, uint64_t offset,
                       uint64_t j, char *out)
{
    char number[64];
    int n = meta->keys_per_op > 1
                ? snprintf(number, sizeof number, "%" PRIu64 ".%" PRIu64, offset, j)
                : snprintf(number, sizeof number, "%" PRIu64, offset);
    int head = snprintf(out, KEY_MAX + 1, "bench-%s-key-", kind);
    size_t natural = (size_t)head + (size_t)n;
    size_t pad = meta->key_size > natural ? (size_t)meta->key_size - natural : 0;
    memset(out + head, '0', pad);
    memcpy(out + head + pad, number, (size_t)n + 1);
    return natural + pad;
}

static char *omap_name(struct kv_slot *kv, size_t j)
{
    return kv->names + j * (KEY_MAX + 1);
}

static char *xattr_name(struct kv_slot *kv, const struct cm_rados_run_meta *meta, size_t j)
{
    return kv->names + ((size_t)meta->keys_per_op + j) * (KEY_MAX + 1);
}

static uint64_t op_bytes(const struct cm_rados_run_meta *meta)
{
    uint64_t copies = (meta->write_to & CM_RADOS_TO_OBJECT ? 1 : 0) +
                      (meta->write_to & CM_RADOS_TO_OMAP ? meta->keys_per_op : 0) +
                      (meta->write_to & CM_RADOS_TO_XATTR ? meta->keys_per_op : 0);
    return copies * meta->block_size;
}

static void kv_names(struct kv_slot *kv, const struct cm_rados_run_meta *meta, uint64_t offset)
{
    for (size_t j = 0; j < meta->keys_per_op; j++) {
        kv->key_lens[j] = key_name(meta, "omap", offset, j, omap_name(kv, j));
        kv->omap_keys[j] = omap_name(kv, j);
        key_name(meta, "xattr", offset, j, xattr_name(kv, meta, j));
        kv->xattr_names[j] = xattr_name(kv, meta, j);
    }
}

static int kv_submit_write(struct cm_rados_target *bench, struct bench_slot *slot,
                           struct kv_slot *kv, uint64_t block)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    size_t size = (size_t)meta->block_size, keys = (size_t)meta->keys_per_op;
    for (size_t j = 0; j < keys; j++) {
        cm_payload_fill(bench->payload, kv->values + j * size, size, slot->object, slot->offset + j,
                        block, meta->run_id);
        kv->values_at[j] = (const char *)kv->values + j * size;
        kv->value_lens[j] = size;
    }
    kv->write = rados_create_write_op();
    if (!kv->write)
        return -ENOMEM;
    if (meta->write_to & CM_RADOS_TO_OBJECT)
        rados_write_op_write(kv->write, (const char *)kv->values, size, slot->offset);
    if (meta->write_to & CM_RADOS_TO_OMAP)
        rados_write_op_omap_set2(kv->write, kv->omap_keys, kv->values_at, kv->key_lens,
                                 kv->value_lens, keys);
    if (meta->write_to & CM_RADOS_TO_XATTR)
        for (size_t j = 0; j < keys; j++)
            rados_write_op_setxattr(kv->write, xattr_name(kv, meta, j), kv->values_at[j], size);
    return rados_aio_write_op_operate(kv->write, bench->io, slot->completion, slot->object, NULL,
                                      0);
}

static int kv_submit_read(struct cm_rados_target *bench, struct bench_slot *slot,
                          struct kv_slot *kv)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    struct cm_rados_kv_request request = {
        .object = slot->object,
        .offset = slot->offset,
        .length = meta->write_to & CM_RADOS_TO_OBJECT ? (size_t)meta->block_size : 0,
        .omap_keys = meta->write_to & CM_RADOS_TO_OMAP ? kv->omap_keys : NULL,
        .omap_key_lens = kv->key_lens,
        .xattr_names = meta->write_to & CM_RADOS_TO_XATTR ? kv->xattr_names : NULL,
        .keys = (size_t)meta->keys_per_op,
    };
    return cm_rados_kv_aio_read(bench->io, slot->completion, &request, kv->read);
}

int cm_rados_kv_submit(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot,
                       uint64_t block)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    if (!slot->kv && !(slot->kv = kv_slot_new(meta)))
        return -ENOMEM;
    struct kv_slot *kv = slot->kv;
    kv_names(kv, meta, slot->offset);
    op->length = op_bytes(meta);
    if (bench->op == CM_RADOS_WRITE) {
        op->kind = CM_OP_WRITE;
        return kv_submit_write(bench, slot, kv, block);
    }
    op->kind = CM_OP_READ;
    return kv_submit_read(bench, slot, kv);
}

static bool kv_fail(struct cm_rados_target *bench, const char *object, const char *what,
                    const char *name)
{
    char message[384];
    snprintf(message, sizeof message, "object %s: %s %s", object, what, name);
    cm_rados_keep_verify_error(bench, message);
    return false;
}

static bool kv_verify_value(struct cm_rados_target *bench, struct bench_slot *slot, size_t j,
                            const char *value, size_t len)
{
    cm_payload_error error;
    if (cm_payload_verify(bench->payload, (const unsigned char *)value, len, slot->object,
                          slot->offset + j, bench->meta.run_id, 0, &error) == CM_PAYLOAD_OK)
        return true;
    cm_rados_keep_verify_error(bench, error.message);
    return false;
}

/* The index of `name` among the op's omap keys. */
static long find_key(struct kv_slot *kv, const struct cm_rados_run_meta *meta, const char *name,
                     size_t len)
{
    for (size_t j = 0; j < meta->keys_per_op; j++)
        if (kv->key_lens[j] == len && memcmp(omap_name(kv, j), name, len) == 0)
            return (long)j;
    return -1;
}

struct omap_visit {
    struct cm_rados_target *bench;
    struct bench_slot *slot;
    struct kv_slot *kv;
};

static int visit_omap(void *arg, const char *key, size_t key_len, const char *value, size_t len)
{
    struct omap_visit *visit = arg;
    long j = find_key(visit->kv, &visit->bench->meta, key, key_len);
    if (j < 0) {
        kv_fail(visit->bench, visit->slot->object, "omap answered a key not asked for:", "");
        return -EINVAL;
    }
    return kv_verify_value(visit->bench, visit->slot, (size_t)j, value, len) ? 0 : -EINVAL;
}

static bool kv_verify_omap(struct cm_rados_target *bench, struct bench_slot *slot,
                           struct kv_slot *kv)
{
    struct omap_visit visit = {bench, slot, kv};
    size_t found = 0;
    int rc = cm_rados_kv_read_omap_each(kv->read, visit_omap, &visit, &found);
    if (rc == -EINVAL)
        return false;
    if (rc < 0 || found != bench->meta.keys_per_op)
        return kv_fail(bench, slot->object, "omap key missing, e.g.", omap_name(kv, 0));
    return true;
}

static bool kv_verify_xattrs(struct cm_rados_target *bench, struct bench_slot *slot,
                             struct kv_slot *kv)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    for (size_t j = 0; j < meta->keys_per_op; j++) {
        const char *value;
        size_t len;
        if (cm_rados_kv_read_xattr(kv->read, j, &value, &len) < 0)
            return kv_fail(bench, slot->object, "xattr missing:", xattr_name(kv, meta, j));
        if (!kv_verify_value(bench, slot, j, value, len))
            return false;
    }
    return true;
}

void cm_rados_kv_complete(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot)
{
    struct kv_slot *kv = slot->kv;
    const struct cm_rados_run_meta *meta = &bench->meta;
    if (op->kind == CM_OP_READ && op->result >= 0 && bench->verify) {
        bool ok = true;
        if (meta->write_to & CM_RADOS_TO_OBJECT) {
            const char *data;
            size_t len;
            ok = cm_rados_kv_read_data(kv->read, &data, &len) >= 0 &&
                 kv_verify_value(bench, slot, 0, data, len);
        }
        if (ok && (meta->write_to & CM_RADOS_TO_OMAP))
            ok = kv_verify_omap(bench, slot, kv);
        if (ok && (meta->write_to & CM_RADOS_TO_XATTR))
            ok = kv_verify_xattrs(bench, slot, kv);
        op->verify_failed = !ok;
    }
    kv_slot_release_ops(kv);
}
