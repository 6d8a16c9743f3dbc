#!/usr/bin/env bash
# bench/engine-hour.sh: a long null-target phase (bench/engine-hour.lua, default one hour at
# 2000 ops/s open loop, 64 slots, 1 ms delay), run under nice, with the process's resident
# memory (VmRSS, /proc) sampled every SAMPLE seconds. Prints the samples, the RSS at the
# start, middle and end of the phase, and the size of results.json and series.csv divided by
# the phase's seconds. Needs no cluster.
# Environment: CEPHMARK (binary), SECONDS_RUN (3600), RATE (2000), SAMPLE (60), OUT (results
# folder, default a temporary one that is kept and printed).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

bench_require --no-cluster
SECONDS_RUN=${SECONDS_RUN:-3600}
RATE=${RATE:-2000}
SAMPLE=${SAMPLE:-60}
OUT=${OUT:-$BENCH_TMP/hour}

nice -n 10 "$CEPHMARK" run "$BENCH_DIR/engine-hour.lua" -o "$OUT" -p seconds="$SECONDS_RUN" \
    -p rate="$RATE" >"$BENCH_TMP/hour.out" 2>&1 &
pid=$!
start=$(date +%s)
echo "elapsed_s rss_kib"
while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n $rss ]] && echo "$(($(date +%s) - start)) $rss"
    sleep "$SAMPLE"
done
wait "$pid"
echo
tail -n 20 "$BENCH_TMP/hour.out"
json=$(find "$OUT" -name results.json | head -1)
csv=$(find "$OUT" -name series.csv | head -1)
for f in "$json" "$csv"; do
    [[ -n $f ]] || continue
    size=$(stat -c %s "$f")
    printf '%s: %d bytes, %.1f bytes per second of phase\n' "$f" "$size" \
        "$(awk -v s="$size" -v t="$SECONDS_RUN" 'BEGIN { print s / t }')"
done
echo "results kept in $OUT"
