/* The engine's Lua side, shared by every target module: reading the common bench options
 * (threads, seconds, ops, bytes, rate, warmup) from a Lua table with clear errors, calling
 * a Lua per-second callback safely from inside the loop, and turning results into tables. */
#ifndef CEPHMARK_ENGINE_LUA_H
#define CEPHMARK_ENGINE_LUA_H

#include "engine.h"

#include <lua.h>
#include <stdbool.h>
#include <stdint.h>

/* The per-second bridge: holds the Lua callback; an error inside it stops the run and is
 * re-raised by cm_engine_lua_finish once every op has drained. */
struct cm_engine_lua {
    lua_State *L;
    int callback_ref;       /* LUA_NOREF when there is none */
    int error_ref;          /* the callback's error, LUA_NOREF when none */
    bool stop_on_interrupt; /* not ignore_interrupt: the callback is stopped by a signal */
    /* second_histograms = true: each second's table carries `hist`, the encoding of the
     * second's latency histogram (absent for a second without completions) */
    bool second_histograms;
};

/* Fills `config` from the options table at `index`. Raises on misuse (wrong types, t=0,
 * rate 0, bad sizes or durations), naming the option and the value given. `what` prefixes
 * messages, e.g. "bench". Bounds default to `default_seconds` when none is given. */
void cm_engine_lua_config(lua_State *L, int index, const char *what, double default_seconds,
                          struct cm_engine_config *config, struct cm_engine_lua *bridge);

/* The per-second callback part of cm_engine_lua_config: on_second of the table at `index`. */
void cm_engine_lua_bridge(lua_State *L, int index, const char *what,
                          struct cm_engine_config *config, struct cm_engine_lua *bridge);

/* Memory this machine can give a run now, in bytes: MemAvailable from /proc/meminfo, or
 * what the process's cgroup (v2) still allows when that is less; 0 when unknown. */
uint64_t cm_memory_available(void);

/* Whether `slots` buffers of `per_slot` bytes (and `per_slot_library` more per slot that a
 * library holds for each op in flight, e.g. librados's receive buffer) plus `shared` bytes
 * fit in `available` bytes with a margin: a run may take 7/8 of it, the rest is for the
 * libraries, the Lua state and the page cache. When not, writes one sentence into `message`:
 * "65536 slots x 64 MiB = 4 TiB of read buffers (8 TiB with the library's own), more than
 * the 21.3 GiB this machine has available; <lower>". `buffers` names them ("read
 * buffers"); `available` 0 (unknown) always fits. */
bool cm_memory_fits(uint64_t slots, uint64_t per_slot, uint64_t per_slot_library, uint64_t shared,
                    uint64_t available, const char *buffers, const char *lower, char *message,
                    size_t message_size);

/* Releases the bridge's references without raising (after an error elsewhere). */
void cm_engine_lua_release(struct cm_engine_lua *bridge);

/* Releases the bridge's references; raises the callback's error if it failed. */
void cm_engine_lua_finish(struct cm_engine_lua *bridge);

/* Pushes the result as a table (see docs/dsl.md for the fields). The encoded latency
 * histogram (hist.h) stays attached to the table, outside it: see push_histogram. */
void cm_engine_lua_push_result(lua_State *L, const struct cm_engine_result *result,
                               const struct cm_engine_config *config);

/* Pushes the encoded latency histogram of the result table at `result` (a string), or nil
 * for any other value; returns whether there was one. Exact merges of results from several
 * clients start from these (cephmark.control.merge_histograms). */
int cm_engine_lua_push_histogram(lua_State *L, int result);

/* Pushes a latency table (count, avg, p50 ... p99.99, fio's percentile list) of `hist`. */
void cm_engine_lua_push_latency(lua_State *L, const cm_hist *hist);

/* Option readers shared by target modules: sizes accept integers and "4K"-style strings. */
uint64_t cm_lua_opt_size(lua_State *L, int table, const char *key, uint64_t fallback,
                         const char *what);
double cm_lua_opt_duration(lua_State *L, int table, const char *key, double fallback,
                           const char *what);
lua_Integer cm_lua_opt_integer(lua_State *L, int table, const char *key, lua_Integer fallback,
                               lua_Integer min, lua_Integer max, const char *what);
int cm_lua_opt_bool(lua_State *L, int table, const char *key, int fallback, const char *what);
const char *cm_lua_opt_string(lua_State *L, int table, const char *key, const char *fallback,
                              const char *what);
/* One of `choices` (NULL-terminated) by name, as its index; choices[fallback] when the key
 * is absent. Anything else raises "<what>: unknown <key> '<value>' (expected <expected>)". */
int cm_lua_opt_choice(lua_State *L, int table, const char *key, const char *const *choices,
                      int fallback, const char *expected, const char *what);
/* Raises "<what>: unknown option '<key>' (expected one of ...)" for any key of the options
 * table that is not in `own` (NULL-terminated, may be NULL) or, when `engine` is true, one
 * of the engine's own (threads, seconds, ops, bytes, rate, warmup, drain_timeout,
 * ignore_interrupt, on_second). A misspelt option is an error, never a silent default. */
void cm_lua_check_options(lua_State *L, int table, const char *what, const char *const *own,
                          bool engine);

/* Pushes, as a sorted Lua array, the option names that cm_lua_check_options accepts with the
 * same `own` and `engine` (names starting with "__" left out). A module publishes its bench's
 * list this way (`bench_options`), so that a scenario checks a phase's options when the phase
 * is called, before anything runs, from the one list the bench itself checks against. */
void cm_lua_push_option_names(lua_State *L, const char *const *own, bool engine);

#endif
