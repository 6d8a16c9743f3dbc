# Concurrency: ownership is atomic.
# - The same scenario started twice at once: exactly one run creates the pool and runs; the
#   other refuses in one line naming the holder's host, pid and start, before it creates or
#   deletes anything; the first completes with 0 errors and deletes its pool.
# - Two rados-bench writes under one --run-name at once: the second refuses naming the
#   first; a cleanup racing the live write refuses; the kept run's metadata survives, and
#   at the end no benchmark object is left and the operator's objects are unchanged.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
pool=cephmark-race-data
operator=cephmark-race-operator
cleanup() {
  [ -n "${first:-}" ] && kill "$first" 2>/dev/null
  [ -n "${second:-}" ] && kill "$second" 2>/dev/null
  ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
  ceph osd pool rm "$operator" "$operator" --yes-i-really-really-mean-it >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  checks=$((checks + 1))
  "$@" || { failures=$((failures + 1)); echo "FAIL: $what"; }
}
ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1

# 1. one scenario, twice at once
cat >"$work/race.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "race",
  pools = { data = { type = "replicated", size = 3 } },
  run = function(s, p)
    local pool = s:pool("data")
    s:phase("write", pool, { seconds = 3, threads = 4, block_size = "4K" })
    s:phase("seq", pool, { threads = 4 })
    s:phase("cleanup", pool)
  end,
}
LUA
"$CEPHMARK" run "$work/race.lua" -o "$work/a" >"$work/a.out" 2>"$work/a.err" </dev/null &
first=$!
"$CEPHMARK" run "$work/race.lua" -o "$work/b" >"$work/b.out" 2>"$work/b.err" </dev/null &
second=$!
wait "$first"
first_status=$?
wait "$second"
second_status=$?
echo "two runs at once: exit $first_status (pid $first) and $second_status (pid $second)"
if [ "$first_status" = 0 ]; then
  winner=a winner_pid=$first loser=b loser_status=$second_status
else
  winner=b winner_pid=$second loser=a loser_status=$first_status
fi
first= second=
check "one run succeeds, the other refuses with exit 2 ($first_status, $second_status)" \
  sh -c "{ [ $first_status = 0 ] && [ $second_status = 2 ]; } || { [ $first_status = 2 ] && [ $second_status = 0 ]; }"
created=$(cat "$work/a.out" "$work/b.out" | grep -c "created $pool")
check "exactly one run says it created the pool ($created)" [ "$created" = 1 ]
check "the winner created it" grep -q "pool data: created $pool" "$work/$winner.out"
check "the loser refused in one line naming the winner (host $(hostname), pid $winner_pid)" \
  grep -qE "^cephmark: .*race.lua:[0-9]+: pool '$pool' \(data\) is (being created by|in use by) another cephmark run \(host $(hostname), pid $winner_pid, started [0-9-]+ [0-9:]+ UTC\)" "$work/$loser.err"
lines=$(wc -l <"$work/$loser.err")
check "the loser's refusal is one line ($lines)" [ "$lines" = 1 ]
check "the loser deleted nothing" sh -c "! grep -q deleted '$work/$loser.out'"
check "the winner wrote and read with 0 errors" sh -c "[ \$(grep -c ', 0 errors' '$work/$winner.out') = 2 ]"
check "the winner's cleanup removed what it wrote" grep -q 'cleanup data: removed' "$work/$winner.out"
check "the winner deleted its pool" grep -q "pool data: deleted $pool" "$work/$winner.out"
check "the pool is gone" sh -c "! ceph osd pool ls | grep -qxF '$pool'"
[ "$failures" = 0 ] || { sed 's/^/  a: /' "$work/a.out" "$work/a.err"; sed 's/^/  b: /' "$work/b.out" "$work/b.err"; }

# 2. two rados-bench writes under one run name, in the operator's pool
ceph osd pool create "$operator" 8 >/dev/null 2>&1
ceph osd pool application enable "$operator" operator >/dev/null 2>&1
for i in 1 2 3; do
  head -c 5000 /dev/urandom >"$work/own-$i"
  rados -p "$operator" put "own-$i" "$work/own-$i"
done
own_sums() { for i in 1 2 3; do rados -p "$operator" get "own-$i" - | md5sum; done; }
own_before=$(own_sums)
"$CEPHMARK" rados-bench -p "$operator" 6 write -b 4K -t 4 --run-name shared --no-cleanup \
  >"$work/w1.out" 2>"$work/w1.err" </dev/null &
first=$!
for _ in $(seq 50); do
  rados -p "$operator" stat shared >/dev/null 2>&1 && break
  sleep 0.2
done
run_cli 2 rados-bench -p "$operator" 2 write -b 4K --run-name shared
expect_stderr "^cephmark: rados-bench: run 'shared' in pool '$operator' is being written by another cephmark run \(host $(hostname), pid $first, started [0-9-]+ [0-9:]+ UTC\): wait for it to end, or write under another run name \(--run-name, run_name =\)$"
expect_stderr_lines 1
run_cli 2 rados-cleanup -p "$operator" --run-name shared
expect_stderr "^cephmark: rados-cleanup: run 'shared' in pool '$operator' is being written by a live cephmark run \(host $(hostname), pid $first, started [^)]*\): refused; that run removes or keeps its own objects$"
wait "$first"
status=$?
first=
check "the first write completed (exit $status)" [ "$status" = 0 ]
meta=$(rados -p "$operator" get shared - 2>/dev/null)
objects=$(printf '%s\n' "$meta" | sed -n 's/^objects //p')
listed=$(rados -p "$operator" ls | grep -c '^benchmark_data_')
check "the kept run's metadata is complete" sh -c "printf '%s\n' '$meta' | grep -qx 'state complete'"
check "the kept run's metadata names every object written ($objects, $listed listed)" [ "${objects:-x}" = "$listed" ]
run_cli 2 rados-bench -p "$operator" 2 write -b 4K --run-name shared
expect_stderr "already holds a kept run 'shared'"
run_cli 0 rados-bench -p "$operator" 1 seq --run-name shared
expect_stdout '^Verify failures: +0$'
run_cli 0 rados-cleanup -p "$operator" --run-name shared
left=$(rados -p "$operator" ls | sort | tr '\n' ' ')
check "only the operator's objects are left ('$left')" [ "$left" = "own-1 own-2 own-3 " ]
check "the operator's objects are unchanged" [ "$(own_sums)" = "$own_before" ]

# 3. two writes with cleanup under one name at once: neither takes the other's objects
"$CEPHMARK" rados-bench -p "$operator" 4 write -b 4K -t 4 --run-name both >"$work/b1.out" 2>&1 </dev/null &
first=$!
for _ in $(seq 50); do
  rados -p "$operator" stat both >/dev/null 2>&1 && break
  sleep 0.2
done
run_cli 2 rados-bench -p "$operator" 2 write -b 4K -t 4 --run-name both
expect_stderr "is being written by another cephmark run"
wait "$first"
status=$?
first=
check "the first write and its cleanup completed (exit $status)" [ "$status" = 0 ]
check "it removed what it wrote" grep -q 'Clean up completed' "$work/b1.out"
left=$(rados -p "$operator" ls | sort | tr '\n' ' ')
check "no benchmark object is left ('$left')" [ "$left" = "own-1 own-2 own-3 " ]
left=$(rados -p "$operator" --namespace cephmark ls | wc -l)
check "no run marker is left ($left)" [ "$left" = 0 ]

finish
