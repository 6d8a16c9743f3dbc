-- bench/null.lua: the op engine's ceiling on the null target (ops complete at once, no
-- data moves), for bench/null-vs-fio.sh. Prints one line of key=value pairs.
--   cephmark run bench/null.lua [-p threads=16] [-p seconds=5] [-p block_size=4096] [-p delay=0]
local params = ...
local null = require "cephmark.null"

local threads = math.tointeger(tonumber(params.threads or "16"))
local seconds = tonumber(params.seconds or "5")
local block_size = math.tointeger(tonumber(params.block_size or "4096"))
local delay = tonumber(params.delay or "0")

local r = null.bench { threads = threads, seconds = seconds, delay = delay, block_size = block_size }
print(string.format("ops=%d seconds=%.6f iops=%.1f bandwidth_mib=%.1f p50_us=%.3f p99_us=%.3f errors=%d",
  r.ops, r.elapsed, r.iops, r.bandwidth_mib, r.lat.p50 * 1e6, r.lat.p99 * 1e6, r.errors))
return { errors = r.errors }
