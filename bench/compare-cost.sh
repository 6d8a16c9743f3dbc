#!/usr/bin/env bash
# bench/compare-cost.sh: what `cephmark compare` costs on two results folders of 1000
# phases each (bench/compare-phases.lua on the null target: 100 points x 2 phases x 5
# repetitions, so 200 cells x 4 metrics compared): RUNS runs of the compare, their median
# wall time and median CPU (user + sys, from bench/cpurun). The figure is in
# docs/performance.md. Needs no cluster.
# Environment: CEPHMARK (the binary), RUNS (5), POINTS (100: 2 x 5 x POINTS phases a folder).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-5}
POINTS=${POINTS:-100}
bench_require --no-cluster
bench_build_helpers

for side in base new; do
    "$CEPHMARK" run "$BENCH_DIR/compare-phases.lua" -p points="$POINTS" -o "$BENCH_TMP/$side" >"$BENCH_TMP/$side.log" 2>&1 ||
        { echo "the $side folder could not be made:" >&2; tail -5 "$BENCH_TMP/$side.log" >&2; exit 1; }
done
phases=$((POINTS * 2 * 5))
bench_log "two folders of $phases phases each ($POINTS points x 2 phases x 5 repetitions)"

for ((run = 1; run <= RUNS; run++)); do
    # exit 1 (the gate failed: two runs of 20 ops with no delay differ by chance) is a
    # complete compare too; only 2 (bad input) or worse fails the benchmark
    measure "compare$run" sh -c '"$0" compare "$1" "$2"; [ $? -le 1 ]' "$CEPHMARK" "$BENCH_TMP/base" "$BENCH_TMP/new"
    sample wall "$(wall_of "compare$run")"
    sample cpu "$(cpu_of "compare$run")"
    bench_log "run $run: $(wall_of "compare$run") s wall, $(cpu_of "compare$run") s CPU"
done
lines=$(wc -l <"$BENCH_TMP/compare1.out")

echo
echo "cephmark compare of two folders of $phases phases each ($lines lines printed), $RUNS runs"
printf '%-24s %10s   %s\n' "" median "all runs"
printf '%-24s %10s   %s\n' "wall seconds" "$(med wall)" "$(samples wall)"
printf '%-24s %10s   %s\n' "CPU seconds (user+sys)" "$(med cpu)" "$(samples cpu)"
