#!/usr/bin/env bash
# bench/aa-spread.sh: an A/A measurement of the local cluster. Starts a throwaway cluster
# (`cephmark cluster up`: 1 mon, 3 memstore OSDs) in CLUSTER_DIR, runs bench/aa-spread.lua
# (two identical replicated pools, 4K then 4M writes in each, each followed by its cleanup)
# with `cephmark run --repeats REPEATS`, the variants interleaved (ABBA), then
# bench/aa-spread-report.lua on its results: the spread of 4K and 4M writes on this machine
# and the smallest change that 3, 5 and 10 repetitions detect there. Takes the cluster down
# at the end, when this script started it (a cluster already running in CLUSTER_DIR is used
# and left running). The report is also saved as aa-spread.txt in the results folder.
# Environment: CEPHMARK (the binary; default: the build next to this folder), CLUSTER_DIR
# (/tmp/aa-cluster), REPEATS (10), OUT (results folder; default /tmp/aa-spread-<time>),
# LAYOUT (one-pool: a and b in the same pool; two-pools: each in its own pool of the same
# layout, see bench/aa-spread.lua), PG_NUM (8),
# SECONDS_4K (5s), THREADS_4K (16), SECONDS_4M (4s), THREADS_4M (4), MAX_OBJECTS_4M (192:
# memstore keeps every byte in RAM, and each of the 3 OSDs holds a copy of each object),
# MIN_AVAILABLE_GB (4: stop before the run when less RAM is available).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CEPHMARK=${CEPHMARK:-$here/../build/cephmark}
source "$here/lib.sh"

CLUSTER_DIR=${CLUSTER_DIR:-/tmp/aa-cluster}
REPEATS=${REPEATS:-10}
LAYOUT=${LAYOUT:-one-pool}
PG_NUM=${PG_NUM:-8}
OUT=${OUT:-/tmp/aa-spread-$(date -u +%Y%m%dT%H%M%SZ)}
SECONDS_4K=${SECONDS_4K:-5s}
THREADS_4K=${THREADS_4K:-16}
SECONDS_4M=${SECONDS_4M:-4s}
THREADS_4M=${THREADS_4M:-4}
MAX_OBJECTS_4M=${MAX_OBJECTS_4M:-192}
MIN_AVAILABLE_GB=${MIN_AVAILABLE_GB:-4}

[[ -x $CEPHMARK ]] || { echo "cephmark binary not found: $CEPHMARK (set CEPHMARK)" >&2; exit 1; }
[[ -e $OUT ]] && { echo "$OUT already exists: give another OUT" >&2; exit 2; }

started_cluster=0
sampler=
aa_cleanup() {
    if [[ -n $sampler ]]; then
        kill "$sampler" 2>/dev/null || true
        wait "$sampler" 2>/dev/null || true
    fi
    bench_cleanup_all
    if ((started_cluster)); then
        "$CEPHMARK" cluster down --dir "$CLUSTER_DIR" >&2 || echo "cluster down --dir $CLUSTER_DIR failed" >&2
    fi
}
trap aa_cleanup EXIT

if "$CEPHMARK" cluster status --dir "$CLUSTER_DIR" >/dev/null 2>&1; then
    bench_log "using the cluster already running in $CLUSTER_DIR (left running at the end)"
else
    mem_guard "$MIN_AVAILABLE_GB" "starting the cluster"
    started_cluster=1
    "$CEPHMARK" cluster up --dir "$CLUSTER_DIR" --quiet >&2
fi
eval "$("$CEPHMARK" cluster env --dir "$CLUSTER_DIR")"
bench_require ceph rados jq # checks for full OSDs; memstore: the ballast pool (lib.sh)
mem_guard "$MIN_AVAILABLE_GB" "the A/A run"

# the RSS of the cluster's OSDs (memstore holds the data there), MiB, summed
osd_rss_mib() {
    local f total=0
    for f in "$CLUSTER_DIR"/run/osd.*.pid; do
        total=$((total + $(awk '/^VmRSS:/ { print $2 }' "/proc/$(cat "$f")/status" 2>/dev/null || echo 0)))
    done
    echo $((total / 1024))
}
# its peak during the run, sampled every second into $BENCH_TMP/rss_peak
(
    peak=0
    while sleep 1; do
        now=$(osd_rss_mib)
        ((now > peak)) && peak=$now && echo "$peak" >"$BENCH_TMP/rss_peak"
    done
) &
sampler=$!

rss_before=$(osd_rss_mib)
avail_before=$(awk '/^MemAvailable:/ { printf "%d", $2 / 1024 }' /proc/meminfo)
bench_log "A/A: $REPEATS repetitions, $LAYOUT with $PG_NUM PGs, 4K ${SECONDS_4K} x $THREADS_4K, 4M ${SECONDS_4M} x $THREADS_4M" \
    "(at most $MAX_OBJECTS_4M objects), results in $OUT; OSD RSS ${rss_before} MiB, ${avail_before} MiB available"
start=$(date +%s)
"$CEPHMARK" run "$here/aa-spread.lua" --repeats "$REPEATS" -o "$OUT" -p layout="$LAYOUT" -p pg_num="$PG_NUM" \
    -p seconds_4k="$SECONDS_4K" -p threads_4k="$THREADS_4K" \
    -p seconds_4m="$SECONDS_4M" -p threads_4m="$THREADS_4M" -p max_objects_4m="$MAX_OBJECTS_4M" \
    >"$BENCH_TMP/run.out" 2>&1 || { tail -20 "$BENCH_TMP/run.out" >&2; echo "the A/A run failed" >&2; exit 1; }
cp "$BENCH_TMP/run.out" "$OUT/aa-spread-run.txt"
wall=$(($(date +%s) - start))

{
    "$CEPHMARK" run "$here/aa-spread-report.lua" -p results="$OUT"
    echo
    echo "run: $wall s wall, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end;" \
        "OSD RSS ${rss_before} MiB before, $(cat "$BENCH_TMP/rss_peak" 2>/dev/null || echo "?") MiB at most," \
        "$(osd_rss_mib) MiB after"
    echo "health after: $(timeout 30 ceph health 2>&1 | head -1)"
} | tee "$OUT/aa-spread.txt"
