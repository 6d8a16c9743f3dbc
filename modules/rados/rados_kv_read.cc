/* The read op of omap and xattr runs over librados's C++ API; see rados_kv_read.h. The C
 * completion is viewed as a C++ one the way rados_zerocopy.cc does. */
#include "rados_kv_read.h"

#include <rados/librados.hpp>

#include <cerrno>
#include <map>
#include <new>
#include <set>
#include <string>
#include <vector>

struct cm_rados_kv_read {
    librados::bufferlist data;
    int data_rval = 0;
    std::map<std::string, librados::bufferlist> omap;
    int omap_rval = 0;
    std::vector<librados::bufferlist> xattrs;
    std::vector<int> xattr_rvals;
};

namespace
{

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

} // namespace

cm_rados_kv_read *cm_rados_kv_read_new(void)
{
    return new (std::nothrow) cm_rados_kv_read;
}

void cm_rados_kv_read_free(cm_rados_kv_read *read)
{
    delete read;
}

int cm_rados_kv_aio_read(rados_ioctx_t io, rados_completion_t completion,
                         const struct cm_rados_kv_request *request, cm_rados_kv_read *read)
{
    try {
        librados::ObjectReadOperation op;
        read->data.clear();
        read->omap.clear();
        read->data_rval = read->omap_rval = 0;
        if (request->length > 0)
            op.read(request->offset, request->length, &read->data, &read->data_rval);
        if (request->omap_keys != nullptr) {
            std::set<std::string> keys;
            for (size_t j = 0; j < request->keys; j++)
                keys.emplace(request->omap_keys[j], request->omap_key_lens[j]);
            op.omap_get_vals_by_keys(keys, &read->omap, &read->omap_rval);
        }
        read->xattrs.clear();
        read->xattr_rvals.clear();
        if (request->xattr_names != nullptr) {
            read->xattrs.assign(request->keys, librados::bufferlist());
            read->xattr_rvals.assign(request->keys, 0);
            for (size_t j = 0; j < request->keys; j++)
                op.getxattr(request->xattr_names[j], &read->xattrs[j], &read->xattr_rvals[j]);
        }
        librados::IoCtx ctx;
        librados::IoCtx::from_rados_ioctx_t(io, ctx);
        CompletionView view(completion);
        return ctx.aio_operate(request->object, &view.completion, &op, nullptr);
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EIO;
    }
}

int cm_rados_kv_read_data(cm_rados_kv_read *read, const char **data, size_t *len)
{
    *len = read->data.length();
    *data = *len > 0 ? read->data.c_str() : "";
    return read->data_rval;
}

int cm_rados_kv_read_omap_each(cm_rados_kv_read *read,
                               int (*visit)(void *arg, const char *key, size_t key_len,
                                            const char *value, size_t len),
                               void *arg, size_t *count)
{
    *count = 0;
    if (read->omap_rval < 0)
        return read->omap_rval;
    for (auto &entry : read->omap) {
        size_t len = entry.second.length();
        int rc = visit(arg, entry.first.data(), entry.first.size(),
                       len > 0 ? entry.second.c_str() : "", len);
        if (rc != 0)
            return rc;
        ++*count;
    }
    return 0;
}

int cm_rados_kv_read_xattr(cm_rados_kv_read *read, size_t index, const char **value, size_t *len)
{
    if (index >= read->xattrs.size())
        return -ENOENT;
    *len = read->xattrs[index].length();
    *value = *len > 0 ? read->xattrs[index].c_str() : "";
    return read->xattr_rvals[index];
}
