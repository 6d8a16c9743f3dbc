#!/usr/bin/env bash
# bench/space-amplification.sh: the measured space amplification on memstore and on
# bluestore (docs/space.md): for each store, a 3-OSD cluster of its own with a mgr
# (`cephmark cluster up --mgr [--bluestore]`, removed at the end), then for each object
# size a run of bench/space-amplification.lua (a size-3 pool and an EC 2+1 pool, created
# and deleted by the run). STATS_PERIOD sets mgr_stats_period (default: Ceph's 5 s) and
# HEARTBEAT osd_heartbeat_interval (default: Ceph's 6 s) on these clusters, to see the
# waits at Ceph's defaults or shorter.
# Environment: CEPHMARK, STORES ("memstore bluestore"), SIZES ("4M:8 64K:64 4K:200 1K:200",
# size:objects), STATS_PERIOD, HEARTBEAT.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_require --no-cluster

STORES=${STORES:-memstore bluestore}
SIZES=${SIZES:-4M:8 64K:64 4K:200 1K:200}
clusters=()
finish() { for dir in "${clusters[@]}"; do "$CEPHMARK" cluster down --dir "$dir" >/dev/null 2>&1 || true; done; }
trap finish EXIT

for store in $STORES; do
    dir=$BENCH_TMP/$store-cluster
    clusters+=("$dir")
    flags=(--mgr --quiet)
    [[ $store == bluestore ]] && flags+=(--bluestore)
    "$CEPHMARK" cluster up --dir "$dir" "${flags[@]}"
    [[ -n ${STATS_PERIOD:-} ]] && ceph -c "$dir/ceph.conf" config set mgr mgr_stats_period "$STATS_PERIOD"
    [[ -n ${HEARTBEAT:-} ]] && ceph -c "$dir/ceph.conf" config set osd osd_heartbeat_interval "$HEARTBEAT"
    for item in $SIZES; do
        CEPH_CONF=$dir/ceph.conf "$CEPHMARK" run "$BENCH_DIR/space-amplification.lua" -p progress=false \
            -p store="$store" -p block_size="${item%%:*}" -p ops="${item##*:}" -o "$BENCH_TMP/$store-${item%%:*}" |
            grep -E "^(memstore|bluestore) "
    done
    "$CEPHMARK" cluster down --dir "$dir" >/dev/null 2>&1
done
