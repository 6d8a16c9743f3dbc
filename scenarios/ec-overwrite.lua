-- ec-overwrite: partial overwrites at offsets inside objects an earlier phase wrote, on a 3x
-- replicated pool against an erasure-coded pool with allow_ec_overwrites. EC's
-- read-modify-write penalty shows only here: whole-object writes never pay it. For each
-- overwrite size (4K and 64K by default) each pool gets a write run of whole 64 KiB blocks,
-- an overwrite phase of that size at seeded offsets inside them, a verify pass that reads
-- every object back and checks every unit (the write's bytes or an intact overwrite), and
-- a cleanup; then the overwrite phases are compared against the replicated pool.
--
--   cephmark run scenarios/ec-overwrite.lua [-p seconds=30] [-p k=4 -p m=2] [--repeats 3]
--
-- The EC pool needs bluestore OSDs for allow_ec_overwrites (`cephmark cluster up
-- --bluestore` locally; docs/ec-overwrites.md has the measured penalty).

local cm = require "cephmark"
local format_size = require("cephmark.params").format_size

return cm.scenario {
  name = "ec-overwrite",
  description = "partial overwrites (4K, 64K at offsets in written objects): 3x vs EC with allow_ec_overwrites",
  params = {
    seconds = cm.duration("10s", "length of each overwrite phase"),
    threads = cm.integer(16, "ops in flight", { min = 1, max = 65536 }),
    objects = cm.integer(64, "objects written first, in each pool and for each size", { min = 1 }),
    object_size = cm.size("1M", "size of the objects written first (a multiple of 64K)", { min = "64K", max = "64M" }),
    small = cm.size("4K", "the smaller overwrite", { min = 128, max = "64K" }),
    large = cm.size("64K", "the larger overwrite", { min = 128, max = "64K" }),
    size = cm.integer(3, "copies in the replicated pool", { min = 1 }),
    k = cm.integer(2, "data chunks in the erasure-coded pool", { min = 2 }),
    m = cm.integer(1, "coding chunks in the erasure-coded pool", { min = 1 }),
  },
  pools = function(p)
    return {
      { label = "replica", type = "replicated", size = p.size },
      { label = "ec", type = "erasure", k = p.k, m = p.m, ec_overwrites = true },
    }
  end,
  run = function(s, p)
    local block = 65536
    for _, pool in s:each_pool() do
      for _, size in ipairs { p.small, p.large } do
        local run, label = "ec_overwrite_" .. size, format_size(size)
        s:phase("write-" .. label, pool, { op = "write", ops = p.objects * (p.object_size // block), threads = p.threads,
          block_size = block, object_size = p.object_size, run_name = run })
        s:phase("overwrite-" .. label, pool, { op = "overwrite", seconds = p.seconds,
          threads = p.threads, block_size = size, run_name = run })
        s:phase("verify-" .. label, pool, { op = "verify", threads = p.threads, run_name = run })
        s:phase("cleanup-" .. label, pool, { op = "cleanup", run_name = run })
      end
    end
    s:compare { by = "pool", baseline = "replica" }
  end,
}
