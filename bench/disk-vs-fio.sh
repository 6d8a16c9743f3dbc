#!/usr/bin/env bash
# bench/disk-vs-fio.sh: cephmark's disk target (cephmark.disk through `cephmark run`) against
# fio on the same file, O_DIRECT, interleaved over ROUNDS rounds (A,B then B,A):
#   psync (one op in flight): 4K random read/write, 1M sequential read/write
#   io_uring (DEPTH_4K for 4K random, DEPTH_1M for 1M sequential): the same four
#   and, like for like, io_uring 1M reads and writes with cephmark's buffers on 4 KiB pages
#   (huge_pages = false; the -4kpg cases), as fio's default malloc buffers are,
#   and psync and io_uring 1M reads and writes with both tools' buffers on 2 MiB pages (the -hp
#   cases: fio --iomem=mmaphuge, anonymous MAP_HUGETLB mappings, and cephmark's default
#   huge_pages = true). fio's huge pages come from the hugetlb pool: as root the script adds
#   HP_PAGES pages to vm.nr_hugepages for the run and puts the previous value back at exit;
#   when it is not root or the kernel cannot give the pages, it skips the -hp cases and says so.
#   It checks that fio's mapping really took pool pages while it ran (HugePages_Total - Free +
#   Rsvd above what it was before) and that cephmark reports huge_pages = true.
# and against dd for 1M sequential write and read (oflag/iflag=direct, COUNT_DD blocks).
# Prints medians of MiB/s and of client CPU per op, and the cephmark/fio ratios.
# Target: cephmark >= 0.98x fio's throughput. Needs no cluster.
# Environment: CEPHMARK, ROUNDS (3), SECONDS_RUN (4), DIR (a folder on a disk filesystem,
# default /work), FILE_MB (64), DEPTH_4K (16), DEPTH_1M (4), COUNT_DD (64), HP_PAGES (2 MiB
# hugetlb pages to reserve; default DEPTH_1M / 2 + 4: fio maps DEPTH_1M x 1 MiB rounded up to
# whole pages, plus slack), ONLY (a bash
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
HP_PREV=""   # vm.nr_hugepages before this script raised it ("" = left alone)
HP_SAMPLER="" # pid of the running hugetlb sampler, if any
hp_restore() {
    [[ -n $HP_SAMPLER ]] && kill "$HP_SAMPLER" 2>/dev/null
    if [[ -n $HP_PREV ]]; then
        echo "$HP_PREV" >/proc/sys/vm/nr_hugepages ||
            echo "could not restore vm.nr_hugepages to $HP_PREV (now $(cat /proc/sys/vm/nr_hugepages))" >&2
        HP_PREV=""
    fi
}
trap 'hp_restore; rm -rf "$WORK"; bench_cleanup_all' EXIT
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

# case name, engine, rw (fio), pattern, io_type, block size, depth, cephmark's huge_pages,
# fio's iomem (malloc: 4 KiB pages; mmaphuge: 2 MiB hugetlb pages)
CASES=(
    "psync-4k-randread    sync     randread  rand read  4096    1           true  malloc"
    "psync-4k-randwrite   sync     randwrite rand write 4096    1           true  malloc"
    "psync-1m-read        sync     read      seq  read  1048576 1           true  malloc"
    "psync-1m-write       sync     write     seq  write 1048576 1           true  malloc"
    "uring-4k-randread    io_uring randread  rand read  4096    $DEPTH_4K true  malloc"
    "uring-4k-randwrite   io_uring randwrite rand write 4096    $DEPTH_4K true  malloc"
    "uring-1m-read        io_uring read      seq  read  1048576 $DEPTH_1M  true  malloc"
    "uring-1m-write       io_uring write     seq  write 1048576 $DEPTH_1M  true  malloc"
    "uring-1m-read-4kpg   io_uring read      seq  read  1048576 $DEPTH_1M  false malloc"
    "uring-1m-write-4kpg  io_uring write     seq  write 1048576 $DEPTH_1M  false malloc"
    "psync-1m-read-hp     sync     read      seq  read  1048576 1           true  mmaphuge"
    "psync-1m-write-hp    sync     write     seq  write 1048576 1           true  mmaphuge"
    "uring-1m-read-hp     io_uring read      seq  read  1048576 $DEPTH_1M  true  mmaphuge"
    "uring-1m-write-hp    io_uring write     seq  write 1048576 $DEPTH_1M  true  mmaphuge"
)
selected=()
for entry in "${CASES[@]}"; do
    # shellcheck disable=SC2053 # ONLY is a pattern on purpose
    [[ ${entry%% *} == $ONLY ]] && selected+=("$entry")
done

# hugetlb pages in use or promised (Total - Free + Rsvd), read with bash alone so that sampling
# it while a tool runs costs next to nothing
hp_used() {
    local key value total=0 free=0 reserved=0
    while read -r key value _; do
        case $key in
        HugePages_Total:) total=$value ;;
        HugePages_Free:) free=$value ;;
        HugePages_Rsvd:) reserved=$value ;;
        esac
    done </proc/meminfo
    echo $((total - free + reserved))
}
# hp_sampler_start FILE / hp_sampler_stop: the highest hp_used seen every 0.2 s meanwhile,
# written to FILE (runs for both tools in the -hp cases, so both share its small cost)
hp_sampler_start() {
    local out=$1 parent=$$
    hp_used >"$out"
    (
        high=$(cat "$out")
        while kill -0 "$parent" 2>/dev/null; do
            used=$(hp_used)
            ((used > high)) && { high=$used; echo "$high" >"$out"; }
            sleep 0.2
        done
    ) &
    HP_SAMPLER=$!
}
hp_sampler_stop() {
    kill "$HP_SAMPLER" 2>/dev/null || true
    wait "$HP_SAMPLER" 2>/dev/null || true
    HP_SAMPLER=""
}

# The -hp cases need hugetlb pages for fio: reserve HP_PAGES more for the run, or skip them.
hp_wanted=0
for entry in "${selected[@]}"; do [[ $entry == *mmaphuge ]] && hp_wanted=1; done
if ((hp_wanted)); then
    HP_PAGES=${HP_PAGES:-$((DEPTH_1M / 2 + 4))}
    hp_skip=""
    if ((EUID != 0)); then
        hp_skip="not root: cannot reserve hugetlb pages (vm.nr_hugepages) for fio --iomem=mmaphuge"
    else
        hp_before=$(cat /proc/sys/vm/nr_hugepages)
        hp_free_before=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
        HP_PREV=$hp_before
        echo $((hp_before + HP_PAGES)) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
        hp_free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
        if ((hp_free - hp_free_before < HP_PAGES)); then
            hp_skip="the kernel gave $((hp_free - hp_free_before)) of $HP_PAGES hugetlb pages asked for (memory too fragmented?)"
            hp_restore
        else
            bench_log "vm.nr_hugepages $hp_before -> $((hp_before + HP_PAGES)) for fio's huge-page buffers (put back at exit)"
        fi
    fi
    if [[ -n $hp_skip ]]; then
        echo "skipping the -hp cases: $hp_skip" >&2
        kept=()
        for entry in "${selected[@]}"; do [[ $entry == *mmaphuge ]] || kept+=("$entry"); done
        selected=("${kept[@]}")
    fi
fi
CASES=("${selected[@]}")
RUN_DD=0
# shellcheck disable=SC2053
[[ dd == $ONLY ]] && RUN_DD=1
((${#CASES[@]} || RUN_DD)) || { echo "ONLY=$ONLY matches no case" >&2; exit 1; }

run_cm() {
    local name=$1 engine=$2 pattern=$4 io_type=$5 bs=$6 depth=$7 huge=$8 mem=$9
    [[ $mem == malloc ]] || hp_sampler_start "$BENCH_TMP/hp.high"
    measure cm "$CEPHMARK" run "$BENCH_TMP/disk.lua" -p path="$FILE" -p io_type="$io_type" \
        -p pattern="$pattern" -p block_size="$bs" -p threads="$depth" -p engine="$engine" \
        -p seconds="$SECONDS_RUN" -p size="$((FILE_MB * 1048576))" -p huge_pages="$huge"
    [[ $mem == malloc ]] || hp_sampler_stop
    local ops
    # the -hp cases are only like for like if cephmark got its huge pages
    if [[ $huge == true && $(kv cm huge_pages) != true ]]; then
        sample "cm.$name.nohp" 1
        bench_log "warning: cephmark $name asked for huge pages and did not get them"
    fi
    ops=$(kv cm ops)
    sample "cm.$name.mib" "$(kv cm mib_s)"
    sample "cm.$name.cpu" "$(awk -v c="$(cpu_of cm)" -v o="$ops" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
    bench_log "round $round cephmark $name: $(kv cm mib_s) MiB/s, $ops ops, engine $(kv cm engine), huge pages $(kv cm huge_pages)"
}

run_fio() {
    local name=$1 engine=$2 rw=$3 bs=$6 depth=$7 mem=$9
    local ioengine=psync hp_base
    [[ $engine == io_uring ]] && ioengine=io_uring
    if [[ $mem != malloc ]]; then
        hp_base=$(hp_used)
        hp_sampler_start "$BENCH_TMP/hp.high"
    fi
    measure fio fio --name="$name" --filename="$FILE" --ioengine="$ioengine" --iodepth="$depth" \
        --rw="$rw" --bs="$bs" --direct=1 --size="${FILE_MB}m" --time_based --runtime="$SECONDS_RUN" \
        --numjobs=1 --iomem="$mem" --output-format=json
    if [[ $mem != malloc ]]; then
        hp_sampler_stop
        # fio fails rather than falling back when its hugetlb mapping fails; this also shows
        # that the mapping was made from the pool while it ran
        local taken
        taken=$(($(cat "$BENCH_TMP/hp.high") - hp_base))
        sample "fio.$name.hp" "$taken"
        ((taken > 0)) || { echo "fio $name: no hugetlb pages taken while it ran (--iomem=$mem)" >&2; exit 1; }
    fi
    local dir=read
    [[ $rw == *write ]] && dir=write
    local bw ops
    bw=$(jq ".jobs[0].$dir.bw_bytes / 1048576" "$BENCH_TMP/fio.out")
    ops=$(jq ".jobs[0].$dir.total_ios" "$BENCH_TMP/fio.out")
    sample "fio.$name.mib" "$(fmt "$bw" '%.3f')"
    sample "fio.$name.cpu" "$(awk -v c="$(cpu_of fio)" -v o="$ops" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
    bench_log "round $round fio $name: $(fmt "$bw" '%.1f') MiB/s, $ops ops, iomem $mem$([[ $mem == malloc ]] || echo ", $(tail -1 "$BENCH_TMP/samples/fio.$name.hp") hugetlb pages")"
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
for entry in "${CASES[@]}"; do
    read -r -a c <<<"$entry"
    n=${c[0]}
    [[ -e $BENCH_TMP/samples/cm.$n.nohp ]] &&
        echo "$n: cephmark asked for huge pages and did not get them in $(wc -l <"$BENCH_TMP/samples/cm.$n.nohp") of $ROUNDS rounds"
    [[ ${c[8]} == malloc ]] && continue
    echo "$n: fio's buffers took $(samples "fio.$n.hp") hugetlb pages (2 MiB) in rounds 1-$ROUNDS"
done
((RUN_DD)) || exit 0
echo
echo "dd-style: $COUNT_DD x 1M, O_DIRECT, one op in flight (MB/s = 10^6 bytes/s, as dd prints)"
printf '%-8s %11s %11s %7s  %s\n' io "cm MB/s" "dd MB/s" ratio "per-round ratios"
for io_type in write read; do
    printf '%-8s %11.1f %11.1f %7s  %s\n' $io_type "$(med "cmdd.$io_type.mbs")" "$(med "dd.$io_type.mbs")" \
        "$(ratio "$(med "cmdd.$io_type.mbs")" "$(med "dd.$io_type.mbs")")" "$(ratios "cmdd.$io_type.mbs" "dd.$io_type.mbs" | paste -sd' ')"
done
