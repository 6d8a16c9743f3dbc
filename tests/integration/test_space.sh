# Space per pool (docs/space.md) against real local clusters. Without a mgr (the shared
# cluster): each write phase's space is "unknown: no mgr reports", the run neither waits
# nor fails, and nothing reads as zero. With a mgr, on memstore and on bluestore (clusters
# of their own): after each write phase, ceph df detail's figures of every pool of the run,
# settled (the objects the run knows it wrote are all counted), a size-3 pool's measured
# amplification within 5 % of 3.0 and an EC 2+1 pool's within 5 % of 1.5 for 4M objects;
# the end of the run's space; the summary lines, phases.csv's space columns, the report's
# space table, and `cephmark compare` on space.raw_per_stored beside
# cpu.mib_per_osd_cpu_second.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"

work=$(mktemp -d)
memstore_cluster="${CEPHMARK_BUILD_DIR:-$work}/space-memstore-cluster"
bluestore_cluster="${CEPHMARK_BUILD_DIR:-$work}/space-bluestore-cluster"
cleanup() {
  "$CEPHMARK" cluster down --dir "$memstore_cluster" >/dev/null 2>&1
  "$CEPHMARK" cluster down --dir "$bluestore_cluster" >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

json_check_prelude='
local function space(i) return ((r.phases[i] or {}).cluster or {}).space or {} end
local function near(value, want, fraction) return type(value) == "number" and math.abs(value / want - 1) <= fraction end'
json_check_dump() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [print("  phase", p["index"], json.dumps((p.get("cluster") or {}).get("space"))[:700]) for p in d["phases"]]' "$1/results.json" 2>/dev/null
}

cat >"$work/space.lua" <<'EOF'
local cm = require "cephmark"
return cm.scenario {
  name = "space-test",
  pools = { rep = { type = "replicated", size = 3, pg_num = 8 }, ec = { type = "erasure", k = 2, m = 1, pg_num = 8 } },
  run = function(s, p)
    s:phase("write", s:pool("rep"), { ops = 8, threads = 4, block_size = "4M" })
    s:phase("seq", s:pool("rep"), { ops = 8, threads = 4 })
    s:phase("write", s:pool("ec"), { ops = 8, threads = 4, block_size = "4M" })
    s:phase("cleanup", s:pool("rep"))
  end,
}
EOF

# 1. no mgr (the shared cluster): unknown, said plainly, no figures, the run goes on
run_cli 0 run "$work/space.lua" -p progress=false -o "$work/nomgr"
n=$(grep -cx '    space: unknown: no mgr reports' "$out_file")
checks=$((checks + 1))
[ "$n" = 2 ] || { failures=$((failures + 1)); echo "FAIL: $n 'space: unknown: no mgr reports' lines, expected 2 (one per write phase)"; cat "$out_file"; }
expect_stderr_lines 0
json_check "$work/nomgr" 'r.status == "ok" and #r.phases == 4' "the run ends well"
json_check "$work/nomgr" 'space(1).status == "unknown" and space(1).reason == "no mgr reports" and space(3).reason == "no mgr reports"' "unknown: no mgr reports"
json_check "$work/nomgr" 'space(1).stored == nil and space(1).raw_per_stored == nil and space(1).objects == nil' "no figures, never zeros"
json_check "$work/nomgr" 'space(1).waited == nil and space(1).settled == nil' "nothing waited for"
json_check "$work/nomgr" 'r.phases[2].cluster.space == nil and r.phases[4].cluster.space == nil' "read and cleanup phases: no space"
json_check "$work/nomgr" 'r.cluster.space.status == "unknown" and r.cluster.space.reason == "no mgr reports"' "the end of the run: unknown"
checks=$((checks + 1))
grep -q 'unknown: no mgr reports' "$work/nomgr/report.html" || { failures=$((failures + 1)); echo "FAIL: the report's space table does not say unknown"; }

# 2. memstore and bluestore, each a cluster of its own with a mgr; the OSDs report every
# second (these clusters only) so that the test waits less
for store in memstore bluestore; do
  dir=$memstore_cluster
  flags=()
  if [ "$store" = bluestore ]; then dir=$bluestore_cluster; flags=(--bluestore); fi
  run_cli 0 cluster up --dir "$dir" --mgr --quiet "${flags[@]}"
  ceph -c "$dir/ceph.conf" config set mgr mgr_stats_period 1 >/dev/null 2>&1
  ceph -c "$dir/ceph.conf" config set osd osd_heartbeat_interval 1 >/dev/null 2>&1
  CEPH_CONF="$dir/ceph.conf" run_cli 0 run "$work/space.lua" -p progress=false -o "$work/$store"
  expect_stdout '^    space: rep stored 32\.0 MiB, (raw |cluster raw \+)9[0-9.]+ MiB, 3\.[0-9]+x raw/stored, 10 objects \(settled in [0-9.]+ s\)$'
  expect_stdout '^    space: ec stored 32\.0 MiB, (raw |cluster raw \+)4[0-9.]+ MiB, 1\.[0-9]+x raw/stored, 10 objects \(settled in [0-9.]+ s\)$'
  expect_stdout '^space at the end: ec stored 32\.0 MiB, '
  json_check "$work/$store" 'space(1).status == "measured" and space(1).settled == true and space(1).label == "rep"' "$store: the rep write is measured and settled"
  json_check "$work/$store" 'space(3).status == "measured" and space(3).settled == true and space(3).label == "ec"' "$store: the ec write is measured and settled"
  json_check "$work/$store" 'space(1).objects == 10 and space(1).expected_objects == 10 and space(3).objects == 10' "$store: 8 objects, the run's metadata and owner objects, as the run counts them"
  json_check "$work/$store" 'near(space(1).raw_per_stored, 3.0, 0.05)' "$store: size 3, 4M objects: within 5 % of 3.0"
  json_check "$work/$store" 'near(space(3).raw_per_stored, 1.5, 0.05)' "$store: EC 2+1, 4M objects: within 5 % of 1.5"
  json_check "$work/$store" 'near(space(1).stored, 32 * 1048576, 0.01) and space(1).max_avail > 0 and space(1).percent_used > 0' "$store: stored, max_avail, percent_used"
  json_check "$work/$store" '#space(3).pools == 2 and space(3).pools[2].label == "rep" and space(3).pools[2].objects == 10' "$store: every pool of the run, after each write"
  json_check "$work/$store" 'r.cluster.space.status == "measured" and #r.cluster.space.pools == 2' "$store: the end of the run"
  json_check "$work/$store" 'r.cluster.space.pools[2].label == "rep" and r.cluster.space.pools[2].objects == 1' "$store: at the end, the cleaned pool holds its owner record only"
  checks=$((checks + 1))
  head -1 "$work/$store/phases.csv" | grep -q ',space_status,space_stored,space_raw_used,space_objects,space_raw_per_stored,' ||
    { failures=$((failures + 1)); echo "FAIL: $store: phases.csv lacks the space columns"; }
  checks=$((checks + 1))
  grep -q 'Space per pool' "$work/$store/report.html" || { failures=$((failures + 1)); echo "FAIL: $store: no space table in the report"; }
  "$CEPHMARK" cluster down --dir "$dir" >/dev/null 2>&1
done
# memstore keeps no statistics per pool: the amplification comes from the cluster's raw
# change over the phase; bluestore's is the pool's own raw bytes
json_check "$work/memstore" 'space(1).raw_from == "cluster change" and space(1).raw_used == nil and space(1).raw_change > 0' "memstore: from the cluster's raw change"
json_check "$work/bluestore" 'space(1).raw_from == "pool" and near(space(1).raw_used, 96 * 1048576, 0.05)' "bluestore: the pool's raw bytes"
json_check "$work/bluestore" 'near(space(1).raw_per_written, 3.0, 0.05)' "bluestore: raw bytes per byte written"

# comparisons take space.raw_per_stored, and cpu.mib_per_osd_cpu_second still
run_cli 0 compare "$work/memstore" "$work/bluestore" --metric space.raw_per_stored,cpu.mib_per_osd_cpu_second
expect_stdout 'space\.raw_per_stored +3\.[0-9]+ +3\.[0-9]+ +[+-][0-9]+ % '
expect_stdout 'space\.raw_per_stored +1\.[0-9]+ +1\.[0-9]+ +[+-][0-9]+ % '
expect_stdout 'cpu\.mib_per_osd_cpu_second +[0-9.]+ +[0-9.]+ '
finish
