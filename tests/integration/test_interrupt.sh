# SIGINT in the middle of rados-bench phases: in-flight ops drain, the summary of what ran
# is printed, the exit code is 130, and a write run's objects are still cleaned up. SIGTERM
# does the same with exit code 143, and output into a closed pipe (`| head -3`) stops
# nothing: the write runs to its end, removes its objects and exits 0.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
pool=cephmark-test-interrupt
ceph osd pool create "$pool" 8 >/dev/null 2>&1

# interrupt_after SECONDS ARGS...: runs cephmark in the background, sends one SIGINT (or
# $signal, exit code $expected)
signal=INT expected=130
interrupt_after() {
  local delay=$1
  shift
  last_command="cephmark $* (SIG$signal after ${delay}s)"
  "$CEPHMARK" "$@" >"$out_file" 2>"$err_file" &
  local pid=$!
  sleep "$delay"
  kill -"$signal" "$pid"
  wait "$pid"
  last_status=$?
  checks=$((checks + 1))
  if [ "$last_status" != "$expected" ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' exited $last_status, expected $expected"
    sed 's/^/  stderr: /' "$err_file" | head
  fi
}

objects_left() {
  local objects
  objects=$(rados -p "$pool" ls 2>/dev/null | wc -l)
  checks=$((checks + 1))
  [ "$objects" = 0 ] || { failures=$((failures + 1)); echo "FAIL: $objects objects left after $1"; }
}

start=$(date +%s.%N)
interrupt_after 2 rados-bench -p "$pool" 60 write -b 4K -t 16
expect_faster_than 15 "$start"
expect_stdout '^Total writes made: +[0-9]+$'
expect_stdout '^Removed [0-9]+ objects$'
objects_left "an interrupted write"

# SIGTERM (timeout, kill, systemd) stops a write the same way
signal=TERM expected=143
results=$(mktemp -d)
start=$(date +%s.%N)
interrupt_after 2 rados-bench -p "$pool" 60 write -b 4K -t 16 -o "$results"
expect_faster_than 15 "$start"
expect_stdout '^Total writes made: +[0-9]+$'
expect_stdout '^Removed [0-9]+ objects$'
objects_left "a write stopped by SIGTERM"
checks=$((checks + 1))
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["signal"] == "SIGTERM" and d["result"]["interrupted"]))' "$results/results.json" ||
  { failures=$((failures + 1)); echo "FAIL: $last_command: results.json does not say it was interrupted by SIGTERM"; }
rm -rf "$results"
signal=INT expected=130

# stdout into a pipe that closes after three lines: SIGPIPE is ignored, the write goes on
# to its end, removes its objects and exits 0
last_command="rados-bench -p $pool 3 write -b 4K -t 16 | head -3"
"$CEPHMARK" rados-bench -p "$pool" 3 write -b 4K -t 16 2>"$err_file" | head -3 >"$out_file"
last_status=${PIPESTATUS[0]}
checks=$((checks + 1))
[ "$last_status" = 0 ] || { failures=$((failures + 1)); echo "FAIL: '$last_command' exited $last_status, expected 0"; }
objects_left "a write into a closed pipe"

# an interrupted read phase keeps the written run intact
run_cli 0 rados-bench -p "$pool" 2 write -b 4K -t 16 --no-cleanup
start=$(date +%s.%N)
interrupt_after 1 rados-bench -p "$pool" 60 rand -t 16
expect_faster_than 15 "$start"
expect_stdout '^Total reads made: +[0-9]+$'
expect_stdout '^Verify failures: +0$'
run_cli 0 rados-cleanup -p "$pool"
expect_stdout '^Removed [0-9]+ objects$'

ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
finish
