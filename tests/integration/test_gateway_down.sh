# A gateway that stays down: radosgw is killed (`cephmark cluster kill client.rgw.cephmark`)
# and not restarted while HTTP phases run. Each phase ends as failed once no request has
# succeeded for its give_up bound, within the bound plus a margin, with one line naming the
# gateway and the failures, and its partial results written: a Swift GET over the native
# transport (killed mid-phase), a Swift GET over libcurl and an S3 GET (gateway already
# down), all with give_up = "5s", and the swift-bench drop-in with its default bound (30 s),
# which then skips its deletes. radosgw is restarted at the end (also when the test fails),
# so the other tests still have it.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
: "${CEPHMARK_CLUSTER_DIR:?the integration cluster}"
work=$(mktemp -d)
bg=

# radosgw back, answering HTTP, whatever happened
rgw_back() {
  "$CEPHMARK" run "$work/answers.lua" >/dev/null 2>&1 && return 0
  "$CEPHMARK" cluster restart client.rgw.cephmark --dir "$CEPHMARK_CLUSTER_DIR" >/dev/null 2>&1
  for _ in $(seq 150); do
    "$CEPHMARK" run "$work/answers.lua" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "radosgw did not answer after its restart"
  return 1
}
trap '[ -n "$bg" ] && kill -KILL "$bg" 2>/dev/null; rgw_back; rm -rf "$work" "$out_file" "$err_file"' EXIT

cat >"$work/answers.lua" <<'LUA'
-- exit 0 once the gateway answers a Swift request
local conn = require("cephmark.rgw").swift_connect { timeout = 2 }
assert(conn:list_containers())
LUA

cat >"$work/down.lua" <<'LUA'
local cm = require "cephmark"
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"
return cm.scenario {
  name = "gateway-down",
  params = {
    cluster_dir = cm.string("", "the cluster's state folder"),
    cephmark = cm.string("", "the cephmark binary"),
  },
  run = function(s, p)
    local swift = rgw.swift_connect {}
    local s3 = rgw.s3_connect {}
    local container = "cephmark-gateway-down-" .. sys.getpid()
    assert(swift:create_container(container))
    local bucket = container .. "-s3"
    assert(s3:create_bucket(bucket))
    local put = s:phase("put swift", function()
      return swift:bench { op = "put", container = container, objects = 20, size = "4K", threads = 4 }
    end)
    local put_s3 = s:phase("put s3", function()
      return s3:bench { op = "put", bucket = bucket, objects = 20, size = "4K", threads = 4 }
    end)
    local killed = false
    local function kill_rgw()
      killed = true
      assert(sys.run { p.cephmark, "cluster", "kill", "client.rgw.cephmark", "--dir", p.cluster_dir })
    end
    -- killed two seconds into the phase; ops alone bound it far beyond the test
    s:phase("get native", function(phase)
      return swift:bench { op = "get", from = put, threads = 8, ops = 100000000, transport = "native",
        give_up = "5s", on_second = function(second)
          phase.on_second(second)
          if second.sec == 2 and not killed then kill_rgw() end
        end }
    end)
    if not killed then kill_rgw() end
    s:phase("get curl", function(phase)
      return swift:bench { op = "get", from = put, threads = 8, ops = 100000000, transport = "curl",
        give_up = "5s", on_second = phase.on_second }
    end)
    s:phase("get s3", function(phase)
      return s3:bench { op = "get", from = put_s3, threads = 8, ops = 100000000, give_up = "5s",
        on_second = phase.on_second }
    end)
    -- the gateway back: what was written is removed
    assert(sys.run { "bash", "-c", string.format("'%s' cluster restart client.rgw.cephmark --dir '%s' >/dev/null", p.cephmark, p.cluster_dir) })
    local deadline = sys.monotonic() + 30
    repeat
      sys.sleep(0.3)
      local ok = pcall(function() assert(rgw.swift_connect({ timeout = 2 }):list_containers()) end)
    until ok or sys.monotonic() > deadline
    local again, again_s3 = rgw.swift_connect {}, rgw.s3_connect {}
    s:phase("delete swift", function() return again:bench { op = "delete", from = put, threads = 4 } end)
    s:phase("delete s3", function() return again_s3:bench { op = "delete", from = put_s3, threads = 4 } end)
    assert(again:delete_container(container))
    assert(again_s3:delete_bucket(bucket))
  end,
}
LUA

run_cli 1 run "$work/down.lua" -o "$work/results" -p cluster_dir="$CEPHMARK_CLUSTER_DIR" -p cephmark="$CEPHMARK"
gateway='gateway http://127\.0\.0\.1:[0-9]+ answered no request for 5 s: giving up \([0-9]+ failures: connection refused\)'
checks=$((checks + 1))
n=$(grep -cE "^cephmark: $gateway$" "$err_file")
[ "$n" = 3 ] || { failures=$((failures + 1)); echo "FAIL: $n give-up lines on stderr, expected 3 (one per GET phase)"; sed 's/^/  stderr: /' "$err_file"; }
checks=$((checks + 1))
if ! python3 - "$work/results/results.json" "$gateway" <<'PY'; then
import json, re, sys
doc = json.load(open(sys.argv[1]))
pattern = re.compile("^" + sys.argv[2] + "$")
bad = []
if doc["status"] != "failed_ops" or doc["complete"] is not True:
    bad.append("run status %s complete %s, expected failed_ops and complete" % (doc["status"], doc["complete"]))
phases = {p["name"]: p for p in doc["phases"]}
for name in ("get native", "get curl", "get s3"):
    phase = phases[name]
    r = phase["result"]
    print("%s: %s after %.1f s, %d ops, %d errors: %s" % (name, phase["status"], phase["elapsed"], r["ops"], r["errors"], phase.get("error")))
    if phase["status"] != "failed": bad.append("%s: status %s" % (name, phase["status"]))
    if not pattern.match(phase.get("error") or ""): bad.append("%s: error %r" % (name, phase.get("error")))
    if r.get("gave_up") != phase.get("error"): bad.append("%s: result.gave_up %r" % (name, r.get("gave_up")))
    # the bound (5 s) after the gateway went away, plus a margin for the connect backoff
    # (1.6 s) and a loaded machine; the native phase ran 2 s before the kill
    if phase["elapsed"] > 5 + 2 + 15: bad.append("%s: took %.1f s" % (name, phase["elapsed"]))
    if r["errors"] == 0 or len(phase["series"]) == 0: bad.append("%s: no partial result" % name)
if phases["get native"]["result"]["ops"] == 0: bad.append("get native: nothing read before the kill")
for name in ("delete swift", "delete s3"):
    if phases[name]["result"]["errors"] != 0 or phases[name]["result"]["ops"] != 20:
        bad.append("%s after the restart: %r" % (name, phases[name]["result"]["ops"]))
for b in bad: print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
  failures=$((failures + 1))
  sed 's/^/  stdout: /' "$out_file" | tail -30
fi

# swift-bench with its default bound: the GET phase (-g far beyond the test) ends 30 s after
# the gateway went away; the deletes are skipped, with a line saying what is left
rgw_back || { failures=$((failures + 1)); finish; exit; }
"$CEPHMARK" swift-bench -c 8 -s 4096 -n 20 -C 2 -g 1000000000 >"$out_file" 2>"$err_file" </dev/null &
bg=$!
for _ in $(seq 300); do grep -q 'PUTS \*\*FINAL' "$out_file" && break; sleep 0.2; done
sleep 1
"$CEPHMARK" cluster kill client.rgw.cephmark --dir "$CEPHMARK_CLUSTER_DIR" >/dev/null
start=$(date +%s.%N)
for _ in $(seq 300); do kill -0 "$bg" 2>/dev/null || break; sleep 0.2; done
kill -0 "$bg" 2>/dev/null && kill -KILL "$bg"
wait "$bg"
last_status=$? last_command="swift-bench -g 1000000000 with radosgw killed"
bg=
echo "swift-bench: exit $last_status, $(awk -v now="$(date +%s.%N)" -v start="$start" 'BEGIN { printf "%.1f", now - start }') s after the kill"
checks=$((checks + 1))
[ "$last_status" = 1 ] || { failures=$((failures + 1)); echo "FAIL: $last_command exited $last_status, expected 1"; }
expect_faster_than 50 "$start"
expect_stderr "^cephmark: swift-bench: gateway http://127\.0\.0\.1:[0-9]+ answered no request for 30 s: giving up \([0-9]+ failures: connection refused\)$"
expect_stderr_lines 1
expect_stdout 'GETS \*\*FINAL\*\* \[[0-9]+ failures\]'
expect_stdout 'WARNING the gateway stayed down: 2 containers \([0-9a-f]+_\*\) and their objects are left$'
prefix=$(sed -n 's/.*WARNING the gateway stayed down: 2 containers (\([0-9a-f]*\)_\*).*/\1/p' "$out_file")

# the gateway back: remove what swift-bench left
rgw_back || failures=$((failures + 1))
cat >"$work/leftovers.lua" <<'LUA'
local p = ...
local conn = require("cephmark.rgw").swift_connect {}
for i = 0, 1 do
  local container = p.prefix .. "_" .. i
  for _, name in ipairs(assert(conn:list(container))) do assert(conn:delete(container, name)) end
  assert(conn:delete_container(container))
end
print("left containers removed")
LUA
[ -n "$prefix" ] && run_cli 0 run "$work/leftovers.lua" -p prefix="$prefix"
finish
