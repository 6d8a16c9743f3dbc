# A full cluster and a pool at its quota: every call a run makes outside the engine has a
# bound, a write that cannot go through says why from the osdmap in one line, SIGINT acts
# within 15 s, and removing a run's objects still works (removes use full_try). Runs on its
# own small memstore cluster with a mgr (pool quotas need its statistics), with the full
# ratio lowered so that ~100 MiB fill it.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
cluster="$CEPHMARK_BUILD_DIR/full-cluster"
cleanup() {
  [ -n "${bench_pid:-}" ] && kill "$bench_pid" 2>/dev/null
  "${cephmark_bin:-$CEPHMARK}" cluster down --dir "$cluster" >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

check() { # check DESCRIPTION COMMAND...: a shell condition as a check
  local what=$1
  shift
  checks=$((checks + 1))
  "$@" || { failures=$((failures + 1)); echo "FAIL: $what"; }
}
elapsed_since() { awk -v start="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - start }'; }
below() { awk -v value="$1" -v limit="$2" 'BEGIN { exit !(value < limit) }'; }
# wait_exit PID: its exit status, or 137 after SIGKILL when it is still there after 60 s
# (a hang must fail the test, not block it)
wait_exit() {
  local tries=600
  while kill -0 "$1" 2>/dev/null && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  kill -0 "$1" 2>/dev/null && kill -9 "$1"
  wait "$1"
}

run_cli 0 cluster up --dir "$cluster" --memstore-size 256M --mgr --quiet
# every command below is bounded: a hang fails the test instead of blocking it
cephmark_bin=$CEPHMARK
printf '#!/bin/sh\nexec timeout -s KILL 60 "%s" "$@"\n' "$cephmark_bin" >"$work/cephmark"
chmod +x "$work/cephmark"
CEPHMARK=$work/cephmark
export CEPH_CONF="$cluster/ceph.conf"
ceph osd set-nearfull-ratio 0.3 >/dev/null 2>&1
ceph osd set-backfillfull-ratio 0.35 >/dev/null 2>&1
ceph osd set-full-ratio 0.4 >/dev/null 2>&1
ceph osd pool create full 8 >/dev/null 2>&1
ceph osd pool application enable full bench >/dev/null 2>&1

# 1. A write that fills the cluster: its ops stall (librados holds writes while the OSDs
# are full); SIGINT once the cluster reports full: exit 130 within 15 s, and one line that
# says why the run's metadata could not be completed.
"$cephmark_bin" rados-bench -p full 120 write -b 4M -t 8 --no-cleanup --run-name filler --timeout 5 \
  >"$work/fill.out" 2>"$work/fill.err" </dev/null &
bench_pid=$!
for _ in $(seq 120); do
  ceph health 2>/dev/null | grep -q 'full osd' && break
  sleep 1
done
check "the cluster became full" sh -c "ceph health 2>/dev/null | grep -q 'full osd'"
sleep 2
start=$(date +%s.%N)
kill -INT "$bench_pid"
wait_exit "$bench_pid"
status=$?
bench_pid=
took=$(elapsed_since "$start")
echo "SIGINT in a write on a full cluster: exit $status after $took s"
check "SIGINT on a full cluster exits 130 (got $status)" [ "$status" = 130 ]
check "SIGINT on a full cluster acts within 15 s (took $took s)" below "$took" 15
check "the write says the cluster is full, in one line" \
  grep -qE '^cephmark: rados-bench: cluster is full \(OSD full flag\): osd\.[0-9].* at or above the full ratio 0\.4: cannot complete the run metadata .filler. in pool .full. \(no answer from the OSDs within 3 s\)$' "$work/fill.err"
cat "$work/fill.err"

# 2. A new write on the full cluster: refused at its metadata, bounded by --timeout, one line.
start=$(date +%s.%N)
run_cli 2 rados-bench -p full 5 write -b 4K --timeout 3
took=$(elapsed_since "$start")
expect_stderr_line "cephmark: rados-bench: cluster is full (OSD full flag): osd.0, osd.1, osd.2 at or above the full ratio 0.4: cannot create the run metadata 'cephmark_bench_last_metadata' in pool 'full' (no answer from the OSDs within 3 s)"
expect_stderr_lines 1
check "the refusal came within its bound (took $took s)" below "$took" 10

# 3. SIGINT while waiting for that metadata: at once.
"$cephmark_bin" rados-bench -p full 5 write -b 4K --timeout 60 >/dev/null 2>"$work/wait.err" </dev/null &
bench_pid=$!
sleep 3
start=$(date +%s.%N)
kill -INT "$bench_pid"
wait_exit "$bench_pid"
status=$?
bench_pid=
took=$(elapsed_since "$start")
check "SIGINT while the metadata waits exits 130 (got $status)" [ "$status" = 130 ]
check "SIGINT while the metadata waits acts within 15 s (took $took s)" below "$took" 15

# 4. The filler's objects are removed on the full cluster (full_try), by its recorded
# prefix: its metadata says it never finished and its process is gone.
run_cli 0 rados-cleanup -p full --run-name filler
expect_stdout '^Removed [1-9][0-9]* objects$'
left=$(rados -p full ls 2>/dev/null | wc -l)
check "no object left in the full pool ($left)" [ "$left" = 0 ]
for _ in $(seq 60); do
  ceph health 2>/dev/null | grep -q 'full osd' || break
  sleep 1
done
check "the cluster is no longer full" sh -c "! ceph health 2>/dev/null | grep -q 'full osd'"

# 5. A pool at its quota: the write stalls once the pool is flagged full; SIGINT acts
# within 15 s; a new write is refused naming the quota; cleanup still removes everything.
ceph osd pool create quota 8 >/dev/null 2>&1
ceph osd pool application enable quota bench >/dev/null 2>&1
ceph osd pool set-quota quota max_objects 40 >/dev/null 2>&1
"$cephmark_bin" rados-bench -p quota 120 write -b 4K -t 4 --rate 100 --timeout 5 \
  >"$work/quota.out" 2>"$work/quota.err" </dev/null &
bench_pid=$!
for _ in $(seq 90); do
  ceph osd dump 2>/dev/null | grep "'quota'" | grep -q full_quota && break
  sleep 1
done
check "the pool reached its quota" sh -c "ceph osd dump 2>/dev/null | grep \"'quota'\" | grep -q full_quota"
sleep 2
start=$(date +%s.%N)
kill -INT "$bench_pid"
wait_exit "$bench_pid"
status=$?
bench_pid=
took=$(elapsed_since "$start")
echo "SIGINT in a write to a pool at its quota: exit $status after $took s"
check "SIGINT at the quota exits 130 (got $status)" [ "$status" = 130 ]
check "SIGINT at the quota acts within 15 s (took $took s)" below "$took" 15
check "the write's cleanup removed its objects at the quota" grep -qE '^Removed [1-9][0-9]* objects$' "$work/quota.out"
cat "$work/quota.err"
run_cli 2 rados-bench -p quota 5 write -b 4K --timeout 3
expect_stderr_line "cephmark: rados-bench: pool 'quota' is full (pool quota flag: max_objects 40): cannot create the run metadata 'cephmark_bench_last_metadata' in pool 'quota' (no answer from the OSDs within 3 s)"
expect_stderr_lines 1
left=$(rados -p quota ls 2>/dev/null | wc -l)
check "no object left in the quota pool ($left)" [ "$left" = 0 ]

finish
