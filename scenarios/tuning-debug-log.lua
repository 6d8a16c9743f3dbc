-- tuning-debug-log: what the OSDs' debug logging costs. 4K writes with debug_ms and
-- debug_osd as the cluster has them (their defaults), then with both at 0/0, set through
-- the monitors (`ceph config set osd ...`); the previous settings are restored afterwards,
-- also when the run fails or is interrupted.
--
--   cephmark run scenarios/tuning-debug-log.lua [-p seconds=30] [-p threads=32] [--repeats 5]

local cm = require "cephmark"

return cm.scenario {
  name = "tuning-debug-log",
  description = "4K writes with OSD debug_ms/debug_osd at their defaults vs 0/0",
  params = {
    seconds = cm.duration("10s", "length of each write phase"),
    threads = cm.integer(16, "ops in flight", { min = 1, max = 65536 }),
    block_size = cm.size("4K", "bytes per write", { min = 1, max = "1G" }),
  },
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s, p)
    local logging = cm.zip({
      ["osd/debug_ms"] = { cm.DEFAULT, "0/0" },
      ["osd/debug_osd"] = { cm.DEFAULT, "0/0" },
    }, { labels = { "defaults", "0/0" } })
    for _ in s:sweep(logging) do
      s:phase("write", s:pool("bench"), { seconds = p.seconds, threads = p.threads, block_size = p.block_size })
      s:phase("cleanup", s:pool("bench"))
    end
    s:compare { by = "point", phases = { "write" }, baseline = "defaults" }
  end,
}
