# Bad input, as one table (bad_input_table.txt): each malformed input gives its exact
# one-line message and exit code, never a crash, a hang or a traceback (script errors
# excepted, whose first line is the message). Needs no cluster.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
W=$(mktemp -d)
# no cluster is configured; should a case wrongly reach for the local one, it is made here
# (never in the user's default folder) and stopped at the end
export CEPH_CONF= CEPHMARK_CLUSTER_DIR="$W/no-cluster"
trap '"$CEPHMARK" cluster down --dir "$W/no-cluster" >/dev/null 2>&1; rm -rf "$W" "$out_file" "$err_file"' EXIT

cat >"$W/sc.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "bad-input",
  params = {
    block_size = cm.size("4K", "bytes per op"),
    seconds = cm.duration("1s", "phase length"),
    threads = cm.integer(2, "ops in flight"),
    ratio = cm.number(0.5, "a fraction"),
    verify = cm.bool(true, "verify reads"),
    mode = cm.enum({ "fast", "slow" }, "fast", "a choice"),
  },
  run = function(s, p) end,
}
LUA
printf 'local x = = 1\n' >"$W/syntax.lua"
printf 'local function inner()\n  error("boom")\nend\ninner()\n' >"$W/error.lua"
printf 'assert(require("cephmark.rados").connect())\n' >"$W/connect.lua"
printf 'require("cephmark.s3").connect{endpoint="http://127.0.0.1:1", access_key="a", secret_key="b", transport="tcp"}\n' >"$W/s3t.lua"
printf 'threads: [1, 2\n' >"$W/y1.yaml"
printf 'threads: many\n' >"$W/y2.yaml"
printf -- '- 1\n- 2\n' >"$W/y3.yaml"
printf 'bogus: 1\n' >"$W/y4.yaml"
printf 'threads: 1\nthreads: 2\n' >"$W/y5.yaml"
printf 'a: 1\n---\nb: 2\n' >"$W/y6.yaml"
printf 'block_size: 4X\n' >"$W/y7.yaml"
printf '\tthreads: 1\n' >"$W/y8.yaml"
printf 'threads: !!int x\n' >"$W/y10.yaml"
null='require("cephmark.null").bench'
printf '%s{seconds=1, threads=0}\n' "$null" >"$W/n3.lua"
printf '%s{seconds=1, threads=100000}\n' "$null" >"$W/n4.lua"
printf '%s{seconds="4X"}\n' "$null" >"$W/n5.lua"
printf '%s{seconds=1, threads="many"}\n' "$null" >"$W/n6.lua"
printf '%s("x")\n' "$null" >"$W/n8.lua"
scenario='return require("cephmark").scenario'
printf '%s{name="x y", run=function() end}\n' "$scenario" >"$W/n9.lua"
printf '%s{name="x", pools={a={type="erasure", k=1, m=1}}, run=function() end}\n' "$scenario" >"$W/n10.lua"
printf '%s{name="x", pools={a={type="mirror"}}, run=function() end}\n' "$scenario" >"$W/n11.lua"
printf '%s{name="x", pools={a={size=0}}, run=function() end}\n' "$scenario" >"$W/n12.lua"
printf '%s{name="x", run=5}\n' "$scenario" >"$W/n13.lua"
printf '%s{name="x", params={t=require("cephmark").integer("a")}, run=function() end}\n' "$scenario" >"$W/n14.lua"
printf '%s{name="x", hooks={on_phase=print}, run=function() end}\n' "$scenario" >"$W/n15.lua"
printf '%s{name="x", colour="red", run=function() end}\n' "$scenario" >"$W/n16.lua"
printf '%s{name="x", telemetry="off", run=function() end}\n' "$scenario" >"$W/n16t.lua"
printf '%s{name="x", wait_clean="soon", run=function() end}\n' "$scenario" >"$W/n16w.lua"
printf '%s{name="x", wait_clean=0, run=function() end}\n' "$scenario" >"$W/n16z.lua"
printf '%s{name="x", quiesce="yes", run=function() end}\n' "$scenario" >"$W/n16q.lua"
# object gateway benches: options checked before any request (the endpoint is never reached)
s3bench() {
  printf 'local c = require("cephmark.s3").connect{endpoint="http://127.0.0.1:1", access_key="a", secret_key="b"}\nc:bench{%s}\n' "$2" >"$W/$1.lua"
}
s3bench mp1 'op="put", bucket="b", multipart={part_size=0}'
s3bench mp2 'op="put", bucket="b", multipart={part_size="5M", inflight=2}'
s3bench mp3 'op="put", bucket="b", size="100G", multipart={part_size="1M"}'
s3bench mp4 'op="get", bucket="b", objects=1, multipart={part_size="5M"}'
s3bench mp5 'op="put", bucket="b", multipart={parts_in_flight=0}'
s3bench mp6 'op="put", bucket="b", multipart="5M"'
s3bench ls1 'op="list", bucket="b", objects=1, page_size=0'
s3bench ls2 'op="list", bucket="b", objects=1, page_size=5000'
s3bench ls3 'op="list", bucket="b"'
s3bench gmx1 'op="mixed", bucket="b", objects=10, mix={get=-1, put=2}'
s3bench gmx2 'op="mixed", bucket="b", objects=10, mix={get=0, put=0}'
s3bench gmx3 'op="mixed", bucket="b", objects=10, mix={get=1, copy=1}'
s3bench gmx4 'op="mixed", bucket="b", objects=10'
s3bench gmx5 'op="get", bucket="b", objects=10, mix={get=1}'
printf '%s{name="x", params={r=require("cephmark").number(1e309)}, run=function() end}\n' "$scenario" >"$W/n17.lua"
# repetitions: the scenario's repeats and order fields, checked where it is defined
printf '%s{name="x", repeats=0, run=function() end}\n' "$scenario" >"$W/rp1.lua"
printf '%s{name="x", repeats=-1, run=function() end}\n' "$scenario" >"$W/rp2.lua"
printf '%s{name="x", repeats="x", run=function() end}\n' "$scenario" >"$W/rp3.lua"
printf '%s{name="x", order="random", run=function() end}\n' "$scenario" >"$W/rp4.lua"
printf '%s{name="x", repeats=2000, run=function() end}\n' "$scenario" >"$W/rp5.lua"
printf '%s{seconds=0}\n' "$null" >"$W/n18.lua"
printf '%s{threads="0x10", ops=1}\n' "$null" >"$W/n19.lua"
# operation mixes: unknown names, negative ratios, ratios summing to 0
printf '%s{ops=1, mix={read=1, list=1}}\n' "$null" >"$W/mx1.lua"
printf '%s{ops=1, mix={read=-5, write=10}}\n' "$null" >"$W/mx2.lua"
printf '%s{ops=1, mix={read=0, stat=0}}\n' "$null" >"$W/mx3.lua"
# access distributions: a zipf θ out of range, an unknown name, a hot spot the wrong way round
printf '%s{ops=1, access="zipf:0"}\n' "$null" >"$W/na1.lua"
printf '%s{ops=1, access="zipf:10.5"}\n' "$null" >"$W/na2.lua"
printf '%s{ops=1, access="normal:0.5"}\n' "$null" >"$W/na3.lua"
printf '%s{ops=1, access="hotspot:90/10"}\n' "$null" >"$W/na4.lua"
printf '%s{ops=1, access="pareto:1.5"}\n' "$null" >"$W/na5.lua"
printf 'ratio: .inf\n' >"$W/y11.yaml"
printf 'seconds: 0\n' >"$W/y12.yaml"
# errors raised with a value that is not a string: in a plain script, in a scenario's run
printf 'error({code = 5})\n' >"$W/e1.lua"
printf '%s{name="x", run=function() error({code = 5, detail = {pool = "p"}}) end}\n' "$scenario" >"$W/e2.lua"
printf 'error(nil)\n' >"$W/e3.lua"
# bounds on a list param (per element), bounds on a string; a sweep over a list param typed
# by its element (sizes print as sizes) and a where that matches none of its points; a
# config dimension for a section that does not exist, refused without asking a monitor
cmlocal='local cm = require("cephmark"); return cm.scenario'
printf '%s{name="x", params={t=cm.list(cm.integer(), {1, 4}, "t", {min=1})}, run=function() end}\n' "$cmlocal" >"$W/lb.lua"
printf '%s{name="x", params={t=cm.string("a", "t", {min=1})}, run=function() end}\n' "$cmlocal" >"$W/lb2.lua"
cat >"$W/wh.lua" <<'LUA'
local cm = require "cephmark"
local null = require "cephmark.null"
return cm.scenario {
  name = "where",
  params = { sizes = cm.list(cm.size(), { "512K", "4M" }, "sizes") },
  run = function(s, p)
    for point in s:sweep(cm.sweep { block_size = p.sizes }) do
      s:phase("write", null, { ops = 5, block_size = point.block_size })
    end
    s:compare { where = { block_size = "1M" } }
  end,
}
LUA
printf '%s{name="x", run=function(s) for _ in s:sweep(cm.zip{["osdd/debug_ms"]={"0/0"}}) do end end}\n' "$cmlocal" >"$W/sw.lua"
# phases whose options or names are wrong: refused at the phase's line, in one line
null_phase='s:phase("write", require("cephmark.null"), '
printf '%s{name="ph", run=function(s) %s{thread=32, seconds=1}) end}\n' "$scenario" "$null_phase" >"$W/ph1.lua"
printf '%s{name="ph", params={threads=16}, run=function(s, p) %s{threads=p.threads, seconds=1}) end}\n' "$scenario" "$null_phase" >"$W/ph2.lua"
printf '%s{name="ph", run=function(s) %s{seconds="4X"}) end}\n' "$scenario" "$null_phase" >"$W/ph3.lua"
printf '%s{name="ph", run=function(s) s:phase("raed", require("cephmark.disk"), {path="%s/none", ops=1}) end}\n' "$scenario" "$W" >"$W/ph4.lua"
printf '%s{name="ph", run=function(s) s:phase("sned", require("cephmark.socket"), {host="127.0.0.1", seconds=1}) end}\n' "$scenario" >"$W/ph5.lua"
printf '%s{name="ph", run=function(s) s:workers{n=1, ops=1, fn=print, thread=2} end}\n' "$scenario" >"$W/ph6.lua"
# where each agent works (endpoint =) is for runs with --agents, and is a URL
s3_phase='s:phase("put", require("cephmark.s3").connect{endpoint="http://127.0.0.1:1", access_key="a", secret_key="b"}, '
printf '%s{name="ph", run=function(s) %s{bucket="b", objects=1, endpoint="http://10.0.0.5:8080"}) end}\n' "$scenario" "$s3_phase" >"$W/ag1.lua"
printf '%s{name="ph", run=function(s) %s{bucket="b", objects=1, endpoint="rgw1"}) end}\n' "$scenario" "$s3_phase" >"$W/ag2.lua"
printf '%s{name="ph", run=function(s) %s{bucket="b", objects=1, endpoint={}}) end}\n' "$scenario" "$s3_phase" >"$W/ag3.lua"
# where each agent connects (peer =) is for socket phases with --agents; coordinator = true
# is for a custom function phase
socket_phase='s:phase("rr", require("cephmark.socket"), '
printf '%s{name="ph", run=function(s) %s{peer="10.0.0.11", ops=1}) end}\n' "$scenario" "$socket_phase" >"$W/ag4.lua"
printf '%s{name="ph", run=function(s) %s{peer={"10.0.0.11", 7}, ops=1}) end}\n' "$scenario" "$socket_phase" >"$W/ag5.lua"
printf '%s{name="ph", run=function(s) %s{ops=1, coordinator=true}) end}\n' "$scenario" "$null_phase" >"$W/ag7.lua"
printf '%s{name="ph", run=function(s) s:phase("sum", function() return 1 end, {coordinator="yes"}) end}\n' "$scenario" >"$W/ag8.lua"
# arrivals and think each belong to one kind of loop
printf '%s{name="ph", run=function(s) %s{seconds=1, arrivals="poisson"}) end}\n' "$scenario" "$null_phase" >"$W/ph7.lua"
printf '%s{name="ph", run=function(s) %s{seconds=1, rate=100, think="10ms"}) end}\n' "$scenario" "$null_phase" >"$W/ph8.lua"
printf '%s{name="ph", run=function(s) %s{seconds=1, rate=100, arrivals="bursty"}) end}\n' "$scenario" "$null_phase" >"$W/ph9.lua"
printf '%s{name="ph", run=function(s) %s{seconds=1, think=-1}) end}\n' "$scenario" "$null_phase" >"$W/ph10.lua"
# the shipped scenarios declare bounds on their params: a bad -p is refused before any pool
mkdir "$W/scenarios"
cp "$CEPHMARK_SOURCE_DIR"/scenarios/*.lua "$W/scenarios/"
# a results folder whose per-second series entries are numbers
mkdir "$W/numbers"
printf '{"command": "rados-bench", "result": {"op": "write", "ops": 3, "series": [1, 2, 3]}}\n' >"$W/numbers/results.json"
# results folders for `compare`: scenario g with variant a, another scenario, another
# variant, and a results.json cut short
phase='{"name": "write", "label": "%s", "repetition": %d, "status": "ok", "result": {"ops": 1, "iops": 10}}'
cmp_doc() { printf '{"scenario": {"name": "%s"}, "repeats": 2, "phases": [%s, %s]}\n' "$1" "$(printf "$phase" "$2" 1)" "$(printf "$phase" "$2" 2)"; }
mkdir "$W/cmp-a" "$W/cmp-other" "$W/cmp-c" "$W/cmp-trunc"
cmp_doc g a >"$W/cmp-a/results.json"
cmp_doc h a >"$W/cmp-other/results.json"
cmp_doc g c >"$W/cmp-c/results.json"
cmp_doc g a | head -c 60 >"$W/cmp-trunc/results.json"

. "$CEPHMARK_SOURCE_DIR/tests/lib/bad_input_table.sh"
run_table "$CEPHMARK_SOURCE_DIR/tests/cli/bad_input_table.txt"

checks=$((checks + 1))
[ "$cases" -ge 40 ] || { failures=$((failures + 1)); echo "FAIL: only $cases cases in the table, expected at least 40"; }
echo "bad_input_table.sh: $cases cases"
finish
