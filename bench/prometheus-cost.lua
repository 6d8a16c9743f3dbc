-- bench/prometheus-cost.lua: what reading a phase's figures from Prometheus costs the
-- client (cephmark.prometheus.collect, as at the end of a run, without the wait for the
-- last scrape): client CPU and wall time per phase, and requests per phase, over `phases`
-- phases of `seconds` each laid end to end in the last minutes, `rounds` times; then the
-- end-of-run wait for one phase that ended just now. Needs a Prometheus (`-p url=...`;
-- bench/prometheus-cost.sh starts one), no cluster.
-- usage: cephmark run bench/prometheus-cost.lua -p url=http://127.0.0.1:9090 [-p phases=20] [-p rounds=5]
local cm = require "cephmark"
local prometheus = require "cephmark.prometheus"
local sys = require "cephmark.sys"
return cm.scenario {
  name = "prometheus-cost",
  params = { url = cm.string("http://127.0.0.1:9090"), phases = cm.integer(20), rounds = cm.integer(5),
    seconds = cm.number(3) },
  run = function(s, p)
    local function fail(line) error(line, 0) end
    local cpu, wall = {}, {}
    local requests
    for round = 1, p.rounds do
      local now = sys.realtime() - 5
      local phases = {}
      for i = 1, p.phases do
        local stop = now - (p.phases - i) * p.seconds
        phases[i] = { window = prometheus.window(stop - p.seconds, stop) }
      end
      local user0, system0 = sys.cpu_times()
      local wall0 = sys.monotonic()
      local done, count = prometheus.collect { url = p.url, source = "bench", phases = phases, wait = false, warn = fail }
      local user1, system1 = sys.cpu_times()
      wall[round] = (sys.monotonic() - wall0) / p.phases
      cpu[round] = ((user1 - user0) + (system1 - system0)) / p.phases
      requests = count
      assert(done == p.phases, "not every phase was read")
      local hosts = 0
      for _ in pairs(phases[1].cluster.prometheus.hosts) do hosts = hosts + 1 end
      print(string.format("round %d: %d phases, %d hosts, %d requests: %.0f µs of client CPU and %.1f ms of wall time per phase",
        round, p.phases, hosts, count, cpu[round] * 1e6, wall[round] * 1e3))
    end
    table.sort(cpu)
    table.sort(wall)
    local middle = (p.rounds + 1) // 2
    print(string.format("per phase (median of %d rounds): %.0f µs of client CPU, %.1f ms of wall time, %d requests",
      p.rounds, cpu[middle] * 1e6, wall[middle] * 1e3, (requests - 1) // p.phases))
    -- the end of a run: one phase that ended just now, read once its last samples are in
    local stop = sys.realtime()
    local phase = { window = prometheus.window(stop - p.seconds, stop) }
    local wall0 = sys.monotonic()
    prometheus.collect { url = p.url, source = "bench", phases = { phase }, warn = fail }
    local figures = phase.cluster.prometheus
    print(string.format("end of run: %.2f s from the last phase's end to its figures (scrape intervals %s s to %s s)",
      sys.monotonic() - wall0, tostring(figures.scrape_interval),
      tostring(figures.longest_scrape_interval or figures.scrape_interval)))
  end,
}
