-- pool:bench against the real local cluster: the op count of a write run equals the
-- objects in the pool, seq reads everything back verified, a corrupted object is caught
-- with its name and offset, partial-object writes (-b < -O), runs sharing a pool, and
-- cleanup by metadata and by prefix, which leaves the caller's options table as it was.
local connection = require "cephmark.connection"
local t = require "cephmark.test"

local cluster <close> = connection.connect()
local name = "cephmark-test-bench"
assert(cluster:pool_create { name = name, size = 3 })
local pool <close> = assert(cluster:pool(name))

-- write 2 s of 4K objects: every op is one object
local seconds_seen = 0
local w = pool:bench { op = "write", seconds = 2, threads = 8, block_size = "4K", prefix = "bench_a",
  run_name = "run_a", on_second = function(s) seconds_seen = seconds_seen + 1 end }
t.eq(w.errors, 0, "write errors")
t.ok(w.ops > 100, "write made progress")
t.eq(w.ops, w.started, "every started write finished")
t.eq(#pool:objects("bench_a_object"), w.ops, "objects in the pool == write ops")
t.ok(seconds_seen >= 2, "per-second callback ran")
t.ok(w.lat.p50 > 0 and w.lat.p99 >= w.lat.p50 and w.lat.max >= w.lat.p99, "percentiles ordered")
t.eq(#w.series >= 2, true, "series has the seconds")

-- seq reads everything, in write order, verified
local s = pool:bench { op = "seq", threads = 8, run_name = "run_a" }
t.eq(s.ops, w.ops, "seq read every block")
t.eq(s.verify_failures, 0, "no verify failures")
t.eq(s.errors, 0, "no read errors")

-- a second run shares the pool under another run name
local w2 = pool:bench { op = "write", ops = 50, threads = 4, block_size = "64K", object_size = "256K",
  prefix = "bench_b", run_name = "run_b" }
t.eq(w2.ops, 50, "op-count bound")
t.eq(#pool:objects("bench_b_object"), 13, "64K blocks into 256K objects: ceil(50/4) objects")
local size = pool:stat("bench_b_object0")
t.eq(size, 262144, "first object written at four offsets")
local r2 = pool:bench { op = "rand", seconds = 1, threads = 4, run_name = "run_b" }
t.eq(r2.verify_failures, 0, "rand over partial-object writes verifies")
t.ok(r2.ops > 0, "rand made progress")

-- corrupt one object of run a: seq reports it with object and offset
assert(pool:write_full("bench_a_object3", string.rep("x", 4096)))
local bad = pool:bench { op = "seq", threads = 8, run_name = "run_a" }
t.eq(bad.verify_failures, 1, "one corrupted block detected")
t.match(bad.verify_errors[1] or "", "bench_a_object3", "the report names the object")
t.match(bad.verify_errors[1] or "", "offset 0", "and the offset")
local off = pool:bench { op = "seq", threads = 8, run_name = "run_a", verify = false }
t.eq(off.verify_failures, 0, "verification can be turned off")

-- cleanup by metadata removes run a only, then its metadata
t.raises(function() pool:bench { op = "seq", run_name = "run_a", thread = 8 } end,
  "bench: unknown option 'thread' (expected one of access, block_size, hints, key_size, keys_per_op, mix, object_size, op, prefix, run_name, seed, temporary, verify, write_to, arrivals, arrivals_seed, bytes,",
  "a misspelt option is refused, not ignored")
local c = pool:bench { op = "cleanup", run_name = "run_a" }
t.eq(c.ops, w.ops, "cleanup removed every object of run a")
t.eq(#pool:objects("bench_a_object"), 0, "run a's objects are gone")
t.eq(#pool:objects("bench_b_object"), 13, "run b's objects are untouched")
t.eq(pool:stat("run_a"), nil, "run a's metadata is gone")

-- an interrupted run left objects but no metadata: cleanup works by prefix
assert(pool:remove("run_b"))
local cleanup_options = { op = "cleanup", run_name = "run_b", prefix = "bench_b_" }
local cp = pool:bench(cleanup_options)
t.eq(cp.ops, 13, "cleanup by prefix removed run b's objects")
local keys = {}
for key in pairs(cleanup_options) do keys[#keys + 1] = key end
table.sort(keys)
t.eq(table.concat(keys, ","), "op,prefix,run_name",
  "the caller's options are only read: no threads, ignore_interrupt or names written into them")
t.eq(cp.threads, 256, "cleanup's own default: 256 removes in flight")
t.eq(cp.verify, true, "an option's default is in the result")
t.eq(#pool:objects(), 0, "the pool is empty")

-- open loop at a fixed rate
local o = pool:bench { op = "write", seconds = 2, threads = 16, block_size = "4K", rate = 200,
  prefix = "bench_c", run_name = "run_c" }
t.near(o.started / 2, 200, 20, "open loop keeps the rate")
t.ok(o.lat_uncorrected ~= nil, "open loop keeps the uncorrected histogram")
t.ok(o.lat.p99 >= o.lat_uncorrected.p50, "corrected latency is not below uncorrected")
pool:bench { op = "cleanup", run_name = "run_c" }

pool:close()
assert(cluster:pool_delete(name))
return t.done()
