-- `cephmark agent`: one client host's side of a multi-client run. Registers in the control
-- pool (an omap entry with host, pid, version and a heartbeat every second), watches the
-- control object, and serves the coordinator's messages: acknowledges the published
-- scenario, opens the target of each phase (the prepare barrier: a pool, an rbd image, a
-- Swift or S3 connection, a disk's folder or a network peer, agent_targets.lua), starts the
-- phase when the "go" notify arrives, stops it on "stop", and writes its result, its latency
-- histogram and its per-second latency histograms back as RADOS objects. Its --attr
-- key=value attributes travel in its registration; a scenario names them as "{agent.KEY}".
-- Runs until SIGINT, then
-- deregisters (a killed agent's registration stops heartbeating and expires). See
-- distributed.lua for the protocol and docs/distributed.md for operating it. With --monitor it is a host
-- monitor instead (monitor.lua): it runs no phases, it reads this host's daemons, disks and
-- network at each phase's start and end for `cephmark run --monitors`.

local agent_targets = require "cephmark.agent_targets"
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
                      [--attr KEY=VALUE]...

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
  --attr KEY=VALUE          an attribute of this agent (repeatable), which scenarios name as
                            "{agent.KEY}": an endpoint, a disk path, an image name
  --control-pool POOL       the control pool (default: cephmark-control)
  -c, --conf CONF / --id NAME / -k, --keyring FILE / --timeout SECONDS
                            as for `cephmark run`]]

local spec = args.spec({
  ["--name"] = { key = "name", value = true },
  ["--monitor"] = { key = "monitor" },
  ["--control-pool"] = { key = "control_pool", value = true },
  ["--attr"] = { key = "attr", value = true, list = true },
}, args.CONNECTION)

local log = distributed.logger("agent")

-- registration, heartbeat, replies and the watch's loop: distributed.lua's members
local Agent = distributed.member_class("agent", distributed.REGISTRY, distributed.CONTROL)
local listed = distributed.listed

function Agent:registration() return { state = self.state, attrs = next(self.attrs) and self.attrs or nil } end

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
  -- what a run whose coordinator never said "done" (it died) left open or made here
  if self.run then self:end_run() end
  self.run = body.run
  self.scenario = scenario
  self.targets, self.puts, self.made = {}, {}, {}
  log("run %s: scenario %s (%d bytes) from %s pid %s", body.run, tostring(scenario.script), #text,
    tostring(scenario.coordinator and scenario.coordinator.host), tostring(scenario.coordinator and scenario.coordinator.pid))
  self:reply(message, { ok = true, bytes = #text })
end

function Agent:on_prepare(message, body)
  if body.run ~= self.run or not listed(body.agents, self.name) then
    return self:reply(message, { ignored = true })
  end
  if body.kind == "workers" then return self:prepare_workers(message, body) end
  local ok, phase = pcall(self.prepare_phase, self, body)
  if not ok then
    local why = tostring((sys.error_info(phase)))
    log("run %s phase %s: not ready: %s", self.run, tostring(body.phase), why)
    return self:reply(message, { ready = false, error = why })
  end
  self.prepared = phase
  self:reply(message, { ready = true })
end

-- A container or bucket name of this agent's own (agent_targets.own_container).
local own_container = agent_targets.own_container

-- Swift/S3: this agent's own containers (made here when a put needs them and they are
-- missing; removed when the run ends), and the put result that from= names (this agent's
-- own put of that phase).
function Agent:object_options(conn, options)
  for _, key in ipairs { "container", "bucket" } do
    if type(options[key]) == "string" then options[key] = own_container(options[key], self.name) end
  end
  for _, key in ipairs { "containers", "buckets" } do
    if type(options[key]) == "table" then
      local names = {}
      for i, name in ipairs(options[key]) do names[i] = own_container(tostring(name), self.name) end
      options[key] = names
    end
  end
  if type(options.from) == "table" and options.from.agent_phase then
    local put = self.puts[options.from.agent_phase]
    if not put then error(string.format("this agent has no result of the put phase %d that from= names",
      options.from.agent_phase), 0) end
    options.from = put
  end
  local wanted = options.container or options.bucket or options.containers or options.buckets
  if options.op ~= "put" or wanted == nil then return end
  local existing = {}
  local list, err = (conn.list_containers or conn.list_buckets)(conn)
  if not list then error("cannot list containers: " .. tostring(err), 0) end
  for _, entry in ipairs(list) do existing[type(entry) == "table" and entry.name or entry] = true end
  for _, name in ipairs(type(wanted) == "table" and wanted or { wanted }) do
    if not existing[name] then
      local made, make_err = (conn.create_container or conn.create_bucket)(conn, name)
      if not made then error(string.format("cannot create %s: %s", name, tostring(make_err)), 0) end
      self.made[#self.made + 1] = { conn = conn, name = name }
    end
  end
end

-- What the prepare message asks for, opened: the phase with its target and its options
-- (this agent's attributes resolved in both). Raises with the reason when it cannot.
function Agent:prepare_phase(body)
  local attrs = agent_targets.attributes(self.name, { attrs = self.attrs, host = sys.hostname() })
  local description = agent_targets.resolve(body.target or { kind = "pool", pool = body.pool }, attrs)
  local options = agent_targets.resolve(body.options or {}, attrs)
  if description.endpoints ~= nil then
    local index = 1
    for i, name in ipairs(body.agents) do
      if name == self.name then index = i end
    end
    description.use_endpoint = agent_targets.endpoint_for(description, index)
  end
  local target, err = agent_targets.open(self.cluster, description, options, self.targets)
  if not target then error(err, 0) end
  local kind = description.kind
  if body.op ~= nil and kind ~= "image" and kind ~= "disk" and kind ~= "socket" then options.op = body.op end
  if kind == "swift" or kind == "s3" then self:object_options(target, options) end
  local used = description.use_endpoint
  local endpoint = used and (agent_targets.origin(used) or used) or
    agent_targets.origin(description.auth_url or description.endpoint)
  local image = kind == "image" and (description.pool .. "/" .. description.image) or nil
  return { phase = body.phase, op = body.op, kind = kind, target = target, options = options, endpoint = endpoint,
    image = image, what = kind == "pool" and description.pool or image or kind }
end

-- Runs the prepared phase; between seconds it heartbeats and answers messages (a stop for
-- this run ends the phase; anything else is answered "busy").
function Agent:run_phase(phase)
  if phase.kind == "workers" then return self:run_workers(phase) end
  local target = phase.target
  local options = {}
  for k, v in pairs(phase.options or {}) do options[k] = v end
  if phase.kind == "pool" then
    options.prefix = distributed.prefix(self.run, self.name)
    options.run_name = distributed.run_name(self.run, self.name)
  end
  local watch = self:watch_phase(options)
  self.state = "running"
  log("run %s phase %d: %s on %s", self.run, phase.phase, tostring(phase.op or phase.kind), phase.what)
  local ok, result
  if type(target) == "table" then
    ok, result = pcall(target.bench, options)
  else
    ok, result = pcall(target.bench, target, options)
  end
  self.state = "idle"
  local document
  local hist
  if ok then
    hist = control.histogram(result)
    document = {}
    for k, v in pairs(result) do document[k] = v end
    document.agent = self.name
    document.stopped = watch.stop
    document.endpoint = phase.endpoint
    document.image = phase.image
    if (phase.kind == "swift" or phase.kind == "s3") and options.op == "put" then
      local kept = {}
      for k, v in pairs(result) do
        if k ~= "series" then kept[k] = v end
      end
      self.puts[phase.phase] = kept
    end
  else
    local message = tostring((sys.error_info(result)))
    if message:find("interrupted", 1, true) then error(result, 0) end
    document = { agent = self.name, error = message }
  end
  self:write_result(phase, document, hist, watch)
  log("run %s phase %d: %s", self.run, phase.phase, ok and string.format("%d ops in %.2f s", result.ops, result.elapsed)
    or document.error)
  -- an image is closed after its phase: the coordinator removes the agents' images, and the
  -- scenario its own, when the run ends, and an image still open (watched) cannot be removed
  if phase.kind == "image" then agent_targets.close_image(self.targets, phase.image) end
end

------------------------------------------------------------------------------------------
-- scripted workers: the coordinator's worker function, run here (worker_code.lua)

-- the pool of that name, opened once per run (with the phases' targets, closed at its end)
function Agent:open_pool(name)
  return agent_targets.open(self.cluster, { kind = "pool", pool = name }, {}, self.targets)
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

-- A phase's per-second hook: it keeps each second's latency histogram (encoded, for the
-- coordinator's per-second merge), heartbeats, and answers messages between seconds (a stop
-- for this run ends the phase; anything else is answered "busy"). -> watch {stop,
-- second_hists, seconds}
function Agent:watch_phase(options)
  local watch = { stop = false, second_hists = {}, seconds = 0 }
  options.second_histograms = true
  options.on_second = function(second)
    watch.seconds = watch.seconds + 1
    watch.second_hists[watch.seconds] = second.hist
    if self:heartbeat_due() then self:register() end
    while true do
      local message = self:next_message(0)
      if not message then break end
      local body = distributed.decode(message.payload) or {}
      if body.type == "stop" and body.run == self.run then
        watch.stop = true
        self:reply(message, { stopping = true })
      else
        self:reply(message, { busy = true })
      end
    end
    return not watch.stop
  end
  return watch
end

-- Writes a phase's result, its latency histogram and its per-second histograms.
function Agent:write_result(phase, document, hist, watch)
  if hist then
    local written, err = self.pool:write_full(distributed.hist_object(self.run, phase.phase, self.name), hist)
    if not written then log("cannot write the histogram: %s", err) end
    written, err = self.pool:write_full(distributed.second_hist_object(self.run, phase.phase, self.name),
      distributed.pack_seconds(watch.second_hists, watch.seconds))
    if not written then log("cannot write the per-second histograms: %s", err) end
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
  local watch = self:watch_phase(options)
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
    document.agent, document.stopped = self.name, watch.stop
  else
    local message = tostring((sys.error_info(result)))
    if message:find("interrupted", 1, true) then error(result, 0) end
    document = { agent = self.name, error = message:match("[^\n]*") }
    log("run %s phase %d: %s", self.run, phase.phase, message)
  end
  self:write_result(phase, document, hist, watch)
  if ok then log("run %s phase %d: %d ops in %.2f s", self.run, phase.phase, result.ops, result.elapsed) end
end

-- The go: the phase starts at the instant the message names (distributed.start_instant),
-- once the bench has set its target up, and the reply says when the go arrived. A go that
-- arrives after the instant starts the phase at once, and its lateness is in the reply and
-- in the result (start_late). A go without an instant (an older coordinator) starts at once.
function Agent:on_go(message, body)
  local received, received_monotonic = sys.realtime(), sys.monotonic()
  local phase = self.prepared
  if body.run ~= self.run or not phase or phase.phase ~= body.phase or not listed(body.agents, self.name) then
    return self:reply(message, { ignored = true })
  end
  self.prepared = nil
  phase.options = phase.options or {}
  -- an open loop's rate is the aggregate: this agent runs its share of it
  local share = type(body.rates) == "table" and tonumber(body.rates[self.name])
  if share then phase.options.rate = share end
  local reply = { received = received, received_monotonic = received_monotonic, boot = distributed.boot_id() }
  local start_at, clock = distributed.start_instant(body.start, received, received_monotonic)
  if start_at then
    phase.options.start_at = start_at
    reply.start_clock = clock
    if received_monotonic > start_at then reply.late = received_monotonic - start_at end
  else
    reply.started, reply.started_monotonic = received, received_monotonic
  end
  self:reply(message, reply)
  self:run_phase(phase)
end

-- Removes the containers and buckets this agent made for the run, with the objects still in
-- them (a run that ended before its delete phase: an error, Ctrl-C; everything in a container
-- this agent made is the run's), then closes what it opened.
function Agent:end_run()
  for i = #(self.made or {}), 1, -1 do
    local made = self.made[i]
    local objects, err = require("cephmark.rgw").remove_containers(made.conn, { made.name })
    if objects > 0 then log("run %s: removed %d objects left in %s", tostring(self.run), objects, made.name) end
    if err then log("run %s: cannot remove %s: %s", tostring(self.run), made.name, err) end
  end
  agent_targets.close_all(self.targets or {})
  self.made, self.puts = {}, {}
end

function Agent:on_done(message, body)
  if body.run == self.run then
    self:end_run()
    self.targets, self.run, self.prepared = {}, nil, nil
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

-- what its phases opened, closed once it has deregistered
function Agent:release()
  pcall(self.end_run, self)
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
  local attrs = {}
  for _, text in ipairs(opts.attr or {}) do
    local key, value = agent_targets.parse_attr(text)
    if not key then sys.fail(command .. ": " .. value) end
    if attrs[key] then sys.fail(string.format("%s: --attr %s is given twice", command, key)) end
    attrs[key] = value
  end
  if opts.monitor and next(attrs) then sys.fail(command .. ": --attr is for load agents, not --monitor") end
  connection.configure(args.connection(command, opts))
  local cluster <close> = connection.connect()
  local pool <close> = distributed.open_pool(cluster, opts.control_pool)
  if opts.monitor then
    return monitor.serve { pool = pool, name = name, control_pool = opts.control_pool,
      conf = rawget(require("cephmark.rados").defaults or {}, "conf") }
  end
  return distributed.serve_member(Agent, { name = name, cluster = cluster, pool = pool,
    control_pool = opts.control_pool, state = "idle", targets = {}, puts = {}, made = {}, attrs = attrs },
    "an agent", "waiting for runs")
end

return M
