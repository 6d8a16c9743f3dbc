/* The `cephmark.null` Lua module: runs the op engine against the null target (ops that
 * complete after a fixed or random delay and move no data), to measure the engine itself
 * and to test scenarios without a cluster. It does not stand in for Ceph. */
#include "bench_lua.h"
#include "distrib_lua.h"
#include "null_target.h"
#include "registry.h"

#include <lauxlib.h>
#include <stddef.h>

struct null_options {
    const char *access;
    uint64_t block_size;
    double delay, delay_max;
    int64_t objects, seed;
    int64_t work;
    int mix; /* stack index of the mix table, 0 when absent */
};

#define NULL_OPTION(field) offsetof(struct null_options, field)

static const struct cm_option null_options[] = {
    {"access", CM_OPTION_STRING, NULL_OPTION(access), "uniform", 0, 0, NULL, CM_OPTION_NO_RESULT,
     "each op picks one of `objects` objects: uniform, zipf:θ, pareto:h or hotspot:A/B"},
    {"block_size", CM_OPTION_SIZE, NULL_OPTION(block_size), "4096", 0, 0, NULL, 0,
     "bytes each op counts as moved (for bandwidth figures)"},
    {"delay", CM_OPTION_DURATION, NULL_OPTION(delay), "0", 0, 0, NULL, CM_OPTION_NO_RESULT,
     "each op completes after this long (the low end with delay_max)"},
    {"delay_max", CM_OPTION_DURATION, NULL_OPTION(delay_max), "0", 0, 0, NULL, CM_OPTION_NO_RESULT,
     "above delay: a uniform random delay between the two"},
    {"mix", CM_OPTION_TABLE, NULL_OPTION(mix), NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "ratios of op kinds with no object behind them, e.g. {read = 60, write = 30, stat = 5, "
     "remove = 5}: the engine's ceiling with a mix"},
    {"objects", CM_OPTION_INTEGER, NULL_OPTION(objects), "1000000", 1, INT64_MAX, NULL,
     CM_OPTION_NO_RESULT,
     "with access (or this option): the objects each op picks from (it moves nothing)"},
    {"seed", CM_OPTION_INTEGER, NULL_OPTION(seed), "1", 0, INT64_MAX, NULL, CM_OPTION_NO_RESULT,
     "seed of the random delays, of the mix's draws and of the object picks"},
    {"work", CM_OPTION_INTEGER, NULL_OPTION(work), "0", 0, INT64_MAX, NULL, CM_OPTION_NO_RESULT,
     "the target has work for this many ops, then says it is done, as a seq read over a short "
     "write run does (0: no end)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL},
};

/* The kinds a null mix offers. */
static const char *const null_mix_names[CM_OP_KINDS] = {[CM_OP_READ] = "read",
                                                        [CM_OP_WRITE] = "write",
                                                        [CM_OP_REMOVE] = "remove",
                                                        [CM_OP_STAT] = "stat"};

/* The hooks' own: the mix and the access, parsed once in prepare. */
struct null_state {
    struct cm_mix mix;
    struct cm_access_spec access;
};

static void null_prepare(struct cm_bench *b)
{
    const struct null_options *o = b->options;
    struct null_state *state = b->state;
    if (o->delay_max > 0 && o->delay_max < o->delay)
        luaL_error(b->L, "null.bench: delay_max must not be below delay");
    if (o->mix)
        cm_lua_check_mix(b->L, o->mix, "null.bench", null_mix_names, &state->mix);
    cm_lua_access_spec(b->L, o->access, "null.bench", &state->access);
}

static void null_open(struct cm_bench *b)
{
    const struct null_options *o = b->options;
    const struct null_state *state = b->state;
    struct cm_null_config config = {
        .delay_ns = (uint64_t)(o->delay * 1e9),
        .delay_max_ns = (uint64_t)(o->delay_max * 1e9),
        .block_size = o->block_size,
        .seed = (uint64_t)o->seed,
        .pick = cm_bench_given(b, "access") || cm_bench_given(b, "objects"),
        .access = state->access,
        .objects = (uint64_t)o->objects,
        .work = (uint64_t)o->work,
        .mix = state->mix,
    };
    b->ops = &cm_null_target_ops;
    b->target = cm_null_target_new(&config, b->config.depth);
    if (!b->target)
        luaL_error(b->L, "null.bench: out of memory");
}

static void null_result(struct cm_bench *b)
{
    cm_result_string(b->L, "op", "null");
    if (cm_bench_given(b, "access") || cm_bench_given(b, "objects")) {
        const struct null_options *o = b->options;
        const struct null_state *state = b->state;
        char access[64];
        cm_access_format(&state->access, access, sizeof access);
        cm_result_string(b->L, "access", access);
        cm_result_integer(b->L, "objects", (uint64_t)o->objects);
        cm_result_integer(b->L, "picked_sum", cm_null_target_picked(b->target));
    }
}

static void null_close(struct cm_bench *b)
{
    cm_null_target_free(b->target);
    b->target = NULL;
}

const struct cm_bench_def cm_null_bench = {
    .what = "null.bench",
    .name = "null",
    .options = null_options,
    .options_size = sizeof(struct null_options),
    .state_size = sizeof(struct null_state),
    .default_seconds = 10,
    .prepare = null_prepare,
    .open = null_open,
    .result = null_result,
    .close = null_close,
};

int luaopen_cephmark_null(lua_State *L)
{
    /* null.bench{delay=, delay_max=, block_size=, seed=, access=, objects=, threads=, seconds=,
     *   ops=, bytes=, rate=, warmup=, work=, on_second=} -> result table */
    lua_newtable(L);
    cm_bench_set_functions(L, &cm_null_bench);
    return 1;
}
