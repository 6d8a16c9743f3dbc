-- sweep-t-b: rados bench's write over every combination of ops in flight (-t) and block
-- size (-b), each point written then cleaned up, and a table of the results by point.
--
--   cephmark run scenarios/sweep-t-b.lua [-p threads=1,4 -p block_sizes=4K,64K] [-p seconds=5] [--repeats 3]

local cm = require "cephmark"

return cm.scenario {
  name = "sweep-t-b",
  description = "write bandwidth, IOPS and latency over threads x block sizes",
  params = {
    threads = cm.list(cm.integer { min = 1, max = 65536 }, { 1, 4, 16, 64 }, "ops in flight to try"),
    block_sizes = cm.list(cm.size { min = 1, max = "1G" }, { "4K", "64K", "1M", "4M" }, "block sizes to try"),
    seconds = cm.duration("10s", "length of each write phase"),
  },
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s, p)
    local pool = s:pool("bench")
    for point in s:sweep(cm.sweep { threads = p.threads, block_size = p.block_sizes }) do
      s:phase("write", pool, { seconds = p.seconds, threads = point.threads, block_size = point.block_size })
      s:phase("cleanup", pool)
    end
    s:compare { by = "point", phases = { "write" } }
  end,
}
