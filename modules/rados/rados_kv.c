/* Write runs whose blocks go to omap keys and xattrs, as rados bench's --write-omap and
 * --write-xattr do, and the seq and rand reads that get them back and verify them.
 *
 * A write op of block b (object b / blocks per object, offset o inside it) sets
 * keys_per_op keys named like rados bench's, "bench-omap-key-<o>" and
 * "bench-xattr-key-<o>" (with ".<j>" for the j-th key when keys_per_op > 1, and the number
 * zero-padded so that the name is key_size bytes when key_size is larger), in one librados
 * write op with the object data when the run also writes it (--write-object). Value j is a
 * block_size payload for the object at offset o + j, so its header names the key's place
 * and a read verifies it like any block. A read op gets the same keys back (omap: by name;
 * xattrs: the object's list, of which the op's names must all be there). */
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
    rados_write_op_t write;
    rados_read_op_t read;
    rados_omap_iter_t omap;
    rados_xattrs_iter_t xattrs;
    int omap_rval, xattr_rval, data_rval;
    size_t data_read;
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
    if (kv->omap)
        rados_omap_get_end(kv->omap);
    if (kv->xattrs)
        rados_getxattrs_end(kv->xattrs);
    if (kv->write)
        rados_release_write_op(kv->write);
    if (kv->read)
        rados_release_read_op(kv->read);
    kv->omap = NULL;
    kv->xattrs = NULL;
    kv->write = NULL;
    kv->read = NULL;
}

void cm_rados_kv_slot_free(struct bench_slot *slot)
{
    struct kv_slot *kv = slot->kv;
    if (!kv)
        return;
    kv_slot_release_ops(kv);
    free(kv->values);
    free(kv->names);
    free(kv->omap_keys);
    free(kv->values_at);
    free(kv->key_lens);
    free(kv->value_lens);
    free(kv);
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
    if (!kv->values || !kv->names || !kv->omap_keys || !kv->values_at || !kv->key_lens ||
        !kv->value_lens) {
        free(kv->values);
        free(kv->names);
        free(kv->omap_keys);
        free(kv->values_at);
        free(kv->key_lens);
        free(kv->value_lens);
        free(kv);
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
    kv->read = rados_create_read_op();
    if (!kv->read)
        return -ENOMEM;
    kv->data_read = 0;
    kv->data_rval = kv->omap_rval = kv->xattr_rval = 0;
    if (meta->write_to & CM_RADOS_TO_OBJECT)
        rados_read_op_read(kv->read, slot->offset, (size_t)meta->block_size, (char *)kv->values,
                           &kv->data_read, &kv->data_rval);
    if (meta->write_to & CM_RADOS_TO_OMAP)
        rados_read_op_omap_get_vals_by_keys2(kv->read, kv->omap_keys, (size_t)meta->keys_per_op,
                                             kv->key_lens, &kv->omap, &kv->omap_rval);
    if (meta->write_to & CM_RADOS_TO_XATTR)
        rados_read_op_getxattrs(kv->read, &kv->xattrs, &kv->xattr_rval);
    return rados_aio_read_op_operate(kv->read, bench->io, slot->completion, slot->object, 0);
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

/* The index of `name` among the op's names of one kind (first: the first of them). */
static long find_name(struct kv_slot *kv, const struct cm_rados_run_meta *meta, bool xattr,
                      const char *name, size_t len)
{
    for (size_t j = 0; j < meta->keys_per_op; j++) {
        const char *mine = xattr ? xattr_name(kv, meta, j) : omap_name(kv, j);
        if (strlen(mine) == len && memcmp(mine, name, len) == 0)
            return (long)j;
    }
    return -1;
}

static bool kv_verify_omap(struct cm_rados_target *bench, struct bench_slot *slot,
                           struct kv_slot *kv)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    size_t found = 0;
    char *key, *value;
    size_t key_len, value_len;
    while (rados_omap_get_next2(kv->omap, &key, &value, &key_len, &value_len) == 0 && key) {
        long j = find_name(kv, meta, false, key, key_len);
        if (j < 0)
            return kv_fail(bench, slot->object, "omap answered a key not asked for:", key);
        if (!kv_verify_value(bench, slot, (size_t)j, value, value_len))
            return false;
        found++;
    }
    if (found != meta->keys_per_op)
        return kv_fail(bench, slot->object, "omap key missing, e.g.", omap_name(kv, 0));
    return true;
}

static bool kv_verify_xattrs(struct cm_rados_target *bench, struct bench_slot *slot,
                             struct kv_slot *kv)
{
    const struct cm_rados_run_meta *meta = &bench->meta;
    size_t found = 0;
    const char *name, *value;
    size_t len;
    while (rados_getxattrs_next(kv->xattrs, &name, &value, &len) == 0 && name) {
        long j = find_name(kv, meta, true, name, strlen(name));
        if (j < 0)
            continue; /* another op's */
        if (!kv_verify_value(bench, slot, (size_t)j, value, len))
            return false;
        found++;
    }
    if (found != meta->keys_per_op)
        return kv_fail(bench, slot->object, "xattr missing, e.g.", xattr_name(kv, meta, 0));
    return true;
}

void cm_rados_kv_complete(struct cm_rados_target *bench, struct cm_op *op, struct bench_slot *slot)
{
    struct kv_slot *kv = slot->kv;
    const struct cm_rados_run_meta *meta = &bench->meta;
    if (op->kind == CM_OP_READ && op->result >= 0 && bench->verify) {
        bool ok = true;
        if (meta->write_to & CM_RADOS_TO_OBJECT)
            ok = kv->data_rval >= 0 &&
                 kv_verify_value(bench, slot, 0, (const char *)kv->values, kv->data_read);
        if (ok && (meta->write_to & CM_RADOS_TO_OMAP))
            ok = kv->omap_rval >= 0 && kv_verify_omap(bench, slot, kv);
        if (ok && (meta->write_to & CM_RADOS_TO_XATTR))
            ok = kv->xattr_rval >= 0 && kv_verify_xattrs(bench, slot, kv);
        op->verify_failed = !ok;
    }
    kv_slot_release_ops(kv);
}
