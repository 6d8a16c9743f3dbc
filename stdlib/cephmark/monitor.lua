-- Host monitors: what an OSD host's kernel saw during each phase, where there is no
-- Prometheus. `cephmark agent --monitor` runs on each OSD host, registers in the control
-- pool beside the agents (in its own registry, so `--agents N` never picks one), and on
-- the coordinator's notify at a phase's start and end reads the ceph daemons' CPU
-- (sys.process_cpu, as cpu.lua), /proc/diskstats, /proc/net/dev and /proc/stat. At the
-- end it writes the phase's deltas into the run's object in the control pool, where the
-- coordinator (`cephmark run --monitors`) reads them into the phase's `cluster.hosts`.
--
-- This file holds three parts: the pure parsers and deltas of the /proc files (tested on
-- fixture text), the monitor's serving loop, and the coordinator's session. Every wait is
-- bounded by M.TIMEOUT; a monitor that does not answer is recorded as missing for that
-- phase, and the run goes on. See docs/distributed.md ("Host monitors").
--
-- Control pool objects (besides the agents'):
--   monitors              omap: monitor name -> JSON {host, pid, version, gid, heartbeat, ...}
--   monitors.control      watched by every monitor; the coordinator notifies it
--   run.<run>.monitors    created by the coordinator for one run; omap key p<N>.<monitor>:
--                         that monitor's figures for phase N (JSON). Monitors write only
--                         into an existing object, so nothing they write outlives the run.

local control = require "cephmark.control"
local cpu = require "cephmark.cpu"
local distributed = require "cephmark.distributed"
local json = require "cephmark.json"
local sys = require "cephmark.sys"

local M = {}

M.REGISTRY = "monitors"
M.CONTROL = "monitors.control"
M.TIMEOUT = 3.0 -- seconds the coordinator waits for the monitors' answer to a notify
M.WAIT = 10 -- seconds `--monitors a,b` waits for the named monitors to register
M.SECTOR = 512 -- /proc/diskstats counts 512-byte sectors, whatever the device's own size
M.MAX_PENDING = 32 -- runs whose phase-start readings a monitor keeps at once

function M.run_object(run) return "run." .. run .. ".monitors" end
function M.key(phase, name) return string.format("p%d.%s", phase, name) end

------------------------------------------------------------------------------------------
-- /proc parsers and deltas (pure: text in, tables out)

-- /proc/diskstats -> {name = {reads, read_sectors, read_ms, writes, write_sectors,
-- write_ms, io_ms}}. Lines with fewer than the 11 classic fields (very old kernels'
-- partition lines) are skipped; later fields (discards, flushes) are not used.
function M.parse_diskstats(text)
  local disks = {}
  for line in text:gmatch("[^\n]+") do
    local fields = {}
    for word in line:gmatch("%S+") do fields[#fields + 1] = word end
    if #fields >= 14 then
      local n = {}
      for i = 4, 14 do n[i - 3] = tonumber(fields[i]) end
      if n[11] then
        disks[fields[3]] = { reads = n[1], read_sectors = n[3], read_ms = n[4], writes = n[5],
          write_sectors = n[7], write_ms = n[8], io_ms = n[10] }
      end
    end
  end
  return disks
end

-- Names of partitions as the kernel makes them, for when /sys/block cannot be listed:
-- sda1, vdb2, xvda1, hda1, and a trailing p<N> after a digit (nvme0n1p1, mmcblk0p1,
-- md0p1, nbd0p1).
local function looks_like_partition(name)
  return name:match("^[shv]d[a-z]+%d+$") ~= nil or name:match("^xvd[a-z]+%d+$") ~= nil or
    name:match("%dp%d+$") ~= nil
end

-- Which block devices a host's figures keep. Loop, RAM and zram devices hold no OSD data;
-- partitions are counted again in their disk (whole devices are those /sys/block lists,
-- `whole`, else the kernel's naming); device-mapper and md devices are kept, since
-- ceph-volume puts bluestore on LVs and the OSD's I/O is seen on its dm-N device first.
-- Returns false and the rule that left the device out.
function M.disk_kept(name, whole)
  if name:match("^loop%d") or name:match("^ram%d") or name:match("^zram%d") then
    return false, "loop or memory device"
  end
  if whole then
    if not whole[(name:gsub("/", "!"))] then return false, "partition" end
  elseif looks_like_partition(name) then
    return false, "partition"
  end
  return true
end

local function non_negative(...)
  for i = 1, select("#", ...) do
    if select(i, ...) < 0 then return false end
  end
  return true
end

-- Per kept device over the window (seconds): ops, bytes, utilisation (the io_ms delta
-- over the window, at most 1: the kernel's tick accounting can run a few ms past the
-- clock, as iostat caps %util at 100) and await in seconds (read + write ms delta over the
-- ops completed; nil when none completed). The names are those of the Prometheus figures
-- (prometheus.lua), so that one host reads the same from either source. A device that
-- never did any I/O is left out; a counter that went backwards (device removed and added
-- again) gives {reset = true}; a device that appeared in the window counts from zero and
-- is marked `added`.
function M.disk_delta(before, after, window, whole)
  local disks = {}
  for name, now in pairs(after) do
    local ever = now.reads + now.writes > 0
    if ever and M.disk_kept(name, whole) then
      local was = before[name]
      local added = was == nil
      was = was or { reads = 0, read_sectors = 0, read_ms = 0, writes = 0, write_sectors = 0, write_ms = 0, io_ms = 0 }
      local reads, writes = now.reads - was.reads, now.writes - was.writes
      local read_ms, write_ms = now.read_ms - was.read_ms, now.write_ms - was.write_ms
      local io_ms = now.io_ms - was.io_ms
      local read_bytes = (now.read_sectors - was.read_sectors) * M.SECTOR
      local write_bytes = (now.write_sectors - was.write_sectors) * M.SECTOR
      if not non_negative(reads, writes, read_ms, write_ms, io_ms, read_bytes, write_bytes) then
        disks[name] = { reset = true }
      else
        local ops = reads + writes
        disks[name] = {
          ops = ops, reads = reads, writes = writes, read_bytes = read_bytes, write_bytes = write_bytes,
          busy_seconds = io_ms / 1000, utilisation = window > 0 and math.min(1, io_ms / (window * 1000)) or nil,
          await = ops > 0 and (read_ms + write_ms) / ops / 1000 or nil,
          read_await = reads > 0 and read_ms / reads / 1000 or nil,
          write_await = writes > 0 and write_ms / writes / 1000 or nil,
          added = added or nil,
        }
      end
    end
  end
  return disks
end

local NET_FIELDS = { "rx_bytes", "rx_packets", "rx_errors", "rx_drops", "rx_fifo", "rx_frame", "rx_compressed",
  "rx_multicast", "tx_bytes", "tx_packets", "tx_errors", "tx_drops", "tx_fifo", "tx_collisions", "tx_carrier",
  "tx_compressed" }

-- /proc/net/dev -> {interface = {rx_bytes, rx_packets, rx_errors, rx_drops, tx_bytes, ...}}.
-- The two header lines have no colon after a name; a large counter may touch the colon
-- ("eth0:1234 ..."), so the name is what precedes the first colon.
function M.parse_net_dev(text)
  local interfaces = {}
  for line in text:gmatch("[^\n]+") do
    local name, rest = line:match("^%s*([^%s:|]+):(.*)$")
    if name then
      local entry, i = {}, 0
      for word in rest:gmatch("%S+") do
        i = i + 1
        if NET_FIELDS[i] then entry[NET_FIELDS[i]] = tonumber(word) end
      end
      if i >= #NET_FIELDS then interfaces[name] = entry end
    end
  end
  return interfaces
end

-- The figures kept per interface: /proc/net/dev's counter and the name in results (the
-- Prometheus figures' receive_bytes and transmit_bytes, and their kin).
local NET_KEPT = { rx_bytes = "receive_bytes", rx_packets = "receive_packets", rx_errors = "receive_errors",
  rx_drops = "receive_drops", tx_bytes = "transmit_bytes", tx_packets = "transmit_packets",
  tx_errors = "transmit_errors", tx_drops = "transmit_drops" }

-- Per interface that ever moved a byte: bytes, packets, errors and drops each way over the
-- window, and the byte rates. Counters that went backwards (the interface was recreated)
-- give {reset = true}.
function M.net_delta(before, after, window)
  local network = {}
  for name, now in pairs(after) do
    if now.rx_bytes + now.tx_bytes > 0 then
      local was = before[name] or {}
      local entry, backwards = {}, false
      for counter, key in pairs(NET_KEPT) do
        entry[key] = now[counter] - (was[counter] or 0)
        backwards = backwards or entry[key] < 0
      end
      if backwards then
        network[name] = { reset = true }
      else
        if window > 0 then
          entry.receive_bytes_per_second = entry.receive_bytes / window
          entry.transmit_bytes_per_second = entry.transmit_bytes / window
        end
        entry.added = before[name] == nil or nil
        network[name] = entry
      end
    end
  end
  return network
end

-- /proc/stat -> {ticks = {user, nice, system, idle, iowait, irq, softirq, steal}, cores}
-- from the aggregate "cpu" line (guest time is already inside user) and the cpuN lines.
function M.parse_stat(text)
  local stat = { cores = 0 }
  for line in text:gmatch("[^\n]+") do
    local which, rest = line:match("^(cpu%d*)%s+(.*)$")
    if which == "cpu" then
      local n = {}
      for word in rest:gmatch("%S+") do n[#n + 1] = tonumber(word) end
      stat.ticks = { user = n[1] or 0, nice = n[2] or 0, system = n[3] or 0, idle = n[4] or 0, iowait = n[5] or 0,
        irq = n[6] or 0, softirq = n[7] or 0, steal = n[8] or 0 }
    elseif which then
      stat.cores = stat.cores + 1
    end
  end
  if not stat.ticks then return nil end
  return stat
end

-- The host's CPU over the window, as the Prometheus figures have it: `seconds` per mode,
-- `busy_seconds` (all modes but idle and iowait), `busy_fraction` (busy over all) and
-- `cpus`. /proc/stat counts in USER_HZ ticks; the seconds are each mode's share of the
-- ticks times the window times the CPUs, which needs no tick rate.
function M.host_cpu_delta(before, after, window)
  local d, total = {}, 0
  for key, value in pairs(after.ticks) do
    d[key] = value - (before.ticks[key] or 0)
    if d[key] < 0 then return { reset = true } end
    total = total + d[key]
  end
  if total <= 0 then return { cpus = after.cores } end
  local scale = after.cores * window / total
  local seconds = {}
  for key, ticks in pairs(d) do seconds[key] = ticks * scale end
  local busy = total - d.idle - d.iowait
  return { cpus = after.cores, seconds = seconds, busy_seconds = busy * scale, busy_fraction = busy / total }
end

------------------------------------------------------------------------------------------
-- readings on the monitor's host

local function read_parsed(path, parse)
  local text, err = sys.read_file(path)
  if not text then return nil, err end
  local ok, value = pcall(parse, text)
  if not ok then return nil, tostring(value) end
  if value == nil then return nil, path .. ": not understood" end
  return value
end

-- One reading of the host: the clocks, the ceph daemons that read `conf` (cpu.snapshot),
-- the disks, interfaces and CPU. A part that cannot be read carries its reason instead.
function M.read_host(conf)
  local reading = { monotonic = sys.monotonic(), realtime = sys.realtime() }
  reading.daemons, reading.daemons_error = cpu.snapshot(conf)
  reading.disks, reading.disks_error = read_parsed("/proc/diskstats", M.parse_diskstats)
  reading.net, reading.net_error = read_parsed("/proc/net/dev", M.parse_net_dev)
  reading.stat, reading.stat_error = read_parsed("/proc/stat", M.parse_stat)
  local names = sys.list_dir("/sys/block")
  if names then
    reading.whole = {}
    for _, name in ipairs(names) do reading.whole[name] = true end
  end
  return reading
end

-- A phase's figures on this host from the readings at its start and end. What could not
-- be read is recorded under `missing` by part, never raised.
function M.figures(before, after)
  local window = after.monotonic - before.monotonic
  local host = { window = window, started_at = before.realtime, ended_at = after.realtime, missing = {} }
  -- host[name] from the part read at both ends, else why it was not: <part>_error
  local function figure(name, part, delta)
    if before[part] and after[part] then
      host[name] = delta(before[part], after[part])
    else
      host.missing[name] = tostring(before[part .. "_error"] or after[part .. "_error"])
    end
  end
  figure("ceph", "daemons", function(start, stop) return cpu.phase(start, stop, nil) end)
  figure("disks", "disks", function(start, stop) return M.disk_delta(start, stop, window, after.whole) end)
  figure("network", "net", function(start, stop) return M.net_delta(start, stop, window) end)
  figure("cpu", "stat", function(start, stop) return M.host_cpu_delta(start, stop, window) end)
  if next(host.missing) == nil then host.missing = nil end
  return host
end

------------------------------------------------------------------------------------------
-- the monitor (`cephmark agent --monitor`)

-- registration, heartbeat, replies and the watch's loop: distributed.lua's members (as
-- the agent's), in the monitors' own registry and control object
local Monitor = distributed.member_class("monitor", M.REGISTRY, M.CONTROL)
local listed = distributed.listed

function Monitor:registration() return { role = "monitor" } end

-- Keeps the start reading of the run's current phase; a coordinator that died leaves one
-- behind, so the oldest go once M.MAX_PENDING runs are kept.
function Monitor:on_start(message, body)
  local reading = M.read_host(self.conf)
  self.pending[body.run] = { phase = body.phase, reading = reading }
  local runs = {}
  for run, entry in pairs(self.pending) do runs[#runs + 1] = { run = run, at = entry.reading.monotonic } end
  if #runs > M.MAX_PENDING then
    table.sort(runs, function(a, b) return a.at < b.at end)
    for i = 1, #runs - M.MAX_PENDING do self.pending[runs[i].run] = nil end
  end
  self:reply(message, { ok = true, taken = reading.realtime })
end

function Monitor:on_end(message, body)
  local pending = self.pending[body.run]
  if not pending or pending.phase ~= body.phase then
    return self:reply(message, { ok = false,
      error = string.format("no start reading of phase %s (the monitor restarted, or missed the start)", tostring(body.phase)) })
  end
  self.pending[body.run] = nil
  local figures = M.figures(pending.reading, M.read_host(self.conf))
  figures.host, figures.pid = sys.hostname(), sys.getpid()
  local text = json.encode(figures)
  -- into the run's object only while it exists: a reading that comes after the run ended
  -- must not leave an object behind
  local ok, err = control.omap_set(self.pool, M.run_object(body.run), { [M.key(body.phase, self.name)] = text },
    "existing")
  if not ok then
    self:log("run %s phase %s: cannot write the figures: %s", body.run, tostring(body.phase), err)
    return self:reply(message, { ok = false, error = "cannot write its figures: " .. tostring(err) })
  end
  self:reply(message, { ok = true, bytes = #text })
end

-- a reading is for a run (its name) and a phase (its number); anything else is ignored
function Monitor:dispatch(message, body)
  local reading = (body.type == "start" or body.type == "end") and type(body.run) == "string" and
    math.tointeger(body.phase) ~= nil
  if reading and listed(body.monitors, self.name) then
    if body.type == "start" then self:on_start(message, body) else self:on_end(message, body) end
  elseif body.type == "done" then
    if type(body.run) == "string" then self.pending[body.run] = nil end
    self:reply(message, { done = true })
  else
    self:reply(message, { ignored = true })
  end
end

-- serve{pool =, name =, control_pool =, conf =}: runs until SIGINT/SIGTERM/SIGHUP, then
-- deregisters. Refuses a name whose registration is alive.
function M.serve(opts)
  return distributed.serve_member(Monitor, { name = opts.name, pool = opts.pool, control_pool = opts.control_pool,
    conf = opts.conf, pending = {} }, "a monitor", "reading this host's daemons, disks and network at each phase")
end

------------------------------------------------------------------------------------------
-- the coordinator (`cephmark run --monitors`)

local function say(line) io.stderr:write(line, "\n") end

-- notify(pool, message) -> replies by monitor name, and the clients (global ids) whose
-- watch did not answer within M.TIMEOUT, as a set (one watch per monitor's client)
local function notify(pool, message)
  local acks, timeouts = control.notify(pool, M.CONTROL, json.encode(message), M.TIMEOUT)
  local replies, timed_out = {}, {}
  for _, ack in ipairs(acks or {}) do
    local reply = distributed.decode(ack.reply)
    if reply and reply.monitor then replies[reply.monitor] = reply end
  end
  for _, watch in ipairs(timeouts or {}) do timed_out[watch.gid] = true end
  return replies, timed_out
end

-- Why a monitor did not answer a notify: its watch was there and the notify timed out
-- waiting for it (a hung or just-killed monitor: the OSD keeps a dead client's watch for
-- its watch timeout), or it was not watching at all (stopped, or its watch lapsed), and
-- its heartbeat's age (at the phase's end).
local function silence(which, timed_out, registry, name)
  local entry = registry[name]
  local reason
  if entry and timed_out[math.tointeger(entry.gid)] then
    reason = string.format("no answer to the phase-%s notify within %g s", which, M.TIMEOUT)
  else
    reason = string.format("not watching %s at the phase's %s (stopped, or its watch lapsed)", M.CONTROL, which)
  end
  if not entry then return reason .. "; not registered" end
  return string.format("%s; last heartbeat %.1f s ago", reason, entry.age)
end

-- Which monitors: "all" (every monitor heartbeating now) or "a,b" (those, waiting up to
-- `wait` seconds for them). Either way a run that names none alive stops here, before
-- anything is created.
local function choose(pool, spec, wait)
  if spec == "all" then
    local fresh = {}
    for name, entry in pairs(distributed.registry(pool, M.REGISTRY) or {}) do
      if entry.age <= distributed.HEARTBEAT_TIMEOUT then fresh[#fresh + 1] = name end
    end
    table.sort(fresh)
    if #fresh == 0 then
      sys.fail("--monitors all: no monitor is registered and alive; start one on each OSD host with `cephmark agent --monitor`")
    end
    return fresh
  end
  local names, seen = {}, {}
  for name in spec:gmatch("[^,]+") do
    if not name:match("^[%w][%w._-]*$") or #name > 64 then
      sys.fail(string.format("--monitors expects 'all' or a list of monitor names (letters, digits, '.', '_' or '-'), got '%s'", spec))
    end
    if not seen[name] then names[#names + 1], seen[name] = name, true end
  end
  if #names == 0 then sys.fail("--monitors expects 'all' or a list of monitor names, got '" .. spec .. "'") end
  local deadline = sys.monotonic() + wait
  while true do
    local registry = distributed.registry(pool, M.REGISTRY) or {}
    local missing, fresh = {}, {}
    for _, name in ipairs(names) do
      if not (registry[name] and registry[name].age <= distributed.HEARTBEAT_TIMEOUT) then missing[#missing + 1] = name end
    end
    if #missing == 0 then return names end
    if sys.monotonic() > deadline then
      for name, entry in pairs(registry) do
        if entry.age <= distributed.HEARTBEAT_TIMEOUT then fresh[#fresh + 1] = name end
      end
      table.sort(fresh)
      sys.fail(string.format("monitors not registered or not heartbeating after %g s: %s (alive: %s); start them with `cephmark agent --monitor --name NAME`",
        wait, table.concat(missing, ", "), #fresh > 0 and table.concat(fresh, ", ") or "none"))
    end
    sys.sleep(0.5)
  end
end

local Session = {}
Session.__index = Session

-- session(cluster, {spec =, control_pool =, wait =}) -> the run's monitors: chosen, and the
-- run's object created for their figures.
function M.session(cluster, opts)
  local self = setmetatable({}, Session)
  self.control_pool = opts.control_pool or distributed.DEFAULT_POOL
  self.pool = distributed.open_pool(cluster, opts.control_pool)
  local expired = distributed.expire(self.pool, distributed.EXPIRE, M.REGISTRY)
  if #expired > 0 then say("monitors: expired stale registrations: " .. table.concat(expired, ", ")) end
  self.monitors = choose(self.pool, opts.spec, opts.wait or M.WAIT)
  self.run = string.format("%s%d", os.date("!%H%M%S"), sys.getpid())
  self.object = M.run_object(self.run)
  local ok, err = self.pool:write_full(self.object, json.encode { coordinator = { host = sys.hostname(),
    pid = sys.getpid() }, monitors = self.monitors })
  if not ok then sys.fail("cannot create the monitors' run object: " .. tostring(err)) end
  say(string.format("monitors: run %s reads %d host monitor%s (%s), control pool %s", self.run, #self.monitors,
    #self.monitors == 1 and "" or "s", table.concat(self.monitors, ", "), self.control_pool))
  return self
end

-- The monitors take their start readings; returns the phase's state for phase_end.
function Session:phase_start(phase)
  local state = { phase = phase, started = {}, missing = {}, silent = {} }
  local ok, err = pcall(function()
    local replies, timed_out = notify(self.pool, { type = "start", run = self.run, phase = phase,
      monitors = self.monitors })
    state.timed_out = timed_out
    for _, name in ipairs(self.monitors) do
      local reply = replies[name]
      if reply and reply.ok then
        state.started[#state.started + 1] = name
      elseif reply then
        state.missing[name] = "start reading failed: " .. tostring(reply.error)
      else
        state.silent[name] = "start"
      end
    end
  end)
  if not ok then
    state.started, state.silent = {}, {}
    for _, name in ipairs(self.monitors) do state.missing[name] = "phase-start notify failed: " .. tostring(err) end
  end
  return state
end

local function collect(self, state, result)
  local hosts = {}
  for name, reason in pairs(state.missing) do hosts[name] = { missing = reason } end
  local silent, end_timed_out = state.silent, {}
  if #state.started > 0 then
    local replies
    replies, end_timed_out = notify(self.pool, { type = "end", run = self.run, phase = state.phase,
      monitors = state.started })
    local entries = control.omap_get(self.pool, self.object) or {}
    for _, name in ipairs(state.started) do
      local reply, text = replies[name], entries[M.key(state.phase, name)]
      local figures = text and distributed.decode(text)
      if figures then
        hosts[name] = figures
      elseif reply and reply.ok then
        hosts[name] = { missing = "its figures were not found in " .. self.object }
      elseif reply then
        hosts[name] = { missing = tostring(reply.error) }
      else
        silent[name] = "end"
      end
    end
    local read = {}
    for key in pairs(entries) do read[#read + 1] = key end
    if #read > 0 then control.omap_remove(self.pool, self.object, read) end
  end
  if next(silent) then
    local registry = distributed.registry(self.pool, M.REGISTRY) or {}
    for name, which in pairs(silent) do
      local timed_out = which == "start" and (state.timed_out or {}) or end_timed_out
      hosts[name] = { missing = silence(which, timed_out, registry, name) }
    end
  end
  local ops = type(result) == "table" and tonumber(result.ops) or nil
  for _, host in pairs(hosts) do
    local figures = host.ceph
    if ops and ops > 0 and type(figures) == "table" and figures.kinds then
      for _, kind in pairs(figures.kinds) do kind.per_op = kind.seconds / ops end
      if figures.osd_seconds then figures.osd_per_op = figures.osd_seconds / ops end
    end
  end
  return hosts
end

-- The monitors take their end readings and write the phase's figures; returns the phase's
-- `cluster.hosts`: monitor name -> figures, or {missing = reason}. Never raises.
function Session:phase_end(state, result)
  local ok, hosts = pcall(collect, self, state, result)
  if ok then return hosts end
  local failed = {}
  for _, name in ipairs(self.monitors) do failed[name] = { missing = "reading the figures failed: " .. tostring(hosts) } end
  return failed
end

-- Tells the monitors the run is over and removes the run's object (and so every figure a
-- late monitor wrote). Safe to call twice.
function Session:finish()
  if self.finished then return end
  self.finished = true
  pcall(notify, self.pool, { type = "done", run = self.run })
  local ok, err = self.pool:remove(self.object)
  if not ok and not tostring(err):find("No such file", 1, true) then
    error("removing " .. self.object .. " from " .. self.control_pool .. ": " .. tostring(err), 0)
  end
end

------------------------------------------------------------------------------------------
-- the phase summary's lines

local function mib(bytes) return string.format("%.1f MiB", bytes / 1048576) end

-- One line per monitor, e.g.
--   host mon-a (node1): osds 1.52 s CPU (3 ceph-osd) · host CPU 85% · vda 12% util, await 0.80 ms · lo 30.1 MiB in, 30.1 MiB out
-- naming the busiest disk and interface; a missing monitor's line says why.
function M.summary_lines(hosts)
  local names, lines = {}, {}
  for name in pairs(hosts or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local host = hosts[name]
    if host.window == nil then
      lines[#lines + 1] = string.format("    host %s: missing (%s)", name, tostring(host.missing))
    else
      local parts = {}
      local osds = type(host.ceph) == "table" and host.ceph.kinds and host.ceph.kinds["ceph-osd"]
      if osds and osds.count > 0 then
        parts[#parts + 1] = string.format("osds %.2f s CPU (%d ceph-osd)", osds.seconds, osds.count)
      end
      if type(host.cpu) == "table" and host.cpu.busy_fraction then
        parts[#parts + 1] = string.format("host CPU %.0f%%", host.cpu.busy_fraction * 100)
      end
      local disk, disk_name
      for device, d in pairs(host.disks or {}) do
        if d.utilisation and (not disk or d.utilisation > disk.utilisation or
          (d.utilisation == disk.utilisation and device < disk_name)) then
          disk, disk_name = d, device
        end
      end
      if disk then
        parts[#parts + 1] = string.format("%s %.0f%% util%s", disk_name, disk.utilisation * 100,
          disk.await and string.format(", await %.2f ms", disk.await * 1000) or "")
      end
      local link, link_name
      for interface, n in pairs(host.network or {}) do
        local moved = (n.receive_bytes or 0) + (n.transmit_bytes or 0)
        if n.receive_bytes and (not link or moved > link.moved or (moved == link.moved and interface < link_name)) then
          link, link_name = { moved = moved, n = n }, interface
        end
      end
      if link then
        parts[#parts + 1] = string.format("%s %s in, %s out", link_name, mib(link.n.receive_bytes),
          mib(link.n.transmit_bytes))
      end
      lines[#lines + 1] = string.format("    host %s (%s): %s", name, tostring(host.host),
        #parts > 0 and table.concat(parts, " · ") or "no figures")
    end
  end
  return lines
end

return M
