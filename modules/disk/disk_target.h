/* The file target of the op engine: sequential or random reads and writes of one block size
 * on a regular file or a block device, with O_DIRECT and aligned buffers, optional fsync or
 * fdatasync per write or at the end, and two ways to keep ops in flight:
 *
 *   io_uring  `depth` ops queued on one ring. submit() only prepares an SQE; poll() (which
 *             the engine calls right after each round of submits) hands every prepared SQE
 *             to the kernel in one io_uring_enter and reaps the CQ ring. The loop sleeps on
 *             the ring's own fd (wait_fd), which is readable while CQEs wait: no eventfd to
 *             read and re-arm per wake-up.
 *   sync      pread/pwrite inside submit(), one op at a time (the fallback when io_uring is
 *             unavailable, and fio's psync for comparisons).
 *
 * The buffers sit on transparent huge pages unless huge_pages is off, so an op's buffer is
 * one memory segment (see alloc_buffers in disk_target.c for why that matters).
 *
 * Pure C, no Lua. Nothing here allocates per op. */
#ifndef CEPHMARK_DISK_TARGET_H
#define CEPHMARK_DISK_TARGET_H

#include "distrib.h"
#include "engine.h"

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cm_disk_engine { CM_DISK_AUTO, CM_DISK_IO_URING, CM_DISK_SYNC };
enum cm_disk_sync { CM_DISK_SYNC_NONE, CM_DISK_FSYNC, CM_DISK_FDATASYNC };

struct cm_disk_options {
    const char *path;
    bool write;  /* writes (else reads) */
    bool random; /* random offsets (else sequential, wrapping at `size`) */
    uint64_t block_size;
    uint64_t size; /* the region ops fall in: 0 = the file's or device's size */
    bool direct;   /* O_DIRECT */
    enum cm_disk_engine engine;
    enum cm_disk_sync sync;  /* after writes: none, fsync or fdatasync */
    bool sync_each;          /* after every write (else once at the end, by cm_disk_sync_end) */
    bool allow_block_device; /* writes to a block device must be asked for */
    bool overwrite;          /* and so must writes to a regular file that existed before */
    unsigned depth;
    uint64_t seed; /* random offsets; 0: from the clock */
    /* random offsets: which blocks (distrib.h); uniform when not set (zeroed) */
    struct cm_access_spec access;
    bool huge_pages; /* buffers on transparent huge pages where the kernel gives them */
};

struct cm_disk {
    struct cm_disk_options options;
    int fd;
    bool block_device;
    bool created;       /* the file did not exist before cm_disk_open */
    bool use_uring;     /* the engine actually used */
    char fallback[160]; /* why io_uring was not used under CM_DISK_AUTO, else empty */
    uint64_t size;      /* the region ops fall in */
    uint64_t blocks;    /* size / block_size */
    uint64_t next_block;
    uint64_t rng;
    struct cm_access access; /* random offsets: the chooser over the blocks */
    uint64_t alignment;      /* O_DIRECT offset and length alignment */
    unsigned char *buffers;  /* depth aligned buffers of block_size, filled with a pattern */
    bool huge_buffers;       /* all of them on huge pages (asked for and given) */
    struct io_uring ring;
    bool ring_ready;
    unsigned pending;        /* SQEs prepared and not yet submitted */
    uint64_t prepared_bytes; /* a read target's layout written by cm_disk_open */
    double prepare_seconds;
    /* file handles (cm_disk_open_file) and requests chosen by the caller (submit_request):
     * an aligned bounce buffer for O_DIRECT, and per caller slot, one made on first use */
    unsigned char *bounce;
    size_t bounce_size;
    void **request_slots; /* struct disk_request_slot *, by op slot (cm_request_slot_entry) */
    size_t n_request_slots;
};

extern const struct cm_target_ops cm_disk_ops;

/* Opens the path and prepares a run: checks it is a file or block device, refuses writes
 * to block devices unless allowed and to mounted (or otherwise claimed) ones always,
 * refuses to write to (or lay out) a regular file it did not create unless overwrite,
 * creates a missing file exclusively (never truncating one that appears meanwhile),
 * checks O_DIRECT support and block alignment, sizes the region (a write's file is
 * preallocated, a read's is laid out with data first when it is shorter than the region),
 * and sets up io_uring or the sync path. Returns 0, or -errno with one sentence in `error`. */
int cm_disk_open(struct cm_disk *disk, const struct cm_disk_options *options, char *error,
                 size_t error_size);
/* The final fsync/fdatasync of a run whose sync is at the end; its seconds, or < 0 on
 * failure (-errno in *rc). */
double cm_disk_sync_end(struct cm_disk *disk, int *rc);
void cm_disk_close(struct cm_disk *disk);

/* ---- file handles (cephmark.disk's disk.open) and their requests ------------------------ */

/* Opens `options->path` for reads and writes at any offset (options: path, write, direct,
 * allow_block_device, overwrite; the rest is ignored) under cm_disk_open's rules: a missing
 * file is created exclusively (writes only; a read of a missing file fails with -ENOENT), an
 * existing file is only written with overwrite, a block device only with
 * allow_block_device and never while mounted. Returns 0, or -errno with one sentence.
 * Close with cm_disk_close. */
int cm_disk_open_file(struct cm_disk *disk, const struct cm_disk_options *options, char *error,
                      size_t error_size);
/* One blocking read into `buffer` (short at the end of the file) or write of all of
 * `length` bytes at `offset`: bytes moved, or -errno (-EINVAL with a sentence when O_DIRECT
 * needs an alignment the request lacks). */
int64_t cm_disk_file_io(struct cm_disk *disk, bool write, uint64_t offset, void *buffer,
                        size_t length, char *error, size_t error_size);
/* The file's or device's current size in bytes, or -errno. */
int64_t cm_disk_file_size(struct cm_disk *disk);
/* Prepares `requests` as the request target of an open file handle (submit_request: reads
 * and writes at an offset, over io_uring when available, else pread/pwrite), on its own
 * descriptor, so that the handle may be closed while requests are in flight. 0 or -errno
 * with a sentence; cm_disk_close in both cases. */
int cm_disk_requests_init(struct cm_disk *requests, const struct cm_disk *file, char *error,
                          size_t error_size);

/* Writes 3 to /proc/sys/vm/drop_caches after sync(). 0, or -errno with a sentence. */
int cm_disk_drop_caches(char *error, size_t error_size);

#endif
