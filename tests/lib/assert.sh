# Shell assertions for cephmark's CLI and integration tests. Source it, call `run_cli`
# with the expected exit code, then check its output with the expect_* helpers, and end
# with `finish`. Every failed check prints what was expected and what came.

: "${CEPHMARK:?CEPHMARK must point at the cephmark binary}"
failures=0
checks=0
out_file=$(mktemp)
err_file=$(mktemp)
trap 'rm -f "$out_file" "$err_file"' EXIT

# run_cli EXPECTED_EXIT ARGS... : runs cephmark, records stdout/stderr, checks the exit code
run_cli() {
  local expected=$1
  shift
  last_command="cephmark $*"
  "$CEPHMARK" "$@" >"$out_file" 2>"$err_file" </dev/null
  last_status=$?
  checks=$((checks + 1))
  if [ "$last_status" != "$expected" ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' exited $last_status, expected $expected"
    sed 's/^/  stdout: /' "$out_file" | head -20
    sed 's/^/  stderr: /' "$err_file" | head -20
  fi
}

# expect_stderr_line LINE : stderr has exactly this line
expect_stderr_line() {
  checks=$((checks + 1))
  if ! grep -qxF -- "$1" "$err_file"; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command': stderr lacks the line: $1"
    sed 's/^/  stderr: /' "$err_file" | head -20
  fi
}

# expect_stderr PATTERN : stderr matches an extended regular expression
expect_stderr() {
  checks=$((checks + 1))
  if ! grep -qE -- "$1" "$err_file"; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command': stderr does not match: $1"
    sed 's/^/  stderr: /' "$err_file" | head -20
  fi
}

# expect_stdout PATTERN : stdout matches an extended regular expression
expect_stdout() {
  checks=$((checks + 1))
  if ! grep -qE -- "$1" "$out_file"; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command': stdout does not match: $1"
    sed 's/^/  stdout: /' "$out_file" | head -20
  fi
}

# expect_stderr_lines N : stderr has exactly N lines (a "one-line message" check)
expect_stderr_lines() {
  local n
  n=$(wc -l <"$err_file")
  checks=$((checks + 1))
  if [ "$n" != "$1" ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command': stderr has $n lines, expected $1"
    sed 's/^/  stderr: /' "$err_file" | head -20
  fi
}

# expect_faster_than SECONDS START : the time since START (from `date +%s.%N`) is below
expect_faster_than() {
  local elapsed
  elapsed=$(awk -v now="$(date +%s.%N)" -v start="$2" 'BEGIN { printf "%.2f", now - start }')
  checks=$((checks + 1))
  if ! awk -v e="$elapsed" -v limit="$1" 'BEGIN { exit !(e < limit) }'; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' took ${elapsed}s, limit ${1}s"
  fi
}

# fail MESSAGE...: counts a failed check and says what failed
fail() {
  failures=$((failures + 1))
  echo "FAIL: $*"
}

# check COMMAND...: runs COMMAND as one check; its status is the caller's to act on, as in
# `check [ "$status" = 0 ] || fail "..."` (tests whose checks take a description first
# define their own check after sourcing this file)
check() {
  checks=$((checks + 1))
  "$@"
}

# wait_until SECONDS INTERVAL COMMAND...: runs COMMAND every INTERVAL seconds until it
# succeeds; returns 1 once SECONDS have passed without it (the caller says what failed)
wait_until() {
  local deadline=$((SECONDS + $1)) interval=$2
  shift 2
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep "$interval"
  done
}

# poll SECONDS COMMAND...: a check that COMMAND succeeds within SECONDS (tried every half
# second); fails it, and returns 1, when it does not
poll() {
  local limit=$1
  shift
  checks=$((checks + 1))
  wait_until "$limit" 0.5 "$@" || {
    fail "not true within $limit s: $*"
    return 1
  }
}

finish() {
  echo "$(basename "$0"): $checks checks, $failures failed"
  [ "$failures" = 0 ]
}
