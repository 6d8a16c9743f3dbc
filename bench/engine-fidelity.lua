-- bench/engine-fidelity.lua: how faithfully the engine measures a known latency, on the null
-- target (ops complete after a fixed delay, no I/O), for bench/engine-fidelity.sh. Two runs:
-- closed loop, 16 in flight, a 1 ms delay for 2 s (p50 and p99 against 1 ms, ops/s
-- against the 16000 the slots allow, elapsed against 2 s); open loop at 500 ops/s with a
-- 1 ms delay for 1 s (p50 from the actual start and from the intended one, against 1 ms).
-- Prints one line of key=value pairs. The unit tests assert only what load cannot change;
-- these figures are the quiet-machine claim.
--   cephmark run bench/engine-fidelity.lua [-p delay=0.001] [-p seconds=2]
local params = ...
local null = require "cephmark.null"

local delay = tonumber(params.delay or "0.001")
local seconds = tonumber(params.seconds or "2")

local closed = null.bench { threads = 16, seconds = seconds, delay = delay }
local open = null.bench { threads = 16, rate = 500, seconds = 1, delay = delay }
print(string.format(
  "closed_p50_us=%.3f closed_p99_us=%.3f closed_p50_error_pct=%.3f closed_iops=%.1f closed_iops_of_ideal_pct=%.2f " ..
  "closed_elapsed_s=%.4f open_started=%d open_p50_us=%.3f open_p50_error_pct=%.3f open_p50_intended_us=%.3f",
  closed.lat.p50 * 1e6, closed.lat.p99 * 1e6, (closed.lat.p50 / delay - 1) * 100, closed.iops,
  closed.iops / (16 / delay) * 100, closed.elapsed, open.started, open.lat_uncorrected.p50 * 1e6,
  (open.lat_uncorrected.p50 / delay - 1) * 100, open.lat.p50 * 1e6))
