#!/usr/bin/env bash
# bench/swift-vs-wrk.sh: cephmark's HTTP target against wrk 4.1.0, a fast C HTTP load
# generator, on the same Swift GETs: OBJECTS objects of SIZE bytes written once by cephmark,
# then GET in order, over and over, at CONNECTIONS connections for SECONDS_RUN seconds, by
# wrk (bench/wrk-swift-get.lua, one thread, the Swift token from auth v1.0) and by cephmark
# (bench/swift-objects.lua) three ways: the native HTTP/1.1 transport verifying every body
# (the default for Swift over http), the same with verify=no, and libcurl's multi interface
# (transport=curl, verifying), interleaved over ROUNDS rounds. Prints the medians of requests/s and of
# client CPU per request (user+sys of the client process, from wait4) and the cephmark/wrk
# ratios. Targets: cephmark >= 0.95x wrk's requests/s, <= 1.2x its CPU per request.
# Needs a cluster with radosgw: CEPH_CONF pointing at a `cephmark cluster up --rgw` cluster
# (its credentials.conf sits next to ceph.conf), or ST_AUTH/ST_USER/ST_KEY set.
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

swift_wrk_setup

objects() { "$CEPHMARK" run "$BENCH_DIR/swift-objects.lua" -p container="$SWIFT_CONTAINER" -p prefix="$SWIFT_PREFIX" \
    -p objects="$OBJECTS" -p size="$SIZE" -p threads="$CONNECTIONS" "$@"; }
cleanup_objects() { objects -p mode=delete >/dev/null 2>&1 || true; }
trap 'cleanup_objects; bench_cleanup_all' EXIT

bench_log "writing $OBJECTS objects of $SIZE bytes into $SWIFT_CONTAINER"
objects -p mode=put >"$BENCH_TMP/put.out"
RUN_ID=$(tr ' ' '\n' <"$BENCH_TMP/put.out" | sed -n 's/^run_id=//p')


run_cephmark() { # NAME VERIFY TRANSPORT
    local name=$1 verify=$2 transport=$3
    measure "$name" "$CEPHMARK" run "$BENCH_DIR/swift-objects.lua" -p mode=get -p container="$SWIFT_CONTAINER" \
        -p prefix="$SWIFT_PREFIX" -p objects="$OBJECTS" -p size="$SIZE" -p threads="$CONNECTIONS" \
        -p seconds="$SECONDS_RUN" -p run_id="$RUN_ID" -p verify="$verify" -p transport="$transport"
    local ops seconds
    ops=$(kv "$name" ops)
    seconds=$(kv "$name" seconds)
    sample "$name.ops_s" "$(kv "$name" ops_s)"
    sample "$name.cpu_us" "$(awk -v c="$(cpu_of "$name")" -v o="$ops" 'BEGIN { printf "%.3f", c * 1e6 / o }')"
    sample "$name.p99_ms" "$(awk -v p="$(kv "$name" p99)" 'BEGIN { printf "%.3f", p * 1000 }')"
    bench_log "round $round $name: $ops requests in ${seconds}s, cpu $(cpu_of "$name")s, verify failures $(kv "$name" verify_failures)"
}

for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then
        run_wrk; run_cephmark cm yes native; run_cephmark cmnv no native; run_cephmark cmcurl yes curl
    else
        run_cephmark cmcurl yes curl; run_cephmark cmnv no native; run_cephmark cm yes native; run_wrk
    fi
done

echo
echo "cephmark vs wrk: Swift GETs of $OBJECTS objects of $SIZE bytes, $CONNECTIONS connections, one client thread"
echo "each, ${SECONDS_RUN}s runs, $ROUNDS interleaved rounds, medians; CPU = user+sys of the client process per request"
printf '%-22s %10s %8s %10s %8s %9s\n' client "req/s" ratio "CPU us/req" ratio "p99 ms"
for name in wrk cm cmnv cmcurl; do
    case $name in
    wrk) label="wrk 4.1.0 (-t 1)" ;;
    cm) label="cephmark native" ;;
    cmnv) label="  verify=no" ;;
    cmcurl) label="cephmark curl" ;;
    esac
    printf '%-22s %10.1f %8s %10.2f %8s %9.2f\n' "$label" "$(med "$name.ops_s")" \
        "$(ratio "$(med "$name.ops_s")" "$(med wrk.ops_s)")" "$(med "$name.cpu_us")" \
        "$(ratio "$(med "$name.cpu_us")" "$(med wrk.cpu_us)")" "$(med "$name.p99_ms")"
done
echo
echo "per-round ratios cephmark/wrk (req/s ; CPU per request):"
echo "  native:    $(ratios cm.ops_s wrk.ops_s | paste -sd' ') ; $(ratios cm.cpu_us wrk.cpu_us | paste -sd' ')"
echo "  verify=no: $(ratios cmnv.ops_s wrk.ops_s | paste -sd' ') ; $(ratios cmnv.cpu_us wrk.cpu_us | paste -sd' ')"
echo "  curl:      $(ratios cmcurl.ops_s wrk.ops_s | paste -sd' ') ; $(ratios cmcurl.cpu_us wrk.cpu_us | paste -sd' ')"
echo "targets: req/s ratio >= 0.95, CPU per request ratio <= 1.2"
