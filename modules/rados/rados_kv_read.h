/* The read op of omap and xattr runs (rados_kv.c) through librados's C++ API: the C API
 * can get an object's xattrs only all at once (rados_read_op_getxattrs), which for an
 * object holding many ops' xattrs reads all of them per op; the C++ read op gets each
 * named xattr, together with the data and the omap keys, in one op. */
#ifndef CEPHMARK_RADOS_KV_READ_H
#define CEPHMARK_RADOS_KV_READ_H

#include <rados/librados.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cm_rados_kv_read cm_rados_kv_read;

/* What one read gets: data (offset, length), omap keys by name, xattrs by name. */
struct cm_rados_kv_request {
    const char *object;
    uint64_t offset;
    size_t length; /* data bytes; 0: no data */
    const char *const *omap_keys;
    const size_t *omap_key_lens;
    const char *const *xattr_names;
    size_t keys; /* omap keys and xattr names (each list may be NULL) */
};

cm_rados_kv_read *cm_rados_kv_read_new(void);
void cm_rados_kv_read_free(cm_rados_kv_read *read);

/* Starts the read; its results stay in `read` until the next start. 0 or -errno. */
int cm_rados_kv_aio_read(rados_ioctx_t io, rados_completion_t completion,
                         const struct cm_rados_kv_request *request, cm_rados_kv_read *read);

/* After completion: the data (its return value), each omap key found, each xattr. */
int cm_rados_kv_read_data(cm_rados_kv_read *read, const char **data, size_t *len);
int cm_rados_kv_read_omap_each(cm_rados_kv_read *read,
                               int (*visit)(void *arg, const char *key, size_t key_len,
                                            const char *value, size_t len),
                               void *arg, size_t *count);
int cm_rados_kv_read_xattr(cm_rados_kv_read *read, size_t index, const char **value, size_t *len);

#ifdef __cplusplus
}
#endif

#endif
