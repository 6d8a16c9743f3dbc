/* bench/access-picks.c: the cost of one pick of each access distribution
 * (runtime/distrib.c) on its own, without the engine: the best of 15 runs of 2 million
 * picks over 10^7 objects, in process CPU time (docs/performance.md, section 19).
 * usage: make -C bench && bench/build/access-picks */
#define _POSIX_C_SOURCE 200809L
#include "distrib.h"

#include <stdio.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
    const char *specs[] = {"uniform", "zipf:0.99", "zipf:1.2", "pareto:0.2", "hotspot:10/90"};
    enum { SPECS = sizeof specs / sizeof specs[0], PICKS = 2000000, RUNS = 15 };
    double best[SPECS];
    uint64_t checksum = 0;
    for (int i = 0; i < SPECS; i++)
        best[i] = 1e9;
    for (int run = 0; run < RUNS; run++)
        for (int i = 0; i < SPECS; i++) {
            struct cm_access_spec spec;
            struct cm_access access;
            char error[256];
            if (cm_access_parse(specs[i], &spec, error, sizeof error) < 0 ||
                cm_access_init(&access, &spec, 10000000, 1) < 0) {
                fprintf(stderr, "%s: cannot make the chooser\n", specs[i]);
                return 1;
            }
            uint64_t rng = (uint64_t)run + 1;
            double start = cpu_seconds();
            for (int k = 0; k < PICKS; k++)
                checksum += cm_access_pick(&access, &rng);
            double ns = (cpu_seconds() - start) / PICKS * 1e9;
            if (ns < best[i])
                best[i] = ns;
            cm_access_fini(&access);
        }
    for (int i = 0; i < SPECS; i++)
        printf("%-14s %5.1f ns per pick\n", specs[i], best[i]);
    printf("(checksum %llu)\n", (unsigned long long)checksum);
    return 0;
}
