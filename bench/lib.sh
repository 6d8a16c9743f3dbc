# bench/lib.sh: helpers shared by the bench/*.sh benchmarks (sourced, not run): the cephmark
# binary, the helper build (aio_loop, cpurun), pools that are created and always deleted,
# client CPU accounting of one process, JSON field extraction, medians and ratios.
# Pool helpers need CEPH_CONF (or -c in CEPH_ARGS) to point at the cluster to use.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CEPHMARK=${CEPHMARK:-$BENCH_DIR/../build/cephmark}
BENCH_BUILD=${BENCH_BUILD:-$BENCH_DIR/build}
ROUNDS=${ROUNDS:-3}
# every measured command is killed after this many seconds (a full or broken cluster blocks
# I/O forever instead of failing)
export CPURUN_TIMEOUT=${CPURUN_TIMEOUT:-300}
BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cephmark-bench.XXXXXX")
BENCH_POOLS=()

bench_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

bench_build_helpers() {
    make -s -C "$BENCH_DIR" O="$BENCH_BUILD" >&2
    CPURUN=$BENCH_BUILD/cpurun
    # shellcheck disable=SC2034 # used by loop-vs-cephmark.sh
    AIO_LOOP=$BENCH_BUILD/aio_loop
}

# bench_require [--no-cluster] TOOL...: the cephmark binary, CEPH_CONF (unless --no-cluster)
# and the given tools must be there.
bench_require() {
    [[ -x $CEPHMARK ]] || { echo "cephmark binary not found: $CEPHMARK (set CEPHMARK)" >&2; exit 1; }
    local need_cluster=1
    [[ ${1:-} == --no-cluster ]] && { need_cluster=0; shift; }
    if ((need_cluster)) && [[ -z ${CEPH_CONF:-} ]]; then
        echo "CEPH_CONF is not set: point it at the cluster to benchmark, e.g." >&2
        echo "  $CEPHMARK cluster up --dir /tmp/bench-cluster && export CEPH_CONF=/tmp/bench-cluster/ceph.conf" >&2
        exit 1
    fi
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 1; }
    done
    if ((need_cluster)); then
        cluster_check "starting"
        memstore_ballast
    fi
}

# Creates a replicated pool with 8 PGs and waits until its PGs are active, so the first
# second of a run does not measure peering: listing the (empty) pool visits every PG and
# waits for each to be active (`ceph pg ...` needs a mgr, which the local cluster may lack).
pool_create() {
    local pool=$1
    ceph osd pool create "$pool" 8 >/dev/null 2>&1
    BENCH_POOLS+=("$pool")
    ceph osd pool application enable "$pool" rados >/dev/null 2>&1 || true
    timeout 120 rados -p "$pool" ls >/dev/null || { echo "pool $pool: not usable after 120 s" >&2; return 1; }
}

# cluster_check WHAT: stops the benchmark when an OSD is full (I/O would block). Besides real
# fullness, pacific's memstore can flag an OSD "full" (its log: "full status failsafe engaged
# ... now -2147483648% full") after removes or pool deletions, when its used-bytes count goes
# negative: see settle. The scripts delete their pools only at exit.
cluster_check() {
    local health
    health=$(timeout 30 ceph health detail 2>&1 || true)
    if grep -q -E 'OSD_FULL|POOL_FULL|full osd' <<<"$health"; then
        echo "the cluster has full OSDs before $1; I/O would block. ceph health detail:" >&2
        echo "$health" >&2
        echo "(with memstore this can be its accounting bug after pool deletions: restart the cluster)" >&2
        exit 1
    fi
}

# memstore_ballast: on memstore OSDs, makes sure the pool cmbench_memstore_ballast holds 16 MiB
# (4 objects of 4 MiB, on every OSD of a size-3 pool on 3 OSDs). Pacific's memstore miscounts
# its used bytes by a few tens of KiB per large cleanup, downwards: near empty the count goes
# negative, the OSD reads that as far over 100% full ("full status failsafe engaged ... now
# -2147483648% full"), and all writes block. The ballast keeps the count positive. It is the
# one pool the scripts keep (deleting it would expose the deficit): delete it with
#   ceph osd pool delete cmbench_memstore_ballast cmbench_memstore_ballast --yes-i-really-really-mean-it
# or tear the throwaway cluster down.
BALLAST_POOL=cmbench_memstore_ballast
memstore_ballast() {
    local stores
    stores=$(timeout 30 ceph osd metadata -f json 2>/dev/null | jq -r '.[].osd_objectstore' | sort -u)
    grep -qx memstore <<<"$stores" || return 0
    if ! timeout 30 rados -p "$BALLAST_POOL" stat ballast_3 >/dev/null 2>&1; then
        cluster_check "creating the memstore ballast"
        ceph osd pool create "$BALLAST_POOL" 8 >/dev/null 2>&1
        ceph osd pool application enable "$BALLAST_POOL" rados >/dev/null 2>&1 || true
        head -c 4194304 /dev/urandom >"$BENCH_TMP/ballast"
        local i
        for i in 0 1 2 3; do timeout 60 rados -p "$BALLAST_POOL" put "ballast_$i" "$BENCH_TMP/ballast"; done
        bench_log "memstore OSDs: created pool $BALLAST_POOL (16 MiB kept on purpose, see lib.sh)"
    fi
}

# settle: after many removes, waits until no OSD has been flagged full for 4 s in a row (at
# most 90 s): without the ballast, memstore's negative used-bytes count (see memstore_ballast)
# flags OSDs full for a few seconds after a cleanup, and a run that starts meanwhile stalls on
# the full flag for 10-15 s.
settle() {
    local clear=0 i
    for ((i = 0; i < 180 && clear < 8; i++)); do
        if timeout 30 ceph health 2>&1 | grep -q -E 'full osd|OSD_FULL'; then clear=0; else clear=$((clear + 1)); fi
        sleep 0.5
    done
    ((clear >= 8)) || bench_log "warning: OSDs still flagged full after 90 s"
}

pool_delete() {
    local pool=$1
    ceph osd pool delete "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1 || true
    local kept=() p
    for p in "${BENCH_POOLS[@]}"; do [[ $p == "$pool" ]] || kept+=("$p"); done
    BENCH_POOLS=("${kept[@]}")
}

pool_objects() { timeout 120 rados -p "$1" ls 2>/dev/null | wc -l; }

# mem_guard GIB WHAT: stops the benchmark when less than GIB GiB of RAM is available. Memstore
# OSDs keep every byte in RAM (and their RSS does not shrink much after deletes), and other
# people's clusters share this machine: running it out of memory gets OSDs OOM-killed.
mem_guard() {
    local avail
    avail=$(awk '/^MemAvailable:/ { printf "%d", $2 / 1048576 }' /proc/meminfo)
    if ((avail < $1)); then
        echo "only ${avail} GiB of RAM available (< $1 GiB) before $2: stopping rather than" \
            "running the machine out of memory (restart the cluster to give memstore's RAM back)" >&2
        exit 1
    fi
}

# split_cores: with SPLIT_CORES=1, pins the daemons of the cluster (the pids that `cephmark
# cluster up` keeps in the run/ folder next to $CEPH_CONF) to CPU 0 and sets CLIENT_PIN, the
# prefix that runs a client on the other CPUs, so that the CPU a client spends is no longer
# taken from the OSDs. Undone at exit. Only for clusters this user started.
CLIENT_PIN=()
BENCH_PINNED=()
split_cores() {
    [[ ${SPLIT_CORES:-0} == 1 ]] || return 0
    local run pid cpus
    run=$(dirname "$CEPH_CONF")/run
    cpus=$(nproc)
    if ! compgen -G "$run/*.pid" >/dev/null || ((cpus < 2)); then
        echo "SPLIT_CORES=1 needs 2 or more CPUs and a cluster from \`cephmark cluster up\` (no $run/*.pid)" >&2
        exit 2
    fi
    for pid in $(cat "$run"/*.pid); do
        taskset -a -cp 0 "$pid" >/dev/null && BENCH_PINNED+=("$pid")
    done
    CLIENT_PIN=(taskset -c "1-$((cpus - 1))")
    bench_log "SPLIT_CORES: ${#BENCH_PINNED[@]} cluster daemons on CPU 0, clients on CPUs 1-$((cpus - 1))"
}

bench_cleanup_all() {
    local p
    for p in "${BENCH_POOLS[@]}"; do
        ceph osd pool delete "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1 || true
    done
    for p in "${BENCH_PINNED[@]}"; do
        taskset -a -cp "0-$(($(nproc) - 1))" "$p" >/dev/null 2>&1 || true
    done
    rm -rf "$BENCH_TMP"
}
trap bench_cleanup_all EXIT
trap 'exit 130' INT TERM

# measure NAME CMD...: runs CMD with its stdout in $BENCH_TMP/NAME.out (stderr in NAME.err)
# and its CPU in NAME.cpu ("user sys wall maxrss vcsw ivcsw"). Fails the script when CMD fails.
measure() {
    local name=$1
    shift
    rm -f "$BENCH_TMP/$name.cpu"
    if ! "$CPURUN" "$BENCH_TMP/$name.cpu" "$@" >"$BENCH_TMP/$name.out" 2>"$BENCH_TMP/$name.err"; then
        echo "failed: $*" >&2
        tail -5 "$BENCH_TMP/$name.err" >&2
        return 1
    fi
}
cpu_of() { awk '{ printf "%.6f\n", $1 + $2 }' "$BENCH_TMP/$1.cpu"; }
# osd_cpu_s: user+sys CPU seconds used so far by the OSDs of the cluster in $CEPH_CONF (their
# pid files are in run/ next to the conf, as `cephmark cluster up` lays them out); 0 if none
osd_cpu_s() {
    local run_dir f total=0 ticks
    run_dir=$(dirname "${CEPH_CONF:-/etc/ceph/ceph.conf}")/run
    ticks=$(getconf CLK_TCK)
    for f in "$run_dir"/osd.*.pid; do
        [[ -r $f ]] || continue
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$(cat "$f")/stat" 2>/dev/null || echo 0)))
    done
    awk -v t="$total" -v hz="$ticks" 'BEGIN { printf "%.3f\n", t / hz }'
}
# machine_busy_s: CPU seconds all cores spent not idle so far (from /proc/stat)
machine_busy_s() {
    awk -v hz="$(getconf CLK_TCK)" '/^cpu / { printf "%.3f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat
}
wall_of() { awk '{ print $3 }' "$BENCH_TMP/$1.cpu"; }
csw_of() { awk '{ print $5 + $6 }' "$BENCH_TMP/$1.cpu"; } # context switches, all threads
# the JSON document a bench tool printed (rados bench prints "hints = 1" first)
json_of() { grep -o '{.*}' "$BENCH_TMP/$1.out" | tail -1; }
# field of a rados-bench style JSON document (values are strings there)
jfield() { json_of "$1" | jq -r ".$2 | tonumber"; }

# median of the numbers on stdin (mean of the middle two for an even count)
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# ratio A B -> A/B with 3 decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "nan"; else printf "%.3f\n", a / b }'; }
fmt() { awk -v v="$1" -v f="$2" 'BEGIN { printf f, v }'; }

# Samples are kept one per line in $BENCH_TMP/samples/KEY; med KEY prints their median.
sample() { mkdir -p "$BENCH_TMP/samples"; echo "$2" >>"$BENCH_TMP/samples/$1"; }
med() { median <"$BENCH_TMP/samples/$1"; }
samples() { paste -sd' ' "$BENCH_TMP/samples/$1"; }
# per-round ratios of two sample series, one per line
ratios() { paste "$BENCH_TMP/samples/$1" "$BENCH_TMP/samples/$2" | awk '{ if ($2 == 0) print "nan"; else printf "%.3f\n", $1 / $2 }'; }
# kv NAME KEY: the value of KEY=VALUE in NAME's stdout (one line of space-separated pairs)
kv() { tr ' ' '\n' <"$BENCH_TMP/$1.out" | sed -n "s/^$2=//p" | tail -1; }

# ---- rbd (bench/rbd-vs-fio.sh) ----
# rbd_pool_create POOL: pool_create's pool, initialised for RBD (`rbd pool init` sets the
# rbd application), deleted at exit like the others.
rbd_pool_create() {
    local pool=$1
    ceph osd pool create "$pool" 8 >/dev/null 2>&1
    BENCH_POOLS+=("$pool")
    timeout 120 rbd pool init "$pool" || { echo "pool $pool: rbd pool init failed" >&2; return 1; }
    timeout 120 rados -p "$pool" ls >/dev/null || { echo "pool $pool: not usable after 120 s" >&2; return 1; }
}
# size_bytes 4K -> 4096 (binary units, as rbd and fio read them)
size_bytes() { numfmt --from=iec "$1"; }
# fio_field NAME JQ: a number from the JSON document fio printed (--output-format=json)
fio_field() { jq -r "$2" "$BENCH_TMP/$1.out"; }
# rbd_bench_summary NAME: "OPS OPS_PER_SEC" from rbd bench's "elapsed: ... ops: ... ops/sec: ..."
rbd_bench_summary() {
    awk '/^elapsed:/ { for (i = 1; i < NF; i++) { if ($i == "ops:") o = $(i + 1); if ($i == "ops/sec:") r = $(i + 1) } }
        END { if (o == "") exit 1; print o, r }' "$BENCH_TMP/$1.out"
}

# ---- wrk's Swift GETs (bench/swift-vs-wrk.sh, bench/s3-vs-wrk.sh) ----
# swift_wrk_setup: Swift credentials (ST_* or the local cluster's credentials file, never
# printed), a token for wrk, and what bench/wrk-swift-get.lua reads: SWIFT_PATH,
# SWIFT_TOKEN_FILE, SWIFT_CONTAINER (cmbench_wrk_PID), SWIFT_PREFIX, SWIFT_OBJECTS; sets
# ORIGIN (http://host:port of the storage URL). Needs OBJECTS.
swift_wrk_setup() {
    if [[ -z ${ST_AUTH:-} ]]; then
        creds=${CEPHMARK_CREDENTIALS:-$(dirname "${CEPH_CONF:-/nonexistent/x}")/credentials.conf}
        [[ -r $creds ]] || { echo "no Swift credentials: set ST_AUTH/ST_USER/ST_KEY or CEPH_CONF of a cluster made with --rgw" >&2; exit 1; }
        ST_AUTH=$(awk -F' = ' '/^\[/{s=$0} s=="[swift]" && $1=="auth_url"{print $2}' "$creds")
        ST_USER=$(awk -F' = ' '/^\[/{s=$0} s=="[swift]" && $1=="user"{print $2}' "$creds")
        ST_KEY=$(awk -F' = ' '/^\[/{s=$0} s=="[swift]" && $1=="key"{print $2}' "$creds")
        export ST_AUTH ST_USER ST_KEY
    fi

    # the token for wrk: the key goes to curl through a 0600 header file, not the command line
    umask 077
    printf 'X-Auth-User: %s\nX-Auth-Key: %s\n' "$ST_USER" "$ST_KEY" >"$BENCH_TMP/auth.headers"
    curl -s -D "$BENCH_TMP/auth.response" -o /dev/null -H @"$BENCH_TMP/auth.headers" "$ST_AUTH"
    rm -f "$BENCH_TMP/auth.headers"
    tr -d '\r' <"$BENCH_TMP/auth.response" | sed -n 's/^[Xx]-[Aa]uth-[Tt]oken: //p' >"$BENCH_TMP/token"
    STORAGE_URL=$(tr -d '\r' <"$BENCH_TMP/auth.response" | sed -n 's/^[Xx]-[Ss]torage-[Uu]rl: //p')
    rm -f "$BENCH_TMP/auth.response"
    [[ -s $BENCH_TMP/token && -n $STORAGE_URL ]] || { echo "Swift auth at $ST_AUTH failed" >&2; exit 1; }
    # http://host:port/swift/v1 -> origin http://host:port and path /swift/v1
    ORIGIN=$(sed -E 's#^(https?://[^/]+).*#\1#' <<<"$STORAGE_URL")
    export SWIFT_PATH=${STORAGE_URL#"$ORIGIN"}
    export SWIFT_TOKEN_FILE=$BENCH_TMP/token
    export SWIFT_CONTAINER=cmbench_wrk_$$
    export SWIFT_PREFIX=obj
    export SWIFT_OBJECTS=$OBJECTS
}
# run_wrk: one wrk run of Swift GETs in order (one thread, CONNECTIONS connections,
# SECONDS_RUN seconds) as sample wrk.ops_s, wrk.cpu_us (per request) and wrk.p99_ms.
run_wrk() {
    measure wrk wrk -t 1 -c "$CONNECTIONS" -d "${SECONDS_RUN}s" -s "$BENCH_DIR/wrk-swift-get.lua" "$ORIGIN"
    local requests seconds errors
    requests=$(kv wrk wrk_requests)
    seconds=$(kv wrk wrk_seconds)
    errors=$(kv wrk wrk_errors_status)
    [[ $errors == 0 ]] || bench_log "warning: wrk got $errors non-2xx answers"
    sample wrk.ops_s "$(awk -v o="$requests" -v s="$seconds" 'BEGIN { printf "%.1f", o / s }')"
    sample wrk.cpu_us "$(awk -v c="$(cpu_of wrk)" -v o="$requests" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
    sample wrk.p99_ms "$(awk -v p="$(kv wrk wrk_p99)" 'BEGIN { printf "%.3f", p * 1000 }')"
    bench_log "round $round wrk: $requests requests in ${seconds}s, cpu $(cpu_of wrk)s"
}
