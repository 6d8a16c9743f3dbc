#!/bin/bash
# scenarios/baseline.lua with --agents (docs/baselines.md, "On every host"): two agents, each
# in a UTS namespace of its own so that their registrations name two hosts (bl-host-a with
# two disk folders, bl-host-b with one), on the shared cluster (the agents share this
# machine's network namespace: the cluster listens on 127.0.0.1), with two netservers on
# loopback that require a token. One run measures every agent's disks and its network to
# each peer, then rados write/seq/rand on both agents: one row per (host, disk) and per
# (agent -> peer), every agent on every peer once, each phase's op count the exact sum of
# the agents', and no file left or made outside the test's folder. Then what the scenario
# cannot do on agents, one line and exit 2 each: -p paths, -p overwrite, an agent without the
# disk attribute its peers have, two agents of one host naming one folder.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/agents.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"
work=$(mktemp -d "$CEPHMARK_BUILD_DIR/test-baseline-agents.XXXXXX")
control=cephmark-baseline-test-$$
pids=()
cleanup() {
  stop_agents
  rm -rf "$work" "$out_file" "$err_file"
}
trap_cleanup
scenario="$CEPHMARK_SOURCE_DIR/scenarios/baseline.lua"
command -v unshare >/dev/null || { echo "FAIL: unshare (util-linux) is needed"; exit 1; }

printf 'print(require("cephmark.sys").free_port())\n' >"$work/port.lua"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
ports=()
for k in 1 2; do
  port=$("$CEPHMARK" run "$work/port.lua")
  ports+=("$port")
  "$CEPHMARK" netserver --port "$port" --token-file "$work/token" >"$work/netserver$k.log" 2>&1 &
  pids+=($!)
done
mkdir -p "$work/a1" "$work/a2" "$work/b1" "$work/cwd" "$work/agent-cwd"
touch "$work/stamp"

# start_host_agent NAME HOSTNAME ARGS...: an agent whose host name (its registration's host) is
# HOSTNAME, in a UTS namespace of its own; the pid is the agent's (unshare and sh exec it)
start_host_agent() {
  local name=$1 host=$2
  shift 2
  (cd "$work/agent-cwd" && exec unshare --uts sh -c 'hostname "$1"; shift; exec "$@"' sh "$host" \
    "$CEPHMARK" agent --control-pool "$control" --name "$name" "$@" >"$work/$name.log" 2>&1) &
  pids+=($!)
}
start_host_agent ba bl-host-a --attr disk="$work/a1,$work/a2"
start_host_agent bb bl-host-b --attr disk="$work/b1"
start_host_agent bc bl-host-c
start_host_agent bd bl-host-a --attr disk="$work/a2"
wait_registered ba bb bc bd
for k in 1 2; do
  wait_until 10 0.1 grep -q "listening" "$work/netserver$k.log" || { echo "FAIL: netserver $k did not start"; exit 1; }
done
p1=127.0.0.1:${ports[0]}
p2=127.0.0.1:${ports[1]}

# --- one run: both agents' disks and network, then the cluster -------------------------------
common=(-p disk_size=4M -p disk_seconds=1 -p net_seconds=1 -p seconds=1 -p block_size=256K -p threads=2 -p size=2
  -p progress=false --control-pool "$control")
started=$(date +%s)
cd "$work/cwd" || exit 1 # the coordinator's folder: checked empty at the end
run_cli 0 run "$scenario" --agents ba,bb -p peers="$p1,$p2" -p net_token_file="$work/token" "${common[@]}" \
  -o "$work/results"
echo "run with agents: $(( $(date +%s) - started )) s"
names='disk-write disk-read disk-rand disk-write disk-read disk-rand net-send net-recv net-rr net-send net-recv net-rr write seq rand cleanup baseline-comparison'
results_names="
phases = d['phases']
loaded = [p for p in phases if p['name'] != 'baseline-comparison']
c = phases[-1]['value']
disks = c['disks']; nets = c['networks']
def rows(agent): return sorted((r['peer'], r['host']) for r in nets if r['agent'] == agent)
def at(i): return phases[i]['result']
"
results_dump='print(json.dumps({"phases": [(p["name"], p.get("result", {}).get("ops"), {a: (r.get("ops"), r.get("endpoint")) for a, r in p.get("result", {}).get("agents", {}).items()}) for p in phases], "disks": disks, "networks": nets}, indent=1, default=str))'
check_results "$work/results" \
  "' '.join(p['name'] for p in phases) == '$names'" \
  "all(sorted(p['result']['agents']) == ['ba', 'bb'] and not p['result']['excluded'] for p in loaded)" \
  "all(p['result']['ops'] == sum(a['ops'] for a in p['result']['agents'].values()) for p in loaded)" \
  "all(p['result']['lat']['count'] == p['result']['ops'] > 0 for p in loaded if p['name'] != 'cleanup')" \
  "at(15)['ops'] == at(12)['ops']" \
  "len(disks) == 3" \
  "sorted((r['host'], r['agent'], r['disk']) for r in disks) == [('bl-host-a', 'ba', '$work/a1'), ('bl-host-a', 'ba', '$work/a2'), ('bl-host-b', 'bb', '$work/b1')]" \
  "all(r['write_mib'] > 0 and r['read_mib'] > 0 and r['rand_mib'] > 0 and r['rand_p50'] > 0 for r in disks)" \
  "at(0)['agents']['ba']['path'] == '$work/a1/' + at(0)['agents']['ba']['path'].split('/')[-1]" \
  "at(3)['agents']['ba']['path'].startswith('$work/a2/') and at(3)['agents']['bb']['path'].startswith('$work/b1/')" \
  "[r['write_mib'] for r in disks if r['disk'] == '$work/a2'] == [at(3)['agents']['ba']['bandwidth_mib']]" \
  "len(nets) == 4" \
  "rows('ba') == sorted([('$p1', 'bl-host-a'), ('$p2', 'bl-host-a')]) and rows('bb') == sorted([('$p1', 'bl-host-b'), ('$p2', 'bl-host-b')])" \
  "all(r['send_bits_per_second'] > 0 and r['recv_bits_per_second'] > 0 and r['rtt_p50'] > 0 and r['sharing'] == 1 for r in nets)" \
  "at(6)['agents']['ba']['endpoint'] == '$p1' and at(6)['agents']['bb']['endpoint'] == '$p2'" \
  "at(9)['agents']['ba']['endpoint'] == '$p2' and at(9)['agents']['bb']['endpoint'] == '$p1'" \
  "sorted(at(6)['by_endpoint']) == sorted(['$p1', '$p2']) and at(6)['by_endpoint']['$p1']['agents'] == ['ba']" \
  "at(6)['agents']['ba']['receiver_bits_per_second'] > 0 and at(6)['agents']['ba']['peer'] == '$p1'" \
  "[r['phase'] for r in c['rows']] == ['write', 'seq', 'rand'] and all(r['cluster_mib'] > 0 for r in c['rows'])" \
  "abs(c['rows'][0]['disk_ceiling_mib'] - sum(r['write_mib'] for r in disks) / 2) < 1e-9"
expect_stdout "^disks, one row per host and disk"
expect_stdout "^bl-host-a +ba +$work/a2 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$"
expect_stdout "^bl-host-b +bb +$work/b1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$"
expect_stdout "^network, one row per agent and peer"
expect_stdout "^bl-host-b +bb +$p2 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+ +1$"
expect_stdout "^cluster as a fraction of the baselines"
for k in 1 2; do
  # each netserver served both agents, once per direction and once for the round trips
  check [ "$(grep -c "netserver: test " "$work/netserver$k.log")" -ge 6 ] ||
    fail "netserver $k: $(grep -c "netserver: test " "$work/netserver$k.log") tests: $(cat "$work/netserver$k.log")"
done
# every test file was removed by its own phase; nothing of the run outside the test's folder
left=$(find "$work/a1" "$work/a2" "$work/b1" "$work/cwd" "$work/agent-cwd" -mindepth 1)
check [ -z "$left" ] || fail "files left: $left"
outside=$(find /tmp /root "$CEPHMARK_SOURCE_DIR" "$CEPHMARK_BUILD_DIR" -xdev -newer "$work/stamp" \
  -name 'cephmark-baseline-*' -not -path "$work/*" 2>/dev/null)
check [ -z "$outside" ] || fail "files outside the test folder: $outside"

# --- what the scenario cannot do on agents ----------------------------------------------------
run_cli 2 run "$scenario" --agents ba,bb -p paths="$work/a1" -p rados=false "${common[@]}" -o "$work/r2"
expect_stderr_line "cephmark: paths: with --agents each agent measures its own disks, the folders of its \`--attr disk=FOLDER[,FOLDER...]\`; leave out -p paths"
run_cli 2 run "$scenario" --agents ba,bb -p overwrite=true -p rados=false "${common[@]}" -o "$work/r3"
expect_stderr_line "cephmark: overwrite: with --agents each disk is a folder, in which each phase makes its own test file and removes it; block devices and existing files are measured without --agents"
run_cli 2 run "$scenario" --agents ba,bc -p rados=false "${common[@]}" -o "$work/r4"
expect_stderr_line "cephmark: agent bc has no attribute 'disk', which the baseline needs since agent ba has one; start it with \`cephmark agent --attr disk=FOLDER[,FOLDER...]\`"
run_cli 2 run "$scenario" --agents ba,bd -p rados=false "${common[@]}" -o "$work/r5"
expect_stderr_line "cephmark: agents ba and bd both name the disk $work/a2 on host bl-host-a; give each folder to one agent"
left=$(find "$work/a1" "$work/a2" "$work/b1" -mindepth 1)
check [ -z "$left" ] || fail "a refused run left files: $left"
finish
