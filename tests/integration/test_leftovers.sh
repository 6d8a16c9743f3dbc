# A way back after SIGKILL: a scenario with a replicated and an EC pool, and a rados-bench
# write in the operator's pool, are SIGKILLed mid-run. The scenario's rerun is refused with
# a message naming `cephmark cleanup --leftovers`; `cephmark cleanup --leftovers` lists the
# two pools, the EC profile and the killed write's run, one line each, and removes nothing;
# with --yes it removes them. The operator's pool (and its objects) and a live run's pool
# are never listed nor touched.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
operator=cephmark-left-operator
cleanup() {
  for pid in ${victim:-} ${live:-} ${writer:-}; do kill -9 "$pid" 2>/dev/null; done
  for pool in "$operator" cephmark-victim-data cephmark-victim-ec cephmark-live-data; do
    ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
  done
  ceph osd erasure-code-profile rm cephmark_cephmark-victim-ec >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  checks=$((checks + 1))
  "$@" || { failures=$((failures + 1)); echo "FAIL: $what"; }
}
wait_for() { # wait_for SECONDS COMMAND...: until the command succeeds
  local tries=$(($1 * 5))
  shift
  while [ "$tries" -gt 0 ]; do
    "$@" >/dev/null 2>&1 && return 0
    tries=$((tries - 1))
    sleep 0.2
  done
  return 1
}
pool_exists() { ceph osd pool ls | grep -qxF "$1"; }

ceph osd pool create "$operator" 8 >/dev/null 2>&1
ceph osd pool application enable "$operator" operator >/dev/null 2>&1
for i in 1 2 3; do
  head -c 5000 /dev/urandom >"$work/own-$i"
  rados -p "$operator" put "own-$i" "$work/own-$i"
done
own_sums() { for i in 1 2 3; do rados -p "$operator" get "own-$i" - | md5sum; done; }
own_before=$(own_sums)

cat >"$work/victim.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "victim",
  params = { seconds = cm.duration("60s", "phase length") },
  pools = { data = { type = "replicated", size = 3 }, ec = { type = "erasure", k = 2, m = 1 } },
  run = function(s, p)
    for _, pool in s:each_pool() do
      s:phase("write", pool, { seconds = p.seconds, threads = 2, block_size = "4K", rate = 200 })
    end
  end,
}
LUA
sed 's/name = "victim"/name = "live"/; s/, ec = { type = "erasure", k = 2, m = 1 }//' "$work/victim.lua" >"$work/live.lua"

# a live run, which must never be listed
"$CEPHMARK" run "$work/live.lua" -o "$work/live" >"$work/live.out" 2>&1 </dev/null &
live=$!
# the victims: a scenario killed in its first write, and a drop-in write killed mid-run
"$CEPHMARK" run "$work/victim.lua" -o "$work/victim" >"$work/victim.out" 2>&1 </dev/null &
victim=$!
wait_for 60 grep -q '^\[1\] write' "$work/victim.out"
check "both victim pools exist" wait_for 30 sh -c "ceph osd pool ls | grep -qx cephmark-victim-ec"
sleep 1
kill -9 "$victim"
wait "$victim" 2>/dev/null
victim=
"$CEPHMARK" rados-bench -p "$operator" 60 write -b 4K -t 2 --rate 200 --run-name killed >/dev/null 2>&1 </dev/null &
writer=$!
wait_for 30 rados -p "$operator" stat killed
sleep 1
kill -9 "$writer"
wait "$writer" 2>/dev/null
writer=
check "the live run's pool exists" wait_for 30 pool_exists cephmark-live-data
check "the live run is in its write" wait_for 30 grep -q '^\[1\] write' "$work/live.out"

# the rerun is refused, naming the way back
run_cli 2 run "$work/victim.lua" -o "$work/rerun"
expect_stderr "^cephmark: .*victim.lua:[0-9]+: pool 'cephmark-victim-data' \(data\) was left by a cephmark run that is gone \(host $(hostname), pid [0-9]+, started [0-9-]+ [0-9:]+ UTC\): \`cephmark cleanup --leftovers\` lists what it left, \`cephmark cleanup --leftovers --yes\` removes it; or give the pool another name$"
expect_stderr_lines 1

# the list: one line per item, nothing removed
run_cli 0 cleanup --leftovers
expect_stdout "^pool cephmark-victim-data: created by a cephmark run that is gone \(host $(hostname), pid [0-9]+, started [^)]*\)$"
expect_stdout "^pool cephmark-victim-ec, with erasure-code profile cephmark_cephmark-victim-ec: created by a cephmark run that is gone"
expect_stdout "^run 'killed' in pool $operator: objects benchmark_data_[^ ]+_object\*, its metadata and marker, written by a cephmark run that is gone"
expect_stdout "^3 leftovers \(1 pool of live cephmark runs left alone\); remove them with \`cephmark cleanup --leftovers --yes\`$"
lines=$(wc -l <"$out_file")
check "the list has 4 lines ($lines)" [ "$lines" = 4 ]
check "the live run's pool is not listed" sh -c "! grep -q cephmark-live-data '$out_file'"
check "the operator's pool is not listed as a pool" sh -c "! grep -q '^pool $operator' '$out_file'"
check "listing removed nothing" sh -c "ceph osd pool ls | grep -qx cephmark-victim-data && ceph osd pool ls | grep -qx cephmark-victim-ec"
cp "$out_file" "$work/list.out"

# removal
run_cli 0 cleanup --leftovers --yes
expect_stdout "^removed pool cephmark-victim-data$"
expect_stdout "^removed pool cephmark-victim-ec and erasure-code profile cephmark_cephmark-victim-ec$"
expect_stdout "^removed run 'killed' in pool $operator \([0-9]+ objects\)$"
check "the victim pools are gone" sh -c "! ceph osd pool ls | grep -q '^cephmark-victim'"
check "the EC profile is gone" sh -c "! ceph osd erasure-code-profile ls | grep -q victim"
check "the live run's pool is still there" pool_exists cephmark-live-data
left=$(rados -p "$operator" ls | sort | tr '\n' ' ')
check "only the operator's objects are left in its pool ('$left')" [ "$left" = "own-1 own-2 own-3 " ]
check "the operator's objects are unchanged" [ "$(own_sums)" = "$own_before" ]
run_cli 0 cleanup --leftovers
expect_stdout "^no leftovers of cephmark runs that are gone \(1 pool of live cephmark runs left alone\)$"

# the live run ends normally and deletes its own pool
kill -INT "$live"
wait "$live"
status=$?
live=
check "the live run ended on SIGINT (exit $status)" [ "$status" = 130 ]
check "the live run deleted its pool" sh -c "! ceph osd pool ls | grep -qx cephmark-live-data"

finish
