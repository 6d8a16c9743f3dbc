-- bench/engine-scale.lua: one null-target phase for bench/engine-depth.sh and
-- bench/engine-prefill.sh, printing one line of key=value pairs: ops, seconds, mean and p50
-- latency, the mean ops in flight, and this process's peak and current resident memory
-- (VmHWM, VmRSS from /proc/self/status, KiB) after the phase.
--   cephmark run bench/engine-scale.lua [-p threads=16] [-p delay=0.001] [-p seconds=5 | -p ops=N]
local params = ...
local null = require "cephmark.null"

local function status_kib(key)
  local file = assert(io.open("/proc/self/status"))
  local text = file:read("a")
  file:close()
  return tonumber(text:match(key .. ":%s*(%d+)"))
end

local options = {
  threads = math.tointeger(tonumber(params.threads or "16")),
  delay = tonumber(params.delay or "0.001"),
  block_size = 4096,
}
if params.ops then
  options.ops = math.tointeger(tonumber(params.ops))
else
  options.seconds = tonumber(params.seconds or "5")
end
local r = null.bench(options)
print(string.format("ops=%d seconds=%.6f avg_us=%.3f p50_us=%.3f p99_us=%.3f in_flight=%.3f steady_avg_us=%.3f hwm_kib=%d rss_kib=%d series=%d",
  r.ops, r.elapsed, r.lat.avg * 1e6, r.lat.p50 * 1e6, r.lat.p99 * 1e6, r.in_flight_mean,
  (r.steady.lat and r.steady.lat.avg or 0) * 1e6, status_kib("VmHWM"), status_kib("VmRSS"), #r.series))
return { errors = r.errors }
