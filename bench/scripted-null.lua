-- The scripted-worker path's ceiling: N Lua coroutines each looping on w:op() against the
-- engine (the null target's cost: no I/O), reporting ops/s and client CPU per op. Run it
-- pinned to one core:  taskset -c 0 cephmark run bench/scripted-null.lua [-p workers=16]
local workers = require "cephmark.workers"
local null = require "cephmark.null"
local sys = require "cephmark.sys"

local params = ...
local n = tonumber(params.workers or "16")
local seconds = tonumber(params.seconds or "5")

local function measure(label, fn)
  local user0, system0 = sys.cpu_times()
  local result = fn()
  local user1, system1 = sys.cpu_times()
  local cpu = (user1 - user0) + (system1 - system0)
  print(string.format("%-26s %12.0f ops/s %9.1f ns CPU/op", label, result.iops,
    cpu / result.ops * 1e9))
  return result
end

measure("native null (engine)", function()
  return null.bench { threads = n, seconds = seconds, delay = 0 }
end)
measure("scripted workers (Lua)", function()
  return workers.run { n = n, seconds = seconds, fn = function(w)
    while true do w:op() end
  end }
end)
