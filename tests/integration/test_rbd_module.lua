-- The cephmark.rbd module against the real local cluster: images (create, list, open,
-- info, resize, read, write, discard, flush, remove), image:bench with verified payloads
-- (write, read, readwrite; seq and rand; a corrupted extent caught with image and offset),
-- the rbd cache on and off, scripted workers, and the bad inputs operators will meet.
-- The suite's cluster runs memstore OSDs without a mgr; erasure-coded data pools (which
-- need bluestore) and free-space checks (which need a mgr) run on a small bluestore
-- cluster with a mgr that this test starts and stops itself.
local rbd = require "cephmark.rbd"
local rados = require "cephmark.rados"
local connection = require "cephmark.connection"
local workers = require "cephmark.workers"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local MiB = 1 << 20
local POOL = "cephmark-test-rbd"
local DEFAULT_FEATURES = "layering,exclusive-lock,object-map,fast-diff,deep-flatten"

local cluster <close> = connection.connect()
if cluster:pool_exists(POOL) then assert(cluster:pool_delete(POOL)) end
assert(cluster:pool_create { name = POOL, size = 3, pg_num = 8 })
local pool <close> = assert(cluster:pool(POOL))

-- mon commands whose answer is only a status line: raise when they fail
local function mon(handle, command)
  local result, status, code = handle:mon_command(command)
  if code then error(string.format("%s: %s", command.prefix, status), 2) end
  return result
end

local function contains(list, value)
  for _, item in ipairs(list) do if item == value then return true end end
  return false
end

-- ---- create, list, open, info -------------------------------------------------------------
t.eq(rbd.create(pool, "a", { size = "64M", object_size = "1M" }), true, "create an image")
t.ok(contains(rbd.list(pool), "a"), "list shows it")
local a = assert(rbd.open(pool, "a"))
local info = a:info()
t.eq(info.name, "a", "info.name")
t.eq(info.pool, POOL, "info.pool")
t.eq(info.size, 64 * MiB, "info.size")
t.eq(info.object_size, MiB, "info.object_size")
t.eq(info.order, 20, "info.order")
t.eq(info.objects, 64, "info.objects")
t.eq(table.concat(info.features, ","), DEFAULT_FEATURES, "librbd's default features")
t.eq(info.data_pool, nil, "no data pool")
t.match(info.block_name_prefix, "^rbd_data%.%x+$", "block name prefix")
t.eq(info.read_only, false, "opened read-write")
t.eq(tostring(a), "rbd image '" .. POOL .. "/a'", "tostring")

t.eq(rbd.create(pool, "b", { size = 4 * MiB, features = { "layering" } }), true, "create with features")
do
  local b <close> = assert(rbd.open(pool, "b"))
  t.eq(table.concat(b:info().features, ","), "layering", "only the features asked for")
  t.eq(b:info().object_size, 4 * MiB, "default object size 4 MiB")
end
t.eq(rbd.create(pool, "c", { size = "8M", features = {} }), true, "create with no features")
do
  local c <close> = assert(rbd.open(pool, "c"))
  t.eq(#c:info().features, 0, "no features at all")
end

-- ---- image I/O -----------------------------------------------------------------------------
t.eq(a:write(4096, "hello"), true, "write")
t.eq(a:read(4096, 5), "hello", "read back")
t.eq(a:read(0, 4), "\0\0\0\0", "never-written bytes read as zeros")
t.eq(a:read(0, 0), "", "an empty read")
t.eq(a:flush(), true, "flush")
t.eq(a:discard(0, MiB), true, "discard")
t.eq(a:read(4096, 5), "\0\0\0\0\0", "discarded bytes read as zeros")
t.eq(a:resize("128M"), true, "grow")
t.eq(a:info().size, 128 * MiB, "grown size")
t.eq(a:resize(64 * MiB), true, "shrink")
t.eq(a:info().size, 64 * MiB, "shrunk size")
local last = 64 * MiB - 3
t.eq(a:write(last, "end"), true, "write the last bytes")
t.eq(a:read(last, 3), "end", "read the last bytes")

-- offsets beyond the image are misuse
t.raises(function() a:read(64 * MiB, 1) end,
  "image:read: offset 67108864 + length 1 is beyond the end of image 'a' (67108864 bytes, 64 MiB)",
  "a read beyond the end")
t.raises(function() a:write(last, "four") end,
  "image:write: offset 67108861 + length 4 is beyond the end of image 'a' (67108864 bytes, 64 MiB)",
  "a write across the end")
t.raises(function() a:discard(64 * MiB + 4096, 4096) end,
  "image:discard: offset 67112960 + length 4096 is beyond the end of image 'a'", "a discard beyond the end")
t.raises(function() a:read(-1, 1) end, "offset must not be negative", "a negative offset")
t.raises(function() a:read(0, -1) end, "length must not be negative", "a negative length")
t.raises(function() a:resize("1X") end, "image:resize: size '1X'", "a bad size")

-- ---- world failures: nil, message, code ------------------------------------------------------
local none, none_err, none_code = rbd.open(pool, "no-such-image")
t.eq(none, nil, "opening a missing image fails")
t.eq(none_err, "image 'no-such-image' does not exist in pool '" .. POOL .. "'", "and says which")
t.eq(none_code, -2, "ENOENT")
local gone, gone_err, gone_code = rbd.remove(pool, "no-such-image")
t.eq(gone, nil, "removing a missing image fails")
t.eq(gone_err, "image 'no-such-image' does not exist in pool '" .. POOL .. "'", "with the same words")
t.eq(gone_code, -2, "ENOENT")
local again, again_err, again_code = rbd.create(pool, "a", { size = "4M" })
t.eq(again, nil, "creating an existing image fails")
t.eq(again_err, "image 'a' already exists in pool '" .. POOL .. "'", "and says so")
t.eq(again_code, -17, "EEXIST")
local busy, busy_err, busy_code = rbd.remove(pool, "a")
t.eq(busy, nil, "removing an open image fails")
t.eq(busy_err, "image 'a' in pool '" .. POOL .. "' is still open (it has watchers): close it first", "and says why")
t.eq(busy_code, -16, "EBUSY")
local huge, huge_err, huge_code = rbd.create(pool, "huge", { size = "2P" })
t.eq(huge, nil, "an image too large for the object map is refused")
t.eq(huge_err, "cannot create image 'huge' in pool '" .. POOL .. "': Invalid argument (536870912 objects of 4194304 bytes are more than the object-map feature handles, 256000000: use a larger object_size, or features without object-map)", "with the numbers")
t.eq(huge_code, -22, "EINVAL")

-- an image larger than the pool's quota cannot be written whole, so it is refused
mon(cluster, { prefix = "osd pool set-quota", pool = POOL, field = "max_bytes", val = tostring(32 * MiB) })
local quota, quota_err, quota_code = rbd.create(pool, "q", { size = "64M" })
t.eq(quota, nil, "an image above the pool quota is refused")
t.eq(quota_err, "image 'q' (64 MiB) is larger than the quota of pool '" .. POOL .. "' (max_bytes 32 MiB): writes past the quota fail with EDQUOT; raise it with `ceph osd pool set-quota " .. POOL .. " max_bytes N`, or pass overcommit = true", "with the quota")
t.eq(quota_code, -122, "EDQUOT")
t.eq(rbd.create(pool, "q", { size = "64M", overcommit = true }), true, "overcommit creates it anyway")
t.eq(rbd.remove(pool, "q"), true, "and it is removed")
mon(cluster, { prefix = "osd pool set-quota", pool = POOL, field = "max_bytes", val = "0" })
mon(cluster, { prefix = "osd pool set-quota", pool = POOL, field = "max_objects", val = "10" })
local objects, objects_err, objects_code = rbd.create(pool, "q", { size = "64M" })
t.eq(objects, nil, "an image with more objects than the pool quota is refused")
t.eq(objects_err, "image 'q' (64 MiB) needs 16 objects, more than the quota of pool '" .. POOL .. "' (max_objects 10): writes past the quota fail with EDQUOT; raise it with `ceph osd pool set-quota " .. POOL .. " max_objects N`, or pass overcommit = true", "with the object count")
t.eq(objects_code, -122, "EDQUOT")
mon(cluster, { prefix = "osd pool set-quota", pool = POOL, field = "max_objects", val = "0" })

-- misuse raises
t.raises(function() rbd.create(pool, "x", { size = "4M", features = { "layering", "foo" } }) end,
  "rbd.create: unknown feature 'foo' (expected layering, exclusive-lock, object-map, fast-diff, deep-flatten or journaling)",
  "an unknown feature")
t.raises(function() rbd.create(pool, "x", { size = "4M", features = { "layering", "object-map" } }) end,
  "rbd.create: feature object-map needs exclusive-lock", "a feature without what it needs")
t.raises(function() rbd.create(pool, "x", { size = "4M", features = "layering" }) end,
  "rbd.create: features must be an array of names", "features as a string")
t.raises(function() rbd.create(pool, "x", { size = "4M", object_size = "3M" }) end,
  "rbd.create: object_size must be a power of two between 4 KiB and 32 MiB, got 3 MiB (3145728)",
  "an object size that is not a power of two")
t.raises(function() rbd.create(pool, "x", { size = "4M", object_size = 2048 }) end,
  "rbd.create: object_size must be a power of two between 4 KiB and 32 MiB, got 2 KiB (2048)",
  "an object size below 4 KiB")
t.raises(function() rbd.create(pool, "x", { size = "4M", object_size = "64M" }) end,
  "got 64 MiB (67108864)", "an object size above 32 MiB")
t.raises(function() rbd.create(pool, "x", {}) end,
  "rbd.create: size is required (bytes, or a string like \"1G\")", "no size")
t.raises(function() rbd.create(pool, "x", { size = "4M", objectsize = "1M" }) end,
  "rbd.create: unknown option 'objectsize' (expected one of data_pool, features, object_size, overcommit, size)",
  "a misspelt option")
t.raises(function() rbd.create(pool, "", { size = "4M" }) end, "image name must not be empty", "an empty name")
t.raises(function() rbd.open(pool, "a", { cache = "yes" }) end,
  "rbd.open: cache must be true or false, got a string", "cache must be a boolean")
t.raises(function() rbd.open({}, "a") end, "cephmark.rados.pool expected", "the pool must be a pool handle")
t.eq(#rbd.list(pool), 3, "no image was left by the refusals")

-- an erasure-coded data pool on memstore OSDs: the mons refuse allow_ec_overwrites, and
-- rbd.create says what is missing instead of librbd's bare EINVAL
local ec_pool = assert(cluster:pool_create { name = "cephmark-test-rbd-ec", type = "erasure", k = 2, m = 1 })
local refused, refused_err = cluster:mon_command { prefix = "osd pool set", pool = ec_pool.name, var = "allow_ec_overwrites", val = "true" }
t.eq(refused, nil, "memstore OSDs cannot take EC overwrites")
t.match(refused_err, "pool must only be stored on bluestore", "the mons say why")
local ec, ec_err, ec_code = rbd.create(pool, "ec", { size = "16M", data_pool = ec_pool.name })
t.eq(ec, nil, "an image on an EC data pool without overwrites is refused")
t.eq(ec_err, "image 'ec': data pool 'cephmark-test-rbd-ec' is erasure-coded without overwrites; enable them with `ceph osd pool set cephmark-test-rbd-ec allow_ec_overwrites true` (the mons allow it only when the pool's OSDs are all bluestore)", "with the command to run")
t.eq(ec_code, -22, "EINVAL")
local missing, missing_err = rbd.create(pool, "ec", { size = "16M", data_pool = "no-such-pool" })
t.eq(missing, nil, "a missing data pool is refused")
t.eq(missing_err, "image 'ec': data pool 'no-such-pool' does not exist", "and named")
do
  local ec_handle <close> = assert(cluster:pool(ec_pool.name))
  local in_ec, in_ec_err, in_ec_code = rbd.create(ec_handle, "x", { size = "16M" })
  t.eq(in_ec, nil, "an image in an EC pool is refused")
  t.eq(in_ec_err, "cannot create image 'x' in pool 'cephmark-test-rbd-ec': an erasure-coded pool cannot hold image metadata; create the image in a replicated pool with data_pool = 'cephmark-test-rbd-ec'", "with what to do instead")
  t.eq(in_ec_code, -22, "EINVAL")
end
assert(cluster:pool_delete(ec_pool.name, { profile = ec_pool.profile }))

-- ---- bench ---------------------------------------------------------------------------------
assert(rbd.create(pool, "v", { size = "16M" }))
local v = assert(rbd.open(pool, "v"))
local r = v:bench { io_type = "write", io_size = "4K", bytes = "16M", threads = 16 }
t.eq(r.op, "rbd", "result op")
t.eq(r.io_type, "write", "result io_type")
t.eq(r.io_size, 4096, "result io_size")
t.eq(r.pattern, "seq", "seq by default")
t.eq(r.image, "v", "result image")
t.eq(r.threads, 16, "result threads")
t.eq(r.errors, 0, "write: no errors")
t.eq(r.ops, 4096, "bytes bounds the run (16 MiB of 4 KiB writes)")
t.eq(r.writes, 4096, "all of them writes")
t.eq(r.reads, 0, "no reads")
t.eq(r.bytes, 16 * MiB, "bytes moved")
t.ok(r.iops > 0 and r.bandwidth_mib > 0 and r.lat.p50 > 0, "rates and latency")
t.ok(#r.series >= 1, "a per-second series")

r = v:bench { io_type = "read", io_size = "4K", bytes = "16M" }
t.eq(r.errors, 0, "seq read: no errors")
t.eq(r.reads, 4096, "seq read: every block once")
t.eq(r.verify_failures, 0, "seq read: every block verifies")
t.eq(r.verify_skipped, 0, "seq read: nothing skipped")
r = v:bench { io_type = "read", io_size = "4K", ops = 2000, pattern = "rand" }
t.eq(r.pattern, "rand", "rand pattern")
t.eq(r.reads, 2000, "rand read: ops bounds the run")
t.eq(r.verify_failures, 0, "rand read verifies")
r = v:bench { io_type = "read", io_size = "8K", bytes = "16M" }
t.eq(r.verify_failures + r.verify_skipped, 0, "8K reads over 4K blocks verify block by block")
r = v:bench { io_type = "readwrite", io_size = "4K", seconds = 1, pattern = "rand", rw_mix_read = 75 }
t.eq(r.errors, 0, "readwrite: no errors")
t.eq(r.verify_failures, 0, "readwrite verifies")
t.eq(r.rw_mix_read, 75, "result rw_mix_read")
t.ok(r.reads > r.writes and r.writes > 0, "readwrite: about 75% reads")
t.near(r.reads / (r.reads + r.writes), 0.75, 0.1, "readwrite mix")
r = v:bench { io_type = "readwrite", io_size = "4K", seconds = 1, rw_mix_read = 0 }
t.eq(r.reads, 0, "rw_mix_read = 0: writes only")
-- random offsets by an access distribution, verified (the hot blocks were written above)
r = v:bench { io_type = "readwrite", io_size = "4K", ops = 2000, pattern = "rand", access = "zipf:1.1", threads = 8 }
t.eq(r.errors, 0, "zipf offsets: no errors")
t.eq(r.verify_failures, 0, "zipf offsets verify")
t.eq(r.access, "zipf:1.1", "access in the result")
t.raises(function() v:bench { io_type = "read", ops = 1, access = "zipf:1" } end,
  "image:bench: access applies to random offsets (pattern = \"rand\")", "access on sequential offsets")
t.raises(function() v:bench { io_type = "read", pattern = "rand", ops = 1, access = "zipf:0" } end,
  "image:bench: access 'zipf:0': zipf θ must be above 0 and at most 10", "zipf θ out of range")

-- a corrupted extent is caught, with the image and the offset
assert(v:write(10 * 4096 + 200, string.rep("!", 100)))
assert(v:write(20 * 4096, string.rep("?", 4096)))
r = v:bench { io_type = "read", io_size = "4K", bytes = "16M" }
t.eq(r.verify_failures, 2, "two corrupted blocks")
t.match(r.verify_errors[1], "^image 'v' offset 40960 %(seq %d+%): body crc32c 0x%x+ != header 0x%x+$", "a damaged body")
t.match(r.verify_errors[2], "^image 'v' offset 81920: bad magic 0x3f3f3f3f %(expected 0x4c504d43%)$", "a damaged header")
r = v:bench { io_type = "read", io_size = "4K", bytes = "16M", verify = false }
t.eq(r.verify_failures, 0, "verify = false checks nothing")
v:close()
t.eq(rbd.remove(pool, "v"), true, "remove the bench image")

-- data cephmark did not write cannot be checked: counted as skipped, never as failures
assert(rbd.create(pool, "f", { size = "4M" }))
do
  local f <close> = assert(rbd.open(pool, "f"))
  r = f:bench { io_type = "read", io_size = "4K", bytes = "4M" }
  t.eq(r.verify_failures + r.verify_skipped, 0, "a never-written image reads as zeros")
  assert(f:write(0, string.rep("x", 8192)))
  r = f:bench { io_type = "read", io_size = "4K", bytes = "4M" }
  t.eq(r.verify_failures, 0, "foreign data is not a failure")
  t.eq(r.verify_skipped, 2, "but it is counted as skipped")
  r = f:bench { io_type = "write", io_size = "4K", bytes = "1M", threads = 4 }
  r = f:bench { io_type = "read", io_size = "2K", bytes = "1M" }
  t.eq(r.verify_failures, 0, "reads smaller than the written blocks are not failures")
  t.eq(r.verify_skipped, 512, "they cannot be checked")
end
assert(rbd.remove(pool, "f"))

-- bench misuse
t.raises(function() a:bench { io_size = 0 } end,
  "bench: io_size must be a positive multiple of 512 bytes, got 0", "io_size 0")
t.raises(function() a:bench { io_size = 1000 } end,
  "bench: io_size must be a positive multiple of 512 bytes, got 1000", "io_size not a multiple of 512")
t.raises(function() a:bench { io_type = "append" } end,
  "bench: unknown io_type 'append' (expected read, write or readwrite)", "an unknown io_type")
t.raises(function() a:bench { pattern = "zigzag" } end,
  "bench: unknown pattern 'zigzag' (expected seq or rand)", "an unknown pattern")
t.raises(function() a:bench { io_type = "readwrite", rw_mix_read = 101 } end,
  "bench: rw_mix_read must be between 0 and 100, got 101", "rw_mix_read above 100")
t.raises(function() a:bench { io_size = "128M" } end,
  "bench: io_size 128 MiB is larger than image 'a' (64 MiB)", "io_size above the image size")
t.raises(function() a:bench { io_size = "8M", threads = 16 } end,
  "bench: image 'a' (64 MiB) holds 8 blocks of 8 MiB: it needs at least threads (16), since no two ops in flight share a block",
  "too few blocks for the queue depth")
t.raises(function() a:bench { threads = 0 } end, "bench: threads must be between 1 and 65536, got 0", "threads 0")

-- read-only images
do
  local ro <close> = assert(rbd.open(pool, "a", { read_only = true }))
  t.eq(ro:info().read_only, true, "info.read_only")
  t.eq(ro:read(last, 3), "end", "a read-only image reads")
  local w, w_err, w_code = ro:write(0, "x")
  t.eq(w, nil, "a read-only image refuses writes")
  t.eq(w_err, "write image 'a' at offset 0: Read-only file system", "with the errno's words")
  t.eq(w_code, -30, "EROFS")
  t.raises(function() ro:bench { io_type = "read", iosize = "64K" } end,
    "bench: unknown option 'iosize' (expected one of access, io_size, io_type, pattern, rw_mix_read, verify,",
    "a misspelt option is refused, not ignored")
  t.raises(function() ro:bench { io_type = "write" } end,
    "bench: image 'a' is open read-only: io_type write needs it opened with read_only = false",
    "a write bench on a read-only image")
  r = ro:bench { io_type = "read", io_size = "64K", ops = 100 }
  t.eq(r.errors, 0, "a read bench on a read-only image")
end

-- ---- the rbd cache, per image --------------------------------------------------------------
-- librbd's cache (rbd_cache_policy writearound) acknowledges a write before the OSDs do once
-- the image saw a flush (rbd_cache_writethrough_until_flush). The fastest cached write takes
-- tens of microseconds; the fastest uncached one a round trip through three OSDs, hundreds.
-- Minimums, retried, because this machine's load shifts every other statistic.
local function fastest_write(cache)
  local image <close> = assert(rbd.open(pool, "a", { cache = cache }))
  t.eq(image:info().cache, cache, "info.cache is what was asked for: " .. tostring(cache))
  assert(image:flush())
  local result = image:bench { io_type = "write", io_size = "4K", ops = 2000, threads = 16 }
  t.eq(result.errors + result.verify_failures, 0, "a clean run with cache = " .. tostring(cache))
  t.eq(result.cache, cache, "the result says whether the cache was on")
  return result.lat.min
end
a:close()
local cache_works, uncached, cached = false, 0, 0
for _ = 1, 3 do
  uncached = fastest_write(false)
  cached = fastest_write(true)
  if cached < uncached / 4 and fastest_write(false) > cached * 4 then
    cache_works = true
    break
  end
end
t.ok(cache_works, string.format("cached writes (fastest %.0f us) are faster than uncached (%.0f us), "
  .. "and cache = false after cache = true is uncached again", cached * 1e6, uncached * 1e6))

-- ---- handles -------------------------------------------------------------------------------
a = assert(rbd.open(pool, "a"))
a:close()
a:close()
t.ok(true, "close is idempotent")
t.raises(function() a:info() end, "image handle is closed", "a closed handle is refused")
t.eq(tostring(a), "rbd image (closed)", "tostring of a closed handle")

-- ---- scripted workers: image:read and image:write submit asynchronously ---------------------
do
  local w <close> = assert(rbd.open(pool, "a"))
  local mismatches = 0
  local result = workers.run { n = 4, seconds = 1, fn = function(worker)
    local i = 0
    while true do
      i = i + 1
      local offset = ((worker.id - 1) * 64 + i % 64) * 4096
      local data = string.rep(string.char(64 + worker.id), 4096)
      assert(w:write(offset, data))
      if w:read(offset, 4096) ~= data then mismatches = mismatches + 1 end
    end
  end }
  t.ok(result.ops > 20, "workers made progress")
  t.eq(result.errors, 0, "no failed worker ops")
  t.eq(mismatches, 0, "worker reads return what worker writes wrote")
  t.eq(result.bytes, result.ops * 4096, "every worker op moved 4 KiB")
  local seen
  workers.run { n = 1, fn = function() seen = { w:read(64 * MiB - 3, 3) } end }
  t.eq(seen[1], "end", "a worker read returns the data")
  t.raises(function() workers.run { n = 1, fn = function() w:read(64 * MiB, 1) end } end,
    "image:read: offset 67108864 + length 1 is beyond the end of image 'a'", "misuse inside a worker raises")
end

for _, name in ipairs { "a", "b", "c" } do t.eq(rbd.remove(pool, name), true, "remove " .. name) end
t.eq(#rbd.list(pool), 0, "no image left")
pool:close()
assert(cluster:pool_delete(POOL))

-- ---- EC data pool, free space and quota errors: a bluestore cluster with a mgr --------------
local local_cluster = require "cephmark.cluster"
local dir = os.tmpname()
os.remove(dir)
local up = local_cluster.up { dir = dir, objectstore = "bluestore", mgr = true, quiet = true }
local ok, err = pcall(function()
  local bs <close> = assert(rados.connect { conf = up.conf, keyring = up.keyring })
  assert(bs:pool_create { name = "meta", size = 3 })
  local ecp = assert(bs:pool_create { name = "ecdata", type = "erasure", k = 2, m = 1 })
  local meta <close> = assert(bs:pool("meta"))
  local no, no_err = rbd.create(meta, "ec", { size = "64M", data_pool = ecp.name })
  t.eq(no, nil, "before allow_ec_overwrites the EC data pool is refused")
  t.match(no_err, "is erasure%-coded without overwrites", "and says so")
  mon(bs, { prefix = "osd pool set", pool = ecp.name, var = "allow_ec_overwrites", val = "true" })
  assert(bs:wait_for_latest_osdmap())
  t.eq(rbd.create(meta, "ec", { size = "64M", data_pool = ecp.name }), true, "an image with an EC data pool")
  do
    local image <close> = assert(rbd.open(meta, "ec"))
    local ec_info = image:info()
    t.eq(ec_info.data_pool, "ecdata", "info.data_pool")
    t.ok(contains(ec_info.features, "data-pool"), "the data-pool feature")
    local w = image:bench { io_type = "write", io_size = "64K", bytes = "8M" }
    t.eq(w.errors, 0, "EC write: no errors")
    local rw = image:bench { io_type = "readwrite", io_size = "64K", bytes = "8M", pattern = "rand" }
    t.eq(rw.errors + rw.verify_failures, 0, "EC readwrite verifies")
    t.ok(rw.reads > 0 and rw.writes > 0, "EC readwrite did both")
  end
  t.eq(rbd.remove(meta, "ec"), true, "remove the EC image")

  -- the free space `ceph df` reports (once the mgr has the pool's statistics)
  for _ = 1, 60 do
    local df = bs:mon_command { prefix = "df" }
    local listed = false
    for _, p in ipairs(df and df.pools or {}) do listed = listed or p.name == "meta" end
    if listed and df.stats.total_bytes > 0 then break end
    sys.sleep(0.5)
  end
  local big, big_err, big_code = rbd.create(meta, "big", { size = "1T" })
  t.eq(big, nil, "an image larger than the pool can store is refused")
  t.match(big_err, "^image 'big' %(1 TiB%) is larger than pool 'meta' can still store %([%d.]+ GiB, `ceph df` MAX AVAIL%): pass overcommit = true to create it anyway$", "with the free space")
  t.eq(big_code, -28, "ENOSPC")
  t.eq(rbd.create(meta, "big", { size = "1T", overcommit = true }), true, "overcommit creates it anyway")
  t.eq(rbd.remove(meta, "big"), true, "and it is removed")

  -- writes that grow a pool past its quota fail with EDQUOT instead of hanging
  mon(bs, { prefix = "osd pool set-quota", pool = "meta", field = "max_bytes", val = tostring(4 * MiB) })
  assert(rbd.create(meta, "q", { size = "256M", overcommit = true }))
  do
    local image <close> = assert(rbd.open(meta, "q"))
    local q = image:bench { io_type = "write", io_size = "1M", seconds = 60, threads = 2, rate = 8,
      on_second = function(second) return second.errors == 0 end }
    t.ok(q.errors > 0, "writes past the quota fail")
    t.eq(q.first_error, "Disk quota exceeded", "with EDQUOT")
    t.eq(q.drained, true, "and nothing hangs")
  end
end)
local down_ok, down_err = pcall(local_cluster.down, { dir = dir })
t.ok(ok, "bluestore part: " .. tostring(err))
t.ok(down_ok, "bluestore cluster down: " .. tostring(down_err))
return t.done()
