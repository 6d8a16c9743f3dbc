# The OSDs' side of a phase (docs/telemetry.md) against the real local cluster: counter
# deltas are non-negative, the OSDs' client writes over a write phase agree with the ops
# cephmark sent (allowing for its few metadata objects), the summary line and the results'
# `cluster.osd` table and phases.csv columns are there; `telemetry = false` and
# --no-telemetry collect nothing; a key without the caps gets one warning line and its
# phases still run; an OSD that does not answer within the timeout is recorded as missing
# and the phase goes on; an OSD slowed on purpose is named as the outlier; cephmark compare
# reads osd.* metrics. Memstore (the shared cluster) and bluestore (a cluster of its own,
# for the commit and kv sync latencies).
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"

work=$(mktemp -d)
nocaps_key=client.cephmark-test-nocaps
stopped_pid=
cleanup() {
  [ -n "$stopped_pid" ] && kill -CONT "$stopped_pid" 2>/dev/null
  ceph auth del "$nocaps_key" >/dev/null 2>&1
  [ -n "${bluestore_cluster:-}" ] && "$CEPHMARK" cluster down --dir "$bluestore_cluster" >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

ops=400
cat >"$work/telemetry.lua" <<EOF
local cm = require "cephmark"
return cm.scenario {
  name = "telemetry-test",
  pools = { rep = { type = "replicated", size = 3, pg_num = 8 } },
  run = function(s, p)
    local pool = s:pool("rep")
    s:phase("write", pool, { ops = $ops, threads = 8, block_size = "4K" })
    s:phase("seq", pool, { ops = $ops, threads = 8 })
    s:phase("cleanup", pool)
  end,
}
EOF
sed 's/name = "telemetry-test",/name = "telemetry-off", telemetry = false,/' "$work/telemetry.lua" >"$work/off.lua"

# on a failed check_results: the phases' cluster tables
results_dump='
for p in d.get("phases", []):
    print("  phase", p["name"], json.dumps(p.get("cluster"))[:600])'

# deltas non-negative, everywhere (totals and per OSD, counts and latencies)
nonneg='all(v >= 0 for p in d["phases"] for t in [p["cluster"]["osd"]] + p["cluster"]["osd"]["per_osd"] for k, v in t.items() if isinstance(v, (int, float)) and k != "osd")'

run_cli 0 run "$work/telemetry.lua" -p progress=false -o "$work/on"
# (an OSD that the machine's load happened to slow may be named: a true outlier, whatever
# its cause, so the line may end with one)
outlier='(; outlier osd\.[0-9] [0-9.]+ m?s \(peers [0-9.]+ m?s\))?'
expect_stdout "^    osd: op_w [0-9.]+ m?s \\(process [0-9.]+ m?s, subop_w [0-9.]+ m?s\\) over [0-9]+ ops on 3 OSDs$outlier( · .*)?\$"
expect_stdout "^    osd: op_r [0-9.]+ m?s \\(process [0-9.]+ m?s\\) over [0-9]+ ops on 3 OSDs$outlier( · .*)?\$"
# one line holds the phase's cluster side: the OSDs, CPU per op and the state
expect_stdout '^    osd: op_w .+ · cpu/op: client [0-9.]+ (µs|ms), osds [0-9.]+ (µs|ms) \(3 ceph-osd\).* · state: (quiet|unquiet)'
check_results "$work/on" \
  'all(p["cluster"]["osd"]["scope"] == "all client ops on these OSDs during the phase" for p in d["phases"])' \
  'all(p["cluster"]["osd"]["osds"] == 3 and p["cluster"]["osd"]["missing"] == [] for p in d["phases"])' \
  'all(len(p["cluster"]["osd"]["per_osd"]) == 3 for p in d["phases"])' \
  "$nonneg" \
  "$ops <= ph['write']['cluster']['osd']['op_w'] <= $ops + 25" \
  "$ops <= ph['seq']['cluster']['osd']['op_r'] <= $ops + 25" \
  "ph['write']['cluster']['osd']['op_w_latency'] > 0 and ph['write']['cluster']['osd']['subop_w'] >= 2 * $ops" \
  'ph["write"]["cluster"]["osd"]["op_w"] == sum(o["op_w"] for o in ph["write"]["cluster"]["osd"]["per_osd"])' \
  "ph['write']['cluster']['osd']['op_in_bytes'] >= $ops * 4096" \
  "ph['seq']['cluster']['osd']['op_out_bytes'] >= $ops * 4096" \
  'all(p["cluster"]["collect"]["during"] == {"mon_commands": 0, "osd_commands": 0} for p in d["phases"])' \
  'all(p["cluster"]["collect"]["osd_commands"] >= 6 and p["cluster"]["collect"]["mon_commands"] >= 2 for p in d["phases"])' \
  'all(p["cluster"]["collect"]["seconds"] > 0 for p in d["phases"])'
checks=$((checks + 1))
if ! head -1 "$work/on/phases.csv" | grep -q ',osd_op_w,osd_op_w_latency,'; then
  fail "phases.csv has no osd_ columns: $(head -1 "$work/on/phases.csv")"
fi

# telemetry = false: no reading, no line
run_cli 0 run "$work/off.lua" -p progress=false -o "$work/off"
checks=$((checks + 1))
if grep -q '^    osd:' "$out_file"; then fail "telemetry = false printed an osd: line"; fi
check_results "$work/off" 'all("cluster" not in p for p in d["phases"])' 'len(d["phases"]) == 3'

# --no-telemetry: the same for a scenario that has telemetry on
run_cli 0 run "$work/telemetry.lua" -p progress=false -o "$work/cli-off" --no-telemetry
checks=$((checks + 1))
if grep -q '^    osd:' "$out_file"; then fail "--no-telemetry printed an osd: line"; fi
check_results "$work/cli-off" 'all("cluster" not in p for p in d["phases"])' 'len(d["phases"]) == 3'

# a key that may use the pool but not read the OSDs' counters (osd 'allow *' is needed)
ceph auth get-or-create "$nocaps_key" mon 'allow *' osd 'allow rwx' -o "$work/nocaps.keyring" >/dev/null 2>&1
run_cli 0 run "$work/telemetry.lua" -p progress=false -o "$work/nocaps" --id cephmark-test-nocaps --keyring "$work/nocaps.keyring"
expect_stderr_line "cephmark: warning: client.cephmark-test-nocaps may not read the OSDs' perf counters (permission denied; it needs mon 'allow r' osd 'allow *'); phases run without OSD telemetry"
expect_stderr_lines 1
check_results "$work/nocaps" 'all("osd" not in p.get("cluster", {}) and p["status"] == "ok" for p in d["phases"])' 'len(d["phases"]) == 3' \
  'd["status"] == "ok"'

# an OSD slowed on purpose is named as the outlier: osd.2 delays every message it
# dispatches by 10 ms (a Ceph debug option, set for the read phase and restored), so the
# reads it serves as primary take over 10 ms against well under 1 ms on its peers
cat >"$work/slow.lua" <<EOF
local cm = require "cephmark"
return cm.scenario {
  name = "telemetry-slow",
  pools = { rep = { type = "replicated", size = 3, pg_num = 16 } },
  run = function(s, p)
    local pool = s:pool("rep")
    s:phase("write", pool, { ops = 300, threads = 8, block_size = "4K" })
    s:with_config({ ["osd.2/osd_debug_inject_dispatch_delay_probability"] = 1,
      ["osd.2/osd_debug_inject_dispatch_delay_duration"] = 0.01 }, function()
      s:phase("seq", pool, { ops = 300, threads = 8 })
    end)
  end,
}
EOF
config_before=$(ceph config dump 2>/dev/null | md5sum)
run_cli 0 run "$work/slow.lua" -p progress=false -o "$work/slow"
expect_stdout '^    osd: op_r [0-9.]+ m?s .* over [0-9]+ ops on 3 OSDs; outlier osd\.2 [0-9.]+ m?s \(peers [0-9.]+ m?s\)( · .*)?$'
check_results "$work/slow" '[o["osd"] for o in ph["seq"]["cluster"]["osd"]["outliers"]] == [2]' \
  'ph["seq"]["cluster"]["osd"]["outliers"][0]["counter"] == "op_r_latency"' \
  'ph["seq"]["cluster"]["osd"]["outliers"][0]["latency"] > 2 * ph["seq"]["cluster"]["osd"]["outliers"][0]["peers_median"]' \
  "$nonneg"
checks=$((checks + 1))
if [ "$(ceph config dump 2>/dev/null | md5sum)" != "$config_before" ]; then
  fail "ceph config dump changed by the slowed-OSD run"
fi

# an OSD that does not answer: osd.2 stopped (SIGSTOP) just before the phase's first reading
# for 5 s; the reading gives up on it after 2 s, the phase's writes wait for it, and it is
# recorded as missing
pid=$(python3 -c 'import json,sys; print([x["pid"] for x in json.load(open(sys.argv[1]))["daemons"] if x["name"] == "osd.2"][0])' "$CEPHMARK_CLUSTER_DIR/cluster.json")
cat >"$work/stall.lua" <<EOF
local cm = require "cephmark"
return cm.scenario {
  name = "telemetry-stall",
  pools = { rep = { type = "replicated", size = 3, pg_num = 8 } },
  hooks = { before_phase = function(s, phase)
    if phase.name == "write" then os.execute("kill -STOP $pid; (sleep 5; kill -CONT $pid) &") end
  end },
  run = function(s, p)
    s:phase("write", s:pool("rep"), { ops = 100, threads = 8, block_size = "4K" })
  end,
}
EOF
stopped_pid=$pid
run_cli 0 run "$work/stall.lua" -p progress=false -o "$work/stall"
kill -CONT "$pid" 2>/dev/null
stopped_pid=
expect_stdout '^    osd: op_w [0-9.]+ m?s .* on 2 OSDs; osd\.2 missing( · .*)?$'
check_results "$work/stall" 'ph["write"]["status"] == "ok" and ph["write"]["result"]["ops"] == 100' \
  'ph["write"]["cluster"]["osd"]["missing"] == [{"osd": 2, "reason": "no answer within 2 s"}]' \
  'ph["write"]["cluster"]["osd"]["osds"] == 2' "$nonneg"
# on bluestore (a 3-OSD cluster of its own): the same counts, and the commit and kv sync
# latencies that memstore has not
bluestore_cluster="${CEPHMARK_BUILD_DIR:-$work}/telemetry-bluestore-cluster"
run_cli 0 cluster up --dir "$bluestore_cluster" --bluestore --quiet
CEPH_CONF="$bluestore_cluster/ceph.conf" run_cli 0 run "$work/telemetry.lua" -p progress=false -o "$work/bluestore"
expect_stdout "^    osd: op_w [0-9.]+ m?s \\(process [0-9.]+ m?s, subop_w [0-9.]+ m?s, commit [0-9.]+ m?s\\) over [0-9]+ ops on 3 OSDs$outlier( · .*)?\$"
check_results "$work/bluestore" "$nonneg" \
  "$ops <= ph['write']['cluster']['osd']['op_w'] <= $ops + 25" \
  "$ops <= ph['seq']['cluster']['osd']['op_r'] <= $ops + 25" \
  'ph["write"]["cluster"]["osd"]["commit_latency"] > 0 and ph["write"]["cluster"]["osd"]["kv_sync_latency"] > 0' \
  'all(o["commit_latency"] > 0 for o in ph["write"]["cluster"]["osd"]["per_osd"])'
# cephmark compare reads osd.* metrics from the folders' cluster.osd
run_cli 0 compare "$work/on" "$work/bluestore" --metric iops,osd.op_w_latency,osd.op_w
expect_stdout '^ +osd op_w ms +[0-9.]+ +[0-9.]+ +[+-][0-9]+ % '
expect_stdout '^ +osd\.op_w +[0-9]+ +[0-9]+ +[+-][0-9]+ % '
"$CEPHMARK" cluster down --dir "$bluestore_cluster" >/dev/null 2>&1
finish
