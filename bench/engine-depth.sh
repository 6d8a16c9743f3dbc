#!/usr/bin/env bash
# bench/engine-depth.sh: the engine's overhead against depth (ceph#32928 was rados bench's
# latency inflated at -t 128 by its completion handling). The null target with a fixed
# DELAY (1 ms) at threads = 1, 16, 256 and 1024, interleaved over ROUNDS rounds
# (bench/engine-scale.lua, SECONDS_RUN each): the mean and p50 latency at each depth, their
# medians, and each depth's mean against threads = 1 (the claim: within 1 %). Also the mean
# ops in flight each achieved. Needs no cluster. Load adds latency at every depth, most at
# the lowest (a lone op waits for its wake-up alone), so run it on a quiet machine, pinned
# (`taskset -c 1`).
# Environment: CEPHMARK (binary), ROUNDS (3), SECONDS_RUN (5), DELAY (0.001), DEPTHS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

bench_require --no-cluster
bench_build_helpers
SECONDS_RUN=${SECONDS_RUN:-5}
DELAY=${DELAY:-0.001}
DEPTHS=${DEPTHS:-1 16 256 1024}

for ((round = 1; round <= ROUNDS; round++)); do
    for depth in $DEPTHS; do
        measure "t$depth" "$CEPHMARK" run "$BENCH_DIR/engine-scale.lua" -p threads="$depth" \
            -p delay="$DELAY" -p seconds="$SECONDS_RUN"
        bench_log "round $round t=$depth: $(cat "$BENCH_TMP/t$depth.out")"
        for key in avg_us p50_us steady_avg_us in_flight ops; do
            sample "$key.$depth" "$(kv "t$depth" "$key")"
        done
    done
done

echo
echo "engine overhead against depth, null target, ${DELAY} s delay, ${SECONDS_RUN} s per run, $ROUNDS rounds, medians (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
base=$(med avg_us.1)
for depth in $DEPTHS; do
    printf 't=%-5s mean %s us (x%s of t=1), p50 %s us, steady-window mean %s us, in flight %s, ops/s %s\n' "$depth" \
        "$(med "avg_us.$depth")" "$(ratio "$(med "avg_us.$depth")" "$base")" "$(med "p50_us.$depth")" \
        "$(med "steady_avg_us.$depth")" "$(med "in_flight.$depth")" \
        "$(awk -v o="$(med "ops.$depth")" -v s="$SECONDS_RUN" 'BEGIN { printf "%.0f", o / s }')"
done
