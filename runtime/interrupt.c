/* SIGINT handling for the whole process; see interrupt.h for the contract. */
#include "interrupt.h"
#include "exitcode.h"
#include "lstate.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupt_count;
static int interrupt_eventfd = -1;
static lua_State *interrupt_state;
static struct sigaction previous_action;

/* The hook runs at the next Lua instruction after SIGINT, where raising is safe. It removes
 * itself first so that cleanup code (restoring config, deleting pools) can run. */
static void interrupt_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    cm_push_user_error(L, CM_EXIT_INTERRUPTED, "interrupted");
    lua_error(L);
}

/* Only async-signal-safe work here: a flag, an eventfd write and lua_sethook (which Lua
 * documents as safe to call from a signal handler, as lua.c does). */
static void interrupt_handler(int signo)
{
    (void)signo;
    if (interrupt_count++ > 0) {
        static const char message[] = "\ncephmark: second interrupt, exiting now\n";
        ssize_t unused = write(STDERR_FILENO, message, sizeof message - 1);
        (void)unused;
        _exit(CM_EXIT_INTERRUPTED);
    }
    if (interrupt_eventfd >= 0) {
        uint64_t one = 1;
        ssize_t unused = write(interrupt_eventfd, &one, sizeof one);
        (void)unused;
    }
    if (interrupt_state)
        lua_sethook(interrupt_state, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

int cm_interrupt_install(lua_State *L)
{
    struct sigaction action = {0};
    if (interrupt_eventfd < 0)
        interrupt_eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    interrupt_state = L;
    action.sa_handler = interrupt_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(SIGINT, &action, &previous_action);
}

void cm_interrupt_uninstall(void)
{
    sigaction(SIGINT, &previous_action, NULL);
    interrupt_state = NULL;
}

bool cm_interrupted(void)
{
    return interrupt_count > 0;
}

int cm_interrupt_fd(void)
{
    return interrupt_eventfd;
}

bool cm_interrupt_sleep(double seconds)
{
    struct pollfd pfd = {.fd = interrupt_eventfd, .events = POLLIN};
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!cm_interrupted()) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double elapsed = (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
        double left = seconds - elapsed;
        if (left <= 0)
            return false;
        int timeout_ms = (int)ceil(left * 1000.0);
        if (interrupt_eventfd < 0) {
            struct timespec ts = {.tv_sec = (time_t)left,
                                  .tv_nsec = (long)((left - (time_t)left) * 1e9)};
            nanosleep(&ts, NULL);
            continue;
        }
        if (poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR)
            return false;
    }
    return true;
}

void cm_interrupt_check(lua_State *L)
{
    if (cm_interrupted()) {
        lua_sethook(L, NULL, 0, 0);
        cm_push_user_error(L, CM_EXIT_INTERRUPTED, "interrupted");
        lua_error(L);
    }
}
