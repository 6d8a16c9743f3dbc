/* Integration test of the assumption modules/rados/rados_zerocopy.cc rests on, against the
 * installed librados and the test cluster (CEPH_CONF): a C completion handle is the object
 * librados's C++ API works on. A zero-copy write is sent on a C completion with a callback;
 * the callback must receive that handle, the C and C++ calls on the completion must agree
 * before and after it completes, and the object must read back as the head and body sent. */
#include "../unit/check.h"
#include "rados_zerocopy.h"

#include <errno.h>
#include <rados/librados.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define POOL "cephmark-test-zc-completion"

static _Atomic(rados_completion_t) seen_by_callback;

static void on_complete(rados_completion_t completion, void *arg)
{
    (void)arg;
    atomic_store(&seen_by_callback, completion);
}

static void check_write(rados_ioctx_t io)
{
    enum { HEAD = 128, BODY = 8192, OFFSET = 4096 };
    cm_rados_zc_buffer *stage = cm_rados_zc_buffer_new(OFFSET + BODY);
    CHECK(stage != NULL);
    if (!stage)
        return;
    unsigned char *memory = cm_rados_zc_buffer_data(stage);
    for (size_t i = 0; i < OFFSET + BODY; i++)
        memory[i] = (unsigned char)(i * 7 + 3);
    unsigned char head[HEAD];
    memset(head, 0xA5, sizeof head);

    rados_completion_t completion;
    CHECK(rados_aio_create_completion2(NULL, on_complete, &completion) == 0);
    /* before it completes, both APIs see an incomplete op */
    CHECK_MSG(cm_rados_zc_completion_check(completion) == 0, "fresh completion");
    struct cm_rados_zc_write write = {
        .object = "zc-completion",
        .full = 1,
        .head = head,
        .head_len = HEAD,
        .body = stage,
        .body_offset = OFFSET,
        .body_len = BODY,
        .hint_object_size = HEAD + BODY,
    };
    int rc = cm_rados_zc_aio_write(io, completion, &write);
    CHECK_MSG(rc == 0, "cm_rados_zc_aio_write: %d", rc);
    if (rc == 0) {
        CHECK(rados_aio_wait_for_complete_and_cb(completion) == 0);
        CHECK_MSG(rados_aio_get_return_value(completion) == 0, "write returned %d",
                  rados_aio_get_return_value(completion));
        CHECK_MSG(atomic_load(&seen_by_callback) == completion,
                  "the callback received %p, the handle is %p",
                  (void *)atomic_load(&seen_by_callback), (void *)completion);
        CHECK_MSG(cm_rados_zc_completion_check(completion) == 0, "completed write");
        CHECK(rados_aio_get_version(completion) > 0);
    }
    rados_aio_release(completion);

    char back[HEAD + BODY + 1];
    int got = rados_read(io, "zc-completion", back, sizeof back, 0);
    CHECK_MSG(got == HEAD + BODY, "read %d bytes", got);
    if (got == HEAD + BODY) {
        CHECK(memcmp(back, head, HEAD) == 0);
        CHECK(memcmp(back + HEAD, memory + OFFSET, BODY) == 0);
    }
    cm_rados_zc_buffer_free(stage);
}

int main(void)
{
    rados_t cluster;
    rados_ioctx_t io;
    int rc = rados_create(&cluster, NULL);
    if (rc == 0)
        rc = rados_conf_read_file(cluster, NULL); /* CEPH_CONF */
    if (rc == 0)
        rc = rados_connect(cluster);
    CHECK_MSG(rc == 0, "cannot connect to the test cluster: %s", strerror(-rc));
    if (rc != 0)
        return check_summary("rados_zerocopy_completion");
    rados_pool_delete(cluster, POOL); /* left by a crashed run */
    rc = rados_pool_create(cluster, POOL);
    CHECK_MSG(rc == 0, "pool create: %s", strerror(-rc));
    if (rc == 0 && (rc = rados_ioctx_create(cluster, POOL, &io)) == 0) {
        check_write(io);
        rados_ioctx_destroy(io);
    }
    CHECK(rados_pool_delete(cluster, POOL) == 0);
    rados_shutdown(cluster);
    return check_summary("rados_zerocopy_completion");
}
