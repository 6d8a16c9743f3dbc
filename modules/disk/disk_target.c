/* The file target of the op engine; see disk_target.h. */
#include "disk_target.h"
#include "splitmix.h"
#include "units.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* user_data of a write's linked fsync: the op pointer with its low bit set */
#define SYNC_TAG ((uintptr_t)1)
/* user_data of a request chosen by the caller (submit_request): the next bit */
#define REQUEST_TAG ((uintptr_t)2)

/* A caller slot's state for requests (submit_request): its O_DIRECT bounce buffer. */
struct disk_request_slot {
    unsigned char *bounce;
    size_t bounce_size;
};

/* Writes of the read layout, and the most a layout may take. */
#define LAYOUT_CHUNK (1u << 20)

static int fail(char *error, size_t error_size, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *error, size_t error_size, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, error_size, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- block devices ------------------------------------------------------------------------ */

/* Where the device `dev` (or one of its partitions) is mounted, from mountinfo; false if
 * nowhere. */
static bool device_mount_point(dev_t dev, char *where, size_t where_size)
{
    dev_t devices[65];
    size_t n = 0;
    devices[n++] = dev;
    /* partitions: /sys/dev/block/M:m/<part>/dev */
    char dir_path[64];
    snprintf(dir_path, sizeof dir_path, "/sys/dev/block/%u:%u", major(dev), minor(dev));
    DIR *dir = opendir(dir_path);
    if (dir) {
        struct dirent *entry;
        while ((entry = readdir(dir)) && n < 65) {
            char dev_path[600], text[32];
            snprintf(dev_path, sizeof dev_path, "%s/%s/dev", dir_path, entry->d_name);
            FILE *f = entry->d_name[0] != '.' ? fopen(dev_path, "r") : NULL;
            if (!f)
                continue;
            unsigned ma, mi;
            /* NOLINTNEXTLINE(cert-err34-c): the kernel writes MAJOR:MINOR in range */
            if (fgets(text, sizeof text, f) && sscanf(text, "%u:%u", &ma, &mi) == 2)
                devices[n++] = makedev(ma, mi);
            fclose(f);
        }
        closedir(dir);
    }
    FILE *mounts = fopen("/proc/self/mountinfo", "r");
    if (!mounts)
        return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, mounts)) {
        unsigned ma, mi;
        char point[2048];
        /* NOLINTNEXTLINE(cert-err34-c): mountinfo fields are written by the kernel, in range */
        if (sscanf(line, "%*u %*u %u:%u %*s %2047s", &ma, &mi, point) != 3)
            continue;
        for (size_t i = 0; i < n && !found; i++) {
            if (major(devices[i]) == ma && minor(devices[i]) == mi) {
                snprintf(where, where_size, "%s", point);
                found = true;
            }
        }
    }
    fclose(mounts);
    return found;
}

/* ---- opening ------------------------------------------------------------------------------ */

static void fill_pattern(unsigned char *buffer, size_t length, uint64_t seed)
{
    uint64_t state = seed;
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t word = cm_splitmix64(&state);
        memcpy(buffer + i, &word, 8);
    }
    for (; i < length; i++)
        buffer[i] = (unsigned char)cm_splitmix64(&state);
}

/* Lays out a read target: writes [from, size) with pattern data and syncs, as fio does
 * before reading a file that is not there yet. */
static int lay_out(struct cm_disk *disk, uint64_t from, char *error, size_t error_size)
{
    size_t chunk = LAYOUT_CHUNK;
    unsigned char *buffer = NULL;
    if (posix_memalign((void **)&buffer, 4096, chunk) != 0)
        return fail(error, error_size, -ENOMEM, "out of memory for the layout of %s",
                    disk->options.path);
    fill_pattern(buffer, chunk, disk->rng ^ 0x5eed);
    uint64_t start = cm_now_ns();
    for (uint64_t at = from; at < disk->size;) {
        size_t n = disk->size - at < chunk ? (size_t)(disk->size - at) : chunk;
        ssize_t done = pwrite(disk->fd, buffer, n, (off_t)at);
        if (done <= 0) {
            int rc = done < 0 ? -errno : -EIO;
            free(buffer);
            return fail(error, error_size, rc,
                        "cannot lay out %s for reading (writing at %" PRIu64 "): %s",
                        disk->options.path, at, strerror(-rc));
        }
        at += (uint64_t)done;
    }
    free(buffer);
    if (fsync(disk->fd) < 0)
        return fail(error, error_size, -errno, "cannot lay out %s for reading: fsync: %s",
                    disk->options.path, strerror(errno));
    disk->prepared_bytes = disk->size - from;
    disk->prepare_seconds = (double)(cm_now_ns() - start) / 1e9;
    return 0;
}

/* The size of a transparent huge page (PMD-sized), or 0 when the kernel has none. */
static size_t huge_page_size(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    unsigned long long size = 0;
    if (f) {
        /* NOLINTNEXTLINE(cert-err34-c): a kernel-written decimal; the count is checked */
        if (fscanf(f, "%llu", &size) != 1)
            size = 0;
        fclose(f);
    }
    return (size_t)size;
}

/* Whether [start, start + length) lies in one mapping whose anonymous huge pages cover at
 * least `length` bytes, from /proc/self/smaps. */
static bool on_huge_pages(const void *start, size_t length)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return false;
    char line[512];
    bool inside = false, found = false;
    uintptr_t at = (uintptr_t)start;
    while (fgets(line, sizeof line, f)) {
        uintptr_t from, to;
        /* a mapping's first line: "start-end perms ..." (no field line has a '-' there) */
        /* NOLINTNEXTLINE(cert-err34-c): smaps' addresses are kernel-written, the count checked */
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &from, &to) == 2) {
            inside = from <= at && at + length <= to;
        } else if (inside && strncmp(line, "AnonHugePages:", 14) == 0) {
            unsigned long long kib = strtoull(line + 14, NULL, 10);
            found = kib * 1024 >= length;
            break;
        }
    }
    fclose(f);
    return found;
}

/* The I/O buffers, depth of them, block_size each, filled once with incompressible data.
 * With huge_pages they sit on transparent huge pages (madvise), so one op's buffer of up
 * to 2 MiB is one physically contiguous piece: an O_DIRECT request then carries one memory
 * segment instead of up to one per 4 KiB page. Where a virtio disk has no indirect
 * descriptors (a 1 MiB request in 4 KiB pages takes up to 258 of a 256-entry queue), the
 * number of segments decides how many requests the device holds at once, and with 4 KiB
 * pages it depends on where the page allocator happened to put them, so runs of the same
 * workload differ by 2-5x. The result says whether the huge pages were given. */
static int alloc_buffers(struct cm_disk *disk, char *error, size_t error_size)
{
    const struct cm_disk_options *o = &disk->options;
    size_t total = (size_t)o->block_size * o->depth;
    size_t huge = o->huge_pages ? huge_page_size() : 0;
    size_t alignment = 4096, length = total;
    if (huge >= 4096 && (huge & (huge - 1)) == 0) {
        alignment = huge;
        length = (total + huge - 1) / huge * huge;
    }
    if (posix_memalign((void **)&disk->buffers, alignment, length) != 0) {
        disk->buffers = NULL;
        return fail(error, error_size, -ENOMEM, "out of memory for %u buffers of %" PRIu64 " bytes",
                    o->depth, o->block_size);
    }
    /* before the first touch, so the faults take huge pages; refused when THP is off */
    bool asked = alignment > 4096 && madvise(disk->buffers, length, MADV_HUGEPAGE) == 0;
    /* incompressible, written once: fio's default (no refill per op) */
    fill_pattern(disk->buffers, total, disk->rng);
    disk->huge_buffers = asked && on_huge_pages(disk->buffers, total);
    return 0;
}

/* The O_DIRECT alignment of offsets and lengths: statx's, else the device's logical block
 * size, else 512. */
static uint64_t direct_alignment(struct cm_disk *disk)
{
    struct statx sx;
    if (statx(disk->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align > 0)
        return sx.stx_dio_offset_align;
    int logical = 0;
    if (disk->block_device && ioctl(disk->fd, BLKSSZGET, &logical) == 0 && logical > 0)
        return (uint64_t)logical;
    return 512;
}

static int open_path(struct cm_disk *disk, char *error, size_t error_size)
{
    const struct cm_disk_options *o = &disk->options;
    struct stat st;
    bool exists = stat(o->path, &st) == 0;
    if (!exists && errno != ENOENT)
        return fail(error, error_size, -errno, "cannot use %s: %s", o->path, strerror(errno));
    if (exists) {
        if (S_ISDIR(st.st_mode))
            return fail(error, error_size, -EISDIR,
                        "%s is a directory: give a file in it (e.g. %s/cephmark-disk.dat)", o->path,
                        o->path);
        if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
            return fail(error, error_size, -EINVAL,
                        "%s is neither a regular file nor a block "
                        "device",
                        o->path);
        disk->block_device = S_ISBLK(st.st_mode);
    }
    /* a read of a file shorter than the region lays it out first, which needs writing */
    bool lay_out_first = !exists || (!disk->block_device && o->size > (uint64_t)st.st_size);
    /* a file that was there before is the operator's: its contents are only replaced when
     * asked, and before anything is written to it */
    if (exists && !disk->block_device && !o->overwrite) {
        if (o->write)
            return fail(error, error_size, -EEXIST,
                        "refusing to write to %s: it is an existing file this run did not "
                        "create; say so explicitly with overwrite = true (its contents are "
                        "replaced)",
                        o->path);
        if (lay_out_first) {
            char have[32];
            cm_format_size((uint64_t)st.st_size, have, sizeof have);
            return fail(error, error_size, -EEXIST,
                        "refusing to lay out %s for reading: it is an existing file of %s, "
                        "shorter than the region, that this run did not create; give a size of "
                        "at most %s, or overwrite = true to extend it",
                        o->path, have, have);
        }
    }
    int flags = O_CLOEXEC | (o->write || lay_out_first ? O_RDWR : O_RDONLY);
    if (disk->block_device) {
        char where[2048];
        if (o->write && !o->allow_block_device)
            return fail(error, error_size, -EPERM,
                        "refusing to write to the block device %s: it destroys what the device "
                        "holds; say so explicitly with allow_block_device = true",
                        o->path);
        if (o->write && device_mount_point(st.st_rdev, where, sizeof where))
            return fail(error, error_size, -EBUSY,
                        "refusing to write to the block device %s: it (or a partition of it) is "
                        "mounted on %s",
                        o->path, where);
        if (o->write)
            flags |= O_EXCL; /* the kernel refuses it while a filesystem, swap or dm holds it */
    } else if (!exists) {
        flags |= O_CREAT | O_EXCL;
    }
    if (o->direct)
        flags |= O_DIRECT;
    disk->fd = open(o->path, flags, 0644);
    if (disk->fd < 0) {
        int e = errno;
        if (e == EEXIST)
            return fail(error, error_size, -EEXIST,
                        "refusing to write to %s: it appeared while this run was creating it",
                        o->path);
        if (!exists)
            unlink(o->path); /* O_CREAT made it before O_DIRECT was refused */
        if (e == EINVAL && o->direct)
            return fail(error, error_size, -EINVAL,
                        "the filesystem of %s refuses O_DIRECT (open: %s); use direct = false, "
                        "or a path on a disk filesystem",
                        o->path, strerror(e));
        if (e == EBUSY)
            return fail(error, error_size, -EBUSY,
                        "refusing to write to the block device %s: it is in use (mounted, swap, "
                        "or held by device-mapper or md)",
                        o->path);
        return fail(error, error_size, -e, "cannot open %s for %s: %s", o->path,
                    o->write ? "writing" : "reading", strerror(e));
    }
    disk->created = !exists;
    if (!disk->block_device && fstat(disk->fd, &st) == 0 && !S_ISREG(st.st_mode))
        return fail(error, error_size, -EINVAL, "%s is not a regular file", o->path);
    return 0;
}

static int size_region(struct cm_disk *disk, char *error, size_t error_size)
{
    const struct cm_disk_options *o = &disk->options;
    char text[32], bs[32];
    uint64_t have = 0;
    if (disk->block_device) {
        if (ioctl(disk->fd, BLKGETSIZE64, &have) < 0)
            return fail(error, error_size, -errno, "cannot get the size of %s: %s", o->path,
                        strerror(errno));
    } else {
        struct stat st;
        if (fstat(disk->fd, &st) < 0)
            return fail(error, error_size, -errno, "cannot stat %s: %s", o->path, strerror(errno));
        have = (uint64_t)st.st_size;
    }
    uint64_t want = o->size ? o->size : have;
    cm_format_size(o->block_size, bs, sizeof bs);
    if (want == 0)
        return fail(error, error_size, -EINVAL,
                    "%s is empty: give the size of the region to %s (size = \"64M\")", o->path,
                    o->write ? "write" : "read");
    if (disk->block_device && want > have) {
        cm_format_size(have, text, sizeof text);
        return fail(error, error_size, -EINVAL, "size is larger than the device %s (%s)", o->path,
                    text);
    }
    disk->blocks = want / o->block_size;
    if (disk->blocks == 0) {
        cm_format_size(want, text, sizeof text);
        return fail(error, error_size, -EINVAL,
                    "the region of %s (%s) is smaller than block_size %s", o->path, text, bs);
    }
    disk->size = disk->blocks * o->block_size;
    if (disk->block_device || have >= disk->size)
        return 0;
    if (o->write) {
        /* allocated up front, as fio does, so the run does not measure block allocation */
        int rc = posix_fallocate(disk->fd, 0, (off_t)disk->size);
        if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL)
            return fail(error, error_size, -rc, "cannot allocate %s: %s", o->path, strerror(rc));
        if (rc != 0 && ftruncate(disk->fd, (off_t)disk->size) < 0)
            return fail(error, error_size, -errno, "cannot extend %s: %s", o->path,
                        strerror(errno));
        return 0;
    }
    return lay_out(disk, have / o->block_size * o->block_size, error, error_size);
}

int cm_disk_open(struct cm_disk *disk, const struct cm_disk_options *options, char *error,
                 size_t error_size)
{
    memset(disk, 0, sizeof *disk);
    disk->options = *options;
    disk->fd = -1;
    const struct cm_disk_options *o = &disk->options;
    disk->rng = o->seed ? o->seed : cm_now_ns() ^ ((uint64_t)getpid() << 32);
    if (o->block_size == 0)
        return fail(error, error_size, -EINVAL, "block_size must be positive");
    if (o->depth == 0)
        return fail(error, error_size, -EINVAL, "depth must be positive");
    int rc = open_path(disk, error, error_size);
    if (rc < 0)
        goto failed;
    if (o->direct) {
        disk->alignment = direct_alignment(disk);
        if (o->block_size % disk->alignment != 0) {
            rc = fail(error, error_size, -EINVAL,
                      "block_size %" PRIu64 " is not a multiple of %" PRIu64
                      " bytes, the alignment O_DIRECT needs on %s (use direct = false for "
                      "unaligned sizes)",
                      o->block_size, disk->alignment, o->path);
            goto failed;
        }
    }
    if ((rc = size_region(disk, error, error_size)) < 0)
        goto failed;
    if ((rc = alloc_buffers(disk, error, error_size)) < 0)
        goto failed;
    /* the hot blocks are scattered by the seed: the same seed heats the same blocks */
    if (o->random && cm_access_init(&disk->access, &o->access, disk->blocks, disk->rng) < 0) {
        rc = fail(error, error_size, -ENOMEM, "out of memory for the access distribution");
        goto failed;
    }

    if (o->engine != CM_DISK_SYNC) {
        rc = io_uring_queue_init(o->depth * 2, &disk->ring, 0);
        if (rc == 0) {
            disk->ring_ready = true;
            disk->use_uring = true;
        } else if (o->engine == CM_DISK_IO_URING) {
            rc = fail(error, error_size, rc,
                      "io_uring is not available here (%s); use engine = "
                      "\"sync\" or \"auto\"",
                      strerror(-rc));
            goto failed;
        } else {
            snprintf(disk->fallback, sizeof disk->fallback,
                     "io_uring is not available (%s): synchronous I/O, one op in flight",
                     strerror(-rc));
        }
    }
    return 0;
failed:
    cm_disk_close(disk);
    if (disk->created)
        unlink(o->path); /* leave nothing behind a refused run */
    return rc;
}

void cm_disk_close(struct cm_disk *disk)
{
    cm_access_fini(&disk->access);
    for (size_t i = 0; i < disk->n_request_slots; i++) {
        struct disk_request_slot *slot = disk->request_slots[i];
        if (slot)
            free(slot->bounce);
        free(slot);
    }
    free(disk->request_slots);
    disk->request_slots = NULL;
    disk->n_request_slots = 0;
    free(disk->bounce);
    disk->bounce = NULL;
    disk->bounce_size = 0;
    if (disk->ring_ready)
        io_uring_queue_exit(&disk->ring);
    disk->ring_ready = false;
    if (disk->fd >= 0)
        close(disk->fd);
    disk->fd = -1;
    free(disk->buffers);
    disk->buffers = NULL;
}

double cm_disk_sync_end(struct cm_disk *disk, int *rc)
{
    *rc = 0;
    if (!disk->options.write || disk->options.sync == CM_DISK_SYNC_NONE || disk->options.sync_each)
        return 0;
    uint64_t start = cm_now_ns();
    int r = disk->options.sync == CM_DISK_FSYNC ? fsync(disk->fd) : fdatasync(disk->fd);
    if (r < 0) {
        *rc = -errno;
        return -1;
    }
    return (double)(cm_now_ns() - start) / 1e9;
}

int cm_disk_drop_caches(char *error, size_t error_size)
{
    if (geteuid() != 0)
        return fail(error, error_size, -EPERM,
                    "drop_caches needs root (it writes /proc/sys/vm/drop_caches); run as root, or "
                    "leave it out and expect cached reads");
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(error, error_size, -errno, "cannot open /proc/sys/vm/drop_caches: %s",
                    strerror(errno));
    ssize_t n = write(fd, "3\n", 2);
    int e = errno;
    close(fd);
    if (n != 2)
        return fail(error, error_size, n < 0 ? -e : -EIO,
                    "cannot write /proc/sys/vm/drop_caches: %s", strerror(n < 0 ? e : EIO));
    return 0;
}

/* ---- the target --------------------------------------------------------------------------- */

static int disk_slot_init(void *self, struct cm_op *op)
{
    struct cm_disk *disk = self;
    op->target_slot = disk->buffers + (size_t)op->slot * disk->options.block_size;
    return 0;
}

static uint64_t next_offset(struct cm_disk *disk)
{
    uint64_t block;
    if (disk->options.random) {
        block = cm_access_pick(&disk->access, &disk->rng);
    } else {
        block = disk->next_block;
        disk->next_block = block + 1 == disk->blocks ? 0 : block + 1;
    }
    return block * disk->options.block_size;
}

/* A transfer is whole or failed: a short one (end of a device) counts as -EIO. */
static int64_t whole(int64_t result, uint64_t length)
{
    if (result < 0)
        return result;
    return (uint64_t)result == length ? result : -EIO;
}

static int sync_submit(struct cm_disk *disk, struct cm_op *op, uint64_t offset)
{
    const struct cm_disk_options *o = &disk->options;
    void *buffer = op->target_slot;
    ssize_t n = o->write ? pwrite(disk->fd, buffer, (size_t)o->block_size, (off_t)offset)
                         : pread(disk->fd, buffer, (size_t)o->block_size, (off_t)offset);
    int64_t result = whole(n < 0 ? -errno : n, o->block_size);
    if (result >= 0 && o->write && o->sync_each) {
        int r = o->sync == CM_DISK_FSYNC ? fsync(disk->fd) : fdatasync(disk->fd);
        if (r < 0)
            result = -errno;
    }
    cm_engine_complete(op, result);
    return 0;
}

static int disk_submit(void *self, struct cm_op *op)
{
    struct cm_disk *disk = self;
    const struct cm_disk_options *o = &disk->options;
    uint64_t offset = next_offset(disk);
    op->kind = o->write ? CM_OP_WRITE : CM_OP_READ;
    op->length = o->block_size;
    if (!disk->use_uring)
        return sync_submit(disk, op, offset);
    bool linked = o->write && o->sync_each && o->sync != CM_DISK_SYNC_NONE;
    if (io_uring_sq_space_left(&disk->ring) < (linked ? 2U : 1U)) {
        io_uring_submit(&disk->ring);
        disk->pending = 0;
    }
    struct io_uring_sqe *sqe = io_uring_get_sqe(&disk->ring);
    if (!sqe)
        return -EBUSY;
    if (o->write)
        io_uring_prep_write(sqe, disk->fd, op->target_slot, (unsigned)o->block_size, offset);
    else
        io_uring_prep_read(sqe, disk->fd, op->target_slot, (unsigned)o->block_size, offset);
    io_uring_sqe_set_data(sqe, op);
    disk->pending++;
    if (linked) {
        sqe->flags |= IOSQE_IO_LINK;
        struct io_uring_sqe *sync = io_uring_get_sqe(&disk->ring);
        io_uring_prep_fsync(sync, disk->fd,
                            o->sync == CM_DISK_FDATASYNC ? IORING_FSYNC_DATASYNC : 0);
        /* NOLINTNEXTLINE(performance-no-int-to-ptr): user_data is the op pointer, tagged */
        io_uring_sqe_set_data(sync, (void *)((uintptr_t)op | SYNC_TAG));
        disk->pending++;
        op->result = 0; /* the write's own result, until its fsync completes */
    }
    return 0;
}

/* Hands the prepared SQEs to the kernel in one call, then takes every CQE waiting. A write
 * with a linked fsync completes with its fsync; its own CQE only keeps a failure. */
static void disk_poll(void *self, uint64_t now_ns)
{
    (void)now_ns;
    struct cm_disk *disk = self;
    if (!disk->use_uring)
        return;
    if (disk->pending) {
        int rc = io_uring_submit(&disk->ring);
        if (rc >= 0)
            disk->pending = 0;
    }
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&disk->ring, head, cqe)
    {
        seen++;
        uintptr_t data = (uintptr_t)io_uring_cqe_get_data(cqe);
        /* NOLINTNEXTLINE(performance-no-int-to-ptr): user_data is the op pointer, tagged */
        struct cm_op *op = (struct cm_op *)(data & ~(SYNC_TAG | REQUEST_TAG));
        if (data & REQUEST_TAG) {
            cm_engine_complete(op, cqe->res); /* short reads are the caller's to judge */
        } else if (data & SYNC_TAG) {
            int64_t result = op->result < 0 ? op->result
                             : cqe->res < 0 ? cqe->res
                                            : (int64_t)op->length;
            cm_engine_complete(op, result);
        } else if (disk->options.write && disk->options.sync_each &&
                   disk->options.sync != CM_DISK_SYNC_NONE) {
            op->result = whole(cqe->res, op->length);
        } else {
            cm_engine_complete(op, whole(cqe->res, op->length));
        }
    }
    io_uring_cq_advance(&disk->ring, seen);
}

static int disk_wait_fd(void *self)
{
    struct cm_disk *disk = self;
    return disk->use_uring ? disk->ring.ring_fd : -1;
}

/* ---- file handles and requests chosen by the caller ---------------------------------------- */

int cm_disk_open_file(struct cm_disk *disk, const struct cm_disk_options *options, char *error,
                      size_t error_size)
{
    memset(disk, 0, sizeof *disk);
    disk->options = *options;
    disk->options.size = 0; /* nothing is laid out or preallocated */
    disk->options.depth = 1;
    disk->fd = -1;
    struct stat st;
    if (!options->write && stat(options->path, &st) != 0 && errno == ENOENT)
        return fail(error, error_size, -ENOENT, "cannot open %s for reading: %s", options->path,
                    strerror(ENOENT));
    int rc = open_path(disk, error, error_size);
    if (rc < 0) {
        cm_disk_close(disk);
        return rc;
    }
    disk->alignment = options->direct ? direct_alignment(disk) : 1;
    return 0;
}

/* The handle's bounce buffer for O_DIRECT, at least `length` bytes, aligned. */
static unsigned char *grow_bounce(unsigned char **bounce, size_t *size, size_t length)
{
    if (*bounce != NULL && *size >= length)
        return *bounce;
    size_t want = length > 4096 ? (length + 4095) / 4096 * 4096 : 4096;
    void *grown = NULL;
    if (posix_memalign(&grown, 4096, want) != 0)
        return NULL;
    free(*bounce);
    *bounce = grown;
    *size = want;
    return *bounce;
}

static int check_alignment(const struct cm_disk *disk, uint64_t offset, size_t length, char *error,
                           size_t error_size)
{
    if (disk->alignment <= 1 || (offset % disk->alignment == 0 && length % disk->alignment == 0))
        return 0;
    return fail(error, error_size, -EINVAL,
                "%s is open with direct = true: offset %" PRIu64 " and length %zu must be "
                "multiples of %" PRIu64 " bytes",
                disk->options.path, offset, length, disk->alignment);
}

int64_t cm_disk_file_io(struct cm_disk *disk, bool write, uint64_t offset, void *buffer,
                        size_t length, char *error, size_t error_size)
{
    int rc = check_alignment(disk, offset, length, error, error_size);
    if (rc < 0)
        return rc;
    void *io = buffer;
    if (disk->alignment > 1) {
        io = grow_bounce(&disk->bounce, &disk->bounce_size, length);
        if (!io)
            return fail(error, error_size, -ENOMEM, "out of memory for a %zu-byte buffer", length);
        if (write)
            memcpy(io, buffer, length);
    }
    size_t done = 0;
    while (done < length) {
        ssize_t n = write
                        ? pwrite(disk->fd, (char *)io + done, length - done, (off_t)(offset + done))
                        : pread(disk->fd, (char *)io + done, length - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail(error, error_size, -errno, "cannot %s %s at offset %" PRIu64 ": %s",
                        write ? "write" : "read", disk->options.path, offset + done,
                        strerror(errno));
        if (n == 0) {
            if (write)
                return fail(error, error_size, -EIO, "cannot write %s at offset %" PRIu64 ": %s",
                            disk->options.path, offset + done, strerror(EIO));
            break; /* the end of the file */
        }
        done += (size_t)n;
    }
    if (!write && io != buffer)
        memcpy(buffer, io, done);
    return (int64_t)done;
}

int64_t cm_disk_file_size(struct cm_disk *disk)
{
    if (disk->block_device) {
        uint64_t size = 0;
        return ioctl(disk->fd, BLKGETSIZE64, &size) < 0 ? -errno : (int64_t)size;
    }
    struct stat st;
    return fstat(disk->fd, &st) < 0 ? -errno : (int64_t)st.st_size;
}

#define REQUEST_RING_ENTRIES 256

int cm_disk_requests_init(struct cm_disk *requests, const struct cm_disk *file, char *error,
                          size_t error_size)
{
    memset(requests, 0, sizeof *requests);
    requests->options = file->options;
    requests->block_device = file->block_device;
    requests->alignment = file->alignment;
    requests->fd = fcntl(file->fd, F_DUPFD_CLOEXEC, 0);
    if (requests->fd < 0)
        return fail(error, error_size, -errno, "cannot use %s in workers: %s", file->options.path,
                    strerror(errno));
    if (file->options.engine != CM_DISK_SYNC) {
        int rc = io_uring_queue_init(REQUEST_RING_ENTRIES, &requests->ring, 0);
        if (rc == 0) {
            requests->ring_ready = requests->use_uring = true;
        } else if (file->options.engine == CM_DISK_IO_URING) {
            return fail(error, error_size, rc,
                        "io_uring is not available here (%s); use engine = \"sync\" or \"auto\"",
                        strerror(-rc));
        }
    }
    return 0;
}

static struct disk_request_slot *request_slot(struct cm_disk *disk, uint32_t index)
{
    void **entry = cm_request_slot_entry(&disk->request_slots, &disk->n_request_slots, index);
    if (!entry)
        return NULL;
    if (!*entry)
        *entry = calloc(1, sizeof(struct disk_request_slot));
    return *entry;
}

/* Over io_uring the request is prepared here and handed to the kernel by the caller's next
 * poll, like a bench's ops; without it, pread/pwrite complete it at once. */
static int disk_submit_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_disk *disk = self;
    bool write = request->verb == CM_REQUEST_WRITE;
    if (!write && request->verb != CM_REQUEST_READ)
        return -EOPNOTSUPP;
    size_t length = write ? request->data_length : request->length;
    int rc =
        check_alignment(disk, request->offset, length, request->message, sizeof request->message);
    if (rc < 0)
        return rc;
    if (!disk->options.write && write) {
        snprintf(request->message, sizeof request->message,
                 "%s is open for reading only (disk.open with write = true)", disk->options.path);
        return -EBADF;
    }
    struct disk_request_slot *slot = request_slot(disk, op->slot);
    if (!slot)
        return -ENOMEM;
    void *io = write ? (void *)request->data : request->buffer;
    if (disk->alignment > 1) {
        io = grow_bounce(&slot->bounce, &slot->bounce_size, length);
        if (!io)
            return -ENOMEM;
        if (write)
            memcpy(io, request->data, length);
    }
    op->kind = write ? CM_OP_WRITE : CM_OP_READ;
    op->length = length;
    if (!disk->use_uring) {
        ssize_t n = write ? pwrite(disk->fd, io, length, (off_t)request->offset)
                          : pread(disk->fd, io, length, (off_t)request->offset);
        cm_engine_complete(op, n < 0 ? -errno : n);
        return 0;
    }
    if (io_uring_sq_space_left(&disk->ring) < 1) {
        io_uring_submit(&disk->ring);
        disk->pending = 0;
    }
    struct io_uring_sqe *sqe = io_uring_get_sqe(&disk->ring);
    if (!sqe)
        return -EBUSY;
    if (write)
        io_uring_prep_write(sqe, disk->fd, io, (unsigned)length, request->offset);
    else
        io_uring_prep_read(sqe, disk->fd, io, (unsigned)length, request->offset);
    /* NOLINTNEXTLINE(performance-no-int-to-ptr): user_data is the op pointer, tagged */
    io_uring_sqe_set_data(sqe, (void *)((uintptr_t)op | REQUEST_TAG));
    disk->pending++;
    return 0;
}

/* A write moved all of its bytes or failed; a read may be short at the end of the file. */
static void disk_complete_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_disk *disk = self;
    if (request->verb == CM_REQUEST_WRITE) {
        if (op->result >= 0 && (uint64_t)op->result != request->data_length)
            op->result = -EIO;
        return;
    }
    if (op->result < 0)
        return;
    op->length = (uint64_t)op->result;
    if (disk->alignment > 1)
        memcpy(request->buffer, ((struct disk_request_slot *)disk->request_slots[op->slot])->bounce,
               (size_t)op->result);
}

const struct cm_target_ops cm_disk_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "disk",
    .slot_init = disk_slot_init,
    .submit = disk_submit,
    .poll = disk_poll,
    .wait_fd = disk_wait_fd,
    .submit_request = disk_submit_request,
    .complete_request = disk_complete_request,
};
