-- CPU per op for a phase: the client's own CPU (the engine's getrusage over the run, all
-- threads, librados' included) and the CPU of the ceph daemons running on this host
-- (ceph-osd, ceph-mon, ceph-mgr, radosgw that read the client's config file, read from
-- /proc before and after the phase),
-- divided by the ops the phase completed. Kept as the phase's `cluster.cpu`
-- (docs/cpu.md). Daemons found here are "the cluster" only when the
-- cluster runs on this host: the table says so in `scope`.

local sys = require "cephmark.sys"

local M = {}

M.SCOPE = "daemons on this host"

-- The kinds in the order the summary line names them, with their short word.
local kinds = { { comm = "ceph-osd", word = "osds" }, { comm = "ceph-mon", word = "mon" },
  { comm = "ceph-mgr", word = "mgr" }, { comm = "radosgw", word = "rgw" } }

-- The config file a daemon reads: its -c, else /etc/ceph/$cluster.conf, as Ceph resolves it.
local function daemon_conf(process)
  return process.conf or string.format("/etc/ceph/%s.conf", process.cluster or "ceph")
end

-- The ceph daemons on this host that read `conf` (by default the client's config file:
-- the same cluster) now: name -> {comm, pid, cpu, start}. Other clusters' daemons on the same host
-- are left out. Never fails a phase: a /proc that cannot be read gives nil and the reason.
-- `comms` replaces the daemons' process names (for tests).
function M.snapshot(conf, comms)
  if conf == nil then
    -- the file the connection was made with (rawget: never start a local cluster here)
    local ok, rados = pcall(require, "cephmark.rados")
    conf = ok and type(rados.defaults) == "table" and rawget(rados.defaults, "conf") or nil
  end
  if type(conf) ~= "string" then return nil, "the cluster's config file is not known" end
  local ok, list, err = pcall(sys.process_cpu, comms)
  if not ok then return nil, tostring(list) end
  if not list then return nil, err end
  local real = {}
  local function resolve(path)
    if real[path] == nil then real[path] = sys.realpath(path) or false end
    return real[path]
  end
  local mine = resolve(conf)
  local daemons = {}
  for _, process in ipairs(list) do
    if mine and resolve(daemon_conf(process)) == mine then
      local name = process.name
      -- two processes under one name: keep both apart
      if daemons[name] then name = name .. "@" .. process.pid end
      daemons[name] = process
    end
  end
  return daemons
end

-- Figures keep the precision they were measured with, no more (docs/cpu.md): /proc counts
-- a daemon's CPU in ticks (1/100 s), getrusage the client's in µs. Seconds are a whole
-- number of those units; a figure divided from them keeps as many significant digits as
-- the count of units has (3 ticks over 10 ops: 0.003 s per op, not 0.0029999999999999996),
-- at most 6.
local function digits_of(units)
  local digits = 1
  while units >= 10 and digits < 6 do
    units, digits = units / 10, digits + 1
  end
  return digits
end

local function significant(value, units)
  if value == 0 then return 0.0 end
  return tonumber(string.format("%." .. digits_of(units) .. "g", value)) + 0.0
end

local function per(amount, count, units)
  if amount == nil or count == nil or count <= 0 then return nil end
  if units == nil then return amount / count end
  return significant(amount / count, units)
end

local MICROSECONDS = 1e6

-- The phase's cpu table from the snapshots around it (nil when daemons were not scanned)
-- and the client's CPU that the engine measured (`result.client_cpu`, nil for a phase that
-- is not a bench). A daemon whose start time changed restarted in the phase: only the new
-- process's CPU is known, it is counted, and it is marked `restarted`; one gone by the end
-- is marked `gone` and not counted.
local function phase_figures(before, after, client)
  local cpu = {}
  local ops, bytes
  if type(client) == "table" and type(client.ops) == "number" then
    ops, bytes = client.ops, client.bytes
    local user = client.user and math.floor(client.user * MICROSECONDS + 0.5)
    local system = client.system and math.floor(client.system * MICROSECONDS + 0.5)
    local us = (user or 0) + (system or 0)
    local seconds = us / MICROSECONDS
    cpu.client = { user = user and user / MICROSECONDS, system = system and system / MICROSECONDS, seconds = seconds,
      ops = ops }
    cpu.client_per_op = per(seconds, ops, us)
  end
  if before and after then
    cpu.scope = M.SCOPE
    cpu.daemons, cpu.kinds = {}, {}
    local ticks = {} -- entry -> its ticks over the phase (nil: a scan without them)
    local hz
    for name, now in pairs(after) do
      local was = before[name]
      local entry = { comm = now.comm, pid = now.pid }
      local same = was and was.start == now.start and was.pid == now.pid
      if now.ticks and now.hz and (not same or was.ticks) then
        ticks[entry] = same and math.max(0, now.ticks - was.ticks) or now.ticks
        entry.seconds = ticks[entry] / now.hz
        hz = now.hz
      else
        entry.seconds = same and math.max(0, now.cpu - was.cpu) or now.cpu
      end
      if not same then
        if was then entry.restarted = true else entry.started = true end
      end
      cpu.daemons[name] = entry
    end
    for name, was in pairs(before) do
      if not after[name] then cpu.daemons[name] = { comm = was.comm, pid = was.pid, gone = true } end
    end
    local kind_ticks = {} -- kind -> its daemons' ticks (nil once one has none)
    for _, entry in pairs(cpu.daemons) do
      local kind = cpu.kinds[entry.comm]
      if not kind then
        kind = { count = 0, seconds = 0, restarted = 0, gone = 0 }
        cpu.kinds[entry.comm], kind_ticks[kind] = kind, 0
      end
      if entry.gone then
        kind.gone = kind.gone + 1
      else
        kind.count = kind.count + 1
        kind.seconds = kind.seconds + entry.seconds
        kind_ticks[kind] = ticks[entry] and kind_ticks[kind] and kind_ticks[kind] + ticks[entry]
        if entry.restarted or entry.started then kind.restarted = kind.restarted + 1 end
      end
      entry.per_op = per(entry.seconds, ops, ticks[entry])
    end
    for _, kind in pairs(cpu.kinds) do
      -- a sum of ticks, not of seconds: 3 ticks are 0.03 s, not 0.030000000000000002
      if kind_ticks[kind] and hz then kind.seconds, kind.ticks = kind_ticks[kind] / hz, kind_ticks[kind] end
      kind.per_op = per(kind.seconds, ops, kind_ticks[kind])
    end
    local osds = cpu.kinds["ceph-osd"]
    if osds and osds.count > 0 then
      cpu.osds = osds.count
      cpu.osd_seconds = osds.seconds
      cpu.osd_per_op = per(osds.seconds, ops, kind_ticks[osds])
      if bytes and bytes > 0 and osds.seconds > 0 then
        local per_second = bytes / 1048576 / osds.seconds
        cpu.mib_per_osd_cpu_second = kind_ticks[osds] and significant(per_second, kind_ticks[osds]) or per_second
      end
    end
  end
  if next(cpu) == nil then return nil end
  return cpu
end

-- Telemetry never fails a phase: figures that cannot be made are recorded as missing,
-- with the reason.
function M.phase(before, after, client)
  local ok, figures = pcall(phase_figures, before, after, client)
  if ok then return figures end
  return { missing = tostring(figures) }
end

-- A CPU figure in µs (ms from 1000 µs), three significant digits at most, and no more than
-- `digits` when it was measured with fewer (1 tick over 6000 ops is "2 µs", not "1.67 µs").
function M.format(seconds, digits)
  if seconds == 0 then return "0 µs" end
  digits = math.max(1, math.min(3, digits or 3))
  local us = tonumber(string.format("%." .. digits .. "g", seconds * 1e6))
  local unit = "µs"
  if us >= 1000 then us, unit = tonumber(string.format("%." .. digits .. "g", us / 1000)), "ms" end
  -- decimals for `digits` significant ones, none past the units
  local magnitude = us >= 1 and math.floor(math.log(us, 10) + 1e-9) or -1
  local decimals = math.max(0, digits - 1 - magnitude)
  return string.format("%." .. decimals .. "f", us) .. " " .. unit
end

-- The phase line's part: `cpu/op: client 45.2 µs, osds 410 µs (3 ceph-osd), mon 12.0 µs`;
-- the daemons only when ceph-osd processes were found. nil when there is nothing to say.
function M.summary_text(cpu)
  if type(cpu) ~= "table" then return nil end
  local parts = {}
  if cpu.client_per_op then
    local us = type(cpu.client) == "table" and cpu.client.seconds and math.floor(cpu.client.seconds * 1e6 + 0.5)
    parts[#parts + 1] = "client " .. M.format(cpu.client_per_op, us and digits_of(us))
  end
  if cpu.osds and cpu.kinds then
    for _, kind in ipairs(kinds) do
      local figures = cpu.kinds[kind.comm]
      if figures and figures.count > 0 and figures.per_op then
        local text = kind.word .. " " .. M.format(figures.per_op, figures.ticks and digits_of(figures.ticks))
        if kind.comm == "ceph-osd" then
          text = text .. string.format(" (%d ceph-osd%s)", figures.count,
            figures.restarted > 0 and string.format(", %d restarted", figures.restarted) or "")
        end
        parts[#parts + 1] = text
      end
    end
  end
  if #parts == 0 then return nil end
  return "cpu/op: " .. table.concat(parts, ", ")
end

return M
