#!/usr/bin/env bash
# bench/rados-vs-cephmark.sh: `cephmark rados-bench` against `rados bench`, run interleaved
# (rados, cephmark, cephmark, rados, ... for ROUNDS rounds) on the cluster in $CEPH_CONF:
# 4K and 4M, write/seq/rand at -t 16, each size in a fresh pool. Prints, per size and mode,
# the medians of throughput (ops/s from each tool's summary) and of client CPU per op
# (user+sys of the client process, from wait4), and the cephmark/rados ratios. Then a cleanup
# benchmark: a 4K write run with --no-cleanup, then `rados -p P cleanup` against
# `cephmark rados-cleanup -p P`, timed (wall) and interleaved the same way. Each tool cleans up
# its own runs after each round; the pools are deleted when the script exits.
# Environment: CEPHMARK (binary), ROUNDS (3), SECONDS_4K (8) and SECONDS_4M (5): write and
# rand seconds (seq stops when it has read what the write run wrote), MAX_OBJECTS_4M (256): 4M
# writes also stop after this many objects, because memstore keeps every byte in RAM (256 x 4M
# x 3 replicas = 3 GiB) and a 2-core machine can write 150 MB/s; 64-object runs last 0.4 s,
# too short to measure throughput; MIN_AVAILABLE_GB (4): stop
# before a 4M round when less RAM is available; CLEANUP_SECONDS (10), SIZES ("4K 4M"), MODES
# ("write seq rand"; seq and rand read what write wrote, so write comes first), CLEANUP_ROUNDS
# (ROUNDS; 0 skips the cleanup benchmark), SPLIT_CORES (0; 1: the cluster's daemons on CPU 0 and
# the clients on the others, see split_cores in lib.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SECONDS_4K=${SECONDS_4K:-8}
SECONDS_4M=${SECONDS_4M:-5}
MAX_OBJECTS_4M=${MAX_OBJECTS_4M:-256}
MIN_AVAILABLE_GB=${MIN_AVAILABLE_GB:-4}
CLEANUP_SECONDS=${CLEANUP_SECONDS:-10}
SIZES=${SIZES:-4K 4M}
THREADS=16
MODES=${MODES:-write seq rand}
CLEANUP_ROUNDS=${CLEANUP_ROUNDS:-$ROUNDS}
[[ " $MODES " == " write"* ]] || { echo "MODES must start with write (seq and rand read its objects)" >&2; exit 2; }

bench_require ceph rados jq
bench_build_helpers
split_cores

bytes_of() { case $1 in 4K) echo 4096 ;; 4M) echo 4194304 ;; *) echo "size $1?" >&2; exit 1 ;; esac; }
seconds_of() { case $1 in 4K) echo "$SECONDS_4K" ;; *) echo "$SECONDS_4M" ;; esac; }

# one tool's write, seq and rand at one size, then its cleanup; samples per mode
run_tool() {
    local tool=$1 size=$2 pool=$3 round=$4 bytes seconds run_name mode key ops time
    bytes=$(bytes_of "$size")
    seconds=$(seconds_of "$size")
    run_name=bench_${tool}_${round}
    if [[ $size == "${SIZES%% *}" ]]; then
        # the fixed cost of a run (start, connect, one 4K write, clean up, exit), to show CPU
        # per op net of it: short runs (seq) are otherwise dominated by it
        key=${tool}_startup
        if [[ $tool == rados ]]; then
            measure "$key" "${CLIENT_PIN[@]}" rados bench -p "$pool" 1 write -t 1 -b 4096 -O 4096 --max-objects 1 --run-name "startup_$round" --format json
        else
            measure "$key" "${CLIENT_PIN[@]}" "$CEPHMARK" rados-bench -p "$pool" 1 write -t 1 -b 4096 -O 4096 --max-objects 1 --run-name "startup_$round" --format json
        fi
        sample "$key.cpu_s" "$(cpu_of "$key")"
    fi
    for mode in $MODES; do
        key=${tool}_${size}_${mode}
        if [[ $tool == rados ]]; then
            local cmd=(rados bench -p "$pool" "$seconds" "$mode" -t "$THREADS" --run-name "$run_name" --format json)
        else
            local cmd=("$CEPHMARK" rados-bench -p "$pool" "$seconds" "$mode" -t "$THREADS" --run-name "$run_name" --format json)
        fi
        [[ $mode == write ]] && cmd+=(-b "$bytes" -O "$bytes" --no-cleanup)
        [[ $mode == write && $size == 4M ]] && cmd+=(--max-objects "$MAX_OBJECTS_4M")
        measure "$key" "${CLIENT_PIN[@]}" "${cmd[@]}"
        if [[ $mode == write ]]; then ops=$(jfield "$key" total_writes_made); else ops=$(jfield "$key" total_reads_made); fi
        time=$(jfield "$key" total_time_run)
        sample "$key.ops_s" "$(awk -v o="$ops" -v t="$time" 'BEGIN { printf "%.3f", o / t }')"
        sample "$key.cpu_us" "$(awk -v c="$(cpu_of "$key")" -v o="$ops" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
        sample "$key.cpu_s" "$(cpu_of "$key")"
        sample "$key.ops" "$ops"
        bench_log "round $round $size $mode $tool: $ops ops in ${time}s, cpu $(cpu_of "$key")s"
    done
    if [[ $tool == rados ]]; then
        timeout 300 rados -p "$pool" cleanup --run-name "$run_name" >/dev/null
    else
        timeout 300 "$CEPHMARK" rados-cleanup -p "$pool" --run-name "$run_name" >/dev/null
    fi
    settle
}

for size in $SIZES; do
    pool=cmbench_rvc_${size}_$$
    pool_create "$pool"
    for ((round = 1; round <= ROUNDS; round++)); do
        if ((round % 2)); then order="rados cephmark"; else order="cephmark rados"; fi
        for tool in $order; do
            [[ $size == 4M ]] && mem_guard "$MIN_AVAILABLE_GB" "a 4M run"
            cluster_check "round $round ($size, $tool)"
            run_tool "$tool" "$size" "$pool" "$round"
        done
        left=$(pool_objects "$pool")
        [[ $left -eq 0 ]] || bench_log "warning: $left objects left in $pool after round $round"
    done
done # the pools are deleted at exit (see cluster_check in lib.sh)

# cleanup timing: each tool cleans up the objects of its own CLEANUP_SECONDS 4K write run
pool=cmbench_rvc_cleanup_$$
((CLEANUP_ROUNDS > 0)) && pool_create "$pool"
for ((round = 1; round <= CLEANUP_ROUNDS; round++)); do
    if ((round % 2)); then order="rados cephmark"; else order="cephmark rados"; fi
    for tool in $order; do
        cluster_check "cleanup round $round ($tool)"
        run_name=bench_cleanup_${tool}_${round}
        if [[ $tool == rados ]]; then
            measure "cw_$tool" "${CLIENT_PIN[@]}" rados bench -p "$pool" "$CLEANUP_SECONDS" write -t "$THREADS" -b 4096 -O 4096 \
                --no-cleanup --run-name "$run_name" --format json
            objects=$(jfield "cw_$tool" total_writes_made)
            osd0=$(osd_cpu_s) busy0=$(machine_busy_s)
            measure "cl_$tool" "${CLIENT_PIN[@]}" rados -p "$pool" cleanup --run-name "$run_name"
        else
            measure "cw_$tool" "${CLIENT_PIN[@]}" "$CEPHMARK" rados-bench -p "$pool" "$CLEANUP_SECONDS" write -t "$THREADS" -b 4096 -O 4096 \
                --no-cleanup --run-name "$run_name" --format json
            objects=$(jfield "cw_$tool" total_writes_made)
            osd0=$(osd_cpu_s) busy0=$(machine_busy_s)
            measure "cl_$tool" "${CLIENT_PIN[@]}" "$CEPHMARK" rados-cleanup -p "$pool" --run-name "$run_name"
        fi
        osd1=$(osd_cpu_s) busy1=$(machine_busy_s)
        wall=$(wall_of "cl_$tool")
        sample "cleanup_$tool.s" "$wall"
        sample "cleanup_$tool.objects" "$objects"
        sample "cleanup_$tool.us_per_object" "$(awk -v w="$wall" -v o="$objects" 'BEGIN { printf "%.3f", w * 1e6 / o }')"
        sample "cleanup_$tool.cpu_s" "$(cpu_of "cl_$tool")"
        sample "cleanup_$tool.osd_us_per_object" "$(awk -v a="$osd0" -v b="$osd1" -v o="$objects" 'BEGIN { printf "%.3f", (b - a) * 1e6 / o }')"
        sample "cleanup_$tool.busy" "$(awk -v a="$busy0" -v b="$busy1" -v w="$wall" -v n="$(nproc)" 'BEGIN { printf "%.3f", (b - a) / (w * n) }')"
        bench_log "round $round cleanup $tool: $objects objects in ${wall}s (cpu $(cpu_of "cl_$tool")s)"
        left=$(pool_objects "$pool")
        [[ $left -eq 0 ]] || bench_log "warning: $left objects left in $pool after the $tool cleanup"
        settle
    done
done

echo
echo "cephmark rados-bench vs rados bench: -t $THREADS, 4K runs ${SECONDS_4K}s, 4M runs ${SECONDS_4M}s" \
    "(4M writes: at most $MAX_OBJECTS_4M objects), $ROUNDS interleaved rounds, medians"
echo "ops/s = total ops / total_time_run from each tool's summary; us/op = user+sys CPU of the client"
echo "process per op; net = the same less the fixed cost of a 1-op run (start, connect, exit):"
startup_r=$(med rados_startup.cpu_s) startup_c=$(med cephmark_startup.cpu_s)
echo "rados ${startup_r}s, cephmark ${startup_c}s"
# median over the rounds of (CPU - fixed cost) / ops
net() { paste "$BENCH_TMP/samples/$1.cpu_s" "$BENCH_TMP/samples/$1.ops" |
    awk -v f="$2" '{ printf "%.3f\n", ($1 - f) * 1e6 / $2 }' | median | xargs printf '%.1f'; }
printf '%-4s %-5s | %10s %10s %6s | %8s %8s %6s | %9s %9s %6s\n' size mode "rados op/s" "cm op/s" ratio \
    "rados us" "cm us" ratio "rados net" "cm net" ratio
for size in $SIZES; do
    for mode in $MODES; do
        r=rados_${size}_${mode} c=cephmark_${size}_${mode}
        rn=$(net "$r" "$startup_r")
        cn=$(net "$c" "$startup_c")
        printf '%-4s %-5s | %10.1f %10.1f %6s | %8.1f %8.1f %6s | %9s %9s %6s\n' "$size" "$mode" \
            "$(med "$r.ops_s")" "$(med "$c.ops_s")" "$(ratio "$(med "$c.ops_s")" "$(med "$r.ops_s")")" \
            "$(med "$r.cpu_us")" "$(med "$c.cpu_us")" "$(ratio "$(med "$c.cpu_us")" "$(med "$r.cpu_us")")" \
            "$rn" "$cn" "$(ratio "$cn" "$rn")"
    done
done
echo
echo "per-round ratios cephmark/rados (rounds are paired: same minute, same machine load);"
echo "median [min..max] of the per-round ratios, then each round's:"
spread() { ratios "$1" "$2" | sort -g | awk '{ v[NR] = $1 } END { printf "[%s..%s]", v[1], v[NR] }'; }
for size in $SIZES; do
    for mode in $MODES; do
        r=rados_${size}_${mode} c=cephmark_${size}_${mode}
        printf '  %-4s %-5s ops/s %6s %-14s CPU/op %6s %-14s | %s ; %s\n' "$size" "$mode" \
            "$(ratios "$c.ops_s" "$r.ops_s" | median)" "$(spread "$c.ops_s" "$r.ops_s")" \
            "$(ratios "$c.cpu_us" "$r.cpu_us" | median)" "$(spread "$c.cpu_us" "$r.cpu_us")" \
            "$(ratios "$c.ops_s" "$r.ops_s" | paste -sd' ')" "$(ratios "$c.cpu_us" "$r.cpu_us" | paste -sd' ')"
    done
done
((CLEANUP_ROUNDS > 0)) || exit 0
echo
echo "cleanup of a ${CLEANUP_SECONDS}s 4K write run (wall time of the cleanup command; medians):"
printf '%-10s %10s %10s %12s %10s %14s %10s\n' tool objects seconds "us/object" "cpu s" "OSD us/object" "busy"
for tool in rados cephmark; do
    printf '%-10s %10.0f %10.3f %12.1f %10.3f %14.1f %10.3f\n' "$tool" "$(med cleanup_$tool.objects)" "$(med cleanup_$tool.s)" \
        "$(med cleanup_$tool.us_per_object)" "$(med cleanup_$tool.cpu_s)" \
        "$(med cleanup_$tool.osd_us_per_object)" "$(med cleanup_$tool.busy)"
done
echo "OSD us/object: CPU of this cluster's OSD processes during the cleanup, per object removed;"
echo "busy: fraction of all $(nproc) cores not idle during it (every process on the machine)."
echo "lower bound for cephmark's cleanup with $(nproc) cores: (OSD + client CPU) / cores =" \
    "$(awk -v o="$(med cleanup_cephmark.osd_us_per_object)" -v c="$(med cleanup_cephmark.cpu_s)" \
        -v n="$(med cleanup_cephmark.objects)" -v k="$(nproc)" 'BEGIN { printf "%.1f", (o + c * 1e6 / n) / k }') us/object" \
    "(target: $(awk -v r="$(med cleanup_rados.us_per_object)" 'BEGIN { printf "%.1f", r / 3 }') us/object)"
echo "cleanup time ratio cephmark/rados: $(ratio "$(med cleanup_cephmark.s)" "$(med cleanup_rados.s)")" \
    "(per object: $(ratio "$(med cleanup_cephmark.us_per_object)" "$(med cleanup_rados.us_per_object)"); target <= 0.333)"
echo "per-round time ratios: $(ratios cleanup_cephmark.s cleanup_rados.s | paste -sd' ')" \
    "(median $(ratios cleanup_cephmark.s cleanup_rados.s | median));" \
    "per-object: $(ratios cleanup_cephmark.us_per_object cleanup_rados.us_per_object | paste -sd' ')"
