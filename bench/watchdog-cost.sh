#!/usr/bin/env bash
# bench/watchdog-cost.sh: what the interrupt watchdog (a count hook on every Lua thread,
# runtime/interrupt.c) costs: CPU per iteration of a pure Lua loop (bench/lua-loop.lua) and
# CPU per op of scripted workers and of the native engine on the null target
# (bench/scripted-null.lua), for CEPHMARK against CEPHMARK_BASE (a build without the hook),
# interleaved over ROUNDS rounds, each command pinned to one CPU (PIN_CPU, default 1).
# Prints medians and the median of the per-round ratios. Needs no cluster.
# Environment: CEPHMARK, CEPHMARK_BASE (both binaries), ROUNDS (3), PIN_CPU (1).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

PIN_CPU=${PIN_CPU:-1}
[[ -x ${CEPHMARK_BASE:-} ]] || { echo "set CEPHMARK_BASE to the binary to compare with" >&2; exit 2; }
bench_require --no-cluster taskset

run_one() {
    local tag=$1 binary=$2
    taskset -c "$PIN_CPU" "$binary" run "$BENCH_DIR/lua-loop.lua" >"$BENCH_TMP/$tag.loop"
    sample "$tag.loop" "$(tr ' ' '\n' <"$BENCH_TMP/$tag.loop" | sed -n 's/^loop_ns_per_iteration=//p')"
    taskset -c "$PIN_CPU" "$binary" run "$BENCH_DIR/scripted-null.lua" -p seconds=3 >"$BENCH_TMP/$tag.null"
    sample "$tag.scripted" "$(awk '/^scripted/ { print $(NF - 2) }' "$BENCH_TMP/$tag.null")"
    sample "$tag.native" "$(awk '/^native/ { print $(NF - 2) }' "$BENCH_TMP/$tag.null")"
    bench_log "round $round $tag: $(cat "$BENCH_TMP/$tag.loop"); $(paste -sd' ' "$BENCH_TMP/$tag.null")"
}

for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then run_one base "$CEPHMARK_BASE"; run_one new "$CEPHMARK"; else run_one new "$CEPHMARK"; run_one base "$CEPHMARK_BASE"; fi
done

echo
echo "watchdog cost, $ROUNDS interleaved rounds on CPU $PIN_CPU, medians (CPU ns; ratio: median of per-round ratios)"
printf '%-40s %10s %10s %8s\n' case base new ratio
for case in loop scripted native; do
    label=$case
    [[ $case == loop ]] && label="pure Lua loop, per iteration"
    [[ $case == scripted ]] && label="scripted workers w:op(), per op"
    [[ $case == native ]] && label="native null target, per op"
    printf '%-40s %10s %10s %8s\n' "$label" "$(med base.$case)" "$(med new.$case)" "$(ratios new.$case base.$case | median)"
done
