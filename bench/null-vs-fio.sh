#!/usr/bin/env bash
# bench/null-vs-fio.sh: the ceiling of cephmark's op engine (the null target through
# `cephmark run bench/null.lua`: ops complete at once, no data moves) against fio's null
# ioengine (one job, --iodepth=16 --rw=randread --bs=4k, time based), interleaved over ROUNDS
# rounds. Prints medians of ops/s (fio: read IOPS from its JSON output) and of CPU per op
# (user+sys of the process tree, from wait4), and the cephmark/fio ratios.
# Target: cephmark >= 1.5x fio null's ops/s. Needs no cluster.
# Environment: CEPHMARK (binary), ROUNDS (3), SECONDS_RUN (5), DEPTH (16).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SECONDS_RUN=${SECONDS_RUN:-5}
DEPTH=${DEPTH:-16}

bench_require --no-cluster fio jq
bench_build_helpers

run_cephmark() {
    measure cm "$CEPHMARK" run "$BENCH_DIR/null.lua" -p threads="$DEPTH" -p seconds="$SECONDS_RUN" -p block_size=4096
    local ops seconds
    ops=$(kv cm ops)
    seconds=$(kv cm seconds)
    sample cm.ops_s "$(awk -v o="$ops" -v s="$seconds" 'BEGIN { printf "%.1f", o / s }')"
    sample cm.cpu_ns "$(awk -v c="$(cpu_of cm)" -v o="$ops" 'BEGIN { printf "%.2f", c * 1e9 / o }')"
    bench_log "round $round cephmark null: $ops ops in $seconds s, cpu $(cpu_of cm) s"
}

run_fio() {
    measure fio fio --name=null --ioengine=null --iodepth="$DEPTH" --rw=randread --bs=4k --size=1g \
        --time_based --runtime="$SECONDS_RUN" --numjobs=1 --output-format=json
    local iops ops
    iops=$(jq '.jobs[0].read.iops' "$BENCH_TMP/fio.out")
    ops=$(jq '.jobs[0].read.total_ios' "$BENCH_TMP/fio.out")
    sample fio.ops_s "$(fmt "$iops" '%.1f')"
    sample fio.cpu_ns "$(awk -v c="$(cpu_of fio)" -v o="$ops" 'BEGIN { printf "%.2f", c * 1e9 / o }')"
    bench_log "round $round fio null: $ops ops, $iops IOPS, cpu $(cpu_of fio) s"
}

for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then run_cephmark; run_fio; else run_fio; run_cephmark; fi
done

echo
echo "null engine ceiling: cephmark (bench/null.lua) vs fio --ioengine=null, depth $DEPTH, 4K, ${SECONDS_RUN}s runs,"
echo "$ROUNDS interleaved rounds, medians (CPU = user+sys of the process tree, startup included, per op)"
printf '%-10s %14s %12s\n' tool "ops/s" "CPU ns/op"
printf '%-10s %14.0f %12.1f\n' cephmark "$(med cm.ops_s)" "$(med cm.cpu_ns)"
printf '%-10s %14.0f %12.1f\n' fio "$(med fio.ops_s)" "$(med fio.cpu_ns)"
echo "ops/s ratio cephmark/fio: $(ratio "$(med cm.ops_s)" "$(med fio.ops_s)") (target >= 1.5);" \
    "per round: $(ratios cm.ops_s fio.ops_s | paste -sd' ')"
echo "CPU per op ratio cephmark/fio: $(ratio "$(med cm.cpu_ns)" "$(med fio.cpu_ns)");" \
    "per round: $(ratios cm.cpu_ns fio.cpu_ns | paste -sd' ')"
