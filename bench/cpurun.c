/* cpurun: runs a command and appends its CPU use (whole process tree it waited for: user and
 * system seconds, microsecond resolution, from wait4's rusage) and wall time to a file, so
 * the bench/ scripts can compare client CPU per op without /usr/bin/time's 10 ms rounding.
 * usage: cpurun OUTFILE COMMAND [ARGS...]   OUTFILE gets
 * "user_s sys_s wall_s maxrss_kib voluntary_csw involuntary_csw\n" (context switches of all threads);
 * the command's stdout/stderr pass through and cpurun exits with its status.
 * $CPURUN_TIMEOUT (seconds, default 0 = none): the command is killed (TERM, then KILL 5 s
 * later) when it runs longer, and cpurun exits 124, so a hung cluster cannot hang a benchmark. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
    (void)sig;
    timed_out++;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cpurun OUTFILE COMMAND [ARGS...]\n");
        return 2;
    }
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("cpurun: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror("cpurun: exec");
        _exit(127);
    }
    const char *limit = getenv("CPURUN_TIMEOUT");
    unsigned timeout = limit ? (unsigned)atoi(limit) : 0;
    if (timeout) {
        struct sigaction sa = {.sa_handler = on_alarm};
        sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART: wait4 returns EINTR */
        alarm(timeout);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("cpurun: wait4");
            return 2;
        }
        if (timed_out == 1) {
            fprintf(stderr, "cpurun: %s ran longer than %u s: killed\n", argv[2], timeout);
            kill(pid, SIGTERM);
            alarm(5);
        } else if (timed_out > 1) {
            kill(pid, SIGKILL);
        }
    }
    double wall = now_s() - t0;
    FILE *out = fopen(argv[1], "a");
    if (!out) {
        perror("cpurun: output file");
        return 2;
    }
    fprintf(out, "%.6f %.6f %.6f %ld %ld %ld\n", (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
            (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, wall, ru.ru_maxrss, ru.ru_nvcsw,
            ru.ru_nivcsw);
    fclose(out);
    if (timed_out)
        return 124;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
