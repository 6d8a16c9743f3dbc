-- Scripted workers on an rbd image of the local cluster: image:write and image:read inside
-- workers go through the rbd target's per-request submit, complete through the image's
-- event fd on the engine's loop, and are counted like a native phase's ops (kinds, bytes,
-- one latency entry per op); reads return what the workers wrote; the image cannot be
-- closed while a phase uses it.
local connection = require "cephmark.connection"
local rbd = require "cephmark.rbd"
local workers = require "cephmark.workers"
local t = require "cephmark.test"

local POOL = "cephmark-test-workers-rbd"
local cluster <close> = connection.connect()
if cluster:pool_exists(POOL) then assert(cluster:pool_delete(POOL)) end
assert(cluster:pool_create { name = POOL, size = 3, pg_num = 8 })
local pool <close> = assert(cluster:pool(POOL))
assert(rbd.create(pool, "img", { size = "16M" }))
local image = assert(rbd.open(pool, "img"))

local N, PER, BLOCK = 4, 8, 4096
local mismatches = 0
local r = workers.run { n = N, fn = function(w)
  for i = 0, PER - 1 do
    local offset = ((w.id - 1) * PER + i) * BLOCK
    assert(image:write(offset, string.rep(string.char(64 + w.id), BLOCK)))
  end
  for i = 0, PER - 1 do
    local offset = ((w.id - 1) * PER + i) * BLOCK
    if image:read(offset, BLOCK) ~= string.rep(string.char(64 + w.id), BLOCK) then
      mismatches = mismatches + 1
    end
  end
end }
t.eq(r.errors, 0, "no failed ops")
t.eq(r.ops, 2 * N * PER, "every call was one op")
t.eq(r.writes, N * PER, "writes counted as writes")
t.eq(r.reads, N * PER, "reads counted as reads")
t.eq(r.bytes, 2 * N * PER * BLOCK, "bytes of every read and write")
t.eq(r.lat.count, 2 * N * PER, "one latency per op")
t.eq(r.lat_read.count, N * PER, "one read latency per read")
t.eq(r.lat_write.count, N * PER, "one write latency per write")
t.eq(mismatches, 0, "reads return what the workers wrote")

-- the blocking calls outside the phase see the same data, and nothing past it changed
t.eq(image:read(0, BLOCK), string.rep("A", BLOCK), "worker 1's first block")
t.eq(image:read(N * PER * BLOCK, BLOCK), string.rep("\0", BLOCK), "the block after is untouched")

-- a failure comes back as nil, message, code, and counts as a failed op
local seen
local f = workers.run { n = 1, fn = function() seen = { image:write(0, "") } end }
t.eq(seen[1], true, "an empty write succeeds")
t.eq(f.ops, 1, "and is an op")

-- the image stays open for the phase
t.raises(function() workers.run { n = 2, fn = function(w)
  image:read(0, 512)
  if w.id == 1 then image:close() end
end } end, "scripted workers are using image 'img'", "closing a used image inside a phase raises")
t.eq(#image:read(0, 512), 512, "the image is still open after the phase")

image:close()
t.eq(rbd.remove(pool, "img"), true, "remove the image")
t.eq(#rbd.list(pool), 0, "no image left")
pool:close()
assert(cluster:pool_delete(POOL))
return t.done()
