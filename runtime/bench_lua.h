/* One contract for every native bench: a target describes its options in one table
 * (struct cm_option: name, type, default, bounds, where the value goes) and its hooks in a
 * struct cm_bench_def, and one driver runs every bench from a Lua options table: a module
 * registers it with cm_bench_set_functions. From the table come the check of
 * option names with its unknown-name message, the reads into the bench's options struct,
 * the option list a module publishes (`bench_options`), `cephmark help options` and
 * docs/options.md, and the values (defaults included) written into the result. The caller's
 * table is only read.
 *
 * The driver's sequence, with the target's hooks (struct cm_bench_def):
 *   read and check the options          -> prepare (cross-option checks, engine defaults)
 *   read the engine's options           -> open    (memory check, the target: ops, target)
 *   run the engine                      -> after_run (library clean-up, run bookkeeping)
 *   push the result and option values   -> result  (the target's own fields)
 *                                       -> close   (releases the target)
 * Every hook may raise: the driver's state lives in one userdata marked to-be-closed, so an
 * error anywhere releases the per-second callback and calls close, once. */
#ifndef CEPHMARK_BENCH_LUA_H
#define CEPHMARK_BENCH_LUA_H

#include "engine_lua.h"

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cm_option_type {
    CM_OPTION_SIZE,     /* uint64_t: bytes, an integer or "4K" */
    CM_OPTION_DURATION, /* double: seconds, a number or "500ms" */
    CM_OPTION_INTEGER,  /* int64_t, within [min, max] */
    CM_OPTION_BOOL,     /* bool */
    CM_OPTION_STRING,   /* const char *, kept alive by the options table; NULL when absent */
    CM_OPTION_CHOICE,   /* int: the index of the value in `choices` */
    CM_OPTION_TABLE,    /* int: the stack index of the value given, 0 when absent */
    CM_OPTION_FUNCTION, /* int: as TABLE, for a function the bench checks itself */
    CM_OPTION_NUMBER,   /* int: as TABLE, for a number the bench checks itself */
};

/* Flags of an option. */
#define CM_OPTION_NO_RESULT 1u /* not copied into the result (inputs, not settings) */

struct cm_option {
    const char *name;
    enum cm_option_type type;
    size_t offset; /* of the value in the bench's options struct (offsetof) */
    /* The default as a user would write it ("4M", "10", "true", "rand"), read by the same
     * parser as a given value; NULL: none (0, false, NULL, the first choice). */
    const char *fallback;
    int64_t min, max;           /* INTEGER and SIZE: inclusive bounds, when max > min */
    const char *const *choices; /* CHOICE: NULL-terminated */
    unsigned flags;             /* CM_OPTION_* */
    const char *help;           /* one line for `cephmark help options` and the docs */
};

/* A numeric constant as the text of a default: CM_OPTION_TEXT(CM_NET_DEFAULT_PORT). */
#define CM_OPTION_TEXT(x)  CM_OPTION_TEXT_(x)
#define CM_OPTION_TEXT_(x) #x

struct cm_bench;

struct cm_bench_def {
    const char *what;                /* prefixes every message: "bench", "disk.bench" */
    const char *name;                /* the target's name in help and docs: "rados", "disk" */
    const struct cm_option *options; /* terminated by an entry whose name is NULL */
    /* A method's object (pool:bench): checks argument 1 (its type, not closed) and returns
     * it; NULL for a module function (disk.bench), whose options are argument 1. */
    void *(*check_object)(lua_State *L, int arg);
    size_t options_size;      /* sizeof the struct the table fills */
    size_t state_size;        /* sizeof the hooks' own state (zeroed), 0 for none */
    double default_seconds;   /* the engine's bound when none is given */
    unsigned default_threads; /* 0: the engine's 16 */
    /* Optional: checks across options; may change b->defaults before the engine reads its. */
    void (*prepare)(struct cm_bench *b);
    /* Required: after the engine's options (b->config): checks memory, makes the target and
     * sets b->ops and b->target. */
    void (*open)(struct cm_bench *b);
    /* Optional: right after the run, whether it started (rc 0) or not (-errno). */
    void (*after_run)(struct cm_bench *b, int rc);
    /* Optional: adds the target's fields to the result table at the top of the stack. */
    void (*result)(struct cm_bench *b);
    /* Optional: releases what open made; called once whenever open was entered, also after
     * an error, so it copes with a half-made target. */
    void (*close)(struct cm_bench *b);
};

/* The engine's options a target may default differently (cleanup: 256 threads). */
struct cm_bench_defaults {
    unsigned threads;
    double seconds;
    bool ignore_interrupt;
};

struct cm_bench {
    lua_State *L;
    const struct cm_bench_def *def;
    int self;       /* the stack index of the object the bench runs on, 0 for functions */
    void *object;   /* what def->check_object returned, NULL for functions */
    int table;      /* the stack index of the options table */
    void *options;  /* the def's options struct, filled from the table */
    void *state;    /* the hooks' own, def->state_size bytes, zeroed */
    uint64_t given; /* bit i: options[i] was in the table */
    struct cm_bench_defaults defaults;
    struct cm_engine_config config;
    struct cm_engine_lua bridge;
    const struct cm_target_ops *ops;
    void *target;
    struct cm_engine_result result; /* valid in after_run (rc 0) and result */
    int guard;                      /* the stack index of the driver's own userdata */
    bool bridge_open, opened, closed, have_result;
};

/* Whether the option `name` was given. */
bool cm_bench_given(const struct cm_bench *b, const char *name);

/* Keeps the value on top of the stack alive until the bench returns (popping it): strings
 * that the target points at, for instance. */
void cm_bench_keep(struct cm_bench *b);

/* The memory check of a target whose slots hold buffers, before anything is allocated: refuses
 * a run that does not fit cm_memory_available() with one line and exit 2 (cm_memory_fits). */
void cm_bench_check_memory(struct cm_bench *b, uint64_t per_slot, uint64_t per_slot_library,
                           uint64_t shared, const char *buffers, const char *lower);

/* Raises "<what>: <message>" as an operator error (one line, exit 2). */
int cm_bench_raise_world(struct cm_bench *b, const char *message);

/* Result setters: on the table at the top of the stack. */
void cm_result_integer(lua_State *L, const char *key, uint64_t value);
void cm_result_number(lua_State *L, const char *key, double value);
void cm_result_string(lua_State *L, const char *key, const char *value);
void cm_result_bool(lua_State *L, const char *key, bool value);
/* An array of the first `n` strings of `strings`, each `stride` bytes apart. */
void cm_result_strings(lua_State *L, const char *key, const char *strings, size_t stride, size_t n);

/* Publishes a bench's option names, sorted, the engine's included (`bench_options`). */
void cm_bench_push_option_names(lua_State *L, const struct cm_bench_def *def);

/* Sets `bench` (the bench, run by the driver) and `bench_options` in the table at the
 * top of the stack: a module's functions, or a type's methods. */
void cm_bench_set_functions(lua_State *L, const struct cm_bench_def *def);

/* The engine's options, every bench's besides its own (threads, seconds, ops, ...). */
extern const struct cm_option cm_engine_options[];

/* Fills `config` and `bridge` from the engine's options in the table at `index`, with the
 * target's defaults; raises on misuse, naming the option and the value given. */
void cm_bench_engine_config(lua_State *L, int index, const char *what,
                            const struct cm_bench_defaults *defaults,
                            struct cm_engine_config *config, struct cm_engine_lua *bridge);

/* Pushes an option table as a Lua array of {name=, type=, default=, min=, max=, choices=,
 * help=} (the `cephmark.options` module's list, `cephmark help options`). */
void cm_bench_push_option_table(lua_State *L, const struct cm_option *options);

#endif
