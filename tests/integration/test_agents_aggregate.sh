#!/bin/bash
# What a phase on agents says of all of them together, against the real local cluster with
# two agents on this host: each second's p99 comes from the agents' histograms of that
# second merged (never above the worst agent's p99, which stays beside it, and holding as
# many ops as the second), the per-agent and per-host views (host, ops, IOPS, p50, p99), an
# open loop's rate split so that the shares sum to the rate asked for and each agent starts
# no more than its share; the statistics of repetitions and comparisons run unchanged on a
# multi-client run (ec-vs-replica with --repeats 2 --agents 2); the HTML report draws the
# agents' section and labels the worst agent's p99. Only counts and bounds that load cannot
# change are asserted.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/results.sh"
work=$(mktemp -d)
declare -A pid
control_pool_existed=$(ceph osd pool ls 2>/dev/null | grep -cx cephmark-control)
cleanup() {
  for name in "${!pid[@]}"; do kill -KILL "${pid[$name]}" 2>/dev/null; done
  for p in $(ceph osd pool ls 2>/dev/null | grep -E "^cephmark-(aggregate-test|ec-vs-replica)"); do
    ceph osd pool rm "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1
  done
  if [ "$control_pool_existed" = 0 ]; then
    ceph osd pool rm cephmark-control cephmark-control --yes-i-really-really-mean-it >/dev/null 2>&1
  fi
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

for name in agg-a agg-b; do
  "$CEPHMARK" agent --name "$name" >"$work/$name.log" 2>&1 &
  pid[$name]=$!
done
for name in agg-a agg-b; do
  wait_until 20 0.1 grep -q "registered in pool" "$work/$name.log" ||
    { echo "FAIL: $name did not register: $(cat "$work/$name.log")"; exit 1; }
done
host=$(hostname)

cat >"$work/aggregate.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "aggregate-test",
  params = {},
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s)
    local pool = s:pool("bench")
    s:phase("write", pool, { seconds = 3, threads = 8, block_size = "4K" })
    s:phase("write", pool, { seconds = 3, threads = 8, block_size = "4K", rate = 101, label = "paced" })
    s:phase("cleanup", pool)
  end,
}
LUA

# --- merged seconds, per-agent and per-host views, the rate split ---------------------------
run_cli 0 run "$work/aggregate.lua" --agents agg-a,agg-b -o "$work/run1"
expect_stdout "^  agent agg-a +$host [0-9]+ ops in [0-9.]+ s, [0-9.]+ MiB/s, [0-9]+ IOPS, p50 [0-9.]+ m?s p99 [0-9.]+ m?s, 0 errors"
expect_stdout "^  2 agents, start skew [0-9.]+ ms \(agent clocks\), scheduled [0-9]+ ms ahead, go notify round trip [0-9.]+ ms, rate 101/s split over the agents$"
expect_stdout "^  agent agg-a +$host .*, rate 51/s$"
expect_stdout "^  agent agg-b +$host .*, rate 50/s$"
results_python "$work/run1/results.json" <<PY || fail "run 1: the merged result does not add up"
host = "$host"
write, paced = phases[1], phases[2]
for name, p in (("write", write), ("paced", paced)):
    r = p["result"]
    agents = r["agents"]
    check(sorted(agents) == ["agg-a", "agg-b"], f"{name}: agents {sorted(agents)}")
    check(r["ops"] == sum(a["ops"] for a in agents.values()), f"{name}: ops {r['ops']} are not the agents' sum")
    check(r["lat"]["count"] == r["ops"], f"{name}: merged histogram {r['lat']['count']} ops of {r['ops']}")
    check(r.get("series_p99") == "merged", f"{name}: series p99 is {r.get('series_p99')}: {r.get('series_p99_why')}")
    for a in agents.values():
        check(a["host"] == host and a["p50"] > 0 and a["p99"] >= a["p50"] and a["iops"] > 0,
              f"{name}: agent view {a}")
    rows = r["per_host"]
    check(list(rows) == [host] and sorted(rows[host]["agents"]) == ["agg-a", "agg-b"] and rows[host]["ops"] == r["ops"],
          f"{name}: per-host rows {rows}")
    full = 0
    for s in p["series"]:
        if s.get("lat_count") is None:
            check(s["ops"] == 0, f"{name}: second {s['sec']} has {s['ops']} ops and no merged histogram")
            continue
        full += 1
        check(s["lat_count"] == s["ops"], f"{name}: second {s['sec']}: merged histogram {s['lat_count']} of {s['ops']} ops")
        check(s["p99"] <= s["p99_worst_agent"] * 1.001, f"{name}: second {s['sec']}: p99 {s['p99']} above the worst agent's {s['p99_worst_agent']}")
        check(s["p50"] <= s["p99"] <= s["p999"] <= s["max_lat"], f"{name}: second {s['sec']}: percentiles out of order {s}")
    check(full >= 2, f"{name}: {full} seconds with a merged histogram")
pr = paced["result"]
check(pr["rate"] == 101 and pr["rate_shares"] == {"agg-a": 51, "agg-b": 50}, f"paced: rate {pr.get('rate')} shares {pr.get('rate_shares')}")
check(sum(pr["rate_shares"].values()) == 101, "paced: shares do not sum to the rate")
for name, a in pr["agents"].items():
    share = pr["rate_shares"][name]
    check(a["rate"] == share, f"paced: {name} ran at {a.get('rate')}, its share is {share}")
    check(0 < a["ops"] <= share * 3 + 2, f"paced: {name} did {a['ops']} ops at {share}/s for 3 s")
check(0 < pr["ops"] <= 101 * 3 + 4, f"paced: {pr['ops']} ops at 101/s for 3 s")
print(f"write: {write['result']['ops']} ops; paced: {pr['ops']} ops, shares {pr['rate_shares']}")
PY

# the report: the agents' section, and the worst agent's p99 named as such
run_cli 0 report "$work/run1"
report=$work/run1/report.html
check grep -q "<h3>Agents and hosts</h3>" "$report" || fail "the report has no agents' section"
check grep -q "IOPS per agent" "$report" || fail "the report has no IOPS-per-agent chart"
check grep -q "p99 of the second, worst agent" "$report" || fail "the worst agent's p99 is not labelled"
check grep -q "per host (agents and host monitor)" "$report" || fail "the report has no per-host table"

# --- repetitions and a comparison on agents: the statistics unchanged --------------------------
run_cli 0 run "$CEPHMARK_SOURCE_DIR/scenarios/ec-vs-replica.lua" --agents agg-a,agg-b --repeats 2 -p seconds=1 \
  -p block_size=64K -p threads=4 -p progress=false -o "$work/repeats"
expect_stdout '^comparison by pool \(baseline replica, marked \*\): medians of 2 repetitions$'
expect_stdout '^write  MiB/s   replica \*  +[0-9.]+ \[[0-9.]+, [0-9.]+\]$'
expect_stdout '^ +ec +[0-9.]+ \[[0-9.]+, [0-9.]+\] +[-+][0-9.]+ % \[[-+][0-9.]+, [-+][0-9.]+\] +(faster|slower|no difference detectable \(±[0-9.]+ %\)) +[0-9.]+ %$'
json_check "$work/repeats" 'r.status == "ok" and r.repeats == 2 and r.repetitions_completed == 2 and #r.phases == 16' "16 phases in two repetitions on agents"
json_check "$work/repeats" '#r.comparisons == 1 and #r.comparisons[1].rows == 6 and r.comparisons[1].rows[2].n == 2 and #r.comparisons[1].rows[2].per_repetition.iops == 2' "one comparison over both repetitions"
json_check "$work/repeats" 'r.phases[1].result.agent_count == 2 and r.phases[9].result.agent_count == 2 and r.phases[1].result.ops == r.phases[1].result.agents["agg-a"].ops + r.phases[1].result.agents["agg-b"].ops' "every phase on both agents, ops summed"

for name in agg-a agg-b; do
  kill -INT "${pid[$name]}"
  wait "${pid[$name]}" 2>/dev/null
  unset "pid[$name]"
done
finish
