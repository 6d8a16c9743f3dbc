-- Size and access distributions of pool:bench against the real local cluster: a write with
-- weighted size buckets and one with a size range write each object whole at the size its
-- index gives; seq, rand (zipf, hotspot) and the verify pass read every object back
-- verified, size included; an object whose size changed is caught with its name and both
-- sizes; the run metadata (format 3) keeps the distribution, and cleanup removes everything.
-- Overwrites take access too, and heat the objects rand heats; one metadata format covers
-- sizes, omap runs and passes; a newer format is refused with one line.
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

-- the verify pass reads every object whole at its own size; overwrites and appends need one
-- object size, and are refused on a sized run
local v = pool:bench { op = "verify", threads = 8, run_name = "dist_b" }
t.eq(v.ops, 300, "verify read every object")
t.eq(v.bytes, w.bytes, "verify read every byte written")
t.eq(v.verify_failures, 0, "verify: no failures")
t.raises(function() pool:bench { op = "overwrite", ops = 1, block_size = "1K", run_name = "dist_b" } end,
  "bench: the run under prefix dist_b has objects of many sizes (object_size as a distribution): overwrite and append work on runs of one object size; seq, rand and verify read it",
  "overwrite on a sized run")
t.raises(function() pool:bench { op = "append", ops = 1, block_size = "1K", run_name = "dist_b" } end,
  "overwrite and append work on runs of one object size", "append on a sized run")

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
local grown_verify = pool:bench { op = "verify", threads = 4, run_name = "dist_r" }
t.eq(grown_verify.verify_failures, 1, "the verify pass finds it too")
t.match(grown_verify.verify_errors[1], "^object dist_r_object7: " .. first .. " or more bytes, the run wrote " .. first,
  "named with the expected size")

-- sizes below the payload's 128-byte header (a pattern window only) and above it, mixed
local tiny = pool:bench { op = "write", ops = 40, threads = 4, object_size = { 1, 300 }, prefix = "dist_t",
  run_name = "dist_t" }
t.eq(tiny.errors, 0, "tiny sizes: write errors")
local tiny_seq = pool:bench { op = "seq", threads = 4, run_name = "dist_t" }
t.eq(tiny_seq.ops, 40, "tiny sizes: seq read every object")
t.eq(tiny_seq.verify_failures, 0, "tiny sizes: every object verifies")
t.eq(tiny_seq.bytes, tiny.bytes, "tiny sizes: every byte")

-- a plain run is format 2 (earlier versions read it); an overwrite pass with a skewed access
-- makes it format 3 with the pass's fields, and every read still verifies
local plain = pool:bench { op = "write", ops = 32, threads = 8, block_size = "16K", object_size = "64K",
  prefix = "dist_p", run_name = "dist_p" }
t.eq(plain.ops, 32, "plain write")
t.match(assert(pool:read("dist_p", 4096)), "^cephmark%-run%-metadata 2\n", "a plain run is format 2")
local hot = pool:bench { op = "overwrite", ops = 400, threads = 8, block_size = "4K", run_name = "dist_p",
  access = "hotspot:25/100", seed = 3 }
t.eq(hot.errors, 0, "skewed overwrite errors")
t.eq(hot.access, "hotspot:25/100", "access in the overwrite's result")
t.eq(hot.seed, 3, "and the seed")
local after = assert(pool:read("dist_p", 4096))
t.match(after, "^cephmark%-run%-metadata 3\n", "an overwritten run is format 3")
t.match(after, "\noverwrite_block 4096\n", "with the unit")
t.match(after, "\noverwrites 400\n", "and the count")
-- hotspot:25/100 puts every overwrite on 2 of the 8 objects (25 %): the others are as written
local again = pool:bench { op = "overwrite", ops = 400, threads = 8, block_size = "4K", run_name = "dist_p",
  access = "hotspot:25/100", seed = 4 }
t.eq(again.overwrites, 800, "a second skewed pass adds up")
local pv = pool:bench { op = "verify", threads = 4, run_name = "dist_p" }
t.eq(pv.ops, 8, "verify read the 8 objects")
t.eq(pv.verify_failures, 0, "skewed overwrites verify")
local pr = pool:bench { op = "rand", ops = 300, threads = 8, run_name = "dist_p", access = "hotspot:25/100" }
t.eq(pr.verify_failures, 0, "rand over the overwritten run verifies")
t.raises(function() pool:bench { op = "append", ops = 1, run_name = "dist_p", access = "zipf:1" } end,
  "bench: access applies to rand and overwrite only", "access on append")

-- an omap run is format 3 as well, and reads back
local kv = pool:bench { op = "write", ops = 20, threads = 4, block_size = 256, write_to = "omap", prefix = "dist_k",
  run_name = "dist_k" }
t.eq(kv.ops, 20, "omap write")
local kv_meta = assert(pool:read("dist_k", 4096))
t.match(kv_meta, "^cephmark%-run%-metadata 3\n", "an omap run is format 3")
t.match(kv_meta, "\nwrite_to 2\n", "with its destination")
local kv_seq = pool:bench { op = "seq", threads = 4, run_name = "dist_k" }
t.eq(kv_seq.verify_failures, 0, "the omap run reads back")
t.raises(function() pool:bench { op = "write", ops = 1, write_to = "omap", object_size = { "1K", "4K" } } end,
  "bench: object_size as a distribution sizes object data: leave write_to out", "sizes with omap")

-- a newer format than this version reads is refused with one line, not read as plain data
local future = after:gsub("^cephmark%-run%-metadata 3", "cephmark-run-metadata 4")
assert(pool:write_full("dist_future", future))
t.raises(function() pool:bench { op = "seq", run_name = "dist_future" } end,
  "run metadata 'dist_future' is format 4, written by a newer cephmark: this one reads formats 1 to 3 (use the version that wrote the run)",
  "a newer format")
assert(pool:remove("dist_future"))

-- misuse
t.raises(function() pool:bench { op = "rand", ops = 1, run_name = "dist_b", access = "zipf:0" } end,
  "bench: access 'zipf:0': zipf θ must be above 0 and at most 10", "zipf θ out of range")
t.raises(function() pool:bench { op = "seq", run_name = "dist_b", access = "zipf:1" } end,
  "bench: access applies to rand and overwrite only", "access on seq")
t.raises(function() pool:bench { op = "write", ops = 1, object_size = {} } end,
  "bench: object_size is a size, a range {low, high} or buckets { {size, weight}, ... }, got a table of 0 values",
  "an empty table")

-- cleanup by metadata removes both runs
local c1 = pool:bench { op = "cleanup", run_name = "dist_b" }
local c2 = pool:bench { op = "cleanup", run_name = "dist_r" }
local c3 = pool:bench { op = "cleanup", run_name = "dist_t" }
local c4 = pool:bench { op = "cleanup", run_name = "dist_p" }
local c5 = pool:bench { op = "cleanup", run_name = "dist_k" }
t.eq(c1.ops + c2.ops + c3.ops, 400, "cleanup removed every object")
t.eq(c4.ops, 8, "and the overwritten run's")
t.eq(c5.ops, 20, "and the omap run's")
t.eq(#pool:objects("dist_"), 0, "nothing left")
cluster:pool_delete(name)
return t.done()
