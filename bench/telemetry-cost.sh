#!/usr/bin/env bash
# bench/telemetry-cost.sh: what reading the OSDs' perf counters around each phase costs
# (docs/telemetry.md): bench/telemetry-cost.lua (OPS 4K writes, then their cleanup) with
# telemetry on and off, interleaved over ROUNDS rounds (on, off, then off, on). Per side:
# the client's CPU per write over the write phase alone (the engine's getrusage, as
# cpu.client_per_op records it) and over the whole cephmark process (user + sys from
# bench/cpurun, divided by OPS: the same work on both sides), the write phase's IOPS, and with telemetry
# on the time each reading took (cluster.osd.collect_seconds). Prints medians and the
# median of the per-round ratios. The figures are in docs/performance.md.
# Environment: CEPHMARK, CEPH_CONF (the cluster), ROUNDS (3), OPS (6000), THREADS (16),
# RUNS_ONLY (1: the interleaved runs alone, not the parts and the many-phase runs after them).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

OPS=${OPS:-6000}
THREADS=${THREADS:-16}
bench_require jq
bench_build_helpers
mem_guard 2 "the telemetry cost benchmark"

run_one() {
    local side=$1 dir=$BENCH_TMP/$1.$round
    cluster_check "the $side run of round $round"
    CEPHMARK_BENCH_TELEMETRY=$side measure "$side.$round" "$CEPHMARK" run "$BENCH_DIR/telemetry-cost.lua" \
        -p ops="$OPS" -p threads="$THREADS" -p progress=false -o "$dir"
    local write_iops cpu
    write_iops=$(jq '.phases[] | select(.name == "write") | .result.iops | floor' "$dir/results.json")
    cpu=$(cpu_of "$side.$round")
    sample "$side.cpu_per_write_us" "$(awk -v c="$cpu" -v o="$OPS" 'BEGIN { printf "%.2f", c / o * 1e6 }')"
    sample "$side.inphase_cpu_per_write_us" "$(kv "$side.$round" inphase_us_per_op)"
    sample "$side.write_iops" "$write_iops"
    if [[ $side == on ]]; then
        jq -r '.phases[] | .cluster.osd.collect_seconds | .before, .after' "$dir/results.json" |
            while read -r s; do sample collect_ms "$(awk -v s="$s" 'BEGIN { printf "%.2f", s * 1000 }')"; done
    fi
    bench_log "round $round $side: $cpu s CPU, write $write_iops IOPS"
    settle
}

for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then run_one on; run_one off; else run_one off; run_one on; fi
done

echo
echo "telemetry cost: $OPS 4K writes and their cleanup, $THREADS in flight, $ROUNDS interleaved rounds"
printf '%-34s %10s %10s %8s\n' "" off on "on/off"
for key in inphase_cpu_per_write_us cpu_per_write_us write_iops; do
    printf '%-34s %10s %10s %8s\n' "$key" "$(med off.$key)" "$(med on.$key)" "$(ratios on.$key off.$key | median)"
done
echo "one reading of every OSD (ms): median $(med collect_ms), all: $(samples collect_ms)"
# RUNS_ONLY=1: the side-by-side runs above and nothing more
[[ ${RUNS_ONLY:-0} == 1 ]] && exit 0

# The parts on their own: one reading of every OSD (client CPU over READINGS readings on the
# run's connection, less a process that only connects), ROUNDS times each.
READINGS=${READINGS:-100}
for ((round = 1; round <= ROUNDS; round++)); do
    for part in none read; do
        PART=$part READINGS=$READINGS measure "part.$part.$round" "$CEPHMARK" run "$BENCH_DIR/telemetry-readings.lua"
        sample "part.$part" "$(cpu_of "part.$part.$round")"
        [[ $part == read ]] && sample "part.read.wall" "$(wall_of "part.$part.$round")"
    done
done
osds=$(sed -n 's/^osds=\([0-9]*\).*/\1/p' "$BENCH_TMP/part.read.1.out")
echo "one reading of $osds OSDs: $(awk -v a="$(med part.read)" -v b="$(med part.none)" -v n="$READINGS" 'BEGIN { printf "%.2f", (a - b) * 1000 / n }') ms of client CPU," \
    "$(awk -v w="$(med part.read.wall)" -v n="$READINGS" 'BEGIN { printf "%.2f", w * 1000 / n }') ms of wall time (medians of $ROUNDS processes of $READINGS readings)"

# Per phase: PHASES write phases of PHASE_OPS 4K writes each (a few ops: the phases' own work
# is small), with telemetry on and off, interleaved; the difference in the whole process's
# client CPU divided by the phases is what one phase's telemetry costs: its readings,
# /proc scans, summary line and the larger results written after it.
PHASES=${PHASES:-40}
PHASE_OPS=${PHASE_OPS:-10}
for ((round = 1; round <= ROUNDS; round++)); do
    for side in on off; do
        CEPHMARK_BENCH_TELEMETRY=$side measure "phases.$side.$round" "$CEPHMARK" run "$BENCH_DIR/telemetry-cost.lua" \
            -p ops=$((PHASES * PHASE_OPS)) -p phases="$PHASES" -p threads=4 -p progress=false -o "$BENCH_TMP/phases.$side.$round"
        sample "phases.$side" "$(cpu_of "phases.$side.$round")"
    done
    sample phases.diff "$(awk -v a="$(cpu_of "phases.on.$round")" -v b="$(cpu_of "phases.off.$round")" -v n="$PHASES" 'BEGIN { printf "%.3f", (a - b) * 1000 / n }')"
done
echo "per phase ($PHASES phases of $PHASE_OPS writes): $(med phases.diff) ms of client CPU (median of $ROUNDS rounds: $(samples phases.diff))," \
    "whole runs off $(med phases.off) s, on $(med phases.on) s"

