-- What a distributed phase's result says beyond the merge (distributed.lua): an open loop's
-- rate split over the agents (shares summing to the rate exactly), the slow agent named by
-- the telemetry's rule for a slow OSD, and the per-host rows that join agents and host
-- monitors on the same host. Figures written by hand; no cluster needed.
local distributed = require "cephmark.distributed"
local t = require "cephmark.test"

local function sum(shares)
  local total, n = 0, 0
  for _, v in pairs(shares) do
    total, n = total + v, n + 1
  end
  return total, n
end

-- rate shares
local shares = distributed.rate_shares(1000, { "c", "a", "b" })
t.eq(shares.a, 334, "the remainder goes to the first agents by name")
t.eq(shares.b, 333, "the others get the whole quotient")
t.eq(shares.c, 333, "the others get the whole quotient (c)")
t.eq(math.type(shares.a), "integer", "whole ops/s")
t.eq(sum(shares), 1000, "shares sum to the rate")
for _, case in ipairs { { 7, 2 }, { 24, 24 }, { 100, 8 }, { 1001, 24 }, { 5, 5 } } do
  local names = {}
  for i = 1, case[2] do names[i] = string.format("agent%02d", i) end
  local total, n = sum(distributed.rate_shares(case[1], names))
  t.eq(total, case[1], string.format("rate %d over %d agents sums to it", case[1], case[2]))
  t.eq(n, case[2], string.format("rate %d: one share per agent", case[1]))
end
local fractional = distributed.rate_shares(3, { "a", "b", "c", "d" })
t.eq(fractional.a, 0.75, "fewer ops/s than agents: equal fractional shares")
t.eq(sum(fractional), 3, "which still sum to the rate")

-- slow agents: p99 more than twice the peers' median, or IOPS under half of it
local agents = {
  a1 = { host = "h1", ops = 1000, iops = 500, p50 = 0.002, p99 = 0.010 },
  a2 = { host = "h1", ops = 1000, iops = 520, p50 = 0.002, p99 = 0.011 },
  a3 = { host = "h2", ops = 1000, iops = 480, p50 = 0.002, p99 = 0.050 },
  a4 = { host = "h3", ops = 200, iops = 100, p50 = 0.002, p99 = 0.012 },
}
local slow = distributed.slow_agents(agents)
t.eq(#slow, 2, "two agents stand out")
t.eq(slow[1].agent, "a4", "the worst first (a4: a fifth of its peers' IOPS)")
t.ok(slow[1].reasons[1]:find("100 IOPS (peers 500)", 1, true) ~= nil, "named by IOPS: " .. slow[1].reasons[1])
t.eq(slow[2].agent, "a3", "a3 by its p99")
t.eq(slow[2].reasons[1], "p99 50 ms (peers 11 ms)", "the telemetry's wording")
t.eq(#distributed.slow_agents { a1 = agents.a1, a3 = agents.a3 }, 0, "one peer is too few to compare with")
local few = { a1 = agents.a1, a2 = agents.a2, a3 = { host = "h2", ops = 10, iops = 5, p99 = 1 } }
t.eq(#distributed.slow_agents(few), 0, "an agent with under 20 ops is never named")

-- per-host rows: agents summed by host, a monitor on an agent's host on the same row
local monitors = {
  mon_h2 = { host = "h2", cpu = { busy_fraction = 0.5 }, ceph = { osd_seconds = 3.5 } },
  mon_h9 = { host = "h9", cpu = { busy_fraction = 0.1 } },
  gone = { missing = "no answer to the phase-start notify within 3 s" },
}
local rows = distributed.per_host(agents, monitors, slow)
t.eq(#rows.h1.agents, 2, "h1 holds two agents")
t.eq(rows.h1.ops, 2000, "their ops summed")
t.eq(rows.h1.iops, 1020, "their IOPS summed")
t.eq(rows.h1.p99, 0.011, "the host's worst p99")
t.eq(rows.h1.monitor, nil, "no monitor on h1")
t.eq(rows.h2.agents[1], "a3", "h2: agent a3")
t.eq(rows.h2.monitor, "mon_h2", "and monitor mon_h2 on the same row")
t.eq(rows.h2.host_cpu_busy, 0.5, "with the host's CPU")
t.eq(rows.h2.osd_cpu_seconds, 3.5, "and its OSDs' CPU")
t.eq(rows.h2.slow, true, "the slow agent's host is marked")
t.eq(#rows.h9.agents, 0, "a monitor's host without agents has a row of its own")
t.eq(rows.gone.monitor_missing, "no answer to the phase-start notify within 3 s", "a missing monitor by its name")

-- the scheduled start: the lead, the instant on an agent's clock, and the figures of the
-- actual starts
t.eq(distributed.start_lead(0.001), distributed.START_LEAD_MIN, "a quick prepare barrier: the least lead")
t.near(distributed.start_lead(0.2), 0.6, 1e-9, "three prepare round trips")
t.near(distributed.start_lead(0.01, 0.2), 0.4, 1e-9, "twice what the previous phase needed")
t.eq(distributed.start_lead(10), distributed.START_LEAD_MAX, "never more than the most")
local boot = distributed.boot_id()
local schedule = { lead = 0.3, monotonic = 1000.3, realtime = 5000.3, boot = boot }
if boot then
  local at, clock = distributed.start_instant(schedule, 5000.05, 1000.05)
  t.eq(clock, "monotonic", "an agent of the coordinator's boot uses the shared monotonic clock")
  t.eq(at, 1000.3, "and its instant as it is")
end
local other = { lead = 0.3, monotonic = 1000.3, realtime = 5000.3, boot = "another-boot" }
local at, clock = distributed.start_instant(other, 5000.1, 7.0)
t.eq(clock, "realtime", "an agent of another host goes by the wall clock")
t.near(at, 7.2, 1e-9, "its instant on its own monotonic clock: 0.2 s after the go's receipt")
at = distributed.start_instant({ realtime = 5100, boot = "another-boot" }, 5000, 7.0)
t.eq(at, 7.0 + distributed.START_WAIT_MAX, "a wall clock far behind: the wait is bounded")
t.eq(distributed.start_instant(nil, 5000, 7.0), nil, "a go without a start: at once")
if boot then
  local replies = {
    a = { received = 5000.1, received_monotonic = 1000.1, boot = boot, start_clock = "monotonic" },
    b = { received = 5000.35, received_monotonic = 1000.35, boot = boot, start_clock = "monotonic", late = 0.05 },
  }
  local results = {
    a = { start_realtime = 5000.3004, start_monotonic = 1000.3004, start_ready = 1000.12, start_late = 0.0004 },
    b = { start_realtime = 5000.3601, start_monotonic = 1000.3601, start_ready = 1000.36, start_late = 0.0601 },
  }
  local figures, per_agent = distributed.start_figures(schedule, 1000.0, replies, results)
  t.near(figures.start_skew, 0.0597, 1e-6, "the skew of the actual starts (wall clocks)")
  t.near(figures.start_skew_monotonic, 0.0597, 1e-6, "and on the shared monotonic clock")
  t.near(figures.go_delivery.max, 0.35, 1e-9, "the last go's receipt after its send")
  t.near(per_agent.b.start_late, 0.0601, 1e-9, "an agent's start after the instant")
  t.near(per_agent.b.go_late, 0.05, 1e-9, "a go received after the instant")
  t.eq(per_agent.a.go_late, nil, "a go in time is not late")
  t.near(per_agent.a.start_setup, 0.02, 1e-9, "the setup: the go's receipt to the bench being ready")
  t.near(figures.start_late_max, 0.0601, 1e-9, "the latest start")
end

t.done()
