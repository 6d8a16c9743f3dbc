-- The engine through Lua on the null target: latency, bounds, the per-second callback,
-- open-loop correction, and misuse messages. No cluster needed. Only what machine load
-- cannot change is asserted (no latency below the delay, counts equal to the ops done);
-- how close to the delay the figures come is a benchmark: bench/engine-fidelity.sh.
local null = require "cephmark.null"
local t = require "cephmark.test"

local function series_ops(result)
  local total = 0
  for _, second in ipairs(result.series) do total = total + second.ops end
  return total
end

local r = null.bench { threads = 16, seconds = 2, delay = 0.001, block_size = 4096 }
t.ok(r.lat.min >= 0.001, "no op completes before its delay")
t.ok(r.lat.p50 >= 0.001 and r.lat.p99 >= r.lat.p50, "so no percentile is below it")
t.eq(r.errors, 0, "no errors")
t.eq(r.op, "null", "op name")
t.ok(r.ops > 0, "ops ran")
t.eq(r.started, r.ops, "every op started was done")
t.eq(r.lat.count, r.ops, "every op done is in the latency histogram")
t.eq(r.bytes, r.ops * 4096, "and in the bytes")
t.eq(series_ops(r), r.ops, "and in the per-second series")
t.ok(r.ops <= 16000 * r.elapsed + 16, "16 slots of 1 ms: never above 16000 ops/s")
t.ok(r.elapsed > 0 and r.elapsed < 30, "the time bound stops the run")
t.ok(#r.series >= 2, "per-second series")
t.ok(r.series[1].p99 ~= nil and r.series[1].iops > 0, "seconds carry IOPS and p99")
t.eq(#r.lat.percentiles, 17, "fio's percentile list")
t.eq(r.lat.percentiles[7].p, 50, "its 7th entry is p50")
t.eq(r.lat.percentiles[7].value, r.lat.p50, "and agrees with lat.p50")

local seen = {}
local c = null.bench { threads = 4, ops = 5000, delay = 0, on_second = function(s) seen[#seen + 1] = s end }
t.eq(c.ops, 5000, "op-count bound")
t.eq(c.started, 5000, "exactly that many started")

local b = null.bench { threads = 2, bytes = "40K", block_size = "4K" }
t.eq(b.started, 10, "byte bound: 40K of 4K ops")
t.eq(b.bytes, 40960, "bytes counted")

-- the callback can stop the run; its errors surface after the run drained
local stopped = null.bench { threads = 4, seconds = 10, delay = 0.001, on_second = function() return false end }
t.eq(stopped.series[1].sec, 1, "the first second is the one that stopped it")
t.eq(stopped.started, stopped.series[1].started, "returning false from on_second starts no op after it")
t.ok(stopped.elapsed < 9, "and the run ends well before its 10 s bound")
t.raises(function()
  null.bench { threads = 4, seconds = 10, delay = 0.001, on_second = function() error("callback broke") end }
end, "callback broke", "a callback error is raised after the run")

-- open loop over capacity: corrected latency shows the backlog, uncorrected does not
local o = null.bench { threads = 2, rate = 1000, seconds = 1, delay = 0.005 }
t.ok(o.lat_uncorrected.p50 >= 0.005, "the service time is the floor of the uncorrected latency")
t.ok(o.started <= 402, "2 slots of 5 ms serve at most 400 of the 1000 ops due")
t.ok(o.lat.p99 > 0.1 and o.lat.p99 >= o.lat_uncorrected.p99, "corrected p99 includes the queueing")

t.raises(function() null.bench { threads = 0 } end, "threads must be between 1 and 65536, got 0", "t=0")
t.raises(function() null.bench { threads = 100000 } end, "threads must be between 1 and 65536, got 100000", "t=100000")
t.raises(function() null.bench { rate = 0 } end, "rate must be a positive number of ops/s, got 0", "rate 0")
t.raises(function() null.bench { seconds = "ten" } end, "duration 'ten' is not a number", "bad duration")
t.raises(function() null.bench { thread = 32, seconds = 0.1 } end,
  "null.bench: unknown option 'thread' (expected one of access, block_size, delay, delay_max, mix, objects, seed, work, arrivals, arrivals_seed, bytes, drain_timeout, ignore_interrupt, on_second, ops, rate, second_histograms, seconds, start_at, think, threads, warmup)",
  "a misspelt option is refused, not ignored")
t.raises(function() null.bench { [1] = 4, seconds = 0.1 } end, "null.bench: option names must be strings, got a number key",
  "an array item in the options")
t.raises(function() null.bench { block_size = "4X" } end, "size '4X' has an unknown suffix 'X'", "bad size")
t.raises(function() null.bench { delay = 0.002, delay_max = 0.001 } end, "delay_max must not be below delay", "bad delay range")

-- access: every op picks an object (the chooser's cost is measured on this target); the
-- picks repeat with the seed, and a plain run picks nothing and says nothing about it
local z1 = null.bench { ops = 20000, threads = 4, access = "zipf:1.1", objects = 1000, seed = 9 }
t.eq(z1.ops, 20000, "access: every op ran")
t.eq(z1.access, "zipf:1.1", "access in the result")
t.eq(z1.objects, 1000, "objects in the result")
t.ok(z1.picked_sum > 0, "objects were picked")
local z2 = null.bench { ops = 20000, threads = 4, access = "zipf:1.1", objects = 1000, seed = 9 }
t.eq(z2.picked_sum, z1.picked_sum, "the same seed picks the same objects")
local z3 = null.bench { ops = 20000, threads = 4, access = "zipf:1.1", objects = 1000, seed = 10 }
t.ok(z3.picked_sum ~= z1.picked_sum, "another seed picks others")
local u = null.bench { ops = 20000, threads = 4, objects = 1000 }
t.eq(u.access, "uniform", "objects alone: uniform picks")
-- uniform picks over 1000 objects average 499.5: the sum of 20000 is near 9.99e6
t.ok(math.abs(u.picked_sum / 20000 - 499.5) < 20, "uniform picks centre on the middle object")
local plain = null.bench { ops = 100 }
t.eq(plain.access, nil, "a plain run picks nothing")
t.eq(plain.picked_sum, nil, "and reports no picks")
t.raises(function() null.bench { ops = 1, access = "zipf:0" } end,
  "null.bench: access 'zipf:0': zipf θ must be above 0 and at most 10", "zipf θ out of range")
t.raises(function() null.bench { ops = 1, objects = 0 } end, "objects must be between 1 and", "no objects")
-- arrivals, think time, ops in flight, the steady-state window, early ends (counts only)
local poisson = null.bench { threads = 16, rate = 500, seconds = 1, delay = 0.001, arrivals = "poisson", arrivals_seed = 3 }
t.eq(poisson.arrivals, "poisson", "the result names the arrivals")
t.eq(poisson.arrivals_seed, 3, "and their seed")
t.eq(poisson.rate, 500, "and the rate")
t.ok(poisson.lat.p50 >= poisson.lat_uncorrected.p50, "Poisson arrivals keep the correction")
t.eq(null.bench { threads = 4, rate = 100, seconds = 0.2 }.arrivals, "uniform", "uniform by default")
local thinking = null.bench { threads = 2, seconds = 1, delay = 0.001, think = "100ms" }
t.eq(thinking.think, 0.1, "the result carries the think time")
t.ok(thinking.started <= 2 * (math.floor(thinking.stopped_after / 0.101) + 1), "a slot rests 100 ms between ops")
t.ok(thinking.lat.p50 < 0.05, "think time is not latency")
local window = null.bench { threads = 8, seconds = 3, delay = 0.001 }
t.eq(window.stop_reason, "time", "stopped by its time bound")
t.eq(window.steady.first_second, 2, "ramp-up is the first second")
t.eq(window.steady.last_second, 3, "the drain is left out")
local steady_ops = 0
for _, second in ipairs(window.series) do
  t.ok(second.in_flight_mean <= 8, "never more in flight than asked, second " .. second.sec)
  if second.steady then steady_ops = steady_ops + second.ops end
end
t.eq(window.steady.ops, steady_ops, "the window's ops are its seconds' ops")
t.eq(window.steady.lat.count, steady_ops, "its latencies are theirs")
t.ok(window.in_flight_mean <= 8, "the phase's mean in flight is at most the depth")
t.eq(window.threads, 8, "next to the requested depth")
t.eq(window.early_end, nil, "a phase that ran its time has no early end")
local short = null.bench { threads = 4, seconds = 10, delay = 0.001, work = 100 }
t.eq(short.stop_reason, "done", "the target ran out of work")
t.eq(short.ops, 100, "after its 100 ops")
t.match(short.early_end, "^ended after %d+%.%d%d s of the 10 s asked: the target ran out of work",
  "a phase that ends before half its time says so")
t.eq(null.bench { threads = 4, ops = 50, work = 10 }.early_end, nil, "no early end without a time bound")
t.raises(function() null.bench { seconds = 1, arrivals = "poisson" } end,
  "null.bench: arrivals shapes an open loop: give rate (ops/s) too, or leave arrivals out", "arrivals without rate")
t.raises(function() null.bench { seconds = 1, rate = 10, arrivals_seed = 2 } end,
  "arrivals_seed seeds Poisson arrivals", "a seed without Poisson arrivals")
t.raises(function() null.bench { seconds = 1, rate = 10, think = 0.01 } end,
  "think is for a closed loop", "think with rate")
t.raises(function() null.bench { seconds = 1, rate = 10, arrivals = "bursty" } end,
  "unknown arrivals 'bursty' %(expected uniform or poisson%)", "an unknown arrivals")
-- a scheduled start (start_at): the clock and the first op wait for the instant, never
-- start before it, and the result says when it was ready, when it started and how late
local sys = require "cephmark.sys"
local at = sys.monotonic() + 0.05
local scheduled = null.bench { threads = 2, ops = 20, delay = 0, start_at = at }
t.eq(scheduled.ops, 20, "a scheduled run does its ops")
t.ok(scheduled.start_monotonic >= at, "it starts at the instant, never before")
t.ok(scheduled.start_ready <= scheduled.start_monotonic, "it was ready before it started")
t.near(scheduled.start_at, at, 1e-6, "the instant asked for is in the result")
t.near(scheduled.start_late, scheduled.start_monotonic - at, 1e-6, "start_late is the start after the instant")
t.ok(scheduled.start_realtime > 1e9, "the start on the wall clock too")
local past = null.bench { threads = 1, ops = 5, delay = 0, start_at = sys.monotonic() - 2 }
t.ok(past.start_late >= 2, "an instant already past starts at once, and says how late")
t.eq(null.bench { threads = 1, ops = 5, delay = 0 }.start_late, nil, "no start fields without start_at")
t.raises(function() null.bench { ops = 5, start_at = sys.realtime() } end,
  "start_at must be an instant of sys.monotonic%(%) %(now [%d.]+%) at most 60 s ahead, got %d", "a wall-clock time")
t.raises(function() null.bench { ops = 5, start_at = "soon" } end, "start_at must be an instant", "not a number")
return t.done()
