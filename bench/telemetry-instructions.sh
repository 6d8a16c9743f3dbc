#!/usr/bin/env bash
# bench/telemetry-instructions.sh: what a phase's cluster side costs the client, in
# instructions (docs/telemetry.md, "What it costs"). CPU time on a shared 2-core machine
# moves by 15-25 % between runs; the instructions a process executes do not depend on the
# machine's load, so the same run with and without telemetry under callgrind
# (--separate-threads) gives the cost to a few percent. Two workloads, each as ROUNDS
# interleaved pairs (on, off, then off, on), for every binary given:
#   - PHASES write phases of PHASE_OPS 4K writes, then their cleanup: the per-phase part
#     (on - off, over the PHASES + 1 phases);
#   - OPS and OPS/10 4K writes in one phase, then their cleanup, without telemetry: the
#     cost per op it is weighed against (the difference over 2 x 0.9 OPS: a write and its
#     removal; the run's start and end cancel out).
#   - OPS 4K writes in one phase and their cleanup, telemetry on and off, counting only the
#     phases' measured time (--instr-atstart=no, CEPHMARK_CALLGRIND_PHASES=1: the engine
#     turns callgrind's instrumentation on and off around each phase): the client's
#     instructions per op over the phase, the figure `cpu.client_per_op` measures in time.
# Printed per binary: the main thread's and all threads' instructions per phase, the phase
# length, in ops, from which they are under 1 % of the client's instructions, and the
# in-phase instructions per op on and off ("n/a" for a binary without the phase requests).
# Usage: CEPH_CONF=... bench/telemetry-instructions.sh [BINARY...] (default: build/cephmark)
# Environment: ROUNDS (2), PHASES (8), PHASE_OPS (10), OPS (6000).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-2}
PHASES=${PHASES:-8}
PHASE_OPS=${PHASE_OPS:-10}
OPS=${OPS:-6000}
command -v valgrind >/dev/null || { echo "telemetry-instructions: needs valgrind" >&2; exit 2; }
[ -n "${CEPH_CONF:-}" ] || { echo "telemetry-instructions: set CEPH_CONF to the cluster's ceph.conf" >&2; exit 2; }
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=("$here/../build/cephmark")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# count BINARY SIDE OPS PHASES -> "main all": the run's instructions, its main thread's and
# all its threads'
count() {
    local out=$work/cg
    rm -f "$out".*
    (cd "$work" && CEPHMARK_BENCH_TELEMETRY=$2 valgrind --tool=callgrind --separate-threads=yes \
        --callgrind-out-file="$out" "$1" run "$here/telemetry-cost.lua" -p ops="$3" -p phases="$4" \
        -p threads=16 -p progress=false -o "$work/results" >"$work/log" 2>&1) ||
        { echo "telemetry-instructions: the run failed:" >&2; tail -5 "$work/log" >&2; exit 1; }
    rm -rf "$work/results"
    local main all
    main=$(awk '/^totals:/ { print $2 }' "$out"-01)
    all=$(cat "$out"-* | awk '/^totals:/ { s += $2 } END { print s }')
    echo "$main $all"
}

# inphase BINARY SIDE -> the instructions of every thread over the phases' measured time
inphase() {
    local out=$work/ph
    rm -f "$out"
    (cd "$work" && CEPHMARK_CALLGRIND_PHASES=1 CEPHMARK_BENCH_TELEMETRY=$2 valgrind --tool=callgrind \
        --instr-atstart=no --callgrind-out-file="$out" "$1" run "$here/telemetry-cost.lua" -p ops="$OPS" \
        -p phases=1 -p threads=16 -p progress=false -o "$work/results" >"$work/log" 2>&1) ||
        { echo "telemetry-instructions: the run failed:" >&2; tail -5 "$work/log" >&2; exit 1; }
    rm -rf "$work/results"
    awk '/^totals:/ { print $2 }' "$out"
}

printf '%-30s %12s %12s %10s %14s %12s %12s %8s\n' binary "main/phase" "all/phase" "all/op" "1 % from (ops)" \
    "in-phase on" "in-phase off" "on/off"
for binary in "${binaries[@]}"; do
    per_phase_main=() per_phase_all=() per_op=() inphase_on=() inphase_off=()
    for ((round = 1; round <= ROUNDS; round++)); do
        if ((round % 2)); then order="on off"; else order="off on"; fi
        declare -A phases=()
        for side in $order; do
            phases[$side]=$(count "$binary" "$side" $((PHASES * PHASE_OPS)) "$PHASES")
        done
        big=$(count "$binary" off "$OPS" 1)
        small=$(count "$binary" off $((OPS / 10)) 1)
        read -r on_main on_all <<<"${phases[on]}"
        read -r off_main off_all <<<"${phases[off]}"
        per_phase_main+=($(((on_main - off_main) / (PHASES + 1))))
        per_phase_all+=($(((on_all - off_all) / (PHASES + 1))))
        per_op+=($(((${big#* } - ${small#* }) * 10 / (18 * OPS))))
        declare -A within=()
        for side in $order; do within[$side]=$(inphase "$binary" "$side"); done
        inphase_on+=("${within[on]}") inphase_off+=("${within[off]}")
        echo "  $(date +%H:%M:%S) round $round: phases on ${phases[on]}, off ${phases[off]}; one phase of $OPS: $big, of $((OPS / 10)): $small" >&2
    done
    for ((i = 0; i < ROUNDS; i++)); do
        on=${inphase_on[i]:-0} off=${inphase_off[i]:-0} per_on=n/a per_off=n/a ratio=n/a
        if ((on > 0 && off > 0)); then
            per_on=$((on / (2 * OPS))) per_off=$((off / (2 * OPS)))
            ratio=$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.4f", a / b }')
        fi
        printf '%-30s %12s %12s %10s %14s %12s %12s %8s\n' "$(basename "$(dirname "$(dirname "$binary")")") #$((i + 1))" \
            "${per_phase_main[i]}" "${per_phase_all[i]}" "${per_op[i]}" "$((per_phase_all[i] * 100 / per_op[i]))" \
            "$per_on" "$per_off" "$ratio"
    done
done
