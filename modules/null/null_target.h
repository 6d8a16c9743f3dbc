/* The null target: ops that move no data and complete after a configurable delay (fixed,
 * uniform random or none), of one kind or of a mix of kinds with no object behind them. It measures
 * the engine itself and lets engine tests run without a cluster; it does not stand in for Ceph. */
#ifndef CEPHMARK_NULL_TARGET_H
#define CEPHMARK_NULL_TARGET_H

#include "distrib.h"
#include "engine.h"
#include "mix.h"

#include <stdbool.h>

struct cm_null_target;

struct cm_null_config {
    uint64_t delay_ns;     /* fixed delay, or the low end of a random delay */
    uint64_t delay_max_ns; /* > delay_ns: uniform random delay in [delay_ns, delay_max_ns] */
    uint64_t block_size;   /* bytes each op pretends to move (for bandwidth figures) */
    uint64_t seed;
    /* with `pick`: each op also picks one of `objects` objects by `access`, as a target
     * with objects does, so that the chooser's cost can be measured on its own */
    bool pick;
    struct cm_access_spec access;
    uint64_t objects;
    uint64_t work; /* > 0: the target has this many ops of work, then says it is done (as a
                    * seq read over a short write run) */
    /* total > 0: each op's kind is drawn from these ratios (reads and writes move
     * block_size bytes, the other kinds none), from its own generator seeded by `seed`;
     * total 0: every op is of kind other and moves block_size bytes */
    struct cm_mix mix;
};

extern const struct cm_target_ops cm_null_target_ops;

/* NULL when out of memory. */
struct cm_null_target *cm_null_target_new(const struct cm_null_config *config, unsigned depth);
/* The sum of the objects picked (a check that picks happened, and their cost is real). */
uint64_t cm_null_target_picked(const struct cm_null_target *target);
void cm_null_target_free(struct cm_null_target *target);

#endif
