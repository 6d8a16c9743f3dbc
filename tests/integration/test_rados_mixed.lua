-- A mixed phase (op = "mixed") over a write run's objects against the local cluster: reads
-- (whole objects and blocks), overwrites, stats and removes by ratios, with per-op results
-- that add up to the total, no misses (no op went to an object the phase removed), reads
-- that verify after the overwrites, the same per-op counts for the same seed, a run with
-- removed objects refused by every phase but cleanup, and a cleanup afterwards that leaves
-- only the operator's object.
local rados = require "cephmark.rados"
local t = require "cephmark.test"

local cluster <close> = assert(rados.connect())
local name = "cephmark-test-mixed"
if cluster:pool_exists(name) then assert(cluster:pool_delete(name)) end
assert(cluster:pool_create { name = name, size = 3, pg_num = 8 })
local pool <close> = assert(cluster:pool(name))
local own = string.rep("operator data ", 700)
assert(pool:write_full("mx_object0x", own))

local function refused(options, pattern, what)
  local ok, err = pcall(pool.bench, pool, options)
  t.eq(ok, false, what .. ": refused")
  t.match(tostring(err), pattern, what .. ": says why")
end

-- two runs of 64 objects of 4 blocks of 16 KiB
for _, run in ipairs { "mx", "my" } do
  local w = pool:bench { op = "write", ops = 256, threads = 8, block_size = "16K", object_size = "64K",
    run_name = run, prefix = run }
  t.eq(w.errors, 0, run .. ": write errors")
  t.eq(w.objects, 64, run .. ": 64 objects written")
end

local mix = { read = 60, write = 30, stat = 5, remove = 5 }
local m = pool:bench { op = "mixed", mix = mix, ops = 400, threads = 8, block_size = "4K", seed = 11,
  run_name = "mx" }
t.eq(m.ops, 400, "the op bound")
t.eq(m.errors, 0, "no errors")
t.eq(m.misses, 0, "no op went to an object the phase removed")
t.eq(m.verify_failures, 0, "reads and stats verify after the overwrites: " ..
  table.concat(m.verify_errors or {}, "; "))
local names, sum = {}, 0
for op_name, op in pairs(m.by_op) do
  names[#names + 1] = op_name
  sum = sum + op.ops
  t.eq(op.latency.count, op.ops, op_name .. ": every op in its histogram")
end
table.sort(names)
t.eq(table.concat(names, " "), "read remove stat write", "all four kinds ran")
t.eq(sum, m.ops, "per-op counts sum to the total")
t.eq(m.objects_removed, m.by_op.remove.ops, "the removes are the objects removed")
t.eq(m.by_op.stat.bytes + m.by_op.remove.bytes, 0, "stat and remove move no data")
t.eq(m.by_op.write.bytes, m.by_op.write.ops * 4096, "writes are 4 KiB overwrites")
t.ok(m.by_op.read.bytes >= m.by_op.read.ops * 16384, "reads are whole blocks or whole objects")
t.ok(m.by_op.read.bytes < m.by_op.read.ops * 65536, "and not all of them whole objects")
t.eq(m.overwrite_block, 4096, "the overwrite unit is recorded in the run")
t.eq(m.overwrites, m.by_op.write.ops, "and the overwrites")

-- the same seed and op bound on the other run: the same counts per kind
local again = pool:bench { op = "mixed", mix = mix, ops = 400, threads = 4, block_size = "4K", seed = 11,
  run_name = "my" }
for op_name, op in pairs(m.by_op) do
  t.eq(again.by_op[op_name].ops, op.ops, op_name .. ": the same seed gives the same count")
end
t.eq(again.misses, 0, "no misses on the second run")
t.eq(again.verify_failures, 0, "and no verify failures")

-- a run that lost objects is for cleanup only
refused({ op = "seq", threads = 4, run_name = "mx" }, "removed by a mixed phase: only cleanup", "seq after removes")
refused({ op = "mixed", ops = 10, run_name = "mx" }, "only cleanup", "another mixed phase")

-- a mix without removes keeps every object; reads only, with the default block
local w3 = pool:bench { op = "write", ops = 32, threads = 4, block_size = "16K", object_size = "32K",
  run_name = "mz", prefix = "mz" }
t.eq(w3.errors, 0, "mz write")
local r = pool:bench { op = "mixed", mix = { read = 3, stat = 1 }, ops = 200, threads = 8, run_name = "mz" }
t.eq(r.errors + r.misses + r.verify_failures, 0, "a read/stat mix: no errors, misses or verify failures")
t.eq(r.objects_removed, 0, "nothing removed")
t.eq(r.by_op.write, nil, "no writes drawn")
local seq = pool:bench { op = "seq", threads = 4, run_name = "mz" }
t.eq(seq.ops, 32, "the run stays whole for later phases")

for _, run in ipairs { "mx", "my", "mz" } do
  local c = pool:bench { op = "cleanup", run_name = run }
  t.eq(c.errors, 0, "cleanup " .. run .. " after its mixed phase")
end
t.eq(pool:read("mx_object0x"), own, "the operator's object beside the run is untouched")
local left = pool:objects()
table.sort(left)
t.eq(table.concat(left, " "), "mx_object0x", "no leftovers: only the operator's object")
assert(cluster:pool_delete(name))
t.done()
