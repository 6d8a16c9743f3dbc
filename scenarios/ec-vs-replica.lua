-- ec-vs-replica: a replicated pool against an erasure-coded one. Each pool gets a write
-- phase (objects kept), a sequential and a random read phase over what was written, and a
-- cleanup; then the table compares bandwidth, IOPS and latency against the replicated pool.
--
--   cephmark run scenarios/ec-vs-replica.lua [-p seconds=30] [-p k=4 -p m=2] [-p size=2] [--repeats 3]

local cm = require "cephmark"

return cm.scenario {
  name = "ec-vs-replica",
  description = "replicated vs erasure-coded pool: write, seq and rand on each, compared",
  params = {
    seconds = cm.duration("10s", "length of each write, seq and rand phase"),
    threads = cm.integer(16, "ops in flight", { min = 1, max = 65536 }),
    block_size = cm.size("4M", "bytes per write (reads use what was written)", { min = 1, max = "1G" }),
    size = cm.integer(3, "copies in the replicated pool", { min = 1 }),
    k = cm.integer(2, "data chunks in the erasure-coded pool", { min = 2 }),
    m = cm.integer(1, "coding chunks in the erasure-coded pool", { min = 1 }),
  },
  pools = function(p)
    return {
      { label = "replica", type = "replicated", size = p.size },
      { label = "ec", type = "erasure", k = p.k, m = p.m },
    }
  end,
  run = function(s, p)
    for _, pool in s:each_pool() do
      s:phase("write", pool, { seconds = p.seconds, threads = p.threads, block_size = p.block_size })
      s:phase("seq", pool, { seconds = p.seconds, threads = p.threads })
      s:phase("rand", pool, { seconds = p.seconds, threads = p.threads })
      s:phase("cleanup", pool)
    end
    s:compare { by = "pool", baseline = "replica" }
  end,
}
