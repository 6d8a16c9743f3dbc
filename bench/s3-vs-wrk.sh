#!/usr/bin/env bash
# bench/s3-vs-wrk.sh: cephmark's S3 over the native HTTP/1.1 transport (SigV4 signed by
# cephmark, the default for http:// endpoints) against wrk 4.1.0's Swift GETs, the fastest
# peer client on the same gateway (wrk cannot sign S3 requests without a Lua HMAC, which it
# lacks). OBJECTS objects of SIZE bytes are written once through Swift (for wrk and cephmark's
# Swift GETs) and once through S3; then, interleaved over ROUNDS rounds, each for SECONDS_RUN
# seconds at CONNECTIONS connections and one client thread:
#   wrk         Swift GET in order (bench/wrk-swift-get.lua, as bench/swift-vs-wrk.sh)
#   swift       cephmark Swift GET, native transport, every body verified
#   s3get       cephmark S3 GET, native transport, every body verified
#   s3put       cephmark S3 PUT of new objects, native transport (deleted after the round,
#               outside the measurement)
#   s3curl      cephmark S3 GET over libcurl (the fallback), verified, for reference
#   s3putcurl   cephmark S3 PUT over libcurl, for reference: what the gateway takes in PUTs
#               from another client (PUTs are bound by the OSDs' writes, not by the client)
# Prints the medians of requests/s and client CPU per request (user+sys of the client process,
# from wait4, setup included as for wrk) and their ratios to wrk's Swift GET.
# Targets: S3 GET and PUT >= 1.0x wrk's requests/s at <= 1.1x its CPU per request; Swift GET
# <= 1.0x its CPU per request.
# Needs a cluster with radosgw: CEPH_CONF pointing at a `cephmark cluster up --rgw` cluster
# (its credentials.conf, with [swift] and [s3], sits next to ceph.conf).
# Environment: CEPHMARK (binary), ROUNDS (3), SECONDS_RUN (10), CONNECTIONS (64),
# OBJECTS (1000), SIZE (4096). Run it under `flock /tmp/cephmark-bench.lock`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SECONDS_RUN=${SECONDS_RUN:-10}
CONNECTIONS=${CONNECTIONS:-64}
OBJECTS=${OBJECTS:-1000}
SIZE=${SIZE:-4096}

bench_require --no-cluster wrk curl
bench_build_helpers

# Swift credentials: ST_* or the local cluster's credentials file (never printed)
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

S3_BUCKET=cmbench-s3-$$

swift_objects() { "$CEPHMARK" run "$BENCH_DIR/swift-objects.lua" -p container="$SWIFT_CONTAINER" -p prefix="$SWIFT_PREFIX" \
    -p objects="$OBJECTS" -p size="$SIZE" -p threads="$CONNECTIONS" "$@"; }
s3_objects() { "$CEPHMARK" run "$BENCH_DIR/s3-objects.lua" -p bucket="$S3_BUCKET" -p size="$SIZE" \
    -p threads="$CONNECTIONS" "$@"; }
cleanup_objects() {
    swift_objects -p mode=delete >/dev/null 2>&1 || true
    s3_objects -p mode=delete -p prefix=obj -p objects="$OBJECTS" -p run_id="${S3_RUN_ID:-0}" -p drop=yes >/dev/null 2>&1 || true
}
trap 'cleanup_objects; bench_cleanup_all' EXIT

bench_log "writing $OBJECTS objects of $SIZE bytes into $SWIFT_CONTAINER (Swift) and $S3_BUCKET (S3)"
swift_objects -p mode=put >"$BENCH_TMP/put.out"
RUN_ID=$(tr ' ' '\n' <"$BENCH_TMP/put.out" | sed -n 's/^run_id=//p')
s3_objects -p mode=put -p prefix=obj -p objects="$OBJECTS" >"$BENCH_TMP/s3put.out"
S3_RUN_ID=$(tr ' ' '\n' <"$BENCH_TMP/s3put.out" | sed -n 's/^run_id=//p')

run_wrk() {
    measure wrk wrk -t 1 -c "$CONNECTIONS" -d "${SECONDS_RUN}s" -s "$BENCH_DIR/wrk-swift-get.lua" "$ORIGIN"
    local requests seconds errors
    requests=$(kv wrk wrk_requests)
    seconds=$(kv wrk wrk_seconds)
    errors=$(kv wrk wrk_errors_status)
    [[ $errors == 0 ]] || bench_log "warning: wrk got $errors non-2xx answers"
    sample wrk.ops_s "$(awk -v o="$requests" -v s="$seconds" 'BEGIN { printf "%.1f", o / s }')"
    sample wrk.cpu_us "$(awk -v c="$(cpu_of wrk)" -v o="$requests" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
    bench_log "round $round wrk: $requests requests in ${seconds}s, cpu $(cpu_of wrk)s"
}

record() { # NAME: the samples of a cephmark run
    local name=$1 ops
    ops=$(kv "$name" ops)
    [[ $(kv "$name" transport) == "${2:-native}" ]] || { echo "$name ran over $(kv "$name" transport)" >&2; exit 1; }
    sample "$name.ops_s" "$(kv "$name" ops_s)"
    sample "$name.cpu_us" "$(awk -v c="$(cpu_of "$name")" -v o="$ops" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
    bench_log "round $round $name: $ops requests in $(kv "$name" seconds)s, cpu $(cpu_of "$name")s, errors $(kv "$name" errors), verify failures $(kv "$name" verify_failures)"
}

run_swift() {
    measure swift "$CEPHMARK" run "$BENCH_DIR/swift-objects.lua" -p mode=get -p container="$SWIFT_CONTAINER" \
        -p prefix="$SWIFT_PREFIX" -p objects="$OBJECTS" -p size="$SIZE" -p threads="$CONNECTIONS" \
        -p seconds="$SECONDS_RUN" -p run_id="$RUN_ID" -p transport=native
    record swift
}

run_s3get() { # NAME TRANSPORT
    measure "$1" "$CEPHMARK" run "$BENCH_DIR/s3-objects.lua" -p mode=get -p bucket="$S3_BUCKET" -p prefix=obj \
        -p objects="$OBJECTS" -p size="$SIZE" -p threads="$CONNECTIONS" -p seconds="$SECONDS_RUN" \
        -p run_id="$S3_RUN_ID" -p transport="$2"
    record "$1" "$2"
}

run_s3put() { # NAME TRANSPORT
    measure "$1" "$CEPHMARK" run "$BENCH_DIR/s3-objects.lua" -p mode=putrun -p bucket="$S3_BUCKET" \
        -p prefix="$1$round" -p size="$SIZE" -p threads="$CONNECTIONS" -p seconds="$SECONDS_RUN" -p transport="$2"
    record "$1" "$2"
    # the objects it wrote go, outside the measurement
    s3_objects -p mode=delete -p prefix="$1$round" -p objects="$(kv "$1" objects)" \
        -p run_id="$(kv "$1" run_id)" >/dev/null
}

for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then
        run_wrk; run_swift; run_s3get s3get native; run_s3put s3put native; run_s3get s3curl curl
        run_s3put s3putcurl curl
    else
        run_s3put s3putcurl curl; run_s3get s3curl curl; run_s3put s3put native
        run_s3get s3get native; run_swift; run_wrk
    fi
done

echo
echo "cephmark S3 (native transport, SigV4) vs wrk's Swift GETs: $OBJECTS objects of $SIZE bytes, $CONNECTIONS"
echo "connections, one client thread each, ${SECONDS_RUN}s runs, $ROUNDS interleaved rounds, medians; CPU = user+sys"
echo "of the client process per request"
printf '%-28s %10s %8s %10s %8s\n' client "req/s" ratio "CPU us/req" ratio
for name in wrk swift s3get s3put s3curl s3putcurl; do
    case $name in
    wrk) label="wrk 4.1.0 Swift GET" ;;
    swift) label="cephmark Swift GET native" ;;
    s3get) label="cephmark S3 GET native" ;;
    s3put) label="cephmark S3 PUT native" ;;
    s3curl) label="cephmark S3 GET curl" ;;
    s3putcurl) label="cephmark S3 PUT curl" ;;
    esac
    printf '%-28s %10.1f %8s %10.2f %8s\n' "$label" "$(med "$name.ops_s")" \
        "$(ratio "$(med "$name.ops_s")" "$(med wrk.ops_s)")" "$(med "$name.cpu_us")" \
        "$(ratio "$(med "$name.cpu_us")" "$(med wrk.cpu_us)")"
done
echo
echo "per-round ratios to wrk (req/s ; CPU per request):"
for name in swift s3get s3put s3curl s3putcurl; do
    printf '  %-9s %s ; %s\n' "$name" "$(ratios "$name.ops_s" wrk.ops_s | paste -sd' ')" "$(ratios "$name.cpu_us" wrk.cpu_us | paste -sd' ')"
done
echo "targets: S3 GET and PUT req/s ratio >= 1.0 at CPU per request ratio <= 1.1; Swift GET CPU ratio <= 1.0"
