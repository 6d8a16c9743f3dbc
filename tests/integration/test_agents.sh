#!/bin/bash
# Multi-client runs across network namespaces: a cluster bound to a bridge address, three
# agents each in its own namespace (veth to the bridge), and a coordinator in the root
# namespace. Checks: a stale registration expires; every phase runs on all live agents;
# an agent killed (SIGKILL) mid-phase is excluded and marked, and the run completes; the
# aggregate op count equals the sum of the per-agent counts exactly, as does the merged
# histogram's count; start skew is reported; SIGINT at the coordinator stops the agents'
# phase within a bounded time and they stay registered and idle.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/results.sh"
work=$(mktemp -d)
tag=$(printf '%04x' $(( $$ % 65536 )))
bridge=cmb$tag
net=10.$(( 200 + $$ % 50 )).$(( $$ % 250 + 1 ))
agents=(agent1 agent2 agent3)
declare -A agent_pid
cleanup() {
  for a in "${agents[@]}"; do
    [ -n "${agent_pid[$a]:-}" ] && kill -KILL "${agent_pid[$a]}" 2>/dev/null
    ip netns del "cm$tag$a" 2>/dev/null
  done
  [ -n "${coordinator:-}" ] && kill -KILL "$coordinator" 2>/dev/null
  "$CEPHMARK" cluster down --dir "$work/cluster" >/dev/null 2>&1
  ip link del "$bridge" 2>/dev/null
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

ip link add "$bridge" type bridge && ip addr add "$net.1/24" dev "$bridge" && ip link set "$bridge" up ||
  { echo "FAIL: cannot create bridge $bridge (needs root and iproute2)"; exit 1; }
"$CEPHMARK" cluster up --dir "$work/cluster" --addr "$net.1" --quiet || { echo "FAIL: cluster up on $net.1"; exit 1; }
conf=$work/cluster/ceph.conf
export CEPH_CONF=$conf

i=10
for a in "${agents[@]}"; do
  i=$((i + 1))
  ns=cm$tag$a
  ip netns add "$ns"
  ip link add "v$tag${a: -1}h" type veth peer name "v$tag${a: -1}n"
  ip link set "v$tag${a: -1}h" master "$bridge" up
  ip link set "v$tag${a: -1}n" netns "$ns"
  ip -n "$ns" addr add "$net.$i/24" dev "v$tag${a: -1}n"
  ip -n "$ns" link set "v$tag${a: -1}n" up
  ip -n "$ns" link set lo up
done

# a registration left by an agent that died long ago
rados -p cephmark-control ls >/dev/null 2>&1 || ceph osd pool create cephmark-control 8 >/dev/null 2>&1
rados -p cephmark-control setomapval agents ghost '{"host":"gone","pid":1,"heartbeat":1000}'

for a in "${agents[@]}"; do
  ip netns exec "cm$tag$a" "$CEPHMARK" agent -c "$conf" --name "$a" >"$work/$a.log" 2>&1 &
  agent_pid[$a]=$!
done

cat >"$work/two-phases.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "agents-test",
  params = { seconds = cm.duration("6s", "write length") },
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s, p)
    local pool = s:pool("bench")
    s:phase("write", pool, { seconds = p.seconds, threads = 4, block_size = "4K" })
    s:phase("seq", pool, { seconds = 3, threads = 4 })
    s:phase("cleanup", pool)
  end,
}
LUA

# --- run 1: agent3 is killed in the middle of the write phase ------------------------------
"$CEPHMARK" run "$work/two-phases.lua" --agents 3 -o "$work/run1" >"$work/run1.out" 2>"$work/run1.err" &
coordinator=$!
wait_until 30 0.1 grep -qs "phase 1: write" "$work/agent3.log"
sleep 2
kill -KILL "${agent_pid[agent3]}"
wait "${agent_pid[agent3]}" 2>/dev/null
wait "$coordinator"
status=$?
coordinator=
check [ "$status" = 0 ] || fail "run 1 exited $status; stderr: $(tail -5 "$work/run1.err")"
check grep -q "expired stale registrations: ghost" "$work/run1.err" || fail "the stale registration was not expired"
check [ -z "$(rados -p cephmark-control listomapkeys agents | grep -x ghost)" ] || fail "ghost is still registered"
check grep -q "agent3 excluded from phase 1: lost: no heartbeat" "$work/run1.err" ||
  fail "agent3's loss is not reported: $(grep agent3 "$work/run1.err")"
results_python "$work/run1/results.json" <<'PY' || fail "run 1 results do not add up"
write, seq = phases[1]["result"], phases[2]["result"]
check(sorted(write["agents"]) == ["agent1", "agent2"], f"write ran on {sorted(write['agents'])}")
check([e["agent"] for e in write["excluded"]] == ["agent3"], f"write excluded {write['excluded']}")
check(write.get("incomplete") is True, "write not marked incomplete")
for name, r in (("write", write), ("seq", seq)):
    total = sum(a["ops"] for a in r["agents"].values())
    check(r["ops"] == total, f"{name}: aggregate {r['ops']} != sum of agents {total}")
    check(r["lat"]["count"] == r["ops"], f"{name}: merged histogram count {r['lat']['count']} != ops {r['ops']}")
    check(r["ops"] > 0, f"{name}: no ops")
    check(r["start_skew"] >= 0, f"{name}: start skew {r['start_skew']}")
    check(sum(s["ops"] for s in [x for x in doc["phases"] if x["index"] == (1 if name == "write" else 2)][0]["series"]) <= r["ops"] + 0,
          f"{name}: series sums above the total")
check(sorted(seq["agents"]) == ["agent1", "agent2"], f"seq ran on {sorted(seq['agents'])}")
# the scheduled start is honoured: every agent shares this machine's monotonic clock, and
# none started before the instant the go named (a wake-up is late, never early)
for name, r in (("write", write), ("seq", seq)):
    scheduled = r["start_scheduled"]["monotonic"]
    check(r["start_lead"] > 0, f"{name}: no scheduled lead")
    check("start_skew_monotonic" in r and "go_delivery" in r, f"{name}: no monotonic skew")
    for agent, a in sorted(r["agents"].items()):
        check(a.get("start_clock") == "monotonic", f"{name}: {agent} started on {a.get('start_clock')}")
        check(a["started_monotonic"] >= scheduled, f"{name}: {agent} started before the instant")
        check(a["start_late"] >= 0 and abs(a["start_late"] - (a["started_monotonic"] - scheduled)) < 1e-6,
              f"{name}: {agent}'s start_late {a['start_late']} is not its start after the instant")
        check(a["start_setup"] >= 0 and a["go_delivery"] >= 0, f"{name}: {agent} has no setup or delivery")
print(f"write: {write['ops']} ops = " + " + ".join(f"{n} {a['ops']}" for n, a in sorted(write["agents"].items())) +
      f", skew {write['start_skew']*1000:.1f} ms; excluded {write['excluded'][0]['reason']}")
PY

# --- run 2: SIGINT at the coordinator stops the agents' phase -------------------------------
"$CEPHMARK" run "$work/two-phases.lua" --agents agent1,agent2 -p seconds=60 -o "$work/run2" \
  >"$work/run2.out" 2>"$work/run2.err" &
coordinator=$!
# the second run's phase has started on agent1 (its log's second "phase 1: write" line)
second_write() { [ "$(grep -c "phase 1: write" "$work/agent1.log")" -ge 2 ]; }
wait_until 30 0.1 second_write
sleep 2
started=$(date +%s%N)
kill -INT "$coordinator"
wait "$coordinator"
status=$?
coordinator=
took=$(( ($(date +%s%N) - started) / 1000000000 ))
check [ "$status" = 130 ] || fail "run 2 exited $status after SIGINT, expected 130: $(tail -3 "$work/run2.err")"
check [ "$took" -lt 30 ] || fail "run 2 took $took s to stop after SIGINT"
check grep -q "stopping the agents" "$work/run2.err" || fail "the coordinator did not stop the agents"
python3 - "$work/run2/results.json" <<'PY' || fail "run 2 results are not marked interrupted"
import json, sys
doc = json.load(open(sys.argv[1]))
write = doc["phases"][0]
ok = write["status"] == "interrupted" and write["result"]["elapsed"] < 30 and len(write["result"]["agents"]) == 2
print(f"run 2: write {write['status']} after {write['result']['elapsed']:.1f} s on {sorted(write['result']['agents'])}")
sys.exit(0 if ok else 1)
PY
if [ "$failures" != 0 ]; then
  echo "run 2's coordinator said: $(grep -E '^agents:' "$work/run2.err" | tr '\n' ';')"
  for a in agent1 agent2; do echo "$a's log ends: $(tail -4 "$work/$a.log" | tr '\n' ';')"; done
fi
for a in agent1 agent2; do
  check kill -0 "${agent_pid[$a]}" 2>/dev/null || fail "$a died on the coordinator's SIGINT"
done
check [ "$(rados -p cephmark-control listomapkeys agents | sort | tr '\n' ' ')" = "agent1 agent2 agent3 " ] ||
  fail "registrations: $(rados -p cephmark-control listomapkeys agents | tr '\n' ' ')"

# agents deregister on SIGINT
kill -INT "${agent_pid[agent1]}" "${agent_pid[agent2]}"
wait "${agent_pid[agent1]}" "${agent_pid[agent2]}" 2>/dev/null
agent_pid[agent1]= agent_pid[agent2]= agent_pid[agent3]=
check [ -z "$(rados -p cephmark-control listomapkeys agents | grep -E '^agent[12]$')" ] || fail "agents did not deregister"
finish
