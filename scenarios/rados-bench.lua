-- rados-bench: the classic rados bench procedure in one run, with rados bench's output:
-- create a pool, write for 10 s keeping the objects (--no-cleanup), read them back in
-- order (seq) and at random (rand), then remove them (cleanup) and the pool.
--
--   cephmark run scenarios/rados-bench.lua [-p seconds=30] [-p threads=32] [-p block_size=64K]
--   cephmark run scenarios/rados-bench.lua -p pool_type=erasure -p k=4 -p m=2

local cm = require "cephmark"

return cm.scenario {
  name = "rados-bench",
  description = "rados bench write (objects kept), seq, rand and cleanup in a new pool",
  params = {
    seconds = cm.duration("10s", "length of the write, seq and rand phases (rados bench SECONDS)"),
    threads = cm.integer(16, "ops in flight (-t)", { min = 1, max = 65536 }),
    block_size = cm.size("4M", "bytes per op (-b)", { min = 1, max = "1G" }),
    pool_type = cm.enum({ "replicated", "erasure" }, "replicated", "the pool's type"),
    size = cm.integer(3, "copies, for a replicated pool", { min = 1 }),
    k = cm.integer(2, "data chunks, for an erasure-coded pool", { min = 2 }),
    m = cm.integer(1, "coding chunks, for an erasure-coded pool", { min = 1 }),
  },
  pools = function(p)
    if p.pool_type == "erasure" then return { bench = { type = "erasure", k = p.k, m = p.m } } end
    return { bench = { type = "replicated", size = p.size } }
  end,
  run = function(s, p)
    local pool = s:pool("bench")
    local reads = { seconds = p.seconds, threads = p.threads, report = "rados-bench" }
    s:phase("write", pool, { seconds = p.seconds, threads = p.threads, block_size = p.block_size,
      report = "rados-bench" })
    s:phase("seq", pool, reads)
    s:phase("rand", pool, reads)
    s:phase("cleanup", pool, { report = "rados-bench" })
  end,
}
