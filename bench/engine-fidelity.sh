#!/usr/bin/env bash
# bench/engine-fidelity.sh: the engine's measurement fidelity on the null target
# (bench/engine-fidelity.lua: a fixed 1 ms delay at 16 in flight, and an open loop at 500
# ops/s), over ROUNDS runs. Prints each round and the medians: p50 against the delay (the
# claim: within 1 % on a quiet machine), ops/s against what 16 slots of 1 ms allow, and the
# open loop's p50 from the actual and the intended start. Needs no cluster. Run it on a quiet
# machine (and pinned, e.g. `taskset -c 1`): load only adds latency, which is why the unit
# tests no longer assert these figures (docs/testing.md).
# Environment: CEPHMARK (binary), ROUNDS (3).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

bench_require --no-cluster
bench_build_helpers

for ((round = 1; round <= ROUNDS; round++)); do
    measure fidelity "$CEPHMARK" run "$BENCH_DIR/engine-fidelity.lua"
    bench_log "round $round: $(cat "$BENCH_TMP/fidelity.out")"
    for key in closed_p50_us closed_p50_error_pct closed_p99_us closed_iops_of_ideal_pct closed_elapsed_s \
        open_started open_p50_us open_p50_error_pct open_p50_intended_us; do
        sample "$key" "$(kv fidelity "$key")"
    done
done

echo
echo "engine fidelity on the null target, $ROUNDS rounds, medians (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
printf 'closed loop, 16 in flight, 1 ms delay, 2 s: p50 %s us (%+.3f %%), p99 %s us, %s %% of 16000 ops/s, elapsed %s s\n' \
    "$(med closed_p50_us)" "$(med closed_p50_error_pct)" "$(med closed_p99_us)" "$(med closed_iops_of_ideal_pct)" \
    "$(med closed_elapsed_s)"
printf 'open loop, 500 ops/s, 1 ms delay, 1 s: %s ops started, p50 %s us from the actual start (%+.3f %%), %s us from the intended one\n' \
    "$(med open_started)" "$(med open_p50_us)" "$(med open_p50_error_pct)" "$(med open_p50_intended_us)"
echo "p50 errors per round (closed): $(samples closed_p50_error_pct)"
echo "claim: the closed-loop p50 within 1 % of the delay: $(awk -v e="$(med closed_p50_error_pct)" 'BEGIN { print (e < 1 && e > -1) ? "met" : "missed" }')"
