# scenarios/rgw-mixed.lua against the local cluster's radosgw, briefly, over S3 and Swift: the
# 30/30/30/5/5 get/put/list/head/delete mix over four prefilled buckets, every kind in the
# per-op results, no errors, no verify failures, no GET or HEAD of an object the phase
# deleted, the bucket index shard count recorded, nothing left behind; bad mixes refused.
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
finish
