#!/usr/bin/env bash
# bench/old-vs-new.sh: the same workloads through two cephmark binaries, interleaved in one
# run (old, new, old, new, ...), for changes that must not change what users measure:
# rados 4K write CPU per op, null-target ops/s, native Swift 4 KiB GET CPU per request (64
# connections) and disk 4K random reads (O_DIRECT, io_uring, 16 in flight). Prints each
# round's figures and, per workload, the median of the per-round new/old ratios.
#   OLD=/path/to/old/cephmark [NEW=build/cephmark] [ROUNDS=5] [SECONDS=5] bench/old-vs-new.sh
# Needs CEPH_CONF pointing at a cluster made with `cephmark cluster up --rgw`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
OLD=${OLD:?OLD must point at the old cephmark binary}
NEW=${NEW:-$CEPHMARK}
SECONDS_EACH=${SECONDS:-5}
ROUNDS=${ROUNDS:-5}
WORKLOADS=${WORKLOADS:-"null rados swift-get disk"}
bench_require
script=$BENCH_DIR/old-vs-new.lua
pool=old-vs-new-$$
pool_create "$pool"
container=old-vs-new-$$
disk_file=$BENCH_TMP/disk-data

field() { sed -nE "s/.*(^| )$1=([^ ]*).*/\\2/p" <<<"$2"; }
one() { # one BINARY WORKLOAD [extra -p ...]
    local binary=$1 workload=$2
    shift 2
    "$binary" run "$script" -p workload="$workload" -p seconds="$SECONDS_EACH" "$@"
}

# fixtures: the objects the GETs read, the file the disk reads (laid out by a write)
put=$(one "$NEW" swift-put -p container="$container" -p threads=64)
run_id=$(field run_id "$put")
cat >"$BENCH_TMP/layout.lua" <<LUA
require("cephmark.disk").bench { path = "$disk_file", io_type = "write", block_size = "1M", count = 256 }
LUA
"$NEW" run "$BENCH_TMP/layout.lua" >/dev/null
cleanup_fixtures() {
    one "$NEW" swift-delete -p container="$container" -p run_id="$run_id" -p threads=64 >/dev/null || true
    bench_cleanup_all
}
trap cleanup_fixtures EXIT

declare -A ratios
for round in $(seq 1 "$ROUNDS"); do
    for workload in $WORKLOADS; do
        extra=()
        case $workload in
        rados) extra=(-p pool="$pool") ;;
        swift-get) extra=(-p container="$container" -p run_id="$run_id" -p threads=64) ;;
        disk) extra=(-p path="$disk_file") ;;
        esac
        old=$(one "$OLD" "$workload" "${extra[@]}")
        new=$(one "$NEW" "$workload" "${extra[@]}")
        metric=cpu_us_per_op
        [[ $workload == null || $workload == disk ]] && metric=ops_s
        o=$(field "$metric" "$old")
        n=$(field "$metric" "$new")
        ratio=$(ratio "$n" "$o")
        ratios[$workload]+="$ratio "
        bench_log "round $round $workload $metric old=$o new=$n new/old=$ratio"
    done
done
for workload in $WORKLOADS; do
    metric="CPU per op"
    [[ $workload == null || $workload == disk ]] && metric="ops/s"
    printf '%-10s %-11s new/old median %s (rounds: %s)\n' "$workload" "$metric" \
        "$(tr ' ' '\n' <<<"${ratios[$workload]}" | grep . | median)" "${ratios[$workload]% }"
done
