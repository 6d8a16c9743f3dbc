#!/bin/bash
# The shipped gateway scenarios on agents (docs/distributed.md, "What runs on the agents"),
# with three real agents of this host against the local radosgw, in a control pool of the
# test's own: swift-bench.lua and s3-put-get.lua with --agents 2 give merged counts that
# equal the agents' sums exactly, target counts included (objects written), with the lists
# of the distributed result as JSON arrays ([] when empty); every container and bucket the
# runs made is gone afterwards, also after a Ctrl-C in the middle of a put. A phase whose
# agents use two endpoints of the gateway (127.0.0.1 and localhost) gets a per-endpoint
# series whose seconds add up to that endpoint's ops and whose percentiles come from its
# agents' histograms of each second, in results.json and endpoint_series.csv. The placement
# comparisons on agents are in test_s3_scenarios, which makes the placement targets.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/agents.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/results.sh"
work=$(mktemp -d)
control=cephmark-gateway-test-$$
scenarios=$CEPHMARK_SOURCE_DIR/scenarios
pids=()
cleanup() {
  stop_agents
  rm -rf "$work" "$out_file" "$err_file"
}
trap_cleanup

port=$(gateway_port) || exit 1

start_agent g1 --attr rgw="http://127.0.0.1:$port"
start_agent g2 --attr rgw="http://localhost:$port"
start_agent g3 --attr rgw="http://127.0.0.1:$port"
wait_registered g1 g2 g3

# the scenarios' containers and buckets (theirs by name, with or without an agent's suffix)
cat >"$work/left.lua" <<'LUA'
local rgw = require "cephmark.rgw"
local s3 = rgw.s3_connect {}
local left = {}
for _, name in ipairs(assert(s3:list_buckets())) do
  if name:find("^cephmark_swift_bench_") or name:find("^cephmark%-s3%-put%-get%-") or name:find("^gwt") then
    left[#left + 1] = name
  end
end
print("left: " .. (#left > 0 and table.concat(left, " ") or "none"))
LUA
left() { "$CEPHMARK" run "$work/left.lua" 2>&1; }

results_names='
def agent_sum(name, key="ops"): return sum(a[key] for a in ph[name]["result"]["agents"].values())
def total(name, key="ops"): return ph[name]["result"][key]
'
results_dump='print(json.dumps({n: {k: p.get("result", {}).get(k) for k in ("ops", "objects", "objects_written", "slow_agents", "excluded", "by_endpoint")} for n, p in ph.items()}, indent=1)[:4000])'

# --- swift-bench.lua on two agents -----------------------------------------------------------
run_cli 0 run "$scenarios/swift-bench.lua" --agents g1,g2 --control-pool "$control" -p num_objects=60 \
  -p num_gets=30 -p concurrency=4 -p num_containers=3 -p progress=false -o "$work/swift"
expect_stdout "^  = put: 120 ops in .* 0 errors$"
expect_stdout "^  = get: 60 ops in .* 0 errors$"
expect_stdout "^  = delete: 120 ops in .* 0 errors$"
check_results "$work/swift" \
  "total('put') == agent_sum('put') == 120" "total('get') == agent_sum('get') == 60" \
  "total('delete') == agent_sum('delete') == 120" \
  "ph['put']['result']['lat']['count'] == 120" \
  "total('put', 'objects_written') == 120" "total('put', 'objects') == 120" \
  "ph['put']['result']['api'] == 'swift'" \
  "len(ph['put']['result']['containers']) == 6 and all(c.endswith(('-g1', '-g2')) for c in ph['put']['result']['containers'])" \
  "all(p['result']['slow_agents'] == [] and p['result']['excluded'] == [] for p in ph.values())" \
  "all(p['status'] == 'ok' for p in ph.values())"
check [ "$(left)" = "left: none" ] || fail "swift-bench left containers: $(left)"

# --- s3-put-get.lua on two agents -------------------------------------------------------------
run_cli 0 run "$scenarios/s3-put-get.lua" --agents g1,g2 --control-pool "$control" -p sizes=4K -p objects=30 \
  -p seconds=1 -p threads=4 -p progress=false -o "$work/s3"
expect_stdout "^  = put size=4K: 60 ops in .* 0 errors$"
expect_stdout "^  = delete size=4K: 60 ops in .* 0 errors$"
check_results "$work/s3" \
  "total('put') == agent_sum('put') == 60 == total('put', 'objects_written')" \
  "total('get') == agent_sum('get') == ph['get']['result']['lat']['count'] > 0" \
  "total('delete') == agent_sum('delete') == 60" \
  "ph['put']['result']['http_errors'] == []" \
  "all(p['status'] == 'ok' for p in ph.values())"
check [ "$(left)" = "left: none" ] || fail "s3-put-get left buckets: $(left)"

# --- Ctrl-C in the middle of a put on agents: the containers go, with what was put -------------
"$CEPHMARK" run "$scenarios/swift-bench.lua" --agents g1,g2 --control-pool "$control" -p num_objects=1000000 \
  -p concurrency=2 -p num_containers=2 -p progress=false -o "$work/int" >"$work/int.out" 2>&1 &
run=$!
wait_until 60 0.2 grep -q "^\[1\] put" "$work/int.out" || fail "the put did not start: $(tail -3 "$work/int.out")"
sleep 2
kill -INT "$run"
wait "$run"
status=$?
check [ "$status" = 130 ] || fail "an interrupted run exits 130, got $status"
# the agents empty and remove their containers when the coordinator ends the run
check wait_until 60 0.5 grep -q "removed [0-9]* objects left in cephmark_swift_bench_" "$work/g1.log" ||
  fail "agent g1 did not empty its containers: $(tail -3 "$work/g1.log")"
check wait_until 60 0.5 sh -c '"$0" run "$1" 2>&1 | grep -qx "left: none"' "$CEPHMARK" "$work/left.lua" ||
  fail "containers left after Ctrl-C: $(left)"

# --- a phase whose three agents use two endpoints of the gateway -------------------------------
cat >"$work/endpoints.lua" <<'LUA'
local cm = require "cephmark"
local rgw = require "cephmark.rgw"
return cm.scenario {
  name = "agents-endpoints",
  run = function(s)
    local s3 <close> = rgw.s3_connect {}
    s:phase("put", s3, { bucket = "gwt", objects = 40, threads = 2, size = "4K", endpoint = "{agent.rgw}" })
    s:phase("get", s3, { bucket = "gwt", ops = 50, threads = 2, endpoint = "{agent.rgw}" })
    s:phase("delete", s3, { bucket = "gwt", threads = 2, endpoint = "{agent.rgw}" })
  end,
}
LUA
run_cli 0 run "$work/endpoints.lua" --agents g1,g2,g3 --control-pool "$control" -o "$work/ep"
e1="http://127.0.0.1:$port"
e2="http://localhost:$port"
exprs=()
for phase in put get delete; do
  exprs+=("sorted(ph['$phase']['result']['by_endpoint']) == ['$e1', '$e2']"
    "ph['$phase']['result']['by_endpoint']['$e1']['agents'] == ['g1', 'g3']"
    "ph['$phase']['result']['by_endpoint']['$e2']['agents'] == ['g2']"
    "sum(g['ops'] for g in ph['$phase']['result']['by_endpoint'].values()) == total('$phase')"
    "all(sum(s['ops'] for s in g['series']) == g['ops'] for g in ph['$phase']['result']['by_endpoint'].values())"
    "all(sum(s.get('lat_count') or 0 for s in g['series']) == g['ops'] for g in ph['$phase']['result']['by_endpoint'].values())"
    "all(g['series_p99'] == 'merged' for g in ph['$phase']['result']['by_endpoint'].values())"
    "all(s['p99'] >= s['p50'] > 0 for g in ph['$phase']['result']['by_endpoint'].values() for s in g['series'] if s['ops'] > 0)")
done
check_results "$work/ep" "${exprs[@]}" \
  "total('put') == 120 and ph['put']['result']['by_endpoint']['$e1']['ops'] == 80" \
  "ph['get']['result']['by_endpoint']['$e2']['ops'] == 50" \
  "total('put', 'objects_written') == 120"
# endpoint_series.csv: one row per second per endpoint, its ops adding up to the phase's
check [ -s "$work/ep/endpoint_series.csv" ] || fail "no endpoint_series.csv"
check [ "$(head -1 "$work/ep/endpoint_series.csv")" = \
  "phase_index,phase,label,endpoint,sec,agents,ops,bytes,errors,iops,cur_mib,p50,p99,p999,max_lat,lat_count" ] ||
  fail "endpoint_series.csv header: $(head -1 "$work/ep/endpoint_series.csv")"
check [ "$(awk -F, -v e="$e2" '$2 == "get" && $4 == e { n += $7 } END { print n }' "$work/ep/endpoint_series.csv")" = 50 ] ||
  fail "endpoint_series.csv: the get's seconds at $e2 do not add up to 50 ops"
# the report of that folder: an endpoints section where each of the 3 phases has a row per
# endpoint (its agents) and a chart of IOPS and one of p99 per second, both endpoints in
# each chart's legend
run_cli 0 report "$work/ep" -o "$work/ep.html"
expect_stdout "^report: $work/ep.html$"
count_in_report() { grep -c -- "$1" "$work/ep.html"; }
check [ "$(count_in_report '<h3>Endpoints</h3>')" = 1 ] || fail "the report has no endpoints section"
check [ "$(count_in_report "^<tr><td>$e1</td><td>g1, g3</td><td class=\"n\">")" = 3 ] ||
  fail "the report's per-endpoint tables: $(count_in_report "<tr><td>$e1</td>") rows of $e1 with g1, g3, expected 3"
check [ "$(count_in_report "^<tr><td>$e2</td><td>g2</td><td class=\"n\">")" = 3 ] ||
  fail "the report's per-endpoint tables: $(count_in_report "<tr><td>$e2</td>") rows of $e2 with g2, expected 3"
for phase in put get delete; do
  for chart in "IOPS per second" "p99 per second"; do
    check [ "$(count_in_report "aria-label=\"\[[0-9]*\] $phase[^\"]*: $chart, by endpoint\"")" = 1 ] ||
      fail "the report has no '$chart, by endpoint' chart of the $phase"
  done
done
for e in "$e1" "$e2"; do
  check [ "$(count_in_report "<text class=\"legend\" [^>]*>$e</text>")" = 6 ] ||
    fail "$e is in $(count_in_report "<text class=\"legend\" [^>]*>$e</text>") of the 6 endpoint charts' legends"
done
check [ "$(left)" = "left: none" ] || fail "the endpoints phase left buckets: $(left)"

finish
