-- client-ceiling: what this client host can drive before any cluster is involved. The
-- engine alone (the null target: no I/O, a fixed delay per op standing in for the
-- cluster's latency) at several depths: the ops per second it completes, the client CPU
-- each op costs, and whether the requested ops stay in flight. Run it on a load-generating
-- host before a benchmark: a cluster result near this ceiling measures the client, not
-- the cluster. Needs no cluster.
--
--   cephmark run scenarios/client-ceiling.lua [-p threads=1,16,256] [-p delay=1ms] [-p seconds=5]

local cm = require "cephmark"
local null = require "cephmark.null"

return cm.scenario {
  name = "client-ceiling",
  description = "the engine's ceiling on this host: ops/s, CPU per op and ops in flight by depth (no cluster)",
  params = {
    threads = cm.list(cm.integer { min = 1, max = 65536 }, { 1, 16, 256 }, "ops in flight to try"),
    delay = cm.duration("1ms", "latency each null op stands in for"),
    seconds = cm.duration("5s", "length of each phase"),
  },
  run = function(s, p)
    for point in s:sweep(cm.sweep { threads = p.threads }) do
      local r = s:phase("null", null, { seconds = p.seconds, threads = point.threads, delay = p.delay })
      local cpu = r and r.client_cpu
      if cpu and (cpu.ops or 0) > 0 then
        print(string.format("    client: %.3g us of CPU per op (user+sys, %d ops), %.1f of %d ops in flight on average",
          (cpu.user + cpu.system) * 1e6 / cpu.ops, cpu.ops, r.in_flight_mean or 0, r.threads))
      end
    end
    s:compare { by = "point", phases = { "null" }, metrics = { "iops", "lat.p50", "lat.p99" } }
  end,
}
