#!/usr/bin/env bash
# bench/disk-vs-fio.sh: cephmark's disk target (cephmark.disk through `cephmark run`) against
# fio on the same file, O_DIRECT, interleaved over ROUNDS rounds (A,B then B,A):
#   psync (one op in flight): 4K random read/write, 1M sequential read/write
#   io_uring (DEPTH_4K for 4K random, DEPTH_1M for 1M sequential): the same four
#   and, like for like, io_uring 1M reads and writes with cephmark's buffers on 4 KiB pages
#   (huge_pages = false; the -4kpg cases), as fio's default malloc buffers are
# and against dd for 1M sequential write and read (oflag/iflag=direct, COUNT_DD blocks).
# Prints medians of MiB/s and of client CPU per op, and the cephmark/fio ratios.
# Target: cephmark >= 0.98x fio's throughput. Needs no cluster.
# Environment: CEPHMARK, ROUNDS (3), SECONDS_RUN (4), DIR (a folder on a disk filesystem,
# default /work), FILE_MB (64), DEPTH_4K (16), DEPTH_1M (4), COUNT_DD (64), ONLY (a bash
# pattern of case names to run, e.g. ONLY=uring-1m-read or ONLY='uring-*'; default all; the dd
# comparison runs only when ONLY is unset or matches "dd").
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SECONDS_RUN=${SECONDS_RUN:-4}
DIR=${DIR:-/work}
FILE_MB=${FILE_MB:-64}
DEPTH_4K=${DEPTH_4K:-16}
DEPTH_1M=${DEPTH_1M:-4}
COUNT_DD=${COUNT_DD:-64}
ONLY=${ONLY:-*}

bench_require --no-cluster fio jq dd
bench_build_helpers

WORK=$(mktemp -d "$DIR/cephmark-disk-bench.XXXXXX")
FILE=$WORK/data
trap 'rm -rf "$WORK"; bench_cleanup_all' EXIT
# laid out once with incompressible data, so both tools read real blocks
dd if=/dev/urandom of="$FILE" bs=1M count="$FILE_MB" oflag=direct status=none

cat >"$BENCH_TMP/disk.lua" <<'EOF'
local p = ...
local disk = require "cephmark.disk"
local r = disk.bench { path = p.path, io_type = p.io_type, pattern = p.pattern,
  block_size = tonumber(p.block_size), threads = tonumber(p.threads), engine = p.engine,
  seconds = p.seconds and tonumber(p.seconds), count = p.count and tonumber(p.count),
  size = p.size and tonumber(p.size), direct = true, huge_pages = p.huge_pages ~= "false" }
print(string.format("ops=%d seconds=%.6f mib_s=%.3f dd_mb_s=%.3f p50_us=%.1f errors=%d engine=%s huge_pages=%s",
  r.ops, r.elapsed, r.bandwidth_mib, r.dd.mb_s, r.lat.p50 * 1e6, r.errors, r.engine, r.huge_pages))
return { errors = r.errors }
EOF

# case name, engine, rw (fio), pattern, io_type, block size, depth, cephmark's huge_pages
CASES=(
    "psync-4k-randread    sync     randread  rand read  4096    1           true"
    "psync-4k-randwrite   sync     randwrite rand write 4096    1           true"
    "psync-1m-read        sync     read      seq  read  1048576 1           true"
    "psync-1m-write       sync     write     seq  write 1048576 1           true"
    "uring-4k-randread    io_uring randread  rand read  4096    $DEPTH_4K true"
    "uring-4k-randwrite   io_uring randwrite rand write 4096    $DEPTH_4K true"
    "uring-1m-read        io_uring read      seq  read  1048576 $DEPTH_1M  true"
    "uring-1m-write       io_uring write     seq  write 1048576 $DEPTH_1M  true"
    "uring-1m-read-4kpg   io_uring read      seq  read  1048576 $DEPTH_1M  false"
    "uring-1m-write-4kpg  io_uring write     seq  write 1048576 $DEPTH_1M  false"
)
selected=()
for entry in "${CASES[@]}"; do
    # shellcheck disable=SC2053 # ONLY is a pattern on purpose
    [[ ${entry%% *} == $ONLY ]] && selected+=("$entry")
done
CASES=("${selected[@]}")
RUN_DD=0
# shellcheck disable=SC2053
[[ dd == $ONLY ]] && RUN_DD=1
((${#CASES[@]} || RUN_DD)) || { echo "ONLY=$ONLY matches no case" >&2; exit 1; }

run_cm() {
    local name=$1 engine=$2 pattern=$4 io_type=$5 bs=$6 depth=$7 huge=$8
    measure cm "$CEPHMARK" run "$BENCH_TMP/disk.lua" -p path="$FILE" -p io_type="$io_type" \
        -p pattern="$pattern" -p block_size="$bs" -p threads="$depth" -p engine="$engine" \
        -p seconds="$SECONDS_RUN" -p size="$((FILE_MB * 1048576))" -p huge_pages="$huge"
    local ops
    ops=$(kv cm ops)
    sample "cm.$name.mib" "$(kv cm mib_s)"
    sample "cm.$name.cpu" "$(awk -v c="$(cpu_of cm)" -v o="$ops" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
    bench_log "round $round cephmark $name: $(kv cm mib_s) MiB/s, $ops ops, engine $(kv cm engine), huge pages $(kv cm huge_pages)"
}

run_fio() {
    local name=$1 engine=$2 rw=$3 bs=$6 depth=$7
    local ioengine=psync
    [[ $engine == io_uring ]] && ioengine=io_uring
    measure fio fio --name="$name" --filename="$FILE" --ioengine="$ioengine" --iodepth="$depth" \
        --rw="$rw" --bs="$bs" --direct=1 --size="${FILE_MB}m" --time_based --runtime="$SECONDS_RUN" \
        --numjobs=1 --output-format=json
    local dir=read
    [[ $rw == *write ]] && dir=write
    local bw ops
    bw=$(jq ".jobs[0].$dir.bw_bytes / 1048576" "$BENCH_TMP/fio.out")
    ops=$(jq ".jobs[0].$dir.total_ios" "$BENCH_TMP/fio.out")
    sample "fio.$name.mib" "$(fmt "$bw" '%.3f')"
    sample "fio.$name.cpu" "$(awk -v c="$(cpu_of fio)" -v o="$ops" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
    bench_log "round $round fio $name: $(fmt "$bw" '%.1f') MiB/s, $ops ops"
}

# dd: 1M blocks, COUNT_DD of them, O_DIRECT; MB/s as dd prints it (powers of 1000)
run_dd() {
    local io_type=$1 rc
    if [[ $io_type == write ]]; then
        measure dd dd if=/dev/zero of="$FILE" bs=1M count="$COUNT_DD" oflag=direct conv=notrunc
    else
        measure dd dd if="$FILE" of=/dev/null bs=1M count="$COUNT_DD" iflag=direct
    fi
    rc=$(grep -o '[0-9.]* s, [0-9.]* [MG]B/s' "$BENCH_TMP/dd.err" | tail -1)
    local bytes=$((COUNT_DD * 1048576)) seconds
    seconds=$(awk '{ print $1 }' <<<"$rc")
    sample "dd.$io_type.mbs" "$(awk -v b="$bytes" -v s="$seconds" 'BEGIN { printf "%.3f", b / s / 1e6 }')"
}
run_cm_dd() {
    local io_type=$1
    measure cm "$CEPHMARK" run "$BENCH_TMP/disk.lua" -p path="$FILE" -p io_type="$io_type" \
        -p pattern=seq -p block_size=1048576 -p threads=1 -p engine=sync -p count="$COUNT_DD"
    sample "cmdd.$io_type.mbs" "$(kv cm dd_mb_s)"
}

for ((round = 1; round <= ROUNDS; round++)); do
    for entry in "${CASES[@]}"; do
        read -r -a c <<<"$entry"
        if ((round % 2)); then run_cm "${c[@]}"; run_fio "${c[@]}"; else run_fio "${c[@]}"; run_cm "${c[@]}"; fi
    done
    for io_type in write read; do
        ((RUN_DD)) || continue
        if ((round % 2)); then run_cm_dd $io_type; run_dd $io_type; else run_dd $io_type; run_cm_dd $io_type; fi
    done
done

echo
echo "disk: cephmark.disk vs fio on $FILE_MB MiB in $DIR ($(df -T "$DIR" | awk 'NR == 2 { print $2 }')), O_DIRECT,"
echo "${SECONDS_RUN}s time-based runs, $ROUNDS interleaved rounds, medians; CPU = user+sys per op (us)"
printf '%-20s %11s %11s %7s %9s %9s %7s  %s\n' case "cm MiB/s" "fio MiB/s" ratio "cm us/op" "fio us/op" ratio "per-round throughput ratios"
for entry in "${CASES[@]}"; do
    read -r -a c <<<"$entry"
    n=${c[0]}
    printf '%-20s %11.1f %11.1f %7s %9.2f %9.2f %7s  %s\n' "$n" "$(med "cm.$n.mib")" "$(med "fio.$n.mib")" \
        "$(ratio "$(med "cm.$n.mib")" "$(med "fio.$n.mib")")" "$(med "cm.$n.cpu")" "$(med "fio.$n.cpu")" \
        "$(ratio "$(med "cm.$n.cpu")" "$(med "fio.$n.cpu")")" "$(ratios "cm.$n.mib" "fio.$n.mib" | paste -sd' ')"
done
((RUN_DD)) || exit 0
echo
echo "dd-style: $COUNT_DD x 1M, O_DIRECT, one op in flight (MB/s = 10^6 bytes/s, as dd prints)"
printf '%-8s %11s %11s %7s  %s\n' io "cm MB/s" "dd MB/s" ratio "per-round ratios"
for io_type in write read; do
    printf '%-8s %11.1f %11.1f %7s  %s\n' $io_type "$(med "cmdd.$io_type.mbs")" "$(med "dd.$io_type.mbs")" \
        "$(ratio "$(med "cmdd.$io_type.mbs")" "$(med "dd.$io_type.mbs")")" "$(ratios "cmdd.$io_type.mbs" "dd.$io_type.mbs" | paste -sd' ')"
done
