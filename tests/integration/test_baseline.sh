# scenarios/baseline.lua end to end against the local cluster: a disk baseline on a folder, a
# network baseline to a netserver on loopback that requires a token (given to the scenario
# with -p net_token_file), rados write/seq/rand, and the table of the
# cluster's results as fractions of the baselines with the seed's caveats; then bad input
# (a path that does not exist, a peer refusing the connection).
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d "$CEPHMARK_BUILD_DIR/test-baseline.XXXXXX")
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT
scenario="$CEPHMARK_SOURCE_DIR/scenarios/baseline.lua"

printf 'print(require("cephmark.sys").free_port())\n' >"$work/port.lua"
port=$("$CEPHMARK" run "$work/port.lua")
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
"$CEPHMARK" netserver --port "$port" --token-file "$work/token" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q listening "$work/server.log" && break; sleep 0.05; done
mkdir "$work/disk"

run_cli 0 run "$scenario" -p paths="$work/disk" -p peers="127.0.0.1:$port" -p net_token_file="$work/token" -p disk_size=16M \
  -p disk_seconds=1 -p net_seconds=1 -p seconds=2 -p block_size=1M -p threads=4 -p size=2 \
  -p progress=false -o "$work/results"
expect_stdout "^\[1\] disk-write disk=$work/disk "
expect_stdout "^  dd: [0-9]+ bytes \\([0-9.]+ [kMG]B, [0-9.]+ [KMG]iB\\) copied, [0-9.e-]+ s, [0-9.]+ [kMG]B/s$"
expect_stdout "^\[4\] net-send peer=127.0.0.1:$port "
expect_stdout "^\[7\] write bench "
expect_stdout "^cluster as a fraction of the baselines"
expect_stdout "^write +[0-9.]+ +[0-9.]+ \([0-9.]+/2\) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  replication, journal, fsync, metadata, latency$"
expect_stdout "^seq +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  metadata, latency$"
expect_stdout "^rand +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  metadata, latency$"
expect_stdout "^latency p50 \(ms\): cluster rand [0-9.]+; disk rand [0-9.]+; network round trip [0-9.]+$"
for caveat in replication journal fsync metadata latency; do
  expect_stdout "^  $caveat +[A-Za-z]"
done
checks=$((checks + 1))
if ls "$work/disk"/cephmark-baseline-* >/dev/null 2>&1; then
  failures=$((failures + 1)); echo "FAIL: the disk test file was left in $work/disk"
fi
# the comparison is in the results, with every row's numbers
cat >"$work/check.lua" <<EOF
local json = require "cephmark.json"
local t = require "cephmark.test"
local doc = json.decode(require("cephmark.sys").read_file("$work/results/results.json"))
local last = doc.phases[#doc.phases]
t.eq(last.name, "baseline-comparison", "the comparison is the last phase")
t.eq(#last.value.rows, 3, "three rows")
for _, row in ipairs(last.value.rows) do
  t.ok(row.cluster_mib > 0 and row.disk_ceiling_mib > 0 and row.net_ceiling_mib > 0, row.phase .. ": figures")
  t.ok(math.abs(row.fraction - row.cluster_mib / math.min(row.disk_ceiling_mib, row.net_ceiling_mib)) < 1e-9,
    row.phase .. ": fraction of the lower ceiling")
end
t.eq(last.value.rows[1].disk_ceiling_mib, doc.phases[1].result.bandwidth_mib / 2, "write ceiling: disk write / pool size")
t.eq(#last.value.caveats, 5, "the five caveats")
return t.done()
EOF
run_cli 0 run "$work/check.lua"
expect_stdout "check.lua: [0-9]+ checks, 0 failed"

# bad input
run_cli 2 run "$scenario" -p paths="$work/no-such-folder" -p rados=false -p progress=false -o "$work/r2"
expect_stderr_line "cephmark: paths: $work/no-such-folder does not exist (give a folder, a file or a block device)"
refused=$("$CEPHMARK" run "$work/port.lua")
run_cli 2 run "$scenario" -p paths="$work/disk" -p peers="127.0.0.1:$refused" -p rados=false -p disk_size=4M \
  -p disk_seconds=0.2 -p progress=false -o "$work/r3"
# a phase's failure to start names the scenario's line of that phase
send_line=$(grep -n 'return s:phase("net-send", socket, send), ' "$scenario" | cut -d: -f1)
expect_stderr_line "cephmark: $scenario:$send_line: s:phase('net-send'): socket.bench: cannot connect to 127.0.0.1:$refused: connection refused (is \`cephmark netserver\` running there?)"
# the netserver wants its token; without -p net_token_file (nor $CEPHMARK_NET_TOKEN) it refuses
run_cli 2 run "$scenario" -p paths="$work/disk" -p peers="127.0.0.1:$port" -p rados=false -p disk_size=4M \
  -p disk_seconds=0.2 -p progress=false -o "$work/r4"
expect_stderr_line "cephmark: $scenario:$send_line: s:phase('net-send'): socket.bench: 127.0.0.1:$port refused the token (none was given): give the netserver's token with token_file = or \$CEPHMARK_NET_TOKEN"
finish
