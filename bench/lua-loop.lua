-- bench/lua-loop.lua: the CPU a pure Lua loop takes per iteration (x = x + i % 7: four VM
-- instructions, no calls), for bench/watchdog-cost.sh: what the watchdog hook that every
-- Lua thread carries costs per instruction. Prints one key=value line.
--   cephmark run bench/lua-loop.lua [-p n=50000000]
local sys = require "cephmark.sys"
local n = math.tointeger(tonumber((...).n or "50000000"))
local user0, system0 = sys.cpu_times()
local x = 0
for i = 1, n do x = x + i % 7 end
local user1, system1 = sys.cpu_times()
print(string.format("loop_ns_per_iteration=%.3f sum=%d", ((user1 - user0) + (system1 - system0)) / n * 1e9, x))
