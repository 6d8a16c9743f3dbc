-- bench/telemetry-cost.lua: a fixed number of 4K writes (then their cleanup) on a pool of
-- their own, in one write phase or split over `phases`, with the cluster's side read
-- around each phase (the default) or not (CEPHMARK_BENCH_TELEMETRY=off: telemetry = false).
-- bench/telemetry-cost.sh runs both, interleaved: the same work on both sides, so the
-- difference in client CPU is what telemetry costs (per phase, with many small phases).
-- Each write phase also prints the client's CPU over the phase alone (the engine's own
-- getrusage over its ops: what `cpu.client_per_op` records), as `inphase_us_per_op=N`.
local cm = require "cephmark"
local on = os.getenv("CEPHMARK_BENCH_TELEMETRY") ~= "off"
return cm.scenario {
  name = on and "telemetry-cost-on" or "telemetry-cost-off",
  telemetry = on,
  params = { ops = cm.integer(6000, "4K writes", { min = 1 }), threads = cm.integer(16, "ops in flight"),
    phases = cm.integer(1, "write phases the ops are split over", { min = 1 }) },
  pools = { bench = { type = "replicated", size = 3, pg_num = 8 } },
  run = function(s, p)
    local pool = s:pool("bench")
    for i = 1, p.phases do
      local ops = p.ops // p.phases + (i <= p.ops % p.phases and 1 or 0)
      local result = s:phase("write", pool, { ops = ops, threads = p.threads, block_size = "4K", report = "none",
        label = p.phases > 1 and ("part " .. i) or nil })
      local client = result.client_cpu
      if client and client.ops > 0 then
        print(string.format("inphase_us_per_op=%.2f", (client.user + client.system) / client.ops * 1e6))
      end
    end
    s:phase("cleanup", pool, { report = "none" })
  end,
}
