/* SIGINT handling: the first SIGINT asks everything to stop cleanly (Lua code raises an
 * "interrupted" error at its next instruction, event loops wake through an eventfd and drain);
 * a second SIGINT exits at once. */
#ifndef CEPHMARK_INTERRUPT_H
#define CEPHMARK_INTERRUPT_H

#include <lua.h>
#include <stdbool.h>

/* Installs the handler; L is the state whose running code must be stopped. */
int cm_interrupt_install(lua_State *L);
void cm_interrupt_uninstall(void);

/* True once SIGINT has arrived; cheap enough to poll per op. */
bool cm_interrupted(void);

/* An eventfd that becomes readable when SIGINT arrives, for poll()-based loops; -1 if none. */
int cm_interrupt_fd(void);

/* Sleeps up to `seconds`, returning early (and true) if interrupted. */
bool cm_interrupt_sleep(double seconds);

/* Raises the Lua "interrupted" error if SIGINT arrived; C functions that block call this
 * after waking, so the interrupt reaches Lua at once. */
void cm_interrupt_check(lua_State *L);

#endif
