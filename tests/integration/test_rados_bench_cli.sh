# The rados-bench drop-in against the real cluster: rados bench's layout line for line
# (with cephmark's columns and lines after rados bench's own), --format json with rados
# bench's field names, results files with -o, and rados-cleanup.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
pool=cephmark-test-drop-in
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT
ceph osd pool create "$pool" 8 >/dev/null 2>&1

run_cli 0 rados-bench -p "$pool" 2 write -t 8 -b 4K --no-cleanup -o "$work/write"
expect_stdout '^Maintaining 8 concurrent writes of 4096 bytes to objects of size 4096 for up to 2 seconds or 0 objects$'
expect_stdout '^Object prefix: benchmark_data_'
expect_stdout '^  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat\(s\)  avg lat\(s\)      IOPS  p99 lat\(s\)$'
expect_stdout '^    1       8 +[0-9]+ +[0-9]+ '
# the summary's labels, in rados bench's order, then cephmark's
labels=$(sed -n '/^Total time run:/,$ s/^\([A-Z][A-Za-z0-9 .()/]*:\) .*/\1/p' "$out_file" | tr '\n' '|')
want='Total time run:|Total writes made:|Write size:|Object size:|Bandwidth (MB/sec):|Stddev Bandwidth:|Max bandwidth (MB/sec):|Min bandwidth (MB/sec):|Average IOPS:|Stddev IOPS:|Max IOPS:|Min IOPS:|Average Latency(s):|Stddev Latency(s):|Max latency(s):|Min latency(s):|Latency p50(s):|Latency p90(s):|Latency p99(s):|Latency p99.9(s):|Latency p99.99(s):|Errors:|'
checks=$((checks + 1))
[ "$labels" = "$want" ] || { failures=$((failures + 1)); echo "FAIL: write summary labels: $labels"; }
expect_stdout '^Total time run:         [0-9.]+$'
expect_stdout '^Errors:                 0$'
writes=$(sed -n 's/^Total writes made: *//p' "$out_file")
objects=$(rados -p "$pool" ls | grep -c '^benchmark_data_')
checks=$((checks + 1))
[ "$writes" = "$objects" ] || { failures=$((failures + 1)); echo "FAIL: $writes writes but $objects objects in the pool"; }

# results files from -o parse, and hold the run
cat >"$work/check.lua" <<'LUA'
local dir = ...
local sys, json, yaml = require "cephmark.sys", require "cephmark.json", require "cephmark.yaml"
local j = assert(json.decode(assert(sys.read_file(dir.dir .. "/results.json"))))
local y = assert(yaml.decode(assert(sys.read_file(dir.dir .. "/results.yaml")), "results.yaml"))
assert(j.result.ops == y.result.ops and j.result.ops > 0, "ops in both forms")
assert(j.rados_bench.total_writes_made == tostring(j.result.ops), "rados bench document")
print("results ok " .. j.result.ops)
LUA
run_cli 0 run "$work/check.lua" -p dir="$work/write"
expect_stdout "^results ok $writes$"

run_cli 0 rados-bench -p "$pool" 2 seq -t 8
labels=$(sed -n 's/^\([A-Z][A-Za-z0-9 .()/]*:\) .*/\1/p' "$out_file" | tr '\n' '|')
want='Total time run:|Total reads made:|Read size:|Object size:|Bandwidth (MB/sec):|Average IOPS:|Stddev IOPS:|Max IOPS:|Min IOPS:|Average Latency(s):|Max latency(s):|Min latency(s):|Latency p50(s):|Latency p90(s):|Latency p99(s):|Latency p99.9(s):|Latency p99.99(s):|Errors:|Verify failures:|'
checks=$((checks + 1))
[ "$labels" = "$want" ] || { failures=$((failures + 1)); echo "FAIL: read summary labels: $labels"; }
expect_stdout "^Total reads made:     $writes$"
expect_stdout '^Verify failures:      0$'
# a seq asked for far longer than the write run fed it ends early, and says so (ceph#30794)
run_cli 0 rados-bench -p "$pool" 60 seq -t 8
expect_stdout "^Total reads made:     $writes$"
expect_stderr '^cephmark: rados-bench: warning: ended after [0-9]+\.[0-9][0-9] s of the 60 s asked: the target ran out of work'

run_cli 0 rados-bench -p "$pool" 2 rand -t 8 --format json
cat >"$work/json.lua" <<'LUA'
local p = ...
local doc = assert(require("cephmark.json").decode(assert(require("cephmark.sys").read_file(p.file))))
for _, key in ipairs { "total_time_run", "total_reads_made", "read_size", "object_size", "bandwidth",
  "average_iops", "stddev_iops", "max_iops", "min_iops", "average_latency", "max_latency",
  "min_latency", "latency_p99", "verify_failures" } do
  assert(type(doc[key]) == "string", key .. " is a string, as rados bench writes it")
end
assert(#doc.datas >= 1 and doc.datas[1].sec == "1" and doc.datas[1].cur_bw, "per-second datas")
print("json ok")
LUA
cp "$out_file" "$work/rand.json"
run_cli 0 run "$work/json.lua" -p file="$work/rand.json"
expect_stdout '^json ok$'

run_cli 0 rados-cleanup -p "$pool"
expect_stdout "^Removed $writes objects$"
checks=$((checks + 1))
left=$(rados -p "$pool" ls | wc -l)
[ "$left" = 0 ] || { failures=$((failures + 1)); echo "FAIL: $left objects left after rados-cleanup"; }

# default cleanup after a write, as rados bench does
run_cli 0 rados-bench -p "$pool" 1 write -t 4 -b 4K
expect_stdout '^Cleaning up \(deleting benchmark objects\)$'
expect_stdout '^Removed [0-9]+ objects$'
checks=$((checks + 1))
left=$(rados -p "$pool" ls | wc -l)
[ "$left" = 0 ] || { failures=$((failures + 1)); echo "FAIL: $left objects left after a write with cleanup"; }

# Writes send what rados bench sends: set-alloc-hint(object size, write size) before each
# write, or a bare write with --no-hints; a write at an offset when -b < -O, writefull when
# an op is the whole object. The OSDs' op history shows each op as it arrived. The history
# keeps its slowest ops, and ops enter it a moment after they complete: the thousands of
# ops of the tests above may still be coming in. It is made large enough to take them all for
# the time of the test, and the check waits up to 10 s for all of the ops it looks for.
for osd in 0 1 2; do ceph tell osd.$osd config set osd_op_history_size 100000 >/dev/null 2>&1; done
osd_ops() {
  for osd in 0 1 2; do ceph tell osd.$osd dump_historic_ops 2>/dev/null; done |
    grep -o '"description": "osd_op([^"]*' | grep "$1_object" | sed 's/^[^[]*\(\[[^]]*\]\).*/\1/'
}
expect_osd_ops() { # prefix, count, line pattern, what
  local tries=0 ops
  while :; do
    ops=$(osd_ops "$1")
    [ "$(grep -c "$3" <<<"$ops")" = "$2" ] && break
    tries=$((tries + 1))
    [ $tries -lt 20 ] || break
    sleep 0.5
  done
  checks=$((checks + 1))
  [ "$(grep -c "$3" <<<"$ops")" = "$2" ] || { failures=$((failures + 1)); echo "FAIL: $4 as the OSDs saw them: $ops"; }
}
run_cli 0 rados-bench -p "$pool" 1 write -t 4 -b 64K -O 192K --max-objects 6 --run-name hinted --no-cleanup
expect_osd_ops "$(sed -n 's/^Object prefix: //p' "$out_file")" 6 \
  '^\[set-alloc-hint object_size 196608 write_size 65536,write [0-9]*~65536\]$' "hinted writes at offsets"
run_cli 0 rados-bench -p "$pool" 1 write -t 4 -b 64K --max-objects 3 --run-name hinted_full --no-cleanup
expect_osd_ops "$(sed -n 's/^Object prefix: //p' "$out_file")" 3 \
  '^\[set-alloc-hint object_size 65536 write_size 65536,writefull 0~65536\]$' "hinted full-object writes"
run_cli 0 rados-bench -p "$pool" 1 write -t 4 -b 64K -O 192K --max-objects 6 --run-name unhinted --no-hints --no-cleanup
expect_osd_ops "$(sed -n 's/^Object prefix: //p' "$out_file")" 6 '^\[write [0-9]*~65536\]$' "writes with --no-hints"
for osd in 0 1 2; do ceph tell osd.$osd config set osd_op_history_size 20 >/dev/null 2>&1; done
for run in hinted hinted_full unhinted; do run_cli 0 rados-cleanup -p "$pool" --run-name $run; done

ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
finish
