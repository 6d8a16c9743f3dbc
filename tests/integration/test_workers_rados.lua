-- Scripted workers against the real cluster: blocking-style pool calls inside workers are
-- submitted asynchronously, measured like native ops, and return what blocking calls do.
local connection = require "cephmark.connection"
local workers = require "cephmark.workers"
local t = require "cephmark.test"

local cluster <close> = connection.connect()
local name = "cephmark-test-workers"
assert(cluster:pool_create { name = name, size = 3 })
local pool <close> = assert(cluster:pool(name))

local data = string.rep("w", 4096)
local mismatches = 0
local r = workers.run { n = 8, seconds = 2, fn = function(w)
  local i = 0
  while true do
    i = i + 1
    local object = string.format("w%d_%d", w.id, i % 20)
    assert(pool:write_full(object, data))
    local got = assert(pool:read(object, 4096, 0))
    if got ~= data then mismatches = mismatches + 1 end
    local size = assert(pool:stat(object))
    if size ~= 4096 then mismatches = mismatches + 1 end
  end
end }
t.ok(r.ops > 100, "workers made progress")
t.eq(r.errors, 0, "no failed ops")
t.eq(mismatches, 0, "reads in workers return the written data")
t.ok(r.lat.p50 > 0.00001, "latencies are real round trips")
t.ok(r.bytes > 0 and r.bytes % 4096 == 0, "bytes counted for reads and writes")

-- a fixed amount of work: every call is one op of its kind, with its bytes and one latency
local fixed = workers.run { n = 4, fn = function(w)
  for i = 1, 5 do assert(pool:write(string.format("f%d_%d", w.id, i), data)) end
  for i = 1, 5 do assert(pool:read(string.format("f%d_%d", w.id, i), 4096, 0) == data) end
  for i = 1, 5 do assert(pool:stat(string.format("f%d_%d", w.id, i)) == 4096) end
  for i = 1, 5 do assert(pool:remove(string.format("f%d_%d", w.id, i))) end
end }
t.eq(fixed.errors, 0, "fixed work: no failed ops")
t.eq(fixed.ops, 80, "fixed work: one op per call")
t.eq(fixed.writes, 20, "fixed work: writes")
t.eq(fixed.reads, 20, "fixed work: reads")
t.eq(fixed.bytes, 40 * 4096, "fixed work: bytes of reads and writes")
t.eq(fixed.lat.count, 80, "fixed work: one latency per op")

-- failures come back as nil, message, code, and count as failed ops
local seen
local f = workers.run { n = 1, fn = function()
  seen = { pool:read("no-such-object", 16, 0) }
end }
t.eq(seen[1], nil, "a failed read returns nil")
t.eq(seen[2], "read no-such-object: No such file or directory", "with the object named")
t.eq(seen[3], -2, "and the errno")
t.eq(f.errors, 1, "the failed op is counted")

-- cleanup through workers too
local removed = workers.run { n = 4, fn = function(w)
  for i = 0, 19 do
    for id = w.id, 8, 4 do pool:remove(string.format("w%d_%d", id, i)) end
  end
end }
t.eq(#pool:objects(), 0, "workers removed every object")
t.ok(removed.ops >= 160, "every remove was an op")
t.raises(function() workers.run { n = 1, fn = function() pool:read("x") end } end,
  "pool:read in a worker needs a length", "reads in workers need a length")
pool:close()
assert(cluster:pool_delete(name))
return t.done()
