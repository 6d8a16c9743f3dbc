# Stop signals other than SIGINT, os.exit and a closed stdout in a scenario against the
# cluster. SIGTERM (timeout, kill, systemd) and SIGHUP (a dropped ssh session) in the
# middle of a write phase stop the run as SIGINT does: exit 143 / 129, results.json whole,
# marked interrupted with the signal named, the pool the run created deleted, the option it
# set back to the operator's value (the whole `ceph config dump` as before); in a reused
# pool, its own objects unchanged (listing and content) and no benchmark object left.
# os.exit(3) in the run function goes through the same cleanup and exits 3. With stdout
# into a closed pipe (`| head -2`) the run goes on silently, cleans up and exits 0.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
pool=cephmark-signals-data
cleanup() {
  ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
  ceph config rm osd osd_max_backfills >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

cat >"$work/signals.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "signals",
  params = {
    reuse = cm.bool(false, "run in the operator's existing pool"),
    action = cm.string("long", "long: a 60 s write; exit: os.exit(3) after a short write; short: a short write"),
  },
  pools = function(p) return { data = { type = "replicated", size = 3, reuse = p.reuse } } end,
  run = function(s, p)
    s:set_config("osd", "osd_max_backfills", 7)
    local pool = s:pool("data")
    s:phase("write", pool, { seconds = p.action == "long" and "60s" or "2s", threads = 8, block_size = "4K" })
    if p.action == "exit" then os.exit(3) end
    -- no cleanup phase: the end of the run removes what it wrote
  end,
}
LUA

# the operator's own setting of the option the scenario changes
ceph config set osd osd_max_backfills 2 >/dev/null
config_dump() { ceph config dump 2>/dev/null | md5sum; }
config_before=$(config_dump)

config_intact() {
  checks=$((checks + 1))
  if [ "$(config_dump)" != "$config_before" ]; then
    failures=$((failures + 1))
    echo "FAIL: $1: ceph config dump differs from before the run"
    ceph config dump 2>/dev/null | sed 's/^/  now: /'
  fi
}

pool_gone() {
  checks=$((checks + 1))
  if ceph osd pool ls 2>/dev/null | grep -qxF "$pool"; then
    failures=$((failures + 1))
    echo "FAIL: $1: the pool $pool the run created is still there"
    ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
  fi
}

make_operator_pool() {
  ceph osd pool create "$pool" 8 >/dev/null 2>&1
  ceph osd pool application enable "$pool" operator >/dev/null 2>&1
  for i in 1 2 3 4 5; do
    head -c 10000 /dev/urandom >"$work/own-$i"
    rados -p "$pool" put "own-$i" "$work/own-$i"
  done
  own_sums=$(for i in 1 2 3 4 5; do rados -p "$pool" get "own-$i" - | md5sum; done)
}

operator_pool_intact() {
  local listed sums
  listed=$(rados -p "$pool" ls 2>/dev/null | sort | tr '\n' ' ')
  checks=$((checks + 1))
  [ "$listed" = "own-1 own-2 own-3 own-4 own-5 " ] ||
    { failures=$((failures + 1)); echo "FAIL: $1: the pool holds $(echo "$listed" | wc -w) objects (${listed:0:100}...), expected only its own 5"; }
  sums=$(for i in 1 2 3 4 5; do rados -p "$pool" get "own-$i" - 2>/dev/null | md5sum; done)
  checks=$((checks + 1))
  [ "$sums" = "$own_sums" ] || { failures=$((failures + 1)); echo "FAIL: $1: the operator's objects changed"; }
}

# check_results STATUS SIGNAL [EXIT_CODE]: results.json is whole and says how the run ended
check_results() {
  checks=$((checks + 1))
  if ! python3 - "$dir/results.json" "$@" <<'PY'; then
import json, sys
path, status, signal = sys.argv[1:4]
exit_code = int(sys.argv[4]) if len(sys.argv) > 4 else None
try:
    doc = json.load(open(path))
except Exception as e:
    print("FAIL: %s: %s" % (path, e))
    sys.exit(1)
bad = []
if doc.get("status") != status: bad.append("status %r, expected %r" % (doc.get("status"), status))
if doc.get("complete") is not False: bad.append("complete %r" % doc.get("complete"))
if (doc.get("signal") or "-") != signal: bad.append("signal %r, expected %r" % (doc.get("signal"), signal))
if exit_code is not None and doc.get("exit_code") != exit_code:
    bad.append("exit_code %r, expected %r" % (doc.get("exit_code"), exit_code))
write = [p for p in doc.get("phases", []) if p["name"] == "write"]
if not write: bad.append("no write phase recorded")
elif status == "interrupted":
    r = write[-1].get("result") or {}
    if write[-1]["status"] != "interrupted" or not r.get("interrupted") or not r.get("ops"):
        bad.append("the write phase is %r with ops %r, expected interrupted with a partial result" % (write[-1]["status"], r.get("ops")))
for b in bad: print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
    failures=$((failures + 1))
    echo "FAIL: results of '$last_command' (above)"
  fi
}

# signal_in_write SIGNAL EXPECTED_EXIT [ARGS...]: runs the scenario, waits for the write
# phase's header and two seconds of writing, sends SIGNAL once, checks the exit code and
# that it came within 15 s (a run that ignores it is killed after 30 s)
signal_in_write() {
  local signal=$1 expected=$2 waited=0
  shift 2
  dir="$work/results-$signal-$*"
  dir=${dir// /_}
  last_command="run signals.lua $* (SIG$signal in write)"
  "$CEPHMARK" run "$work/signals.lua" -o "$dir" "$@" >"$out_file" 2>"$err_file" &
  local pid=$!
  while ! grep -qE '^\[1\] write' "$out_file" && [ $waited -lt 600 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  sleep 2
  kill -"$signal" "$pid"
  local sent
  sent=$(date +%s.%N)
  waited=0
  while [ -e "/proc/$pid" ] && [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" != Z ] &&
    [ $waited -lt 300 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid"
  last_status=$?
  checks=$((checks + 1))
  if [ "$last_status" != "$expected" ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' exited $last_status, expected $expected"
    sed 's/^/  stdout: /' "$out_file" | tail -8
    sed 's/^/  stderr: /' "$err_file" | tail -8
  fi
  expect_faster_than 15 "$sent"
}

for signal in TERM HUP; do
  expected=143
  [ "$signal" = HUP ] && expected=129
  # a pool the run created
  signal_in_write "$signal" "$expected"
  expect_stderr_line "cephmark: interrupted (SIG$signal)"
  expect_stdout "^pool data: deleted $pool$"
  check_results interrupted "SIG$signal"
  pool_gone "SIG$signal"
  config_intact "SIG$signal"

  # the operator's pool, reused
  make_operator_pool
  signal_in_write "$signal" "$expected" -p reuse=true
  check_results interrupted "SIG$signal"
  operator_pool_intact "SIG$signal in a reused pool"
  config_intact "SIG$signal in a reused pool"
  ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
done

# os.exit(3) after the write: the run's cleanup, then exit 3
dir="$work/results-exit"
run_cli 3 run "$work/signals.lua" -o "$dir" -p action=exit
expect_stdout "^pool data: deleted $pool$"
check_results exited - 3
pool_gone "os.exit(3)"
config_intact "os.exit(3)"

# stdout into a pipe that closes after two lines: the run goes on, cleans up, exits 0
dir="$work/results-pipe"
last_command="run signals.lua -p action=short | head -2"
"$CEPHMARK" run "$work/signals.lua" -o "$dir" -p action=short 2>"$err_file" | head -2 >"$out_file"
last_status=${PIPESTATUS[0]}
checks=$((checks + 1))
[ "$last_status" = 0 ] || { failures=$((failures + 1)); echo "FAIL: '$last_command' exited $last_status, expected 0"; sed 's/^/  stderr: /' "$err_file"; }
checks=$((checks + 1))
if ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["status"] == "ok" and d["complete"]))' "$dir/results.json"; then
  failures=$((failures + 1)); echo "FAIL: '$last_command': results.json is not complete"
fi
pool_gone "| head -2"
config_intact "| head -2"

finish
