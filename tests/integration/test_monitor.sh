#!/bin/bash
# Host monitors (`cephmark agent --monitor`, `run --monitors`) against the real local
# cluster, which runs on loopback on this host. Two monitors, mon-a and mon-b, run in the
# background. A run naming both records, for every phase on the pool, both monitors'
# figures: ceph-osd CPU seconds > 0, disk and network entries, and over the write phase
# at least the phase's bytes on `lo`. mon-b is killed (SIGKILL) before the third phase:
# that phase and the next record it as missing with the reason, and the run exits 0 in a
# bounded time. Afterwards the control pool holds no run object of the monitors, and a
# write "into an existing object only" cannot bring one back. A phase in rados bench's
# layout has its host figures in the results only, and a malformed notify does not stop
# a monitor. A monitor is in its own registry (never an agent for `--agents N`), a name
# that is alive is refused, unknown monitors stop a run before anything is created, a run
# with --agents gets the figures too (the agent and the monitor on this host one row of the
# phase's per-host view), and a monitor stopped by SIGTERM deregisters.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/results.sh"
work=$(mktemp -d)
declare -A pid
# the control pool is created by the first monitor when the cluster has none; the test then
# removes it, so that later tests find the shared cluster as it was
control_pool_existed=$(ceph osd pool ls 2>/dev/null | grep -cx cephmark-control)
cleanup() {
  for name in "${!pid[@]}"; do kill -KILL "${pid[$name]}" 2>/dev/null; done
  for p in $(ceph osd pool ls 2>/dev/null | grep "^cephmark-monitor-test"); do
    ceph osd pool rm "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1
  done
  if [ "$control_pool_existed" = 0 ]; then
    ceph osd pool rm cephmark-control cephmark-control --yes-i-really-really-mean-it >/dev/null 2>&1
  fi
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

# start KIND NAME: a monitor (or an agent) in the background, registered before it returns
start() {
  local flag=
  [ "$1" = monitor ] && flag=--monitor
  "$CEPHMARK" agent $flag --name "$2" >"$work/$2.log" 2>&1 &
  pid[$2]=$!
  wait_until 10 0.1 grep -q "registered in pool" "$work/$2.log" && return 0
  echo "FAIL: $1 $2 did not register: $(cat "$work/$2.log")"
  exit 1
}
start monitor mon-a
start monitor mon-b

check [ -z "$(rados -p cephmark-control listomapkeys agents 2>/dev/null | grep -x 'mon-[ab]')" ] ||
  fail "a monitor is registered as an agent"
check [ "$(rados -p cephmark-control listomapkeys monitors | grep -c -x 'mon-[ab]')" = 2 ] ||
  fail "monitors registry: $(rados -p cephmark-control listomapkeys monitors | tr '\n' ' ')"

# a notify that names no run or phase is answered and ignored: the monitor lives on
check timeout 20 rados -p cephmark-control notify monitors.control '{"type":"start","monitors":["mon-a","mon-b"]}' \
  >/dev/null || fail "a malformed notify was not answered"
check timeout 20 rados -p cephmark-control notify monitors.control '{"type":"end","run":"x","phase":"one","monitors":["mon-a"]}' \
  >/dev/null || fail "a notify with a phase that is not a number was not answered"
sleep 0.5
check kill -0 "${pid[mon-a]}" 2>/dev/null || fail "mon-a died on a malformed notify: $(tail -3 "$work/mon-a.log")"

# a second monitor with a live one's name is refused
run_cli 2 agent --monitor --name mon-a
expect_stderr "^cephmark: agent: a monitor named 'mon-a' is alive \(host .*, pid ${pid[mon-a]}, heartbeat .* ago\); choose another --name$"

cat >"$work/monitored.lua" <<'LUA'
local cm = require "cephmark"
local sys = require "cephmark.sys"
return cm.scenario {
  name = "monitor-test",
  params = { victim = cm.integer(0, "a monitor's pid, killed before the third phase") },
  pools = { bench = { type = "replicated", size = 3, pg_num = 8 } },
  run = function(s, p)
    local pool = s:pool("bench")
    s:phase("write", pool, { seconds = 2, threads = 4, block_size = "64K" })
    s:phase("seq", pool, { seconds = 1, threads = 4, report = "rados-bench" })
    if p.victim > 0 then assert(sys.kill(p.victim, "KILL")) end
    s:phase("rand", pool, { seconds = 1, threads = 4 })
    s:phase("cleanup", pool)
  end,
}
LUA

started=$(date +%s.%N)
run_cli 0 run "$work/monitored.lua" --monitors mon-a,mon-b -p victim="${pid[mon-b]}" -o "$work/run1"
expect_faster_than 90 "$started"
wait "${pid[mon-b]}" 2>/dev/null
unset 'pid[mon-b]'
expect_stderr "^monitors: run [0-9]+ reads 2 host monitors \(mon-a, mon-b\), control pool cephmark-control$"
expect_stdout "^    host mon-a \([^)]+\): osds [0-9.]+ s CPU \(3 ceph-osd\) · host CPU [0-9]+% · .* · lo [0-9.]+ MiB in, [0-9.]+ MiB out$"
expect_stdout "^    host mon-b: missing \(no answer to the phase-start notify within 3 s; last heartbeat [0-9.]+ s ago\)$"
# rados bench's layout (the seq phase) stays as it is: its host figures are in the results only
check [ "$(grep -c '^    host mon-a ' "$out_file")" = 3 ] || fail "host lines: $(grep '^    host ' "$out_file")"
run_id=$(sed -n 's/^monitors: run \([0-9]*\) .*/\1/p' "$err_file")

results_python "$work/run1/results.json" <<'PY' || fail "run 1: the monitors' figures are not as expected"
check(sorted(phases) == [1, 2, 3, 4], f"phases {sorted(phases)}")
for index, phase in sorted(phases.items()):
    hosts = phase.get("cluster", {}).get("hosts", {})
    check(sorted(hosts) == ["mon-a", "mon-b"], f"phase {index}: hosts {sorted(hosts)}")
    alive = ["mon-a", "mon-b"] if index <= 2 else ["mon-a"]
    for name in alive:
        h = hosts.get(name, {})
        check("missing" not in h, f"phase {index} {name}: missing {h.get('missing')}")
        check(h.get("window", 0) >= phase["elapsed"] * 0.9, f"phase {index} {name}: window {h.get('window')} for a phase of {phase['elapsed']}")
        osd = h.get("ceph", {}).get("kinds", {}).get("ceph-osd", {})
        check(osd.get("count") == 3 and osd.get("seconds", 0) > 0, f"phase {index} {name}: ceph-osd CPU {osd}")
        check(len(h.get("disks", {})) > 0, f"phase {index} {name}: no disk entries")
        check(all(not d.startswith(("loop", "ram", "zram")) for d in h.get("disks", {})), f"phase {index} {name}: disks {sorted(h.get('disks', {}))}")
        check("lo" in h.get("network", {}), f"phase {index} {name}: no lo in {sorted(h.get('network', {}))}")
        check(0 <= h.get("cpu", {}).get("busy_fraction", -1) <= 1, f"phase {index} {name}: host CPU {h.get('cpu')}")
    if index >= 3:
        reason = hosts.get("mon-b", {}).get("missing", "")
        # the OSD keeps a killed client's watch for its watch timeout (10 s): until then a
        # notify times out waiting for it, afterwards the monitor is not watching at all
        check((reason.startswith("no answer to the phase-") or reason.startswith("not watching monitors.control"))
              and "last heartbeat" in reason, f"phase {index}: mon-b's reason '{reason}'")
write = phases[1]
for name in ("mon-a", "mon-b"):
    lo = write["cluster"]["hosts"][name]["network"]["lo"]
    check(lo["receive_bytes"] >= write["result"]["bytes"] > 0,
          f"{name}: lo received {lo['receive_bytes']} bytes over a write phase of {write['result']['bytes']}")
    print(f"write: {write['result']['bytes']} bytes written, {name} lo received {lo['receive_bytes']}, "
          f"ceph-osd {write['cluster']['hosts'][name]['ceph']['kinds']['ceph-osd']['seconds']:.2f} s")
print(f"phase 3: mon-b {phases[3]['cluster']['hosts']['mon-b']['missing']}")
PY

# nothing of the run is left in the control pool, and a late monitor cannot bring it back
check [ -n "$run_id" ] || fail "no run id in the run's output"
check [ -z "$(rados -p cephmark-control ls | grep -E '^run\..*\.monitors$')" ] ||
  fail "left in the control pool: $(rados -p cephmark-control ls | grep '^run\.' | tr '\n' ' ')"
cat >"$work/late.lua" <<LUA
local control = require "cephmark.control"
local rados = require "cephmark.rados"
local cluster = assert(rados.connect())
local pool = assert(cluster:pool("cephmark-control"))
local ok, err = control.omap_set(pool, "run.$run_id.monitors", { ["p9.mon-a"] = "{}" }, "existing")
assert(ok == nil and err:find("No such file", 1, true), "a write into a removed run object: " .. tostring(ok) .. " " .. tostring(err))
assert(not pool:stat("run.$run_id.monitors"), "the run object came back")
LUA
run_cli 0 run "$work/late.lua"

# unknown monitors stop the run before any pool is created (after a bounded wait)
started=$(date +%s.%N)
run_cli 2 run "$work/monitored.lua" --monitors mon-a,nosuch -o "$work/run2"
expect_faster_than 40 "$started"
expect_stderr_line "cephmark: monitors not registered or not heartbeating after 10 s: nosuch (alive: mon-a); start them with \`cephmark agent --monitor --name NAME\`"
check [ -z "$(ceph osd pool ls | grep '^cephmark-monitor-test')" ] || fail "a pool was created before the monitors were checked"

# with --agents: the agent runs the phases, the monitor reads the host; `all` is every
# monitor alive (mon-b's registration is stale)
start agent agent-m
run_cli 0 run "$work/monitored.lua" --agents 1 --monitors all -o "$work/run3"
expect_stderr "^agents: run [0-9]+ on 1 agents \(agent-m\), control pool cephmark-control$"
expect_stderr "^monitors: run [0-9]+ reads 1 host monitor \(mon-a\), control pool cephmark-control$"
python3 - "$work/run3/results.json" <<'PY' || fail "run 3 (--agents): the monitor's figures are not as expected"
import json, sys
doc = json.load(open(sys.argv[1]))
write = doc["phases"][0]
hosts = write["cluster"]["hosts"]
ok = sorted(hosts) == ["mon-a"] and sorted(write["result"]["agents"]) == ["agent-m"] and \
    hosts["mon-a"]["network"]["lo"]["receive_bytes"] >= write["result"]["bytes"] > 0 and \
    hosts["mon-a"]["ceph"]["kinds"]["ceph-osd"]["seconds"] > 0
# the agent and the monitor run on the same host: one row of the per-host view
rows = write["result"]["per_host"]
host = hosts["mon-a"]["host"]
ok = ok and list(rows) == [host] and rows[host]["agents"] == ["agent-m"] and rows[host]["monitor"] == "mon-a" and \
    rows[host]["ops"] == write["result"]["ops"] and rows[host]["osd_cpu_seconds"] > 0
print(f"run 3: hosts {sorted(hosts)}, agents {sorted(write['result']['agents'])}, per host {rows}")
sys.exit(0 if ok else 1)
PY
kill -TERM "${pid[agent-m]}"
wait "${pid[agent-m]}" 2>/dev/null
unset 'pid[agent-m]'

# SIGTERM: the monitor deregisters and exits 143
kill -TERM "${pid[mon-a]}"
wait "${pid[mon-a]}"
status=$?
unset 'pid[mon-a]'
check [ "$status" = 143 ] || fail "mon-a exited $status on SIGTERM, expected 143"
check grep -q "mon-a deregistered" "$work/mon-a.log" || fail "mon-a did not deregister: $(tail -3 "$work/mon-a.log")"
check [ -z "$(rados -p cephmark-control listomapkeys monitors | grep -x mon-a)" ] || fail "mon-a is still registered"
rados -p cephmark-control rmomapkey monitors mon-b 2>/dev/null
finish
