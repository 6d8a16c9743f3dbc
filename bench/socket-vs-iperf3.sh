#!/usr/bin/env bash
# bench/socket-vs-iperf3.sh: cephmark's TCP bandwidth test (cephmark.socket against
# `cephmark netserver`) against iperf3 (client against `iperf3 -s`) on loopback, 128 KiB
# buffers, interleaved over ROUNDS rounds (A,B then B,A): one stream sending, one stream
# receiving (iperf3 -R), STREAMS streams sending (iperf3 -P). Compares what the receiver
# counted (cephmark: the server's figure; iperf3: sum_received), and client CPU per GiB.
# Also request/response latency (cephmark rr, 1-byte messages) for reference.
# Target: cephmark >= 0.9x iperf3's bandwidth. Needs no cluster.
# Environment: CEPHMARK, ROUNDS (3), SECONDS_RUN (5), STREAMS (4).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SECONDS_RUN=${SECONDS_RUN:-5}
STREAMS=${STREAMS:-4}

bench_require --no-cluster iperf3 jq
bench_build_helpers

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
CM_PORT=$(free_port)
IPERF_PORT=$(free_port)
"$CEPHMARK" netserver --port "$CM_PORT" --quiet >"$BENCH_TMP/netserver.log" 2>&1 &
CM_SERVER=$!
iperf3 -s -p "$IPERF_PORT" >"$BENCH_TMP/iperf3-server.log" 2>&1 &
IPERF_SERVER=$!
trap 'kill "$CM_SERVER" "$IPERF_SERVER" 2>/dev/null; wait 2>/dev/null; bench_cleanup_all' EXIT
for _ in $(seq 50); do
    grep -q listening "$BENCH_TMP/netserver.log" 2>/dev/null && break
    sleep 0.1
done
sleep 0.5

cat >"$BENCH_TMP/socket.lua" <<'EOF'
local p = ...
local socket = require "cephmark.socket"
local r = socket.bench { host = "127.0.0.1", port = tonumber(p.port), streams = tonumber(p.streams),
  direction = p.direction, mode = p.mode, seconds = tonumber(p.seconds), buffer_size = "128K" }
local received = r.direction == "send" and r.receiver_bits_per_second or r.bits_per_second
print(string.format("received_bps=%.0f sender_bps=%.0f bytes=%d ops=%d retransmits=%d p50_us=%.2f p99_us=%.2f errors=%d",
  received or 0, r.bits_per_second, r.bytes, r.ops, r.retransmits, r.lat.p50 * 1e6, r.lat.p99 * 1e6, r.errors))
return { errors = r.errors }
EOF

# case name, direction, streams
CASES=("send-1 send 1" "recv-1 recv 1" "send-$STREAMS send $STREAMS")

run_cm() {
    local name=$1 direction=$2 streams=$3
    measure cm "$CEPHMARK" run "$BENCH_TMP/socket.lua" -p port="$CM_PORT" -p streams="$streams" \
        -p direction="$direction" -p mode=stream -p seconds="$SECONDS_RUN"
    local bps bytes
    bps=$(kv cm received_bps)
    bytes=$(kv cm bytes)
    sample "cm.$name.gbps" "$(awk -v b="$bps" 'BEGIN { printf "%.3f", b / 1e9 }')"
    sample "cm.$name.cpu" "$(awk -v c="$(cpu_of cm)" -v b="$bytes" 'BEGIN { printf "%.4f", c / (b / 1073741824) }')"
    sample "cm.$name.retr" "$(kv cm retransmits)"
    bench_log "round $round cephmark $name: $(fmt "$bps" '%.0f') bit/s received"
}

run_iperf() {
    local name=$1 direction=$2 streams=$3
    local extra=()
    [[ $direction == recv ]] && extra+=(-R)
    measure ip iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -t "$SECONDS_RUN" -P "$streams" -l 128K -J "${extra[@]}"
    local bps bytes
    bps=$(jq '.end.sum_received.bits_per_second' "$BENCH_TMP/ip.out")
    bytes=$(jq '.end.sum_sent.bytes' "$BENCH_TMP/ip.out")
    [[ $direction == recv ]] && bytes=$(jq '.end.sum_received.bytes' "$BENCH_TMP/ip.out")
    sample "ip.$name.gbps" "$(awk -v b="$bps" 'BEGIN { printf "%.3f", b / 1e9 }')"
    sample "ip.$name.cpu" "$(awk -v c="$(cpu_of ip)" -v b="$bytes" 'BEGIN { printf "%.4f", c / (b / 1073741824) }')"
    sample "ip.$name.retr" "$(jq '.end.sum_sent.retransmits // 0' "$BENCH_TMP/ip.out")"
    bench_log "round $round iperf3 $name: $(fmt "$bps" '%.0f') bit/s received"
}

run_rr() {
    measure rr "$CEPHMARK" run "$BENCH_TMP/socket.lua" -p port="$CM_PORT" -p streams=1 \
        -p direction=send -p mode=rr -p seconds="$SECONDS_RUN"
    sample rr.p50 "$(kv rr p50_us)"
    sample rr.p99 "$(kv rr p99_us)"
    sample rr.ops "$(awk -v o="$(kv rr ops)" -v s="$SECONDS_RUN" 'BEGIN { printf "%.0f", o / s }')"
}

for ((round = 1; round <= ROUNDS; round++)); do
    for entry in "${CASES[@]}"; do
        read -r -a c <<<"$entry"
        if ((round % 2)); then run_cm "${c[@]}"; run_iperf "${c[@]}"; else run_iperf "${c[@]}"; run_cm "${c[@]}"; fi
    done
    run_rr
done

echo
echo "socket: cephmark.socket + netserver vs iperf3 on loopback, 128 KiB buffers, ${SECONDS_RUN}s runs,"
echo "$ROUNDS interleaved rounds, medians; Gbit/s as the receiver counted; client CPU s per GiB moved"
printf '%-8s %9s %9s %7s %9s %9s %7s %6s %6s  %s\n' case "cm Gb/s" "ip Gb/s" ratio "cm s/GiB" "ip s/GiB" ratio "cm rtx" "ip rtx" "per-round ratios"
for entry in "${CASES[@]}"; do
    read -r -a c <<<"$entry"
    n=${c[0]}
    printf '%-8s %9.2f %9.2f %7s %9.3f %9.3f %7s %6s %6s  %s\n' "$n" "$(med "cm.$n.gbps")" "$(med "ip.$n.gbps")" \
        "$(ratio "$(med "cm.$n.gbps")" "$(med "ip.$n.gbps")")" "$(med "cm.$n.cpu")" "$(med "ip.$n.cpu")" \
        "$(ratio "$(med "cm.$n.cpu")" "$(med "ip.$n.cpu")")" "$(med "cm.$n.retr")" "$(med "ip.$n.retr")" \
        "$(ratios "cm.$n.gbps" "ip.$n.gbps" | paste -sd' ')"
done
echo
echo "request/response (cephmark rr, 1 stream, 1-byte request and response): $(med rr.ops) round trips/s," \
    "p50 $(med rr.p50) us, p99 $(med rr.p99) us"
