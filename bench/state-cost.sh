#!/usr/bin/env bash
# bench/state-cost.sh: what the cluster-state readings around each phase cost
# (docs/cluster-state.md): each phase on a cluster takes two readings, one mon `status` and
# one `df` each. bench/state-readings.lua takes READINGS readings in one process (and, as
# the baseline, a process that only connects), ROUNDS times each, under bench/cpurun: the
# client CPU and the wall time of one reading are the medians' difference over READINGS.
# The figures are in docs/performance.md.
# Environment: CEPHMARK, CEPH_CONF (the cluster; with a mgr for PG figures), ROUNDS (3),
# READINGS (100), POOLS (2: pool names looked up in df).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

READINGS=${READINGS:-100}
POOLS=${POOLS:-2}
bench_require
bench_build_helpers

for ((round = 1; round <= ROUNDS; round++)); do
    for part in none read; do
        cluster_check "round $round ($part)"
        PART=$part READINGS=$READINGS POOLS=$POOLS measure "$part.$round" "$CEPHMARK" run "$BENCH_DIR/state-readings.lua"
        sample "$part.cpu" "$(cpu_of "$part.$round")"
        sample "$part.wall" "$(wall_of "$part.$round")"
    done
done
echo "cluster: $(cat "$BENCH_TMP/read.1.out")"
echo "one reading (status + df): $(awk -v a="$(med read.cpu)" -v b="$(med none.cpu)" -v n="$READINGS" \
    'BEGIN { printf "%.3f", (a - b) * 1000 / n }') ms of client CPU, $(awk -v a="$(med read.wall)" \
    -v b="$(med none.wall)" -v n="$READINGS" 'BEGIN { printf "%.3f", (a - b) * 1000 / n }') ms of wall time" \
    "(medians of $ROUNDS processes of $READINGS readings, less a process that only connects)"
echo "per phase: two readings"
