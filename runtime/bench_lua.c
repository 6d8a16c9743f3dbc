/* The shared bench driver and declarative options; see bench_lua.h. */
#include "bench_lua.h"
#include "exitcode.h"
#include "interrupt.h"
#include "lstate.h"
#include "units.h"

#include <inttypes.h>
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the engine's options ---------------------------------------------------------------- */

/* What the engine's table fills; cm_bench_engine_config turns it into a cm_engine_config. */
struct engine_values {
    int64_t threads;
    double seconds;
    int64_t ops;
    uint64_t bytes;
    double warmup;
    double drain_timeout;
    bool ignore_interrupt;
    int arrivals;
    int64_t arrivals_seed;
    double think;
};

static const char *const arrival_choices[] = {"uniform", "poisson", NULL};

#define ENGINE_FIELD(field) offsetof(struct engine_values, field)

/* The engine writes threads and rate (open loop) into the result itself; the others are
 * bounds and hooks. rate, start_at, on_second and second_histograms are read by hand (a
 * positive number, an instant, a function, the per-second bridge's flag): they are listed
 * so that the check, the lists and the docs know them; their offset is unused. */
const struct cm_option cm_engine_options[] = {
    {"arrivals", CM_OPTION_CHOICE, ENGINE_FIELD(arrivals), "uniform", 0, 0, arrival_choices, 0,
     "open loop (with rate): intended starts evenly 1/rate apart, or a Poisson process "
     "(exponential gaps of mean 1/rate, as fio's rate_process=poisson)"},
    {"arrivals_seed", CM_OPTION_INTEGER, ENGINE_FIELD(arrivals_seed), "1", 1, INT64_MAX, NULL, 0,
     "seed of the Poisson arrivals' schedule (the same seed, the same intended starts)"},
    {"bytes", CM_OPTION_SIZE, ENGINE_FIELD(bytes), NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "stop starting ops after this many bytes (0: no byte bound)"},
    {"drain_timeout", CM_OPTION_DURATION, ENGINE_FIELD(drain_timeout), "60", 0, 0, NULL,
     CM_OPTION_NO_RESULT, "after stopping, wait at most this long for ops in flight"},
    {"ignore_interrupt", CM_OPTION_BOOL, ENGINE_FIELD(ignore_interrupt), "false", 0, 0, NULL,
     CM_OPTION_NO_RESULT, "keep going after SIGINT (a cleanup after an interrupted phase)"},
    {"on_second", CM_OPTION_FUNCTION, 0, NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "function(second) called once per second; returning false stops the run"},
    {"ops", CM_OPTION_INTEGER, ENGINE_FIELD(ops), "0", 0, INT64_MAX, NULL, CM_OPTION_NO_RESULT,
     "stop after starting this many ops (0: no op bound)"},
    {"rate", CM_OPTION_NUMBER, 0, NULL, 0, 0, NULL, 0,
     "open loop: start this many ops per second (latency corrected for coordinated omission)"},
    {"second_histograms", CM_OPTION_BOOL, 0, "false", 0, 0, NULL, CM_OPTION_NO_RESULT,
     "on_second's table also carries `hist`, the second's encoded latency histogram (what "
     "an agent sends so that the coordinator merges each second exactly)"},
    {"seconds", CM_OPTION_DURATION, ENGINE_FIELD(seconds), NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "stop starting ops after this long (the target's default when no bound is given)"},
    {"start_at", CM_OPTION_NUMBER, 0, NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "start the clock and the first op at this instant of sys.monotonic() (seconds), once "
     "the target is ready; at most 60 s ahead; an instant past starts at once (the result's "
     "start_late says by how much)"},
    {"think", CM_OPTION_DURATION, ENGINE_FIELD(think), "0", 0, 0, NULL, 0,
     "closed loop: each slot waits this long after a completion before its next op (not in "
     "the latency; not with rate)"},
    {"threads", CM_OPTION_INTEGER, ENGINE_FIELD(threads), "16", 1, 65536, NULL, CM_OPTION_NO_RESULT,
     "ops in flight (rados bench -t); the target may default otherwise"},
    {"warmup", CM_OPTION_DURATION, ENGINE_FIELD(warmup), "0", 0, 0, NULL, CM_OPTION_NO_RESULT,
     "seconds whose completions are left out of the summary"},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL},
};

/* ---- reading one option ------------------------------------------------------------------- */

static void *field(void *options, const struct cm_option *option)
{
    return (char *)options + option->offset;
}

/* "a, b or c" from a choice list, for messages and help. */
static const char *push_choices(lua_State *L, const char *const *choices)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; choices[i]; i++) {
        if (i > 0)
            luaL_addstring(&b, choices[i + 1] ? ", " : " or ");
        luaL_addstring(&b, choices[i]);
    }
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

/* The option's default, parsed as a given value would be; a table's own mistake raises. */
static void read_fallback(lua_State *L, const struct cm_option *o, void *to)
{
    const char *text = o->fallback;
    char error[256] = "";
    int rc = 0;
    switch (o->type) {
    case CM_OPTION_SIZE:
        *(uint64_t *)to = 0;
        rc = text ? cm_parse_size(text, to, error, sizeof error) : 0;
        break;
    case CM_OPTION_DURATION:
        *(double *)to = 0;
        rc = text ? cm_parse_duration(text, to, error, sizeof error) : 0;
        break;
    case CM_OPTION_INTEGER:
        *(int64_t *)to = text ? strtoll(text, NULL, 10) : 0;
        break;
    case CM_OPTION_BOOL:
        *(bool *)to = text && strcmp(text, "true") == 0;
        break;
    case CM_OPTION_STRING:
        *(const char **)to = text;
        break;
    case CM_OPTION_CHOICE:
        *(int *)to = 0;
        for (int i = 0; text && o->choices[i]; i++)
            if (strcmp(text, o->choices[i]) == 0)
                *(int *)to = i;
        break;
    case CM_OPTION_TABLE:
    case CM_OPTION_FUNCTION:
    case CM_OPTION_NUMBER:
        *(int *)to = 0;
        break;
    }
    if (rc < 0)
        luaL_error(L, "option table: the default of %s: %s", o->name, error);
}

/* Reads option `o` of the table at `table` into `to` (already holding the default); the
 * messages are the module readers' (engine_lua.h). */
static void read_given(lua_State *L, int table, const struct cm_option *o, void *to,
                       const char *what)
{
    switch (o->type) {
    case CM_OPTION_SIZE:
        *(uint64_t *)to = cm_lua_opt_size(L, table, o->name, *(uint64_t *)to, what);
        if (o->max > o->min &&
            (*(uint64_t *)to < (uint64_t)o->min || *(uint64_t *)to > (uint64_t)o->max))
            luaL_error(L, "%s: %s must be between %I and %I bytes, got %I", what, o->name,
                       (lua_Integer)o->min, (lua_Integer)o->max, (lua_Integer) * (uint64_t *)to);
        break;
    case CM_OPTION_DURATION:
        *(double *)to = cm_lua_opt_duration(L, table, o->name, *(double *)to, what);
        break;
    case CM_OPTION_INTEGER:
        *(int64_t *)to = cm_lua_opt_integer(L, table, o->name, *(int64_t *)to,
                                            o->max > o->min ? o->min : INT64_MIN,
                                            o->max > o->min ? o->max : INT64_MAX, what);
        break;
    case CM_OPTION_BOOL:
        *(bool *)to = cm_lua_opt_bool(L, table, o->name, *(bool *)to, what);
        break;
    case CM_OPTION_STRING:
        *(const char **)to = cm_lua_opt_string(L, table, o->name, *(const char **)to, what);
        break;
    case CM_OPTION_CHOICE: {
        const char *value = cm_lua_opt_string(L, table, o->name, o->choices[*(int *)to], what);
        for (int i = 0; o->choices[i]; i++)
            if (strcmp(value, o->choices[i]) == 0) {
                *(int *)to = i;
                return;
            }
        luaL_error(L, "%s: unknown %s '%s' (expected %s)", what, o->name, value,
                   push_choices(L, o->choices));
        break;
    }
    case CM_OPTION_TABLE:
    case CM_OPTION_FUNCTION:
    case CM_OPTION_NUMBER:
        if (lua_getfield(L, table, o->name) == LUA_TNIL) {
            lua_pop(L, 1);
        } else {
            /* left on the stack: the value stays alive and reachable by its index */
            *(int *)to = lua_gettop(L);
        }
        break;
    }
}

static const struct cm_option *find_option(const struct cm_option *options, const char *name,
                                           size_t *index)
{
    for (size_t i = 0; options && options[i].name; i++)
        if (strcmp(options[i].name, name) == 0) {
            if (index)
                *index = i;
            return &options[i];
        }
    return NULL;
}

static void add_names(luaL_Buffer *b, const struct cm_option *options, bool *first)
{
    for (size_t i = 0; options[i].name; i++) {
        if (!*first)
            luaL_addstring(b, ", ");
        luaL_addstring(b, options[i].name);
        *first = false;
    }
}

/* Raises for a key of the table that neither list knows, naming every known option. */
static void check_names(lua_State *L, int table, const char *what, const struct cm_option *own)
{
    lua_pushnil(L);
    while (lua_next(L, table)) {
        lua_pop(L, 1);
        const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (key && (find_option(own, key, NULL) || find_option(cm_engine_options, key, NULL)))
            continue;
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        bool first = true;
        add_names(&b, own, &first);
        add_names(&b, cm_engine_options, &first);
        luaL_pushresult(&b);
        if (key)
            luaL_error(L, "%s: unknown option '%s' (expected one of %s)", what, key,
                       lua_tostring(L, -1));
        luaL_error(L, "%s: option names must be strings, got a %s key (expected one of %s)", what,
                   luaL_typename(L, -2), lua_tostring(L, -1));
    }
}

/* ---- the engine's configuration ----------------------------------------------------------- */

static void read_engine_option(lua_State *L, int table, const char *name, void *values,
                               const char *what, const char *fallback)
{
    const struct cm_option *o = find_option(cm_engine_options, name, NULL);
    struct cm_option with_default = *o;
    if (fallback)
        with_default.fallback = fallback;
    read_fallback(L, &with_default, field(values, o));
    read_given(L, table, &with_default, field(values, o), what);
}

/* rate: a positive, finite number of ops/s (a decimal string too); 0 when absent. */
static double read_rate(lua_State *L, int table, const char *what)
{
    double rate = 0;
    if (lua_getfield(L, table, "rate") != LUA_TNIL) {
        double number;
        char reason[64];
        if (!lua_isnumber(L, -1) || !(lua_tonumber(L, -1) > 0) || !isfinite(lua_tonumber(L, -1)) ||
            (lua_type(L, -1) == LUA_TSTRING &&
             cm_parse_number(lua_tostring(L, -1), &number, reason, sizeof reason) < 0))
            luaL_error(L, "%s: rate must be a positive number of ops/s, got %s", what,
                       luaL_tolstring(L, -1, NULL));
        rate = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    return rate;
}

/* How far ahead start_at may be: a wait longer than this is a mistake (a wall-clock time,
 * or a value in milliseconds), not a schedule. */
#define START_AT_AHEAD_MAX 60.0

/* start_at: an instant on CLOCK_MONOTONIC, in seconds as sys.monotonic() gives them ->
 * nanoseconds for the engine; 0 when absent. */
static uint64_t read_start_at(lua_State *L, int table, const char *what)
{
    uint64_t at = 0;
    if (lua_getfield(L, table, "start_at") != LUA_TNIL) {
        double now = (double)cm_now_ns() / 1e9;
        double value = lua_tonumber(L, -1);
        if (lua_type(L, -1) != LUA_TNUMBER || !(value > 0) || !isfinite(value) ||
            value > now + START_AT_AHEAD_MAX) {
            char limit[96];
            snprintf(limit, sizeof limit, "(now %.3f) at most %.0f s ahead", now,
                     START_AT_AHEAD_MAX);
            luaL_error(L, "%s: start_at must be an instant of sys.monotonic() %s, got %s", what,
                       limit, luaL_tolstring(L, -1, NULL));
        }
        at = (uint64_t)(value * 1e9);
    }
    lua_pop(L, 1);
    return at;
}

static bool given(lua_State *L, int table, const char *name)
{
    bool present = lua_getfield(L, table, name) != LUA_TNIL;
    lua_pop(L, 1);
    return present;
}

/* arrivals and think: each belongs to one kind of loop, refused with the other. */
static void read_pacing(lua_State *L, int index, const char *what, struct engine_values *v,
                        struct cm_engine_config *config)
{
    read_engine_option(L, index, "arrivals", v, what, NULL);
    read_engine_option(L, index, "arrivals_seed", v, what, NULL);
    read_engine_option(L, index, "think", v, what, NULL);
    if (config->rate == 0 && given(L, index, "arrivals"))
        luaL_error(L,
                   "%s: arrivals shapes an open loop: give rate (ops/s) too, or leave arrivals out",
                   what);
    if (v->arrivals != CM_ARRIVALS_POISSON && given(L, index, "arrivals_seed"))
        luaL_error(L, "%s: arrivals_seed seeds Poisson arrivals: give arrivals = \"poisson\" too",
                   what);
    if (config->rate > 0 && v->think > 0)
        luaL_error(L,
                   "%s: think is for a closed loop; an open loop (rate) starts ops on its "
                   "schedule, not after completions: give one of them",
                   what);
    config->arrivals = (uint8_t)v->arrivals;
    config->arrival_seed = (uint64_t)v->arrivals_seed;
    config->think = v->think;
}

void cm_bench_engine_config(lua_State *L, int index, const char *what,
                            const struct cm_bench_defaults *defaults,
                            struct cm_engine_config *config, struct cm_engine_lua *bridge)
{
    index = lua_absindex(L, index);
    luaL_checktype(L, index, LUA_TTABLE);
    memset(config, 0, sizeof *config);
    struct engine_values v = {0};
    char threads[24];
    snprintf(threads, sizeof threads, "%u", defaults->threads ? defaults->threads : 16);
    read_engine_option(L, index, "ignore_interrupt", &v, what,
                       defaults->ignore_interrupt ? "true" : "false");
    /* a run asked for after SIGINT does not start: the interrupt reaches the script now */
    if (!v.ignore_interrupt)
        cm_interrupt_check(L);
    read_engine_option(L, index, "threads", &v, what, threads);
    read_engine_option(L, index, "seconds", &v, what, NULL);
    read_engine_option(L, index, "ops", &v, what, NULL);
    read_engine_option(L, index, "bytes", &v, what, NULL);
    read_engine_option(L, index, "warmup", &v, what, NULL);
    read_engine_option(L, index, "drain_timeout", &v, what, NULL);
    config->ignore_interrupt = v.ignore_interrupt;
    config->depth = (unsigned)v.threads;
    config->seconds = v.seconds;
    config->max_ops = (uint64_t)v.ops;
    config->max_bytes = v.bytes;
    config->warmup = v.warmup;
    config->drain_timeout = v.drain_timeout;
    config->rate = read_rate(L, index, what);
    config->start_at_ns = read_start_at(L, index, what);
    read_pacing(L, index, what, &v, config);
    /* seconds = 0 asked for nothing; without this it would run the default length */
    if (config->seconds == 0 && config->max_ops == 0 && config->max_bytes == 0) {
        if (lua_getfield(L, index, "seconds") != LUA_TNIL)
            luaL_error(L,
                       "%s: seconds must be more than 0 (or bound the run by ops or bytes), got %s",
                       what, luaL_tolstring(L, -1, NULL));
        lua_pop(L, 1);
        config->seconds = defaults->seconds;
    }
    cm_engine_lua_bridge(L, index, what, config, bridge);
}

/* ---- the driver --------------------------------------------------------------------------- */

static const char guard_type[] = "cephmark.bench";

/* Releases what an unfinished bench holds: the per-second callback and the target. Runs as
 * the guard's __close, after an error anywhere in the bench, and once more, doing nothing,
 * when the driver returns. */
static int guard_close(lua_State *L)
{
    struct cm_bench *b = luaL_checkudata(L, 1, guard_type);
    if (b->have_result) {
        cm_engine_result_free(&b->result);
        b->have_result = false;
    }
    if (b->opened && !b->closed) {
        b->closed = true;
        if (b->def->close)
            b->def->close(b);
    }
    if (b->bridge_open) {
        b->bridge_open = false;
        cm_engine_lua_release(&b->bridge);
    }
    return 0;
}

/* The guard: one userdata holding the bench, its options and the hooks' state, marked
 * to-be-closed, with a table of values kept alive (cm_bench_keep) as its user value. */
static struct cm_bench *new_guard(lua_State *L, const struct cm_bench_def *def)
{
    size_t head = (sizeof(struct cm_bench) + 15) / 16 * 16;
    size_t options = (def->options_size + 15) / 16 * 16;
    struct cm_bench *b = lua_newuserdatauv(L, head + options + def->state_size, 1);
    memset(b, 0, head + options + def->state_size);
    b->options = (char *)b + head;
    b->state = def->state_size ? (char *)b + head + options : NULL;
    if (luaL_newmetatable(L, guard_type)) {
        lua_pushcfunction(L, guard_close);
        lua_setfield(L, -2, "__close");
    }
    lua_setmetatable(L, -2);
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1);
    b->guard = lua_gettop(L);
    lua_toclose(L, b->guard);
    return b;
}

static void read_options(struct cm_bench *b)
{
    lua_State *L = b->L;
    const struct cm_option *o = b->def->options;
    for (size_t i = 0; o[i].name; i++) {
        read_fallback(L, &o[i], field(b->options, &o[i]));
        if (lua_getfield(L, b->table, o[i].name) != LUA_TNIL)
            b->given |= 1ULL << i;
        lua_pop(L, 1);
        read_given(L, b->table, &o[i], field(b->options, &o[i]), b->def->what);
    }
}

/* The value of every option that is a setting, defaults included, unless the target set
 * the field already. */
static void push_option_values(struct cm_bench *b)
{
    lua_State *L = b->L;
    const struct cm_option *o = b->def->options;
    for (size_t i = 0; o[i].name; i++) {
        if (o[i].flags & CM_OPTION_NO_RESULT)
            continue;
        void *value = field(b->options, &o[i]);
        switch (o[i].type) {
        case CM_OPTION_SIZE:
            lua_pushinteger(L, (lua_Integer) * (uint64_t *)value);
            break;
        case CM_OPTION_DURATION:
            lua_pushnumber(L, *(double *)value);
            break;
        case CM_OPTION_INTEGER:
            lua_pushinteger(L, (lua_Integer) * (int64_t *)value);
            break;
        case CM_OPTION_BOOL:
            lua_pushboolean(L, *(bool *)value);
            break;
        case CM_OPTION_STRING:
            if (!*(const char **)value)
                continue;
            lua_pushstring(L, *(const char **)value);
            break;
        case CM_OPTION_CHOICE:
            lua_pushstring(L, o[i].choices[*(int *)value]);
            break;
        case CM_OPTION_TABLE:
        case CM_OPTION_FUNCTION:
        case CM_OPTION_NUMBER:
            continue;
        }
        lua_setfield(L, -2, o[i].name);
    }
}

/* The driver: a method's object is argument 1 and its options argument 2; a function's
 * options are argument 1. */
static int run_bench(lua_State *L, int self, int table, void *object,
                     const struct cm_bench_def *def)
{
    luaL_checktype(L, table, LUA_TTABLE);
    lua_settop(L, table > self ? table : self);
    struct cm_bench *b = new_guard(L, def);
    b->object = object;
    b->L = L;
    b->def = def;
    b->self = self;
    b->table = table;
    b->defaults.threads = def->default_threads;
    b->defaults.seconds = def->default_seconds;
    check_names(L, table, def->what, def->options);
    read_options(b);
    if (def->prepare)
        def->prepare(b);
    cm_bench_engine_config(L, table, def->what, &b->defaults, &b->config, &b->bridge);
    b->bridge_open = true;
    b->opened = true;
    def->open(b);
    int rc = cm_engine_run(&b->config, b->ops, b->target, &b->result);
    b->have_result = rc == 0;
    if (def->after_run)
        def->after_run(b, rc);
    if (rc < 0)
        luaL_error(L, "%s: cannot start: %s", def->what, strerror(-rc));
    cm_engine_lua_push_result(L, &b->result, &b->config);
    push_option_values(b);
    if (def->result)
        def->result(b);
    int out = lua_gettop(L);
    cm_engine_result_free(&b->result);
    b->have_result = false;
    b->closed = true;
    if (def->close)
        def->close(b);
    lua_settop(L, out);
    b->bridge_open = false;
    cm_engine_lua_finish(&b->bridge);
    return 1;
}

/* The `bench` function or method: its definition is the closure's upvalue. */
static int bench_function(lua_State *L)
{
    const struct cm_bench_def *def = lua_touserdata(L, lua_upvalueindex(1));
    if (!def->check_object)
        return run_bench(L, 0, 1, NULL, def);
    void *object = def->check_object(L, 1);
    return run_bench(L, 1, 2, object, def);
}

void cm_bench_set_functions(lua_State *L, const struct cm_bench_def *def)
{
    lua_pushlightuserdata(L, (void *)def);
    lua_pushcclosure(L, bench_function, 1);
    lua_setfield(L, -2, "bench");
    cm_bench_push_option_names(L, def);
    lua_setfield(L, -2, "bench_options");
}

bool cm_bench_given(const struct cm_bench *b, const char *name)
{
    size_t index;
    if (!find_option(b->def->options, name, &index))
        return false;
    return (b->given >> index) & 1;
}

void cm_bench_keep(struct cm_bench *b)
{
    lua_State *L = b->L;
    lua_getiuservalue(L, b->guard, 1);
    lua_insert(L, -2);
    lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
    lua_pop(L, 1);
}

void cm_bench_check_memory(struct cm_bench *b, uint64_t per_slot, uint64_t per_slot_library,
                           uint64_t shared, const char *buffers, const char *lower)
{
    char message[512];
    if (cm_memory_fits(b->config.depth, per_slot, per_slot_library, shared, cm_memory_available(),
                       buffers, lower, message, sizeof message))
        return;
    cm_error_user(b->L, CM_EXIT_USAGE, "%s: %s", b->def->what, message);
}

int cm_bench_raise_world(struct cm_bench *b, const char *message)
{
    return cm_error_user(b->L, CM_EXIT_USAGE, "%s: %s", b->def->what, message);
}

/* ---- result fields ------------------------------------------------------------------------ */

void cm_result_integer(lua_State *L, const char *key, uint64_t value)
{
    lua_pushinteger(L, (lua_Integer)value);
    lua_setfield(L, -2, key);
}

void cm_result_number(lua_State *L, const char *key, double value)
{
    lua_pushnumber(L, value);
    lua_setfield(L, -2, key);
}

void cm_result_string(lua_State *L, const char *key, const char *value)
{
    lua_pushstring(L, value);
    lua_setfield(L, -2, key);
}

void cm_result_bool(lua_State *L, const char *key, bool value)
{
    lua_pushboolean(L, value);
    lua_setfield(L, -2, key);
}

void cm_result_strings(lua_State *L, const char *key, const char *strings, size_t stride, size_t n)
{
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, strings + i * stride);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, key);
}

/* ---- lists, help and docs ----------------------------------------------------------------- */

void cm_bench_push_option_names(lua_State *L, const struct cm_bench_def *def)
{
    size_t n = 0;
    while (def->options[n].name)
        n++;
    const char **own = lua_newuserdatauv(L, (n + 1) * sizeof *own, 0);
    for (size_t i = 0; i < n; i++)
        own[i] = def->options[i].name;
    own[n] = NULL;
    cm_lua_push_option_names(L, own, true);
    lua_remove(L, -2);
}

static const char *type_name(enum cm_option_type type)
{
    static const char *const names[] = {"size",   "duration", "integer",  "boolean", "string",
                                        "choice", "table",    "function", "number"};
    _Static_assert(sizeof names / sizeof names[0] == CM_OPTION_NUMBER + 1,
                   "a name for every option type");
    return names[type];
}

void cm_bench_push_option_table(lua_State *L, const struct cm_option *options)
{
    lua_newtable(L);
    for (size_t i = 0; options[i].name; i++) {
        const struct cm_option *o = &options[i];
        lua_createtable(L, 0, 7);
        cm_result_string(L, "name", o->name);
        cm_result_string(L, "type", type_name(o->type));
        if (o->fallback)
            cm_result_string(L, "default", o->fallback);
        if (o->max > o->min) {
            lua_pushinteger(L, o->min);
            lua_setfield(L, -2, "min");
            lua_pushinteger(L, o->max);
            lua_setfield(L, -2, "max");
        }
        if (o->choices) {
            lua_newtable(L);
            for (int c = 0; o->choices[c]; c++) {
                lua_pushstring(L, o->choices[c]);
                lua_rawseti(L, -2, c + 1);
            }
            lua_setfield(L, -2, "choices");
        }
        cm_result_string(L, "help", o->help ? o->help : "");
        cm_result_bool(L, "in_result",
                       !(o->flags & CM_OPTION_NO_RESULT) && o->type != CM_OPTION_TABLE);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}
