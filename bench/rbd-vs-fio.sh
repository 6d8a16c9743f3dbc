#!/usr/bin/env bash
# bench/rbd-vs-fio.sh: `cephmark rbd-bench` against `fio --ioengine=rbd` and `rbd bench`, run
# interleaved (fio, cephmark, rbd bench, then rbd bench, cephmark, fio in the next round, for
# ROUNDS rounds) on the cluster in $CEPH_CONF: 4K random writes, 4K random reads and 64K
# sequential writes, DEPTH (32) I/Os in flight for every tool (fio --iodepth, rbd bench
# --io-threads, cephmark --io-threads), the rbd cache off for every tool (fio's direct=1 sets
# rbd_cache=false, cephmark --cache off, rbd bench --rbd_cache=false).
# Prints, per workload, the medians of IOPS (each tool's own summary: fio's JSON, rbd bench's
# ops/sec line, cephmark's JSON) and of client CPU per op (user+sys of the whole client
# process, from wait4, over the ops the tool reported), then the per-round ratios
# cephmark/fio and cephmark/rbd-bench with their medians and ranges.
# It creates one pool with two IMAGE_SIZE images, both written once over before the first
# round: `w` takes the write workloads, `r` (written by cephmark in 4K blocks, so that
# cephmark verifies every read as it does by default) the reads. The pool (and the images in
# it) is deleted at exit.
# fio and cephmark run for SECONDS_RUN (8) seconds; rbd bench has no time bound, so its
# --io-total is SECONDS_RUN times the IOPS last measured for the workload (a guess in the
# first round).
# Environment: CEPHMARK (binary), ROUNDS (3), CPURUN_TIMEOUT (300), SECONDS_RUN (8),
# DEPTH (32), IMAGE_SIZE (256M; memstore keeps it in RAM three times), MIN_AVAILABLE_GB (4),
# WORKLOADS ("4K_randwrite 4K_randread 64K_write").
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SECONDS_RUN=${SECONDS_RUN:-8}
DEPTH=${DEPTH:-32}
IMAGE_SIZE=${IMAGE_SIZE:-256M}
MIN_AVAILABLE_GB=${MIN_AVAILABLE_GB:-4}
WORKLOADS=${WORKLOADS:-4K_randwrite 4K_randread 64K_write}
TOOLS="fio cephmark rbd"

bench_require ceph rados rbd fio jq
bench_build_helpers
mem_guard "$MIN_AVAILABLE_GB" "creating the images"

pool=cmbench_rbdfio_$$
rbd_pool_create "$pool"
image_size=$(size_bytes "$IMAGE_SIZE")
rbd create --size "$IMAGE_SIZE" "$pool/w"
rbd create --size "$IMAGE_SIZE" "$pool/r"
bench_log "preconditioning $pool/w (4M writes) and $pool/r (cephmark 4K writes, verifiable)"
timeout "$CPURUN_TIMEOUT" rbd bench --io-type write --io-size 4M --io-threads 16 --io-pattern seq \
    --io-total "$image_size" "$pool/w" --rbd_cache=false >/dev/null
timeout "$CPURUN_TIMEOUT" "$CEPHMARK" rbd-bench "$pool/r" --io-type write --io-size 4K \
    --io-threads "$DEPTH" --io-pattern seq --io-total "$image_size" --cache off >/dev/null

# workload NAME -> io size, fio --rw, rbd bench/cephmark io type and pattern, image
io_size_of() { echo "${1%%_*}"; }
rw_of() { echo "${1#*_}"; }
type_of() { case $(rw_of "$1") in *read) echo read ;; *) echo write ;; esac; }
pattern_of() { case $(rw_of "$1") in rand*) echo rand ;; *) echo seq ;; esac; }
image_of() { [[ $(type_of "$1") == read ]] && echo r || echo w; }
# rbd bench's first --io-total before any IOPS was measured (round 1 may start with it)
guess_iops() { case $1 in 4K_randread) echo 10000 ;; *) echo 1000 ;; esac; }
declare -A last_iops

# one tool, one workload: samples WORKLOAD_TOOL.iops, .cpu_us (per op), .ops
run_tool() {
    local tool=$1 workload=$2 round=$3 key=${2}_${1} bs type pattern image ops iops
    bs=$(io_size_of "$workload")
    type=$(type_of "$workload")
    pattern=$(pattern_of "$workload")
    image=$(image_of "$workload")
    case $tool in
    fio)
        measure "$key" fio --name="$key" --ioengine=rbd --clientname=admin --pool="$pool" \
            --rbdname="$image" --direct=1 --rw="$(rw_of "$workload")" --bs="$bs" \
            --iodepth="$DEPTH" --numjobs=1 --time_based --runtime="$SECONDS_RUN" \
            --output-format=json
        ops=$(fio_field "$key" ".jobs[0].$type.total_ios")
        iops=$(fio_field "$key" ".jobs[0].$type.iops")
        ;;
    cephmark)
        measure "$key" "$CEPHMARK" rbd-bench "$pool/$image" --io-type "$type" --io-size "$bs" \
            --io-threads "$DEPTH" --io-pattern "$pattern" --io-total 0 --seconds "$SECONDS_RUN" \
            --cache off --format json
        ops=$(jq -r '.ops' "$BENCH_TMP/$key.out")
        iops=$(jq -r '.ops_per_sec' "$BENCH_TMP/$key.out")
        local failed
        failed=$(jq -r '.errors + (.verify_failures // 0)' "$BENCH_TMP/$key.out")
        ((failed == 0)) || { echo "cephmark $workload: $failed failed or unverified ops" >&2; exit 1; }
        ;;
    rbd)
        local total
        total=$(awk -v i="${last_iops[$workload]:-$(guess_iops "$workload")}" -v s="$SECONDS_RUN" \
            -v b="$(size_bytes "$bs")" 'BEGIN { printf "%d", int(i * s) * b }')
        measure "$key" rbd bench --io-type "$type" --io-size "$bs" --io-threads "$DEPTH" \
            --io-pattern "$pattern" --io-total "$total" "$pool/$image" --rbd_cache=false
        read -r ops iops < <(rbd_bench_summary "$key")
        ;;
    esac
    [[ $tool == rbd ]] || last_iops[$workload]=$iops
    sample "$key.iops" "$(fmt "$iops" '%.3f')"
    sample "$key.ops" "$ops"
    sample "$key.cpu_us" "$(awk -v c="$(cpu_of "$key")" -v o="$ops" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
    bench_log "round $round $workload $tool: $ops ops, $(fmt "$iops" '%.1f') IOPS, cpu $(cpu_of "$key")s"
}

for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then order=$TOOLS; else order=$(tr ' ' '\n' <<<"$TOOLS" | tac | paste -sd' '); fi
    for workload in $WORKLOADS; do
        for tool in $order; do
            cluster_check "round $round ($workload, $tool)"
            run_tool "$tool" "$workload" "$round"
        done
    done
done # the pool and its images are deleted at exit

echo
echo "cephmark rbd-bench vs fio --ioengine=rbd vs rbd bench: depth $DEPTH, rbd cache off," \
    "${SECONDS_RUN}s runs, images of $IMAGE_SIZE, $ROUNDS interleaved rounds, medians"
echo "IOPS from each tool's summary; us/op = user+sys CPU of the client process per op"
printf '%-13s | %9s %9s %9s | %8s %8s %8s | %8s %8s | %8s %8s\n' workload "fio IOPS" "cm IOPS" \
    "rbd IOPS" "fio us" "cm us" "rbd us" "IOPS cm/" "us cm/" "IOPS cm/" "us cm/"
printf '%-13s | %29s | %26s | %8s %8s | %8s %8s\n' "" "" "" fio fio rbd rbd
for workload in $WORKLOADS; do
    f=${workload}_fio c=${workload}_cephmark r=${workload}_rbd
    printf '%-13s | %9.1f %9.1f %9.1f | %8.1f %8.1f %8.1f | %8s %8s | %8s %8s\n' "$workload" \
        "$(med "$f.iops")" "$(med "$c.iops")" "$(med "$r.iops")" \
        "$(med "$f.cpu_us")" "$(med "$c.cpu_us")" "$(med "$r.cpu_us")" \
        "$(ratio "$(med "$c.iops")" "$(med "$f.iops")")" "$(ratio "$(med "$c.cpu_us")" "$(med "$f.cpu_us")")" \
        "$(ratio "$(med "$c.iops")" "$(med "$r.iops")")" "$(ratio "$(med "$c.cpu_us")" "$(med "$r.cpu_us")")"
done
echo
echo "per-round ratios (rounds are paired: the three tools run within the same half minute);"
echo "median [min..max] of the per-round ratios, then each round's:"
spread() { ratios "$1" "$2" | sort -g | awk '{ v[NR] = $1 } END { printf "[%s..%s]", v[1], v[NR] }'; }
for workload in $WORKLOADS; do
    c=${workload}_cephmark
    for peer in fio rbd; do
        p=${workload}_$peer
        printf '  %-13s cm/%-3s IOPS %6s %-14s CPU/op %6s %-14s | %s ; %s\n' "$workload" "$peer" \
            "$(ratios "$c.iops" "$p.iops" | median)" "$(spread "$c.iops" "$p.iops")" \
            "$(ratios "$c.cpu_us" "$p.cpu_us" | median)" "$(spread "$c.cpu_us" "$p.cpu_us")" \
            "$(ratios "$c.iops" "$p.iops" | paste -sd' ')" "$(ratios "$c.cpu_us" "$p.cpu_us" | paste -sd' ')"
    done
done
echo "targets: IOPS cm/fio >= 1.0, CPU/op cm/fio <= 1.0"
