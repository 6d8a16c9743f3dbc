# Phase figures from Prometheus (docs/prometheus.md) against a real Prometheus,
# node-exporter and process-exporter from Debian's packages, started here on loopback on free
# ports (scrape interval 1 s for node-exporter, 5 s for process-exporter, whose scrape of
# /proc takes over 2 s on a loaded machine), with a temporary storage folder, and
# stopped at the end by their pids. A write phase on the shared cluster gets, for this host:
# CPU busy seconds > 0, loopback bytes above the bytes it wrote (the cluster is on loopback,
# and a size-3 pool sends each byte three times), the ceph-osd group's CPU > 0 from
# process-exporter, and the source of the URL and of the daemons' CPU named. Prometheus
# down, or answering an error, gives one warning and exit 0 with the phase results intact;
# a malformed URL is refused before the run (exit 2). With no URL, the dashboard's
# PROMETHEUS_API_HOST in the cluster's config database is used, and --no-telemetry or
# `prometheus = false` skips that lookup.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"

work=$(mktemp -d)
pids=()
mgr_key=mgr/dashboard/PROMETHEUS_API_HOST
mgr_key_set=
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  [ -n "$mgr_key_set" ] && ceph config rm mgr "$mgr_key" >/dev/null 2>&1
  for p in $(ceph osd pool ls 2>/dev/null | grep '^cephmark-prom-'); do
    ceph osd pool rm "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1
  done
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

for tool in prometheus prometheus-node-exporter prometheus-process-exporter curl python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL: $tool is not installed (quickstart.sh installs it: apt-get install $tool)"
    exit 1
  fi
done

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
prom_port=$(free_port)
node_port=$(free_port)
process_port=$(free_port)
dead_port=$(free_port) # nothing listens there
url="http://127.0.0.1:$prom_port"

# Debian's node-exporter leaves out lo by default (--collector.netdev.device-exclude=^lo$);
# here the cluster's traffic is all on lo
prometheus-node-exporter --web.listen-address="127.0.0.1:$node_port" --collector.disable-defaults \
  --collector.cpu --collector.diskstats --collector.netdev '--collector.netdev.device-exclude=^$' \
  >"$work/node.log" 2>&1 &
pids+=($!)
prometheus-process-exporter -web.listen-address "127.0.0.1:$process_port" \
  -procnames ceph-osd,ceph-mon,ceph-mgr,radosgw -threads=false -gather-smaps=false \
  >"$work/process.log" 2>&1 &
pids+=($!)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: node
    static_configs: [{ targets: ["127.0.0.1:$node_port"] }]
  - job_name: process
    scrape_interval: 5s
    scrape_timeout: 5s
    static_configs: [{ targets: ["127.0.0.1:$process_port"] }]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)

# has EXPR: the query's answer has a sample
has() {
  curl -s --max-time 5 "$url/api/v1/query" --data-urlencode "query=$1" | grep -q '"result":\[{'
}
# Prometheus has scraped both exporters a few times (bounded: 90 s on a loaded machine)
scraped() {
  has 'count(up == 1) == 2' &&
    has 'count_over_time(namedprocess_namegroup_cpu_seconds_total{groupname="ceph-osd",mode="user"}[20s]) >= 2' &&
    has 'count_over_time(node_cpu_seconds_total{mode="idle"}[5s]) >= 3'
}
if ! wait_until 90 0.5 scraped; then
  echo "FAIL: Prometheus did not scrape node-exporter and process-exporter within 90 s"
  tail -5 "$work/prometheus.log" "$work/node.log" "$work/process.log"
  exit 1
fi

cat >"$work/prom.lua" <<'EOF'
local cm = require "cephmark"
return cm.scenario {
  name = "prom",
  params = { seconds = 3 },
  pools = { rep = { type = "replicated", size = 3, pg_num = 8 } },
  run = function(s, p)
    s:phase("write", s:pool("rep"), { seconds = p.seconds, threads = 4, block_size = "16K" })
    s:phase("cleanup", s:pool("rep"))
  end,
}
EOF

# check_results (tests/lib/results.sh) with the write phase `w` and its
# `cluster.prometheus` table `pr`; on failure, the write phase's window, result and cluster
results_names='
w = [p for p in d["phases"] if p["name"] == "write"][0]
pr = w.get("cluster", {}).get("prometheus", {})'
results_dump='
print("  write phase:", json.dumps({k: w.get(k) for k in ("window", "result", "cluster")})[:3000])'

# 1. the figures, for this host (instance 127.0.0.1:node_port and 127.0.0.1:process_port)
run_cli 0 run "$work/prom.lua" -p progress=false -o "$work/on" --prometheus "$url/"
expect_stdout "^prometheus: figures for 2 phases from $url \(--prometheus\), scrape interval 1 s \(up to 5 s\)"
check_results "$work/on" \
  'w["status"] == "ok" and w["result"]["ops"] > 0' \
  'w["window"]["stop"] > w["window"]["start"] and abs(w["window"]["seconds"] - (w["window"]["stop"] - w["window"]["start"])) < 1e-6' \
  'w["window"]["seconds"] >= 3' \
  "pr['url'] == '$url' and pr['source'] == '--prometheus'" \
  'pr["scrape_interval"] == 1 and pr["longest_scrape_interval"] == 5 and pr["coarse"] == (w["window"]["seconds"] < 2)' \
  'pr["ceph_cpu"].get("coarse", False) == (w["window"]["seconds"] < 10)' \
  "sorted(pr['hosts']['127.0.0.1']['instances']) == sorted(['127.0.0.1:$node_port', '127.0.0.1:$process_port'])" \
  'pr["hosts"]["127.0.0.1"]["cpu"]["busy_seconds"] > 0' \
  '0 < pr["hosts"]["127.0.0.1"]["cpu"]["busy_fraction"] <= 1 and pr["hosts"]["127.0.0.1"]["cpu"]["cpus"] >= 1' \
  'pr["cpu_busy_seconds"] >= pr["hosts"]["127.0.0.1"]["cpu"]["busy_seconds"]' \
  'pr["hosts"]["127.0.0.1"]["network"]["lo"]["receive_bytes"] > w["result"]["bytes"] > 0' \
  'pr["hosts"]["127.0.0.1"]["network"]["lo"]["transmit_bytes"] > w["result"]["bytes"]' \
  'len(pr["hosts"]["127.0.0.1"]["disks"]) >= 1 and all(0 <= x["utilisation"] for x in pr["hosts"]["127.0.0.1"]["disks"].values())' \
  'pr["hosts"]["127.0.0.1"]["ceph"]["ceph-osd"]["seconds"] > 0' \
  'pr["ceph_cpu"]["source"].startswith("process-exporter") and "none" not in pr["ceph_cpu"]' \
  'pr["ceph_cpu"]["kinds"]["ceph-osd"]["seconds"] > 0 and pr["osd_cpu_seconds"] == pr["ceph_cpu"]["kinds"]["ceph-osd"]["seconds"]'

# 2. Prometheus down (nothing listens on the port): one warning, exit 0, the phases intact
run_cli 0 run "$work/prom.lua" -p progress=false -p seconds=1 -o "$work/down" --prometheus "http://127.0.0.1:$dead_port"
expect_stderr "^cephmark: warning: Prometheus at http://127.0.0.1:$dead_port \(--prometheus\) could not be read: .*; phases are recorded without its figures$"
expect_stderr_lines 1
check_results "$work/down" 'd["status"] == "ok"' 'w["status"] == "ok" and w["result"]["ops"] > 0' \
  "pr['missing'] and pr['url'] == 'http://127.0.0.1:$dead_port' and 'hosts' not in pr"

# 3. an error answer (a path where Prometheus has no API): the same
run_cli 0 run "$work/prom.lua" -p progress=false -p seconds=1 -o "$work/error" --prometheus "$url/no-such-prefix"
expect_stderr "^cephmark: warning: Prometheus at $url/no-such-prefix \(--prometheus\) could not be read: .*HTTP 404.*; phases are recorded without its figures$"
expect_stderr_lines 1
check_results "$work/error" 'd["status"] == "ok"' 'w["status"] == "ok"' '"HTTP 404" in pr["missing"]'

# 4. a malformed URL: refused before anything runs
for bad in "127.0.0.1:$prom_port" "ftp://127.0.0.1:$prom_port" "http://127.0.0.1:99999" "http://" "$url/?x=1"; do
  run_cli 2 run "$work/prom.lua" -p progress=false -p seconds=1 -o "$work/bad" --prometheus "$bad"
  expect_stderr "^cephmark: --prometheus expects Prometheus's base URL \(http://HOST:PORT\), got '.*': "
  expect_stderr_lines 1
  checks=$((checks + 1))
  if [ -e "$work/bad" ]; then fail "--prometheus '$bad' left $work/bad"; fi
done

# 5. no URL: the dashboard's address in the cluster's config database (only when the
# cluster has none of its own; removed at the end)
if ceph config dump -f json 2>/dev/null | grep -q "\"$mgr_key\""; then
  echo "the cluster already has $mgr_key: lookup test skipped"
else
  mgr_key_set=1
  ceph config set mgr "$mgr_key" "$url" --force >/dev/null
  run_cli 0 run "$work/prom.lua" -p progress=false -o "$work/mgr"
  expect_stdout "^prometheus: figures for 2 phases from $url \(ceph config $mgr_key\)"
  check_results "$work/mgr" "pr['source'] == 'ceph config $mgr_key' and pr['url'] == '$url'" \
    'pr["hosts"]["127.0.0.1"]["cpu"]["busy_seconds"] > 0'
  run_cli 0 run "$work/prom.lua" -p progress=false -p seconds=1 -o "$work/mgr-off" --no-telemetry
  check_results "$work/mgr-off" 'pr == {}'
  sed 's/name = "prom",/name = "prom", prometheus = false,/' "$work/prom.lua" >"$work/prom-off.lua"
  run_cli 0 run "$work/prom-off.lua" -p progress=false -p seconds=1 -o "$work/mgr-false"
  check_results "$work/mgr-false" 'pr == {}'
  ceph config rm mgr "$mgr_key" >/dev/null
  mgr_key_set=
fi
finish
