# The cluster's state around each phase (docs/cluster-state.md) against real clusters: on a
# cluster of its own with a mgr, a phase started while an OSD is out (PGs remapped or
# undersized) is marked unquiet with its reason and a warning line, and `cephmark compare`
# says so; wait_clean that cannot be met fails with a clear message, and wait_clean waits
# out the recovery once the OSD is back in, and the phase is quiet; quiesce sets noscrub
# and nodeep-scrub for the run and restores the operator's own flags (set before: still
# set; not set: cleared), also when the run is stopped by SIGTERM mid-phase; the pools
# cephmark creates have the PG autoscaler off even where the default is on. On the shared
# cluster (no mgr): the PG figures are recorded as unknown, never zero, and wait_clean
# refuses at once. Every wait for the cluster polls for the state it needs, with generous
# bounds, so that the machine's load changes how long it takes, never the outcome.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"

work=$(mktemp -d)
cluster="${CEPHMARK_BUILD_DIR:-$work}/state-test-cluster"
shared_conf=$CEPH_CONF
run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill -TERM "$run_pid" 2>/dev/null && wait "$run_pid" 2>/dev/null
  "$CEPHMARK" cluster down --dir "$cluster" >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

# on a failed check_results: the phases' state tables
results_dump='
for p in d.get("phases", []):
    print("  phase", p["name"], json.dumps(p.get("cluster", {}).get("state"))[:800])'

# PG states from the mgr's report: "clean" when every PG is active+clean, "busy" when every
# PG is reported and some are not active+clean, "unreported" while the mgr has not reported
# every PG (a pool created seconds ago: its PGs are "unknown", and a run started then would
# see the same stale report)
pg_states() {
  ceph status -f json 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin)["pgmap"]
states = m.get("pgs_by_state", [])
reported = m.get("num_pgs", 0) > 0 and all(s["state_name"] != "unknown" for s in states)
clean = reported and all(s["state_name"] == "active+clean" for s in states)
print("clean" if clean else "busy" if reported else "unreported")'
}
pgs_clean() { [ "$(pg_states)" = clean ]; }
pgs_busy() { [ "$(pg_states)" = busy ]; }
osd_flags() { ceph osd dump -f json | python3 -c 'import json, sys; print(json.load(sys.stdin)["flags"])'; }
has_flag() { osd_flags | tr ',' '\n' | grep -qx "$1"; }
no_flag() { ! has_flag "$1"; }
stdout_has() { grep -q "$1" "$work/bg.out"; }

cat >"$work/state.lua" <<'EOF'
local cm = require "cephmark"
return cm.scenario {
  name = "state-test",
  params = { seconds = cm.duration(1, "the write phase") },
  pools = { rep = { type = "replicated", size = 3, pg_num = 8 }, ec = { type = "erasure", k = 2, m = 1, pg_num = 8 } },
  run = function(s, p)
    local pool = s:pool("rep")
    s:phase("write", pool, { seconds = p.seconds, threads = 4, block_size = "4K" })
    s:phase("cleanup", pool)
  end,
}
EOF
sed 's/name = "state-test",/name = "state-test", quiesce = true,/' "$work/state.lua" >"$work/quiesce.lua"

# --- the shared cluster, without a mgr: PG figures unknown, wait_clean refuses at once
cat >"$work/small.lua" <<'EOF'
local cm = require "cephmark"
return cm.scenario {
  name = "state-small",
  pools = { rep = { type = "replicated", size = 3, pg_num = 8 } },
  run = function(s, p) s:phase("write", s:pool("rep"), { ops = 50, threads = 4, block_size = "4K" }) end,
}
EOF
run_cli 0 run "$work/small.lua" -p progress=false -o "$work/nomgr"
expect_stdout '(^    | · )state: quiet \(PG states unknown: no mgr\)$'
check_results "$work/nomgr" \
  'ph["write"]["cluster"]["state"]["start"]["pgs"] == "unknown: no mgr reports"' \
  'ph["write"]["cluster"]["state"]["end"]["activity"] == "unknown: no mgr reports"' \
  'ph["write"]["cluster"]["state"]["start"]["pools"] == "unknown: no mgr reports"' \
  'ph["write"]["cluster"]["state"]["start"]["osds"]["up"] == 3' \
  'ph["write"]["cluster"]["state"]["quiet"] is True and "unquiet" not in ph["write"]["cluster"]["state"]'
run_cli 2 run "$work/small.lua" -p progress=false -o "$work/nomgr-wait" --wait-clean 60s
expect_stderr_line "cephmark: wait_clean: cannot tell whether the PGs are active+clean: the cluster has no active mgr (PG states come from the mgr's reports); start a mgr, or run without wait_clean"
expect_stderr_lines 1

# --- a cluster of its own, with a mgr; the pool default of the autoscaler turned on, so
# that only pool_create's own setting keeps it off
run_cli 0 cluster up --dir "$cluster" --mgr --quiet
export CEPH_CONF=$cluster/ceph.conf
ceph tell mon.a config set osd_pool_default_pg_autoscale_mode on >/dev/null
ceph osd pool create state-control 8 >/dev/null 2>&1
checks=$((checks + 1))
[ "$(ceph osd pool get state-control pg_autoscale_mode)" = "pg_autoscale_mode: on" ] ||
  fail "a pool created by hand should have the autoscaler on here: $(ceph osd pool get state-control pg_autoscale_mode)"
ceph osd pool rm state-control state-control --yes-i-really-really-mean-it >/dev/null 2>&1
poll 120 pgs_clean

# quiet, through wait_clean (it waits for the new pools' PGs to be reported); the pools
# kept to read their autoscaler mode back
run_cli 0 run "$work/state.lua" -p progress=false -p keep_pools=true -o "$work/quiet" --wait-clean 120s
expect_stdout '(^    | · )state: quiet$'
expect_stderr_lines 0
for pool in cephmark-state-test-rep cephmark-state-test-ec; do
  checks=$((checks + 1))
  mode=$(ceph osd pool get "$pool" pg_autoscale_mode 2>&1)
  [ "$mode" = "pg_autoscale_mode: off" ] || fail "$pool: $mode, expected off"
  ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
done
check_results "$work/quiet" \
  'all(p["pg_autoscale_mode"] == "off" for p in d["pools"])' \
  'ph["write"]["cluster"]["state"]["quiet"] is True' \
  'ph["write"]["cluster"]["state"]["start"]["pgs"]["active_clean"] == ph["write"]["cluster"]["state"]["start"]["pgs"]["total"]' \
  'ph["write"]["cluster"]["state"]["start"]["mgr"] is True' \
  'ph["write"]["cluster"]["state"]["start"]["osds"] == {"total": 3, "up": 3, "in": 3}' \
  '{u["name"] for u in ph["write"]["cluster"]["state"]["end"]["pools"]} == {"cephmark-state-test-rep", "cephmark-state-test-ec"}' \
  'all(0 <= u["fill_ratio"] < 1 for u in ph["write"]["cluster"]["state"]["end"]["pools"])' \
  'isinstance(ph["write"]["cluster"]["state"]["start"]["health"], str)' \
  'd["wait_clean"] == 120 and "quiesce" not in d'

# --- an OSD out: data to move, PGs remapped or undersized
ceph osd pool create state-data 8 8 replicated >/dev/null 2>&1
ceph osd pool application enable state-data test >/dev/null 2>&1
for i in 1 2 3 4 5 6 7 8; do rados -p state-data put "object-$i" "$CEPHMARK" >/dev/null 2>&1; done
ceph osd out 2 >/dev/null 2>&1
poll 120 pgs_busy

run_cli 0 run "$work/state.lua" -p progress=false -o "$work/unquiet"
expect_stdout '(^    | · )state: unquiet: [0-9]+ pgs '
expect_stderr '^cephmark: warning: write rep: started while the cluster was not quiet: [0-9]+ pgs .*; its figures may not compare with a quiet phase.s$'
check_results "$work/unquiet" \
  'ph["write"]["cluster"]["state"]["quiet"] is False' \
  'len(ph["write"]["cluster"]["state"]["unquiet"]) >= 1 and "pgs" in ph["write"]["cluster"]["state"]["unquiet"][0]' \
  'ph["write"]["cluster"]["state"]["start"]["osds"] == {"total": 3, "up": 3, "in": 2}' \
  'any(w.startswith("write rep: started while the cluster was not quiet") for w in d["warnings"])'

checks=$((checks + 1))
python3 - "$work/unquiet/phases.csv" <<'PY' || fail "phases.csv lacks the state columns: $(head -2 "$work/unquiet/phases.csv")"
import csv, sys
rows = {r["name"]: r for r in csv.DictReader(open(sys.argv[1]))}
w = rows["write"]
sys.exit(0 if w["state"] == "unquiet" and " pgs " in w["state_unquiet"] and w["state_health"].startswith("HEALTH_") else 1)
PY

# the comparison of the quiet run with this one says so
run_cli 0 compare "$work/quiet" "$work/unquiet" --metric iops
expect_stdout "^unquiet: 1 of 2 phases compared started while the cluster was not quiet: write rep in $work/unquiet \\(1 of 1\\); their figures may not compare"

# wait_clean that cannot be met while the OSD stays out: a clear failure, nothing left
run_cli 2 run "$work/state.lua" -p progress=false -o "$work/too-short" --wait-clean 3s
expect_stderr '^cephmark: wait_clean: the cluster was not quiet after 3 s \([0-9]+ pgs .*\); the phase did not run$'
expect_stdout '^  waiting up to 3 s for the PGs to be active\+clean: [0-9]+ pgs '
checks=$((checks + 1))
if ceph osd pool ls | grep -q '^cephmark-state-test'; then fail "the failed run left its pools: $(ceph osd pool ls)"; fi

# wait_clean waits it out: the OSD comes back in once the run says it waits
"$CEPHMARK" run "$work/state.lua" -p progress=false -o "$work/waited" --wait-clean 300s >"$work/bg.out" 2>"$work/bg.err" </dev/null &
run_pid=$!
poll 120 stdout_has '^  waiting up to 300 s for the PGs to be active+clean: '
ceph osd in 2 >/dev/null 2>&1
wait "$run_pid"
status=$?
run_pid=
checks=$((checks + 1))
[ "$status" = 0 ] || { fail "the wait_clean run exited $status"; sed 's/^/  /' "$work/bg.err"; }
checks=$((checks + 1))
grep -q '^  cluster quiet after [0-9.]* s$' "$work/bg.out" || fail "no 'cluster quiet after' line: $(cat "$work/bg.out")"
checks=$((checks + 1))
grep -qE '(^    | · )state: quiet$' "$work/bg.out" || fail "the phase after the wait is not quiet: $(cat "$work/bg.out")"
check_results "$work/waited" \
  'ph["write"]["cluster"]["state"]["quiet"] is True and ph["write"]["cluster"]["state"]["waited"] > 0' \
  'ph["write"]["cluster"]["state"]["start"]["osds"]["in"] == 3'
ceph osd pool rm state-data state-data --yes-i-really-really-mean-it >/dev/null 2>&1
poll 120 pgs_clean

# --- quiesce, flags not set before: set during the run, cleared after
run_cli 0 run "$work/quiesce.lua" -p progress=false -o "$work/quiesce"
expect_stdout '^  osd flag noscrub set \(it was not; unset at the end\)$'
expect_stdout '^  osd flag nodeep-scrub unset \(restored\)$'
poll 10 no_flag noscrub
poll 10 no_flag nodeep-scrub
check_results "$work/quiesce" \
  'd["quiesce"] == [{"flag": "noscrub", "was_set": False, "set_by_run": True, "restored": True}, {"flag": "nodeep-scrub", "was_set": False, "set_by_run": True, "restored": True}]' \
  'ph["write"]["cluster"]["state"]["quiesced"] is True' \
  'any(c["name"] == "OSDMAP_FLAGS" and "noscrub" in c["summary"] for c in ph["write"]["cluster"]["state"]["start"]["checks"])'

# the operator's noscrub, set before: left set (run flag --quiesce on a scenario without it)
ceph osd set noscrub >/dev/null 2>&1
run_cli 0 run "$work/state.lua" -p progress=false -o "$work/operator" --quiesce
expect_stdout '^  osd flag noscrub: already set before this run \(left set\)$'
poll 10 has_flag noscrub
poll 10 no_flag nodeep-scrub
check_results "$work/operator" \
  'd["quiesce"][0] == {"flag": "noscrub", "was_set": True, "set_by_run": False}' \
  'd["quiesce"][1]["set_by_run"] is True and d["quiesce"][1]["restored"] is True'
ceph osd unset noscrub >/dev/null 2>&1

# stopped by SIGTERM mid-phase: the run's flag cleared, the operator's nodeep-scrub kept
ceph osd set nodeep-scrub >/dev/null 2>&1
"$CEPHMARK" run "$work/quiesce.lua" -p seconds=120 -o "$work/interrupted" >"$work/bg.out" 2>"$work/bg.err" </dev/null &
run_pid=$!
poll 120 stdout_has '^\[1\] write rep'
poll 30 has_flag noscrub
kill -TERM "$run_pid"
wait "$run_pid"
status=$?
run_pid=
checks=$((checks + 1))
[ "$status" = 143 ] || fail "the interrupted run exited $status, expected 143"
poll 10 no_flag noscrub
poll 10 has_flag nodeep-scrub
checks=$((checks + 1))
grep -q '^  osd flag noscrub unset (restored)$' "$work/bg.out" || fail "no restore line: $(cat "$work/bg.out")"
check_results "$work/interrupted" \
  'd["status"] == "interrupted"' \
  'd["quiesce"] == [{"flag": "noscrub", "was_set": False, "set_by_run": True, "restored": True}, {"flag": "nodeep-scrub", "was_set": True, "set_by_run": False}]'
ceph osd unset nodeep-scrub >/dev/null 2>&1

export CEPH_CONF=$shared_conf
"$CEPHMARK" cluster down --dir "$cluster" >/dev/null 2>&1
finish
