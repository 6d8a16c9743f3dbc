# SIGINT in every kind of scenario phase (write, seq, rand, a custom Lua phase, scripted
# workers): in-flight ops drain within a bounded time, the exit code is 130, the results so
# far are written and marked incomplete (the interrupted phase with its partial result), the
# pool the run created is deleted (kept with -p keep_pools=true), and a Ceph option the run
# set is restored. A cleanup phase is the exception by design: it finishes after SIGINT (so
# an interrupted run leaves no benchmark objects), then the run ends as interrupted. A second
# SIGINT exits at once (here during such a cleanup) and leaves results.json whole (every
# results file is replaced atomically).
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
pool=cephmark-interrupt-phases-data
trap 'ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1; ceph config rm osd osd_max_backfills >/dev/null 2>&1; rm -rf "$work" "$out_file" "$err_file"' EXIT

cat >"$work/phases.lua" <<'LUA'
local cm = require "cephmark"
local sys = require "cephmark.sys"
return cm.scenario {
  name = "interrupt-phases",
  params = { stop_in = cm.string("write", "the phase the test interrupts (it runs 60 s)") },
  pools = { data = { type = "replicated", size = 3 } },
  run = function(s, p)
    local function seconds(name) return p.stop_in == name and "60s" or "2s" end
    s:set_config("osd", "osd_max_backfills", 7)
    local pool = s:pool("data")
    s:phase("write", pool, { seconds = seconds("write"), threads = 16, block_size = "4K" })
    -- one op in flight: reading every object once takes longer than the test's delay
    s:phase("seq", pool, { seconds = seconds("seq"), threads = p.stop_in == "seq" and 1 or 16 })
    s:phase("rand", pool, { seconds = seconds("rand"), threads = 16 })
    s:phase("custom", function()
      local deadline = sys.monotonic() + (p.stop_in == "custom" and 60 or 0.1)
      while sys.monotonic() < deadline do sys.sleep(0.05) end
    end)
    s:workers { name = "workers", pool = pool, n = 4, seconds = seconds("workers"), fn = function(w)
      local i = 0
      while true do
        i = i + 1
        w:op(4096)
      end
    end }
    if p.stop_in == "cleanup" then
      -- enough objects that removing them takes more than a moment
      s:phase("write", pool, { seconds = "6s", threads = 32, block_size = "4K", label = "more" })
    end
    s:phase("cleanup", pool, { threads = 1 })
  end,
}
LUA

backfills_before=$(ceph config get osd osd_max_backfills 2>/dev/null)

# interrupt PHASE DELAY [SECOND_DELAY] [ARGS...]: runs the scenario, waits for the phase's
# header line, sends SIGINT after DELAY seconds (and a second one SECOND_DELAY later)
interrupt() {
  local phase=$1 delay=$2 second=$3
  shift 3
  dir="$work/results-$phase-$second"
  last_command="run phases.lua -p stop_in=$phase $* (SIGINT in $phase)"
  "$CEPHMARK" run "$work/phases.lua" -o "$dir" -p stop_in="$phase" "$@" >"$out_file" 2>"$err_file" &
  local pid=$! waited=0
  local header="^\[[0-9]+\] $phase( |$)"
  [ "$phase" = cleanup ] && header="^\[[0-9]+\] cleanup"
  while ! grep -qE "$header" "$out_file" && [ $waited -lt 600 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  sleep "$delay"
  kill -INT "$pid"
  interrupted_at=$(date +%s.%N)
  if [ "$second" != none ]; then
    sleep "$second"
    kill -INT "$pid" 2>/dev/null
  fi
  wait "$pid"
  last_status=$?
  checks=$((checks + 1))
  if [ "$last_status" != 130 ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' exited $last_status, expected 130"
    sed 's/^/  stdout: /' "$out_file" | tail -15
    sed 's/^/  stderr: /' "$err_file" | tail -15
  fi
}

# check_results PHASE: results.json is whole, incomplete, interrupted in PHASE with a result
check_results() {
  checks=$((checks + 1))
  if ! python3 - "$dir/results.json" "$1" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
phase = sys.argv[2]
bad = []
if doc.get("complete") is not False: bad.append("complete is %r" % doc.get("complete"))
if doc.get("status") != "interrupted": bad.append("status is %r" % doc.get("status"))
last = doc["phases"][-1]
if phase == "cleanup":
    # the cleanup runs to its end; the run is still marked interrupted
    r = last.get("result") or {}
    # the last write's run (what the pool's bench metadata names) is what cleanup removes
    written = [(p.get("result") or {}).get("ops", 0) for p in doc["phases"] if p["name"] == "write"][-1]
    if last["name"] != "cleanup" or last["status"] != "ok" or r.get("ops") != written:
        bad.append("cleanup: %s %s removed %r of %d objects" % (last["name"], last["status"], r.get("ops"), written))
elif last["name"] != phase or last["status"] != "interrupted":
    bad.append("last phase %s is %s, expected %s interrupted" % (last["name"], last["status"], phase))
if phase in ("write", "seq", "rand", "workers"):
    r = last.get("result") or {}
    if not r.get("interrupted"): bad.append("the phase's result is not marked interrupted: %r" % sorted(r))
    if not r.get("ops"): bad.append("the interrupted phase has no partial result (ops %r)" % r.get("ops"))
for b in bad: print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
    failures=$((failures + 1))
    echo "FAIL: results of '$last_command' (above)"
  fi
}

check_cleaned() {
  checks=$((checks + 1))
  if ceph osd pool ls 2>/dev/null | grep -qxF "$pool"; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' left the pool $pool"
  fi
  local now
  now=$(ceph config get osd osd_max_backfills 2>/dev/null)
  checks=$((checks + 1))
  if [ "$now" != "$backfills_before" ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' left osd_max_backfills at $now (was $backfills_before)"
  fi
}

for phase in write seq rand custom workers cleanup; do
  interrupt "$phase" 0.3 none
  # a cleanup phase finishes its work (a few thousand removals, one at a time)
  if [ "$phase" = cleanup ]; then expect_faster_than 90 "$interrupted_at"; else expect_faster_than 15 "$interrupted_at"; fi
  expect_stderr_line 'cephmark: interrupted'
  expect_stdout "pool data: deleted $pool"
  check_results "$phase"
  check_cleaned
done

# no cleanup: -p keep_pools=true keeps the pool and what was written; config is restored
interrupt write 1 none -p keep_pools=true
expect_stdout "pool data: kept $pool"
check_results write
checks=$((checks + 1))
objects=$(rados -p "$pool" ls 2>/dev/null | wc -l)
[ "$objects" -gt 0 ] || { failures=$((failures + 1)); echo "FAIL: keep_pools=true: the pool has $objects objects"; }
ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1

# a second SIGINT during the cleanup the first one let finish: exits at once, results.json
# is whole, the pool the run made is left behind (the second SIGINT's price)
interrupt cleanup 0.3 1
expect_faster_than 5 "$interrupted_at"
expect_stderr_line 'cephmark: second interrupt, exiting now'
checks=$((checks + 1))
if [ -e "$dir/results.json" ] && ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/results.json"; then
  failures=$((failures + 1))
  echo "FAIL: results.json is not valid JSON after a second SIGINT"
fi
ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
ceph config rm osd osd_max_backfills >/dev/null 2>&1
finish
