/* The op engine: drives any target (rados objects, rbd extents, HTTP objects, files,
 * sockets, null) through one small interface, keeping `depth` ops in flight (closed loop)
 * or starting ops at a fixed rate (open loop, latency corrected for coordinated omission),
 * bounded by time, op count or bytes, and measuring every completion into histograms and a
 * per-second series.
 *
 * Threading: the engine loop runs on the calling thread. Targets whose libraries complete
 * ops on their own threads (librados callbacks in open loop, scripted workers' rbd ops) call
 * cm_engine_complete() from there; it only timestamps, pushes onto a lock-free queue and
 * wakes the loop. Targets whose library signals a descriptor (the rbd target: librbd writes
 * the image's event fd, see rbd_image.h) give it to the loop through wait_fd and report
 * completions from poll, on the loop thread. Targets with a block hook (librados in closed
 * loop) let the loop wait for their oldest op itself and report completions from the loop
 * thread; a watchdog thread bounds that wait by the drain deadline. Everything else
 * (accounting, verification, resubmission) happens on the loop thread. */
#ifndef CEPHMARK_ENGINE_H
#define CEPHMARK_ENGINE_H

#include "hist.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Version 2 adds the optional per-request pair submit_request / complete_request and
 * struct cm_request: one request chosen by the caller (a scripted worker), where version 1
 * targets only chose their own ops. */
#define CM_TARGET_OPS_VERSION 2

/* What a target's submit returns when it has no more work (e.g. seq read everything). */
#define CM_TARGET_DONE 1
/* What a target's submit returns when this slot has no more work but others may (a
 * scripted worker whose function returned); the run ends when every slot is retired. */
#define CM_TARGET_SLOT_DONE 2

/* What an op does, for the per-kind results (struct cm_engine_kind). OTHER stays last. */
enum cm_op_kind {
    CM_OP_READ,
    CM_OP_WRITE,
    CM_OP_REMOVE,
    CM_OP_STAT,
    CM_OP_LIST,
    CM_OP_OTHER,
    CM_OP_KINDS
};

struct cm_engine;

/* What a caller asks of a target through submit_request (version 2). */
enum cm_request_verb {
    CM_REQUEST_READ,       /* `length` bytes at `name`/`offset` into `buffer` */
    CM_REQUEST_WRITE,      /* `data` at `name`/`offset` */
    CM_REQUEST_WRITE_FULL, /* `data` replaces the whole object `name` */
    CM_REQUEST_STAT,       /* size (and mtime) of `name`, or an object's headers (HTTP HEAD) */
    CM_REQUEST_REMOVE,     /* removes `name` */
    CM_REQUEST_SEND,       /* `data` down a stream */
    CM_REQUEST_RECEIVE,    /* exactly `length` bytes from a stream into `buffer` */
    CM_REQUEST_EXCHANGE,   /* `data` down a stream, then `length` bytes of answer into `buffer` */
};

/* One request chosen by the caller. The caller owns it, and it and everything it points
 * to stay valid and unchanged from submit_request until complete_request has returned.
 * Fields a target does not use are ignored (an rbd image has no object names, a stream no
 * offsets); a request a target cannot serve fails at once with -EOPNOTSUPP. */
struct cm_request {
    /* in */
    uint8_t verb;          /* enum cm_request_verb */
    const char *container; /* HTTP: container or bucket; NULL elsewhere */
    const char *name;      /* object name (rados, HTTP); NULL for byte-addressed targets */
    uint64_t offset;       /* byte offset (rados objects, rbd images, files) */
    const void *data;      /* bytes to write or send ... */
    size_t data_length;    /* ... this many */
    void *buffer;          /* where read or received bytes land: `length` bytes, or NULL
                            * when the target keeps them (HTTP bodies, see reply) */
    size_t length;         /* bytes to read or receive (HTTP GET: unused, see reply) */
    /* out, set by the target when the op completes (valid in and after complete_request) */
    uint64_t size;       /* STAT: the object's size (HTTP: content length) */
    int64_t mtime;       /* STAT: the object's modification time, seconds since the epoch */
    int status;          /* HTTP: the response status, 0 when the server answered nothing */
    const void *reply;   /* bytes the target kept for the caller (an HTTP body) ... */
    size_t reply_length; /* ... this many, valid until the caller's next request on the slot */
    char message[512];   /* the target's words on a failure; empty: strerror of the result */
};

/* One op slot; the engine owns `depth` of them and reuses them for the whole run. */
struct cm_op {
    struct cm_op *next;       /* completion queue link */
    struct cm_engine *engine; /* the run this slot belongs to */
    uint64_t intended_ns;     /* when the op should have started (open loop); = start_ns closed */
    uint64_t start_ns;
    uint64_t end_ns;
    int64_t result;    /* set by cm_engine_complete: >= 0 success, < 0 -errno */
    uint64_t sequence; /* 0, 1, 2, ... in submission order across the run */
    uint64_t length;   /* bytes the op moves, counted for bandwidth when it succeeds */
    uint32_t slot;
    uint8_t kind;       /* enum cm_op_kind, set by the target's submit */
    bool verify_failed; /* set by the target's complete */
    void *target_slot;  /* the target's per-slot state */
};

/* A target: the ops struct is static per target type; `self` is the target instance. */
struct cm_target_ops {
    unsigned version; /* CM_TARGET_OPS_VERSION */
    const char *name;
    /* Per-slot setup before the run (buffers, names); 0 or -errno. */
    int (*slot_init)(void *self, struct cm_op *op);
    void (*slot_fini)(void *self, struct cm_op *op);
    /* Chooses the op for this slot (kind, length, object, offset) and starts it.
     * Returns 0 when submitted (completion comes later through cm_engine_complete),
     * CM_TARGET_DONE when there is no more work, CM_TARGET_SLOT_DONE when this slot has
     * none, or -errno when it failed at once. */
    int (*submit)(void *self, struct cm_op *op);
    /* Optional (NULL when the target has nothing to do there): on the loop thread after
     * completion, releases per-op library state and verifies read data (setting
     * op->verify_failed). May adjust op->result. */
    void (*complete)(void *self, struct cm_op *op);
    /* Optional, for targets that complete work on the loop thread (null delays, curl):
     * the earliest time it needs the loop to call poll, or UINT64_MAX. */
    uint64_t (*next_deadline)(void *self);
    void (*poll)(void *self, uint64_t now_ns);
    /* Optional: a file descriptor the loop waits on (e.g. librbd's event fd, curl), with
     * poll called when it becomes readable. -1 or NULL for none. */
    int (*wait_fd)(void *self);
    /* Optional pair (both or neither; NULL in targets written before them), for libraries
     * whose completions can be waited for on the loop thread without a callback thread
     * (librados completions created without a callback): one wake-up per op fewer.
     * block: called on the loop thread instead of sleeping when ops are in flight, no
     * precise deadline is due and the run is closed loop (cm_engine_blocking); it waits
     * until at least one in-flight op has completed and calls cm_engine_complete for
     * every op it finds done (poll should do the same without waiting). It may return
     * early; it must return after cancel_block.
     * cancel_block: called from the engine's watchdog thread when the drain deadline of a
     * stopped or interrupted run has passed while the loop may be blocked; it makes a
     * block in progress return soon (e.g. by cancelling the op it waits for). The engine
     * then abandons the ops still in flight, as after any drain timeout. */
    void (*block)(void *self);
    void (*cancel_block)(void *self);
    /* Optional (version 2; complete_request only with submit_request, and optional even
     * then): one request chosen by the caller rather than by the target, for scripted
     * workers (runtime/workers.h). `op` belongs to the caller's run, not to one of this
     * target's: the target never touches op->target_slot and keeps its per-request state
     * by op->slot (one request per slot at a time), made on first use and freed with the
     * instance. The caller drives the instance's poll, next_deadline and wait_fd like the
     * engine does, but never calls slot_init, submit, complete or block for it.
     * submit_request: sets op->kind and op->length as submit does and starts the request;
     * 0 when submitted (completion through cm_engine_complete, from any thread or from the
     * target's poll), or -errno when it failed at once (nothing is in flight, the request's
     * message may say why).
     * complete_request: on the loop thread after the completion; releases per-request
     * library state and fills the request's outputs. May adjust op->result, and op->length
     * for a read that moved fewer bytes than asked (a short read, an HTTP body). */
    int (*submit_request)(void *self, struct cm_op *op, struct cm_request *request);
    void (*complete_request)(void *self, struct cm_op *op, struct cm_request *request);
    /* Optional: the target's own names of the kinds (CM_OP_KINDS entries, indexed by enum
     * cm_op_kind; NULL, or a NULL entry, takes the generic name of cm_op_kind_name), so
     * that results say get/put/head for HTTP and read/write/stat for rados. */
    const char *const *kind_names;
};

struct cm_engine_second; /* below */

/* How an open loop spaces its intended starts: evenly (1/rate apart, wrk2's schedule) or as
 * a Poisson process (exponential gaps of mean 1/rate from a seeded generator, fio's
 * rate_process=poisson). */
enum cm_arrivals { CM_ARRIVALS_UNIFORM, CM_ARRIVALS_POISSON };

/* Why a run stopped starting ops. */
enum cm_stop_reason {
    CM_STOP_NONE,      /* (still running) */
    CM_STOP_TIME,      /* the seconds bound */
    CM_STOP_OPS,       /* the op bound */
    CM_STOP_BYTES,     /* the byte bound */
    CM_STOP_DONE,      /* the target had no more work (seq read every object) */
    CM_STOP_RETIRED,   /* every slot retired (scripted workers returned) */
    CM_STOP_INTERRUPT, /* SIGINT */
    CM_STOP_CALLBACK,  /* on_second returned false */
};

struct cm_engine_config {
    unsigned depth;        /* ops in flight (rados bench -t); >= 1 */
    double rate;           /* open loop ops/s; 0 = closed loop */
    uint8_t arrivals;      /* enum cm_arrivals (open loop only) */
    uint64_t arrival_seed; /* seed of the Poisson schedule; 0 counts as 1 */
    double think;          /* closed loop: seconds a slot rests after a completion; 0: none */
    double seconds;        /* stop starting ops after this long; 0 = no time bound */
    uint64_t max_ops;      /* start at most this many ops; 0 = unbounded */
    uint64_t max_bytes;    /* start ops until this many bytes; 0 = unbounded */
    double warmup;         /* seconds whose completions are left out of the summary */
    double drain_timeout;  /* after stopping, wait at most this long for in-flight ops; 0: 60 */
    /* Keep going after SIGINT: for the cleanup that runs after an interrupted phase (a
     * second SIGINT still exits at once). */
    bool ignore_interrupt;
    /* When the run starts its clock and its first op (CLOCK_MONOTONIC ns), after its slots
     * are set up: a multi-client run schedules every agent's start on one instant. 0, or an
     * instant already past: at once. The wait ends early on a stop signal. */
    uint64_t start_at_ns;
    /* Called once per elapsed second on the loop thread; returning false stops the run. */
    bool (*on_second)(void *arg, const struct cm_engine_second *second);
    void *on_second_arg;
};

/* One second of the series (rados bench's columns, plus IOPS and the second's p99). */
struct cm_engine_second {
    uint32_t second; /* 1, 2, ... since the start */
    uint32_t in_flight;
    uint64_t started;                /* cumulative */
    uint64_t finished;               /* cumulative, successful and failed */
    uint64_t ops;                    /* finished in this second */
    uint64_t bytes;                  /* moved in this second */
    uint64_t errors;                 /* failed in this second */
    double cur_mib_s;                /* this second's bandwidth, MiB/s */
    double avg_mib_s;                /* since the start */
    double iops;                     /* this second */
    double last_latency_s;           /* latency of the last op finished this second; < 0 if none */
    double avg_latency_s;            /* since the start */
    double p99_latency_s;            /* this second's 99th percentile; < 0 if none */
    double max_latency_s;            /* this second's maximum; < 0 if none */
    uint64_t read_ops, read_bytes;   /* of `ops` and `bytes`: reads ... */
    uint64_t write_ops, write_bytes; /* ... and writes (mixed workloads report each) */
    double in_flight_mean;           /* ops in flight over the second, time-weighted */
    bool warmup;                     /* the second is part of the warm-up */
    bool partial;                    /* the last, shorter second; rates are scaled to its length */
    bool steady;                     /* the second is in the steady-state window (below) */
    /* The second's latency histogram: set only for on_second, valid during the call (NULL
     * in the result's series), so a caller can keep it (encoded) for merging seconds across
     * clients without the engine holding one per second. */
    const cm_hist *latency;
};

/* The steady-state window: the whole seconds after ramp-up and before the stop. Ramp-up
 * ends when the in-flight count first reaches the depth (closed loop without think time),
 * else at the start; the window's first second is the first one that begins at or after
 * that, never second 1, and after the warm-up. A second that ends after the run stopped
 * starting ops (the drain) or is partial is not in it. Empty (seconds 0) when no second
 * qualifies, e.g. a closed loop that never filled its slots. */
struct cm_engine_steady {
    uint32_t first_second, seconds; /* seconds first .. first + seconds - 1 of the series */
    uint64_t ops, bytes, errors;
    double in_flight_mean;
    cm_hist *latency; /* the window's completions */
};

/* One kind of op's share of a run (a mixed phase reports each kind next to the total). */
struct cm_engine_kind {
    const char *name; /* the target's name for the kind (kind_names), else the generic one */
    uint64_t ops;     /* successful ops after warm-up */
    uint64_t bytes;   /* bytes of those */
    uint64_t errors;  /* failed ops (whole run) */
    /* latency of the successful ops after warm-up (as `latency`); NULL for a kind that
     * never completed (while a run has had one kind, its ops record into `latency` alone,
     * and this is a copy of it made at the end) */
    cm_hist *latency;
};

struct cm_engine_result {
    double elapsed_s;                         /* from the end of warm-up to the last completion */
    uint64_t started;                         /* ops started (including warm-up) */
    uint64_t ops;                             /* successful ops after warm-up */
    uint64_t bytes;                           /* bytes of successful ops after warm-up */
    uint64_t errors;                          /* failed ops (whole run) */
    uint64_t verify_failures;                 /* reads whose data did not verify (whole run) */
    struct cm_engine_kind kinds[CM_OP_KINDS]; /* indexed by enum cm_op_kind */
    int first_error;                          /* -errno of the first failed op, 0 if none */
    bool interrupted;                         /* stopped by SIGINT */
    bool stopped;                             /* stopped by on_second returning false */
    bool drained;           /* every in-flight op completed (false: abandoned on timeout) */
    double bandwidth_mib_s; /* bytes / elapsed */
    double iops;            /* ops / elapsed */
    /* over the full seconds after warm-up, as rados bench reports them */
    double bandwidth_stddev, bandwidth_max, bandwidth_min;
    double iops_stddev, iops_max, iops_min;
    /* this process's CPU (all threads: librados' too) from just before the clock started
     * to the end of the drain, and the ops and bytes completed in that time (warm-up
     * included), so that CPU per op divides like by like */
    double cpu_user_s, cpu_system_s;
    uint64_t ops_all, bytes_all;
    cm_hist *latency;             /* after warm-up; corrected from intended start (open loop) */
    cm_hist *latency_uncorrected; /* open loop only: from the actual start; NULL closed */
    /* views of kinds[CM_OP_READ].latency and kinds[CM_OP_WRITE].latency (NULL when the
     * kind never completed); not freed on their own */
    cm_hist *latency_read;
    cm_hist *latency_write;
    uint8_t stop_reason;    /* enum cm_stop_reason */
    double stopped_after_s; /* from the start (warm-up included) to the stop */
    double in_flight_mean;  /* over the run after warm-up, time-weighted */
    struct cm_engine_steady steady;
    struct cm_engine_second *series;
    size_t series_len;
    uint64_t ready_ns;       /* when the run was ready (slots set up), before start_at */
    uint64_t start_ns;       /* when the clock started (CLOCK_MONOTONIC ns) */
    double start_realtime_s; /* the same instant on CLOCK_REALTIME (seconds since the epoch) */
};

/* Runs the target to completion of the bounds. Returns 0, or -errno when the run could
 * not start (slot setup failed); a run with failed ops still returns 0 and counts them. */
int cm_engine_run(const struct cm_engine_config *config, const struct cm_target_ops *ops,
                  void *target, struct cm_engine_result *result);

/* Frees the histograms and series inside a result. */
void cm_engine_result_free(struct cm_engine_result *result);

/* Thread-safe completion: stamps the end time, records the result and wakes the loop.
 * Call it exactly once per submitted op, from any thread. */
void cm_engine_complete(struct cm_op *op, int64_t result);

/* Whether this run calls the target's block hook instead of sleeping (the target has one
 * and the run is closed loop). A target asks from slot_init or submit, and when it is
 * false it must report completions itself (cm_engine_complete from its threads). */
bool cm_engine_blocking(const struct cm_op *op);

/* When the run stops starting ops (CLOCK_MONOTONIC ns; UINT64_MAX when it has no time
 * bound): a target whose submit runs script code (scripted workers) stops it there. */
uint64_t cm_engine_stop_time(const struct cm_op *op);

/* Whether a completed op counts in the run's summary (it ended after the warm-up): a
 * target that measures more of an op than its latency (HTTP time to first byte) keeps its
 * figures to the same ops. Call it from the target's complete hook. */
bool cm_engine_counted(const struct cm_op *op);

/* The entry of op slot `index` in a target's per-slot request state (submit_request keeps
 * its state by op->slot): grows `*slots` (an array of `*n` pointers) so that it holds the
 * index, new entries NULL. Returns the entry, for the target to fill on first use, or NULL
 * when out of memory. Free the entries, then the array, when the target goes. */
void **cm_request_slot_entry(void ***slots, size_t *n, uint32_t index);

/* The next gap of a Poisson schedule of mean `mean_ns`: exponentially distributed, from
 * the splitmix64 state `*state` (deterministic for a given seed). */
uint64_t cm_arrival_gap_ns(uint64_t *state, double mean_ns);

/* The generic name of an op kind: "read", "write", "remove", "stat", "list", "other". */
const char *cm_op_kind_name(int kind);

/* The kind of op a request verb is (enum cm_op_kind): reads and receives read, writes
 * and sends write, an exchange is other. */
uint8_t cm_request_kind(uint8_t verb);

/* How many kinds of op completed in a run (at least one success or failure). */
unsigned cm_engine_kinds_used(const struct cm_engine_result *result);

/* The name of a stop reason ("time", "ops", "bytes", "done", "retired", "interrupt",
 * "callback"; "none"). */
const char *cm_stop_reason_name(int reason);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t cm_now_ns(void);

#endif
