# SIGINT in the middle of rados-bench phases: in-flight ops drain, the summary of what ran
# is printed, the exit code is 130, and a write run's objects are still cleaned up.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
pool=cephmark-test-interrupt
ceph osd pool create "$pool" 8 >/dev/null 2>&1

# interrupt_after SECONDS ARGS...: runs cephmark in the background, sends one SIGINT
interrupt_after() {
  local delay=$1
  shift
  last_command="cephmark $* (SIGINT after ${delay}s)"
  "$CEPHMARK" "$@" >"$out_file" 2>"$err_file" &
  local pid=$!
  sleep "$delay"
  kill -INT "$pid"
  wait "$pid"
  last_status=$?
  checks=$((checks + 1))
  if [ "$last_status" != 130 ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' exited $last_status, expected 130"
    sed 's/^/  stderr: /' "$err_file" | head
  fi
}

start=$(date +%s.%N)
interrupt_after 2 rados-bench -p "$pool" 60 write -b 4K -t 16
expect_faster_than 15 "$start"
expect_stdout '^Total writes made: +[0-9]+$'
expect_stdout '^Removed [0-9]+ objects$'
objects=$(rados -p "$pool" ls 2>/dev/null | wc -l)
checks=$((checks + 1))
[ "$objects" = 0 ] || { failures=$((failures + 1)); echo "FAIL: $objects objects left after an interrupted write"; }

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
