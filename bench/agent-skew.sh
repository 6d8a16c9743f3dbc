#!/usr/bin/env bash
# bench/agent-skew.sh: the start skew of distributed phases at 2, 8 and 24 agents
# (docs/distributed.md, "Start skew"; figures in docs/performance.md). Makes its own
# cluster bound to a bridge address and 4 network namespaces joined to the bridge by veth
# pairs (as integration.test_agents_scale), and one set of agents per count, spread over
# the namespaces, each set on a control pool of its own (a notify waits for every watcher of
# the control object, so agents of other counts must not be watching it). Then ROUNDS
# times, the counts interleaved, it runs PHASES short write phases (4K, 1 thread, 0.3 s) on
# each set and prints, per count, the median and the max over all phases of:
#   skew (agent clocks)   the spread of the agents' CLOCK_REALTIME at their start
#   skew (monotonic)      the same on CLOCK_MONOTONIC, which every process on one machine
#                         shares (the agents report this machine's boot id): no wall clock
#   go delivery max       the last agent's start after the coordinator sent the go notify,
#                         on that same monotonic clock
#   go round trip         the go notify's round trip, on the coordinator
#   lead                  how far ahead of the go's send the start was scheduled
#   late                  agents' starts more than 1 ms after the scheduled instant (of all
#                         the agents' starts), and the latest one's lateness
# and the late starts by cause: the go came after the instant (go), the bench was ready only
# after it (setup), or it was ready in time and its wake-up came late (wake); VERBOSE=1 also
# prints each late start of a phase whose skew passed 10 ms.
# The skews are those of the agents' actual starts (the engine's clock start), which the go
# notify schedules; a binary without the scheduled start reports its agents' go receipts.
# Needs root (ip netns). Environment: CEPHMARK, ROUNDS (3), PHASES (10), COUNTS ("2 8 24"), VERBOSE.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../tests/lib/netns.sh"

PHASES=${PHASES:-10}
COUNTS=${COUNTS:-2 8 24}
NAMESPACES=4
tag=$(printf '%04x' $(( ($$ + 11) % 65536 )))
bridge=cmk$tag
net=10.$(( 200 + ($$ + 13) % 50 )).$(( ($$ + 17) % 250 + 1 ))
AGENT_PIDS=()
cleanup() {
    local pid k
    for pid in "${AGENT_PIDS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
    for pid in "${AGENT_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    for ((k = 1; k <= NAMESPACES; k++)); do ip netns del "cmk$tag$k" 2>/dev/null || true; done
    "$CEPHMARK" cluster down --dir "$BENCH_TMP/cluster" >/dev/null 2>&1 || true
    ip link del "$bridge" 2>/dev/null || true
    rm -rf "$BENCH_TMP"
}
trap cleanup EXIT
# a signal ends the script through its EXIT trap, which stops what it started
trap 'exit 130' INT TERM HUP

netns_bridge "$bridge" "$net.1"
"$CEPHMARK" cluster up --dir "$BENCH_TMP/cluster" --addr "$net.1" --memstore-size 512M --quiet
export CEPH_CONF=$BENCH_TMP/cluster/ceph.conf
for ((k = 1; k <= NAMESPACES; k++)); do
    ns=cmk$tag$k
    netns_join "$ns" "$bridge" "v${tag}${k}h" "v${tag}${k}n" "$net.$((10 + k))"
done

# agents c<count>-<i>, agent i in namespace (i - 1) % 4 + 1, on control pool skew-<count>
for count in $COUNTS; do
    for ((i = 1; i <= count; i++)); do
        ns=cmk$tag$(( (i - 1) % NAMESPACES + 1 ))
        ip netns exec "$ns" "$CEPHMARK" agent -c "$CEPH_CONF" --control-pool "skew-$count" --name "c$count-$i" \
            >"$BENCH_TMP/c$count-$i.log" 2>&1 &
        AGENT_PIDS+=($!)
    done
done
for count in $COUNTS; do
    for _ in $(seq 1 120); do
        [[ $(rados -p "skew-$count" listomapkeys agents 2>/dev/null | wc -l) == "$count" ]] && break
        sleep 0.5
    done
done
bench_log "$(echo "$COUNTS" | wc -w) agent sets registered ($COUNTS)"

cat >"$BENCH_TMP/skew.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "agent-skew",
  params = { phases = 10 },
  pools = { bench = { type = "replicated", size = 2 } },
  run = function(s, p)
    local pool = s:pool("bench")
    for _ = 1, p.phases do s:phase("write", pool, { seconds = 0.3, threads = 1, block_size = "4K" }) end
    s:phase("cleanup", pool)
  end,
}
LUA

for ((round = 1; round <= ROUNDS; round++)); do
    for count in $COUNTS; do
        bench_log "round $round: $count agents"
        "$CEPHMARK" run "$BENCH_TMP/skew.lua" --agents "$count" --control-pool "skew-$count" -p phases="$PHASES" \
            -o "$BENCH_TMP/r$round-$count" >"$BENCH_TMP/r$round-$count.out" 2>&1
    done
done

python3 - "$BENCH_TMP" "$ROUNDS" $COUNTS <<'PY'
import json, math, os, statistics, sys
folder, rounds, counts = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"{'agents':>6} {'phases':>6}  {'skew (agent clocks)':>20}  {'skew (monotonic)':>17}  {'go delivery max':>16}  {'go round trip':>14}  {'lead':>6}  {'late >1 ms':>17}")
print(f"{'':>6} {'':>6}  {'median':>9} {'max':>10}  {'median':>8} {'max':>8}  {'median':>7} {'max':>8}  {'median':>6} {'max':>7}  {'median':>6}  {'starts':>9} {'max':>7}")
nan = float("nan")
ms = lambda v: f"{v * 1000:.1f}"
VERBOSE = os.environ.get("VERBOSE") == "1"
for count in counts:
    rows, late, starts, late_max, causes = [], 0, 0, 0.0, {}
    for r in range(1, rounds + 1):
        doc = json.load(open(f"{folder}/r{r}-{count}/results.json"))
        for p in doc["phases"]:
            res = p["result"]
            if p["name"] != "write":
                continue
            assert res["agent_count"] == int(count), (count, res["agent_count"], res.get("excluded"))
            rows.append((res["start_skew"], res.get("start_skew_monotonic", nan),
                         res.get("go_delivery", {}).get("max", nan), res["go_round_trip"], res.get("start_lead", nan)))
            lead = res.get("start_lead", nan)
            for name, a in res["agents"].items():
                starts += 1
                lateness = a.get("start_late", 0)
                late_max = max(late_max, lateness)
                if lateness <= 0.001:
                    continue
                late += 1
                # why: the go came after the instant; the bench was ready only after it
                # (its setup overran the lead); or it was ready in time and woke late
                ready = a.get("go_delivery", nan) + a.get("start_setup", nan) - lead
                cause = "go" if a.get("go_late") else "setup" if ready > 0 else "wake"
                causes.setdefault(cause, []).append(lateness)
                if res.get("start_skew_monotonic", res["start_skew"]) > 0.010 and VERBOSE:
                    print(f"round {r} phase {p['index']} (lead {ms(lead)}): {name} {ms(lateness)} late, "
                          f"cause {cause}, setup {ms(a.get('start_setup', nan))}, "
                          f"go delivery {ms(a.get('go_delivery', nan))}")
    cols = list(zip(*rows))
    out = [f"{count:>6} {len(rows):>6}"]
    for c, (w1, w2) in zip(cols, ((9, 10), (8, 8), (7, 8), (6, 7))):
        out.append(f"{ms(statistics.median(c)):>{w1}} {ms(max(c)):>{w2}}")
    out.append(f"{ms(statistics.median(cols[4])):>6}")
    out.append(f"{late:>4}/{starts:<4} {ms(late_max):>7}")
    print("  ".join(out) + "   (ms)")
    for cause, values in sorted(causes.items()):
        print(f"{'':>6} late starts, cause {cause}: {len(values)}, lateness median {ms(statistics.median(values))} "
              f"max {ms(max(values))} ms")
PY
