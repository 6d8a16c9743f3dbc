-- `cephmark agent`: one client host's side of a multi-client run. Registers in the control
-- pool (an omap entry with host, pid, version and a heartbeat every second), watches the
-- control object, and serves the coordinator's messages: acknowledges the published
-- scenario, opens the pool of each phase (the prepare barrier), starts the phase when the
-- "go" notify arrives, stops it on "stop", and writes its result and latency histogram back
-- as RADOS objects. Runs until SIGINT, then deregisters (a killed agent's registration
-- stops heartbeating and expires). See distributed.lua for
-- the protocol and docs/distributed.md for operating it. With --monitor it is a host
-- monitor instead (monitor.lua): it runs no phases, it reads this host's daemons, disks and
-- network at each phase's start and end for `cephmark run --monitors`.

local args = require "cephmark.args"
local connection = require "cephmark.connection"
local control = require "cephmark.control"
local distributed = require "cephmark.distributed"
local json = require "cephmark.json"
local monitor = require "cephmark.monitor"
local sys = require "cephmark.sys"
local worker_code = require "cephmark.worker_code"

local M = {}

local usage = [[
usage: cephmark agent [--monitor] [-c CONF] [--id NAME] [-k KEYRING] [--control-pool POOL] [--name AGENT]

Serves multi-client runs: registers AGENT (default: this host's name) in the control pool
(default cephmark-control, created if missing), heartbeats every second, and runs the
phases a coordinator (`cephmark run --agents N SCRIPT`) starts, each with its own object
prefix and run name. Stops on Ctrl-C (SIGINT), SIGTERM or SIGHUP and deregisters.

With --monitor it runs no phases: on an OSD host, it reads the ceph daemons' CPU,
/proc/diskstats and /proc/net/dev at each phase's start and end for the runs that name it
(`cephmark run --monitors NAME,... SCRIPT`, or `--monitors all`).

options:
  --monitor                 be a host monitor, not a load agent (docs/distributed.md)
  --name AGENT              the agent's or monitor's name (default: the host name)
  --control-pool POOL       the control pool (default: cephmark-control)
  -c, --conf CONF / --id NAME / -k, --keyring FILE / --timeout SECONDS
                            as for `cephmark run`]]

local spec = args.spec({
  ["--name"] = { key = "name", value = true },
  ["--monitor"] = { key = "monitor" },
  ["--control-pool"] = { key = "control_pool", value = true },
}, args.CONNECTION)

local log = distributed.logger("agent")

-- registration, heartbeat, replies and the watch's loop: distributed.lua's members
local Agent = distributed.member_class("agent", distributed.REGISTRY, distributed.CONTROL)
local listed = distributed.listed

function Agent:registration() return { state = self.state } end

function Agent:on_hello(message, body)
  if not listed(body.agents, self.name) then return self:reply(message, { ignored = true }) end
  local text = self.pool:read(body.scenario)
  local scenario = text and distributed.decode(text)
  if not scenario then
    return self:reply(message, { ok = false, error = "cannot read the scenario object " .. tostring(body.scenario) })
  end
  local coordinator = type(scenario.coordinator) == "table" and scenario.coordinator or {}
  if not distributed.compatible(coordinator.version, sys.version) then
    local why = distributed.version_mismatch(self.name, sys.version, coordinator.version)
    log("run %s refused: %s", tostring(body.run), why)
    return self:reply(message, { ok = false, error = why })
  end
  self.run = body.run
  self.scenario = scenario
  self.pools = {}
  log("run %s: scenario %s (%d bytes) from %s pid %s", body.run, tostring(scenario.script), #text,
    tostring(scenario.coordinator and scenario.coordinator.host), tostring(scenario.coordinator and scenario.coordinator.pid))
  self:reply(message, { ok = true, bytes = #text })
end

function Agent:on_prepare(message, body)
  if body.run ~= self.run or not listed(body.agents, self.name) then
    return self:reply(message, { ignored = true })
  end
  if body.kind == "workers" then return self:prepare_workers(message, body) end
  local pool = self.pools[body.pool]
  if not pool then
    local err
    pool, err = self.cluster:pool(body.pool)
    if not pool then return self:reply(message, { ready = false, error = err }) end
    self.pools[body.pool] = pool
  end
  self.prepared = body
  self:reply(message, { ready = true })
end

-- Runs the prepared phase; between seconds it heartbeats and answers messages (a stop for
-- this run ends the phase; anything else is answered "busy").
function Agent:run_phase(phase)
  if phase.kind == "workers" then return self:run_workers(phase) end
  local pool = self.pools[phase.pool]
  local options = {}
  for k, v in pairs(phase.options or {}) do options[k] = v end
  options.op = phase.op
  options.prefix = distributed.prefix(self.run, self.name)
  options.run_name = distributed.run_name(self.run, self.name)
  local stop = false
  options.on_second = function()
    if self:heartbeat_due() then self:register() end
    while true do
      local message = self:next_message(0)
      if not message then break end
      local body = distributed.decode(message.payload) or {}
      if body.type == "stop" and body.run == self.run then
        stop = true
        self:reply(message, { stopping = true })
      else
        self:reply(message, { busy = true })
      end
    end
    return not stop
  end
  self.state = "running"
  log("run %s phase %d: %s on %s", self.run, phase.phase, phase.op, phase.pool)
  local ok, result = pcall(pool.bench, pool, options)
  self.state = "idle"
  local document
  local hist
  if ok then
    hist = control.histogram(result)
    document = {}
    for k, v in pairs(result) do document[k] = v end
    document.agent = self.name
    document.stopped = stop
  else
    local message = tostring((sys.error_info(result)))
    if message:find("interrupted", 1, true) then error(result, 0) end
    document = { agent = self.name, error = message }
  end
  if hist then
    local written, err = self.pool:write_full(distributed.hist_object(self.run, phase.phase, self.name), hist)
    if not written then log("cannot write the histogram: %s", err) end
  end
  local written, err = self.pool:write_full(distributed.result_object(self.run, phase.phase, self.name),
    json.encode(document))
  if not written then log("cannot write the result: %s", err) end
  log("run %s phase %d: %s", self.run, phase.phase, ok and string.format("%d ops in %.2f s", result.ops, result.elapsed)
    or document.error)
end

------------------------------------------------------------------------------------------
-- scripted workers: the coordinator's worker function, run here (worker_code.lua)

-- the pool of that name, opened once per run
function Agent:open_pool(name)
  local pool = self.pools[name]
  if pool then return pool end
  local err
  pool, err = self.cluster:pool(name)
  if not pool then return nil, err end
  self.pools[name] = pool
  return pool
end

-- Prepare barrier of a workers phase: reads and loads the code, opens its pools, and runs
-- setup (once, before the barrier, so that its time is not the phase's); ready only then.
function Agent:prepare_workers(message, body)
  local text = body.code and self.pool:read(body.code)
  if not text then
    return self:reply(message, { ready = false, error = "cannot read the worker code " .. tostring(body.code) })
  end
  local code, err = worker_code.unpack(text, { pool = function(name) return self:open_pool(name) end })
  if not code then return self:reply(message, { ready = false, error = err }) end
  local shared
  if code.setup then
    local index = 0
    for i, name in ipairs(body.agents) do
      if name == self.name then index = i end
    end
    local ok, value = xpcall(code.setup, debug.traceback, { name = self.name, index = index,
      agents = #body.agents, n = (body.options or {}).n })
    if not ok then
      log("run %s phase %d: setup failed: %s", self.run, body.phase, tostring(value))
      return self:reply(message, { ready = false, error = "setup failed: " .. tostring(value):match("[^\n]*") })
    end
    shared = value
  end
  self.prepared = body
  self.workers_fn = worker_code.wrap(code.fn, self.name, shared)
  self:reply(message, { ready = true })
end

-- The phase's result and histogram, written as objects for the coordinator.
function Agent:write_result(phase, document, hist)
  if hist then
    local written, err = self.pool:write_full(distributed.hist_object(self.run, phase.phase, self.name), hist)
    if not written then log("cannot write the histogram: %s", err) end
  end
  local written, err = self.pool:write_full(distributed.result_object(self.run, phase.phase, self.name),
    json.encode(document))
  if not written then log("cannot write the result: %s", err) end
end

-- A workers phase: n workers here, at this agent's share of the rate (set from the go
-- notify); between seconds it heartbeats and answers messages as a pool phase does.
function Agent:run_workers(phase)
  local options = {}
  for k, v in pairs(phase.options or {}) do options[k] = v end
  options.fn, self.workers_fn = self.workers_fn, nil
  local stop = false
  options.on_second = function()
    if self:heartbeat_due() then self:register() end
    while true do
      local message = self:next_message(0)
      if not message then break end
      local body = distributed.decode(message.payload) or {}
      if body.type == "stop" and body.run == self.run then
        stop = true
        self:reply(message, { stopping = true })
      else
        self:reply(message, { busy = true })
      end
    end
    return not stop
  end
  self.state = "running"
  log("run %s phase %d: workers (%s each%s)", self.run, phase.phase, tostring(options.n),
    options.rate and string.format(", rate %g/s", options.rate) or "")
  local ok, result = pcall(function() return require("cephmark.workers").run(options) end)
  self.state = "idle"
  local document, hist
  if ok then
    hist = control.histogram(result)
    document = {}
    for k, v in pairs(result) do
      if type(v) ~= "function" then document[k] = v end
    end
    document.agent, document.stopped = self.name, stop
  else
    local message = tostring((sys.error_info(result)))
    if message:find("interrupted", 1, true) then error(result, 0) end
    document = { agent = self.name, error = message:match("[^\n]*") }
    log("run %s phase %d: %s", self.run, phase.phase, message)
  end
  self:write_result(phase, document, hist)
  if ok then log("run %s phase %d: %d ops in %.2f s", self.run, phase.phase, result.ops, result.elapsed) end
end

function Agent:on_go(message, body)
  local phase = self.prepared
  if body.run ~= self.run or not phase or phase.phase ~= body.phase or not listed(body.agents, self.name) then
    return self:reply(message, { ignored = true })
  end
  self.prepared = nil
  -- an open loop's rate is the aggregate: this agent runs its share of it
  local share = type(body.rates) == "table" and tonumber(body.rates[self.name])
  if share then
    phase.options = phase.options or {}
    phase.options.rate = share
  end
  self:reply(message, { started = sys.realtime(), started_monotonic = sys.monotonic(), boot = distributed.boot_id() })
  self:run_phase(phase)
end

function Agent:on_done(message, body)
  if body.run == self.run then
    for _, pool in pairs(self.pools or {}) do pcall(pool.close, pool) end
    self.pools, self.run, self.prepared = {}, nil, nil
    log("run %s done", body.run)
  end
  self:reply(message, { done = true })
end

function Agent:dispatch(message, body)
  if body.type == "hello" then
    self:on_hello(message, body)
  elseif body.type == "prepare" then
    self:on_prepare(message, body)
  elseif body.type == "go" then
    self:on_go(message, body)
  elseif body.type == "done" then
    self:on_done(message, body)
  else
    self:reply(message, { ignored = true })
  end
end

-- the pools its phases opened, closed once it has deregistered
function Agent:release()
  for _, p in pairs(self.pools or {}) do pcall(p.close, p) end
end

function M.main(argv)
  local command = "agent"
  local opts, positionals = args.command(command, argv, spec, usage)
  if not opts then return sys.EXIT_OK end
  args.at_most(command, positionals, 0)
  local name = opts.name or sys.hostname()
  if not name:match("^[%w][%w._-]*$") or #name > 64 then
    sys.fail(string.format("%s: --name must be letters, digits, '.', '_' or '-' (at most 64), got '%s'", command, name))
  end
  connection.configure(args.connection(command, opts))
  local cluster <close> = connection.connect()
  local pool <close> = distributed.open_pool(cluster, opts.control_pool)
  if opts.monitor then
    return monitor.serve { pool = pool, name = name, control_pool = opts.control_pool,
      conf = rawget(require("cephmark.rados").defaults or {}, "conf") }
  end
  return distributed.serve_member(Agent, { name = name, cluster = cluster, pool = pool,
    control_pool = opts.control_pool, state = "idle", pools = {} }, "an agent", "waiting for runs")
end

return M
