#!/usr/bin/env bash
# bench/loop-vs-cephmark.sh: client CPU per op of cephmark's engine (`cephmark rados-bench`)
# against a minimal librados aio loop (bench/aio_loop.c), 4K write and 4K random read at
# -t 16, interleaved over ROUNDS rounds on the cluster in $CEPH_CONF, in one pool (emptied after
# each round, deleted at exit).
# The loop runs in two completion styles: `oldest` (no callbacks, rados_aio_wait_for_complete
# on the oldest op: the cheapest way, the target's baseline) and `sem` (a completion callback
# and a semaphore: the librados finisher-thread hand-over cephmark used before it waited for
# its oldest op itself). Reads use the
# objects cephmark's write run wrote, so both read the same set; cephmark reads are shown with
# its default verification and with --no-verify.
# Prints medians of ops/s and of CPU per op (user+sys of the client process from wait4,
# connect included) and the cephmark/loop ratios. Target: cephmark <= 1.05x the loop.
# The loop sends a bare write_full per op, so cephmark's writes run with --no-hints here
# (rados bench's allocation hint is one more op the loop does not send).
# Environment: CEPHMARK (binary), ROUNDS (3), SECONDS_RUN (10), LOOP_WAITS ("oldest sem"),
# CEPHMARK_BASE (an older binary measured alongside: CPU per op and latency before/after),
# CM_WRITE_FLAGS ("--no-hints") and BASE_WRITE_FLAGS (""; binaries from before the hint sent
# bare writes and do not know the flag): extra flags of their write runs.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SECONDS_RUN=${SECONDS_RUN:-10}
# CEPHMARK_BASE: an older cephmark binary, run as one more writer and reader, to compare
# CPU per op and latency percentiles before and after a change (optional)
CEPHMARK_BASE=${CEPHMARK_BASE:-}
LOOP_WAITS=${LOOP_WAITS:-oldest sem}
read -r -a cm_write_flags <<<"${CM_WRITE_FLAGS---no-hints}"
read -r -a base_write_flags <<<"${BASE_WRITE_FLAGS:-}"
THREADS=16

bench_require ceph rados jq
bench_build_helpers

per_op() { awk -v c="$1" -v o="$2" 'BEGIN { printf "%.3f", c * 1e6 / o }'; }
rate() { awk -v o="$1" -v t="$2" 'BEGIN { printf "%.1f", o / t }'; }

record() { # record KEY OPS SECONDS: samples of ops/s and CPU us per op from KEY's cpurun
    if [[ $1 == cm_* || $1 == base_* ]]; then # latency percentiles from the JSON summary
        sample "$1.p50_ms" "$(awk -v v="$(jfield "$1" latency_p50)" 'BEGIN { printf "%.3f", v * 1e3 }')"
        sample "$1.p99_ms" "$(awk -v v="$(jfield "$1" latency_p99)" 'BEGIN { printf "%.3f", v * 1e3 }')"
    fi
    sample "$1.ops_s" "$(rate "$2" "$3")"
    sample "$1.cpu_us" "$(per_op "$(cpu_of "$1")" "$2")"
    sample "$1.csw" "$(awk -v c="$(csw_of "$1")" -v o="$2" 'BEGIN { printf "%.3f", c / o }')"
    bench_log "round $round $1: $2 ops in $3 s, cpu $(cpu_of "$1") s ($(per_op "$(cpu_of "$1")" "$2") us/op)"
}

run_cm_write() {
    measure cm_write "$CEPHMARK" rados-bench -p "$pool" "$SECONDS_RUN" write -t "$THREADS" -b 4096 -O 4096 \
        --no-cleanup --run-name cm_run --format json "${cm_write_flags[@]}"
    record cm_write "$(jfield cm_write total_writes_made)" "$(jfield cm_write total_time_run)"
}
run_base_write() {
    measure base_write "$CEPHMARK_BASE" rados-bench -p "$pool" "$SECONDS_RUN" write -t "$THREADS" -b 4096 \
        -O 4096 --no-cleanup --run-name base_run --format json "${base_write_flags[@]}"
    record base_write "$(jfield base_write total_writes_made)" "$(jfield base_write total_time_run)"
}
run_base_read() { # reads cephmark's run, as cm_read_verify does
    measure base_read_verify "$CEPHMARK_BASE" rados-bench -p "$pool" "$SECONDS_RUN" rand -t "$THREADS" \
        --run-name cm_run --format json
    record base_read_verify "$(jfield base_read_verify total_reads_made)" "$(jfield base_read_verify total_time_run)"
}
run_loop() { # run_loop write|read WAIT
    local key=loop_$1_$2 extra=()
    [[ $1 == read ]] && extra=(--prefix "$cm_prefix" --objects "$cm_objects")
    measure "$key" "$AIO_LOOP" -p "$pool" -m "$1" -w "$2" -t "$THREADS" -b 4096 -s "$SECONDS_RUN" "${extra[@]}"
    record "$key" "$(kv "$key" ops)" "$(kv "$key" seconds)"
    [[ $(kv "$key" errors) == 0 ]] || bench_log "warning: $key had $(kv "$key" errors) errors"
}
run_cm_read() { # run_cm_read verify|noverify
    local key=cm_read_$1 extra=()
    [[ $1 == noverify ]] && extra=(--no-verify)
    measure "$key" "$CEPHMARK" rados-bench -p "$pool" "$SECONDS_RUN" rand -t "$THREADS" --run-name cm_run \
        --format json "${extra[@]}"
    record "$key" "$(jfield "$key" total_reads_made)" "$(jfield "$key" total_time_run)"
}

pool=cmbench_loop_$$
pool_create "$pool"
for ((round = 1; round <= ROUNDS; round++)); do
    cluster_check "round $round"
    writers=(cm)
    for w in $LOOP_WAITS; do writers+=("loop_$w"); done
    readers=(cm_verify cm_noverify)
    for w in $LOOP_WAITS; do readers+=("loop_$w"); done
    if [[ -n $CEPHMARK_BASE ]]; then
        writers+=(base)
        readers+=(base)
    fi
    if ((round % 2 == 0)); then # reverse the order every other round
        mapfile -t writers < <(printf '%s\n' "${writers[@]}" | tac)
        mapfile -t readers < <(printf '%s\n' "${readers[@]}" | tac)
    fi
    for w in "${writers[@]}"; do
        case $w in
        cm) run_cm_write ;;
        base) run_base_write ;;
        *) run_loop write "${w#loop_}" ;;
        esac
    done
    # the reads (all after the writes) use the objects cephmark's write run left
    cm_prefix=$(json_of cm_write | jq -r .object_prefix)
    cm_objects=$(jfield cm_write total_writes_made)
    for r in "${readers[@]}"; do
        case $r in
        cm_verify) run_cm_read verify ;;
        cm_noverify) run_cm_read noverify ;;
        base) run_base_read ;;
        loop_*) run_loop read "${r#loop_}" ;;
        esac
    done
    # empty the pool: cephmark's run through its metadata, the loops' objects by prefix
    timeout 300 "$CEPHMARK" rados-cleanup -p "$pool" --run-name cm_run >/dev/null
    if [[ -n $CEPHMARK_BASE ]]; then
        timeout 300 "$CEPHMARK" rados-cleanup -p "$pool" --run-name base_run >/dev/null
    fi
    for w in $LOOP_WAITS; do
        timeout 300 "$CEPHMARK" rados-cleanup -p "$pool" --run-name no_such_run \
            --prefix "$(kv "loop_write_$w" prefix)" >/dev/null
    done
    left=$(pool_objects "$pool")
    [[ $left -eq 0 ]] || bench_log "warning: $left objects left in $pool after round $round"
    settle
done

echo
echo "cephmark engine vs minimal aio loop: 4K, -t $THREADS, ${SECONDS_RUN}s runs, $ROUNDS interleaved rounds, medians"
echo "(CPU = user+sys of the client process, connect included, per successful op; csw/op ="
echo " voluntary + involuntary context switches of all its threads per op)"
printf '%-26s %12s %10s %14s %12s\n' run "ops/s" "us/op" "CPU vs loop" "csw/op"
base_write= base_read=
[[ -n $CEPHMARK_BASE ]] && base_write=base_write base_read=base_read_verify
for row in cm_write $base_write $(for w in $LOOP_WAITS; do echo "loop_write_$w"; done) \
    cm_read_verify cm_read_noverify $base_read $(for w in $LOOP_WAITS; do echo "loop_read_$w"; done); do
    case $row in *write*) base=loop_write_oldest ;; *) base=loop_read_oldest ;; esac
    printf '%-26s %12.1f %10.2f %14s %12.2f\n' "$row" "$(med "$row.ops_s")" "$(med "$row.cpu_us")" \
        "$(ratio "$(med "$row.cpu_us")" "$(med "$base.cpu_us")")" "$(med "$row.csw")"
done
echo
echo "per-round CPU-per-op ratios (target: cephmark <= 1.05x the oldest-wait loop):"
for pair in "cm_write loop_write_oldest" "cm_read_verify loop_read_oldest" "cm_read_noverify loop_read_oldest" \
    "cm_write loop_write_sem" "cm_read_verify loop_read_sem" "cm_read_noverify loop_read_sem"; do
    # shellcheck disable=SC2086 # split "numerator denominator"
    set -- $pair
    [[ -f $BENCH_TMP/samples/$2.cpu_us ]] || continue
    printf '  %-18s / %-18s %s  (median of rounds %s)\n' "$1" "$2" "$(ratios "$1.cpu_us" "$2.cpu_us" | paste -sd' ')" \
        "$(ratios "$1.cpu_us" "$2.cpu_us" | median)"
done
echo
echo "latency from each run's summary, medians over the rounds (ms):"
printf '%-26s %10s %10s\n' run p50 p99
for row in cm_write $base_write cm_read_verify cm_read_noverify $base_read; do
    printf '%-26s %10.3f %10.3f   p50 per round: %s\n' "$row" "$(med "$row.p50_ms")" "$(med "$row.p99_ms")" \
        "$(samples "$row.p50_ms")"
done
if [[ -n $CEPHMARK_BASE ]]; then
    echo "CPU per op, this cephmark / CEPHMARK_BASE, per round:" \
        "write $(ratios cm_write.cpu_us base_write.cpu_us | paste -sd' ')," \
        "read $(ratios cm_read_verify.cpu_us base_read_verify.cpu_us | paste -sd' ')"
fi
