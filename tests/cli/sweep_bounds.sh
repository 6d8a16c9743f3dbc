# Large sweeps on the null target: a sweep above 1000 points is refused without --yes when
# stdin is not a terminal (before any phase runs) and runs with it, printing its size and,
# after the first point, an estimate; results are written incrementally (results.json stays
# small while the run goes on), a SIGKILLed run's folder still gives `cephmark report`
# every finished phase, and SIGINT in a several-thousand-point sweep exits within 15 s with
# whole results. Needs no cluster.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work" "$out_file" "$err_file"' EXIT

cat >"$work/sweep.lua" <<'LUA'
local cm = require "cephmark"
local null = require "cephmark.null"
return cm.scenario {
  name = "sweep-bounds",
  params = { a = 10, b = 10, ops = 100 },
  run = function(s, p)
    local as, bs = {}, {}
    for i = 1, p.a do as[i] = i end
    for i = 1, p.b do bs[i] = i end
    for point in s:sweep(cm.sweep { threads = as, block_size = bs }) do
      s:phase("null", function(phase)
        return null.bench { threads = point.threads, ops = p.ops, on_second = phase.on_second }
      end, { report = "none" })
    end
  end,
}
LUA

run_cli 0 help run
expect_stdout '^  --yes +run a sweep of more than 1000 points without asking$'

# above the bound, stdin not a terminal: one line naming --yes, exit 2, no phase run
run_cli 2 run "$work/sweep.lua" -p a=7 -p b=143 -o "$work/refused"
expect_stdout '^sweep: 1001 points \(block_size 143 x threads 7\)$'
expect_stderr_line "cephmark: $work/sweep.lua:10: sweep: 1001 points (block_size 143 x threads 7) is more than 1000; confirm it with \`cephmark run --yes\` (stdin is not a terminal to ask on)"
expect_stderr_lines 1
checks=$((checks + 1))
if grep -q '^\[1\]' "$out_file"; then failures=$((failures + 1)); echo "FAIL: a phase ran before the refusal"; fi
checks=$((checks + 1))
[ ! -e "$work/refused" ] || { failures=$((failures + 1)); echo "FAIL: the refused run left a results folder"; }

# on a terminal it asks; "n" refuses, "y" runs (script(1) gives the run a terminal)
if command -v script >/dev/null; then
  (sleep 1; printf 'n\n') | script -qec "'$CEPHMARK' run '$work/sweep.lua' -p a=7 -p b=143 -p ops=1 -o '$work/asked-no'" /dev/null >"$out_file" 2>&1
  last_status=$? last_command="run sweep.lua on a terminal, answered n"
  checks=$((checks + 1)); [ "$last_status" = 2 ] || { failures=$((failures + 1)); echo "FAIL: $last_command: exit $last_status"; }
  expect_stdout 'is more than 1000; run them all\? \[y/N\] '
  expect_stdout 'sweep: 1001 points \(block_size 143 x threads 7\) is more than 1000, not confirmed'
  (sleep 1; printf 'y\n') | script -qec "'$CEPHMARK' run '$work/sweep.lua' -p a=7 -p b=143 -p ops=1 -o '$work/asked-yes'" /dev/null >"$out_file" 2>&1
  last_status=$? last_command="run sweep.lua on a terminal, answered y"
  checks=$((checks + 1)); [ "$last_status" = 0 ] || { failures=$((failures + 1)); echo "FAIL: $last_command: exit $last_status"; }
  expect_stdout '^-- point 1001/1001: '
fi

# with --yes it runs, with its size and an estimate after the first point
run_cli 0 run "$work/sweep.lua" --yes -p a=7 -p b=143 -p ops=1 -o "$work/accepted"
expect_stdout '^sweep: 1001 points \(block_size 143 x threads 7\)$'
expect_stdout '^sweep: point 1 took [0-9.]+ s; about [0-9.]+ (s|min|h|days) for the remaining 1000 points$'
expect_stdout '^-- point 1001/1001: block_size=143 threads=7$'
# 1000 points and fewer need no confirmation
run_cli 0 run "$work/sweep.lua" -p a=10 -p b=100 -p ops=1 -o "$work/thousand"
expect_stdout '^-- point 1000/1000: '

# start_sweep DIR POINTS_A POINTS_B: a 5000-point sweep in the background, output in $work
start_sweep() {
  "$CEPHMARK" run "$work/sweep.lua" --yes -p a="$2" -p b="$3" -o "$1" >"$work/bg.out" 2>"$work/bg.err" </dev/null &
  pid=$!
}
# wait_for_point N SECONDS: until the sweep printed point N (false after SECONDS)
wait_for_point() {
  local deadline=$(($(date +%s) + $2))
  while ! grep -q "^-- point $1/" "$work/bg.out"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.2
  done
}

# SIGKILL after 1000 phases: results.json is the small running document (its size does not
# grow with the phases), and report and compare read every finished phase from the journal
start_sweep "$work/killed" 50 100
checks=$((checks + 1))
if wait_for_point 1001 60; then
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  pid=
  printed=$(grep -c '^  = null ' "$work/bg.out")
  size=$(stat -c %s "$work/killed/results.json")
  echo "killed after $printed phases; results.json $size bytes"
  if [ "$size" -gt 16384 ]; then
    failures=$((failures + 1)); echo "FAIL: results.json of a running sweep is $size bytes after $printed phases"
  fi
  run_cli 0 report "$work/killed" -o "$work/killed.html"
  cat >"$work/check_killed.lua" <<'LUA'
local p = ...
local results = require "cephmark.results"
local sys = require "cephmark.sys"
local doc = assert(results.read_document(p.dir .. "/results.json", p.dir))
assert(doc.status == "running" and doc.complete == false, "the running document: " .. tostring(doc.status))
local printed = tonumber(p.printed)
-- a phase's summary line is printed just before it is saved
assert(#doc.phases >= printed - 1 and #doc.phases <= printed,
  string.format("%d phases read, %d summaries printed", #doc.phases, printed))
local seconds, longest = 0, 0
for i, phase in ipairs(doc.phases) do
  assert(phase.index == i and phase.status == "ok" and phase.result.ops == 100, "phase " .. i .. " is whole")
  seconds, longest = seconds + #phase.series, math.max(longest, #phase.series)
end
assert(#doc.sweeps == 1 and #doc.sweeps[1].points == 5000, "the sweep, with its points")
-- a header, every journal phase's seconds, and at most the seconds of one phase more (a
-- kill after its rows were appended, before its journal line)
local _, rows = sys.read_file(p.dir .. "/series.csv"):gsub("\n", "")
assert(rows >= seconds + 1 and rows <= seconds + 1 + longest,
  string.format("series.csv: %d lines for %d seconds", rows, seconds))
print("killed run ok: " .. #doc.phases .. " phases")
LUA
  run_cli 0 run "$work/check_killed.lua" -p dir="$work/killed" -p printed="$printed"
  expect_stdout '^killed run ok: [0-9]+ phases$'
  phases_read=$(sed -n 's/^killed run ok: \([0-9]*\) phases$/\1/p' "$out_file")
  # s:compare{with=} takes the killed run's phases from its journal too
  cat >"$work/compare_killed.lua" <<'LUA'
local cm = require "cephmark"
local null = require "cephmark.null"
return cm.scenario {
  name = "compare-killed",
  params = { dir = cm.string("", "the killed run's folder") },
  run = function(s, p)
    s:phase("null", function(phase)
      return null.bench { threads = 1, ops = 100, on_second = phase.on_second }
    end, { report = "none" })
    local c = s:compare { with = { p.dir }, phases = { "null" }, metrics = { "ops" } }
    print("compared " .. #c.rows .. " phases")
  end,
}
LUA
  run_cli 0 run "$work/compare_killed.lua" -p dir="$work/killed" -o "$work/compared"
  expect_stdout "^compared $((phases_read + 1)) phases$"
else
  failures=$((failures + 1)); echo "FAIL: the sweep did not reach point 1001 within 60 s"
  tail -3 "$work/bg.out"
fi

# SIGINT after 2000 points: exit 130 within 15 s, the complete folder written, whole (its
# report left to `cephmark report`)
start_sweep "$work/interrupted" 50 100
checks=$((checks + 1))
if wait_for_point 2001 120; then
  start=$(date +%s.%N)
  kill -INT "$pid"
  wait "$pid"
  last_status=$? last_command="run sweep.lua (SIGINT after 2000 points)"
  pid=
  elapsed=$(awk -v now="$(date +%s.%N)" -v start="$start" 'BEGIN { printf "%.2f", now - start }')
  echo "SIGINT after $(grep -c '^  = null ' "$work/bg.out") phases: exited in ${elapsed}s"
  checks=$((checks + 1))
  [ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: SIGINT exit $last_status"; }
  checks=$((checks + 1))
  awk -v e="$elapsed" 'BEGIN { exit !(e < 15) }' || { failures=$((failures + 1)); echo "FAIL: SIGINT took ${elapsed}s"; }
  checks=$((checks + 1))
  grep -q "^report: not written after an interrupt with [0-9]* phases; write it with \`cephmark report $work/interrupted\`$" "$work/bg.out" ||
    { failures=$((failures + 1)); echo "FAIL: no line saying the report was not written"; tail -3 "$work/bg.out"; }
  cat >"$work/check_interrupted.lua" <<'LUA'
local p = ...
local json = require "cephmark.json"
local sys = require "cephmark.sys"
local doc = json.decode(assert(sys.read_file(p.dir .. "/results.json")))
assert(doc.status == "interrupted" and doc.complete == false, "status " .. tostring(doc.status))
assert(doc.journal == nil and #doc.phases >= 2000, #doc.phases .. " phases in the complete document")
assert(not sys.stat(p.dir .. "/journal.jsonl"), "the journal is gone once the folder is complete")
for _, file in ipairs { "results.yaml", "phases.csv", "series.csv", "percentiles.csv", "params.csv" } do
  assert(sys.stat(p.dir .. "/" .. file), file)
end
-- the report of so large a run is left to `cephmark report`, to keep the interrupt short
assert(not sys.stat(p.dir .. "/report.html"), "no report.html after an interrupt with over 1000 phases")
print("interrupted run ok: " .. #doc.phases .. " phases")
LUA
  run_cli 0 run "$work/check_interrupted.lua" -p dir="$work/interrupted"
  expect_stdout '^interrupted run ok: [0-9]+ phases$'
else
  failures=$((failures + 1)); echo "FAIL: the sweep did not reach point 2001 within 120 s"
  tail -3 "$work/bg.out"
fi
finish
