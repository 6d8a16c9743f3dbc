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
    /* set by cm_mix_prepare: kind k is drawn when a 63-bit draw is below bound[k] and not
     * below the bounds before it (the cumulative weights scaled to 2^63), so a draw costs
     * no division */
    uint64_t bound[CM_OP_KINDS];
};

/* Sets `total` and `bound` from `weight` (cm_lua_check_mix does it); total must be > 0. */
void cm_mix_prepare(struct cm_mix *mix);

/* The kind of the next op: kind k with probability weight[k] / total. Prepared, total > 0.
 * The bounds never decrease, so the kind is the number of bounds at or below the draw:
 * counted without a branch, since a mix's kinds follow no pattern a predictor could learn. */
static inline uint8_t cm_mix_pick(const struct cm_mix *mix, uint64_t *rng)
{
    uint64_t draw = cm_splitmix64(rng) >> 1;
    unsigned kind = 0;
    for (int k = 0; k < CM_OP_KINDS; k++)
        kind += draw >= mix->bound[k];
    return (uint8_t)kind;
}

/* Reads the mix table at `index` into `mix`: keys are the op names of `names` (CM_OP_KINDS
 * entries indexed by kind; NULL: that kind is not offered), values integers >= 0 that sum
 * to more than 0. Raises "<what>: mix: ..." on anything else. */
void cm_lua_check_mix(lua_State *L, int index, const char *what, const char *const *names,
                      struct cm_mix *mix);

#endif
