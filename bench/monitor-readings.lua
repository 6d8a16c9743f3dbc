-- bench/monitor-readings.lua: what a phase's host monitor readings cost the coordinator
-- (`cephmark run --monitors`, stdlib/cephmark/monitor.lua), without a phase in between:
-- PHASES rounds of the phase-start notify, then the phase-end notify, the read of the
-- figures and their removal, on the session of a real run. Prints the coordinator's wall
-- time and CPU (all its threads: librados' too) per phase, the figures' size, and the
-- monitors' own CPU per phase (their pids in MONITOR_PIDS, from /proc). With KILL_PID and
-- KILL_AT, that process is killed (SIGKILL) before phase KILL_AT, and each phase's wall
-- time is printed: the bounded wait for a monitor that is gone.
-- Environment: MONITORS ("all" or names), PHASES (100), MONITOR_PIDS ("pid,pid"),
-- KILL_PID, KILL_AT; CEPH_CONF (the cluster).
local monitor = require "cephmark.monitor"
local rados = require "cephmark.rados"
local sys = require "cephmark.sys"
local json = require "cephmark.json"

local phases = tonumber(os.getenv("PHASES") or "100")
local kill_pid, kill_at = tonumber(os.getenv("KILL_PID") or ""), tonumber(os.getenv("KILL_AT") or "")
local pids = {}
for pid in (os.getenv("MONITOR_PIDS") or ""):gmatch("%d+") do pids[tonumber(pid)] = true end

local function monitors_cpu()
  local total = 0
  for _, process in ipairs(sys.process_cpu({ "cephmark" })) do
    if pids[process.pid] then total = total + process.cpu end
  end
  return total
end

-- a monitor's own work per phase, in this process: two readings of this host, the deltas
-- and their JSON (the conf of the cluster, so the daemons are matched as a monitor does)
local conf = os.getenv("CEPH_CONF")
local readings_user0, readings_system0 = sys.cpu_times()
for _ = 1, 100 do
  local first = monitor.read_host(conf)
  json.encode(monitor.figures(first, monitor.read_host(conf)))
end
local readings_user1, readings_system1 = sys.cpu_times()
local work_ms = ((readings_user1 - readings_user0) + (readings_system1 - readings_system0)) / 100 * 1000
-- of which the daemons' /proc scan (cpu.snapshot, one per reading)
local cpu = require "cephmark.cpu"
for _ = 1, 100 do cpu.snapshot(conf) end
local scans_user, scans_system = sys.cpu_times()
local scan_ms = ((scans_user - readings_user1) + (scans_system - readings_system1)) / 100 * 1000
local daemons = #sys.process_cpu()

-- the monitors idle (heartbeats, librados' own threads), to tell from the readings' cost
local idle = tonumber(os.getenv("IDLE") or "5")
local idle_rate = 0 -- CPU seconds per second, all monitors
if idle > 0 then
  local idle_before = monitors_cpu()
  sys.sleep(idle)
  idle_rate = (monitors_cpu() - idle_before) / idle
end

local cluster = assert(rados.connect {})
local session = monitor.session(cluster, { spec = os.getenv("MONITORS") or "all" })
local walls, bytes, missing = {}, 0, 0
local monitors_before = monitors_cpu()
local loop_started = sys.monotonic()
local user0, system0 = sys.cpu_times()
for phase = 1, phases do
  if kill_pid and phase == kill_at then sys.kill(kill_pid, "KILL") end
  local started = sys.monotonic()
  local state = session:phase_start(phase)
  local hosts = session:phase_end(state, { ops = 1000 })
  walls[#walls + 1] = sys.monotonic() - started
  for _, host in pairs(hosts) do
    if host.window then bytes = bytes + #json.encode(host) else missing = missing + 1 end
  end
  if kill_pid then
    local reasons = {}
    for name, host in pairs(hosts) do
      if not host.window then reasons[#reasons + 1] = name .. ": " .. host.missing end
    end
    print(string.format("phase=%d wall_ms=%.1f %s", phase, walls[#walls] * 1000, table.concat(reasons, "; ")))
  end
end
local user1, system1 = sys.cpu_times()
local monitors_after = monitors_cpu()
local loop_wall = sys.monotonic() - loop_started
session:finish()
cluster:close()
table.sort(walls)
local function quantile(q) return walls[math.max(1, math.ceil(q * #walls))] * 1000 end
local monitors_cpu_per_phase = (monitors_after - monitors_before) / phases / #session.monitors
local idle_per_phase = idle_rate * loop_wall / phases / #session.monitors
print(string.format("monitors=%d phases=%d wall_ms_median=%.2f wall_ms_p90=%.2f wall_ms_max=%.2f " ..
  "coordinator_cpu_ms_per_phase=%.3f monitors_cpu_ms_per_phase=%.3f monitor_idle_cpu_ms_per_second=%.3f " ..
  "monitors_cpu_ms_per_phase_less_idle=%.3f reading_work_cpu_ms=%.3f scan_cpu_ms=%.3f ceph_daemons_on_host=%d " ..
  "figures_bytes_per_monitor=%.0f missing=%d",
  #session.monitors, phases, quantile(0.5), quantile(0.9), quantile(1.0),
  ((user1 - user0) + (system1 - system0)) / phases * 1000, monitors_cpu_per_phase * 1000,
  idle_rate / #session.monitors * 1000, (monitors_cpu_per_phase - idle_per_phase) * 1000, work_ms, scan_ms, daemons,
  bytes / math.max(1, phases * #session.monitors - missing), missing))
