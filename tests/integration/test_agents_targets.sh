#!/bin/bash
# Every phase kind on agents (docs/distributed.md, "What runs on the agents"), with three
# real agents of this host against the local cluster, in a control pool of the test's own:
# rbd phases on each agent's own image (made and removed by the coordinator) and on the
# scenario's image shared; an operator's image named like an agent's image is refused and
# left as it was (listing and checksum); S3 phases in per-agent buckets with each agent's
# gateway endpoint from its --attr (a per-endpoint breakdown), and a Swift put spread over
# containers per agent; disk phases on each agent's own file ({agent.disk}); a socket phase
# against a local netserver; the null target. Each merged op count equals the sum of the
# agents' exactly, and equals what the bounds ask for. Bad input, one line and exit 2,
# before the phase starts and before any agent does anything: a custom function phase, a
# table target, an attribute an agent lacks, two agents of one host on one disk path.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/agents.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/results.sh"
work=$(mktemp -d)
control=cephmark-targets-test-$$
op_pool=cephmark-targets-op-$$
pids=()
cleanup() {
  stop_agents
  ceph osd pool rm "$op_pool" "$op_pool" --yes-i-really-really-mean-it >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap_cleanup

port=$(gateway_port) || exit 1

# an operator's pool with an operator's image named as agent a1's image would be
printf 'print(require("cephmark.sys").free_port())\n' >"$work/port.lua"
net_port=$("$CEPHMARK" run "$work/port.lua")
ceph osd pool create "$op_pool" 8 >/dev/null 2>&1 && rbd pool init "$op_pool" ||
  { echo "FAIL: cannot create the operator's pool"; exit 1; }
head -c 1048576 /dev/urandom >"$work/op.img"
rbd import --no-progress "$work/op.img" "$op_pool/opimg-a1" >/dev/null || { echo "FAIL: rbd import"; exit 1; }
op_sum() { rbd export --no-progress "$op_pool/opimg-a1" - 2>/dev/null | md5sum; }
sum_before=$(op_sum)

"$CEPHMARK" netserver --port "$net_port" >"$work/netserver.log" 2>&1 &
pids+=($!)
mkdir -p "$work/a1" "$work/a2"
start_agent a1 --attr disk="$work/a1" --attr rgw="http://127.0.0.1:$port"
start_agent a2 --attr disk="$work/a2" --attr rgw="http://localhost:$port"
start_agent a3
wait_registered a1 a2 a3
wait_until 10 0.1 grep -q "listening" "$work/netserver.log" || { echo "FAIL: netserver did not start"; exit 1; }

cat >"$work/kinds.lua" <<LUA
local cm = require "cephmark"
local rbd = require "cephmark.rbd"
local rgw = require "cephmark.rgw"
return cm.scenario {
  name = "agents-targets",
  params = { case = cm.string("all", "which phases") },
  pools = { op = { name = "$op_pool", reuse = true } },
  run = function(s, p)
    local disk, socket, null = require "cephmark.disk", require "cephmark.socket", require "cephmark.null"
    if p.case == "function" then s:phase("custom", function() return 1 end) end
    if p.case == "table" then s:phase("custom", { bench = function() return {} end }) end
    if p.case == "noattr" then s:phase("write", disk, { path = "{agent." .. "nvme}/x.dat", bytes = "64K" }) end
    if p.case == "notready" then
      s:phase("write", disk, { io_type = "write", path = "{agent.disk}/sub/f.dat", bytes = "64K", block_size = "64K",
        direct = false })
      return
    end
    if p.case == "samepath" then s:phase("write", disk, { path = "$work/same.dat", bytes = "64K" }) end
    local pool = s:pool("op")
    assert(rbd.create(pool, "vol", { size = "16M" }))
    local image = assert(rbd.open(pool, "vol"))
    local guard <close> = setmetatable({}, { __close = function() image:close(); rbd.remove(pool, "vol") end })
    if p.case == "clash" then s:phase("write", image, { io_size = "64K", ops = 8, per_agent = "opimg-{agent}" }) end
    s:phase("own-write", image, { io_type = "write", io_size = "64K", ops = 32, threads = 4 })
    s:phase("own-read", image, { io_type = "read", pattern = "rand", io_size = "4K", ops = 100, threads = 4 })
    s:phase("shared-read", image, { io_type = "read", pattern = "rand", io_size = "4K", ops = 50, threads = 2,
      per_agent = "shared" })
    s:phase("disk-write", disk, { io_type = "write", path = "{agent.disk}/f.dat", bytes = "1M", block_size = "64K",
      direct = false })
    s:phase("disk-read", disk, { io_type = "read", path = "{agent.disk}/f.dat", bytes = "1M", block_size = "64K",
      direct = false })
    s:phase("rr", socket, { host = "127.0.0.1", port = $net_port, ops = 200 })
    s:phase("null", null, { ops = 300, threads = 2, delay = "1ms" })
    local s3 <close> = rgw.s3_connect {}
    s:phase("s3-put", s3, { op = "put", bucket = "tb", objects = 20, size = "4K", threads = 2, endpoint = "{agent.rgw}" })
    s:phase("s3-get", s3, { op = "get", bucket = "tb", ops = 30, threads = 2, endpoint = "{agent.rgw}" })
    s:phase("s3-delete", s3, { op = "delete", bucket = "tb", threads = 2, endpoint = "{agent.rgw}" })
    local swift <close> = rgw.swift_connect {}
    s:phase("swift-put", swift, { op = "put", objects = 20, size = "4K", threads = 2, spread = 2 })
    s:phase("swift-delete", swift, { op = "delete", threads = 2 })
  end,
}
LUA

line() { grep -n "p.case == \"$1\"" "$work/kinds.lua" | cut -d: -f1; } # the line of a case's phase
agent_phases() { cat "$work"/a?.log | grep -c " phase "; }

# --- every kind on agents a1 and a2 --------------------------------------------------------
run_cli 0 run "$work/kinds.lua" --agents a1,a2 --control-pool "$control" -o "$work/all"
results_names='
def agent_sum(name): return sum(a["ops"] for a in ph[name]["result"]["agents"].values())
def total(name): return ph[name]["result"]["ops"]
'
results_dump='print(json.dumps({n: {"ops": p.get("result", {}).get("ops"), "agents": {a: r.get("ops") for a, r in p.get("result", {}).get("agents", {}).items()}, "excluded": p.get("result", {}).get("excluded")} for n, p in ph.items()}, indent=1))'
expected="own-write=64 own-read=200 shared-read=100 disk-write=32 disk-read=32 rr=400 null=600 s3-put=40 s3-get=60 s3-delete=40 swift-put=40 swift-delete=40"
exprs=()
for pair in $expected; do
  exprs+=("total('${pair%=*}') == agent_sum('${pair%=*}') == ${pair#*=}"
    "sorted(ph['${pair%=*}']['result']['agents']) == ['a1', 'a2']"
    "ph['${pair%=*}']['result']['lat']['count'] == ${pair#*=}")
done
check_results "$work/all" "${exprs[@]}" \
  "ph['own-write']['result']['agents']['a1']['image'] == '$op_pool/vol-a1'" \
  "ph['own-read']['result']['agents']['a2']['image'] == '$op_pool/vol-a2'" \
  "ph['shared-read']['result']['agents']['a1']['image'] == '$op_pool/vol'" \
  "sorted(ph['s3-put']['result']['by_endpoint']) == ['http://127.0.0.1:$port', 'http://localhost:$port']" \
  "ph['s3-get']['result']['by_endpoint']['http://localhost:$port']['agents'] == ['a2']" \
  "ph['s3-get']['result']['by_endpoint']['http://localhost:$port']['ops'] == 30" \
  "ph['s3-get']['result']['by_endpoint']['http://127.0.0.1:$port']['p99'] > 0" \
  "all(p['status'] == 'ok' for p in ph.values())"
secret=$(s3_setting secret_key)
check [ -n "$secret" ] && [ -z "$(grep -rlF -- "$secret" "$work/all" "$out_file" "$err_file" "$work"/a?.log)" ] ||
  fail "the S3 secret key is in the results, the output or an agent's log"
expect_stdout "agents: made image $op_pool/vol-a1 for agent a1"
expect_stdout "agents: removed image $op_pool/vol-a2"
check [ "$(rbd ls "$op_pool" | tr '\n' ' ')" = "opimg-a1 " ] || fail "images left or removed: $(rbd ls "$op_pool")"
check [ -s "$work/a1/f.dat" ] && [ -s "$work/a2/f.dat" ] || fail "each agent's own disk file"
cat >"$work/buckets.lua" <<'LUA'
local rgw = require "cephmark.rgw"
local s3 = rgw.s3_connect {}
print(#assert(s3:list_buckets()))
LUA
check [ "$("$CEPHMARK" run "$work/buckets.lua")" = 0 ] || fail "buckets or containers left: the agents' own ones are removed"

# --- an operator's image named as an agent's image: refused, untouched ----------------------
run_cli 2 run "$work/kinds.lua" -p case=clash --agents a1,a2 --control-pool "$control" -o "$work/clash"
check grep -q "^cephmark: $work/kinds.lua:[0-9]*: s:phase('write'): cannot make agent a1's image $op_pool/opimg-a1: .*(an image this run did not make is never used or removed: remove it, or choose another per_agent template)$" "$err_file" ||
  fail "clash line: $(tail -3 "$err_file")"
check [ "$(op_sum)" = "$sum_before" ] || fail "the operator's image changed"
check [ "$(rbd ls "$op_pool" | tr '\n' ' ')" = "opimg-a1 " ] || fail "images after the clash: $(rbd ls "$op_pool")"

# --- refused before the phase starts and before any agent does anything -----------------------
before=$(agent_phases)
run_cli 2 run "$work/kinds.lua" -p case=function --agents a1,a2 --control-pool "$control" -o "$work/f"
expect_stderr_line "cephmark: $work/kinds.lua:$(line function): s:phase('custom'): a custom function phase cannot run on agents (--agents): its function lives in this process; give the phase a target the agents open (a pool, an rbd image, a Swift or S3 connection, the disk, socket or null module), or run without --agents (coordinator = true runs a function that only computes from earlier results here)"
run_cli 2 run "$work/kinds.lua" -p case=table --agents a1,a2 --control-pool "$control" -o "$work/t"
expect_stderr_line "cephmark: $work/kinds.lua:$(line table): s:phase('custom'): a phase on this target cannot run on agents (--agents): the agents can open only a pool, an rbd image, a Swift or S3 connection, the disk, socket or null module; run it without --agents"
run_cli 2 run "$work/kinds.lua" -p case=noattr --agents a1,a2 --control-pool "$control" -o "$work/n"
expect_stderr_line "cephmark: $work/kinds.lua:$(line noattr): s:phase('write'): agent a1 has no attribute 'nvme', which the phase names as {agent.nvme}; start it with \`cephmark agent --attr nvme=VALUE\`"
# an attribute written in the script's text is checked when the run starts, before any phase
run_cli 2 run "$work/kinds.lua" --agents a1,a3 --control-pool "$control" -o "$work/n3"
expect_stderr_line "cephmark: agent a3 has no attribute 'disk', which $work/kinds.lua names as {agent.disk}; start it with \`cephmark agent --attr disk=VALUE\`"
check [ -z "$(grep "^\[1\]" "$out_file")" ] || fail "a phase started before the attribute check: $(head -5 "$out_file")"
run_cli 2 run "$work/kinds.lua" -p case=samepath --agents a1,a2 --control-pool "$control" -o "$work/sp"
expect_stderr_line "cephmark: $work/kinds.lua:$(line samepath): s:phase('write'): agents a1 and a2 run on the same host ($(hostname)) and would both use the disk path $work/same.dat; give each its own (a path with {agent.name}, or --attr per agent)"
check [ "$(agent_phases)" = "$before" ] || fail "an agent ran or prepared a refused phase: $(tail -2 "$work/a1.log")"
check [ ! -e "$work/same.dat" ] || fail "the refused disk phase wrote its file"

# --- a target one agent cannot open: that agent is excluded with the reason, the other runs ---
mkdir -p "$work/a2/sub"
run_cli 0 run "$work/kinds.lua" -p case=notready --agents a1,a2 --control-pool "$control" -o "$work/nr"
expect_stderr "^agents: a1 excluded from phase 1: not ready: no folder $work/a1/sub on this host for $work/a1/sub/f.dat$"
check_results "$work/nr" "ph['write']['result']['ops'] == agent_sum('write') == 1" \
  "sorted(ph['write']['result']['agents']) == ['a2']" \
  "ph['write']['result']['excluded'] == [{'agent': 'a1', 'reason': 'not ready: no folder $work/a1/sub on this host for $work/a1/sub/f.dat'}]" \
  "ph['write']['result']['incomplete'] is True"
check [ -s "$work/a2/sub/f.dat" ] || fail "a2 did not write its file"

# the attributes travel in the registration
check rados -p "$control" getomapval agents a1 "$work/a1.json" >/dev/null 2>&1
check grep -q "\"disk\":\"$work/a1\"" "$work/a1.json" || fail "a1's registration lacks its attributes: $(cat "$work/a1.json")"
finish
