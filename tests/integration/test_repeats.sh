# Repetitions against the real local cluster: ec-vs-replica with --repeats 2 creates each pool
# once and deletes it once, runs the pools as replica, ec then ec, replica, records every
# phase's repetition and compares over both; tuning-debug-log sets and restores its options
# in every repetition and leaves the config database as it was; sweep-t-b alternates its
# points; SIGINT in the second of three repetitions keeps the first, says so, and still
# deletes the pools. The operator's pool, its object and the config database are unchanged.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"
work=$(mktemp -d)
pid=
operator_pool=cephmark-test-operator-repeats
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; ceph osd pool rm $operator_pool $operator_pool --yes-i-really-really-mean-it >/dev/null 2>&1; rm -rf "$work" "$out_file" "$err_file"' EXIT
scenarios="$CEPHMARK_SOURCE_DIR/scenarios"


# expect_count PATTERN N: stdout has exactly N lines matching PATTERN
expect_count() {
  local n
  n=$(grep -cE -- "$1" "$out_file")
  checks=$((checks + 1))
  [ "$n" = "$2" ] || { failures=$((failures + 1)); echo "FAIL: '$last_command': $n lines match '$1', expected $2"; }
}

# the state an operator would check: pools, their operator's object, the config database
state() {
  {
    ceph osd pool ls 2>/dev/null | sort
    rados -p $operator_pool ls 2>/dev/null | sort
    rados -p $operator_pool get precious - 2>/dev/null | md5sum
    ceph config dump 2>/dev/null
  } | md5sum
}
ceph osd pool create $operator_pool 8 >/dev/null 2>&1
head -c 100000 /dev/urandom >"$work/precious"
rados -p $operator_pool put precious "$work/precious"
before=$(state)

# --- ec-vs-replica, two repetitions ----------------------------------------------------------
run_cli 0 run "$scenarios/ec-vs-replica.lua" --repeats 2 -p seconds=1 -p block_size=64K -p threads=4 -p progress=false \
  -o "$work/ec"
expect_count '^pool replica: created cephmark-ec-vs-replica-replica ' 1
expect_count '^pool ec: created cephmark-ec-vs-replica-ec ' 1
expect_count '^pool replica: deleted cephmark-ec-vs-replica-replica$' 1
expect_count '^pool ec: deleted cephmark-ec-vs-replica-ec$' 1
expect_stdout '^-- repetition 1/2 \(order: replica, ec\)$'
expect_stdout '^-- repetition 2/2 \(order: ec, replica\)$'
expect_stdout '^\[9\] write ec \(repetition 2/2\)  pool cephmark-ec-vs-replica-ec  '
expect_stdout '^comparison by pool \(baseline replica, marked \*\): medians of 2 repetitions$'
expect_stdout '^write  MiB/s   replica \*  +[0-9.]+ \[[0-9.]+, [0-9.]+\]$'
expect_stdout '^ +ec +[0-9.]+ \[[0-9.]+, [0-9.]+\] +[-+][0-9.]+ % \[[-+][0-9.]+, [-+][0-9.]+\] +(faster|slower|no difference detectable \(±[0-9.]+ %\)) +[0-9.]+ %$'
expect_count '^comparison by pool' 1
json_check "$work/ec" 'r.status == "ok" and r.repeats == 2 and r.repetitions_completed == 2 and #r.phases == 16' "16 phases in two repetitions"
json_check "$work/ec" 'r.phases[1].variant.pool == "replica" and r.phases[5].variant.pool == "ec" and r.phases[9].variant.pool == "ec" and r.phases[13].variant.pool == "replica"' "replica, ec, then ec, replica"
json_check "$work/ec" 'r.phases[4].repetition == 1 and r.phases[5].repetition == 1 and r.phases[9].repetition == 2 and r.phases[16].repetition == 2' "every phase's repetition"
json_check "$work/ec" 'r.phases[4].result.ops == r.phases[1].result.ops and r.phases[12].result.ops == r.phases[9].result.ops and r.phases[16].result.ops == r.phases[13].result.ops' "each repetition's cleanup removed what it wrote"
json_check "$work/ec" 'r.phases[10].result.ops > 0 and r.phases[10].result.errors == 0 and r.phases[14].result.verify_failures == 0' "the second repetition reads its own writes back"
json_check "$work/ec" 'r.orders[1].iteration == "pools" and table.concat(r.orders[2].order, ",") == "ec,replica"' "the pools' orders"
json_check "$work/ec" '#r.comparisons == 1 and #r.comparisons[1].rows == 6 and r.comparisons[1].rows[2].n == 2 and #r.comparisons[1].rows[2].per_repetition.iops == 2' "one comparison over both repetitions"
json_check "$work/ec" 'r.pools[1].created and r.pools[1].deleted and r.pools[2].created and r.pools[2].deleted' "pools created and deleted, as recorded"

# --- tuning-debug-log: the options set and restored in each repetition -------------------------
run_cli 0 run "$scenarios/tuning-debug-log.lua" --repeats 2 -p seconds=1 -p progress=false -o "$work/tuning"
expect_count '^  config osd/debug_osd restored to ' 2
expect_count '^  config osd/debug_ms restored to ' 2
expect_stdout '^-- point 1/2: 0/0$'
expect_stdout '^comparison by point \(baseline defaults, marked \*\): medians of 2 repetitions$'
json_check "$work/tuning" '#r.phases == 8 and r.phases[1].point == "defaults" and r.phases[5].point == "0/0" and r.phases[7].point == "defaults"' "defaults, 0/0, then 0/0, defaults"
json_check "$work/tuning" 'r.config[1].restored and r.config[2].restored' "config recorded as restored"

# --- sweep-t-b: its points alternate -----------------------------------------------------------
run_cli 0 run "$scenarios/sweep-t-b.lua" --repeats 2 -p seconds=1 -p threads=1,4 -p block_sizes=4K -p progress=false \
  -o "$work/sweep"
json_check "$work/sweep" '#r.phases == 8 and r.phases[1].point == "block_size=4K threads=1" and r.phases[5].point == "block_size=4K threads=4" and r.phases[5].repetition == 2' "the points in the other order in repetition 2"
json_check "$work/sweep" '#r.sweeps == 1 and #r.comparisons[1].rows == 2 and r.comparisons[1].rows[1].n == 2' "one sweep, compared over both repetitions"

checks=$((checks + 1))
[ "$(state)" = "$before" ] || { failures=$((failures + 1)); echo "FAIL: pools, the operator's object or the config database changed"; }

# --- SIGINT in the second of three repetitions ---------------------------------------------------
"$CEPHMARK" run "$scenarios/ec-vs-replica.lua" --repeats 3 -p seconds=2 -p block_size=64K -p threads=4 -p progress=false \
  -o "$work/interrupted" >"$work/bg.out" 2>"$work/bg.err" </dev/null &
pid=$!
checks=$((checks + 1))
for _ in $(seq 600); do grep -q '^\[9\] ' "$work/bg.out" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if grep -q '^\[9\] ' "$work/bg.out"; then
  sleep 1
  start=$(date +%s.%N)
  kill -INT "$pid"
  wait "$pid"
  last_status=$? last_command="run ec-vs-replica.lua --repeats 3 (SIGINT in repetition 2)"
  pid=
  [ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: $last_command exited $last_status"; cat "$work/bg.err"; }
  expect_faster_than 15 "$start"
  cp "$work/bg.out" "$out_file"
  expect_stdout '^interrupted in repetition 2 of 3: 1 complete repetition kept$'
  expect_stdout '^pool replica: deleted cephmark-ec-vs-replica-replica$'
  expect_stdout '^pool ec: deleted cephmark-ec-vs-replica-ec$'
  json_check "$work/interrupted" 'r.status == "interrupted" and r.repetitions_completed == 1 and r.phases[8].status == "ok" and r.phases[9].repetition == 2 and r.phases[9].status == "interrupted"' "the complete repetition kept, the interrupted phase marked"
  json_check "$work/interrupted" '#r.comparisons == 1 and r.comparisons[1].rows[1].n == 1' "the comparison of the complete repetition kept"
else
  failures=$((failures + 1)); echo "FAIL: the run did not reach its ninth phase"; cat "$work/bg.out" "$work/bg.err"
fi
checks=$((checks + 1))
[ "$(state)" = "$before" ] || { failures=$((failures + 1)); echo "FAIL: the interrupted run left pools or config behind"; }
finish
