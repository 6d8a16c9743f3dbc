/* The engine's Lua side; see engine_lua.h. */
#include "engine_lua.h"
#include "exitcode.h"
#include "bench_lua.h"
#include "interrupt.h"
#include "lstate.h"
#include "units.h"

#include <inttypes.h>
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t cm_lua_opt_size(lua_State *L, int table, const char *key, uint64_t fallback,
                         const char *what)
{
    uint64_t value = fallback;
    int type = lua_getfield(L, table, key);
    if (type == LUA_TNUMBER) {
        lua_Integer n = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
        if (n < 0)
            luaL_error(L,
                       "%s: %s must be a size in bytes (a non-negative integer or \"4K\"), got %s",
                       what, key, luaL_tolstring(L, -1, NULL));
        value = (uint64_t)n;
    } else if (type == LUA_TSTRING) {
        char error[256];
        if (cm_parse_size(lua_tostring(L, -1), &value, error, sizeof error) < 0)
            luaL_error(L, "%s: %s: %s", what, key, error);
    } else if (type != LUA_TNIL) {
        luaL_error(L, "%s: %s must be a size (integer or string like \"4M\"), got a %s", what, key,
                   luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    return value;
}

double cm_lua_opt_duration(lua_State *L, int table, const char *key, double fallback,
                           const char *what)
{
    double value = fallback;
    int type = lua_getfield(L, table, key);
    if (type == LUA_TNUMBER) {
        value = lua_tonumber(L, -1);
        if (!(value >= 0) || !isfinite(value))
            luaL_error(L, "%s: %s must be a non-negative number of seconds, got %s", what, key,
                       luaL_tolstring(L, -1, NULL));
    } else if (type == LUA_TSTRING) {
        char error[256];
        if (cm_parse_duration(lua_tostring(L, -1), &value, error, sizeof error) < 0)
            luaL_error(L, "%s: %s: %s", what, key, error);
    } else if (type != LUA_TNIL) {
        luaL_error(L, "%s: %s must be a duration (seconds, or a string like \"500ms\"), got a %s",
                   what, key, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    return value;
}

lua_Integer cm_lua_opt_integer(lua_State *L, int table, const char *key, lua_Integer fallback,
                               lua_Integer min, lua_Integer max, const char *what)
{
    lua_Integer value = fallback;
    int type = lua_getfield(L, table, key);
    if (type != LUA_TNIL) {
        int ok = 0;
        double number;
        char reason[64];
        /* text in decimal only: Lua's own conversion would also take "0x10" */
        if (type == LUA_TNUMBER ||
            (type == LUA_TSTRING &&
             cm_parse_number(lua_tostring(L, -1), &number, reason, sizeof reason) == 0))
            value = lua_tointegerx(L, -1, &ok);
        if (!ok)
            luaL_error(L, "%s: %s must be an integer, got %s", what, key,
                       type == LUA_TSTRING || type == LUA_TNUMBER ? luaL_tolstring(L, -1, NULL)
                                                                  : luaL_typename(L, -1));
        if (value < min || value > max)
            luaL_error(L, "%s: %s must be between %I and %I, got %I", what, key, min, max, value);
    }
    lua_pop(L, 1);
    return value;
}

int cm_lua_opt_bool(lua_State *L, int table, const char *key, int fallback, const char *what)
{
    int type = lua_getfield(L, table, key);
    int value = fallback;
    if (type == LUA_TBOOLEAN)
        value = lua_toboolean(L, -1);
    else if (type != LUA_TNIL)
        luaL_error(L, "%s: %s must be true or false, got a %s", what, key, luaL_typename(L, -1));
    lua_pop(L, 1);
    return value;
}

const char *cm_lua_opt_string(lua_State *L, int table, const char *key, const char *fallback,
                              const char *what)
{
    int type = lua_getfield(L, table, key);
    const char *value = fallback;
    if (type == LUA_TSTRING)
        value = lua_tostring(L, -1); /* the options table keeps it alive */
    else if (type != LUA_TNIL)
        luaL_error(L, "%s: %s must be a string, got a %s", what, key, luaL_typename(L, -1));
    lua_pop(L, 1);
    return value;
}

int cm_lua_opt_choice(lua_State *L, int table, const char *key, const char *const *choices,
                      int fallback, const char *expected, const char *what)
{
    const char *value = cm_lua_opt_string(L, table, key, choices[fallback], what);
    for (int i = 0; choices[i]; i++)
        if (strcmp(value, choices[i]) == 0)
            return i;
    return luaL_error(L, "%s: unknown %s '%s' (expected %s)", what, key, value, expected);
}

/* The engine's option names, from its table (bench_lua.c). */
static const char *const *engine_options(void)
{
    static const char *names[16];
    if (!names[0]) {
        size_t n = 0;
        for (; cm_engine_options[n].name && n + 1 < sizeof names / sizeof names[0]; n++)
            names[n] = cm_engine_options[n].name;
        names[n] = NULL;
    }
    return names;
}

static bool listed(const char *key, const char *const *names)
{
    for (int i = 0; names && names[i]; i++)
        if (strcmp(key, names[i]) == 0)
            return true;
    return false;
}

/* Names starting with "__" are a function's own bookkeeping, accepted but not offered. */
static void add_names(luaL_Buffer *b, const char *const *names, bool *first)
{
    for (int i = 0; names && names[i]; i++) {
        if (strncmp(names[i], "__", 2) == 0)
            continue;
        if (!*first)
            luaL_addstring(b, ", ");
        luaL_addstring(b, names[i]);
        *first = false;
    }
}

void cm_lua_check_options(lua_State *L, int table, const char *what, const char *const *own,
                          bool engine)
{
    table = lua_absindex(L, table);
    lua_pushnil(L);
    while (lua_next(L, table)) {
        lua_pop(L, 1);
        const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (key && (listed(key, own) || (engine && listed(key, engine_options()))))
            continue;
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        bool first = true;
        add_names(&b, own, &first);
        if (engine)
            add_names(&b, engine_options(), &first);
        luaL_pushresult(&b);
        if (key)
            luaL_error(L, "%s: unknown option '%s' (expected one of %s)", what, key,
                       lua_tostring(L, -1));
        else
            luaL_error(L, "%s: option names must be strings, got a %s key (expected one of %s)",
                       what, luaL_typename(L, -2), lua_tostring(L, -1));
    }
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void cm_lua_push_option_names(lua_State *L, const char *const *own, bool engine)
{
    const char *const *lists[2] = {own, engine ? engine_options() : NULL};
    size_t n = 0;
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; lists[l] && lists[l][i]; i++)
            n++;
    /* the names, sorted in a scratch array that Lua frees */
    const char **names = lua_newuserdatauv(L, (n ? n : 1) * sizeof *names, 0);
    size_t kept = 0;
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; lists[l] && lists[l][i]; i++)
            if (strncmp(lists[l][i], "__", 2) != 0)
                names[kept++] = lists[l][i];
    qsort(names, kept, sizeof names[0], compare_names);
    lua_createtable(L, (int)kept, 0);
    for (size_t i = 0; i < kept; i++) {
        lua_pushstring(L, names[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_remove(L, -2);
}

static void push_second(lua_State *L, const struct cm_engine_second *s)
{
    lua_createtable(L, 0, 16);
#define FIELD_INT(name, value)                                                                     \
    lua_pushinteger(L, (lua_Integer)(value));                                                      \
    lua_setfield(L, -2, name)
#define FIELD_NUM(name, value)                                                                     \
    lua_pushnumber(L, (value));                                                                    \
    lua_setfield(L, -2, name)
    FIELD_INT("sec", s->second);
    FIELD_INT("cur_ops", s->in_flight);
    FIELD_INT("started", s->started);
    FIELD_INT("finished", s->finished);
    FIELD_INT("ops", s->ops);
    FIELD_INT("bytes", s->bytes);
    FIELD_INT("errors", s->errors);
    FIELD_NUM("avg_mib", s->avg_mib_s);
    FIELD_NUM("cur_mib", s->cur_mib_s);
    FIELD_NUM("iops", s->iops);
    FIELD_NUM("avg_lat", s->avg_latency_s);
    if (s->last_latency_s >= 0) {
        FIELD_NUM("last_lat", s->last_latency_s);
    }
    if (s->p99_latency_s >= 0) {
        FIELD_NUM("p99", s->p99_latency_s);
        FIELD_NUM("max_lat", s->max_latency_s);
    }
    FIELD_NUM("in_flight_mean", s->in_flight_mean);
    if (s->read_ops || s->write_ops) {
        FIELD_INT("read_ops", s->read_ops);
        FIELD_INT("read_bytes", s->read_bytes);
        FIELD_INT("write_ops", s->write_ops);
        FIELD_INT("write_bytes", s->write_bytes);
    }
    lua_pushboolean(L, s->warmup);
    lua_setfield(L, -2, "warmup");
    lua_pushboolean(L, s->partial);
    lua_setfield(L, -2, "partial");
    lua_pushboolean(L, s->steady);
    lua_setfield(L, -2, "steady");
}

/* Sets `hist` of the second's table on top of the stack: the second's encoded histogram. */
static void push_second_histogram(lua_State *L, const cm_hist *hist)
{
    size_t size = cm_hist_encoded_size(hist);
    luaL_Buffer b;
    unsigned char *buf = (unsigned char *)luaL_buffinitsize(L, &b, size);
    luaL_pushresultsize(&b, cm_hist_encode(hist, buf, size));
    lua_setfield(L, -2, "hist");
}

/* Runs on the loop thread once a second; a Lua error must not unwind through the engine
 * (ops are in flight), so the callback runs protected and its error is kept for later.
 * It runs armed (interrupt.h): after a stop signal, a callback that loops is stopped at
 * every watchdog check, also when it is called again for the last, partial second. */
static bool call_second_callback(void *arg, const struct cm_engine_second *second)
{
    struct cm_engine_lua *bridge = arg;
    lua_State *L = bridge->L;
    if (bridge->error_ref != LUA_NOREF)
        return false;
    lua_rawgeti(L, LUA_REGISTRYINDEX, bridge->callback_ref);
    push_second(L, second);
    if (bridge->second_histograms && second->latency && cm_hist_count(second->latency))
        push_second_histogram(L, second->latency);
    struct cm_interrupt_arming previous = cm_interrupt_arm(UINT64_MAX, bridge->stop_on_interrupt);
    int status = lua_pcall(L, 1, 1, 0);
    cm_interrupt_disarm(previous);
    if (status != LUA_OK) {
        if (cm_interrupt_is_error(L, -1) && cm_interrupted()) {
            /* the interrupt landed in the callback: the engine sees it itself, drains,
             * and returns a result marked interrupted */
            lua_pop(L, 1);
            return true;
        }
        bridge->error_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        return false;
    }
    bool keep_going = !(lua_isboolean(L, -1) && !lua_toboolean(L, -1));
    lua_pop(L, 1);
    return keep_going;
}

void cm_engine_lua_config(lua_State *L, int index, const char *what, double default_seconds,
                          struct cm_engine_config *config, struct cm_engine_lua *bridge)
{
    struct cm_bench_defaults defaults = {.seconds = default_seconds};
    cm_bench_engine_config(L, index, what, &defaults, config, bridge);
}

void cm_engine_lua_bridge(lua_State *L, int index, const char *what,
                          struct cm_engine_config *config, struct cm_engine_lua *bridge)
{
    bridge->L = L;
    bridge->callback_ref = LUA_NOREF;
    bridge->error_ref = LUA_NOREF;
    bridge->stop_on_interrupt = !config->ignore_interrupt;
    bridge->second_histograms = cm_lua_opt_bool(L, index, "second_histograms", 0, what);
    int type = lua_getfield(L, index, "on_second");
    if (type == LUA_TFUNCTION) {
        bridge->callback_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        config->on_second = call_second_callback;
        config->on_second_arg = bridge;
    } else {
        if (type != LUA_TNIL)
            luaL_error(L, "%s: on_second must be a function, got a %s", what, luaL_typename(L, -1));
        lua_pop(L, 1);
    }
}

/* A number from the first line of `path` ("max" and unreadable files give 0). */
static uint64_t read_number_file(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    char text[64] = "";
    if (!fgets(text, sizeof text, file))
        text[0] = '\0';
    fclose(file);
    return strtoull(text, NULL, 10);
}

/* What the process's cgroup (v2) still allows: memory.max less memory.current, or 0 when
 * there is no limit or no cgroup v2. A container's limit is what the OOM killer enforces,
 * whatever MemAvailable says. */
static uint64_t cgroup_memory_left(void)
{
    FILE *file = fopen("/proc/self/cgroup", "r");
    if (!file)
        return 0;
    char line[512], group[512] = "";
    while (fgets(line, sizeof line, file))
        if (strncmp(line, "0::", 3) == 0 && sscanf(line + 3, "%511s", group) == 1)
            break;
    fclose(file);
    if (!group[0])
        return 0;
    char path[600];
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", strcmp(group, "/") ? group : "");
    uint64_t max = read_number_file(path);
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", strcmp(group, "/") ? group : "");
    uint64_t current = read_number_file(path);
    if (max == 0)
        return 0;
    return max > current ? max - current : 1;
}

uint64_t cm_memory_available(void)
{
    uint64_t available = 0;
    FILE *file = fopen("/proc/meminfo", "r");
    if (file) {
        char line[256];
        static const char key[] = "MemAvailable:";
        while (fgets(line, sizeof line, file))
            if (strncmp(line, key, sizeof key - 1) == 0) {
                available = (uint64_t)strtoull(line + sizeof key - 1, NULL, 10) * 1024;
                break;
            }
        fclose(file);
    }
    uint64_t left = cgroup_memory_left();
    if (left && (available == 0 || left < available))
        available = left;
    return available;
}

bool cm_memory_fits(uint64_t slots, uint64_t per_slot, uint64_t per_slot_library, uint64_t shared,
                    uint64_t available, const char *buffers, const char *lower, char *message,
                    size_t message_size)
{
    if (available == 0)
        return true;
    uint64_t slot = per_slot + per_slot_library;
    uint64_t need = UINT64_MAX, slots_total = UINT64_MAX, own_total = UINT64_MAX;
    if (slot >= per_slot && (slot == 0 || slots <= (UINT64_MAX - shared) / slot)) {
        slots_total = slots * slot;
        own_total = slots * per_slot;
        need = slots_total + shared;
    }
    uint64_t usable = available / 8 * 7;
    if (need <= usable)
        return true;
    /* the sentence shows the slots' product, which is what -t and -b change; the shared
     * part (one payload) only counts */
    char slot_text[32], own_text[32], all_text[32], available_text[32], amount[160];
    cm_format_size(per_slot, slot_text, sizeof slot_text);
    if (own_total == UINT64_MAX)
        snprintf(own_text, sizeof own_text, "more than 16 EiB");
    else
        cm_format_size(per_slot ? own_total : need, own_text, sizeof own_text);
    if (slots_total == UINT64_MAX)
        snprintf(all_text, sizeof all_text, "more than 16 EiB");
    else
        cm_format_size(slots_total, all_text, sizeof all_text);
    cm_format_size(available, available_text, sizeof available_text);
    if (per_slot && slots > 1)
        snprintf(amount, sizeof amount, "%" PRIu64 " slots x %s = %s of %s", slots, slot_text,
                 own_text, buffers);
    else
        snprintf(amount, sizeof amount, "%s of %s", own_text, buffers);
    if (per_slot_library)
        snprintf(amount + strlen(amount), sizeof amount - strlen(amount),
                 " (%s with the library's own)", all_text);
    snprintf(message, message_size, "%s, %s the %s this machine has available; %s", amount,
             need > available ? "more than" : "leaving less than 1/8 of", available_text, lower);
    return false;
}

void cm_engine_lua_release(struct cm_engine_lua *bridge)
{
    luaL_unref(bridge->L, LUA_REGISTRYINDEX, bridge->callback_ref);
    bridge->callback_ref = LUA_NOREF;
    luaL_unref(bridge->L, LUA_REGISTRYINDEX, bridge->error_ref);
    bridge->error_ref = LUA_NOREF;
}

void cm_engine_lua_finish(struct cm_engine_lua *bridge)
{
    lua_State *L = bridge->L;
    /* An interrupted run returns its partial result (marked interrupted) to the script,
     * which writes what it has: the engine withdrew the pending "interrupted" error when it
     * saw the signal, and it comes back at the next run or sleep (cm_interrupt_check). */
    luaL_unref(L, LUA_REGISTRYINDEX, bridge->callback_ref);
    bridge->callback_ref = LUA_NOREF;
    if (bridge->error_ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, bridge->error_ref);
        luaL_unref(L, LUA_REGISTRYINDEX, bridge->error_ref);
        bridge->error_ref = LUA_NOREF;
        lua_error(L);
    }
}

void cm_engine_lua_push_latency(lua_State *L, const cm_hist *hist)
{
    lua_createtable(L, 0, 14);
    uint64_t count = cm_hist_count(hist);
    FIELD_INT("count", count);
    FIELD_INT("underflow", cm_hist_underflow(hist));
    FIELD_INT("overflow", cm_hist_overflow(hist));
    if (count == 0)
        return;
    FIELD_NUM("avg", cm_hist_mean(hist) / 1e9);
    FIELD_NUM("stddev", cm_hist_stddev(hist) / 1e9);
    FIELD_NUM("min", (double)cm_hist_min(hist) / 1e9);
    FIELD_NUM("max", (double)cm_hist_max(hist) / 1e9);
    FIELD_NUM("p50", (double)cm_hist_percentile(hist, 50) / 1e9);
    FIELD_NUM("p90", (double)cm_hist_percentile(hist, 90) / 1e9);
    FIELD_NUM("p95", (double)cm_hist_percentile(hist, 95) / 1e9);
    FIELD_NUM("p99", (double)cm_hist_percentile(hist, 99) / 1e9);
    FIELD_NUM("p99_9", (double)cm_hist_percentile(hist, 99.9) / 1e9);
    FIELD_NUM("p99_99", (double)cm_hist_percentile(hist, 99.99) / 1e9);
    /* fio's default percentile list, as an array of {p=, value=} so it survives JSON */
    static const double fio_percentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                             80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
    size_t n = sizeof fio_percentiles / sizeof fio_percentiles[0];
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 2);
        FIELD_NUM("p", fio_percentiles[i]);
        FIELD_NUM("value", (double)cm_hist_percentile(hist, fio_percentiles[i]) / 1e9);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "percentiles");
}

static void remember_histogram(lua_State *L, const cm_hist *hist);

/* The steady-state window's table (engine.h, struct cm_engine_steady). */
static void push_steady(lua_State *L, const struct cm_engine_steady *steady)
{
    lua_createtable(L, 0, 10);
    FIELD_INT("seconds", steady->seconds);
    if (steady->seconds == 0)
        return;
    double seconds = (double)steady->seconds;
    FIELD_INT("first_second", steady->first_second);
    FIELD_INT("last_second", steady->first_second + steady->seconds - 1);
    FIELD_INT("ops", steady->ops);
    FIELD_INT("bytes", steady->bytes);
    FIELD_INT("errors", steady->errors);
    FIELD_NUM("iops", (double)steady->ops / seconds);
    FIELD_NUM("bandwidth_mib", (double)steady->bytes / 1048576.0 / seconds);
    FIELD_NUM("in_flight_mean", steady->in_flight_mean);
    cm_engine_lua_push_latency(L, steady->latency);
    lua_setfield(L, -2, "lat");
}

/* A run bounded by time that stopped before half of it because the target's work ran out
 * (rados bench's seq over a short write run lasts half a second, ceph#30794) says so in the
 * result's early_end, which the scenario prints as a warning. */
static void push_early_end(lua_State *L, const struct cm_engine_result *r,
                           const struct cm_engine_config *config)
{
    if (!(config->seconds > 0) || r->interrupted || r->stop_reason != CM_STOP_DONE)
        return;
    double ran = fmax(0, r->stopped_after_s - config->warmup);
    if (ran >= config->seconds / 2)
        return;
    char text[320];
    snprintf(text, sizeof text,
             "ended after %.2f s of the %g s asked: the target ran out of work (a read phase "
             "reads only what earlier phases wrote: write for longer, or bound this phase by "
             "ops)",
             ran, config->seconds);
    lua_pushstring(L, text);
    lua_setfield(L, -2, "early_end");
}

/* The open loop's schedule and the closed loop's think time, when set. */
static void push_pacing(lua_State *L, const struct cm_engine_config *config)
{
    if (config->rate > 0) {
        FIELD_NUM("rate", config->rate);
        lua_pushstring(L, config->arrivals == CM_ARRIVALS_POISSON ? "poisson" : "uniform");
        lua_setfield(L, -2, "arrivals");
        if (config->arrivals == CM_ARRIVALS_POISSON) {
            FIELD_INT("arrivals_seed", config->arrival_seed ? config->arrival_seed : 1);
        }
    } else if (config->think > 0) {
        FIELD_NUM("think", config->think);
    }
}

/* result.by_op: each kind's share, keyed by the target's name for it, for a run that did
 * more than one kind of op (a single-op result stays as it was). */
static void push_by_op(lua_State *L, const struct cm_engine_result *r)
{
    if (cm_engine_kinds_used(r) < 2)
        return;
    lua_createtable(L, 0, CM_OP_KINDS);
    for (int k = 0; k < CM_OP_KINDS; k++) {
        const struct cm_engine_kind *kind = &r->kinds[k];
        if (!kind->latency)
            continue;
        lua_createtable(L, 0, 6);
        FIELD_INT("ops", kind->ops);
        FIELD_INT("bytes", kind->bytes);
        FIELD_INT("errors", kind->errors);
        FIELD_NUM("iops", r->elapsed_s > 0 ? (double)kind->ops / r->elapsed_s : 0);
        FIELD_NUM("bandwidth_mib_s",
                  r->elapsed_s > 0 ? (double)kind->bytes / 1048576.0 / r->elapsed_s : 0);
        cm_engine_lua_push_latency(L, kind->latency);
        lua_setfield(L, -2, "latency");
        lua_setfield(L, -2, kind->name);
    }
    lua_setfield(L, -2, "by_op");
}

/* A scheduled start (start_at): the instant asked for, when the run was ready for it (its
 * target set up), the actual start on both clocks, and how late it came (the setup took
 * longer than the lead, or the instant was past when the run was asked for; a wake-up is
 * never early). */
static void push_start(lua_State *L, const struct cm_engine_result *r,
                       const struct cm_engine_config *config)
{
    if (!config->start_at_ns)
        return;
    FIELD_NUM("start_at", (double)config->start_at_ns / 1e9);
    FIELD_NUM("start_ready", (double)r->ready_ns / 1e9);
    FIELD_NUM("start_monotonic", (double)r->start_ns / 1e9);
    FIELD_NUM("start_realtime", r->start_realtime_s);
    uint64_t late = r->start_ns > config->start_at_ns ? r->start_ns - config->start_at_ns : 0;
    FIELD_NUM("start_late", (double)late / 1e9);
}

void cm_engine_lua_push_result(lua_State *L, const struct cm_engine_result *r,
                               const struct cm_engine_config *config)
{
    lua_createtable(L, 0, 32);
    FIELD_NUM("elapsed", r->elapsed_s);
    FIELD_INT("started", r->started);
    FIELD_INT("ops", r->ops);
    FIELD_INT("bytes", r->bytes);
    FIELD_INT("errors", r->errors);
    FIELD_INT("verify_failures", r->verify_failures);
    FIELD_NUM("bandwidth_mib", r->bandwidth_mib_s);
    FIELD_NUM("bandwidth_stddev", r->bandwidth_stddev);
    FIELD_NUM("bandwidth_max", r->bandwidth_max);
    FIELD_NUM("bandwidth_min", r->bandwidth_min);
    FIELD_NUM("iops", r->iops);
    FIELD_NUM("iops_stddev", r->iops_stddev);
    FIELD_NUM("iops_max", r->iops_max);
    FIELD_NUM("iops_min", r->iops_min);
    FIELD_INT("threads", config->depth);
    FIELD_NUM("in_flight_mean", r->in_flight_mean);
    lua_pushstring(L, cm_stop_reason_name(r->stop_reason));
    lua_setfield(L, -2, "stop_reason");
    FIELD_NUM("stopped_after", r->stopped_after_s);
    push_steady(L, &r->steady);
    lua_setfield(L, -2, "steady");
    push_early_end(L, r, config);
    /* the client's CPU over the run: the scenario files it under the phase's cluster.cpu */
    lua_createtable(L, 0, 4);
    FIELD_NUM("user", r->cpu_user_s);
    FIELD_NUM("system", r->cpu_system_s);
    FIELD_INT("ops", r->ops_all);
    FIELD_INT("bytes", r->bytes_all);
    lua_setfield(L, -2, "client_cpu");
    push_pacing(L, config);
    push_start(L, r, config);
    if (r->first_error) {
        lua_pushstring(L, strerror(-r->first_error));
        lua_setfield(L, -2, "first_error");
    }
    lua_pushboolean(L, r->interrupted);
    lua_setfield(L, -2, "interrupted");
    lua_pushboolean(L, r->drained);
    lua_setfield(L, -2, "drained");
    cm_engine_lua_push_latency(L, r->latency);
    lua_setfield(L, -2, "lat");
    if (r->latency_uncorrected) {
        cm_engine_lua_push_latency(L, r->latency_uncorrected);
        lua_setfield(L, -2, "lat_uncorrected");
    }
    /* per direction, when the run did both (a read/write mix) */
    if (r->latency_read && r->latency_write && cm_hist_count(r->latency_read) &&
        cm_hist_count(r->latency_write)) {
        cm_engine_lua_push_latency(L, r->latency_read);
        lua_setfield(L, -2, "lat_read");
        cm_engine_lua_push_latency(L, r->latency_write);
        lua_setfield(L, -2, "lat_write");
    }
    FIELD_INT("reads", r->kinds[CM_OP_READ].ops);
    FIELD_INT("writes", r->kinds[CM_OP_WRITE].ops);
    push_by_op(L, r);
    lua_createtable(L, (int)r->series_len, 0);
    for (size_t i = 0; i < r->series_len; i++) {
        push_second(L, &r->series[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "series");
    remember_histogram(L, r->latency);
}

/* The encoded latency histogram of each result table lives in a weak-keyed registry table,
 * not in the result: results are written as JSON and YAML, and the histogram is binary. */
static const char histograms_key[] = "cephmark.engine.histograms";

static void remember_histogram(lua_State *L, const cm_hist *hist)
{
    /* stack: result */
    if (luaL_getsubtable(L, LUA_REGISTRYINDEX, histograms_key) == 0) {
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
    }
    lua_pushvalue(L, -2);
    size_t size = cm_hist_encoded_size(hist);
    luaL_Buffer buffer;
    unsigned char *out = (unsigned char *)luaL_buffinitsize(L, &buffer, size);
    luaL_pushresultsize(&buffer, cm_hist_encode(hist, out, size));
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

int cm_engine_lua_push_histogram(lua_State *L, int result)
{
    result = lua_absindex(L, result);
    if (luaL_getsubtable(L, LUA_REGISTRYINDEX, histograms_key) == 0) {
        lua_pop(L, 1);
        lua_pushnil(L);
        return 0;
    }
    lua_pushvalue(L, result);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    return !lua_isnil(L, -1);
}
