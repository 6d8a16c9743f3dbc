-- Overwrites, appends and the verify pass over a write run, and omap/xattr runs, against
-- the local cluster: reads after them verify, a block changed behind cephmark's back is
-- found, sizes that cannot verify are refused, and an operator's object in the same pool is
-- never touched.
local rados = require "cephmark.rados"
local t = require "cephmark.test"

local cluster <close> = assert(rados.connect())
local name = "cephmark-test-overwrite"
if cluster:pool_exists(name) then assert(cluster:pool_delete(name)) end
assert(cluster:pool_create { name = name, size = 3, pg_num = 8 })
local pool <close> = assert(cluster:pool(name))

-- the operator's own objects: data, omap and an xattr, under a name close to the run's
local own = string.rep("operator data ", 700)
assert(pool:write_full("ow_object0x", own))
assert(pool:write_full("operator-object", own))

local function refused(options, pattern, what)
  local ok, err = pcall(pool.bench, pool, options)
  t.eq(ok, false, what .. ": refused")
  t.match(tostring(err), pattern, what .. ": says why")
end

-- a run of 16 objects of 4 blocks of 16 KiB
local w = pool:bench { op = "write", ops = 64, threads = 8, block_size = "16K", object_size = "64K",
  run_name = "ow", prefix = "ow" }
t.eq(w.errors, 0, "write errors")
t.eq(w.objects, 16, "16 objects written")

-- overwrites of 4 KiB inside the blocks, then every read verifies
local o = pool:bench { op = "overwrite", ops = 300, threads = 8, block_size = "4K", run_name = "ow" }
t.eq(o.errors, 0, "overwrite errors")
t.eq(o.ops, 300, "overwrite ops")
t.eq(o.overwrite_block, 4096, "the overwrite unit is recorded")
t.eq(o.overwrites, 300, "and the overwrites")
local seq = pool:bench { op = "seq", threads = 8, run_name = "ow" }
t.eq(seq.ops, 64, "seq read every block after the overwrites")
t.eq(seq.verify_failures, 0, "seq after overwrites verifies")
local r = pool:bench { op = "rand", ops = 200, threads = 8, run_name = "ow" }
t.eq(r.verify_failures, 0, "rand after overwrites verifies")
t.eq(r.errors, 0, "rand errors")

-- a second pass with the same unit adds up; another unit is refused
local o2 = pool:bench { op = "overwrite", ops = 100, threads = 4, block_size = "4K", seed = 7, run_name = "ow" }
t.eq(o2.overwrites, 400, "overwrites add up over passes")
t.eq(o2.overwrite_passes, 2, "two passes")
refused({ op = "overwrite", ops = 1, block_size = "8K", run_name = "ow" }, "same size", "another overwrite unit")
refused({ op = "overwrite", ops = 1, block_size = "6K", run_name = "ow" }, "must divide", "a unit that does not divide the block")
refused({ op = "append", ops = 1, block_size = 64, run_name = "ow" }, "header", "an append below a header")

-- appends grow the objects in turn; the verify pass reads every object whole
local a = pool:bench { op = "append", ops = 40, threads = 8, block_size = "4K", run_name = "ow" }
t.eq(a.errors, 0, "append errors")
t.eq(a.appends, 40, "appends recorded")
t.eq(pool:stat("ow_object0"), 65536 + 3 * 4096, "object 0 grew by its 3 appends")
t.eq(pool:stat("ow_object15"), 65536 + 2 * 4096, "object 15 grew by its 2 appends")
local v = pool:bench { op = "verify", threads = 4, run_name = "ow" }
t.eq(v.ops, 16, "verify read every object")
t.eq(v.verify_failures, 0, "verify after overwrites and appends")
local seq2 = pool:bench { op = "seq", threads = 8, run_name = "ow" }
t.eq(seq2.verify_failures, 0, "seq after appends verifies")

-- 4 KiB changed behind cephmark's back: inside a block, and inside an append
assert(pool:write("ow_object3", string.rep("z", 4096), 8192))
assert(pool:write("ow_object5", string.rep("z", 100), 65536 + 10))
local bad = pool:bench { op = "verify", threads = 4, run_name = "ow" }
t.eq(bad.verify_failures, 2, "verify finds both changes")
t.match(table.concat(bad.verify_errors, "\n"), "ow_object3", "and names the object")

-- omap and xattr runs: rados bench's keys, more keys per op, longer names; read back verified
local kv = pool:bench { op = "write", ops = 40, threads = 8, block_size = "1K", object_size = "4K",
  write_to = "omap,xattr", keys_per_op = 3, key_size = 40, run_name = "kv", prefix = "kv" }
t.eq(kv.errors, 0, "omap/xattr write errors")
t.eq(kv.write_to, "omap,xattr", "the destinations are in the result")
t.eq(kv.bytes, 40 * 6 * 1024, "bytes count every value")
t.eq(pool:stat("kv_object0"), 0, "no object data written")
local ks = pool:bench { op = "seq", threads = 8, run_name = "kv" }
t.eq(ks.ops, 40, "seq got every op's keys")
t.eq(ks.verify_failures, 0, "omap and xattr values verify")
local kr = pool:bench { op = "rand", ops = 100, threads = 8, run_name = "kv" }
t.eq(kr.verify_failures, 0, "rand omap/xattr values verify")
t.eq(kr.errors, 0, "rand omap/xattr errors")
refused({ op = "overwrite", ops = 1, run_name = "kv" }, "omap or xattrs", "an overwrite of an omap run")
refused({ op = "write", ops = 1, write_to = "omap,disk", run_name = "kv2" }, "write_to", "an unknown destination")
local bench_key = pool:bench { op = "write", ops = 4, threads = 2, block_size = "512", write_to = "object,omap",
  run_name = "kv3", prefix = "kv3" }
t.eq(bench_key.errors, 0, "object and omap together")
local both = pool:bench { op = "rand", ops = 20, threads = 2, run_name = "kv3" }
t.eq(both.verify_failures, 0, "object data and omap verify together")

for _, run in ipairs { "ow", "kv", "kv3" } do
  local c = pool:bench { op = "cleanup", run_name = run }
  t.eq(c.errors, 0, "cleanup " .. run)
end
t.eq(pool:read("ow_object0x"), own, "the operator's object beside the run is untouched")
t.eq(pool:read("operator-object"), own, "the operator's other object is untouched")
local left = pool:objects()
table.sort(left)
t.eq(table.concat(left, " "), "operator-object ow_object0x", "only the operator's objects are left")

-- an erasure-coded pool without allow_ec_overwrites refuses overwrites up front
local ec = "cephmark-test-overwrite-ec"
if cluster:pool_exists(ec) then assert(cluster:pool_delete(ec)) end
assert(cluster:pool_create { name = ec, type = "erasure", k = 2, m = 1, pg_num = 8 })
do
  local ecpool <close> = assert(cluster:pool(ec))
  ecpool:bench { op = "write", ops = 4, threads = 2, block_size = "8K", run_name = "e", prefix = "e" }
  local ok, err = pcall(ecpool.bench, ecpool, { op = "overwrite", ops = 1, block_size = "4K", run_name = "e" })
  t.eq(ok, false, "EC overwrite without allow_ec_overwrites refused")
  t.match(tostring(err), "ceph osd pool set " .. ec:gsub("%-", "%%-") .. " allow_ec_overwrites true",
    "with the command that enables it")
  ecpool:bench { op = "cleanup", run_name = "e" }
end
assert(cluster:pool_delete(ec))
assert(cluster:pool_delete(name))
t.done()
