# Faults: radosgw is restarted (`cephmark cluster restart client.rgw.cephmark`) in the middle
# of a Swift GET phase. The phase runs to its end, the requests that failed while the gateway
# was away are counted (by HTTP status, or as getting no answer), the run completes and
# writes complete results (exit 1: failed ops), and the objects read afterwards still verify.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT
: "${CEPHMARK_CLUSTER_DIR:?the integration cluster}"

cat >"$work/rgw.lua" <<'LUA'
local cm = require "cephmark"
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"
return cm.scenario {
  name = "fault-rgw",
  params = {
    cluster_dir = cm.string("", "the cluster's state folder"),
    cephmark = cm.string("", "the cephmark binary"),
    work = cm.string("", "a folder for the fault marker"),
  },
  run = function(s, p)
    local conn = rgw.swift_connect {}
    local container = "cephmark-fault-rgw-" .. sys.getpid()
    assert(conn:create_container(container))
    local put = s:phase("put", function()
      return conn:bench { op = "put", container = container, objects = 200, size = "4K", threads = 8 }
    end)
    local marker = p.work .. "/restarted"
    local started = false
    s:phase("get", function(phase)
      return conn:bench { op = "get", from = put, threads = 8, seconds = 15, on_second = function(second)
        phase.on_second(second)
        if second.sec == 3 and not started then
          started = true
          assert(sys.spawn({ "bash", "-c", string.format("'%s' cluster restart client.rgw.cephmark --dir '%s' && touch '%s'",
            p.cephmark, p.cluster_dir, marker) }, { stdout = marker .. ".log", stderr = marker .. ".log" }))
        end
      end }
    end)
    local deadline = sys.monotonic() + 60
    while not sys.stat(marker) do
      if sys.monotonic() > deadline then error("radosgw did not come back: read " .. marker .. ".log") end
      sys.sleep(0.2)
      sys.reap()
    end
    -- the gateway is back: a connection made now reads every object, verified
    local again = rgw.swift_connect {}
    s:phase("check", function()
      return again:bench { op = "get", from = put, threads = 8, ops = 200, random = false }
    end)
    s:phase("delete", function() return again:bench { op = "delete", from = put, threads = 8 } end)
    assert(again:delete_container(container))
  end,
}
LUA

run_cli 1 run "$work/rgw.lua" -o "$work/results" -p cluster_dir="$CEPHMARK_CLUSTER_DIR" -p cephmark="$CEPHMARK" -p work="$work"
checks=$((checks + 1))
if ! python3 - "$work/results/results.json" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
if doc["status"] != "failed_ops" or doc["complete"] is not True:
    bad.append("run status %s complete %s, expected failed_ops and complete" % (doc["status"], doc["complete"]))
phases = {p["name"]: p for p in doc["phases"]}
get = phases["get"]["result"]
counted = sum(e["count"] for e in get.get("http_errors", [])) + get.get("transport_errors", 0)
print("get during the restart: %d ops, %d errors (%r by status, %r without an answer), max latency %.2f s" %
      (get["ops"], get["errors"], [(e["status"], e["count"]) for e in get.get("http_errors", [])],
       get.get("transport_errors", 0), get["lat"]["max"] if get["lat"].get("max") else -1))
if get["errors"] == 0: bad.append("no error counted while radosgw restarted")
if counted != get["errors"]: bad.append("errors %d, but %d by status or without an answer" % (get["errors"], counted))
if get["ops"] == 0: bad.append("no GET succeeded in the phase")
check = phases["check"]["result"]
if check["ops"] != 200 or check["errors"] != 0 or check.get("verify_failures", 0) != 0:
    bad.append("after the restart: %d ops, %d errors, %d verify failures" % (check["ops"], check["errors"], check.get("verify_failures", 0)))
if phases["delete"]["result"]["errors"] != 0: bad.append("delete after the restart had errors")
for b in bad: print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
  failures=$((failures + 1))
  sed 's/^/  stdout: /' "$out_file" | tail -30
fi
finish
