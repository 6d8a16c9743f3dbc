#!/usr/bin/env bash
# bench/monitor-cost.sh: what host monitors cost per phase (docs/distributed.md, "Host
# monitors"): with COUNTS monitors (`cephmark agent --monitor`, all on this host) it runs
# bench/monitor-readings.lua (PHASES phase-start and phase-end readings, no phase between)
# ROUNDS times, and prints per phase the coordinator's wall time and CPU, the monitors' CPU
# and the size of a monitor's figures. Then one of two monitors is killed (SIGKILL) before
# phase 3 of 12 and each phase's wall time is printed: the bounded wait. The figures are in
# docs/performance.md. Environment: CEPHMARK, CEPH_CONF (the cluster), ROUNDS (3),
# PHASES (100), COUNTS ("1 2 4").
set -euo pipefail
source "$(dirname "$0")/lib.sh"

PHASES=${PHASES:-100}
COUNTS=${COUNTS:-1 2 4}
bench_require
MONITOR_PIDS=()
stop_monitors() {
    local pid
    for pid in "${MONITOR_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${MONITOR_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    MONITOR_PIDS=()
}
trap 'stop_monitors; bench_cleanup_all' EXIT

# start_monitors N: N monitors named bench-mon-1..N, registered before it returns
start_monitors() {
    local i
    for ((i = 1; i <= $1; i++)); do
        "$CEPHMARK" agent --monitor --name "bench-mon-$i" >"$BENCH_TMP/mon-$i.log" 2>&1 &
        MONITOR_PIDS+=($!)
    done
    for ((i = 1; i <= $1; i++)); do
        for _ in $(seq 1 100); do grep -q "registered in pool" "$BENCH_TMP/mon-$i.log" && break; sleep 0.1; done
    done
}
names() { local i list=; for ((i = 1; i <= $1; i++)); do list+=${list:+,}bench-mon-$i; done; echo "$list"; }
pids() { local IFS=,; echo "${MONITOR_PIDS[*]}"; }

echo "host monitor readings, $PHASES phases (start and end readings, no phase between), $ROUNDS rounds"
printf '%-9s %14s %14s %14s %20s %20s %14s\n' monitors wall_ms_median wall_ms_p90 wall_ms_max coordinator_cpu_ms monitor_cpu_ms figures_bytes
for count in $COUNTS; do
    start_monitors "$count"
    for ((round = 1; round <= ROUNDS; round++)); do
        cluster_check "monitors $count round $round"
        MONITORS=$(names "$count") MONITOR_PIDS=$(pids) PHASES=$PHASES \
            "$CEPHMARK" run "$BENCH_DIR/monitor-readings.lua" >"$BENCH_TMP/m$count.$round.out" 2>"$BENCH_TMP/m$count.$round.err"
        for key in wall_ms_median wall_ms_p90 wall_ms_max coordinator_cpu_ms_per_phase monitors_cpu_ms_per_phase figures_bytes_per_monitor; do
            sample "$count.$key" "$(kv "m$count.$round" "$key")"
        done
        bench_log "monitors $count round $round: $(cat "$BENCH_TMP/m$count.$round.out")"
    done
    printf '%-9s %14s %14s %14s %20s %20s %14s\n' "$count" "$(med "$count.wall_ms_median")" "$(med "$count.wall_ms_p90")" \
        "$(med "$count.wall_ms_max")" "$(med "$count.coordinator_cpu_ms_per_phase")" \
        "$(med "$count.monitors_cpu_ms_per_phase")" "$(med "$count.figures_bytes_per_monitor")"
    stop_monitors
done

echo
echo "two monitors, bench-mon-2 killed (SIGKILL) before phase 3 of 12:"
start_monitors 2
victim=${MONITOR_PIDS[1]}
MONITORS=$(names 2) PHASES=12 KILL_PID=$victim KILL_AT=3 "$CEPHMARK" run "$BENCH_DIR/monitor-readings.lua" \
    >"$BENCH_TMP/kill.out" 2>"$BENCH_TMP/kill.err"
grep '^phase=' "$BENCH_TMP/kill.out"
stop_monitors
rados -p cephmark-control rmomapkey monitors bench-mon-2 2>/dev/null || true
