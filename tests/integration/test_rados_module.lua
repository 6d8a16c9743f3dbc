-- The cephmark.rados module against the real local cluster: pools (replicated and EC),
-- object I/O, mon_command JSON, placement checks, and the errors operators will meet.
local rados = require "cephmark.rados"
local t = require "cephmark.test"

local cluster <close> = assert(rados.connect())
t.eq(#cluster:fsid(), 36, "fsid is a uuid")
local up, inn = cluster:osd_count()
t.eq(up, 3, "OSDs up")
t.eq(inn, 3, "OSDs in")

-- mon_command returns parsed JSON
local mon_before, osd_before = cluster:command_counts()
local command = { prefix = "status" }
local status = assert(cluster:mon_command(command))
t.eq(command.format, nil, "mon_command leaves the caller's table as it was (no format added)")
local mon_after, osd_after = cluster:command_counts()
t.eq(mon_after - mon_before, 1, "command_counts: one mon command more")
t.eq(osd_after - osd_before, 0, "and no OSD command")
t.eq(type(status.osdmap), "table", "status has an osdmap")
local err_result, err, code = cluster:mon_command { prefix = "osd pool get", pool = "no-such-pool", var = "size" }
t.eq(err_result, nil, "mon_command on a missing pool fails")
t.match(err, "no%-such%-pool", "the mon's reason names the pool")
t.eq(code, -2, "ENOENT")

-- replicated pool: create, write/read/stat/remove, delete
local name = "cephmark-test-module"
assert(cluster:pool_create { name = name, size = 3, min_size = 2, pg_num = 8 })
t.eq(cluster:pool_exists(name), true, "pool exists after create")
local info = assert(cluster:pool_info(name))
t.eq(info.size, 3, "pool size")
t.eq(info.min_size, 2, "pool min_size")
local again, again_err = cluster:pool_create { name = name }
t.eq(again, nil, "creating an existing pool fails")
t.match(again_err, "already exists", "and says so")
do
  local pool <close> = assert(cluster:pool(name))
  t.eq(pool:name(), name, "pool name")
  assert(pool:write_full("a", "hello"))
  assert(pool:write("a", " world", 5))
  t.eq(pool:read("a"), "hello world", "read back the whole object")
  t.eq(pool:read("a", 5, 6), "world", "read a range")
  t.eq(pool:stat("a"), 11, "stat size")
  t.eq(#pool:objects(), 1, "one object listed")
  assert(pool:remove("a"))
  local gone, gone_err, gone_code = pool:read("a")
  t.eq(gone, nil, "a removed object cannot be read")
  t.eq(gone_code, -2, "ENOENT after remove")
  t.match(gone_err, "No such file", "strerror text")
end
assert(cluster:pool_delete(name))
t.eq(cluster:pool_exists(name), false, "pool gone after delete")

-- unknown pool
local missing, missing_err = cluster:pool("cephmark-no-such-pool")
t.eq(missing, nil, "opening an unknown pool fails")
t.eq(missing_err, "pool 'cephmark-no-such-pool' does not exist", "with a clear message")

-- an EC profile the cluster cannot place is refused before anything is created
local ec, ec_err = cluster:pool_create { name = "cephmark-test-ec-big", type = "erasure", k = 3, m = 2 }
t.eq(ec, nil, "k+m > OSDs is refused")
t.eq(ec_err, "pool 'cephmark-test-ec-big': EC k=3 m=2 needs 5 failure domains of type 'osd', the cluster has 3 up", "with the numbers")
t.eq(cluster:pool_exists("cephmark-test-ec-big"), false, "no pool was created")
local big, big_err = cluster:pool_create { name = "cephmark-test-rep-big", size = 4 }
t.eq(big, nil, "size > OSDs is refused")
t.match(big_err, "size 4 needs 4 failure domains", "with the numbers")
t.raises(function() cluster:pool_create { name = "x", type = "erasure", k = 2 } end,
  "needs k and m", "an EC pool without m is misuse")

-- EC pool round trip, with its profile removed at delete
local created = assert(cluster:pool_create { name = "cephmark-test-ec", type = "erasure", k = 2, m = 1 })
do
  local pool <close> = assert(cluster:pool("cephmark-test-ec"))
  local data = string.rep("0123456789abcdef", 4096)
  assert(pool:write_full("ec-object", data))
  t.eq(pool:read("ec-object"), data, "EC round trip")
end
assert(cluster:pool_delete("cephmark-test-ec", { profile = created.profile }))
local profiles = assert(cluster:mon_command { prefix = "osd erasure-code-profile ls" })
for _, p in ipairs(profiles) do t.ok(p ~= created.profile, "EC profile removed with its pool") end

-- misuse raises with what was expected
t.raises(function() cluster:pool({}) end, "string expected", "pool name must be a string")
cluster:close()
t.raises(function() cluster:fsid() end, "closed", "a closed cluster is refused")
return t.done()
