/* bench/access-picks.c: the cost of one pick of each access distribution
 * (runtime/distrib.c) on its own, without the engine: the best of 15 runs of 2 million
 * picks over 10^7 objects, in process CPU time, one pick at a time (cm_access_pick) and
 * from a batched stream (cm_access_next, what the targets use), with a check that both
 * give the same sequence (docs/performance.md, section 19).
 * usage: make -C bench && bench/build/access-picks */
#define _POSIX_C_SOURCE 200809L
#include "distrib.h"

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The best time per pick of one way of picking, over RUNS runs. */
static double time_picks(const struct cm_access *access, bool stream, int runs, int picks,
                         uint64_t *checksum)
{
    double best = 1e9;
    for (int run = 0; run < runs; run++) {
        uint64_t rng = (uint64_t)run + 1, sum = 0;
        struct cm_access_stream s;
        cm_access_stream_init(&s, access, rng);
        double start = cpu_seconds();
        if (stream)
            for (int k = 0; k < picks; k++)
                sum += cm_access_next(&s);
        else
            for (int k = 0; k < picks; k++)
                sum += cm_access_pick(access, &rng);
        double ns = (cpu_seconds() - start) / picks * 1e9;
        if (ns < best)
            best = ns;
        checksum[run] = sum;
    }
    return best;
}

int main(void)
{
    const char *specs[] = {"uniform", "zipf:0.99", "zipf:1.2", "pareto:0.2", "hotspot:10/90"};
    enum { SPECS = sizeof specs / sizeof specs[0], PICKS = 2000000, RUNS = 15 };
    printf("%-14s %9s %9s\n", "access", "one (ns)", "stream (ns)");
    for (int i = 0; i < SPECS; i++) {
        struct cm_access_spec spec;
        struct cm_access access;
        char error[256];
        if (cm_access_parse(specs[i], &spec, error, sizeof error) < 0 ||
            cm_access_init(&access, &spec, 10000000, 1) < 0) {
            fprintf(stderr, "%s: cannot make the chooser\n", specs[i]);
            return 1;
        }
        uint64_t one_sums[RUNS], stream_sums[RUNS];
        double one = time_picks(&access, false, RUNS, PICKS, one_sums);
        double stream = time_picks(&access, true, RUNS, PICKS, stream_sums);
        cm_access_fini(&access);
        for (int run = 0; run < RUNS; run++)
            if (one_sums[run] != stream_sums[run]) {
                fprintf(stderr, "%s: the stream's picks differ from cm_access_pick's\n", specs[i]);
                return 1;
            }
        printf("%-14s %9.1f %9.1f\n", specs[i], one, stream);
    }
    return 0;
}
