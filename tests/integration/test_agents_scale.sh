#!/bin/bash
# 24 agents across 4 network namespaces (6 agents each, one veth per namespace to a bridge
# whose address the test's own cluster binds, radosgw included), and a coordinator in the
# root namespace. Run 1: a phase of every kind the local cluster serves, on all 24: short
# rados write, seq and rand phases, a workers phase and a cleanup; rbd writes and reads on
# each agent's own image (made and removed by the coordinator); S3 put, get and delete in
# each agent's own bucket and a Swift put and delete, through the radosgw on the bridge;
# disk writes and reads on each agent's own file ({agent.disk}, a folder of the test's);
# round trips to two netservers on the bridge address (peer = both, spread over the agents);
# the null target. Every agent's result is there, each aggregate op count equals the sum of
# the agents' exactly (and the merged histogram's count, and what the bounds ask for), no
# image, bucket, container or file is left, and the start skew is recorded (on the agents'
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
netservers=()
cleanup() {
  for pid in "${netservers[@]}"; do kill "$pid" 2>/dev/null; done
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
"$CEPHMARK" cluster up --dir "$work/cluster" --addr "$net.1" --memstore-size 512M --rgw --quiet ||
  { echo "FAIL: cluster up on $net.1"; exit 1; }
conf=$work/cluster/ceph.conf
export CEPH_CONF=$conf CEPHMARK_CREDENTIALS=$work/cluster/credentials.conf
# radosgw listens on the bridge's address too, so the agents in the namespaces reach it
grep -q "^endpoint = http://$net.1:" "$CEPHMARK_CREDENTIALS" ||
  { echo "FAIL: radosgw is not on $net.1: $(grep endpoint "$CEPHMARK_CREDENTIALS")"; exit 1; }

# two netservers on the bridge's address, with a token
printf 'print(require("cephmark.sys").free_port())\n' >"$work/port.lua"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
peers=()
for k in 1 2; do
  port=$("$CEPHMARK" run "$work/port.lua")
  "$CEPHMARK" netserver --bind "$net.1" --port "$port" --token-file "$work/token" --quiet >"$work/netserver$k.log" 2>&1 &
  netservers+=($!)
  peers+=("$net.1:$port")
  wait_until 10 0.1 grep -q listening "$work/netserver$k.log" || { echo "FAIL: netserver $k did not start"; exit 1; }
done

for k in $(seq 1 $namespaces); do
  ns=cms$tag$k
  netns_join "$ns" "$bridge" "v${tag}${k}h" "v${tag}${k}n" "$net.$((10 + k))" ||
    { echo "FAIL: cannot make namespace $ns"; exit 1; }
  for j in $(seq 1 $per_namespace); do
    a=n${k}a$j
    agents+=("$a")
    agent_ns[$a]=$ns
    mkdir -p "$work/disks/$a"
    ip netns exec "$ns" "$CEPHMARK" agent -c "$conf" --name "$a" --attr disk="$work/disks/$a" >"$work/$a.log" 2>&1 &
    agent_pid[$a]=$!
  done
done
total=${#agents[@]}
registered() { [ "$(rados -p cephmark-control listomapkeys agents 2>/dev/null | wc -l)" = "$total" ]; }
# 24 processes connecting at once on a loaded 2-core machine, while the new cluster still
# settles its gateway's pools: a generous bound, and on failure what each missing agent said
started=$SECONDS
if ! poll 300 registered; then
  listed=$(rados -p cephmark-control listomapkeys agents 2>&1)
  echo "  registered: $(echo "$listed" | wc -l) of $total; cluster: $(ceph health 2>&1 | head -1)"
  for a in "${agents[@]}"; do
    grep -qx "$a" <<<"$listed" || echo "  $a: $(tail -2 "$work/$a.log" | tr '\n' ' ')"
  done
  finish
  exit 1
fi
echo "all $total agents registered after $((SECONDS - started)) s"

cat >"$work/scale.lua" <<LUA
local cm = require "cephmark"
local rbd, rgw = require "cephmark.rbd", require "cephmark.rgw"
local disk, socket, null = require "cephmark.disk", require "cephmark.socket", require "cephmark.null"
return cm.scenario {
  name = "agents-scale",
  params = { seconds = cm.duration("1s", "length of the rados phases") },
  pools = { bench = { type = "replicated", size = 2, application = "rbd" } },
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
    assert(rbd.create(pool, "vol", { size = "4M" }))
    local image = assert(rbd.open(pool, "vol"))
    local guard <close> = setmetatable({}, { __close = function() image:close(); rbd.remove(pool, "vol") end })
    s:phase("rbd-write", image, { io_type = "write", io_size = "64K", ops = 8, threads = 2 })
    s:phase("rbd-read", image, { io_type = "read", pattern = "rand", io_size = "4K", ops = 16, threads = 2 })
    local s3 <close> = rgw.s3_connect {}
    s:phase("s3-put", s3, { op = "put", bucket = "sb", objects = 4, size = "4K", threads = 2 })
    s:phase("s3-get", s3, { op = "get", bucket = "sb", ops = 6, threads = 2 })
    s:phase("s3-delete", s3, { op = "delete", bucket = "sb", threads = 2 })
    local swift <close> = rgw.swift_connect {}
    s:phase("swift-put", swift, { op = "put", container = "wc", objects = 3, size = "4K", threads = 1 })
    s:phase("swift-delete", swift, { op = "delete", container = "wc", threads = 1 })
    s:phase("disk-write", disk, { io_type = "write", path = "{agent.disk}/f.dat", bytes = "256K", block_size = "64K",
      direct = false, remove = true })
    s:phase("disk-read", disk, { io_type = "read", path = "{agent.disk}/f.dat", bytes = "256K", block_size = "64K",
      size = "256K", direct = false, remove = true })
    s:phase("rr", socket, { peer = { "${peers[0]}", "${peers[1]}" }, ops = 20, token_file = "$work/token" })
    s:phase("null", null, { ops = 50, threads = 2, delay = "1ms" })
  end,
}
LUA

# --- run 1: every phase on all 24 agents ---------------------------------------------------
started=$(date +%s)
timeout 240 "$CEPHMARK" run "$work/scale.lua" --agents "$total" -o "$work/run1" >"$work/run1.out" 2>"$work/run1.err"
status=$?
check [ "$status" = 0 ] || fail "run 1 exited $status: $(tail -5 "$work/run1.err")"
names=$(printf "'%s'," "${agents[@]}")
results_names="want = sorted([${names%,}]); byname = {p['name']: p['result'] for p in d['phases']}"
results_dump='print({n: (r.get("ops"), sorted(r.get("agents", {})), r.get("excluded")) for n, r in byname.items()})'
expected="rbd-write=192 rbd-read=384 s3-put=96 s3-get=144 s3-delete=96 swift-put=72 swift-delete=72 disk-write=96 disk-read=96 rr=480 null=1200"
exact=()
for pair in $expected; do exact+=("byname['${pair%=*}']['ops'] == ${pair#*=}"); done
check_results "$work/run1" \
  "[p['name'] for p in d['phases']] == ['write', 'seq', 'rand', 'workers', 'cleanup', $(printf "'%s', " $expected | sed 's/=[0-9]*//g')]" \
  "${exact[@]}" \
  "sorted(byname['rr']['by_endpoint']) == sorted(['${peers[0]}', '${peers[1]}'])" \
  "all(len(e['agents']) == 12 for e in byname['rr']['by_endpoint'].values())" \
  "all(a['image'].endswith('/vol-' + n) for n, a in byname['rbd-read']['agents'].items())" \
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
# what the run made is gone: the agents' images, buckets and containers, their disk files
check [ "$(grep -c "agents: removed image" "$work/run1.out")" = "$total" ] || fail "the agents' images: $(grep -c "agents: removed image" "$work/run1.out") removed"
cat >"$work/buckets.lua" <<'LUA'
local rgw = require "cephmark.rgw"
print(#assert(rgw.s3_connect({}):list_buckets()))
LUA
check [ "$("$CEPHMARK" run "$work/buckets.lua")" = 0 ] || fail "buckets or containers left"
left=$(find "$work/disks" -type f)
check [ -z "$left" ] || fail "disk files left: $left"
echo "run 1: $(( $(date +%s) - started )) s; $(grep 'start skew' "$work/run1.out" | head -5 | tr -s ' ' | tr '\n' ';')"

# --- run 2: one agent killed in the middle of a write phase --------------------------------
victim=n3a4
started=$(date +%s)
timeout 240 "$CEPHMARK" run "$work/scale.lua" --agents "$total" -p seconds=6 -o "$work/run2" \
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
