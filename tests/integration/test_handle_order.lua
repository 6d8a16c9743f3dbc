-- Handles close in any order: closing a cluster or a pool while a pool or an rbd image
-- still uses it never crashes; the librados handles are released when the last user goes.
local rbd = require "cephmark.rbd"
local connection = require "cephmark.connection"
local t = require "cephmark.test"

local cluster = connection.connect()
local name = "cephmark-test-order"
assert(cluster:pool_create { name = name })
local pool = assert(cluster:pool(name))
assert(rbd.create(pool, "img", { size = "64M" }))
local image = assert(rbd.open(pool, "img"))
assert(image:write(0, string.rep("a", 4096)))

pool:close()
t.eq(#assert(image:read(0, 4096)), 4096, "the image works after its pool handle is closed")
t.raises(function() pool:stat("x") end, "pool handle is closed", "the closed pool refuses use")
cluster:close()
t.eq(#assert(image:read(0, 4096)), 4096, "the image works after its cluster is closed")
t.raises(function() cluster:fsid() end, "cluster connection is closed", "the closed cluster refuses use")
image:close()
t.raises(function() image:read(0, 1) end, "closed", "the closed image refuses use")

-- a pool whose cluster was closed first keeps working until it is closed itself
local c2 = connection.connect()
local p2 = assert(c2:pool(name))
c2:close()
assert(p2:write_full("o", "data"))
t.eq(p2:read("o"), "data", "the pool works after its cluster is closed")
assert(rbd.remove(p2, "img"))
p2:close()
collectgarbage()

local c3 = connection.connect()
assert(c3:pool_delete(name))
c3:close()
return t.done()
