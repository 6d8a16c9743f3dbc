-- bench/aa-spread.lua: an A/A experiment, the scenario that bench/aa-spread.sh runs with
-- --repeats. Two variants, a and b, that differ in nothing: each gets a 4K write phase, then
-- a 4M write phase, each followed by the cleanup of what it wrote. Whatever difference and
-- spread their figures show is the noise of this machine and cluster, which
-- bench/aa-spread-report.lua turns into the resolution of 3, 5 and 10 repetitions.
--
--   cephmark run bench/aa-spread.lua --repeats 10 [-p layout=one-pool|two-pools]
--     [-p pg_num=8] [-p seconds_4k=5s] [-p seconds_4m=4s]
--
-- layout = "one-pool" (the default) runs a and b in the same pool, as the two points of a
-- sweep over `side`: they share everything but the time they run at, which is the noise the
-- statistics assume (docs/statistics.md). layout = "two-pools" gives each its own pool of
-- the same layout, as a comparison of two pool layouts does: each pool's placement groups
-- pick their primary OSDs in their own way, and with few PGs on few OSDs that is a real,
-- lasting difference between "identical" pools, which this layout measures too.
-- The sizes are the outer loop and a, b the inner one, so the two variants of a pair run
-- back to back: a, b, then b, a in the next repetition (the ABBA order of s:sweep and
-- s:each_pool). Every phase carries its variant as `side` (a or b) and `block_size`.

local cm = require "cephmark"

return cm.scenario {
  name = "aa-spread",
  description = "A/A: two identical variants, 4K then 4M writes in each, compared",
  params = {
    layout = cm.enum({ "one-pool", "two-pools" }, "one-pool", "a and b in one pool, or in two pools of the same layout"),
    pg_num = cm.integer(8, "placement groups of each pool", { min = 1, max = 4096 }),
    seconds_4k = cm.duration("5s", "length of each 4K write phase"),
    threads_4k = cm.integer(16, "4K writes in flight", { min = 1, max = 4096 }),
    seconds_4m = cm.duration("4s", "length of each 4M write phase"),
    threads_4m = cm.integer(4, "4M writes in flight", { min = 1, max = 256 }),
    -- memstore keeps every byte in RAM: a 4M phase stops at this many objects even when its
    -- seconds are not over
    max_objects_4m = cm.integer(192, "4M objects written at most per phase", { min = 1 }),
    size = cm.integer(3, "copies in each pool", { min = 1 }),
  },
  pools = function(p)
    if p.layout == "two-pools" then
      return {
        { label = "a", type = "replicated", size = p.size, pg_num = p.pg_num },
        { label = "b", type = "replicated", size = p.size, pg_num = p.pg_num },
      }
    end
    return { { label = "ab", type = "replicated", size = p.size, pg_num = p.pg_num } }
  end,
  run = function(s, p)
    local sizes = {
      { block_size = "4K", options = { seconds = p.seconds_4k, threads = p.threads_4k } },
      { block_size = "4M", options = { seconds = p.seconds_4m, threads = p.threads_4m, ops = p.max_objects_4m } },
    }
    local function write_and_clean(pool, side, size)
      local variant = { block_size = size.block_size }
      if side ~= nil then variant.side = side end
      local options = { block_size = size.block_size, variant = variant }
      for key, value in pairs(size.options) do options[key] = value end
      s:phase("write", pool, options)
      s:phase("cleanup", pool, { variant = variant })
    end
    for _, size in ipairs(sizes) do
      if p.layout == "two-pools" then
        for label, pool in s:each_pool() do write_and_clean(pool, label, size) end
      else
        for _ in s:sweep(cm.sweep { side = { "a", "b" } }) do write_and_clean(s:pool("ab"), nil, size) end
      end
    end
    local by = p.layout == "two-pools" and "pool" or "side"
    for _, size in ipairs(sizes) do
      s:compare { by = by, baseline = "a", phases = { "write" }, where = { block_size = size.block_size },
        title = "A/A, " .. size.block_size .. " writes (baseline a, marked *)" }
    end
  end,
}
