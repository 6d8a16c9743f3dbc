/* Writes that hand librados cephmark's own bytes instead of a copy of them.
 *
 * Every write call of librados's C API copies the caller's buffer into a new bufferlist
 * (bl.append in librados_c.cc): 4 MiB of memcpy per 4 MiB write, client CPU and memory
 * bandwidth taken from OSDs that share the machine. Only the C++ API takes a bufferlist over
 * memory librados does not own, which is how `rados bench` writes. modules/rados/rados_zerocopy.cc
 * is cephmark's one C++ unit: this C interface over that call, and nothing else.
 *
 * An op's bytes are a short head, copied (a payload header), followed by a body referenced in
 * a cm_rados_zc_buffer, which librados reads from until the op is gone from it. Completions
 * stay C completions (rados_aio_create_completion2), so waiting for, cancelling and releasing
 * ops is unchanged. */
#ifndef CEPHMARK_RADOS_ZEROCOPY_H
#define CEPHMARK_RADOS_ZEROCOPY_H

#include <rados/librados.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Memory that librados may reference after its owner is done with it. An op cancelled while
 * its message was still queued can still be sent later, from this memory: it is therefore
 * freed only when cm_rados_zc_buffer_free was called and no op librados holds refers to it.
 * The contents must not change while ops referring to them are in flight. */
typedef struct cm_rados_zc_buffer cm_rados_zc_buffer;

/* NULL if out of memory. */
cm_rados_zc_buffer *cm_rados_zc_buffer_new(size_t size);
unsigned char *cm_rados_zc_buffer_data(cm_rados_zc_buffer *buffer);
/* Drops the owner's reference; NULL is ignored. */
void cm_rados_zc_buffer_free(cm_rados_zc_buffer *buffer);

struct cm_rados_zc_write {
    const char *object;
    uint64_t offset;
    int full; /* write_full: the op becomes the object's whole content (offset must be 0) */
    const unsigned char *head; /* copied; head_len may be 0 */
    size_t head_len;
    cm_rados_zc_buffer *body; /* referenced: body_len bytes from body_offset */
    size_t body_offset;
    size_t body_len;
    /* non-zero: the op starts with set_alloc_hint2(hint_object_size, head_len + body_len,
     * sequential write | sequential read | append only | immutable), as `rados bench` sends
     * unless --no-hints */
    uint64_t hint_object_size;
};

/* Submits the write on completion (a C completion). 0 or a negative errno; -ENOMEM also for
 * an exception thrown inside librados. */
int cm_rados_zc_aio_write(rados_ioctx_t io, rados_completion_t completion,
                          const struct cm_rados_zc_write *write);

/* Whether librados's C++ API sees a C completion as the C API does: is_complete, the return
 * value and the version must agree (the assumption the write above rests on; see
 * rados_zerocopy.cc). 0, or -EPROTO when they differ. For tests. */
int cm_rados_zc_completion_check(rados_completion_t completion);

#ifdef __cplusplus
}
#endif

#endif
