# Faults: an OSD is killed (SIGKILL) and restarted in the middle of a write phase and again
# in the middle of a read phase, on a size-3 pool and on an EC 2+1 pool. The run completes,
# the stall shows in the per-second series and in the max latency, there are no errors nor
# verify failures, and no object is lost (every object written is listed and read back
# verified by a final seq phase). Runs on its own 3-OSD bluestore cluster: a memstore OSD
# loses its store when killed.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
cluster="$CEPHMARK_BUILD_DIR/fault-cluster"
cleanup() {
  "$CEPHMARK" cluster down --dir "$cluster" >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

run_cli 0 cluster up --dir "$cluster" --bluestore --quiet
export CEPH_CONF="$cluster/ceph.conf"
# A killed OSD is found by its peers' heartbeats after a 3 s grace (not at once through a
# refused connection): the stall is then long enough to tell from this machine's noise, and
# ends before the OSD is back. One host holds every OSD, so one reporter must be enough.
for option in "osd osd_fast_fail_on_connection_refused false" "global osd_heartbeat_grace 3" \
  "global osd_heartbeat_interval 1" "global mon_osd_adjust_heartbeat_grace false" \
  "global mon_osd_min_down_reporters 1" "global mon_osd_reporter_subtree_level osd"; do
  ceph config set $option >/dev/null 2>&1 || { failures=$((failures + 1)); echo "FAIL: ceph config set $option"; }
done

# The fault runs in its own process (kill, pause, restart, then a marker file), started from
# the phase's per-second callback: a stalled EC pool delays those callbacks until its I/O
# resumes, so the restart must not wait for them.
cat >"$work/fault.lua" <<'LUA'
local cm = require "cephmark"
local sys = require "cephmark.sys"

return cm.scenario {
  name = "fault-osd",
  params = {
    pool_type = cm.enum({ "replicated", "erasure" }, "replicated", "the pool the faults hit"),
    seconds = cm.duration("20s", "length of the faulted phases"),
    kill_at = cm.integer(4, "second of the phase at which the OSD is killed"),
    down_for = cm.duration("6s", "how long the OSD stays down"),
    osd = cm.string("osd.1", "the OSD killed"),
    cluster_dir = cm.string("", "the cluster's state folder"),
    cephmark = cm.string("", "the cephmark binary"),
    work = cm.string("", "a folder for the fault markers"),
  },
  pools = function(p)
    if p.pool_type == "erasure" then return { data = { type = "erasure", k = 2, m = 1 } } end
    return { data = { type = "replicated", size = 3 } }
  end,
  run = function(s, p)
    local pool = s:pool("data")
    local function faulted(phase_name, options)
      local marker = string.format("%s/%s-%s.done", p.work, p.pool_type, phase_name)
      local started = false
      options.seconds, options.threads = p.seconds, 8
      options.on_second = function(second)
        if second.sec == p.kill_at and not started then
          started = true
          local script = string.format("'%s' cluster kill %s --dir '%s' && sleep %g && '%s' cluster restart %s --dir '%s' && touch '%s'",
            p.cephmark, p.osd, p.cluster_dir, p.down_for, p.cephmark, p.osd, p.cluster_dir, marker)
          assert(sys.spawn({ "bash", "-c", script }, { stdout = marker .. ".log", stderr = marker .. ".log" }))
        end
      end
      local result = s:phase(phase_name, pool, options)
      -- the OSD is back before anything else runs
      local deadline = sys.monotonic() + 90
      while not sys.stat(marker) do
        if sys.monotonic() > deadline then error("the fault in " .. phase_name .. " did not finish: read " .. marker .. ".log") end
        sys.sleep(0.2)
        sys.reap()
      end
      return result
    end
    local written = faulted("write", { block_size = "64K" })
    faulted("rand", {})
    -- no object lost: every object is listed and reads back verified
    local listed = #pool:objects(written.prefix)
    s:phase("seq", pool, { seconds = "120s", threads = 8, label = "check" })
    s:phase("count", function() return { listed = listed, written = written.ops } end)
    s:phase("cleanup", pool)
  end,
}
LUA

check_run() {
  local type=$1 dir="$work/results-$1"
  run_cli 0 run "$work/fault.lua" -o "$dir" -p pool_type="$type" -p cluster_dir="$cluster" \
    -p cephmark="$CEPHMARK" -p work="$work"
  checks=$((checks + 1))
  if ! python3 - "$dir/results.json" "$type" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
kind = sys.argv[2]
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
need(doc["status"] == "ok" and doc["complete"], "run status %s complete %s" % (doc["status"], doc["complete"]))
phases = {("check" if p["name"] == "seq" else p["name"]): p for p in doc["phases"]}
for name in ("write", "rand"):
    p = phases[name]
    r = p["result"]
    need(r["errors"] == 0, "%s: %d errors" % (name, r["errors"]))
    need(r.get("verify_failures", 0) == 0, "%s: %d verify failures" % (name, r.get("verify_failures", 0)))
    full = [s for s in p["series"] if not s.get("partial")]
    ranked = sorted(s["iops"] for s in full if s["sec"] < 4)
    normal = ranked[len(ranked) // 2]
    # the OSD dies at second 4: from then on a second runs at under a quarter of the median,
    # or shows an op that waited 1 s or more (the ops stuck on the dead OSD until the
    # osdmap marks it down, 3 s later, complete in a later second). How deep the IOPS dip
    # goes depends on how busy the machine is (at a load of 10, a degraded EC read dipped
    # only to 38 %); an op that waited out the heartbeat grace does not.
    stalled = [s["sec"] for s in full if s["sec"] >= 4 and
               (s["iops"] < normal * 0.25 or (s.get("max_lat") or 0) >= 1.0)]
    need(len(stalled) >= 1, "%s: no second below 25%% of the %.0f IOPS before the fault, nor with an op of 1 s or more: %s" % (name, normal, [(round(s["iops"]), s.get("max_lat")) for s in full]))
    need(r["lat"]["max"] >= 1.0, "%s: max latency %.3f s, expected the stall (>= 1 s)" % (name, r["lat"]["max"]))
    print("%s %s: normal %.0f IOPS, stalled seconds %s, max latency %.2f s, ops %d" % (kind, name, normal, stalled, r["lat"]["max"], r["ops"]))
check = phases["check"]["result"]
count = phases["count"]["value"]
need(count["listed"] == count["written"], "objects listed %d, written %d" % (count["listed"], count["written"]))
need(check["ops"] == count["written"], "objects read back %d, written %d" % (check["ops"], count["written"]))
need(check["errors"] == 0 and check.get("verify_failures", 0) == 0, "read-back: %d errors, %d verify failures" % (check["errors"], check.get("verify_failures", 0)))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
    failures=$((failures + 1))
    echo "FAIL: the $type run under faults (see above); its output:"
    sed 's/^/  stdout: /' "$out_file" | tail -40
  fi
}

check_run replicated
check_run erasure
finish
