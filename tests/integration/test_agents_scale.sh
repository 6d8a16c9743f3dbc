#!/bin/bash
# 24 agents across 4 network namespaces (6 agents each, one veth per namespace to a bridge
# whose address the test's own cluster binds), and a coordinator in the root namespace.
# Run 1: short rados write, seq and rand phases, a workers phase and a cleanup on all 24; every
# agent's result is there, the aggregate op count equals the sum of the agents' exactly
# (and the merged histogram's count), and the start skew is recorded (on the agents'
# clocks and, all agents sharing this machine's monotonic clock, on that one). Run 2: one
# agent is killed (SIGKILL, by pid) in the middle of a write phase; the phase is marked
# incomplete with that agent and the reason, the other 23 are merged, and the run ends in
# bounded time. Nothing load-dependent is asserted (the skew's size is bench/agent-skew.sh's).
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/results.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/netns.sh"
work=$(mktemp -d)
tag=$(printf '%04x' $(( ($$ + 7) % 65536 )))
bridge=cms$tag
net=10.$(( 200 + ($$ + 3) % 50 )).$(( ($$ + 5) % 250 + 1 ))
namespaces=4
per_namespace=6
agents=()
declare -A agent_pid agent_ns
cleanup() {
  for a in "${agents[@]}"; do
    [ -n "${agent_pid[$a]:-}" ] && kill -KILL "${agent_pid[$a]}" 2>/dev/null
  done
  [ -n "${coordinator:-}" ] && kill -KILL "$coordinator" 2>/dev/null
  wait 2>/dev/null
  for k in $(seq 1 $namespaces); do ip netns del "cms$tag$k" 2>/dev/null; done
  "$CEPHMARK" cluster down --dir "$work/cluster" >/dev/null 2>&1
  ip link del "$bridge" 2>/dev/null
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT
# a signal ends the script through its EXIT trap, which stops what it started
trap 'exit 130' INT TERM HUP

netns_bridge "$bridge" "$net.1" ||
  { echo "FAIL: cannot create bridge $bridge (needs root and iproute2)"; exit 1; }
"$CEPHMARK" cluster up --dir "$work/cluster" --addr "$net.1" --memstore-size 512M --quiet ||
  { echo "FAIL: cluster up on $net.1"; exit 1; }
conf=$work/cluster/ceph.conf
export CEPH_CONF=$conf

for k in $(seq 1 $namespaces); do
  ns=cms$tag$k
  netns_join "$ns" "$bridge" "v${tag}${k}h" "v${tag}${k}n" "$net.$((10 + k))" ||
    { echo "FAIL: cannot make namespace $ns"; exit 1; }
  for j in $(seq 1 $per_namespace); do
    a=n${k}a$j
    agents+=("$a")
    agent_ns[$a]=$ns
    ip netns exec "$ns" "$CEPHMARK" agent -c "$conf" --name "$a" >"$work/$a.log" 2>&1 &
    agent_pid[$a]=$!
  done
done
total=${#agents[@]}
registered() { [ "$(rados -p cephmark-control listomapkeys agents 2>/dev/null | wc -l)" = "$total" ]; }
poll 60 registered || { tail -3 "$work/n1a1.log"; finish; exit 1; }

cat >"$work/scale.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "agents-scale",
  params = { seconds = cm.duration("1s", "length of the rados phases") },
  pools = { bench = { type = "replicated", size = 2 } },
  run = function(s, p)
    local pool = s:pool("bench")
    s:phase("write", pool, { seconds = p.seconds, threads = 2, block_size = "4K" })
    if p.seconds > 3 then return end -- run 2: the write phase only
    s:phase("seq", pool, { seconds = 1, threads = 2 })
    s:phase("rand", pool, { seconds = 1, threads = 2 })
    local data = string.rep("s", 4096)
    s:workers { name = "workers", pool = pool, n = 2, fn = function(w)
      for i = 1, 3 do assert(pool:write_full(string.format("w.%s.%d.%d", w.agent, w.id, i), data)) end
    end }
    s:phase("cleanup", pool)
  end,
}
LUA

# --- run 1: every phase on all 24 agents ---------------------------------------------------
started=$(date +%s)
timeout 120 "$CEPHMARK" run "$work/scale.lua" --agents "$total" -o "$work/run1" >"$work/run1.out" 2>"$work/run1.err"
status=$?
check [ "$status" = 0 ] || fail "run 1 exited $status: $(tail -5 "$work/run1.err")"
names=$(printf "'%s'," "${agents[@]}")
results_names="want = sorted([${names%,}]); byname = {p['name']: p['result'] for p in d['phases']}"
results_dump='print({n: (r.get("ops"), sorted(r.get("agents", {})), r.get("excluded")) for n, r in byname.items()})'
check_results "$work/run1" \
  "[p['name'] for p in d['phases']] == ['write', 'seq', 'rand', 'workers', 'cleanup']" \
  "all(sorted(r['agents']) == want for r in byname.values())" \
  "all(not r['excluded'] and not r.get('incomplete') for r in byname.values())" \
  "all(r['agent_count'] == 24 for r in byname.values())" \
  "all(r['ops'] == sum(a['ops'] for a in r['agents'].values()) for r in byname.values())" \
  "all(r['lat']['count'] == r['ops'] for r in byname.values() if r['op'] != 'cleanup')" \
  "byname['write']['ops'] > 0 and byname['seq']['ops'] > 0 and byname['rand']['ops'] > 0" \
  "byname['workers']['ops'] == 24 * 2 * 3 and all(a['ops'] == 6 for a in byname['workers'].values() if isinstance(a, dict) and 'ops' in a)" \
  "byname['cleanup']['ops'] == byname['write']['ops']" \
  "all(r['start_skew'] >= 0 and r['go_round_trip'] > 0 for r in byname.values())" \
  "all(r['start_skew_monotonic'] >= 0 and r['go_delivery']['max'] >= r['go_delivery']['min'] for r in byname.values())"
for k in $(seq 1 $namespaces); do
  check grep -q "phase 4: workers (2 each)" "$work/n${k}a$per_namespace.log" ||
    fail "agent n${k}a$per_namespace (namespace $k) did not run the workers phase"
done
echo "run 1: $(( $(date +%s) - started )) s; $(grep 'start skew' "$work/run1.out" | head -5 | tr -s ' ' | tr '\n' ';')"

# --- run 2: one agent killed in the middle of a write phase --------------------------------
victim=n3a4
started=$(date +%s)
timeout 120 "$CEPHMARK" run "$work/scale.lua" --agents "$total" -p seconds=6 -o "$work/run2" \
  >"$work/run2.out" 2>"$work/run2.err" &
coordinator=$!
second_run_write() { [ "$(grep -c "phase 1: write" "$work/$victim.log")" -ge 2 ]; }
poll 60 second_run_write
sleep 1
kill -KILL "${agent_pid[$victim]}"
wait "${agent_pid[$victim]}" 2>/dev/null
agent_pid[$victim]=
wait "$coordinator"
status=$?
coordinator=
took=$(( $(date +%s) - started ))
check [ "$status" = 0 ] || fail "run 2 exited $status: $(tail -5 "$work/run2.err")"
check [ "$took" -lt 90 ] || fail "run 2 took $took s"
check grep -q "$victim excluded from phase 1: lost: no heartbeat" "$work/run2.err" ||
  fail "the loss of $victim is not reported: $(grep "$victim" "$work/run2.err")"
results_names="w = d['phases'][0]['result']; others = sorted(set([${names%,}]) - {'$victim'})"
results_dump='print(w.get("excluded"), sorted(w.get("agents", {})))'
check_results "$work/run2" \
  "w.get('incomplete') is True" \
  "[e['agent'] for e in w['excluded']] == ['$victim']" \
  "w['excluded'][0]['reason'].startswith('lost: no heartbeat for ')" \
  "sorted(w['agents']) == others and w['agent_count'] == 23" \
  "w['ops'] == sum(a['ops'] for a in w['agents'].values()) and w['lat']['count'] == w['ops'] and w['ops'] > 0"
echo "run 2: $took s; $(grep "EXCLUDED" "$work/run2.out")"
finish
