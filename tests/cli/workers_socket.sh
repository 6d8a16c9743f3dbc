# cephmark.socket connections, blocking and inside scripted workers, against a
# `cephmark netserver` this test starts on loopback: request/response exchanges, sends to a
# sink and receives from a source go through the socket target's per-request submit inside
# workers, and are counted like a native phase's ops (kinds, bytes, one latency entry per
# op), also in one phase together with a file's I/O; a connection shared by two workers at
# once, an answer that never comes (the connection's timeout), a closed connection and bad
# options get clear messages. No cluster needed.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

printf 'print(require("cephmark.sys").free_port())\n' >"$work/port.lua"
port=$("$CEPHMARK" run "$work/port.lua")
"$CEPHMARK" netserver --port "$port" >"$work/server.log" 2>&1 &
server=$!
wait_until 5 0.05 grep -q "listening" "$work/server.log" ||
  { echo "FAIL: netserver did not start:"; cat "$work/server.log"; exit 1; }

cat >"$work/test.lua" <<'LUA'
local socket = require "cephmark.socket"
local workers = require "cephmark.workers"
local t = require "cephmark.test"
local port = tonumber(os.getenv("NET_PORT"))

-- blocking, outside workers
local conn = assert(socket.connect { host = "127.0.0.1", port = port, request_size = 100,
  response_size = 300 })
t.eq(#assert(conn:request()), 300, "a blocking request gets the response size")
t.eq(#assert(conn:request(string.rep("q", 100))), 300, "with the caller's request bytes too")
assert(conn:send(string.rep("s", 100)))
t.eq(#assert(conn:receive(300)), 300, "send then receive is the same exchange")
conn:close()

-- one connection per worker: exchanges, counted like rr ops
local N, PER = 4, 25
local conns = {}
for i = 1, N do
  conns[i] = assert(socket.connect { host = "127.0.0.1", port = port, request_size = 64,
    response_size = 1000 })
end
local wrong = 0
local r = workers.run { n = N, fn = function(w)
  for _ = 1, PER do
    if #conns[w.id]:request(string.rep("x", 64)) ~= 1000 then wrong = wrong + 1 end
  end
  for _ = 1, PER do
    assert(conns[w.id]:send(string.rep("y", 64)))
    if #conns[w.id]:receive(1000) ~= 1000 then wrong = wrong + 1 end
  end
end }
t.eq(r.errors, 0, "no failed ops")
t.eq(wrong, 0, "every response has the response size")
t.eq(r.ops, 3 * N * PER, "every call was one op")
t.eq(r.writes, N * PER, "sends counted as writes")
t.eq(r.reads, N * PER, "receives counted as reads")
t.eq(r.bytes, N * PER * (64 + 1000) * 2, "bytes of every exchange, send and receive")
t.eq(r.lat.count, 3 * N * PER, "one latency per op")

-- one phase on two targets at once, both completing on the loop (the socket's epoll, the
-- file's io_uring): the phase waits on both
local disk = require "cephmark.disk"
local file = assert(disk.open(os.getenv("DISK_DIR") .. "/mixed", { write = true, remove = true }))
local mixed_ok = 0
local mixed = workers.run { n = 3, fn = function(w)
  for i = 1, 20 do
    if w.id == 3 then
      assert(file:write(i * 4096, string.rep("d", 4096)))
      if file:read(i * 4096, 4096) == string.rep("d", 4096) then mixed_ok = mixed_ok + 1 end
    elseif #conns[w.id]:request(string.rep("x", 64)) == 1000 then
      mixed_ok = mixed_ok + 1
    end
  end
end }
file:close()
t.eq(mixed.errors, 0, "mixed targets: no failed ops")
t.eq(mixed.ops, 2 * 20 + 2 * 20, "mixed targets: every call was one op")
t.eq(mixed_ok, 3 * 20, "mixed targets: every answer and read was right")
t.eq(mixed.lat.count, 80, "mixed targets: one latency per op")

-- a sink and a source
local sink = assert(socket.connect { host = "127.0.0.1", port = port, mode = "send" })
local source = assert(socket.connect { host = "127.0.0.1", port = port, mode = "recv",
  request_size = 4096 })
local moved = workers.run { n = 2, fn = function(w)
  for _ = 1, 10 do
    if w.id == 1 then assert(sink:send(string.rep("z", 8192)))
    else assert(#source:receive(5000) == 5000) end
  end
end }
t.eq(moved.errors, 0, "sink and source: no failed ops")
t.eq(moved.bytes, 10 * 8192 + 10 * 5000, "sink and source: bytes")
t.raises(function() sink:receive(1) end, "only sends", "a sink connection does not receive")
t.raises(function() source:send("x") end, "only receives", "a source connection does not send")
t.raises(function() source:request() end, "mode rr", "request needs rr")

-- two workers on one connection: while worker 1 waits for an answer that never comes (no
-- request was sent), worker 2's request is refused; worker 1's receive then fails at the
-- connection's timeout. Both count as failed ops.
local lone = assert(socket.connect { host = "127.0.0.1", port = port, request_size = 64,
  response_size = 1000, timeout = 0.5 })
local waiting, seen = false, {}
local busy = workers.run { n = 2, fn = function(w)
  if w.id == 1 then
    waiting = true
    seen[1] = { lone:receive(1000) }
  else
    while not waiting do w:op() end
    seen[2] = { lone:request(string.rep("x", 64)) }
  end
end }
t.eq(busy.errors, 2, "both failed")
t.eq(seen[2][1], nil, "the second worker's request is refused")
t.match(seen[2][2], "busy with another worker's request", "saying why")
t.eq(seen[2][3], -16, "with EBUSY")
t.eq(seen[1][1], nil, "a receive with no answer fails")
t.match(seen[1][2], "not done within 0.5 s", "at the connection's timeout")
t.eq(seen[1][3], -110, "with ETIMEDOUT")
lone:close()
local shared = conns[1]
t.raises(function() workers.run { n = 1, fn = function()
  shared:request(string.rep("x", 64)); shared:close()
end } end, "scripted workers are using this connection", "no close inside a phase")
t.raises(function() shared:request("short") end, "request_size %(64%)", "a request has its size")
for i = 1, N do conns[i]:close() end
t.raises(function() shared:request() end, "connection is closed", "a closed connection says so")
sink:close()
source:close()

local none, message, code = socket.connect { host = "127.0.0.1", port = 1 }
t.eq(none, nil, "a refused connection returns nil")
t.match(message, "connection refused", "saying so")
t.ok(code < 0, "with an errno")
t.raises(function() socket.connect { host = "127.0.0.1", port = port, respons_size = 1 } end,
  "respons_size", "unknown options are named")
t.raises(function() socket.connect { port = port } end, "host is required", "host is required")
return t.done()
LUA
NET_PORT=$port DISK_DIR=$work run_cli 0 run "$work/test.lua"
grep -q "^test.lua: [0-9]* checks, 0 failed$" "$out_file" || { fail "the Lua checks failed"; cat "$out_file" "$err_file"; }
cat "$out_file"
finish
