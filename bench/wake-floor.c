/* bench/wake-floor.c: the floor under a scheduled start on one machine, without cephmark,
 * Ceph or the network: PROCS processes each sleep until one shared instant of
 * CLOCK_MONOTONIC (clock_nanosleep TIMER_ABSTIME, timer slack 1 ns, as the engine's
 * start_at wait) and read the clock as they wake, ROUNDS times 0.3 s apart, while HOGS
 * processes spin on the CPU (the load an agent's start competes with on a host shared
 * with OSDs and other agents). Prints, over the rounds, the median and the max of each
 * round's latest wake-up after the instant, in ms (docs/performance.md, section 22). With
 * "realtime" the wakers sleep at SCHED_FIFO priority 1 (root or CAP_SYS_NICE).
 * usage: make -C bench && bench/build/wake-floor PROCS ROUNDS HOGS [realtime] */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUND_GAP_NS  300000000ULL
#define FIRST_LEAD_NS 200000000ULL
#define MAX_ROUNDS    1000

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

/* One waker: for each round, sleeps until its instant and writes "round lateness_ns". */
static void waker(int out, unsigned long long base, int rounds, int realtime)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    struct sched_param fifo = {.sched_priority = 1};
    if (realtime && sched_setscheduler(0, SCHED_FIFO, &fifo) != 0) {
        perror("wake-floor: SCHED_FIFO");
        _exit(1);
    }
    for (int r = 0; r < rounds; r++) {
        unsigned long long at = base + (unsigned long long)r * ROUND_GAP_NS;
        struct timespec ts = {.tv_sec = (time_t)(at / 1000000000ULL),
                              .tv_nsec = (long)(at % 1000000000ULL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
            ;
        unsigned long long late = now_ns() - at;
        char line[64];
        int n = snprintf(line, sizeof line, "%d %llu\n", r, late);
        if (write(out, line, (size_t)n) != n)
            _exit(1);
    }
    _exit(0);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int procs = argc > 1 ? atoi(argv[1]) : 24;
    int rounds = argc > 2 ? atoi(argv[2]) : 30;
    int hogs = argc > 3 ? atoi(argv[3]) : 0;
    int realtime = argc > 4 && strcmp(argv[4], "realtime") == 0;
    if (argc > 5 || (argc > 4 && !realtime) || procs < 1 || procs > 1024 || rounds < 1 ||
        rounds > MAX_ROUNDS || hogs < 0 || hogs > 64) {
        fprintf(stderr, "usage: wake-floor PROCS(1-1024) ROUNDS(1-%d) HOGS(0-64) [realtime]\n",
                MAX_ROUNDS);
        return 2;
    }
    pid_t hog_pids[64];
    for (int h = 0; h < hogs; h++) {
        if ((hog_pids[h] = fork()) == 0) {
            for (volatile unsigned long spin = 0;; spin++)
                ;
        }
    }
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    unsigned long long base = now_ns() + FIRST_LEAD_NS;
    for (int i = 0; i < procs; i++)
        if (fork() == 0) {
            close(fds[0]);
            waker(fds[1], base, rounds, realtime);
        }
    close(fds[1]);
    static double latest[MAX_ROUNDS];
    FILE *in = fdopen(fds[0], "r");
    int r;
    unsigned long long late;
    while (in && fscanf(in, "%d %llu", &r, &late) == 2)
        if (r >= 0 && r < rounds && late / 1e6 > latest[r])
            latest[r] = late / 1e6;
    for (int h = 0; h < hogs; h++)
        kill(hog_pids[h], SIGKILL);
    while (wait(NULL) > 0)
        ;
    qsort(latest, (size_t)rounds, sizeof latest[0], by_value);
    printf("procs %d hogs %d rounds %d%s: latest wake-up after the instant, median %.2f ms, "
           "max %.2f ms\n",
           procs, hogs, rounds, realtime ? " realtime" : "", latest[rounds / 2],
           latest[rounds - 1]);
    return 0;
}
