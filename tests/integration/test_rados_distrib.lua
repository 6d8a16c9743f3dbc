-- Size and access distributions of pool:bench against the real local cluster: a write with
-- weighted size buckets and one with a size range write each object whole at the size its
-- index gives; seq and rand (zipf, hotspot) read every object back verified, size
-- included; an object whose size changed is caught with its name and both sizes; the run
-- metadata (format 3) keeps the distribution, and cleanup removes everything.
local connection = require "cephmark.connection"
local t = require "cephmark.test"

local cluster <close> = connection.connect()
local name = "cephmark-test-distrib"
assert(cluster:pool_create { name = name, size = 3 })
local pool <close> = assert(cluster:pool(name))

-- weighted buckets: 300 objects, each one write of its own size
local buckets = { { "1K", 50 }, { "8K", 30 }, { "64K", 20 } }
local w = pool:bench { op = "write", ops = 300, threads = 8, object_size = buckets, prefix = "dist_b",
  run_name = "dist_b" }
t.eq(w.errors, 0, "write errors")
t.eq(w.ops, 300, "one op per object")
t.eq(w.objects, 300, "300 objects")
t.eq(w.object_sizes, "buckets:1024*50,8192*30,65536*20", "the distribution in the result")
t.eq(w.object_size, 65536, "object_size: the largest")
local count, total = { [1024] = 0, [8192] = 0, [65536] = 0 }, 0
for _, object in ipairs(pool:objects("dist_b_object")) do
  local size = pool:stat(object)
  count[size] = (count[size] or 0) + 1
  total = total + size
end
t.eq(count[1024] + count[8192] + count[65536], 300, "every object has a bucket's size")
t.ok(count[1024] > 100 and count[8192] > 50 and count[65536] > 25,
  string.format("every bucket is used in proportion (%d, %d, %d)", count[1024], count[8192], count[65536]))
t.eq(total, w.bytes, "the bytes written are the objects' sizes")

-- the metadata records format 3 and the sizes
local meta = assert(pool:read("dist_b", 4096))
t.match(meta, "cephmark%-run%-metadata 3\n", "format 3")
t.match(meta, "\nobject_sizes buckets:1024%*50,8192%*30,65536%*20\n", "the distribution is stored")

-- seq reads every object whole, verified
local s = pool:bench { op = "seq", threads = 8, run_name = "dist_b" }
t.eq(s.ops, 300, "seq read every object")
t.eq(s.bytes, w.bytes, "seq read every byte written")
t.eq(s.verify_failures, 0, "seq: no verify failures")
t.eq(s.errors, 0, "seq: no errors")

-- rand with skewed access, verified; the same seed reads the same bytes
local z = pool:bench { op = "rand", ops = 1500, threads = 8, run_name = "dist_b", access = "zipf:1.2", seed = 5 }
t.eq(z.ops, 1500, "zipf rand ran")
t.eq(z.verify_failures, 0, "zipf rand: no verify failures")
t.eq(z.errors, 0, "zipf rand: no errors")
t.eq(z.access, "zipf:1.2", "access in the result")
local z2 = pool:bench { op = "rand", ops = 1500, threads = 8, run_name = "dist_b", access = "zipf:1.2", seed = 5 }
t.eq(z2.bytes, z.bytes, "the same seed reads the same objects")
local h = pool:bench { op = "rand", ops = 1000, threads = 8, run_name = "dist_b", access = "hotspot:10/90" }
t.eq(h.verify_failures, 0, "hotspot rand: no verify failures")
local u = pool:bench { op = "rand", ops = 1000, threads = 8, run_name = "dist_b" }
t.eq(u.verify_failures, 0, "uniform rand: no verify failures")
t.eq(u.access, "uniform", "uniform is the default")

-- a size range; an object cut short is reported with both sizes
local r = pool:bench { op = "write", ops = 60, threads = 4, object_size = { "1K", "20K" }, prefix = "dist_r",
  run_name = "dist_r" }
t.eq(r.ops, 60, "range write")
t.eq(r.object_sizes, "range:1024-20480", "the range in the result")
local small, large = math.huge, 0
for _, object in ipairs(pool:objects("dist_r_object")) do
  local size = pool:stat(object)
  small, large = math.min(small, size), math.max(large, size)
end
t.ok(small >= 1024 and large <= 20480 and large > small, "sizes within the range, not all equal")
local first = pool:stat("dist_r_object7")
assert(pool:write_full("dist_r_object7", string.rep("x", 100)))
local bad = pool:bench { op = "seq", threads = 4, run_name = "dist_r" }
t.eq(bad.verify_failures, 1, "one object of the wrong size")
t.eq(bad.verify_errors[1], string.format("object dist_r_object7: 100 bytes, the write run wrote %d", first),
  "named with both sizes")
-- one that grew is caught too: the read asks for a byte more than the object's size
assert(pool:write_full("dist_r_object7", string.rep("x", first + 1)))
local grown = pool:bench { op = "seq", threads = 4, run_name = "dist_r" }
t.eq(grown.verify_failures, 1, "an object that grew")

-- sizes below the payload's 128-byte header (a pattern window only) and above it, mixed
local tiny = pool:bench { op = "write", ops = 40, threads = 4, object_size = { 1, 300 }, prefix = "dist_t",
  run_name = "dist_t" }
t.eq(tiny.errors, 0, "tiny sizes: write errors")
local tiny_seq = pool:bench { op = "seq", threads = 4, run_name = "dist_t" }
t.eq(tiny_seq.ops, 40, "tiny sizes: seq read every object")
t.eq(tiny_seq.verify_failures, 0, "tiny sizes: every object verifies")
t.eq(tiny_seq.bytes, tiny.bytes, "tiny sizes: every byte")

-- misuse
t.raises(function() pool:bench { op = "rand", ops = 1, run_name = "dist_b", access = "zipf:0" } end,
  "bench: access 'zipf:0': zipf θ must be above 0 and at most 10", "zipf θ out of range")
t.raises(function() pool:bench { op = "seq", run_name = "dist_b", access = "zipf:1" } end,
  "bench: access and seed apply to rand reads only", "access on seq")
t.raises(function() pool:bench { op = "write", ops = 1, object_size = {} } end,
  "bench: object_size is a size, a range {low, high} or buckets { {size, weight}, ... }, got a table of 0 values",
  "an empty table")

-- cleanup by metadata removes both runs
local c1 = pool:bench { op = "cleanup", run_name = "dist_b" }
local c2 = pool:bench { op = "cleanup", run_name = "dist_r" }
local c3 = pool:bench { op = "cleanup", run_name = "dist_t" }
t.eq(c1.ops + c2.ops + c3.ops, 400, "cleanup removed every object")
t.eq(#pool:objects("dist_"), 0, "nothing left")
cluster:pool_delete(name)
return t.done()
