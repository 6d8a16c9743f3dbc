# scenarios/rgw-mixed.lua against the local cluster's radosgw, briefly, over S3 and Swift: the
# 30/30/30/5/5 get/put/list/head/delete mix over four prefilled buckets, every kind in the
# per-op results, no errors, no verify failures, no GET or HEAD of an object the phase
# deleted, the bucket index shard count recorded, nothing left behind; bad mixes refused; a
# multipart put interrupted by SIGINT leaves no upload in progress behind.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT
scenario=$CEPHMARK_SOURCE_DIR/scenarios/rgw-mixed.lua

for api in s3 swift; do
  run_cli 0 run "$scenario" -p api="$api" -p buckets=4 -p objects=120 -p seconds=2 -p threads=8 \
    -p page_size=20 -p progress=false -o "$work/$api"
  expect_stdout "^\[2\] mixed placement=default"
  expect_stdout "^    list +[0-9]+ ops"
  json_check "$work/$api" '#r.phases == 2 and r.complete == true' "$api: prefill, mixed"
  json_check "$work/$api" 'r.phases[2].result.errors == 0 and r.phases[2].result.verify_failures == 0' "$api: the mix verified, no errors"
  json_check "$work/$api" 'r.phases[2].result.misses == 0' "$api: no GET or HEAD of a deleted object"
  json_check "$work/$api" 'r.phases[2].result.listings > 0 and r.phases[2].result.names_listed > 0' "$api: listings checked"
  json_check "$work/$api" 'math.type(r.phases[2].result.index_shards) == "integer" and r.phases[2].result.index_shards >= 1' "$api: index shards recorded"
  for kind in get put list head delete; do
    json_check "$work/$api" "r.phases[2].result.by_op.$kind.ops > 0" "$api: per-op result of $kind"
  done
done
# nothing left: no bucket of the scenario's
cat >"$work/left.lua" <<'LUA'
local conn = require("cephmark.rgw").s3_connect {}
for _, name in ipairs(conn:list_buckets()) do
  if name:match("^cephmark%-mixed%-") then error("left behind: " .. name) end
end
LUA
run_cli 0 run "$work/left.lua"

run_cli 2 run "$scenario" -p mix=30,30,30 -p seconds=1
expect_stderr_line "cephmark: mix: give 5 ratios (get, put, list, head, delete), got 3"
run_cli 2 run "$scenario" -p mix=0,0,0,0,0 -p objects=10 -p buckets=1 -p seconds=1
expect_stderr "mix: the ratios sum to 0"

# ---- multipart uploads interrupted: the ones in flight finish (or are aborted), none stay -----
cat >"$work/mp.lua" <<'LUA'
local conn = require("cephmark.rgw").s3_connect {}
assert(conn:create_bucket("cephmark-mp-interrupt"))
conn:bench { op = "put", bucket = "cephmark-mp-interrupt", objects = 400, size = "6M", threads = 4,
  seconds = 20, prefix = "mp", multipart = { part_size = "5M", parts_in_flight = 2 } }
LUA
"$CEPHMARK" run "$work/mp.lua" >"$out_file" 2>"$err_file" &
pid=$!
sleep 3
kill -INT "$pid"
wait "$pid"
status=$?
checks=$((checks + 1))
# a plain script goes on after an interrupted bench (the bench's result says so), so 0 or 130
case $status in 0 | 130) ;; *) failures=$((failures + 1)); echo "FAIL: interrupted multipart put exited $status" ;; esac
cat >"$work/mp-left.lua" <<'LUA'
local conn = require("cephmark.rgw").s3_connect {}
local uploads = conn:list_uploads("cephmark-mp-interrupt")
local names = conn:list("cephmark-mp-interrupt")
for _, name in ipairs(names) do assert(conn:delete("cephmark-mp-interrupt", name)) end
assert(conn:delete_bucket("cephmark-mp-interrupt"))
print("uploads left " .. #uploads .. ", objects " .. #names)
LUA
run_cli 0 run "$work/mp-left.lua"
expect_stdout "^uploads left 0, objects [1-9][0-9]?[0-9]?$"
checks=$((checks + 1))
grep -q "objects 400$" "$out_file" && { failures=$((failures + 1)); echo "FAIL: the put was not interrupted"; }
finish
