/* The Lua host: builds a state with the stdlib and C modules reachable through require,
 * runs code protected with a traceback, and turns errors into messages and exit codes. */
#ifndef CEPHMARK_LSTATE_H
#define CEPHMARK_LSTATE_H

#include <lua.h>
#include <lauxlib.h>
#include <stddef.h>

struct cm_lua_config {
    const char *stdlib_dir;      /* folder overriding the embedded stdlib, or NULL */
    const char *script_dir;      /* the scenario's folder, searched first by require */
    const char *const *lib_dirs; /* -L folders, in order */
    size_t n_lib_dirs;
};

lua_State *cm_lua_new(const struct cm_lua_config *config);
void cm_lua_close(lua_State *L);

/* Calls the function below `nargs` arguments in protected mode with the traceback handler.
 * Returns a Lua status code; on error the error object is left on the stack. */
int cm_lua_docall(lua_State *L, int nargs, int nresults);

/* Pushes a readable message for the error object at `index`: a string or number as it is,
 * a table through its __tostring, else its fields ("error {code = 5}"), and "error nil",
 * "error true" for the other values error() accepts. */
const char *cm_lua_error_text(lua_State *L, int index);

/* Prints the error object on top of the stack and returns the exit code it stands for. */
int cm_lua_report(lua_State *L, int status);

/* Raises an error meant for the operator, not the developer: it prints as one line
 * "cephmark: message" without a traceback, and the process exits with exit_code. */
int cm_error_user(lua_State *L, int exit_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* Pushes the user-error object without raising it. */
void cm_push_user_error(lua_State *L, int exit_code, const char *message);

/* Makes the metatable `name` of a handle type (STYLE: one per type, built once): methods as
 * __index, `close` as __gc and __close (one idempotent close), `tostring` (may be NULL) as
 * __tostring. Leaves the metatable on the stack. */
void cm_lua_new_type(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction close,
                     lua_CFunction tostring);

/* The world failed where the caller may handle it: Lua's `nil, message, code`, as
 * luaL_fileresult gives for files. Pushes nil, the message and `code` (a negative errno, or
 * an HTTP status); returns 3, for `return cm_lua_failure(...)`. */
int cm_lua_failure(lua_State *L, lua_Integer code, const char *message);
/* The same for an errno: the message is "<what>: <strerror(-rc)>" and the code rc (< 0). */
int cm_lua_errno_failure(lua_State *L, int rc, const char *what);

#endif
