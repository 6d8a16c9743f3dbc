# CLI transcript tests for `cephmark run`, help and version: exact messages and exit
# codes for bad input, script errors and interrupts. Needs no cluster.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

run_cli 0 --version
expect_stdout '^cephmark [0-9]+\.[0-9]+\.[0-9]+ \(Lua 5\.4\.[0-9]+, librados [0-9]+\.[0-9]+\.[0-9]+\)$'
run_cli 0 --help
expect_stdout '^  run SCRIPT \[options\]'
run_cli 0 help run
expect_stdout '^usage: cephmark run SCRIPT'
expect_stdout '^  --wait-clean DURATION +before each phase on a cluster, wait until its PGs are$'
expect_stdout '^  --quiesce +set noscrub and nodeep-scrub for the run, restored at the$'
run_cli 2 frobnicate
expect_stderr_line "cephmark: unknown command 'frobnicate' (see \`cephmark --help\`)"

run_cli 2 run
expect_stderr_line 'cephmark: run needs a SCRIPT (see `cephmark help run`)'
run_cli 2 run "$work/missing.lua"
expect_stderr_line "cephmark: cannot open script '$work/missing.lua': no such file"
expect_stderr_lines 1
run_cli 2 run "$work" 
expect_stderr_line "cephmark: cannot open script '$work': not a regular file"
run_cli 2 run x.lua -p threads
expect_stderr_line "cephmark: -p expects KEY=VALUE, got 'threads' (see \`cephmark help run\`)"
run_cli 2 run x.lua -p =4
expect_stderr_line "cephmark: -p expects KEY=VALUE, got '=4' (see \`cephmark help run\`)"
run_cli 2 run x.lua --bogus
expect_stderr_line "cephmark: unknown option '--bogus' (see \`cephmark help run\`)"
run_cli 2 run x.lua -c
expect_stderr_line "cephmark: option -c needs a value (see \`cephmark help run\`)"
run_cli 2 run x.lua --timeout 0
expect_stderr_line "cephmark: --timeout expects a positive number of seconds, got '0' (see \`cephmark help run\`)"

printf 'local x = = 1\n' >"$work/syntax.lua"
run_cli 2 run "$work/syntax.lua"
expect_stderr_line "cephmark: $work/syntax.lua:1: unexpected symbol near '='"
expect_stderr_lines 1

printf 'local function inner()\n  error("boom")\nend\ninner()\n' >"$work/error.lua"
run_cli 2 run "$work/error.lua"
expect_stderr_line "cephmark: $work/error.lua:2: boom"
expect_stderr '^stack traceback:$'
expect_stderr "$work/error.lua:4: in "

printf 'return { failed_ops = 3 }\n' >"$work/failed.lua"
run_cli 1 run "$work/failed.lua"
printf 'local p = ...\nprint(p.size, p.name)\n' >"$work/params.lua"
run_cli 0 run "$work/params.lua" -p size=4K --param name=a=b
expect_stdout $'^4K\ta=b$'

run_cli 2 run "$work/params.lua" -c "$work/nope.conf"
printf 'assert(require("cephmark.rados").connect())\n' >"$work/connect.lua"
run_cli 2 run "$work/connect.lua" -c "$work/nope.conf"
expect_stderr_line "cephmark: the cluster configuration $work/nope.conf (from -c) does not exist"

# stop_process PID [SIGNAL]: sends SIGNAL once and waits for the process; one that ignores
# it (or does not end) is killed after 20 s, so that the test fails instead of hanging.
# Returns its status.
stop_process() {
  local pid=$1 waited=0
  [ -n "${2:-}" ] && kill -"$2" "$pid" 2>/dev/null
  while [ -e "/proc/$pid" ] && [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" != Z ] &&
    [ $waited -lt 200 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid"
}

# SIGINT: a busy Lua loop and a sleep both stop at once with exit 130. The signal is sent
# once, to cephmark alone (timeout(1) would also signal the process group: a second SIGINT).
interrupt_after() {
  "$CEPHMARK" run "$2" >"$out_file" 2>"$err_file" &
  local pid=$!
  sleep "$1"
  stop_process "$pid" INT
}
printf 'while true do end\n' >"$work/loop.lua"
start=$(date +%s.%N)
interrupt_after 1 "$work/loop.lua"
last_status=$? last_command="run loop.lua (SIGINT)"
checks=$((checks + 1)); [ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: SIGINT exit $last_status"; }
expect_stderr_line 'cephmark: interrupted'
expect_faster_than 3 "$start"
printf 'require("cephmark.sys").sleep(60)\n' >"$work/sleep.lua"
start=$(date +%s.%N)
interrupt_after 1 "$work/sleep.lua"
last_status=$? last_command="run sleep.lua (SIGINT)"
checks=$((checks + 1)); [ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: SIGINT exit $last_status"; }
expect_stderr_line 'cephmark: interrupted'
expect_faster_than 3 "$start"

# SIGTERM and SIGHUP stop like SIGINT, with 128 + their number
start=$(date +%s.%N)
"$CEPHMARK" run "$work/sleep.lua" >"$out_file" 2>"$err_file" &
pid=$!
sleep 1
stop_process "$pid" TERM
last_status=$? last_command="run sleep.lua (SIGTERM)"
checks=$((checks + 1)); [ "$last_status" = 143 ] || { failures=$((failures + 1)); echo "FAIL: SIGTERM exit $last_status, expected 143"; }
expect_stderr_line 'cephmark: interrupted (SIGTERM)'
expect_faster_than 3 "$start"
"$CEPHMARK" run "$work/loop.lua" >"$out_file" 2>"$err_file" &
pid=$!
sleep 1
stop_process "$pid" HUP
last_status=$? last_command="run loop.lua (SIGHUP)"
checks=$((checks + 1)); [ "$last_status" = 129 ] || { failures=$((failures + 1)); echo "FAIL: SIGHUP exit $last_status, expected 129"; }
expect_stderr_line 'cephmark: interrupted (SIGHUP)'

# A busy loop in a coroutine (coroutine.wrap) of a plain script: the watchdog hook is on
# every thread, not only the main one
printf 'coroutine.wrap(function() while true do end end)()\n' >"$work/wrap.lua"
start=$(date +%s.%N)
interrupt_after 1 "$work/wrap.lua"
last_status=$? last_command="run wrap.lua (SIGINT)"
checks=$((checks + 1)); [ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: SIGINT in a coroutine: exit $last_status"; }
expect_stderr_line 'cephmark: interrupted'
expect_faster_than 15 "$start"

# Scenarios on the null target: a stop signal reaches a scripted worker that never yields,
# a busy loop in coroutine.wrap and one in an on_second hook; each run ends with its exit
# code within 15 s, its results written (status interrupted, the signal named) and the
# spinning phase recorded as interrupted.
cat >"$work/spin.lua" <<'LUA'
local cm = require "cephmark"
local null = require "cephmark.null"
local function spinning(where)
  io.stdout:write("spinning in ", where, "\n")
  io.stdout:flush()
end
return cm.scenario {
  name = "spin",
  params = { case = cm.string("worker", "where the run spins"), seconds = 60 },
  hooks = {
    on_second = function(s, phase, second)
      if s.p.case == "on_second" and phase.name == "spin" then
        spinning("on_second")
        while true do end
      end
      if s.p.case == "exit_hook" and phase.name == "spin" then os.exit(5) end
    end,
  },
  run = function(s, p)
    s:phase("warm", null, { threads = 2, ops = 20, delay = "1ms" })
    if p.case == "worker" then
      s:workers { name = "spin", n = 2, seconds = p.seconds, fn = function(w)
        if w.id == 1 then spinning("worker") end
        while true do end
      end }
    elseif p.case == "wrap" then
      s:phase("spin", function()
        coroutine.wrap(function()
          spinning("wrap")
          local x = 0
          while true do x = x + 1 end
        end)()
      end)
    elseif p.case == "on_second" or p.case == "exit_hook" then
      s:phase("spin", null, { threads = 2, seconds = p.seconds, delay = "1ms" })
    elseif p.case == "exit_worker" then
      s:workers { name = "spin", n = 2, seconds = p.seconds, fn = function(w)
        w:op()
        if w.id == 2 then os.exit(4) end
        while true do w:op() end
      end }
    elseif p.case == "exit" then
      s:phase("spin", function() pcall(os.exit, 3) end)
      s:phase("never", null, { threads = 1, ops = 1 })
    end
  end,
}
LUA

# spin_and_signal CASE SIGNAL EXPECTED_EXIT: runs the scenario, waits for its spinning line,
# sends SIGNAL once, and checks the exit code and that it came within 15 s
spin_and_signal() {
  local case=$1 signal=$2 expected=$3 waited=0
  dir="$work/spin-$case-$signal"
  last_command="run spin.lua -p case=$case (SIG$signal)"
  "$CEPHMARK" run "$work/spin.lua" -p case="$case" -o "$dir" >"$out_file" 2>"$err_file" &
  local pid=$!
  while ! grep -q "^spinning in $case" "$out_file" && [ $waited -lt 300 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  sleep 0.3
  local sent
  sent=$(date +%s.%N)
  stop_process "$pid" "$signal"
  last_status=$?
  checks=$((checks + 1))
  if [ "$last_status" != "$expected" ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' exited $last_status, expected $expected"
    sed 's/^/  stdout: /' "$out_file" | tail -5
    sed 's/^/  stderr: /' "$err_file" | tail -5
  fi
  expect_faster_than 15 "$sent"
}

# check_spin_results STATUS SIGNAL LAST_PHASE_STATUS: results.json is whole and says so
check_spin_results() {
  checks=$((checks + 1))
  if ! python3 - "$dir/results.json" "$@" <<'PY'; then
import json, sys
path, status, signal, phase_status = sys.argv[1:5]
try:
    doc = json.load(open(path))
except Exception as e:
    print("FAIL: %s: %s" % (path, e))
    sys.exit(1)
bad = []
if doc.get("status") != status: bad.append("status %r, expected %r" % (doc.get("status"), status))
if doc.get("complete") is not False: bad.append("complete %r" % doc.get("complete"))
if (doc.get("signal") or "-") != signal: bad.append("signal %r, expected %r" % (doc.get("signal"), signal))
last = doc["phases"][-1] if doc.get("phases") else {}
if last.get("name") != "spin" or last.get("status") != phase_status:
    bad.append("last phase %r %r, expected spin %s" % (last.get("name"), last.get("status"), phase_status))
for b in bad: print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
    failures=$((failures + 1))
    echo "FAIL: results of '$last_command' (above)"
  fi
}

spin_and_signal worker INT 130
expect_stderr_line 'cephmark: interrupted'
check_spin_results interrupted SIGINT interrupted
spin_and_signal worker TERM 143
expect_stderr_line 'cephmark: interrupted (SIGTERM)'
check_spin_results interrupted SIGTERM interrupted
spin_and_signal wrap TERM 143
check_spin_results interrupted SIGTERM interrupted
spin_and_signal wrap INT 130
check_spin_results interrupted SIGINT interrupted
spin_and_signal on_second INT 130
check_spin_results interrupted SIGINT interrupted
spin_and_signal on_second HUP 129
check_spin_results interrupted SIGHUP interrupted

# a worker that never yields is also stopped by its phase's own time bound, and says so
start=$(date +%s.%N)
dir="$work/spin-bound"
last_command="run spin.lua -p case=worker -p seconds=1"
"$CEPHMARK" run "$work/spin.lua" -p case=worker -p seconds=1 -o "$dir" >"$out_file" 2>"$err_file" &
stop_process $!
last_status=$?
checks=$((checks + 1)); [ "$last_status" = 0 ] || { failures=$((failures + 1)); echo "FAIL: '$last_command' exited $last_status, expected 0"; }
expect_faster_than 15 "$start"
expect_stdout '^  = spin: 0 ops in .*\([12] of 2 workers ran past the phase.s end without yielding and were stopped there \(worker [12] first\)\)$'
checks=$((checks + 1))
if ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["phases"][-1]; sys.exit(not (d["status"] == "ok" and p["result"]["stopped_at_deadline"] == 2))' "$dir/results.json"; then
  failures=$((failures + 1)); echo "FAIL: the bounded never-yielding workers: results.json does not record stopped_at_deadline = 2"
fi

# os.exit(3) in a run (even inside pcall) ends the run through its cleanup: exit 3, results
# whole with status exited, no later phase
dir="$work/spin-exit"
run_cli 3 run "$work/spin.lua" -p case=exit -o "$dir"
checks=$((checks + 1))
if ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["status"] == "exited" and d["exit_code"] == 3 and d["phases"][-1]["name"] == "spin"))' "$dir/results.json"; then
  failures=$((failures + 1)); echo "FAIL: os.exit(3): results.json is not whole with status exited"
fi
# ... in an on_second hook and in a scripted worker alike
for case in exit_hook:5 exit_worker:4; do
  dir="$work/spin-${case%:*}"
  start=$(date +%s.%N)
  last_command="run spin.lua -p case=${case%:*}"
  "$CEPHMARK" run "$work/spin.lua" -p case="${case%:*}" -o "$dir" >"$out_file" 2>"$err_file" &
  stop_process $!
  last_status=$?
  checks=$((checks + 1)); [ "$last_status" = "${case#*:}" ] || { failures=$((failures + 1)); echo "FAIL: '$last_command' exited $last_status, expected ${case#*:}"; }
  expect_faster_than 15 "$start"
  checks=$((checks + 1))
  if ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["status"] == "exited" and d["exit_code"] == int(sys.argv[2]) and d["phases"][-1]["status"] == "exited"))' "$dir/results.json" "${case#*:}"; then
    failures=$((failures + 1)); echo "FAIL: '$last_command': results.json is not whole with status exited"
  fi
done
# in a plain script: the code, and what was written is flushed
printf 'io.stdout:write("unflushed")\nos.exit(5)\n' >"$work/exit.lua"
run_cli 5 run "$work/exit.lua"
expect_stdout '^unflushed$'
expect_stderr_lines 0

# output into a closed pipe: SIGPIPE is ignored, the run goes on, cleans up and writes its
# results, and exits with its own code
cat >"$work/pipe.lua" <<'LUA'
local cm = require "cephmark"
local null = require "cephmark.null"
return cm.scenario {
  name = "pipe",
  run = function(s)
    for i = 1, 3 do s:phase("write", null, { threads = 2, seconds = 1.2, delay = "1ms", label = "w" .. i }) end
  end,
}
LUA
dir="$work/pipe"
last_command="run pipe.lua | head -1"
"$CEPHMARK" run "$work/pipe.lua" -o "$dir" 2>"$err_file" | head -1 >"$out_file"
last_status=${PIPESTATUS[0]}
checks=$((checks + 1)); [ "$last_status" = 0 ] || { failures=$((failures + 1)); echo "FAIL: '$last_command' exited $last_status, expected 0"; }
checks=$((checks + 1))
if ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["status"] == "ok" and d["complete"] and len(d["phases"]) == 3))' "$dir/results.json"; then
  failures=$((failures + 1)); echo "FAIL: '$last_command': results.json is not complete"
fi

# every command stops on these signals with their exit code, also one whose loop returns
# on the signal without raising (netserver)
for signal in INT TERM; do
  "$CEPHMARK" netserver --port 0 >"$out_file" 2>"$err_file" &
  pid=$!
  sleep 1
  stop_process "$pid" "$signal"
  last_status=$? last_command="netserver (SIG$signal)"
  expected=130
  [ "$signal" = TERM ] && expected=143
  checks=$((checks + 1)); [ "$last_status" = "$expected" ] || { failures=$((failures + 1)); echo "FAIL: '$last_command' exited $last_status, expected $expected"; }
done

# a second signal of another kind exits at once, here while a phase that ignores the
# interrupt (as a cleanup does) runs on
printf 'require("cephmark.null").bench { threads = 1, seconds = 30, delay = 0.001, ignore_interrupt = true }\n' >"$work/ignore.lua"
"$CEPHMARK" run "$work/ignore.lua" >"$out_file" 2>"$err_file" &
pid=$!
sleep 1
kill -TERM "$pid"
sleep 0.5
start=$(date +%s.%N)
stop_process "$pid" INT
last_status=$? last_command="run ignore.lua (SIGTERM, then SIGINT)"
checks=$((checks + 1)); [ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: a second signal: exit $last_status, expected 130"; }
expect_stderr_line 'cephmark: second interrupt, exiting now'
expect_faster_than 3 "$start"

finish
