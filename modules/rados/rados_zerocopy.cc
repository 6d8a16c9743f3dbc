/* Zero-copy rados writes through librados's C++ API, behind the C interface of
 * rados_zerocopy.h. cephmark's only C++: everything here exists to build one bufferlist
 * over memory librados does not copy, and no exception leaves this file. */
#include "rados_zerocopy.h"

#include <rados/librados.hpp>

#include <cerrno>
#include <climits>
#include <new>
#include <string>

struct cm_rados_zc_buffer {
    /* our reference to the raw buffer; ops in flight hold theirs through their bufferlists */
    ceph::bufferptr memory;
};

cm_rados_zc_buffer *cm_rados_zc_buffer_new(size_t size)
{
    if (size == 0 || size > UINT_MAX)
        return nullptr;
    try {
        return new cm_rados_zc_buffer{
            ceph::bufferptr(ceph::buffer::create_page_aligned(static_cast<unsigned>(size)))};
    } catch (...) {
        return nullptr;
    }
}

unsigned char *cm_rados_zc_buffer_data(cm_rados_zc_buffer *buffer)
{
    return reinterpret_cast<unsigned char *>(buffer->memory.c_str());
}

void cm_rados_zc_buffer_free(cm_rados_zc_buffer *buffer)
{
    delete buffer;
}

namespace
{

/* The C++ view of a C completion.
 *
 * librados's public API has no conversion from a rados_completion_t to an AioCompletion (it
 * has one for the ioctx, IoCtx::from_rados_ioctx_t, and the cluster, Rados::from_rados_t).
 * The cast below relies on what the C handle is: rados_aio_create_completion2 creates a
 * librados::AioCompletionImpl and returns its address as the handle, every C completion call
 * casts the handle back to it (librados_c.cc), and the public C++ wrapper is nothing but that
 * pointer (AioCompletion's public constructor from AioCompletionImpl * and its public `pc`,
 * in librados.hpp), which is how Rados::aio_create_completion builds its own. The type is
 * only declared in the public header, never defined, so no layout of it is assumed here:
 * only that the handle is the object the C++ methods work on. The integration test
 * rados_zerocopy_completion checks exactly that against the installed librados (the C and
 * C++ calls on one completion must agree, and a C callback must receive the handle), so an
 * upgrade that changes it fails there, not in a benchmark.
 *
 * librados::AioCompletion's destructor releases the completion it wraps, but the completion
 * stays the C caller's, released with rados_aio_release. The wrapper therefore lives in a
 * union, whose destructor does not run its member's. */
union CompletionView {
    librados::AioCompletion completion;
    explicit CompletionView(rados_completion_t c)
        : completion(static_cast<librados::AioCompletionImpl *>(c))
    {
    }
    ~CompletionView()
    {
    }
};

/* rados bench's hint for its objects (src/tools/rados/rados.cc), sent unless --no-hints */
constexpr uint32_t bench_hint_flags =
    LIBRADOS_ALLOC_HINT_FLAG_SEQUENTIAL_WRITE | LIBRADOS_ALLOC_HINT_FLAG_SEQUENTIAL_READ |
    LIBRADOS_ALLOC_HINT_FLAG_APPEND_ONLY | LIBRADOS_ALLOC_HINT_FLAG_IMMUTABLE;

} // namespace

int cm_rados_zc_aio_write(rados_ioctx_t io, rados_completion_t completion,
                          const struct cm_rados_zc_write *write)
{
    if (write->head_len > UINT_MAX || write->body_len > UINT_MAX ||
        (write->body_len > 0 &&
         write->body_offset + write->body_len > write->body->memory.length()))
        return -EINVAL;
    try {
        librados::bufferlist data;
        if (write->head_len > 0)
            data.push_back(ceph::buffer::copy(reinterpret_cast<const char *>(write->head),
                                              static_cast<unsigned>(write->head_len)));
        if (write->body_len > 0)
            data.push_back(ceph::bufferptr(write->body->memory,
                                           static_cast<unsigned>(write->body_offset),
                                           static_cast<unsigned>(write->body_len)));
        librados::ObjectWriteOperation op;
        if (write->hint_object_size > 0)
            op.set_alloc_hint2(write->hint_object_size, data.length(), bench_hint_flags);
        if (write->full != 0)
            op.write_full(data);
        else
            op.write(write->offset, data);
        librados::IoCtx ctx;
        librados::IoCtx::from_rados_ioctx_t(io, ctx);
        CompletionView view(completion);
        /* the name outgrows std::string's inline buffer: one allocation per thread, not per op */
        static thread_local std::string object;
        object.assign(write->object);
        return ctx.aio_operate(object, &view.completion, &op);
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EIO;
    }
}

int cm_rados_zc_completion_check(rados_completion_t completion)
{
    try {
        CompletionView view(completion);
        librados::AioCompletion &cxx = view.completion;
        if (cxx.is_complete() != (rados_aio_is_complete(completion) != 0))
            return -EPROTO;
        if (cxx.get_return_value() != rados_aio_get_return_value(completion))
            return -EPROTO;
        if (cxx.get_version64() != rados_aio_get_version(completion))
            return -EPROTO;
        return 0;
    } catch (...) {
        return -EIO;
    }
}
