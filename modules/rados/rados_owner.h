/* Ownership of what cephmark creates in a cluster, and librados calls with a bound: who a
 * run is (host, pid, the process's start time, boot id), whether that process still lives,
 * watches that let another host ask the same question, and the small synchronous object
 * operations a run makes outside the engine (owner and metadata objects) as async calls
 * that give up after a timeout or at SIGINT. Pure C, no Lua. See docs/rados.md,
 * "Ownership". */
#ifndef CEPHMARK_RADOS_OWNER_H
#define CEPHMARK_RADOS_OWNER_H

#include <rados/librados.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The process that created something. pid_start (clock ticks after boot, field 22 of
 * /proc/PID/stat) and boot_id tell a live holder from a later process with the same pid. */
struct cm_owner {
    uint64_t run_id;
    char host[64];
    int64_t pid;
    uint64_t pid_start;
    char boot_id[40];
    int64_t started; /* wall clock, seconds since the epoch */
};

/* This process (run_id: the caller's; 0 keeps this process's own). */
void cm_owner_self(struct cm_owner *owner);

/* Appends the owner as "key value" lines; returns the length written or -1 if too long. */
int cm_owner_format(const struct cm_owner *owner, char *out, size_t size);

/* Takes one "key value" field of a record; false when the key is not an owner field. */
bool cm_owner_parse_field(struct cm_owner *owner, const char *key, const char *value);

/* "host H, pid P, started 2026-12-02 04:30:12 UTC" */
void cm_owner_describe(const struct cm_owner *owner, char *out, size_t size);

enum cm_owner_state { CM_OWNER_GONE = 0, CM_OWNER_ALIVE = 1, CM_OWNER_ELSEWHERE = 2 };

/* On this host: alive or gone, from /proc and the boot id. Another host's process:
 * CM_OWNER_ELSEWHERE (ask the cluster: cm_owner_probe). */
enum cm_owner_state cm_owner_local_state(const struct cm_owner *owner);

/* The bound of a call given `timeout` seconds: the timeout (10 s if 0), or at most 3 s once
 * SIGINT has arrived. */
double cm_rados_bound(double timeout);

/* Waits for an async librados op for at most `timeout` seconds, returning early at SIGINT.
 * Returns the op's result, -ETIMEDOUT or -EINTR; on those two the op is cancelled, and the
 * completion is released either way. */
int cm_rados_wait(rados_ioctx_t io, rados_completion_t completion, double timeout);

/* Runs a prepared write op on `oid` with a bounded wait (cm_rados_wait), and releases it.
 * The op's data was copied into the op: releasing it is safe even if it is still queued
 * after a timeout (librados holds its own reference to the encoded op). 0 or -errno. */
int cm_rados_operate_bounded(rados_ioctx_t io, const char *oid, rados_write_op_t op, int flags,
                             double timeout);

/* Bounded object calls (cm_rados_wait). create: exclusive when `exclusive`, with the data
 * as the object's content. read: up to `size` bytes into a buffer it allocates (freed by the
 * caller; on timeout it is left to librados and leaked, as the op may still write it).
 * full_try lets a tiny owner record through on a full cluster, so what a run creates there
 * can still be found and removed.
 * remove: with full_try, so that a full cluster can still be emptied. */
int cm_rados_create(rados_ioctx_t io, const char *oid, const char *data, size_t len, bool exclusive,
                    bool full_try, double timeout);
int cm_rados_read_small(rados_ioctx_t io, const char *oid, char **data, size_t size,
                        double timeout);
int cm_rados_remove_bounded(rados_ioctx_t io, const char *oid, double timeout);

/* A watch on an owner object that answers other hosts' probes while this process lives
 * (the OSD drops it after the watch timeout once the process is gone). The watch uses its
 * own ioctx (its namespace fixed). */
struct cm_owner_watch;
int cm_owner_watch_start(rados_t cluster, int64_t pool_id, const char *nspace, const char *oid,
                         double timeout, struct cm_owner_watch **out);
void cm_owner_watch_stop(struct cm_owner_watch *watch, double timeout);

/* Asks the watchers of an owner object to answer within `timeout` seconds: 1 when one did
 * (its holder lives), 0 when none did, or a negative errno. */
int cm_owner_probe(rados_ioctx_t io, const char *oid, double timeout);

#endif
