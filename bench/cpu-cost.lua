-- bench/cpu-cost.lua: the scenario bench/cpu-cost.sh runs with the CPU telemetry on and off
-- (TELEMETRY=false in the environment turns it off): 4K writes on a size-3 pool, then the
-- cleanup of what they wrote.
local cm = require "cephmark"
return cm.scenario {
  name = "telemetry-cost",
  telemetry = os.getenv("TELEMETRY") ~= "false",
  params = { seconds = cm.duration("5s"), threads = cm.integer(16) },
  pools = { bench = { type = "replicated", size = 3, pg_num = 8 } },
  run = function(s, p)
    s:phase("write", s:pool("bench"), { seconds = p.seconds, threads = p.threads, block_size = "4K" })
    s:phase("cleanup", s:pool("bench"))
  end,
}
