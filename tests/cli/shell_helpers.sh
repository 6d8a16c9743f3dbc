#!/bin/bash
# The shared shell helpers of the integration tests (tests/lib/assert.sh, results.sh) fail
# a test where they must: fail counts and says FAIL; check counts and passes the status
# on; wait_until returns 1 after its bound and 0 as soon as the command succeeds; poll
# fails its check with "not true within N s"; check_results fails on a false expression,
# on one that raises, and on a missing results.json, prints the test's dump only then, and
# passes a true document, with the test's own names; results_python prints its false
# checks and fails. Each case runs in a subshell with its own counters, and this test
# checks what it printed and counted. Needs no cluster.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/results.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

# case_output NAME COMMANDS: runs COMMANDS in a subshell with zeroed counters and
# records what it printed, then "checks=C failures=F" as its last line, in $work/NAME
case_output() {
  (
    checks=0 failures=0
    eval "$2"
    echo "checks=$checks failures=$failures"
  ) >"$work/$1" 2>&1
}

# expect_case NAME LINE: the case printed exactly this line
expect_case() {
  checks=$((checks + 1))
  if ! grep -qxF -- "$2" "$work/$1"; then
    failures=$((failures + 1))
    echo "FAIL: case $1 lacks the line: $2"
    sed 's/^/  /' "$work/$1"
  fi
}

# expect_case_lacks NAME PATTERN: the case printed no line matching PATTERN
expect_case_lacks() {
  checks=$((checks + 1))
  if grep -qE -- "$2" "$work/$1"; then
    failures=$((failures + 1))
    echo "FAIL: case $1 has a line matching: $2"
    sed 's/^/  /' "$work/$1"
  fi
}

case_output fail 'fail "the thing broke: $((1 + 1))"'
expect_case fail "FAIL: the thing broke: 2"
expect_case fail "checks=0 failures=1"

case_output check_false 'check false || echo "status passed on"'
expect_case check_false "status passed on"
expect_case check_false "checks=1 failures=0"
case_output check_true 'check [ 1 = 1 ] && echo "true is true"'
expect_case check_true "true is true"

case_output wait_bound 'wait_until 1 0.1 false; echo "status $?"'
expect_case wait_bound "status 1"
expect_case wait_bound "checks=0 failures=0"
touch "$work/later"
case_output wait_met 'wait_until 5 0.1 test -e "$work/later"; echo "status $?"'
expect_case wait_met "status 0"

case_output poll_false 'poll 1 test -e "$work/never"; echo "status $?"'
expect_case poll_false "FAIL: not true within 1 s: test -e $work/never"
expect_case poll_false "status 1"
expect_case poll_false "checks=1 failures=1"
case_output poll_true 'poll 5 test -e "$work/later"; echo "status $?"'
expect_case poll_true "status 0"
expect_case poll_true "checks=1 failures=0"

mkdir "$work/run"
cat >"$work/run/results.json" <<'EOF'
{"status": "ok", "phases": [{"index": 1, "name": "write", "result": {"ops": 10}},
                            {"index": 2, "name": "seq", "result": {"ops": 0}}]}
EOF
dump='
print("  dump:", sorted(ph))'
case_output results_true "results_dump='$dump'; check_results '$work/run' 'd[\"status\"] == \"ok\"' 'ph[\"write\"][\"result\"][\"ops\"] == 10'"
expect_case results_true "checks=1 failures=0"
expect_case_lacks results_true "dump|FAIL"

case_output results_false "results_dump='$dump'; check_results '$work/run' 'd[\"status\"] == \"ok\"' 'ph[\"seq\"][\"result\"][\"ops\"] > 0'"
expect_case results_false '  not true: ph["seq"]["result"]["ops"] > 0'
expect_case results_false "  dump: ['seq', 'write']"
expect_case results_false "FAIL: $work/run/results.json"
expect_case results_false "checks=1 failures=1"
expect_case_lacks results_false 'not true: d\["status"\]'

case_output results_raises "check_results '$work/run' 'ph[\"rand\"][\"result\"][\"ops\"] > 0'"
expect_case results_raises "  not true: ph[\"rand\"][\"result\"][\"ops\"] > 0 (KeyError('rand'))"
expect_case results_raises "FAIL: $work/run/results.json"
expect_case results_raises "checks=1 failures=1"

# a test's own names (as test_prometheus.sh names its write phase `w`)
case_output results_names "results_names='w = ph[\"write\"]'; check_results '$work/run' 'w[\"result\"][\"ops\"] == 10'"
expect_case results_names "checks=1 failures=0"

case_output results_missing "check_results '$work/none' 'True'"
expect_case results_missing "FAIL: $work/none/results.json"
expect_case results_missing "checks=1 failures=1"

# results_python: its checks' messages, and status 1 when one is false or the Python raises
cat >"$work/false.py" <<'PY'
check(phases[1]["result"]["ops"] == 10, "first phase")
check(phases[2]["result"]["ops"] > 0, f"phase 2: {phases[2]['result']['ops']} ops")
print("after the checks")
PY
case_output python_false 'results_python "$work/run/results.json" <"$work/false.py" || fail "python checks"'
expect_case python_false "  phase 2: 0 ops"
expect_case python_false "after the checks"
expect_case python_false "FAIL: python checks"
expect_case python_false "checks=0 failures=1"
expect_case_lacks python_false "first phase"
echo 'check(doc["status"] == "ok", "status")' >"$work/true.py"
case_output python_true 'results_python "$work/run/results.json" <"$work/true.py" || fail "python checks"'
expect_case python_true "checks=0 failures=0"
echo 'check(phases[3], "no third phase")' >"$work/raises.py"
case_output python_raises 'results_python "$work/run/results.json" <"$work/raises.py" 2>&1 || fail "python checks"'
expect_case python_raises "FAIL: python checks"

# finish: exit 1 after a failure, 0 without
case_output finish_failed 'fail x; finish; echo "status $?"'
expect_case finish_failed "status 1"
case_output finish_clean 'finish; echo "status $?"'
expect_case finish_clean "status 0"

finish
