# cephmark.socket against `cephmark netserver`: on loopback (bandwidth both ways, several
# streams, request/response latency, the receiver's count equal to what was sent), between
# two network namespaces joined by a veth pair, and bad input (a port in use, a refused
# connection, a bad option). Needs no cluster; the namespaces need root.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
ns_a="cmtest-$$-a"
ns_b="cmtest-$$-b"
servers=()
cleanup() {
  local pid
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

printf 'print(require("cephmark.sys").free_port())\n' >"$work/port.lua"
port=$("$CEPHMARK" run "$work/port.lua")

# start_server LOG [PREFIX...]: a netserver on $port in the background, waited for
start_server() {
  local log=$1
  shift
  "$@" "$CEPHMARK" netserver --port "$port" >"$log" 2>&1 &
  servers+=($!)
  for _ in $(seq 100); do
    grep -q "listening" "$log" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "FAIL: netserver did not start:"; cat "$log"
  return 1
}
start_server "$work/server.log" || exit 1
checks=$((checks + 1))
grep -qx "netserver: listening on 0.0.0.0:$port" "$work/server.log" ||
  { failures=$((failures + 1)); echo "FAIL: no 'listening' line"; cat "$work/server.log"; }

cat >"$work/client.lua" <<'EOF'
local p = ...
local socket = require "cephmark.socket"
local t = require "cephmark.test"
local host, port = p.host, tonumber(p.port)

local s = socket.bench { host = host, port = port, seconds = 1 }
t.eq(s.errors, 0, "send: no errors")
t.ok(s.bytes > 0 and s.bits_per_second > 0, "send: bytes moved")
t.eq(s.server.bytes, s.bytes, "send: the server received exactly what was sent")
t.ok(s.receiver_bits_per_second > 0, "send: receiver's bits/s")
t.ok(math.type(s.retransmits) == "integer", "send: retransmits from TCP_INFO")
t.ok(#s.series >= 1 and s.series[1].bits_per_second > 0, "send: per-second bits/s")
t.ok(s.series[1].retransmits ~= nil, "send: per-second retransmits")

local r = socket.bench { host = host, port = port, seconds = 1, direction = "recv", buffer_size = "64K" }
t.eq(r.errors, 0, "recv: no errors")
t.ok(r.bytes > 0, "recv: bytes received")
t.ok(r.server.bytes >= r.bytes, "recv: the server sent at least what arrived")
t.eq(r.direction, "recv", "recv: direction recorded")

local m = socket.bench { host = host, port = port, seconds = 1, streams = 4 }
t.eq(m.streams, 4, "4 streams")
t.eq(m.server.bytes, m.bytes, "4 streams: all received")

local rr = socket.bench { host = host, port = port, mode = "rr", ops = 2000, request_size = 64, response_size = "4K" }
t.eq(rr.ops, 2000, "rr: 2000 round trips")
t.ok(rr.lat.p50 > 0 and rr.lat.p99 >= rr.lat.p50, "rr: latency percentiles")
t.eq(rr.server.bytes, 2000 * (64 + 4096), "rr: the server echoed every request")

t.raises(function() socket.bench { host = host, port = port, direction = "sideways" } end,
  "unknown direction 'sideways' (expected send or recv)", "bad direction")
t.raises(function() socket.bench { port = port } end, "host is required", "no host")
t.raises(function() socket.bench { host = host, port = port, buffersize = "1M" } end,
  "socket.bench: unknown option 'buffersize' (expected one of buffer_size,", "a misspelt option")
t.raises(function() socket.bench { host = host, port = port, streams = 1000 } end,
  "streams must be between 0 and 256, got 1000", "too many streams")
return t.done()
EOF

run_cli 0 run "$work/client.lua" -p host=127.0.0.1 -p port="$port"
expect_stdout "client.lua: [0-9]+ checks, 0 failed"
checks=$((checks + 1))
grep -qE "^netserver: test [0-9a-f]{16}: 4 streams, [0-9]+ bytes" "$work/server.log" ||
  { failures=$((failures + 1)); echo "FAIL: the server logged no 4-stream test"; cat "$work/server.log"; }

# a port in use
run_cli 2 netserver --port "$port"
expect_stderr_line "cephmark: netserver: cannot listen on 0.0.0.0:$port: the port is in use (another netserver or iperf3?); pick another with --port"
expect_stderr_lines 1

# nobody listening
refused=$("$CEPHMARK" run "$work/port.lua")
printf 'require("cephmark.socket").bench { host = "127.0.0.1", port = %s, seconds = 1 }\n' "$refused" >"$work/refused.lua"
run_cli 2 run "$work/refused.lua"
expect_stderr_line "cephmark: socket.bench: cannot connect to 127.0.0.1:$refused: connection refused (is \`cephmark netserver\` running there?)"
expect_stderr_lines 1

# bad command lines
run_cli 2 netserver --port 70000
expect_stderr_line "cephmark: netserver: --port must be between 0 and 65535, got 70000"
run_cli 2 netserver --frobnicate
expect_stderr_line "cephmark: netserver: unknown option '--frobnicate' (see \`cephmark netserver --help\`)"

# a server that goes away mid-run: each stream fails once and the run ends early
"$CEPHMARK" netserver --port "$refused" >"$work/dying.log" 2>&1 &
dying=$!
servers+=("$dying")
for _ in $(seq 100); do grep -q listening "$work/dying.log" && break; sleep 0.05; done
printf 'local r = require("cephmark.socket").bench { host = "127.0.0.1", port = %s, streams = 2, seconds = 20 }\nprint(string.format("errors=%%d early=%%s", r.errors, tostring(r.elapsed < 10)))\n' "$refused" >"$work/dying.lua"
(sleep 1; kill "$dying") &
run_cli 0 run "$work/dying.lua"
expect_stdout "^errors=2 early=true$"

# --once: the server exits after one test
kill "${servers[0]}" 2>/dev/null
wait "${servers[0]}" 2>/dev/null
"$CEPHMARK" netserver --port "$port" --once >"$work/once.log" 2>&1 &
once=$!
servers+=("$once")
for _ in $(seq 100); do grep -q listening "$work/once.log" && break; sleep 0.05; done
printf 'local r = require("cephmark.socket").bench { host = "127.0.0.1", port = %s, ops = 100 }\nprint("ops=" .. r.ops)\n' "$port" >"$work/once.lua"
run_cli 0 run "$work/once.lua"
expect_stdout "^ops=100$"
for _ in $(seq 100); do kill -0 "$once" 2>/dev/null || break; sleep 0.05; done
checks=$((checks + 1))
if kill -0 "$once" 2>/dev/null; then failures=$((failures + 1)); echo "FAIL: netserver --once still runs"; fi

# two network namespaces joined by a veth pair
if [ "$(id -u)" = 0 ] && ip netns add "$ns_a" 2>/dev/null; then
  ip netns add "$ns_b"
  ip link add "cmv$$a" netns "$ns_a" type veth peer name "cmv$$b" netns "$ns_b"
  ip -n "$ns_a" addr add 10.211.7.1/24 dev "cmv$$a"
  ip -n "$ns_b" addr add 10.211.7.2/24 dev "cmv$$b"
  ip -n "$ns_a" link set "cmv$$a" up
  ip -n "$ns_b" link set "cmv$$b" up
  ip -n "$ns_a" link set lo up
  ip -n "$ns_b" link set lo up
  start_server "$work/ns-server.log" ip netns exec "$ns_a" || exit 1
  last_command="socket client in $ns_b -> netserver in $ns_a"
  ip netns exec "$ns_b" "$CEPHMARK" run "$work/client.lua" -p host=10.211.7.1 -p port="$port" \
    >"$out_file" 2>"$err_file" </dev/null
  last_status=$?
  checks=$((checks + 1))
  [ "$last_status" = 0 ] || { failures=$((failures + 1)); echo "FAIL: namespaces: exit $last_status"; cat "$out_file" "$err_file"; }
  expect_stdout "client.lua: [0-9]+ checks, 0 failed"
  # from the host's namespace, 10.211.7.1 is not reachable: no route, no hang
  printf 'require("cephmark.socket").bench { host = "10.211.7.1", port = %s, seconds = 1, connect_timeout = 2 }\n' "$port" >"$work/unreachable.lua"
  start=$(date +%s.%N)
  "$CEPHMARK" run "$work/unreachable.lua" >"$out_file" 2>"$err_file" </dev/null
  last_status=$?
  checks=$((checks + 1))
  [ "$last_status" = 2 ] || { failures=$((failures + 1)); echo "FAIL: unreachable peer: exit $last_status"; }
  expect_stderr "^cephmark: socket.bench: cannot connect to 10.211.7.1:$port: "
  expect_faster_than 8 "$start"
else
  echo "no network namespaces here (needs root): namespace test skipped"
fi
finish
