/* aio_loop: the baseline for bench/loop-vs-cephmark.sh. A minimal librados client that keeps
 * T writes (rados_aio_write_full) or reads (rados_aio_read) in flight for N seconds and prints
 * the ops it made and the CPU it used, with nothing else in the loop: no histograms, no
 * payload headers, no verification, no per-second series. Two completion styles:
 *   -w oldest  (default) a ring of T completions without callbacks; the loop blocks in
 *              rados_aio_wait_for_complete on the oldest one, then resubmits that slot
 *   -w sem     completion callbacks push the slot on a mutex-protected ring and sem_post;
 *              the loop sem_waits, pops a slot and resubmits it
 *
 * usage: aio_loop -p POOL [-m write|read] [-t 16] [-b 4096] [-s SECONDS] [-w oldest|sem]
 *                 [--prefix PREFIX] [--objects N] [-c CEPH_CONF] [--id NAME]
 * write: object PREFIX_object<i> for op i (write_full of -b bytes), like rados bench write;
 * read:  object PREFIX_object<random below --objects>, -b bytes from offset 0 (rados bench rand).
 * Output (stdout, one line): mode=... ops=... errors=... seconds=... ops_per_s=...
 *   cpu_s=... cpu_us_per_op=... loop_cpu_s=... loop_cpu_us_per_op=...
 * cpu_* is the whole process (connect included); loop_cpu_* only the timed I/O loop.
 * Build: cc -O2 -o aio_loop aio_loop.c -lrados -lpthread   (or make -C bench) */
#define _GNU_SOURCE
#include <rados/librados.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct slot {
    rados_completion_t completion;
    char *buffer;
    char name[128];
    unsigned index;
};

static struct {
    rados_ioctx_t io;
    bool write;
    size_t block;
    uint64_t objects; /* read: how many objects to pick from */
    const char *prefix;
    uint64_t sequence; /* write: next object number */
    uint64_t rng;
    /* -w sem */
    sem_t ready;
    pthread_mutex_t lock;
    unsigned *ring;
    unsigned ring_head, ring_tail, ring_size;
} g;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static uint64_t next_random(void)
{
    uint64_t z = (g.rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void on_complete(rados_completion_t completion, void *arg)
{
    (void)completion;
    struct slot *slot = arg;
    pthread_mutex_lock(&g.lock);
    g.ring[g.ring_tail++ % g.ring_size] = slot->index;
    pthread_mutex_unlock(&g.lock);
    sem_post(&g.ready);
}

static int submit(struct slot *slot, bool callback)
{
    uint64_t object = g.write ? g.sequence++ : next_random() % g.objects;
    snprintf(slot->name, sizeof slot->name, "%s_object%" PRIu64, g.prefix, object);
    int rc = callback ? rados_aio_create_completion2(slot, on_complete, &slot->completion)
                      : rados_aio_create_completion2(NULL, NULL, &slot->completion);
    if (rc < 0)
        return rc;
    if (g.write)
        rc = rados_aio_write_full(g.io, slot->name, slot->completion, slot->buffer, g.block);
    else
        rc = rados_aio_read(g.io, slot->name, slot->completion, slot->buffer, g.block, 0);
    return rc;
}

/* Waits for slot `i`'s op, releases its completion; returns the op's result. */
static int finish(struct slot *slot)
{
    rados_aio_wait_for_complete(slot->completion);
    int rc = rados_aio_get_return_value(slot->completion);
    rados_aio_release(slot->completion);
    slot->completion = NULL;
    return rc;
}

static void usage(void)
{
    fprintf(stderr, "usage: aio_loop -p POOL [-m write|read] [-t 16] [-b 4096] [-s SECONDS]\n"
                    "                [-w oldest|sem] [--prefix PREFIX] [--objects N] [-c CONF] "
                    "[--id NAME]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *pool = NULL, *conf = NULL, *id = "admin", *mode = "write", *wait = "oldest";
    unsigned threads = 16;
    double seconds = 10;
    char default_prefix[96];
    g.block = 4096;
    snprintf(default_prefix, sizeof default_prefix, "aio_loop_%d", (int)getpid());
    g.prefix = default_prefix;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        if (!strcmp(a, "-p"))
            pool = v;
        else if (!strcmp(a, "-m"))
            mode = v;
        else if (!strcmp(a, "-t"))
            threads = (unsigned)atoi(v);
        else if (!strcmp(a, "-b"))
            g.block = (size_t)strtoull(v, NULL, 10);
        else if (!strcmp(a, "-s"))
            seconds = atof(v);
        else if (!strcmp(a, "-w"))
            wait = v;
        else if (!strcmp(a, "--prefix"))
            g.prefix = v;
        else if (!strcmp(a, "--objects"))
            g.objects = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-c"))
            conf = v;
        else if (!strcmp(a, "--id"))
            id = v;
        else
            usage();
        i++;
    }
    g.write = !strcmp(mode, "write");
    bool sem = !strcmp(wait, "sem");
    if (!pool || threads < 1 || g.block < 1 || (!g.write && strcmp(mode, "read")) ||
        (!sem && strcmp(wait, "oldest")) || (!g.write && g.objects == 0)) {
        if (!g.write && g.objects == 0)
            fprintf(stderr, "aio_loop: read needs --objects N (and --prefix of written objects)\n");
        usage();
    }
    g.rng = (uint64_t)getpid() * 0x2545F4914F6CDD1DULL + 1;

    rados_t cluster;
    int rc = rados_create(&cluster, id);
    if (rc == 0)
        rc = rados_conf_read_file(cluster, conf); /* NULL: $CEPH_CONF, then the defaults */
    if (rc == 0)
        rc = rados_conf_parse_env(cluster, NULL);
    if (rc == 0)
        rc = rados_connect(cluster);
    if (rc == 0)
        rc = rados_ioctx_create(cluster, pool, &g.io);
    if (rc < 0) {
        fprintf(stderr, "aio_loop: cannot connect or open pool %s: %s\n", pool, strerror(-rc));
        return 1;
    }

    struct slot *slots = calloc(threads, sizeof *slots);
    g.ring_size = threads;
    g.ring = calloc(threads, sizeof *g.ring);
    sem_init(&g.ready, 0, 0);
    pthread_mutex_init(&g.lock, NULL);
    for (unsigned i = 0; i < threads; i++) {
        slots[i].index = i;
        slots[i].buffer = malloc(g.block);
        for (size_t j = 0; j < g.block; j++) /* cheap non-constant bytes */
            slots[i].buffer[j] = (char)(next_random() >> 56);
    }

    uint64_t ops = 0, errors = 0;
    double cpu0 = cpu_s(), t0 = now_s(), end = t0 + seconds;
    for (unsigned i = 0; i < threads; i++)
        if (submit(&slots[i], sem) < 0)
            return 1;
    unsigned in_flight = threads;
    bool stopping = false;
    if (!sem) {
        unsigned oldest = 0;
        while (in_flight) {
            struct slot *s = &slots[oldest];
            if (!s->completion) { /* drained slot */
                oldest = (oldest + 1) % threads;
                continue;
            }
            if (finish(s) < 0)
                errors++;
            else
                ops++;
            in_flight--;
            if (!stopping && now_s() >= end)
                stopping = true;
            if (!stopping) {
                if (submit(s, false) < 0)
                    return 1;
                in_flight++;
            }
            oldest = (oldest + 1) % threads;
        }
    } else {
        while (in_flight) {
            sem_wait(&g.ready);
            pthread_mutex_lock(&g.lock);
            struct slot *s = &slots[g.ring[g.ring_head++ % g.ring_size]];
            pthread_mutex_unlock(&g.lock);
            int result = rados_aio_get_return_value(s->completion);
            rados_aio_release(s->completion);
            s->completion = NULL;
            if (result < 0)
                errors++;
            else
                ops++;
            in_flight--;
            if (!stopping && now_s() >= end)
                stopping = true;
            if (!stopping) {
                if (submit(s, true) < 0)
                    return 1;
                in_flight++;
            }
        }
    }
    double elapsed = now_s() - t0, loop_cpu = cpu_s() - cpu0;

    rados_ioctx_destroy(g.io);
    rados_shutdown(cluster);
    double cpu = cpu_s();
    printf("mode=%s wait=%s ops=%" PRIu64 " errors=%" PRIu64 " seconds=%.6f ops_per_s=%.1f "
           "cpu_s=%.6f cpu_us_per_op=%.3f loop_cpu_s=%.6f loop_cpu_us_per_op=%.3f "
           "prefix=%s objects_written=%" PRIu64 "\n",
           g.write ? "write" : "read", sem ? "sem" : "oldest", ops, errors, elapsed,
           (double)ops / elapsed, cpu, ops ? cpu * 1e6 / (double)ops : 0, loop_cpu,
           ops ? loop_cpu * 1e6 / (double)ops : 0, g.prefix, g.write ? g.sequence : 0);
    for (unsigned i = 0; i < threads; i++)
        free(slots[i].buffer);
    free(slots);
    free(g.ring);
    return errors ? 3 : 0;
}
