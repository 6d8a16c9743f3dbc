-- bench/command-cost.lua: what one command to the cluster costs the client (user + sys CPU
-- of this process, all threads), the unit a phase's cluster side is made of
-- (docs/telemetry.md): small mon commands back to back, the same after half a second idle
-- (as the polls of a space reading are sent), and a command to every OSD at once.
-- Run with CEPH_CONF pointing at the cluster:
--   CEPH_CONF=... build/cephmark run bench/command-cost.lua
local rados = require "cephmark.rados"
local sys = require "cephmark.sys"
local c = assert(rados.connect {})
local function cpu()
  local user, system = sys.cpu_times()
  return user + system
end
local function measure(name, n, f)
  local c0, w0 = cpu(), sys.monotonic()
  for _ = 1, n do f() end
  print(string.format("%-44s %.3f ms CPU, %.2f ms wall each", name, (cpu() - c0) * 1000 / n,
    (sys.monotonic() - w0) * 1000 / n))
  return (cpu() - c0) * 1000 / n
end
local ids = assert(c:mon_command { prefix = "osd ls" })
local probe = { prefix = "osd last-stat-seq", id = ids[1], format = "plain" }
measure("osd ls", 50, function() c:mon_command { prefix = "osd ls" } end)
measure("mgr stat", 50, function() c:mon_command { prefix = "mgr stat" } end)
measure("status", 50, function() c:mon_command { prefix = "status" } end)
measure("df detail", 50, function() c:mon_command { prefix = "df", detail = "detail" } end)
measure("osd last-stat-seq", 50, function() c:mon_command(probe) end)
local idle = measure("sleep 0.5 s", 8, function() sys.sleep(0.5) end)
local after = measure("sleep 0.5 s, then osd last-stat-seq", 8, function()
  sys.sleep(0.5)
  c:mon_command(probe)
end)
print(string.format("%-44s %.3f ms CPU", "osd last-stat-seq after 0.5 s idle", after - idle))
measure(string.format("perf dump osd, %d OSDs in parallel", #ids), 50,
  function() c:osd_commands(ids, { '{"prefix":"perf dump","logger":"osd"}' }, 2) end)
c:close()
