-- Multi-client runs coordinated through RADOS: the control pool's layout, the messages
-- agents and the coordinator exchange by watch/notify, the registry of agents (omap entries
-- with heartbeats), and the coordinator's side of a run: choosing agents, publishing the
-- scenario, starting each phase on every agent together (a prepare barrier, then one "go"
-- notify), watching heartbeats while the phase runs, and merging what the agents write
-- back (exact histogram merge, summed series); and what an agent and a host monitor share as
-- members of the control pool (registration, heartbeat, the watch and its loop). The
-- agent's side is cmd/agent.lua, the host monitor's monitor.lua.
--
-- Control pool (default cephmark-control), objects:
--   agents                      omap: agent name -> JSON {host, pid, version, gid, cookie,
--                               heartbeat (epoch seconds), started}
--   control                     watched by every agent; the coordinator notifies it
--   run.<run>.scenario          JSON {script, script_text, params, coordinator {host, pid,
--                               version}}
--   run.<run>.p<N>.<agent>.json the agent's result of phase N (summary, series, start time)
--   run.<run>.p<N>.<agent>.hist its encoded latency histogram (runtime/hist.c format)
--   run.<run>.p<N>.<agent>.shist its per-second latency histograms (M.pack_seconds)
--   run.<run>.p<N>.workers      a workers phase's code (worker_code.lua), read by the agents
-- Messages are JSON objects with `type` and `run`; replies (notify acks) are JSON with the
-- replying agent's name.

local control = require "cephmark.control"
local json = require "cephmark.json"
local sys = require "cephmark.sys"

local M = {}

M.DEFAULT_POOL = "cephmark-control"
M.REGISTRY = "agents"
M.CONTROL = "control"
M.HEARTBEAT_INTERVAL = 1.0 -- seconds between an agent's heartbeats
M.HEARTBEAT_TIMEOUT = 5.0 -- an agent silent this long is lost
M.EXPIRE = 60.0 -- registrations older than this are removed
M.NOTIFY_TIMEOUT = 15.0 -- prepare/hello barriers
M.GO_TIMEOUT = 5.0
M.DONE_TIMEOUT = 60.0 -- the end of a run in which agents made containers: they empty and remove them first

------------------------------------------------------------------------------------------
-- the scheduled start of a phase (docs/distributed.md, "Start skew")

-- The go notify names an instant ahead of its send at which every agent starts. How far
-- ahead (the lead) is the largest of: START_LEAD_MIN; START_LEAD_FACTOR times the prepare
-- barrier's round trip (a notify's fan-out and the agents' wake-ups under the load of the
-- moment); and START_NEED_FACTOR times what the run's previous phase needed (its go round
-- trip plus its slowest agent's setup, from the go's receipt to its bench being ready: a
-- write's run metadata, the payload pattern, on a busy host all the agents' at once); at
-- most START_LEAD_MAX. An agent never waits more than START_WAIT_MAX for it (a wall clock
-- far behind the coordinator's).
M.START_LEAD_MIN = 0.25
M.START_LEAD_FACTOR = 3
M.START_NEED_FACTOR = 2
M.START_LEAD_MAX = 2.0
M.START_WAIT_MAX = 5.0

function M.start_lead(prepare_round_trip, previous_need)
  local lead = math.max(M.START_LEAD_MIN, M.START_LEAD_FACTOR * (tonumber(prepare_round_trip) or 0),
    M.START_NEED_FACTOR * (tonumber(previous_need) or 0))
  return math.min(M.START_LEAD_MAX, lead)
end

-- The go notify's `start`: the instant `lead` seconds from now on the coordinator's
-- monotonic clock (for agents of its boot: boot) and on its wall clock (for the others).
function M.start_schedule(lead)
  return { lead = lead, monotonic = sys.monotonic() + lead, realtime = sys.realtime() + lead, boot = M.boot_id() }
end

-- An agent's side: the instant of `start` on this process's monotonic clock, and which clock
-- gave it -> instant, "monotonic" | "realtime"; nil for a go without a start. An agent of the
-- coordinator's boot shares its monotonic clock and takes the instant as it is; any other
-- turns the wall-clock instant into its own monotonic clock at the go's receipt (`received`
-- on its wall clock, `received_monotonic` on its monotonic one), so that its wait is on a
-- clock that is never stepped. The wait is at most START_WAIT_MAX.
function M.start_instant(start, received, received_monotonic)
  if type(start) ~= "table" then return nil end
  local at, clock
  if start.boot ~= nil and start.boot == M.boot_id() and tonumber(start.monotonic) then
    at, clock = tonumber(start.monotonic), "monotonic"
  elseif tonumber(start.realtime) then
    at, clock = received_monotonic + (tonumber(start.realtime) - received), "realtime"
  else
    return nil
  end
  at = math.min(at, received_monotonic + M.START_WAIT_MAX)
  if not (at > 0) then at = received_monotonic end
  return at, clock
end

-- The coordinator's figures of a phase's start, from the go replies (`replies`: the go's
-- receipt) and the agents' results (`results`: their actual start, start_realtime and
-- start_monotonic, from the engine), with `schedule` the go's start and `go_sent` its send
-- on the coordinator's monotonic clock. -> {start_skew, start_skew_monotonic, go_delivery,
-- start_late_max, start_setup_max}, and per agent {started_at, start_clock, start_late,
-- go_late, start_setup, go_delivery, started_monotonic}:
--   start_skew             the spread of the agents' actual starts on their wall clocks
--   start_skew_monotonic   the same on the coordinator's monotonic clock, when every agent
--                          shares it (reports its boot), with go_delivery {min, max}: each
--                          agent's receipt of the go after its send (per agent:
--                          go_delivery)
--   start_late             each agent's start after the instant: on the shared monotonic
--                          clock, else as the agent measured it on its own (late when the
--                          go came after the instant, or the bench's setup took longer than
--                          the lead); go_late: the go's receipt after the instant, when it was
--   start_setup            from the go's receipt to the bench being ready to start, on the
--                          agent's own monotonic clock
-- An agent without a start in its result (an agent of an older release) counts with the
-- time it answered the go.
function M.start_figures(schedule, go_sent, replies, results)
  local boot = M.boot_id()
  local figures, per_agent = {}, {}
  local walls, monotonic, deliveries, all_shared = {}, {}, {}, true
  local names = {}
  for name in pairs(results) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local result, reply = results[name], replies[name] or {}
    local wall = tonumber(result.start_realtime) or tonumber(reply.started) or tonumber(reply.received)
    local shared = boot ~= nil and reply.boot == boot
    local mono = tonumber(result.start_monotonic) or tonumber(reply.started_monotonic) or
      tonumber(reply.received_monotonic)
    local entry = { started_at = wall, start_clock = reply.start_clock }
    if wall then walls[#walls + 1] = wall end
    if shared and mono then
      monotonic[#monotonic + 1] = mono
      local received = tonumber(reply.received_monotonic) or mono
      deliveries[#deliveries + 1] = received - go_sent
      entry.go_delivery, entry.started_monotonic = received - go_sent, mono
      if schedule then
        entry.start_late = math.max(0, mono - schedule.monotonic)
        if received > schedule.monotonic then entry.go_late = received - schedule.monotonic end
      end
    else
      all_shared = false
      entry.start_late = tonumber(result.start_late)
      if tonumber(reply.late) and reply.late > 0 then entry.go_late = tonumber(reply.late) end
    end
    if entry.start_late then
      figures.start_late_max = math.max(figures.start_late_max or 0, entry.start_late)
    end
    if tonumber(result.start_ready) and tonumber(reply.received_monotonic) then
      entry.start_setup = math.max(0, result.start_ready - reply.received_monotonic)
      figures.start_setup_max = math.max(figures.start_setup_max or 0, entry.start_setup)
    end
    per_agent[name] = entry
  end
  table.sort(walls)
  figures.start_skew = #walls > 1 and walls[#walls] - walls[1] or 0
  if all_shared and #monotonic > 0 then
    table.sort(monotonic)
    table.sort(deliveries)
    figures.start_skew_monotonic = monotonic[#monotonic] - monotonic[1]
    figures.go_delivery = { min = deliveries[1], max = deliveries[#deliveries] }
  end
  return figures, per_agent
end

-- Object names and per-agent benchmark names.
function M.scenario_object(run) return "run." .. run .. ".scenario" end
function M.result_object(run, phase, agent) return string.format("run.%s.p%d.%s.json", run, phase, agent) end
function M.hist_object(run, phase, agent) return string.format("run.%s.p%d.%s.hist", run, phase, agent) end
function M.second_hist_object(run, phase, agent)
  return string.format("run.%s.p%d.%s.shist", run, phase, agent)
end

-- One phase's per-second latency histograms in one object: a header line
-- "cephmark-seconds 1 <n>", a line of n lengths (0 for a second without completions), then
-- the n encodings back to back. Second i's encoding starts after the lengths of 1..i-1.
local SECONDS_MAGIC = "cephmark-seconds 1"
function M.pack_seconds(encodings, n)
  local lengths = {}
  for i = 1, n do lengths[i] = encodings[i] and #encodings[i] or 0 end
  local parts = { SECONDS_MAGIC .. " " .. n .. "\n", table.concat(lengths, " ") .. "\n" }
  for i = 1, n do parts[#parts + 1] = encodings[i] or "" end
  return table.concat(parts)
end

-- unpack_seconds(blob) -> iterator of (second, encoding | nil), or nil, message when the
-- blob is not a packing of seconds (the lengths must add up to what follows them)
function M.unpack_seconds(blob)
  local n, after
  if blob:sub(1, #SECONDS_MAGIC + 1) == SECONDS_MAGIC .. " " then
    n, after = blob:match("^(%d+)\n()", #SECONDS_MAGIC + 2)
  end
  if not n then return nil, "not a per-second histogram object" end
  local lengths_end = blob:find("\n", after, true)
  if not lengths_end then return nil, "per-second histogram object truncated" end
  local lengths, total = {}, 0
  for length in blob:sub(after, lengths_end - 1):gmatch("%d+") do
    lengths[#lengths + 1] = tonumber(length)
    total = total + lengths[#lengths]
  end
  if #lengths ~= tonumber(n) or lengths_end + total ~= #blob then
    return nil, "per-second histogram object inconsistent (lengths do not add up)"
  end
  local i, offset = 0, lengths_end + 1
  return function()
    i = i + 1
    if i > #lengths then return nil end
    local from = offset
    offset = offset + lengths[i]
    if lengths[i] == 0 then return i, nil end
    return i, blob:sub(from, offset - 1)
  end
end
function M.prefix(run, agent) return string.format("cephmark_%s_%s_", run, agent) end
function M.run_name(run, agent) return string.format("cephmark_%s_%s_meta", run, agent) end
function M.code_object(run, phase) return string.format("run.%s.p%d.workers", run, phase) end

-- This boot of this machine (Linux's boot id), or nil: two processes that report the same
-- one share CLOCK_MONOTONIC, so their monotonic times can be compared.
function M.boot_id()
  if M.boot == nil then
    local ok, text = pcall(sys.read_file, "/proc/sys/kernel/random/boot_id")
    M.boot = ok and type(text) == "string" and text:match("[%x-]+") or false
  end
  return M.boot or nil
end

local function decode(text)
  local ok, value = pcall(json.decode, text)
  if ok and type(value) == "table" then return value end
  return nil
end
M.decode = decode

-- Whether two cephmark versions give results that mean the same: the same major and minor
-- release ("0.1.0" and "0.1.3" do; "0.1.0" and "0.2.0" do not; a patch release fixes bugs
-- without changing what a result measures or how it is merged). nil when either is not a
-- version at all.
local function release(version)
  local major, minor = tostring(version or ""):match("^(%d+)%.(%d+)")
  if not major then return nil end
  return major .. "." .. minor
end
function M.compatible(a, b)
  local ra, rb = release(a), release(b)
  if not ra or not rb then return nil end
  return ra == rb
end

-- The one line for versions that do not mix, naming both.
function M.version_mismatch(agent, agent_version, coordinator_version)
  return string.format("cephmark versions differ: agent %s runs %s, the coordinator %s (results of "
    .. "different releases are not merged; install the same release on every host)", agent,
    tostring(agent_version), tostring(coordinator_version))
end

-- Opens (creating if needed) the control pool on a connected cluster.
function M.open_pool(cluster, name)
  name = name or M.DEFAULT_POOL
  if not cluster:pool_exists(name) then
    local size = tonumber(cluster:conf_get("osd_pool_default_size")) or 3
    local ok, err = cluster:pool_create { name = name, type = "replicated", size = size }
    if not ok and not cluster:pool_exists(name) then
      sys.fail(string.format("cannot create the control pool %s: %s", name, err))
    end
  end
  local pool, err = cluster:pool(name)
  if not pool then sys.fail(string.format("cannot open the control pool %s: %s", name, err)) end
  return pool
end

-- The registry as {name = registration}, each with `age` (seconds since its heartbeat).
-- `object` names another registry of the same form (the host monitors', monitor.lua).
function M.registry(pool, object)
  local entries, err = control.omap_get(pool, object or M.REGISTRY)
  if not entries then return nil, err end
  local now, agents = sys.realtime(), {}
  for name, text in pairs(entries) do
    local entry = decode(text)
    if entry then
      entry.name = name
      entry.age = now - (tonumber(entry.heartbeat) or 0)
      agents[name] = entry
    else
      agents[name] = { name = name, age = math.huge, corrupt = true }
    end
  end
  return agents
end

-- Removes registrations whose heartbeat is older than `expire` seconds; returns their names.
function M.expire(pool, expire, object)
  local agents = M.registry(pool, object) or {}
  local stale = {}
  for name, entry in pairs(agents) do
    if entry.age > (expire or M.EXPIRE) then stale[#stale + 1] = name end
  end
  table.sort(stale)
  if #stale > 0 then control.omap_remove(pool, object or M.REGISTRY, stale) end
  return stale
end

-- notify(pool, message, timeout) -> replies by agent name, timeouts {{gid, cookie}}
function M.notify(pool, message, timeout)
  local acks, timeouts = control.notify(pool, M.CONTROL, json.encode(message), timeout or M.NOTIFY_TIMEOUT)
  local replies = {}
  for _, ack in ipairs(acks or {}) do
    local reply = decode(ack.reply)
    if reply and reply.agent then
      reply.gid = ack.gid
      replies[reply.agent] = reply
    end
  end
  return replies, timeouts or {}
end

------------------------------------------------------------------------------------------
-- the members: what a load agent (cmd/agent.lua) and a host monitor (monitor.lua) share

-- A member registers in a registry object (an omap entry with a heartbeat), watches a
-- control object and answers the notifies on it. A class made by M.member_class(role,
-- registry, control_object) has these methods; `role` ("agent" or "monitor") is the log
-- prefix and the key a member signs its replies with. The class supplies
-- registration() (the entry's own fields), dispatch(message, body) (one notify) and,
-- where it holds more than its watch, release() (called once it has deregistered).
local Member = {}

function M.member_class(role, registry, control_object)
  local class = setmetatable({ role = role, registry_object = registry, control_object = control_object },
    { __index = Member })
  class.__index = class
  return class
end

-- a member's line on stderr, prefixed by its role
local function log_line(role, fmt, ...) io.stderr:write(string.format(role .. ": " .. fmt, ...), "\n") end

-- log(fmt, ...) for the lines a member's own code writes
function M.logger(role)
  return function(fmt, ...) log_line(role, fmt, ...) end
end

-- whether `name` is in the list (a message's `agents` or `monitors`)
function M.listed(list, name)
  for _, n in ipairs(list or {}) do
    if n == name then return true end
  end
  return false
end

function Member:log(fmt, ...) log_line(self.role, fmt, ...) end

function Member:register()
  local entry = { host = sys.hostname(), pid = sys.getpid(), version = sys.version, gid = self.gid,
    cookie = self.watch:cookie(), heartbeat = sys.realtime(), started = self.started }
  for k, v in pairs(self:registration()) do entry[k] = v end
  local ok, err = control.omap_set(self.pool, self.registry_object, { [self.name] = json.encode(entry) })
  if not ok then self:log("heartbeat failed: %s", err) end
  self.last_heartbeat = sys.monotonic()
end

function Member:heartbeat_due() return sys.monotonic() - self.last_heartbeat >= M.HEARTBEAT_INTERVAL end

function Member:reply(message, body)
  body[self.role] = self.name
  local ok, err = self.watch:ack(message, json.encode(body))
  if not ok then self:log("cannot acknowledge a notify: %s", err) end
end

-- A watch the OSD dropped (the member stalled past the watch timeout, or the OSD restarted
-- and the client could not re-establish it) is replaced by a new one.
function Member:next_message(timeout)
  local ok, message = pcall(self.watch.next, self.watch, timeout)
  if ok then return message end
  local text = tostring((sys.error_info(message)))
  if not text:find("was lost", 1, true) then error(message, 0) end
  self:log("%s; watching again", text)
  pcall(self.watch.close, self.watch)
  local watch, err = control.watch(self.pool, self.control_object)
  if not watch then sys.fail(self.role .. ": cannot watch the control object again: " .. tostring(err)) end
  self.watch = watch
  self:register()
  return nil
end

-- Heartbeats and hands each notify to dispatch, until an error (SIGINT among them) ends it.
function Member:serve()
  while true do
    if self:heartbeat_due() then self:register() end
    local message = self:next_message(M.HEARTBEAT_INTERVAL / 2)
    if message then self:dispatch(message, decode(message.payload) or {}) end
  end
end

-- serve_member(class, self, what, doing): refuses self.name while a registration of that
-- name is alive (`what` names the kind: "an agent"), watches, registers, logs `doing`,
-- serves until SIGINT/SIGTERM/SIGHUP, then deregisters. `self` holds name and pool and the
-- class's own fields. Returns the exit status.
function M.serve_member(class, self, what, doing)
  local command = "agent"
  local registry = M.registry(self.pool, class.registry_object) or {}
  local existing = registry[self.name]
  if existing and existing.age <= M.HEARTBEAT_TIMEOUT and
    not (existing.host == sys.hostname() and existing.pid == sys.getpid()) then
    sys.fail(string.format("%s: %s named '%s' is alive (host %s, pid %s, heartbeat %.1f s ago); choose another --name",
      command, what, self.name, tostring(existing.host), tostring(existing.pid), existing.age))
  end
  local watch, err = control.watch(self.pool, class.control_object)
  if not watch then sys.fail(command .. ": " .. err) end
  self.watch, self.gid, self.started, self.last_heartbeat = watch, control.instance_id(self.pool), sys.realtime(), 0
  setmetatable(self, class)
  self:register()
  self:log("%s registered in pool %s (client.%d); %s", self.name, self.control_pool or M.DEFAULT_POOL, self.gid, doing)
  local ok, serve_err = pcall(self.serve, self)
  pcall(control.omap_remove, self.pool, class.registry_object, { self.name })
  pcall(self.watch.close, self.watch)
  if self.release then self:release() end
  local message = tostring((sys.error_info(serve_err)))
  if not ok and not message:find("interrupted", 1, true) then sys.fail(command .. ": " .. message) end
  self:log("%s deregistered", self.name)
  return sys.EXIT_INTERRUPTED
end

------------------------------------------------------------------------------------------
-- the coordinator

local Coordinator = {}
M.Coordinator = Coordinator -- (bench/agent-merge.lua times its fetch and merge)
Coordinator.__index = Coordinator

local function say(line) io.stderr:write(line, "\n") end

-- Which agents to use: "N" (any N fresh ones) or "a,b,c" (those, all fresh). Waits up to
-- `wait` seconds for them to register.
local function choose_agents(pool, spec, wait)
  local count = tonumber(spec)
  local names
  if not count then
    names = {}
    for name in spec:gmatch("[^,%s]+") do names[#names + 1] = name end
    if #names == 0 then sys.fail("--agents expects a number or a list of agent names, got '" .. spec .. "'") end
  elseif count < 1 or count ~= math.floor(count) then
    sys.fail("--agents expects a positive number of agents, got '" .. spec .. "'")
  end
  local deadline = sys.monotonic() + wait
  while true do
    local agents = M.registry(pool) or {}
    local fresh = {}
    for name, entry in pairs(agents) do
      if entry.age <= M.HEARTBEAT_TIMEOUT then fresh[#fresh + 1] = name end
    end
    table.sort(fresh)
    if names then
      local missing = {}
      for _, name in ipairs(names) do
        if not (agents[name] and agents[name].age <= M.HEARTBEAT_TIMEOUT) then missing[#missing + 1] = name end
      end
      if #missing == 0 then return names, agents end
      if sys.monotonic() > deadline then
        sys.fail(string.format("agents not registered or not heartbeating: %s (registered and alive: %s)",
          table.concat(missing, ", "), #fresh > 0 and table.concat(fresh, ", ") or "none"))
      end
    else
      if #fresh >= count then
        local chosen = {}
        for i = 1, count do chosen[i] = fresh[i] end
        return chosen, agents
      end
      if sys.monotonic() > deadline then
        sys.fail(string.format("%d agents wanted, %d registered and alive (%s) after %g s; start more with `cephmark agent`",
          count, #fresh, #fresh > 0 and table.concat(fresh, ", ") or "none", wait))
      end
    end
    sys.sleep(0.5)
  end
end

-- start(cluster, opts) -> coordinator: opts.agents ("N" or names), opts.control_pool,
-- opts.script (path), opts.params (table), opts.wait (seconds to wait for agents).
function M.start(cluster, opts)
  local self = setmetatable({}, Coordinator)
  self.pool = M.open_pool(cluster, opts.control_pool)
  self.control_pool = opts.control_pool or M.DEFAULT_POOL
  local expired = M.expire(self.pool, M.EXPIRE)
  if #expired > 0 then say("agents: expired stale registrations: " .. table.concat(expired, ", ")) end
  self.run = string.format("%s%d", os.date("!%H%M%S"), sys.getpid())
  self.phases = 0
  self.agents, self.registry = choose_agents(self.pool, opts.agents, opts.wait or 30)
  for _, name in ipairs(self.agents) do
    local version = self.registry[name] and self.registry[name].version
    if not M.compatible(version, sys.version) then sys.fail(M.version_mismatch(name, version, sys.version)) end
  end
  self.active = {}
  for _, name in ipairs(self.agents) do self.active[name] = true end

  local script_text = opts.script and sys.read_file(opts.script) or ""
  local scenario = json.encode { script = opts.script, script_text = script_text, params = opts.params or {},
    coordinator = { host = sys.hostname(), pid = sys.getpid(), version = sys.version } }
  local ok, err = self.pool:write_full(M.scenario_object(self.run), scenario)
  if not ok then sys.fail("cannot publish the scenario: " .. tostring(err)) end
  self.objects = { M.scenario_object(self.run) }
  local replies = M.notify(self.pool, { type = "hello", run = self.run, agents = self.agents,
    scenario = M.scenario_object(self.run), bytes = #scenario }, M.NOTIFY_TIMEOUT)
  local missing = {}
  for _, name in ipairs(self.agents) do
    local reply = replies[name]
    if not (reply and reply.ok) then
      missing[#missing + 1] = name .. (reply and reply.error and (" (" .. reply.error .. ")") or " (no answer)")
    end
  end
  if #missing > 0 then
    self:finish()
    sys.fail("agents did not acknowledge the scenario: " .. table.concat(missing, ", "))
  end
  say(string.format("agents: run %s on %d agents (%s), control pool %s", self.run, #self.agents,
    table.concat(self.agents, ", "), self.control_pool))
  return self
end

local function active_list(self)
  local list = {}
  for _, name in ipairs(self.agents) do
    if self.active[name] then list[#list + 1] = name end
  end
  return list
end

-- Merges agents' phase results one at a time, as they arrive, so that the coordinator holds
-- one agent's decoded result at a time (its series is what weighs: about 4 MB per agent-hour
-- decoded): counts summed, latency from the exact merge of the histograms, the per-second
-- series summed by second, elapsed = the longest agent's. Each second's percentiles come
-- from the agents' histograms of that second, folded into one encoding per second as each
-- agent arrives (control.merge_encoded): the memory is one merged histogram per second,
-- whatever the number of agents. The worst agent's p99 of each second stays beside it as
-- p99_worst_agent.
--   local m = distributed.merger(); m:add(result, hist, shist) ...; local merged = m:result()
local Merger = {}
Merger.__index = Merger
local summed = { "ops", "bytes", "errors", "verify_failures", "started", "reads", "writes" }
local summed_per_second = { "cur_ops", "started", "finished", "ops", "bytes", "errors", "cur_mib", "iops",
  "read_ops", "write_ops", "read_bytes", "write_bytes" }

function M.merger()
  return setmetatable({ histograms = {}, series = {}, second_hists = {}, without_seconds = {},
    figures = { sums = {}, same = {}, differ = {}, http = {}, containers = {}, verify_errors = json.array() },
    total = { ops = 0, bytes = 0, errors = 0,
    verify_failures = 0, started = 0, reads = 0, writes = 0, elapsed = 0, interrupted = false,
    drained = true } }, Merger)
end

-- The figures targets add to a result beyond ops, bytes and errors, and how the agents'
-- are merged. Each agent works on objects of its own (its own prefix, containers, image),
-- so what counts the objects, requests or events of one agent adds up over the agents:
-- rados `objects` (written, or read from), `objects_removed`, `overwrites`, `misses`; rbd
-- `verify_skipped`; Swift/S3 `objects`, `objects_written`, `transport_errors`, `reauths`,
-- `names_listed`, `listings`, `misses`, `http_errors` (by status) and a multipart put's
-- `parts`, `uploads_aborted`, `uploads_left`; socket `retransmits`. What describes the
-- phase rather than counts (the API, the transport, the io pattern, an overwrite pass
-- count, a size) is kept when every agent reports the same value and left out otherwise;
-- `size_min`/`size_max` are the lowest and highest; rates (`bits_per_second`) and
-- percentiles of one agent (`ttfb`) are not merged: the agents' own stay under `agents`.
M.TARGET_SUMS = { "objects", "objects_written", "objects_removed", "overwrites", "misses", "verify_skipped",
  "transport_errors", "reauths", "names_listed", "listings", "retransmits" }
local target_same = { "api", "method", "transport", "io_type", "pattern", "engine", "access", "verify", "spread",
  "page_size", "io_size", "overwrite_passes", "overwrite_block" }
local multipart_sums = { "parts", "uploads_aborted", "uploads_left" }
local first_messages = { "first_error", "containers_error", "auth_error", "gave_up" }
local VERIFY_ERRORS_KEPT = 8

local function add_sum(sums, key, value)
  value = tonumber(value)
  if value then sums[key] = (sums[key] or 0) + value end
end

function Merger:add_target_figures(r)
  local f = self.figures
  for _, key in ipairs(M.TARGET_SUMS) do add_sum(f.sums, key, r[key]) end
  for _, key in ipairs(target_same) do
    if r[key] ~= nil then
      if f.same[key] == nil then f.same[key] = r[key] elseif f.same[key] ~= r[key] then f.differ[key] = true end
    end
  end
  if tonumber(r.size_min) then f.size_min = math.min(f.size_min or math.huge, tonumber(r.size_min)) end
  if tonumber(r.size_max) then f.size_max = math.max(f.size_max or -math.huge, tonumber(r.size_max)) end
  for _, entry in ipairs(type(r.http_errors) == "table" and r.http_errors or {}) do
    local status = tonumber(entry.status)
    if status then
      local e = f.http[status] or { status = math.tointeger(status) or status, reason = entry.reason, count = 0 }
      e.count = e.count + (tonumber(entry.count) or 0)
      f.http[status] = e
    end
  end
  if r.http_errors ~= nil then f.has_http = true end
  for _, name in ipairs(type(r.containers) == "table" and r.containers or {}) do
    f.containers[#f.containers + 1] = name
  end
  if r.containers_made ~= nil then f.containers_made = f.containers_made or r.containers_made == true end
  if r.containers_removed ~= nil then
    f.containers_removed = (f.containers_removed == nil or f.containers_removed) and r.containers_removed == true
  end
  for _, key in ipairs(first_messages) do
    if type(r[key]) == "string" and f[key] == nil then f[key] = string.format("agent %s: %s", tostring(r.agent), r[key]) end
  end
  for _, message in ipairs(type(r.verify_errors) == "table" and r.verify_errors or {}) do
    if #f.verify_errors < VERIFY_ERRORS_KEPT then f.verify_errors[#f.verify_errors + 1] = message end
  end
  if type(r.multipart) == "table" then
    local m = f.multipart or { part_size = r.multipart.part_size, parts_in_flight = r.multipart.parts_in_flight }
    for _, key in ipairs(multipart_sums) do add_sum(m, key, r.multipart[key]) end
    f.multipart = m
  end
end

-- The merged target figures into the total (only those some agent reported).
function Merger:target_figures(total)
  local f = self.figures
  for key, value in pairs(f.sums) do total[key] = value end
  for key, value in pairs(f.same) do
    if not f.differ[key] then total[key] = value end
  end
  total.size_min, total.size_max = f.size_min, f.size_max
  if f.has_http then
    local list = json.array()
    for _, e in pairs(f.http) do list[#list + 1] = e end
    table.sort(list, function(a, b) return a.status < b.status end)
    total.http_errors = list
  end
  if #f.containers > 0 then
    table.sort(f.containers)
    total.containers = f.containers
  end
  total.containers_made, total.containers_removed = f.containers_made, f.containers_removed
  for _, key in ipairs(first_messages) do total[key] = f[key] end
  if #f.verify_errors > 0 then total.verify_errors = f.verify_errors end
  total.multipart = f.multipart
end

-- Folds one agent's per-second histograms (M.pack_seconds) into the merged ones. An agent
-- whose object is missing or unreadable is named in without_seconds: the series' p99 is then
-- the worst agent's.
function Merger:add_seconds(r, shist)
  local next_second, err
  if shist then next_second, err = M.unpack_seconds(shist) end
  if next_second then
    local merged = self.second_hists
    for i, encoding in next_second do
      if encoding then
        local folded, merge_err = control.merge_encoded(merged[i], encoding)
        if not folded then
          err = merge_err
          break
        end
        merged[i] = folded
      end
    end
  end
  if err or not shist then
    self.without_seconds[#self.without_seconds + 1] = string.format("%s (%s)", tostring(r.agent),
      err or "no per-second histograms")
  end
end

-- Folds one agent's result (its encoded histogram and per-second histograms, if any) in;
-- the result's series is not kept.
function Merger:add(r, hist, shist)
  local total, series = self.total, self.series
  for _, key in ipairs(summed) do total[key] = total[key] + (tonumber(r[key]) or 0) end
  total.elapsed = math.max(total.elapsed, tonumber(r.elapsed) or 0)
  total.interrupted = total.interrupted or r.interrupted == true
  total.drained = total.drained and r.drained ~= false
  total.threads = (total.threads or 0) + (tonumber(r.threads) or 0)
  total.block_size, total.object_size, total.op = r.block_size, r.object_size, r.op
  for i, second in ipairs(r.series or {}) do
    local out = series[i] or { sec = i, cur_ops = 0, started = 0, finished = 0, ops = 0, bytes = 0, errors = 0,
      cur_mib = 0, iops = 0, read_ops = 0, write_ops = 0, read_bytes = 0, write_bytes = 0, agents = 0 }
    for _, key in ipairs(summed_per_second) do out[key] = out[key] + (tonumber(second[key]) or 0) end
    out.agents = out.agents + 1
    out.p99 = math.max(out.p99 or 0, tonumber(second.p99) or 0) -- the worst agent's p99
    out.max_lat = math.max(out.max_lat or 0, tonumber(second.max_lat) or 0)
    out.warmup = second.warmup
    out.partial = out.partial or second.partial
    series[i] = out
  end
  if hist then self.histograms[#self.histograms + 1] = hist end
  self:add_seconds(r, shist)
  self:add_target_figures(r)
end

-- Each merged second's percentiles from its merged histogram (p50, p99, p999, max_lat), the
-- worst agent's p99 kept as p99_worst_agent. When an agent's per-second histograms are
-- missing, p99 stays the worst agent's and total.series_p99 says so.
function Merger:second_percentiles()
  local total = self.total
  for _, s in ipairs(self.series) do s.p99_worst_agent = s.p99 end
  if #self.without_seconds > 0 then
    total.series_p99 = "worst agent"
    total.series_p99_why = "no per-second histograms from " .. table.concat(self.without_seconds, ", ")
    return
  end
  total.series_p99 = "merged"
  for i, s in ipairs(self.series) do
    local encoding = self.second_hists[i]
    local q = encoding and control.hist_quantiles(encoding)
    if q then
      s.p50, s.p99, s.p999, s.max_lat, s.lat_count = q.p50, q.p99, q.p999, q.max, q.count
    end
  end
  self.second_hists = {}
end

-- The spread of one per-second figure over the full seconds: stddev, max, min.
local function spread(full, key)
  if #full == 0 then return 0, 0, 0 end
  local sum, max, min = 0, -math.huge, math.huge
  for _, s in ipairs(full) do
    sum = sum + s[key]
    max = math.max(max, s[key])
    min = math.min(min, s[key])
  end
  local mean, var = sum / #full, 0
  for _, s in ipairs(full) do var = var + (s[key] - mean) ^ 2 end
  return #full > 1 and math.sqrt(var / (#full - 1)) or 0, max, min
end

-- The merged result of everything added.
function Merger:result()
  local total = self.total
  local elapsed = total.elapsed > 0 and total.elapsed or 1
  total.bandwidth_mib = total.bytes / elapsed / 1048576
  total.iops = total.ops / elapsed
  local full = {}
  for _, s in ipairs(self.series) do
    if not s.partial and not s.warmup then full[#full + 1] = s end
  end
  total.bandwidth_stddev, total.bandwidth_max, total.bandwidth_min = spread(full, "cur_mib")
  total.iops_stddev, total.iops_max, total.iops_min = spread(full, "iops")
  total.lat = #self.histograms > 0 and control.merge_histograms(self.histograms) or { count = 0 }
  self:second_percentiles()
  self:target_figures(total)
  total.series = self.series
  return total
end

-- One merger per gateway endpoint, fed the results of the agents that name one (Swift and
-- S3 phases): the breakdown of a phase whose agents are spread over several gateways.
-- result() -> nil (no agent named an endpoint) or {[endpoint] = {agents, ops, bytes, errors,
-- iops, bandwidth_mib, p50, p99, series_p99, series = {{sec, ops, bytes, errors, iops,
-- cur_mib, p50, p99, p999, max_lat, lat_count, agents}, ...}}}: each second's percentiles
-- from the merged histograms of that second of that endpoint's agents, as for the phase.
local EndpointMergers = {}
EndpointMergers.__index = EndpointMergers

function M.endpoint_mergers() return setmetatable({ groups = {} }, EndpointMergers) end

function EndpointMergers:add(r, hist, shist)
  if type(r.endpoint) ~= "string" then return end
  local group = self.groups[r.endpoint]
  if not group then
    group = { merger = M.merger(), agents = json.array() }
    self.groups[r.endpoint] = group
  end
  group.agents[#group.agents + 1] = r.agent
  group.merger:add(r, hist, shist)
end

local endpoint_second_keys = { "sec", "ops", "bytes", "errors", "iops", "cur_mib", "p50", "p99", "p999", "max_lat",
  "lat_count", "agents" }

function EndpointMergers:result()
  if not next(self.groups) then return nil end
  local out = {}
  for endpoint, group in pairs(self.groups) do
    local merged = group.merger:result()
    table.sort(group.agents, function(a, b) return tostring(a) < tostring(b) end)
    local series = json.array()
    for i, second in ipairs(merged.series) do
      local row = {}
      for _, key in ipairs(endpoint_second_keys) do row[key] = second[key] end
      if second.partial then row.partial = true end
      if second.warmup then row.warmup = true end
      series[i] = row
    end
    out[endpoint] = { agents = group.agents, ops = merged.ops, bytes = merged.bytes, errors = merged.errors,
      iops = merged.iops, bandwidth_mib = merged.bandwidth_mib, p50 = merged.lat.p50, p99 = merged.lat.p99,
      series_p99 = merged.series_p99, series = series }
  end
  return out
end

-- An open loop's aggregate rate split over the agents that start the phase: {[agent] =
-- ops/s}, summing to `rate` exactly. A whole rate of at least one op/s per agent is split in
-- whole ops/s, the remainder one op/s each to the first agents by name; any other rate in
-- equal shares. Each agent's engine corrects its own latencies for coordinated omission
-- against its own schedule.
function M.rate_shares(rate, agents)
  local names = {}
  for i, name in ipairs(agents) do names[i] = name end
  table.sort(names)
  local shares = {}
  for i, name in ipairs(names) do shares[name] = M.split_rate(rate, #names, i) end
  return shares
end

-- The rule that names a slow agent is the one that names a slow OSD (telemetry.lua): an
-- agent with at least MIN_OPS ops whose p99 is more than OUTLIER_FACTOR times the median of
-- its peers' p99s, or whose IOPS are less than the median of its peers' IOPS divided by
-- OUTLIER_FACTOR, compared with at least two peers (so three agents or more). Worst first;
-- each entry {agent, host, reasons = {"p99 36.2 ms (peers 0.166 ms)", ...}, p99,
-- peers_p99, iops, peers_iops}.
function M.slow_agents(agents)
  local telemetry = require "cephmark.telemetry"
  local median, format_latency = telemetry.median, telemetry.format_latency
  local factor, eligible = telemetry.OUTLIER_FACTOR, {}
  for name, a in pairs(agents or {}) do
    if type(a) == "table" and (tonumber(a.ops) or 0) >= telemetry.MIN_OPS and tonumber(a.p99) and tonumber(a.iops) then
      eligible[#eligible + 1] = { agent = name, host = a.host, p99 = a.p99, iops = a.iops }
    end
  end
  table.sort(eligible, function(x, y) return x.agent < y.agent end)
  local found = json.array()
  if #eligible < 3 then return found end
  for _, entry in ipairs(eligible) do
    local p99s, iopses = {}, {}
    for _, other in ipairs(eligible) do
      if other ~= entry then
        p99s[#p99s + 1] = other.p99
        iopses[#iopses + 1] = other.iops
      end
    end
    entry.peers_p99, entry.peers_iops = median(p99s), median(iopses)
    entry.reasons = {}
    if entry.p99 > factor * entry.peers_p99 then
      entry.reasons[#entry.reasons + 1] = string.format("p99 %s (peers %s)", format_latency(entry.p99),
        format_latency(entry.peers_p99))
    end
    if entry.iops * factor < entry.peers_iops then
      entry.reasons[#entry.reasons + 1] = string.format("%.0f IOPS (peers %.0f)", entry.iops, entry.peers_iops)
    end
    if #entry.reasons > 0 then
      entry.severity = math.max(entry.p99 / entry.peers_p99, entry.peers_iops / math.max(entry.iops, 1e-9))
      found[#found + 1] = entry
    end
  end
  table.sort(found, function(x, y) return x.severity > y.severity end)
  return found
end

-- One row per host of a distributed phase: the agents on it (their ops, IOPS, MiB/s and
-- errors summed, the worst p50 and p99) and the host monitor on it (cluster.hosts, keyed by
-- monitor name, each with its `host`), so that an agent and a monitor on the same host are
-- one row. A monitor recorded as missing has no host: its row is keyed by its name.
-- -> {[host] = {host, agents = {names}, ops, iops, bandwidth_mib, errors, p50, p99, slow,
--    monitor = name, host_cpu_busy, osd_cpu_seconds, monitor_missing}} (the monitor's
--    figures in full stay in cluster.hosts)
function M.per_host(agents, monitors, slow)
  local rows = {}
  local function row(host)
    rows[host] = rows[host] or { host = host, agents = json.array() }
    return rows[host]
  end
  local slow_names = {}
  for _, entry in ipairs(slow or {}) do slow_names[entry.agent] = true end
  local names = {}
  for name in pairs(agents or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local a = agents[name]
    local r = row(tostring(a.host or name))
    r.agents[#r.agents + 1] = name
    for _, key in ipairs { "ops", "iops", "bandwidth_mib", "errors" } do
      r[key] = (r[key] or 0) + (tonumber(a[key]) or 0)
    end
    r.p50 = math.max(r.p50 or 0, tonumber(a.p50) or 0)
    r.p99 = math.max(r.p99 or 0, tonumber(a.p99) or 0)
    r.elapsed = math.max(r.elapsed or 0, tonumber(a.elapsed) or 0)
    if slow_names[name] then r.slow = true end
  end
  local monitor_names = {}
  for name in pairs(type(monitors) == "table" and monitors or {}) do monitor_names[#monitor_names + 1] = name end
  table.sort(monitor_names)
  for _, name in ipairs(monitor_names) do
    local figures = monitors[name]
    local host = type(figures) == "table" and type(figures.host) == "string" and figures.host or name
    local r = row(host)
    r.monitor = name
    if type(figures) == "table" then
      local cpu, ceph = type(figures.cpu) == "table" and figures.cpu or {}, type(figures.ceph) == "table" and figures.ceph or {}
      r.host_cpu_busy, r.osd_cpu_seconds = tonumber(cpu.busy_fraction), tonumber(ceph.osd_seconds)
      if type(figures.missing) == "string" then r.monitor_missing = figures.missing end
    end
  end
  return rows
end

-- Reads an agent's result objects for phase `phase` -> result table, histogram | nil,
-- per-second histograms | nil
function Coordinator:fetch(phase, agent)
  local name = M.result_object(self.run, phase, agent)
  if not self.pool:stat(name) then return nil end
  local text = self.pool:read(name)
  local result = text and decode(text)
  if not result then return nil end
  local hist = self.pool:read(M.hist_object(self.run, phase, agent))
  local shist = self.pool:read(M.second_hist_object(self.run, phase, agent))
  self.objects[#self.objects + 1] = name
  self.objects[#self.objects + 1] = M.hist_object(self.run, phase, agent)
  self.objects[#self.objects + 1] = M.second_hist_object(self.run, phase, agent)
  return result, hist, shist
end

-- run_phase(spec) -> merged bench result with .agents (per agent), .excluded, .skew.
-- spec = {pool = name, op = "write"|..., options = {threads=, seconds=, ...}, target = the
-- target's description (agent_targets.lua; pool phases may give only pool), agent_fields =
-- the fields of each agent's result its entry under .agents also keeps}
function Coordinator:run_phase(spec)
  self.phases = self.phases + 1
  local phase = self.phases
  local agents = active_list(self)
  if #agents == 0 then sys.fail("no agent is left to run phase " .. phase) end
  local excluded = json.array()
  local function exclude(name, why)
    if self.active[name] then
      self.active[name] = false
      excluded[#excluded + 1] = { agent = name, reason = why }
      say(string.format("agents: %s excluded from phase %d: %s", name, phase, why))
    end
  end

  -- a workers phase's code goes into the control pool; the agents read it while preparing
  local code
  if spec.code then
    code = M.code_object(self.run, phase)
    local written, err = self.pool:write_full(code, spec.code)
    if not written then sys.fail("cannot publish the worker code: " .. tostring(err)) end
    self.objects[#self.objects + 1] = code
  end

  -- a Swift/S3 phase (a put, a mix) may make the agents' own containers, which they remove
  -- at the run's end
  local kind = type(spec.target) == "table" and spec.target.kind or nil
  if kind == "swift" or kind == "s3" then self.made_containers = true end

  -- barrier 1: every agent opens the phase's target and is ready
  local prepare_sent = sys.monotonic()
  local replies = M.notify(self.pool, { type = "prepare", run = self.run, phase = phase, agents = agents,
    pool = spec.pool, target = spec.target, op = spec.op, options = spec.options, kind = spec.kind, code = code },
    M.NOTIFY_TIMEOUT)
  local prepare_round_trip = sys.monotonic() - prepare_sent
  for _, name in ipairs(agents) do
    local reply = replies[name]
    if not reply then
      exclude(name, "did not answer the prepare barrier")
    elseif not reply.ready then
      exclude(name, "not ready: " .. tostring(reply.error))
    end
  end
  agents = active_list(self)
  if #agents == 0 then sys.fail("no agent is ready for phase " .. phase) end

  -- barrier 2: one notify names the instant at which they all start (a lead ahead, so that
  -- every agent has it and has set its bench up by then), each with its share of an open
  -- loop's rate
  local requested_rate = tonumber((spec.options or {}).rate)
  local rates = requested_rate and M.rate_shares(requested_rate, agents) or nil
  local go_sent = sys.monotonic()
  local schedule = M.start_schedule(M.start_lead(prepare_round_trip, self.start_need))
  replies = M.notify(self.pool, { type = "go", run = self.run, phase = phase, agents = agents, rates = rates,
    start = schedule }, M.GO_TIMEOUT)
  local go_round_trip = sys.monotonic() - go_sent
  local go_replies = {}
  for _, name in ipairs(agents) do
    if replies[name] and (replies[name].received or replies[name].started) then
      go_replies[name] = replies[name]
    else
      exclude(name, "did not answer the go notify")
    end
  end

  -- wait for results, watching heartbeats
  local options = spec.options or {}
  local seconds = tonumber(options.seconds) or 0
  local budget = seconds + (tonumber(options.warmup) or 0) + (tonumber(options.drain_timeout) or 60) + 30
  if seconds == 0 then budget = tonumber(options.timeout) or 3600 end
  local deadline = sys.monotonic() + budget
  local merger, merged_count, per_agent = M.merger(), 0, {}
  local endpoints = M.endpoint_mergers()
  local pending = {}
  for _, name in ipairs(active_list(self)) do pending[name] = true end
  local stop_sent, last_registry, interrupted = false, 0, false
  local function is_interrupt(err) return tostring((sys.error_info(err))):find("interrupted", 1, true) ~= nil end
  -- one round of waiting; a Ctrl-C raises inside it at any instruction, so rounds run
  -- protected and an interrupt turns into "stop the agents, collect what they wrote"
  -- results cannot exist before a time-bounded phase has run its course: until then only
  -- heartbeats are read (one omap read a second, whatever the number of agents)
  local results_due = sys.monotonic() + math.max(0, seconds + (tonumber(options.warmup) or 0) - 1)
  local function round()
    for name in pairs(sys.monotonic() >= results_due and pending or {}) do
      local result, hist, shist = self:fetch(phase, name)
      -- an agent is merged whole or not at all: a Ctrl-C that comes during its merge is
      -- held until the merge ends (else the agent would be neither pending nor merged, and
      -- the aggregate would hold part of its counts)
      if result then
        sys.with_cleanup(function() end, function(err) return err end, function()
          pending[name] = nil
          if result.error then
            exclude(name, "failed: " .. tostring(result.error))
          else
            merger:add(result, hist, shist)
            endpoints:add(result, hist, shist)
            merged_count = merged_count + 1
            result.series = nil -- folded into the merger: the one large part of a result
            per_agent[name] = result
          end
        end)
      end
    end
    if not next(pending) then return end
    local now = sys.monotonic()
    if now - last_registry >= 1 then
      last_registry = now
      -- a registry that could not be read says nothing of the agents: never "deregistered"
      local registry = M.registry(self.pool)
      for name in pairs(registry and pending or {}) do
        local entry = registry[name]
        if not entry or entry.age > M.HEARTBEAT_TIMEOUT then
          pending[name] = nil
          exclude(name, entry and string.format("lost: no heartbeat for %.1f s", entry.age) or "lost: deregistered")
        end
      end
    end
    if (interrupted or sys.interrupted()) and not stop_sent then
      stop_sent, interrupted = true, true
      results_due = 0 -- the agents end the phase at their next second
      say("agents: interrupted; stopping the agents")
      M.notify(self.pool, { type = "stop", run = self.run }, M.GO_TIMEOUT)
      self.stopped = true
      deadline = math.min(deadline, sys.monotonic() + (tonumber(options.drain_timeout) or 60) + 10)
    end
    if sys.monotonic() > deadline then
      for name in pairs(pending) do exclude(name, "no result within " .. math.floor(budget) .. " s") end
      pending = {}
      return
    end
    sys.sleep(0.2, interrupted and { after_interrupt = true } or nil)
  end
  while next(pending) do
    local ok, err = pcall(round)
    if not ok then
      if not is_interrupt(err) then error(err, 0) end
      interrupted = true
    end
  end

  local merged = merger:result()
  merged.op = merged.op or spec.op
  merged.interrupted = merged.interrupted or interrupted
  -- the skew of the actual starts; agents on the coordinator's machine also on its
  -- monotonic clock, without trusting any wall clock
  local figures, starts = M.start_figures(schedule, go_sent, go_replies, per_agent)
  for key, value in pairs(figures) do merged[key] = value end
  merged.start_lead = schedule.lead
  merged.start_scheduled = { monotonic = schedule.monotonic, realtime = schedule.realtime }
  merged.go_round_trip = go_round_trip
  -- what this phase needed ahead of the start, for the next phase's lead
  if figures.start_setup_max then self.start_need = go_round_trip + figures.start_setup_max end
  merged.agents = {}
  for _, name in ipairs(self.agents) do
    local r = per_agent[name]
    if r then
      local lat = type(r.lat) == "table" and r.lat or {}
      merged.agents[name] = { host = (self.registry[name] or {}).host, ops = r.ops, bytes = r.bytes,
        errors = r.errors, elapsed = r.elapsed, bandwidth_mib = r.bandwidth_mib, iops = r.iops, p50 = lat.p50,
        p99 = lat.p99, lat = r.lat, prefix = r.prefix, interrupted = r.interrupted,
        rate = r.rate, endpoint = r.endpoint, image = r.image, by_op = r.by_op }
      for key, value in pairs(starts[name] or {}) do merged.agents[name][key] = value end
      -- what the phase's kind reports beyond the counts (spec.agent_fields: a disk's file
      -- and dd figures, a socket's peer and bits per second)
      for _, field in ipairs(spec.agent_fields or {}) do
        if merged.agents[name][field] == nil then merged.agents[name][field] = r[field] end
      end
    end
  end
  merged.slow_agents = M.slow_agents(merged.agents)
  merged.by_endpoint = endpoints:result()
  if rates then merged.rate, merged.rate_shares = requested_rate, rates end
  merged.excluded = excluded
  merged.agent_count = merged_count
  if #excluded > 0 then merged.incomplete = true end
  return merged
end

-- Ends the run on the agents and removes the run's objects from the control pool.
function Coordinator:finish(interrupted)
  if self.finished then return end
  self.finished = true
  if interrupted and not self.stopped then
    pcall(M.notify, self.pool, { type = "stop", run = self.run }, M.GO_TIMEOUT)
  end
  -- an agent answers "done" once it has removed what it made (Swift/S3 containers with
  -- their objects): the run is not over before that, so the wait is longer when there are any
  local timeout = self.made_containers and M.DONE_TIMEOUT or M.GO_TIMEOUT
  local ok, replies = pcall(M.notify, self.pool, { type = "done", run = self.run }, timeout)
  if ok and self.made_containers then
    for _, name in ipairs(active_list(self)) do
      if not replies[name] then
        say(string.format("agents: %s did not confirm the end of the run within %d s: the containers it made may "
          .. "still be being removed", name, math.floor(timeout)))
      end
    end
  end
  for _, name in ipairs(self.objects or {}) do pcall(self.pool.remove, self.pool, name) end
end

-- An open-loop rate split over n agents: agent i's share (i = 1..n), so that the shares add
-- up to the rate asked for. A whole rate of at least n ops/s is split into whole shares
-- (the first rate % n agents one op/s more); any other rate into n equal shares. nil stays
-- nil (closed loop).
function M.split_rate(rate, n, i)
  rate = tonumber(rate)
  if not rate or rate <= 0 or n <= 1 then return rate end
  if math.type(rate) == "integer" or (rate == math.floor(rate) and rate < 2 ^ 53) then
    local whole = math.tointeger(rate)
    if whole >= n then return whole // n + (i <= whole % n and 1 or 0) end
  end
  return rate / n
end

return M
