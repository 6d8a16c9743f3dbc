-- The engine's pacing on real librados: think time (the closed loop then waits on deadlines,
-- so librados completes through callbacks instead of the loop's blocking wait), Poisson
-- arrivals in an open loop, the mean ops in flight never above the depth, and a seq phase
-- over a short write run reporting its early end. Counts and bounds only.
local connection = require "cephmark.connection"
local t = require "cephmark.test"

local cluster <close> = connection.connect()
local name = "cephmark-test-pacing"
assert(cluster:pool_create { name = name, size = 3 })
local pool <close> = assert(cluster:pool(name))

-- 4 slots that rest 100 ms after each write: at most one op per slot per 100 ms
local w = pool:bench { op = "write", seconds = 2, threads = 4, block_size = "4K", think = "100ms",
  prefix = "pacing", run_name = "pacing_run" }
t.eq(w.errors, 0, "no write failed")
t.eq(w.ops, w.started, "every started write finished")
t.eq(w.think, 0.1, "the result carries the think time")
t.ok(w.started <= 4 * (math.floor(w.stopped_after / 0.1) + 1), "a slot rests 100 ms between writes: " .. w.started)
t.eq(#pool:objects("pacing_object"), w.ops, "each write made its object")
for _, second in ipairs(w.series) do
  t.ok(second.in_flight_mean <= 4, "never more than 4 in flight, second " .. second.sec)
end

-- Poisson arrivals over what the write made, corrected latency kept
local r = pool:bench { op = "rand", seconds = 1, threads = 8, rate = 200, arrivals = "poisson",
  run_name = "pacing_run" }
t.eq(r.errors, 0, "no read failed")
t.eq(r.verify_failures, 0, "reads verified")
t.eq(r.arrivals, "poisson", "Poisson arrivals")
t.ok(r.lat.p50 >= r.lat_uncorrected.p50, "latency from the intended start")

-- a seq asked for 60 s over that short run reads every object once and says it ended early
local s = pool:bench { op = "seq", seconds = 60, threads = 4, run_name = "pacing_run" }
t.eq(s.ops, w.ops, "seq read every object")
t.eq(s.stop_reason, "done", "the objects ran out")
t.match(s.early_end, "^ended after [%d.]+ s of the 60 s asked: the target ran out of work", "early end said")

local c = pool:bench { op = "cleanup", run_name = "pacing_run" }
t.eq(c.errors, 0, "cleanup")
assert(cluster:pool_delete(name))
return t.done()
