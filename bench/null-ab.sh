#!/usr/bin/env bash
# bench/null-ab.sh OLD NEW: the op engine of two cephmark binaries (say, before and after a
# refactoring of runtime/engine.c) on the null target (bench/null.lua: ops complete at once),
# interleaved over ROUNDS rounds with the order alternating. Prints each run, then the
# medians of ops/s and of CPU per op (user+sys of the process, from /usr/bin/time) and the
# NEW/OLD ratios. CPU per op is the figure to compare on a shared machine: ops/s follows the
# share of a core the run gets, CPU per op much less. Needs no cluster.
# Environment: ROUNDS (8), SECONDS_RUN (5), DEPTH (16).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ]; then
    echo "usage: bench/null-ab.sh OLD_CEPHMARK NEW_CEPHMARK" >&2
    exit 2
fi
declare -A binary=([old]=$1 [new]=$2)
rounds=${ROUNDS:-8}
seconds=${SECONDS_RUN:-5}
depth=${DEPTH:-16}
samples=$(mktemp)
trap 'rm -f "$samples"' EXIT

run() {
    local which=$1 out ops elapsed cpu
    out=$({ /usr/bin/time -f 'cpu=%U %S' "${binary[$which]}" run bench/null.lua \
        -p threads="$depth" -p seconds="$seconds" -p block_size=4096; } 2>&1)
    ops=$(grep -o 'ops=[0-9]*' <<<"$out" | head -1 | cut -d= -f2)
    elapsed=$(grep -o 'seconds=[0-9.]*' <<<"$out" | cut -d= -f2)
    cpu=$(grep -o 'cpu=[0-9.]* [0-9.]*' <<<"$out" | cut -d= -f2)
    awk -v w="$which" -v r="$round" -v o="$ops" -v s="$elapsed" -v c="$cpu" \
        'BEGIN { split(c, t, " "); printf "%s %d %.0f %.2f\n", w, r, o / s, (t[1] + t[2]) * 1e9 / o }' |
        tee -a "$samples"
}

echo "binary round ops/s cpu_ns/op"
for ((round = 1; round <= rounds; round++)); do
    if ((round % 2)); then run old; run new; else run new; run old; fi
done
awk '
function median(list, n,    i, j, t) {
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && list[j - 1] > list[j]; j--) { t = list[j]; list[j] = list[j - 1]; list[j - 1] = t }
    return n % 2 ? list[(n + 1) / 2] : (list[n / 2] + list[n / 2 + 1]) / 2
}
{ n[$1]++; ops[$1, n[$1]] = $3; cpu[$1, n[$1]] = $4 }
END {
    for (w in n) {
        for (i = 1; i <= n[w]; i++) { a[i] = ops[w, i]; b[i] = cpu[w, i] }
        mops[w] = median(a, n[w]); mcpu[w] = median(b, n[w])
    }
    printf "median ops/s: old %.0f new %.0f (new/old %.3f)\n", mops["old"], mops["new"], mops["new"] / mops["old"]
    printf "median cpu ns/op: old %.2f new %.2f (new/old %.3f)\n", mcpu["old"], mcpu["new"], mcpu["new"] / mcpu["old"]
}' "$samples"
