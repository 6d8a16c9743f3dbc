/* Stop signals, the Lua watchdog hook and os.exit for the whole process; see interrupt.h
 * for the contract. */
#include "interrupt.h"
#include "exitcode.h"
#include "lstate.h"

#include <errno.h>
#include <lauxlib.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* Instructions between two runs of the watchdog. The hook's own cost is paid once per
 * WATCH_COUNT instructions; what a count hook costs per instruction (Lua's trap path) does
 * not depend on it (docs/performance.md, "The watchdog hook"). */
#define WATCH_COUNT 1000

/* Written by the signal handler, which may run on any thread (librados starts many), so
 * these are lock-free atomics rather than plain flags. */
static atomic_int interrupt_count;
static atomic_int interrupt_signo;
static atomic_int interrupt_pending; /* the hook has yet to deliver the interrupt */
static int interrupt_eventfd = -1;

/* Changed by the Lua thread only; atomic because an engine's watchdog thread reads it
 * (through cm_interrupt_fd). */
static atomic_int hold_depth;

/* Owned by the Lua thread. */
static struct cm_interrupt_arming arming = {.deadline_ns = UINT64_MAX};
static bool exit_pending;
static int exit_code_requested;

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP_SIGNALS (sizeof stop_signals / sizeof stop_signals[0])
static struct sigaction previous_actions[N_STOP_SIGNALS];
static bool installed[N_STOP_SIGNALS];

/* Tags of the error objects this unit raises, next to the user-error fields. */
static const char deadline_tag[] = "cephmark.deadline";
static const char exit_tag[] = "cephmark.exit";

static const char *signal_name(int signo)
{
    switch (signo) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    default:
        return NULL;
    }
}

static void write_stderr(const char *text)
{
    ssize_t unused = write(STDERR_FILENO, text, strlen(text));
    (void)unused;
}

/* Only async-signal-safe work here: atomics, write() and _exit(). The handler does not touch
 * the Lua state: it may run on a library's thread while Lua runs on the main one, and the
 * watchdog hook sees the flag within WATCH_COUNT instructions. */
static void stop_handler(int signo)
{
    /* the first signal's number is in place before anyone can see the count change */
    int none = 0;
    atomic_compare_exchange_strong(&interrupt_signo, &none, signo);
    if (atomic_fetch_add(&interrupt_count, 1) > 0) {
        if (signo == SIGINT) {
            write_stderr("\ncephmark: second interrupt, exiting now\n");
        } else {
            write_stderr("\ncephmark: second interrupt (");
            write_stderr(signal_name(signo));
            write_stderr("), exiting now\n");
        }
        _exit(128 + signo);
    }
    atomic_store(&interrupt_pending, 1);
    if (interrupt_eventfd >= 0) {
        uint64_t one = 1;
        ssize_t unused = write(interrupt_eventfd, &one, sizeof one);
        (void)unused;
    }
}

int cm_interrupt_install(lua_State *L)
{
    (void)L;
    if (interrupt_eventfd < 0)
        interrupt_eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct sigaction action = {0};
    action.sa_handler = stop_handler;
    sigemptyset(&action.sa_mask);
    /* one handler at a time: a second signal exits from its own run of the handler */
    for (size_t i = 0; i < N_STOP_SIGNALS; i++)
        sigaddset(&action.sa_mask, stop_signals[i]);
    action.sa_flags = SA_RESTART;
    int rc = 0;
    for (size_t i = 0; i < N_STOP_SIGNALS; i++) {
        struct sigaction current;
        if (sigaction(stop_signals[i], NULL, &current) < 0) {
            rc = -1;
            continue;
        }
        /* nohup asks for SIGHUP to be ignored: keep it so */
        if (stop_signals[i] == SIGHUP && current.sa_handler == SIG_IGN)
            continue;
        if (sigaction(stop_signals[i], &action, &previous_actions[i]) < 0) {
            rc = -1;
            continue;
        }
        installed[i] = true;
    }
    /* for the rest of the process: exit() flushes stdout after uninstall */
    struct sigaction ignore = {0};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    if (sigaction(SIGPIPE, &ignore, NULL) < 0)
        rc = -1;
    return rc;
}

void cm_interrupt_uninstall(void)
{
    for (size_t i = 0; i < N_STOP_SIGNALS; i++) {
        if (installed[i])
            sigaction(stop_signals[i], &previous_actions[i], NULL);
        installed[i] = false;
    }
}

bool cm_interrupted(void)
{
    return atomic_load_explicit(&interrupt_count, memory_order_relaxed) > 0;
}

int cm_interrupt_signal(void)
{
    return cm_interrupted() ? atomic_load(&interrupt_signo) : 0;
}

const char *cm_interrupt_signal_name(void)
{
    return signal_name(cm_interrupt_signal());
}

int cm_interrupt_exit_status(int code)
{
    int signo = cm_interrupt_signal();
    if (signo == 0)
        return code;
    /* a command that ended "well" with the interrupt still undelivered (a server loop that
     * stops on the signal and returns) was stopped by it all the same */
    if (code == CM_EXIT_INTERRUPTED || (code == CM_EXIT_OK && atomic_load(&interrupt_pending)))
        return 128 + signo;
    return code;
}

void cm_interrupt_hold(void)
{
    atomic_fetch_add(&hold_depth, 1);
}

void cm_interrupt_release(void)
{
    if (atomic_load(&hold_depth) > 0)
        atomic_fetch_sub(&hold_depth, 1);
}

bool cm_interrupt_held(void)
{
    return atomic_load_explicit(&hold_depth, memory_order_relaxed) > 0;
}

bool cm_interrupt_should_stop(void)
{
    return cm_interrupted() && !cm_interrupt_held();
}

int cm_interrupt_fd(void)
{
    return cm_interrupt_held() ? -1 : interrupt_eventfd;
}

bool cm_interrupt_sleep(double seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!cm_interrupt_should_stop()) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double elapsed =
            (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
        double left = seconds - elapsed;
        if (left <= 0)
            return false;
        int fd = cm_interrupt_fd();
        if (fd < 0) {
            struct timespec ts = {.tv_sec = (time_t)left,
                                  .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, (int)ceil(left * 1000.0)) < 0 && errno != EINTR)
            return false;
    }
    return true;
}

void cm_interrupt_withdraw(void)
{
    atomic_store(&interrupt_pending, 0);
}

struct cm_interrupt_arming cm_interrupt_arm(uint64_t deadline_ns, bool stop_on_interrupt)
{
    struct cm_interrupt_arming previous = arming;
    arming = (struct cm_interrupt_arming){
        .deadline_ns = deadline_ns, .stop_on_interrupt = stop_on_interrupt, .armed = true};
    return previous;
}

void cm_interrupt_disarm(struct cm_interrupt_arming previous)
{
    arming = previous;
}

static bool has_tag(lua_State *L, int index, const char *tag)
{
    if (!lua_istable(L, index))
        return false;
    bool found = lua_getfield(L, index, tag) != LUA_TNIL;
    lua_pop(L, 1);
    return found;
}

bool cm_interrupt_is_error(lua_State *L, int index)
{
    index = lua_absindex(L, index);
    if (!has_tag(L, index, "cephmark.user_error"))
        return false;
    lua_getfield(L, index, "exit_code");
    lua_getfield(L, index, "message");
    bool is = lua_tointeger(L, -2) == CM_EXIT_INTERRUPTED && lua_type(L, -1) == LUA_TSTRING &&
              strcmp(lua_tostring(L, -1), "interrupted") == 0;
    lua_pop(L, 2);
    return is;
}

bool cm_interrupt_is_deadline(lua_State *L, int index)
{
    return has_tag(L, index, deadline_tag);
}

bool cm_interrupt_is_exit(lua_State *L, int index)
{
    return has_tag(L, index, exit_tag);
}

bool cm_exit_requested(int *code)
{
    if (exit_pending && code)
        *code = exit_code_requested;
    return exit_pending;
}

static int raise_interrupt(lua_State *L)
{
    cm_push_user_error(L, CM_EXIT_INTERRUPTED, "interrupted");
    return lua_error(L);
}

static int raise_exit(lua_State *L)
{
    char message[48];
    snprintf(message, sizeof message, "os.exit(%d)", exit_code_requested);
    cm_push_user_error(L, exit_code_requested, message);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, exit_tag);
    return lua_error(L);
}

static int raise_deadline(lua_State *L)
{
    cm_push_user_error(L, CM_EXIT_USAGE,
                       "stopped at the phase's deadline: the worker ran without yielding");
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, deadline_tag);
    return lua_error(L);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Runs every WATCH_COUNT instructions in every thread. Raising from a count hook is safe:
 * the error unwinds from the instruction the thread was about to run. */
static void watch_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (lua_gethookcount(L) != WATCH_COUNT) /* os.exit asked for the next instruction */
        lua_sethook(L, watch_hook, LUA_MASKCOUNT, WATCH_COUNT);
    if (cm_interrupt_held())
        return;
    if (exit_pending)
        raise_exit(L);
    if (arming.armed) {
        if (arming.stop_on_interrupt && cm_interrupted()) {
            atomic_store(&interrupt_pending, 0);
            raise_interrupt(L);
        }
        if (arming.deadline_ns != UINT64_MAX && now_ns() >= arming.deadline_ns)
            raise_deadline(L);
    }
    if (atomic_load_explicit(&interrupt_pending, memory_order_relaxed) &&
        atomic_exchange(&interrupt_pending, 0))
        raise_interrupt(L);
}

void cm_interrupt_check(lua_State *L)
{
    if (cm_interrupt_held())
        return;
    if (exit_pending)
        raise_exit(L);
    if (cm_interrupted()) {
        atomic_store(&interrupt_pending, 0);
        raise_interrupt(L);
    }
}

/* os.exit(code): Lua's own would end the process where it stands, skipping the run's
 * cleanup (config restore, pool deletion, results). This one records the code and raises,
 * so the error unwinds through the cleanup to main, which closes the state (handles are
 * released, output flushed) and exits with the code. */
static int os_exit(lua_State *L)
{
    int code;
    if (lua_isboolean(L, 1))
        code = lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE;
    else
        code = (int)luaL_optinteger(L, 1, EXIT_SUCCESS);
    exit_pending = true;
    exit_code_requested = code;
    /* a pcall around os.exit returns to Lua: the next instruction raises it again */
    lua_sethook(L, watch_hook, LUA_MASKCOUNT, 1);
    return raise_exit(L);
}

void cm_interrupt_watch(lua_State *L)
{
    lua_sethook(L, watch_hook, LUA_MASKCOUNT, WATCH_COUNT);
    lua_getglobal(L, "os");
    if (lua_istable(L, -1)) {
        lua_pushcfunction(L, os_exit);
        lua_setfield(L, -2, "exit");
    }
    lua_pop(L, 1);
}
