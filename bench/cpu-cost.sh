#!/usr/bin/env bash
# bench/cpu-cost.sh: what the CPU telemetry of a phase (two /proc scans, the figures
# and their line; stdlib/cephmark/cpu.lua) costs the client: bench/cpu-cost.lua (4K writes,
# SECONDS each, 16 in flight, size 3) with telemetry on and with `telemetry = false`,
# interleaved over ROUNDS rounds (the order alternates), the whole cephmark process's CPU
# (cpurun) divided by the write phase's ops, and the phase's IOPS. Prints medians and the
# median of the per-round ratios.
# Environment: CEPHMARK, CEPH_CONF (the cluster), ROUNDS (3), SECONDS (5).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SECONDS_PER_PHASE=${SECONDS:-5}
bench_require
bench_build_helpers

run_one() {
    local tag=$1 telemetry=$2
    TELEMETRY=$telemetry measure "$tag" "$CEPHMARK" run "$BENCH_DIR/cpu-cost.lua" \
        -p seconds="$SECONDS_PER_PHASE" -o "$BENCH_TMP/$tag-results"
    local line ops iops
    line=$(grep '^  = write' "$BENCH_TMP/$tag.out")
    ops=$(awk '{ print $4 }' <<<"$line")
    iops=$(sed -E 's/.* ([0-9.]+) IOPS.*/\1/' <<<"$line")
    sample "$tag.cpu_us" "$(awk -v c="$(cpu_of "$tag")" -v n="$ops" 'BEGIN { printf "%.2f\n", c / n * 1e6 }')"
    sample "$tag.iops" "$iops"
    bench_log "round $round $tag: $ops ops, $iops IOPS, $(cpu_of "$tag") s CPU; $(grep 'cpu/op' "$BENCH_TMP/$tag.out" | head -1 || true)"
    cluster_check "the next run"
}

for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then run_one on true; run_one off false; else run_one off false; run_one on true; fi
done

echo
echo "telemetry cost, $ROUNDS interleaved rounds, 4K writes ${SECONDS_PER_PHASE}s x 16, medians (ratio: median of per-round on/off ratios)"
printf '%-44s %10s %10s %8s\n' case off on ratio
printf '%-44s %10s %10s %8s\n' "client CPU per write op, whole process (us)" "$(med off.cpu_us)" "$(med on.cpu_us)" "$(ratios on.cpu_us off.cpu_us | median)"
printf '%-44s %10s %10s %8s\n' "write IOPS" "$(med off.iops)" "$(med on.iops)" "$(ratios on.iops off.iops | median)"
echo "per round, off: $(samples off.cpu_us) us; on: $(samples on.cpu_us) us"
echo "per round IOPS, off: $(samples off.iops); on: $(samples on.iops)"
