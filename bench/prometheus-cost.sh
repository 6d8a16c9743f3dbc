#!/usr/bin/env bash
# bench/prometheus-cost.sh: what reading each phase's figures from Prometheus costs the client
# (docs/performance.md, section 12). Starts Prometheus, node-exporter and process-exporter
# on free loopback ports (scrape interval SCRAPE, default 1s; process-exporter at twice
# that), waits for a minute of data (WARMUP seconds, default 70), runs
# bench/prometheus-cost.lua against them, and stops them by their pids. Needs no cluster.
# usage: CEPHMARK=build/cephmark [PHASES=20] [ROUNDS=5] bench/prometheus-cost.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_require --no-cluster prometheus prometheus-node-exporter prometheus-process-exporter python3

SCRAPE=${SCRAPE:-1}
WARMUP=${WARMUP:-70}
PHASES=${PHASES:-20}
pids=()
stop_all() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  bench_cleanup_all
}
trap stop_all EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
prom_port=$(free_port)
node_port=$(free_port)
process_port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$node_port" --collector.disable-defaults \
  --collector.cpu --collector.diskstats --collector.netdev '--collector.netdev.device-exclude=^$' \
  >"$BENCH_TMP/node.log" 2>&1 &
pids+=($!)
prometheus-process-exporter -web.listen-address "127.0.0.1:$process_port" \
  -procnames ceph-osd,ceph-mon,ceph-mgr,radosgw -threads=false -gather-smaps=false \
  >"$BENCH_TMP/process.log" 2>&1 &
pids+=($!)
cat >"$BENCH_TMP/prometheus.yml" <<YML
global:
  scrape_interval: ${SCRAPE}s
  scrape_timeout: ${SCRAPE}s
scrape_configs:
  - job_name: node
    static_configs: [{ targets: ["127.0.0.1:$node_port"] }]
  - job_name: process
    scrape_interval: $((2 * SCRAPE))s
    scrape_timeout: $((2 * SCRAPE))s
    static_configs: [{ targets: ["127.0.0.1:$process_port"] }]
YML
prometheus --config.file="$BENCH_TMP/prometheus.yml" --storage.tsdb.path="$BENCH_TMP/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$BENCH_TMP/prometheus.log" 2>&1 &
pids+=($!)
bench_log "Prometheus on 127.0.0.1:$prom_port; collecting ${WARMUP} s of samples"
sleep "$WARMUP"
"$CEPHMARK" run "$BENCH_DIR/prometheus-cost.lua" -o "$BENCH_TMP/results" \
  -p url="http://127.0.0.1:$prom_port" -p phases="$PHASES" -p rounds="$ROUNDS" | grep -v '^\(scenario\|params\|results\|report\):'
