# scenarios/swift-bench.lua against radosgw: the put, get and delete phases run with no
# errors, the results folder holds them with latency and time to first byte, the containers
# are gone afterwards, and no key is printed or written.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

check() {
  checks=$((checks + 1))
  if ! eval "$1"; then failures=$((failures + 1)); echo "FAIL: $2 ($1)"; fi
}

creds=$(dirname "$CEPH_CONF")/credentials.conf
key=$(awk -F' = ' '/^\[/{s=$0} s=="[swift]" && $1=="key"{print $2}' "$creds")

run_cli 0 run "$CEPHMARK_SOURCE_DIR/scenarios/swift-bench.lua" -p num_objects=100 -p num_gets=50 \
  -p concurrency=16 -p num_containers=3 -p progress=false -o "$work/r"
expect_stdout "^  = put: 100 ops in .* 0 errors$"
expect_stdout "^  = get: 50 ops in .* 0 errors$"
expect_stdout "^  = delete: 100 ops in .* 0 errors$"
check '[ -s "$work/r/results.json" ]' "results.json written"
if command -v jq >/dev/null; then
  check 'jq -e "[.. | objects | select(.ttfb? != null)] | length >= 1" "$work/r/results.json" >/dev/null' \
    "results keep the time to first byte"
fi
check '! grep -rqF -- "$key" "$work/r" "$out_file" "$err_file"' "no key in output or results"
cat >"$work/left.lua" <<'LUA'
local conn <close> = require("cephmark.rgw").swift_connect {}
local n = 0
for _, name in ipairs(conn:list_containers()) do
  if name:find("^cephmark_swift_bench_") then n = n + 1 end
end
print("left=" .. n)
LUA
"$CEPHMARK" run "$work/left.lua" >"$work/left" 2>&1
check 'grep -qx "left=0" "$work/left"' "the scenario's containers are gone ($(cat "$work/left"))"

finish
