/* The op engine's loop, completion queue and measurement; see engine.h. */
#include "engine.h"
#include "interrupt.h"
#include "splitmix.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sched.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

/* Under callgrind with --instr-atstart=no and CEPHMARK_CALLGRIND_PHASES=1, only the
 * phases' measured time is instrumented, in every thread (bench/telemetry-instructions.sh:
 * the client's instructions over a phase, which do not depend on the machine's load).
 * Elsewhere the requests are a few instructions that do nothing. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CM_PHASE_INSTRUMENTATION 1
#endif
#endif

static bool phase_instrumentation(void)
{
#ifdef CM_PHASE_INSTRUMENTATION
    const char *value = getenv("CEPHMARK_CALLGRIND_PHASES");
    return value && strcmp(value, "1") == 0 && RUNNING_ON_VALGRIND;
#else
    return false;
#endif
}

#define NS_PER_S 1000000000ULL
#define MIB      1048576.0

struct cm_engine {
    /* completion queue: a lock-free stack pushed by library threads, taken whole by the
     * loop; `sleeping` tells producers whether the loop needs an eventfd wake-up */
    _Atomic(struct cm_op *) completed;
    atomic_int sleeping;
    int wake_fd;

    const struct cm_engine_config *config;
    const struct cm_target_ops *ops;
    void *target;
    struct cm_op *slots;
    struct cm_op **free_slots;
    unsigned n_free;
    unsigned in_flight;
    unsigned retired; /* slots whose work is over (CM_TARGET_SLOT_DONE) */

    uint64_t start_ns, warmup_end_ns, stop_ns; /* stop_ns: UINT64_MAX when not time bound */
    uint64_t next_second_ns;
    uint64_t next_intended_ns; /* open loop: when the next op is due */
    uint64_t interval_ns;      /* open loop: 1e9 / rate (the mean gap with Poisson arrivals) */
    bool poisson;              /* open loop: exponential gaps from arrival_rng */
    uint64_t arrival_rng;
    uint64_t last_gap_ns; /* the gap added for the last op started (given back on retire) */
    bool no_more_work;    /* the target said done, a bound was reached, or stop */
    uint64_t stop_at_ns;  /* when it stopped starting ops; UINT64_MAX while it has not */
    /* think time (closed loop): completed slots rest here, in completion order, until
     * their op's end + think_ns; a ring of `depth` entries */
    uint64_t think_ns;
    struct cm_op **resting;
    unsigned rest_head, rest_len;
    /* steady state: when ramp-up ended (UINT64_MAX: not yet) */
    uint64_t ramp_end_ns;
    uint64_t started, bytes_started;
    uint64_t last_completion_ns;

    /* the current second */
    cm_hist *second_hist;
    uint64_t second_ops, second_bytes, second_errors;
    /* by kind, indexed without a branch (a mix's kinds come in no predictable order) */
    uint64_t second_kind_ops[CM_OP_KINDS], second_kind_bytes[CM_OP_KINDS];
    double second_last_latency_s;
    /* ns of ops in flight within the current second: an op adds the rest of the second when
     * it starts and gives back what is left when it completes; ops in flight when a second
     * closes carry a whole second into the next */
    int64_t second_busy_ns;
    /* after warm-up: busy and elapsed ns of the seconds closed (mean in flight) */
    uint64_t busy_ns, busy_length_ns, steady_busy_ns;
    /* whole run, for the series' cumulative columns */
    uint64_t finished;
    uint64_t total_bytes_all;
    double total_latency_s_all;
    uint64_t total_ok_all;

    struct cm_engine_result *result;
    size_t series_cap;
    /* Per-kind latency costs nothing while one kind has completed: its histogram is then
     * result->latency itself. When a second kind completes, that histogram becomes the
     * first kind's, each kind records into its own, and result->latency (recorded into
     * only when a kind's histogram could not be made) gets their merge at the end. */
    uint8_t sole_kind; /* the kind completed so far; CM_OP_KINDS: none yet */
    bool several_kinds;

    /* Blocking targets (see block in engine.h): the loop waits inside the target, where
     * neither SIGINT nor a deadline can wake it. The watchdog thread sleeps until the
     * drain deadline (stop + drain timeout, SIGINT + drain timeout, or the one the loop
     * published), then makes the target's wait return and tells the loop to abandon. */
    bool blocking;
    bool watchdog_started;
    pthread_t watchdog;
    int watchdog_fd; /* eventfd: a new deadline, or exit */
    uint64_t drain_timeout_ns;
    _Atomic uint64_t published_deadline; /* the loop's drain deadline, UINT64_MAX: none yet */
    atomic_bool watchdog_exit;
    atomic_bool watchdog_fired;
};

bool cm_engine_blocking(const struct cm_op *op)
{
    return op->engine->blocking;
}

uint64_t cm_engine_stop_time(const struct cm_op *op)
{
    return op->engine->stop_ns;
}

bool cm_engine_counted(const struct cm_op *op)
{
    return op->end_ns > op->engine->warmup_end_ns;
}

uint64_t cm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

void cm_engine_complete(struct cm_op *op, int64_t result)
{
    struct cm_engine *engine = op->engine;
    op->end_ns = cm_now_ns();
    op->result = result;
    struct cm_op *head = atomic_load_explicit(&engine->completed, memory_order_relaxed);
    do {
        op->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&engine->completed, &head, op,
                                                    memory_order_release, memory_order_relaxed));
    if (atomic_exchange(&engine->sleeping, 0)) {
        uint64_t one = 1;
        ssize_t unused = write(engine->wake_fd, &one, sizeof one);
        (void)unused;
    }
}

uint64_t cm_arrival_gap_ns(uint64_t *state, double mean_ns)
{
    /* u in (0, 1]: 53 random bits plus one, so that the log is finite */
    double u = (double)((cm_splitmix64(state) >> 11) + 1) * 0x1.0p-53;
    return (uint64_t)(-log(u) * mean_ns + 0.5);
}

const char *cm_op_kind_name(int kind)
{
    static const char *const names[CM_OP_KINDS] = {"read", "write", "remove",
                                                   "stat", "list",  "other"};
    if (kind < 0 || kind >= CM_OP_KINDS)
        return names[CM_OP_OTHER];
    return names[kind];
}

uint8_t cm_request_kind(uint8_t verb)
{
    switch (verb) {
    case CM_REQUEST_READ:
    case CM_REQUEST_RECEIVE:
        return CM_OP_READ;
    case CM_REQUEST_WRITE:
    case CM_REQUEST_WRITE_FULL:
    case CM_REQUEST_SEND:
        return CM_OP_WRITE;
    case CM_REQUEST_STAT:
        return CM_OP_STAT;
    case CM_REQUEST_REMOVE:
        return CM_OP_REMOVE;
    default:
        return CM_OP_OTHER;
    }
}

unsigned cm_engine_kinds_used(const struct cm_engine_result *result)
{
    unsigned used = 0;
    for (int kind = 0; kind < CM_OP_KINDS; kind++)
        if (result->kinds[kind].latency)
            used++;
    return used;
}

const char *cm_stop_reason_name(int reason)
{
    static const char *const names[] = {"none", "time",    "ops",       "bytes",
                                        "done", "retired", "interrupt", "callback"};
    if (reason < 0 || (size_t)reason >= sizeof names / sizeof names[0])
        return "none";
    return names[reason];
}

/* The run starts no more ops; the first call records when and why. */
static void stop_starting(struct cm_engine *engine, uint64_t at_ns, enum cm_stop_reason reason)
{
    engine->no_more_work = true;
    if (engine->stop_at_ns == UINT64_MAX) {
        engine->stop_at_ns = at_ns;
        engine->result->stop_reason = (uint8_t)reason;
    }
}

/* When the oldest resting slot may start again (think time). */
static uint64_t resting_due(const struct cm_engine *engine)
{
    return engine->resting[engine->rest_head]->end_ns + engine->think_ns;
}

/* Slots whose think time is over join the free ones. */
static void wake_resting(struct cm_engine *engine, uint64_t now)
{
    while (engine->rest_len && resting_due(engine) <= now) {
        engine->free_slots[engine->n_free++] = engine->resting[engine->rest_head];
        engine->rest_head = (engine->rest_head + 1) % engine->config->depth;
        engine->rest_len--;
    }
}

static bool may_start(struct cm_engine *engine, uint64_t now)
{
    const struct cm_engine_config *config = engine->config;
    if (engine->no_more_work)
        return false;
    /* the bounds before the free slots: when the last op started with every slot busy, the
     * run must know it has no more work as soon as that op completes, not a sleep later */
    if (now >= engine->stop_ns) {
        stop_starting(engine, engine->stop_ns, CM_STOP_TIME);
        return false;
    }
    if (cm_interrupted() && !engine->config->ignore_interrupt) {
        stop_starting(engine, now, CM_STOP_INTERRUPT);
        return false;
    }
    if (config->max_ops && engine->started >= config->max_ops) {
        stop_starting(engine, now, CM_STOP_OPS);
        return false;
    }
    if (config->max_bytes && engine->bytes_started >= config->max_bytes) {
        stop_starting(engine, now, CM_STOP_BYTES);
        return false;
    }
    if (engine->n_free == 0 && engine->rest_len)
        wake_resting(engine, now);
    if (engine->n_free == 0)
        return false;
    if (engine->interval_ns && now < engine->next_intended_ns)
        return false;
    return true;
}

static void start_ops(struct cm_engine *engine)
{
    uint64_t now = cm_now_ns();
    while (may_start(engine, now)) {
        struct cm_op *op = engine->free_slots[--engine->n_free];
        op->sequence = engine->started;
        op->start_ns = now;
        op->intended_ns = now;
        if (engine->interval_ns) {
            op->intended_ns = engine->next_intended_ns;
            engine->last_gap_ns = engine->poisson ? cm_arrival_gap_ns(&engine->arrival_rng,
                                                                      1e9 / engine->config->rate)
                                                  : engine->interval_ns;
            engine->next_intended_ns += engine->last_gap_ns;
        }
        op->verify_failed = false;
        op->result = 0;
        int rc = engine->ops->submit(engine->target, op);
        if (rc == CM_TARGET_DONE) {
            engine->free_slots[engine->n_free++] = op;
            stop_starting(engine, now, CM_STOP_DONE);
            break;
        }
        if (rc == CM_TARGET_SLOT_DONE) {
            /* this slot has no more work (a scripted worker returned): retire it */
            if (engine->interval_ns)
                engine->next_intended_ns -= engine->last_gap_ns;
            if (++engine->retired == engine->config->depth)
                stop_starting(engine, now, CM_STOP_RETIRED);
            continue;
        }
        engine->started++;
        engine->bytes_started += op->length;
        engine->in_flight++;
        /* in flight from its start to the end of this second, until it completes */
        if (op->start_ns < engine->next_second_ns)
            engine->second_busy_ns += (int64_t)(engine->next_second_ns - op->start_ns);
        if (engine->in_flight == engine->config->depth && engine->ramp_end_ns == UINT64_MAX)
            engine->ramp_end_ns = op->start_ns;
        if (rc < 0) /* failed at once: it completes now, as an error */
            cm_engine_complete(op, rc);
        now = cm_now_ns();
    }
}

static double ns_to_s(uint64_t ns)
{
    return (double)ns / 1e9;
}

static double timeval_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int push_second(struct cm_engine *engine, const struct cm_engine_second *second)
{
    struct cm_engine_result *result = engine->result;
    if (result->series_len == engine->series_cap) {
        size_t cap = engine->series_cap ? engine->series_cap * 2 : 64;
        struct cm_engine_second *grown = realloc(result->series, cap * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        result->series = grown;
        engine->series_cap = cap;
    }
    result->series[result->series_len++] = *second;
    return 0;
}

/* Whether the second from `second_start` to `second_end` is in the steady-state window
 * (engine.h, struct cm_engine_steady). */
static bool steady_second(const struct cm_engine *engine, uint64_t second_start,
                          uint64_t second_end)
{
    return engine->ramp_end_ns != UINT64_MAX && second_start >= engine->ramp_end_ns &&
           second_start >= engine->start_ns + NS_PER_S && second_start >= engine->warmup_end_ns &&
           second_end <= engine->stop_ns && second_end <= engine->stop_at_ns;
}

/* Adds a closed second to the after-warm-up and steady-state accounts. */
static void account_second(struct cm_engine *engine, const struct cm_engine_second *second,
                           uint64_t length_ns, uint64_t busy_ns)
{
    if (!second->warmup) {
        engine->busy_ns += busy_ns;
        engine->busy_length_ns += length_ns;
    }
    if (!second->steady)
        return;
    struct cm_engine_steady *steady = &engine->result->steady;
    if (steady->seconds == 0)
        steady->first_second = second->second;
    steady->seconds++;
    steady->ops += second->ops;
    steady->bytes += second->bytes;
    steady->errors += second->errors;
    engine->steady_busy_ns += busy_ns;
    cm_hist_merge(steady->latency, engine->second_hist);
}

/* Closes the current second: records it in the series, reports it, and starts the next.
 * `length_ns` is the second's length: 1 s, except for the partial last one. */
static void close_second_of(struct cm_engine *engine, uint64_t second_end_ns, uint64_t length_ns)
{
    uint64_t busy_ns = engine->second_busy_ns > 0 ? (uint64_t)engine->second_busy_ns : 0;
    struct cm_engine_second second = {
        .second = (uint32_t)((second_end_ns - engine->start_ns + NS_PER_S - 1) / NS_PER_S),
        .in_flight = engine->in_flight,
        .started = engine->started,
        .finished = engine->finished,
        .ops = engine->second_ops,
        .bytes = engine->second_bytes,
        .errors = engine->second_errors,
        .cur_mib_s = (double)engine->second_bytes / MIB / ns_to_s(length_ns),
        .iops = (double)engine->second_ops / ns_to_s(length_ns),
        .partial = length_ns < NS_PER_S,
        .read_ops = engine->second_kind_ops[CM_OP_READ],
        .read_bytes = engine->second_kind_bytes[CM_OP_READ],
        .write_ops = engine->second_kind_ops[CM_OP_WRITE],
        .write_bytes = engine->second_kind_bytes[CM_OP_WRITE],
        .last_latency_s = engine->second_last_latency_s,
        .p99_latency_s = -1,
        .max_latency_s = -1,
        .warmup = second_end_ns <= engine->warmup_end_ns,
        .in_flight_mean = fmin((double)busy_ns / (double)length_ns, engine->config->depth),
    };
    second.steady =
        !second.partial && steady_second(engine, second_end_ns - length_ns, second_end_ns);
    double elapsed = ns_to_s(second_end_ns - engine->start_ns);
    second.avg_mib_s = (double)engine->total_bytes_all / MIB / elapsed;
    second.avg_latency_s =
        engine->total_ok_all ? engine->total_latency_s_all / (double)engine->total_ok_all : 0;
    if (cm_hist_count(engine->second_hist)) {
        second.p99_latency_s = ns_to_s(cm_hist_percentile(engine->second_hist, 99.0));
        second.max_latency_s = ns_to_s(cm_hist_max(engine->second_hist));
    }
    push_second(engine, &second);
    account_second(engine, &second, length_ns, busy_ns);
    /* the ops still in flight are in flight for the whole next second, so far */
    engine->second_busy_ns = (int64_t)engine->in_flight * (int64_t)NS_PER_S;
    engine->second_ops = engine->second_bytes = engine->second_errors = 0;
    memset(engine->second_kind_ops, 0, sizeof engine->second_kind_ops);
    memset(engine->second_kind_bytes, 0, sizeof engine->second_kind_bytes);
    engine->second_last_latency_s = -1;
    second.latency = engine->second_hist; /* the callback's view; reset below */
    if (engine->config->on_second &&
        !engine->config->on_second(engine->config->on_second_arg, &second)) {
        stop_starting(engine, second_end_ns, CM_STOP_CALLBACK);
        engine->result->stopped = true;
    }
    cm_hist_reset(engine->second_hist);
}

static void close_second(struct cm_engine *engine, uint64_t second_end_ns)
{
    close_second_of(engine, second_end_ns, NS_PER_S);
}

static void close_partial_second(struct cm_engine *engine)
{
    uint64_t second_start = engine->next_second_ns - NS_PER_S;
    uint64_t end =
        engine->last_completion_ns > second_start ? engine->last_completion_ns : second_start + 1;
    close_second_of(engine, end, end - second_start);
}

/* The second kind completed: the latency recorded so far is the first kind's, and the
 * total starts empty, to be merged from the kinds at the end. False when out of memory
 * (the run then keeps one histogram, its total). */
static bool split_kinds(struct cm_engine *engine)
{
    struct cm_engine_result *result = engine->result;
    cm_hist *total = cm_hist_new();
    if (!total)
        return false;
    result->kinds[engine->sole_kind].latency = result->latency;
    result->latency = total;
    engine->several_kinds = true;
    return true;
}

/* The histogram the op's latency goes into: the total while one kind has completed, then
 * the kind's own, made on its first completion (on the loop thread). */
static cm_hist *kind_latency(struct cm_engine *engine, uint8_t kind)
{
    struct cm_engine_result *result = engine->result;
    if (!engine->several_kinds) {
        if (engine->sole_kind == CM_OP_KINDS)
            engine->sole_kind = kind;
        if (kind == engine->sole_kind || !split_kinds(engine))
            return result->latency;
    }
    if (!result->kinds[kind].latency && !(result->kinds[kind].latency = cm_hist_new()))
        return result->latency; /* out of memory: the op counts in the total alone */
    return result->kinds[kind].latency;
}

/* At the end: the total as the merge of the kinds (several), or the sole kind's histogram
 * as a copy of the total. */
static void finish_kinds(struct cm_engine *engine)
{
    struct cm_engine_result *result = engine->result;
    if (engine->several_kinds) {
        for (int kind = 0; kind < CM_OP_KINDS; kind++)
            if (result->kinds[kind].latency)
                cm_hist_merge(result->latency, result->kinds[kind].latency);
    } else if (engine->sole_kind != CM_OP_KINDS) {
        cm_hist *copy = cm_hist_new();
        if (copy)
            cm_hist_merge(copy, result->latency);
        result->kinds[engine->sole_kind].latency = copy;
    }
}

/* The op's place in the current second's figures. */
static void account_second_op(struct cm_engine *engine, const struct cm_op *op, uint8_t kind,
                              uint64_t latency)
{
    cm_hist_record(engine->second_hist, latency);
    engine->second_ops++;
    engine->second_bytes += op->length;
    engine->second_kind_ops[kind]++;
    engine->second_kind_bytes[kind] += op->length;
    engine->second_last_latency_s = ns_to_s(latency);
}

static void account(struct cm_engine *engine, struct cm_op *op)
{
    struct cm_engine_result *result = engine->result;
    if (engine->ops->complete) /* optional: targets with nothing to release or verify */
        engine->ops->complete(engine->target, op);
    engine->in_flight--;
    engine->finished++;
    /* no longer in flight for the rest of its second (or, accounted late, any of it) */
    uint64_t second_start = engine->next_second_ns - NS_PER_S;
    uint64_t from = op->end_ns > second_start ? op->end_ns : second_start;
    if (from < engine->next_second_ns)
        engine->second_busy_ns -= (int64_t)(engine->next_second_ns - from);
    if (engine->think_ns) /* it rests first */
        engine->resting[(engine->rest_head + engine->rest_len++) % engine->config->depth] = op;
    else
        engine->free_slots[engine->n_free++] = op;
    if (op->end_ns > engine->last_completion_ns)
        engine->last_completion_ns = op->end_ns;
    uint64_t latency = op->end_ns - op->intended_ns;
    uint8_t kind_index = op->kind < CM_OP_KINDS ? op->kind : CM_OP_OTHER;
    struct cm_engine_kind *kind = &result->kinds[kind_index];
    cm_hist *kind_hist = kind_latency(engine, kind_index);
    if (op->result < 0) {
        result->errors++;
        engine->second_errors++;
        kind->errors++;
        if (!result->first_error)
            result->first_error = (int)op->result;
        return;
    }
    if (op->verify_failed)
        result->verify_failures++;
    account_second_op(engine, op, kind_index, latency);
    engine->total_bytes_all += op->length;
    engine->total_latency_s_all += ns_to_s(latency);
    engine->total_ok_all++;
    if (!cm_engine_counted(op))
        return;
    result->ops++;
    result->bytes += op->length;
    kind->ops++;
    kind->bytes += op->length;
    cm_hist_record(kind_hist, latency);
    if (result->latency_uncorrected)
        cm_hist_record(result->latency_uncorrected, op->end_ns - op->start_ns);
}

/* Takes every queued completion; the stack is LIFO, so reverse it to account in order. */
static unsigned drain_completions(struct cm_engine *engine)
{
    struct cm_op *list = atomic_exchange_explicit(&engine->completed, NULL, memory_order_acquire);
    struct cm_op *ordered = NULL;
    unsigned n = 0;
    while (list) {
        struct cm_op *next = list->next;
        list->next = ordered;
        ordered = list;
        list = next;
    }
    while (ordered) {
        struct cm_op *next = ordered->next;
        /* seconds that ended before this completion are closed first */
        while (ordered->end_ns >= engine->next_second_ns) {
            close_second(engine, engine->next_second_ns);
            engine->next_second_ns += NS_PER_S;
        }
        account(engine, ordered);
        ordered = next;
        n++;
    }
    return n;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* How early the loop wakes for a target's own deadline (null delays, timers), finishing
 * the wait by spinning: kernel timers on a busy VM are late by tens of microseconds, which
 * would show up as latency that belongs to the sleep, not to the op. */
#define DEADLINE_SPIN_NS 100000ULL

/* Sleeps until a completion, the next second, the next open-loop start, a target deadline
 * or SIGINT, whichever comes first. */
static void wait_for_work(struct cm_engine *engine, uint64_t drain_deadline)
{
    uint64_t now = cm_now_ns();
    uint64_t until = min_u64(engine->next_second_ns, drain_deadline);
    uint64_t due = UINT64_MAX; /* an op's start that must not be late: open loop, think time */
    if (!engine->no_more_work) {
        until = min_u64(until, engine->stop_ns);
        if (engine->interval_ns && engine->n_free > 0)
            due = engine->next_intended_ns;
        else if (engine->n_free == 0 && engine->rest_len)
            due = resting_due(engine);
        until = min_u64(until, due);
    }
    uint64_t target_deadline =
        engine->ops->next_deadline ? engine->ops->next_deadline(engine->target) : UINT64_MAX;
    bool precise = target_deadline <= until || (due != UINT64_MAX && until == due);
    until = min_u64(until, target_deadline);
    if (until <= now)
        return;
    if (precise && until - now <= DEADLINE_SPIN_NS) {
        while (cm_now_ns() < until &&
               atomic_load_explicit(&engine->completed, memory_order_relaxed) == NULL)
            ;
        return;
    }
    if (engine->blocking && engine->in_flight > 0 && !precise &&
        atomic_load_explicit(&engine->completed, memory_order_relaxed) == NULL) {
        /* the next second or the stop time may pass while blocked: the loop catches up
         * (closing every second that ended) as soon as an op completes */
        engine->ops->block(engine->target);
        return;
    }
    uint64_t wait_ns = until - now - (precise ? DEADLINE_SPIN_NS : 0);
    if (wait_ns > NS_PER_S)
        wait_ns = NS_PER_S;

    struct pollfd fds[3];
    int n = 0;
    fds[n++] = (struct pollfd){.fd = engine->wake_fd, .events = POLLIN};
    if (cm_interrupt_fd() >= 0 && !cm_interrupted() && !engine->config->ignore_interrupt)
        fds[n++] = (struct pollfd){.fd = cm_interrupt_fd(), .events = POLLIN};
    int target_fd = engine->ops->wait_fd ? engine->ops->wait_fd(engine->target) : -1;
    if (target_fd >= 0)
        fds[n++] = (struct pollfd){.fd = target_fd, .events = POLLIN};

    atomic_store(&engine->sleeping, 1);
    if (atomic_load(&engine->completed) != NULL) { /* raced with a producer: don't sleep */
        atomic_store(&engine->sleeping, 0);
        return;
    }
    struct timespec timeout = {.tv_sec = (time_t)(wait_ns / NS_PER_S),
                               .tv_nsec = (long)(wait_ns % NS_PER_S)};
    ppoll(fds, (nfds_t)n, &timeout, NULL);
    atomic_store(&engine->sleeping, 0);
    if (fds[0].revents & POLLIN) {
        uint64_t count;
        ssize_t unused = read(engine->wake_fd, &count, sizeof count);
        (void)unused;
    }
}

/* Per-second bandwidth and IOPS statistics over the full seconds after warm-up, as rados
 * bench computes them (sample standard deviation). */
static void summarize_series(struct cm_engine_result *result)
{
    size_t n = 0;
    double sum_bw = 0, sum_bw2 = 0, sum_iops = 0, sum_iops2 = 0;
    result->bandwidth_min = result->iops_min = 0;
    result->bandwidth_max = result->iops_max = 0;
    for (size_t i = 0; i < result->series_len; i++) {
        const struct cm_engine_second *s = &result->series[i];
        if (s->warmup || s->partial)
            continue;
        if (n == 0 || s->cur_mib_s < result->bandwidth_min)
            result->bandwidth_min = s->cur_mib_s;
        if (n == 0 || s->iops < result->iops_min)
            result->iops_min = s->iops;
        if (s->cur_mib_s > result->bandwidth_max)
            result->bandwidth_max = s->cur_mib_s;
        if (s->iops > result->iops_max)
            result->iops_max = s->iops;
        sum_bw += s->cur_mib_s;
        sum_bw2 += s->cur_mib_s * s->cur_mib_s;
        sum_iops += s->iops;
        sum_iops2 += s->iops * s->iops;
        n++;
    }
    if (n == 0 && result->series_len > 0) {
        /* a run shorter than a second: its one partial second stands for the run */
        const struct cm_engine_second *s = &result->series[result->series_len - 1];
        result->bandwidth_min = result->bandwidth_max = s->cur_mib_s;
        result->iops_min = result->iops_max = s->iops;
    }
    if (n > 1) {
        double mean_bw = sum_bw / (double)n, mean_iops = sum_iops / (double)n;
        result->bandwidth_stddev =
            sqrt(fmax(0, (sum_bw2 - (double)n * mean_bw * mean_bw) / (double)(n - 1)));
        result->iops_stddev =
            sqrt(fmax(0, (sum_iops2 - (double)n * mean_iops * mean_iops) / (double)(n - 1)));
    }
}

static void watchdog_signal(struct cm_engine *engine)
{
    uint64_t one = 1;
    ssize_t unused = write(engine->watchdog_fd, &one, sizeof one);
    (void)unused;
}

/* After SIGINT, ops that do not complete (a full cluster pauses writes indefinitely) are
 * abandoned after at most 8 s, so that the interrupt acts within 15 s whatever the drain
 * timeout. */
#define INTERRUPT_DRAIN_NS (8 * NS_PER_S)

static uint64_t interrupt_drain_ns(const struct cm_engine *engine)
{
    return min_u64(engine->drain_timeout_ns, INTERRUPT_DRAIN_NS);
}

/* The watchdog of a blocking run: it costs nothing while the run goes well (it sleeps in
 * poll until the drain deadline, SIGINT or a new deadline from the loop) and fires once. */
static void *watchdog_main(void *arg)
{
    struct cm_engine *engine = arg;
    uint64_t stop_deadline =
        engine->stop_ns == UINT64_MAX ? UINT64_MAX : engine->stop_ns + engine->drain_timeout_ns;
    uint64_t interrupt_deadline = UINT64_MAX;
    bool watch_interrupt = !engine->config->ignore_interrupt && cm_interrupt_fd() >= 0;
    bool fired = false;
    while (!atomic_load(&engine->watchdog_exit)) {
        uint64_t now = cm_now_ns();
        if (watch_interrupt && cm_interrupted() && interrupt_deadline == UINT64_MAX)
            interrupt_deadline = now + interrupt_drain_ns(engine);
        uint64_t deadline = min_u64(min_u64(stop_deadline, interrupt_deadline),
                                    atomic_load(&engine->published_deadline));
        if (!fired && now >= deadline) {
            atomic_store(&engine->watchdog_fired, true);
            engine->ops->cancel_block(engine->target);
            uint64_t one = 1; /* in case the loop sleeps in ppoll instead */
            ssize_t unused = write(engine->wake_fd, &one, sizeof one);
            (void)unused;
            fired = true;
        }
        struct pollfd fds[2] = {{.fd = engine->watchdog_fd, .events = POLLIN}};
        nfds_t n = 1;
        if (watch_interrupt && interrupt_deadline == UINT64_MAX)
            fds[n++] = (struct pollfd){.fd = cm_interrupt_fd(), .events = POLLIN};
        int timeout_ms = -1;
        if (!fired && deadline != UINT64_MAX) {
            uint64_t ms = (deadline - now + 999999) / 1000000;
            timeout_ms = ms > 1000 ? 1000 : (int)ms;
        }
        poll(fds, n, timeout_ms);
        if (fds[0].revents & POLLIN) {
            uint64_t count;
            ssize_t unused = read(engine->watchdog_fd, &count, sizeof count);
            (void)unused;
        }
    }
    return NULL;
}

/* The run's state with its queues, slots' storage and histograms (the slots are not set up
 * yet: see engine_init_slots). On the heap: if in-flight ops must be abandoned, late
 * completions still find it. Returns NULL when out of memory, with nothing left allocated but
 * what cm_engine_result_free releases in `result`. */
static struct cm_engine *engine_new(const struct cm_engine_config *config,
                                    const struct cm_target_ops *ops, void *target,
                                    struct cm_engine_result *result)
{
    struct cm_engine *engine = calloc(1, sizeof *engine);
    if (!engine)
        return NULL;
    engine->config = config;
    engine->ops = ops;
    engine->target = target;
    engine->result = result;
    engine->second_last_latency_s = -1;
    engine->sole_kind = CM_OP_KINDS;
    atomic_init(&engine->completed, NULL);
    atomic_init(&engine->sleeping, 0);
    atomic_init(&engine->published_deadline, UINT64_MAX);
    atomic_init(&engine->watchdog_exit, false);
    atomic_init(&engine->watchdog_fired, false);
    /* think time rests slots on deadlines the loop must keep, so it never blocks inside
     * the target */
    engine->blocking =
        ops->block && ops->cancel_block && !(config->rate > 0) && !(config->think > 0);
    engine->stop_at_ns = UINT64_MAX;
    engine->ramp_end_ns = UINT64_MAX;
    engine->watchdog_fd = -1;
    engine->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    engine->slots = calloc(config->depth, sizeof *engine->slots);
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers to slots, on purpose */
    engine->free_slots = calloc(config->depth, sizeof *engine->free_slots);
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers to slots, on purpose */
    engine->resting = calloc(config->depth, sizeof *engine->resting);
    engine->second_hist = cm_hist_new();
    result->steady.latency = cm_hist_new();
    result->latency = cm_hist_new();
    for (int kind = 0; kind < CM_OP_KINDS; kind++) {
        const char *name = ops->kind_names ? ops->kind_names[kind] : NULL;
        result->kinds[kind].name = name ? name : cm_op_kind_name(kind);
    }
    if (config->rate > 0)
        result->latency_uncorrected = cm_hist_new();
    if (engine->wake_fd < 0 || !engine->slots || !engine->free_slots || !engine->resting ||
        !engine->second_hist || !result->steady.latency || !result->latency ||
        (config->rate > 0 && !result->latency_uncorrected)) {
        if (engine->wake_fd >= 0)
            close(engine->wake_fd);
        free(engine->slots);
        free(engine->free_slots);
        free(engine->resting);
        cm_hist_free(engine->second_hist);
        free(engine);
        return NULL;
    }
    return engine;
}

/* Runs the target's slot_init on every slot; *initialized counts those set up (to be
 * finished), also on failure. 0 or the -errno of the slot that failed. */
static int engine_init_slots(struct cm_engine *engine, unsigned *initialized)
{
    const struct cm_engine_config *config = engine->config;
    for (; *initialized < config->depth; (*initialized)++) {
        struct cm_op *op = &engine->slots[*initialized];
        op->engine = engine;
        op->slot = *initialized;
        int rc = engine->ops->slot_init ? engine->ops->slot_init(engine->target, op) : 0;
        if (rc < 0)
            return rc;
    }
    /* free slots are taken from the end: slot 0 first */
    for (unsigned i = 0; i < config->depth; i++)
        engine->free_slots[i] = &engine->slots[config->depth - 1 - i];
    engine->n_free = config->depth;
    return 0;
}

/* Starts the run's clock: the start, the end of warm-up, the stop time, the first second's
 * end and, in open loop, the first op's intended start. */
static void engine_start_clock(struct cm_engine *engine)
{
    const struct cm_engine_config *config = engine->config;
    engine->start_ns = cm_now_ns();
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    engine->result->start_ns = engine->start_ns;
    engine->result->start_realtime_s = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    engine->warmup_end_ns = engine->start_ns + (uint64_t)(fmax(0, config->warmup) * 1e9);
    engine->stop_ns =
        config->seconds > 0 ? engine->start_ns + (uint64_t)(config->seconds * 1e9) : UINT64_MAX;
    if (config->seconds > 0 && config->warmup > 0)
        engine->stop_ns += (uint64_t)(config->warmup * 1e9);
    engine->next_second_ns = engine->start_ns + NS_PER_S;
    if (config->rate > 0) {
        engine->interval_ns = (uint64_t)fmax(1, 1e9 / config->rate);
        engine->next_intended_ns = engine->start_ns;
        engine->poisson = config->arrivals == CM_ARRIVALS_POISSON;
        engine->arrival_rng = config->arrival_seed ? config->arrival_seed : 1;
    } else if (config->think > 0) {
        engine->think_ns = (uint64_t)(config->think * 1e9);
    }
    /* an open loop or a closed one with think time has no depth to reach */
    if (engine->interval_ns || engine->think_ns)
        engine->ramp_end_ns = engine->start_ns;
    engine->last_completion_ns = engine->start_ns;
    double drain_timeout = config->drain_timeout > 0 ? config->drain_timeout : 60;
    engine->drain_timeout_ns = (uint64_t)(drain_timeout * 1e9);
}

/* The wait for config->start_at_ns, once everything else of the run is ready, so that the
 * start is the instant asked for and not the end of the target's setup. It sleeps in slices
 * (a stop signal ends it within one, and the loop then stops at once); the option's check
 * bounds how far ahead the instant is. */
#define START_SLICE_NS (50 * 1000000ULL)

static void wait_for_start(const struct cm_engine_config *config)
{
    if (!config->start_at_ns)
        return;
    for (;;) {
        if (cm_interrupted() && !config->ignore_interrupt)
            return;
        uint64_t now = cm_now_ns();
        if (now >= config->start_at_ns)
            return;
        uint64_t until = min_u64(config->start_at_ns, now + START_SLICE_NS);
        struct timespec at = {.tv_sec = (time_t)(until / NS_PER_S),
                              .tv_nsec = (long)(until % NS_PER_S)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
    }
}

/* A blocking run's watchdog thread (see watchdog_main). 0 or -errno. */
static int engine_start_watchdog(struct cm_engine *engine)
{
    engine->watchdog_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (engine->watchdog_fd < 0)
        return -errno;
    if (pthread_create(&engine->watchdog, NULL, watchdog_main, engine) != 0)
        return -EAGAIN;
    engine->watchdog_started = true;
    return 0;
}

/* The run: starts ops, takes completions, closes seconds and sleeps until there is work,
 * until the run has no more work and nothing in flight, or the drain deadline passes (then
 * the ops still in flight are abandoned, never their slots freed). */
static void engine_loop(struct cm_engine *engine)
{
    const struct cm_engine_config *config = engine->config;
    struct cm_engine_result *result = engine->result;
    uint64_t drain_deadline = UINT64_MAX, interrupt_deadline = UINT64_MAX;
    for (;;) {
        if (atomic_load_explicit(&engine->watchdog_fired, memory_order_relaxed)) {
            /* the drain deadline passed while the loop was blocked: the seconds that
             * ended meanwhile are closed, then the ops still in flight abandoned */
            for (uint64_t now = cm_now_ns(); now >= engine->next_second_ns;
                 engine->next_second_ns += NS_PER_S)
                close_second(engine, engine->next_second_ns);
            break;
        }
        start_ops(engine);
        if (engine->ops->poll)
            engine->ops->poll(engine->target, cm_now_ns());
        drain_completions(engine);
        uint64_t now = cm_now_ns();
        while (now >= engine->next_second_ns) {
            close_second(engine, engine->next_second_ns);
            engine->next_second_ns += NS_PER_S;
        }
        if (cm_interrupted() && !result->interrupted && !config->ignore_interrupt) {
            result->interrupted = true;
            stop_starting(engine, now, CM_STOP_INTERRUPT);
        }
        if (now >= engine->stop_ns)
            stop_starting(engine, engine->stop_ns, CM_STOP_TIME);
        uint64_t wanted = UINT64_MAX;
        if (engine->no_more_work && drain_deadline == UINT64_MAX)
            wanted = now + engine->drain_timeout_ns;
        if (result->interrupted && interrupt_deadline == UINT64_MAX)
            wanted = min_u64(wanted, interrupt_deadline = now + interrupt_drain_ns(engine));
        if (wanted < drain_deadline) {
            drain_deadline = wanted;
            if (engine->watchdog_started) {
                atomic_store(&engine->published_deadline, drain_deadline);
                watchdog_signal(engine);
            }
        }
        if (engine->in_flight == 0 && engine->no_more_work)
            break;
        if (now >= drain_deadline)
            break; /* ops that never complete: abandon them, never free their slots */
        if (may_start(engine, now))
            continue; /* slots came free: refill before sleeping */
        wait_for_work(engine, drain_deadline);
    }
}

/* The result's totals and rates once the loop is over; `usage_before` and `usage_after`
 * bracket the run's CPU. */
static void engine_summarize(struct cm_engine *engine, const struct rusage *usage_before,
                             const struct rusage *usage_after)
{
    struct cm_engine_result *result = engine->result;
    result->cpu_user_s = timeval_s(usage_after->ru_utime) - timeval_s(usage_before->ru_utime);
    result->cpu_system_s = timeval_s(usage_after->ru_stime) - timeval_s(usage_before->ru_stime);
    result->ops_all = engine->total_ok_all;
    result->bytes_all = engine->total_bytes_all;
    result->drained = engine->in_flight == 0;
    /* the partial last second is part of the series when anything happened in it, marked
     * partial and left out of the per-second statistics */
    if (engine->second_ops || engine->second_errors)
        close_partial_second(engine);
    /* the result carries the interrupt to the caller, which handles it (writes what was
     * measured, cleans up): the watchdog must not raise it in there */
    if (result->interrupted)
        cm_interrupt_withdraw();

    uint64_t end = engine->last_completion_ns;
    uint64_t from = engine->warmup_end_ns < end ? engine->warmup_end_ns : end;
    result->elapsed_s = ns_to_s(end - from);
    result->started = engine->started;
    finish_kinds(engine);
    result->latency_read = result->kinds[CM_OP_READ].latency;
    result->latency_write = result->kinds[CM_OP_WRITE].latency;
    if (engine->stop_at_ns != UINT64_MAX)
        result->stopped_after_s = ns_to_s(engine->stop_at_ns - engine->start_ns);
    /* (ops abandoned in flight count until the partial second's end: bounded by the depth) */
    double depth = engine->config->depth;
    if (engine->busy_length_ns)
        result->in_flight_mean =
            fmin((double)engine->busy_ns / (double)engine->busy_length_ns, depth);
    if (result->steady.seconds)
        result->steady.in_flight_mean =
            fmin((double)engine->steady_busy_ns / ((double)result->steady.seconds * 1e9), depth);
    if (result->elapsed_s > 0) {
        result->bandwidth_mib_s = (double)result->bytes / MIB / result->elapsed_s;
        result->iops = (double)result->ops / result->elapsed_s;
    }
    summarize_series(result);
}

/* Stops the watchdog and releases the run. Slots, their target state, the wake-up fd and
 * the engine itself are kept when ops are still in flight: a library may still write into
 * the slots' buffers or complete into the queue; leaking them is the only safe choice, and
 * the result says the run was not drained. */
static void engine_release(struct cm_engine *engine, unsigned initialized)
{
    const struct cm_target_ops *ops = engine->ops;
    bool quiet = engine->result->drained || engine->in_flight == 0;
    if (engine->watchdog_started) {
        atomic_store(&engine->watchdog_exit, true);
        watchdog_signal(engine);
        pthread_join(engine->watchdog, NULL);
    }
    if (engine->watchdog_fd >= 0)
        close(engine->watchdog_fd);
    if (quiet) {
        for (unsigned i = 0; i < initialized; i++)
            if (ops->slot_fini)
                ops->slot_fini(engine->target, &engine->slots[i]);
        free(engine->slots);
    }
    free(engine->free_slots);
    free(engine->resting);
    cm_hist_free(engine->second_hist);
    if (quiet) {
        close(engine->wake_fd);
        free(engine);
    }
}

int cm_engine_run(const struct cm_engine_config *config, const struct cm_target_ops *ops,
                  void *target, struct cm_engine_result *result)
{
    unsigned initialized = 0;
    memset(result, 0, sizeof *result);
    if (config->depth < 1 || ops->version != CM_TARGET_OPS_VERSION)
        return -EINVAL;
    struct cm_engine *engine = engine_new(config, ops, target, result);
    if (!engine) {
        cm_engine_result_free(result);
        return -ENOMEM;
    }
    int rc = engine_init_slots(engine, &initialized);
    if (rc < 0)
        goto out;

    /* the loop thread's timers fire when asked, not up to 50 us later (the default slack) */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    struct rusage usage_before, usage_after;
    bool instrumented = phase_instrumentation();
#ifdef CM_PHASE_INSTRUMENTATION
    if (instrumented)
        CALLGRIND_START_INSTRUMENTATION;
#endif
    result->ready_ns = cm_now_ns();
    wait_for_start(config);
    getrusage(RUSAGE_SELF, &usage_before);
    engine_start_clock(engine);
    /* Processes that share a host and start at one instant (agents on one machine) wake
     * together; the one that runs first would hold the core for a scheduler slice before
     * its first op blocks, and the others would start their clocks that much later. With
     * the clock started, it lets them have the core first. */
    if (config->start_at_ns)
        sched_yield();
    if (engine->blocking && (rc = engine_start_watchdog(engine)) < 0)
        goto out;
    engine_loop(engine);
    /* a loop blocked in the target until the watchdog fired never saw the interrupt */
    if (cm_interrupted() && !config->ignore_interrupt)
        result->interrupted = true;
    getrusage(RUSAGE_SELF, &usage_after);
#ifdef CM_PHASE_INSTRUMENTATION
    if (instrumented)
        CALLGRIND_STOP_INSTRUMENTATION;
#endif
    (void)instrumented;
    engine_summarize(engine, &usage_before, &usage_after);

out:
    engine_release(engine, initialized);
    if (rc < 0)
        cm_engine_result_free(result);
    return rc;
}

void cm_engine_result_free(struct cm_engine_result *result)
{
    cm_hist_free(result->latency);
    cm_hist_free(result->latency_uncorrected);
    for (int kind = 0; kind < CM_OP_KINDS; kind++) {
        cm_hist_free(result->kinds[kind].latency);
        result->kinds[kind].latency = NULL;
    }
    cm_hist_free(result->steady.latency);
    free(result->series);
    result->steady.latency = NULL;
    result->latency = result->latency_uncorrected = NULL;
    result->latency_read = result->latency_write = NULL;
    result->series = NULL;
    result->series_len = 0;
}

void **cm_request_slot_entry(void ***slots, size_t *n, uint32_t index)
{
    if (index >= *n) {
        size_t want = *n ? *n : 16;
        while (want <= index)
            want *= 2;
        void **grown = realloc(*slots, want * sizeof(void *));
        if (!grown)
            return NULL;
        memset(grown + *n, 0, (want - *n) * sizeof(void *));
        *slots = grown;
        *n = want;
    }
    return &(*slots)[index];
}
