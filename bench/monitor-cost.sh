#!/usr/bin/env bash
# bench/monitor-cost.sh: what host monitors cost per phase (docs/distributed.md, "Host
# monitors"): with COUNTS monitors (`cephmark agent --monitor`, all on this host) it runs
# bench/monitor-readings.lua (PHASES phase-start and phase-end readings, no phase between)
# ROUNDS times, and prints per phase the coordinator's wall time and CPU (ms), a monitor's
# CPU (ms; with its idle CPU per second, the same less the idle share, the readings' own
# work, and of it one /proc scan of the host's ceph daemons, with their count) and the size
# of a monitor's figures (medians over the rounds). Then one of two monitors is killed
# (SIGKILL) before phase 3 of 12 and each phase's wall time is printed: the bounded wait.
# The figures are in docs/performance.md (section 13).
# Environment: CEPHMARK, CEPH_CONF (the cluster), ROUNDS (3), PHASES (100), COUNTS ("1 2 4").
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

KEYS="wall_ms_median wall_ms_p90 wall_ms_max coordinator_cpu_ms_per_phase monitors_cpu_ms_per_phase
    monitor_idle_cpu_ms_per_second monitors_cpu_ms_per_phase_less_idle reading_work_cpu_ms scan_cpu_ms ceph_daemons_on_host
    figures_bytes_per_monitor"
echo "host monitor readings, $PHASES phases (start and end readings, no phase between), $ROUNDS rounds"
printf '%-9s %9s %9s %9s %16s %12s %15s %10s %13s %9s %8s %14s\n' monitors wall_p50 wall_p90 wall_max \
    coordinator_cpu monitor_cpu monitor_idle/s less_idle reading_work one_scan daemons figures_bytes
for count in $COUNTS; do
    start_monitors "$count"
    for ((round = 1; round <= ROUNDS; round++)); do
        cluster_check "monitors $count round $round"
        MONITORS=$(names "$count") MONITOR_PIDS=$(pids) PHASES=$PHASES \
            "$CEPHMARK" run "$BENCH_DIR/monitor-readings.lua" >"$BENCH_TMP/m$count.$round.out" 2>"$BENCH_TMP/m$count.$round.err"
        for key in $KEYS; do
            sample "$count.$key" "$(kv "m$count.$round" "$key")"
        done
        bench_log "monitors $count round $round: $(cat "$BENCH_TMP/m$count.$round.out")"
    done
    row=("$count")
    for key in $KEYS; do row+=("$(med "$count.$key")"); done
    printf '%-9s %9s %9s %9s %16s %12s %15s %10s %13s %9s %8s %14s\n' "${row[@]}"
    stop_monitors
done

echo
echo "two monitors, bench-mon-2 killed (SIGKILL) before phase 3 of 12:"
start_monitors 2
victim=${MONITOR_PIDS[1]}
MONITORS=$(names 2) IDLE=0 PHASES=12 KILL_PID=$victim KILL_AT=3 "$CEPHMARK" run "$BENCH_DIR/monitor-readings.lua" \
    >"$BENCH_TMP/kill.out" 2>"$BENCH_TMP/kill.err"
grep '^phase=' "$BENCH_TMP/kill.out"
stop_monitors
rados -p cephmark-control rmomapkey monitors bench-mon-2 2>/dev/null || true
