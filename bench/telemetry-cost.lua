-- bench/telemetry-cost.lua: a fixed number of 4K writes (then their cleanup) on a pool of
-- their own, with the OSD counters read around each phase (the default) or not
-- (CEPHMARK_BENCH_TELEMETRY=off: telemetry = false). bench/telemetry-cost.sh runs both,
-- interleaved: the same work on both sides, so the difference in client CPU is what the
-- readings cost.
local cm = require "cephmark"
local on = os.getenv("CEPHMARK_BENCH_TELEMETRY") ~= "off"
return cm.scenario {
  name = on and "telemetry-cost-on" or "telemetry-cost-off",
  telemetry = on,
  params = { ops = cm.integer(6000, "4K writes", { min = 1 }), threads = cm.integer(16, "ops in flight") },
  pools = { bench = { type = "replicated", size = 3, pg_num = 8 } },
  run = function(s, p)
    local pool = s:pool("bench")
    s:phase("write", pool, { ops = p.ops, threads = p.threads, block_size = "4K", report = "none" })
    s:phase("cleanup", pool, { report = "none" })
  end,
}
