/* Per-kind results of the engine on the null target: a mix of read, write, stat and remove
 * with exact counts per kind (the seeded draws replayed here), the kinds' bytes and
 * histograms, a target's own kind names, the Lua result's by_op table, and a one-kind run
 * that keeps its result as it was (no by_op). Only counts are asserted, never speeds. */
#include "check.h"
#include "engine.h"
#include "engine_lua.h"
#include "mix.h"
#include "null_target.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>

#define OPS   5000
#define BLOCK 4096

static const struct cm_mix test_mix = {
    .weight = {[CM_OP_READ] = 60, [CM_OP_WRITE] = 30, [CM_OP_STAT] = 5, [CM_OP_REMOVE] = 5},
    .total = 100};

static int run_null(const struct cm_engine_config *config, const struct cm_null_config *null,
                    const struct cm_target_ops *ops, struct cm_engine_result *result)
{
    struct cm_null_target *target = cm_null_target_new(null, config->depth);
    int rc = cm_engine_run(config, ops, target, result);
    cm_null_target_free(target);
    return rc;
}

/* The kinds the null target draws for its first `ops` ops with `seed` (its own draws). */
static void expected_counts(uint64_t seed, uint64_t ops, uint64_t counts[CM_OP_KINDS])
{
    uint64_t rng = seed;
    for (int kind = 0; kind < CM_OP_KINDS; kind++)
        counts[kind] = 0;
    for (uint64_t i = 0; i < ops; i++)
        counts[cm_mix_pick(&test_mix, &rng)]++;
}

static void check_kinds(const struct cm_engine_result *result, const uint64_t want[CM_OP_KINDS])
{
    uint64_t sum = 0;
    for (int kind = 0; kind < CM_OP_KINDS; kind++) {
        const struct cm_engine_kind *k = &result->kinds[kind];
        CHECK_MSG(k->ops == want[kind], "%s: %llu ops, want %llu", cm_op_kind_name(kind),
                  (unsigned long long)k->ops, (unsigned long long)want[kind]);
        uint64_t block = kind == CM_OP_READ || kind == CM_OP_WRITE ? BLOCK : 0;
        CHECK(k->bytes == k->ops * block);
        CHECK(k->errors == 0);
        /* a kind that never completed has no histogram; the others count each op once */
        CHECK(want[kind] ? k->latency && cm_hist_count(k->latency) == want[kind]
                         : k->latency == NULL);
        sum += k->ops;
    }
    CHECK(sum == result->ops);
    CHECK(result->latency_read == result->kinds[CM_OP_READ].latency);
    CHECK(result->latency_write == result->kinds[CM_OP_WRITE].latency);
}

static void test_mixed_counts(unsigned depth, uint64_t delay_ns, uint64_t seed)
{
    struct cm_engine_config config = {.depth = depth, .max_ops = OPS};
    struct cm_null_config null = {
        .delay_ns = delay_ns, .block_size = BLOCK, .seed = seed, .mix = test_mix};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &cm_null_target_ops, &result) == 0);
    CHECK(result.ops == OPS);
    uint64_t want[CM_OP_KINDS];
    expected_counts(seed, OPS, want);
    CHECK(want[CM_OP_READ] && want[CM_OP_WRITE] && want[CM_OP_STAT] && want[CM_OP_REMOVE]);
    check_kinds(&result, want);
    CHECK(cm_engine_kinds_used(&result) == 4);
    CHECK_STR(result.kinds[CM_OP_STAT].name, "stat");
    CHECK_STR(result.kinds[CM_OP_REMOVE].name, "remove");
    cm_engine_result_free(&result);
}

/* Reads the integer at result.by_op[name][field] (on top of the stack: the result). */
static lua_Integer by_op_field(lua_State *L, const char *name, const char *field)
{
    lua_getfield(L, -1, "by_op");
    lua_getfield(L, -1, name);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 2);
        return -1;
    }
    lua_getfield(L, -1, field);
    lua_Integer value = lua_tointeger(L, -1);
    lua_pop(L, 3);
    return value;
}

/* A target's own names reach the result, and the Lua result carries them in by_op. */
static void test_named_kinds_in_lua(void)
{
    static const char *const names[CM_OP_KINDS] = {
        [CM_OP_READ] = "get", [CM_OP_WRITE] = "put", [CM_OP_STAT] = "head"};
    struct cm_target_ops ops = cm_null_target_ops;
    ops.kind_names = names;
    struct cm_engine_config config = {.depth = 4, .max_ops = OPS};
    struct cm_null_config null = {.block_size = BLOCK, .seed = 3, .mix = test_mix};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &ops, &result) == 0);
    uint64_t want[CM_OP_KINDS];
    expected_counts(3, OPS, want);
    CHECK_STR(result.kinds[CM_OP_READ].name, "get");
    CHECK_STR(result.kinds[CM_OP_REMOVE].name, "remove"); /* NULL entry: the generic name */
    lua_State *L = luaL_newstate();
    cm_engine_lua_push_result(L, &result, &config);
    CHECK(by_op_field(L, "get", "ops") == (lua_Integer)want[CM_OP_READ]);
    CHECK(by_op_field(L, "put", "bytes") == (lua_Integer)(want[CM_OP_WRITE] * BLOCK));
    CHECK(by_op_field(L, "head", "ops") == (lua_Integer)want[CM_OP_STAT]);
    CHECK(by_op_field(L, "remove", "errors") == 0);
    lua_getfield(L, -1, "by_op");
    lua_getfield(L, -1, "get");
    lua_getfield(L, -1, "latency");
    lua_getfield(L, -1, "count");
    CHECK(lua_tointeger(L, -1) == (lua_Integer)want[CM_OP_READ]);
    lua_close(L);
    cm_engine_result_free(&result);
}

/* One kind: the result has no by_op, and the kind's share is the whole. */
static void test_single_kind(void)
{
    struct cm_engine_config config = {.depth = 8, .max_ops = 1000};
    struct cm_null_config null = {.block_size = BLOCK};
    struct cm_engine_result result;
    CHECK(run_null(&config, &null, &cm_null_target_ops, &result) == 0);
    CHECK(cm_engine_kinds_used(&result) == 1);
    CHECK(result.kinds[CM_OP_OTHER].ops == 1000);
    CHECK(result.kinds[CM_OP_OTHER].bytes == 1000 * BLOCK);
    CHECK(result.latency_read == NULL && result.latency_write == NULL);
    lua_State *L = luaL_newstate();
    cm_engine_lua_push_result(L, &result, &config);
    lua_getfield(L, -1, "by_op");
    CHECK(lua_isnil(L, -1));
    lua_close(L);
    cm_engine_result_free(&result);
}

int main(void)
{
    test_mixed_counts(1, 0, 7);
    test_mixed_counts(32, 0, 11);
    test_mixed_counts(16, 20000, 5);
    test_named_kinds_in_lua();
    test_single_kind();
    return check_summary("engine_kinds");
}
