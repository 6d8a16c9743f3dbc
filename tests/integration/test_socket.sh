# cephmark.socket against `cephmark netserver`: on loopback (bandwidth both ways, several
# streams, request/response latency, the receiver's count equal to what was sent), between
# two network namespaces joined by a veth pair, and bad input (a port in use, a refused
# connection, a bad option). The server's bounds: it listens on 127.0.0.1 unless told
# otherwise, 16 hellos asking for 64 MiB buffers keep its memory under its cap, and with a
# token a client without it (or with a wrong one) is refused before anything is allocated.
# Tokens come from files and the environment, never a command line. Needs no cluster; the
# namespaces need root.
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

# start_server LOG [PREFIX...]: a netserver on $port in the background, waited for;
# $server_args are added to its command line
server_args=()
start_server() {
  local log=$1
  shift
  "$@" "$CEPHMARK" netserver --port "$port" "${server_args[@]}" >"$log" 2>&1 &
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
grep -qx "netserver: listening on 127.0.0.1:$port" "$work/server.log" ||
  { failures=$((failures + 1)); echo "FAIL: no 'listening' line"; cat "$work/server.log"; }
# the default bind is loopback: the kernel's table of listening sockets says 127.0.0.1
checks=$((checks + 1))
listen=$(awk -v p="$(printf '%04X' "$port")" '$4 == "0A" && $2 ~ (":" p "$") { print $2 }' /proc/net/tcp)
[ "$listen" = "0100007F:$(printf '%04X' "$port")" ] ||
  { failures=$((failures + 1)); echo "FAIL: netserver listens on '$listen' (/proc/net/tcp), expected 127.0.0.1"; }

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
expect_stderr_line "cephmark: netserver: cannot listen on 127.0.0.1:$port: the port is in use (another netserver or iperf3?); pick another with --port"
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

# ---- the server's bounds ---------------------------------------------------------------
# hellos.py PORT PID COUNT SIZE [TOKEN_FILE]: COUNT raw hellos asking the server to send
# SIZE-byte buffers (the client never reads them), held open for 2 s; prints each answer's
# status and how much the server's peak memory (VmHWM) grew from its size before them
cat >"$work/hellos.py" <<'PY'
import socket, struct, sys, time
port, pid, count, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
token = open(sys.argv[5], "rb").read().strip() if len(sys.argv) > 5 else b""
def status_kib(field):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(field + ":"):
            return int(line.split()[1])
before = status_kib("VmRSS")
conns, statuses = [], []
for i in range(count):
    hello = bytearray(64)
    struct.pack_into("<I", hello, 0, 0x544E4D43)
    hello[4] = 1
    struct.pack_into("<I", hello, 8, 2)  # SOURCE: the server sends buffers of `size` bytes
    struct.pack_into("<Q", hello, 16, 0xC0FFEE)
    struct.pack_into("<IIII", hello, 24, i, size, 0, len(token))
    c = socket.create_connection(("127.0.0.1", port))
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.sendall(bytes(hello) + token)
    answer = b""
    while len(answer) < 16:
        chunk = c.recv(16 - len(answer))
        if not chunk:
            break
        answer += chunk
    statuses.append(struct.unpack_from("<I", answer, 4)[0] if len(answer) == 16 else -1)
    conns.append(c)
time.sleep(2)
grew = status_kib("VmHWM") - before
print("statuses " + " ".join(str(s) for s in statuses))
print("grew %d KiB" % grew)
PY
# expect_hellos STATUSES MAX_GROWTH_MIB: checks the last hellos.py output
expect_hellos() {
  checks=$((checks + 1))
  local got grew
  got=$(sed -n 's/^statuses //p' "$work/hellos.out")
  grew=$(sed -n 's/^grew \([0-9-]*\) KiB$/\1/p' "$work/hellos.out")
  echo "hellos: statuses $got; the server's peak memory grew by $((${grew:-0} / 1024)) MiB"
  if [ "$got" != "$1" ] || [ -z "$grew" ] || [ "$grew" -ge $(($2 * 1024)) ]; then
    failures=$((failures + 1)); echo "FAIL: hellos: expected statuses '$1' and growth under $2 MiB"; cat "$work/hellos.out"
  fi
}
repeat() { local out=; for _ in $(seq "$2"); do out="$out $1"; done; echo "${out# }"; }
sixty_four_mib=$((64 << 20))

# 16 unauthenticated hellos asking for 64 MiB each: every connection gets at most 256 KiB,
# so the server stays far under its 64 MiB cap (it touched 1 GiB before the cap)
port=$("$CEPHMARK" run "$work/port.lua")
start_server "$work/bounds.log" || exit 1
python3 "$work/hellos.py" "$port" "${servers[-1]}" 16 "$sixty_four_mib" >"$work/hellos.out" 2>&1
expect_hellos "$(repeat 0 16)" 64

# a cap of 1 MiB: four 256 KiB connections fit, the fifth is refused (ENOBUFS, 105) and
# the server says so
port=$("$CEPHMARK" run "$work/port.lua")
server_args=(--max-memory 1M)
start_server "$work/capped.log" || exit 1
server_args=()
python3 "$work/hellos.py" "$port" "${servers[-1]}" 5 "$sixty_four_mib" >"$work/hellos.out" 2>&1
expect_hellos "0 0 0 0 105" 8
checks=$((checks + 1))
grep -q "^netserver: refused 127.0.0.1:[0-9]*: the connections hold the 1 MiB memory cap$" "$work/capped.log" ||
  { failures=$((failures + 1)); echo "FAIL: the capped server did not log the refusal"; cat "$work/capped.log"; }

# a token: a hello without it or with a wrong one is refused (EACCES, 13) before anything
# is allocated for it; socket.bench with the right one (a file, or the environment) works
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
printf 'not-the-token\n' >"$work/wrong-token"
port=$("$CEPHMARK" run "$work/port.lua")
server_args=(--token-file "$work/token")
start_server "$work/token.log" || exit 1
server_args=()
checks=$((checks + 1))
grep -qx "netserver: listening on 127.0.0.1:$port (token required)" "$work/token.log" ||
  { failures=$((failures + 1)); echo "FAIL: the token server's listening line"; cat "$work/token.log"; }
python3 "$work/hellos.py" "$port" "${servers[-1]}" 16 "$sixty_four_mib" >"$work/hellos.out" 2>&1
expect_hellos "$(repeat 13 16)" 2
python3 "$work/hellos.py" "$port" "${servers[-1]}" 4 "$sixty_four_mib" "$work/wrong-token" >"$work/hellos.out" 2>&1
expect_hellos "13 13 13 13" 2
checks=$((checks + 1))
if [ "$(grep -c "^netserver: refused 127.0.0.1:[0-9]*: no token$" "$work/token.log")" != 16 ] ||
  [ "$(grep -c "^netserver: refused 127.0.0.1:[0-9]*: a wrong token$" "$work/token.log")" != 4 ]; then
  failures=$((failures + 1)); echo "FAIL: the token server's refusals"; cat "$work/token.log"
fi
printf 'require("cephmark.socket").bench { host = "127.0.0.1", port = %s, ops = 10 }\n' "$port" >"$work/no-token.lua"
run_cli 2 run "$work/no-token.lua"
expect_stderr_line "cephmark: socket.bench: 127.0.0.1:$port refused the token (none was given): give the netserver's token with token_file = or \$CEPHMARK_NET_TOKEN"
expect_stderr_lines 1
printf 'local p = ...\nlocal r = require("cephmark.socket").bench { host = "127.0.0.1", port = %s, ops = 10, token_file = p.token }\nprint("ops=" .. r.ops)\n' "$port" >"$work/token.lua"
run_cli 2 run "$work/token.lua" -p token="$work/wrong-token"
expect_stderr_line "cephmark: socket.bench: 127.0.0.1:$port refused the token (a different one): give the netserver's token with token_file = or \$CEPHMARK_NET_TOKEN"
run_cli 0 run "$work/token.lua" -p token="$work/token"
expect_stdout "^ops=10$"
CEPHMARK_NET_TOKEN=$(cat "$work/token") run_cli 0 run "$work/no-token.lua"
run_cli 2 run "$work/token.lua" -p token="$work/missing"
expect_stderr_line "cephmark: socket.bench: cannot read the token file $work/missing: No such file or directory"

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
  server_args=(--bind 0.0.0.0)
  start_server "$work/ns-server.log" ip netns exec "$ns_a" || exit 1
  server_args=()
  checks=$((checks + 1))
  grep -qx "netserver: no token: anyone who can reach 0.0.0.0:$port may use this server (see --token-file)" "$work/ns-server.log" ||
    { failures=$((failures + 1)); echo "FAIL: no warning for a server open to the network without a token"; cat "$work/ns-server.log"; }
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
