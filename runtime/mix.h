/* Operation mixes: a phase that draws each op's kind from integer ratios such as
 * `mix = {read = 60, write = 30, stat = 5, remove = 5}`. The draw is one splitmix64 step,
 * so a seeded phase repeats its sequence of kinds; the Lua check gives bad ratios and
 * unknown names one line (exit 2). */
#ifndef CEPHMARK_MIX_H
#define CEPHMARK_MIX_H

#include "engine.h"
#include "splitmix.h"

#include <lua.h>
#include <stdbool.h>
#include <stdint.h>

struct cm_mix {
    uint32_t weight[CM_OP_KINDS]; /* indexed by enum cm_op_kind; 0: never drawn */
    uint64_t total;               /* their sum; 0: no mix */
};

/* The kind of the next op: kind k with probability weight[k] / total. `mix->total` > 0. */
static inline uint8_t cm_mix_pick(const struct cm_mix *mix, uint64_t *rng)
{
    uint64_t ticket = cm_splitmix64(rng) % mix->total;
    uint8_t kind = 0;
    while (ticket >= mix->weight[kind])
        ticket -= mix->weight[kind++];
    return kind;
}

/* Reads the mix table at `index` into `mix`: keys are the op names of `names` (CM_OP_KINDS
 * entries indexed by kind; NULL: that kind is not offered), values integers >= 0 that sum
 * to more than 0. Raises "<what>: mix: ..." on anything else. */
void cm_lua_check_mix(lua_State *L, int index, const char *what, const char *const *names,
                      struct cm_mix *mix);

#endif
