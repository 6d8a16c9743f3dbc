/* Stop signals and the Lua watchdog for the whole process.
 *
 * SIGINT, SIGTERM and SIGHUP stop a run the same way: the first one asks everything to stop
 * cleanly (Lua code raises an "interrupted" error, event loops wake through an eventfd and
 * drain, the run's cleanup then restores config and deletes what it created); a second one
 * of any of them exits at once. SIGPIPE is ignored, so output to a closed pipe fails
 * quietly and the run still cleans up. The exit code of an interrupted command is 128 + the
 * first signal's number, as a shell reports a process killed by it.
 *
 * Lua code sees the stop through a count hook installed on the main state before any
 * coroutine exists, which every thread inherits (lua_newthread copies the hook): busy loops
 * in coroutines, scripted workers and per-second callbacks all reach it. The same hook
 * stops a scripted worker that runs past its phase's deadline without yielding, and makes
 * os.exit inside a run leave through the run's cleanup. */
#ifndef CEPHMARK_INTERRUPT_H
#define CEPHMARK_INTERRUPT_H

#include <lua.h>
#include <stdbool.h>
#include <stdint.h>

/* Installs the signal handlers (SIGINT, SIGTERM, SIGHUP unless it was ignored, as under
 * nohup) and ignores SIGPIPE; L is the main state of the command. */
int cm_interrupt_install(lua_State *L);
void cm_interrupt_uninstall(void);

/* Installs the watchdog hook on a new state (before it creates any coroutine) and replaces
 * os.exit with one that raises an exit request (cm_exit_requested). */
void cm_interrupt_watch(lua_State *L);

/* True once a stop signal has arrived; cheap enough to poll per op. */
bool cm_interrupted(void);

/* The first stop signal's number and name ("SIGTERM"), 0 / NULL before one came. */
int cm_interrupt_signal(void);
const char *cm_interrupt_signal_name(void);

/* A command's exit code as the process reports it: CM_EXIT_INTERRUPTED (130, what the Lua
 * side uses for any interrupt) becomes 128 + the signal that stopped it, and so does
 * success when the interrupt was never delivered (a loop stopped by it and returned). */
int cm_interrupt_exit_status(int code);

/* An eventfd that becomes readable when a stop signal arrives, for poll()-based loops; -1
 * if none, and -1 inside a held section (nothing there is to be woken by it). */
int cm_interrupt_fd(void);

/* Sleeps up to `seconds`, returning early (and true) if a blocking call should give up. */
bool cm_interrupt_sleep(double seconds);

/* Whether a blocking call should give up now: a stop signal came and the code is not in a
 * held section (the cleanup the interrupt starts). */
bool cm_interrupt_should_stop(void);

/* Raises the Lua "interrupted" error if cm_interrupt_should_stop(); C functions that block
 * call this after waking, so the interrupt reaches Lua at once. Raises a pending exit
 * request (os.exit) the same way. */
void cm_interrupt_check(lua_State *L);

/* Held sections: while held, neither the watchdog nor cm_interrupt_check raise, so a
 * message handler and the cleanup that an interrupt starts run to their end. Nestable. */
void cm_interrupt_hold(void);
void cm_interrupt_release(void);
bool cm_interrupt_held(void);

/* The interrupt error is delivered to Lua once, at the first instruction after the signal.
 * A loop that stopped by itself and returns a result marked interrupted withdraws it, so
 * it does not fire while the caller handles that result (it comes back at the next
 * cm_interrupt_check). */
void cm_interrupt_withdraw(void);

/* A scripted worker's resumption: until disarmed, the watchdog raises in the running
 * thread once `deadline_ns` (CLOCK_MONOTONIC, UINT64_MAX: none) has passed, and, when
 * `stop_on_interrupt`, on every check after a stop signal (a worker that catches the
 * error and loops on is stopped again). Returns the previous arming, to restore. */
struct cm_interrupt_arming {
    uint64_t deadline_ns;
    bool stop_on_interrupt;
    bool armed;
};
struct cm_interrupt_arming cm_interrupt_arm(uint64_t deadline_ns, bool stop_on_interrupt);
void cm_interrupt_disarm(struct cm_interrupt_arming previous);

/* What an error object at `index` is: the interrupt (exit code 130, "interrupted"), the
 * deadline stop of an armed worker, or an exit request from os.exit. */
bool cm_interrupt_is_error(lua_State *L, int index);
bool cm_interrupt_is_deadline(lua_State *L, int index);
bool cm_interrupt_is_exit(lua_State *L, int index);

/* os.exit(code) inside Lua: true and the code once it was called (it is then raised again
 * at every check until the command ends, so a pcall cannot swallow it). */
bool cm_exit_requested(int *code);

#endif
