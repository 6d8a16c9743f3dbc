-- Scenarios: cm.scenario{...} checks a scenario's definition (params, pools, hooks, run)
-- where it is written, and scenario:run(context) carries it out: resolves the params
-- (defaults < --params FILE.yaml < -p), answers --help, creates the pools, runs the phases
-- with a header, per-second lines and a summary each, sweeps (setting Ceph config options
-- per point), compares variants, and always ends the same way -- config restored, pools
-- it created deleted, results folder written -- whether the run finished, failed or was
-- interrupted. The object a run function gets as `s` is a Run (below).

local agent_targets = require "cephmark.agent_targets"
local compare = require "cephmark.compare"
local config = require "cephmark.config"
local cpu = require "cephmark.cpu"
local monitor = require "cephmark.monitor"
local json = require "cephmark.json"
local params = require "cephmark.params"
local prometheus = require "cephmark.prometheus"
local repeats = require "cephmark.repeats"
local results = require "cephmark.results"
local state = require "cephmark.state"
local sweep = require "cephmark.sweep"
local sys = require "cephmark.sys"
local space = require "cephmark.space"
local telemetry = require "cephmark.telemetry"

local M = {}

-- Hook names: a scenario's `hooks = { before_phase = fn, ... }`; checked at definition and
-- looked up once, not per phase.
M.hooks = {
  BEFORE_RUN = "before_run",     -- (s, p) after pools exist, before run
  AFTER_RUN = "after_run",       -- (s, p) after run returned, before pools are deleted
  BEFORE_PHASE = "before_phase", -- (s, phase) before each phase starts
  AFTER_PHASE = "after_phase",   -- (s, phase) after each phase, phase.result filled in
  ON_SECOND = "on_second",       -- (s, phase, second) each second of a measured phase
}
local hook_names = {}
for _, name in pairs(M.hooks) do hook_names[name] = true end

-- Phase names with a meaning of their own: the four pool:bench ops, and prepare for setup
-- work a scenario does before measuring (any other name is a custom phase).
M.phases = { PREPARE = "prepare", WRITE = "write", SEQ = "seq", RAND = "rand", CLEANUP = "cleanup" }

-- Options of s:phase that are the scenario's, not pool:bench's.
local phase_own_options = { label = true, variant = true, report = true }

local function builtin_params()
  return {
    keep_pools = params.bool(false, "keep the pools this run created (by default they are deleted at the end)"),
    progress = params.bool(true, "print a line per second during phases"),
  }
end

local function fail_at(site, message)
  sys.fail(params.where(site) .. ": " .. message)
end

local function is_interrupt(err)
  local message, code = sys.error_info(err)
  return code == sys.EXIT_INTERRUPTED and message == "interrupted"
end

local function is_operator_error(err)
  return (select(3, sys.error_info(err)))
end

local function error_message(err)
  return tostring((sys.error_info(err)))
end

local function copy(t)
  local out = {}
  for k, v in pairs(t or {}) do out[k] = v end
  return out
end

local is_list = params.is_list

-- A value as results can hold it: functions, userdata and cycles dropped, lists marked
-- as arrays so that an empty one stays a list (one marked with json.array() already, such
-- as a distributed phase's slow_agents or excluded, is `[]` in results.json when empty).
local ARRAY = getmetatable(json.array())
local function plain(value, seen)
  local t = type(value)
  if t == "string" or t == "number" or t == "boolean" or value == json.null then return value end
  if t ~= "table" then return nil end
  seen = seen or {}
  if seen[value] then return nil end
  seen[value] = true
  local out = {}
  if is_list(value) and (#value > 0 or getmetatable(value) == ARRAY) then
    out = json.array()
    for i, v in ipairs(value) do out[i] = plain(v, seen) end
  else
    for k, v in pairs(value) do
      if type(k) == "string" or math.type(k) == "integer" then out[k] = plain(v, seen) end
    end
  end
  seen[value] = nil
  return out
end

local function now_iso()
  return sys.utc_timestamp("%Y-%m-%dT%H:%M:%SZ")
end

local function say(line)
  io.stdout:write(line, "\n")
  io.stdout:flush()
end

local function warn(line)
  io.stdout:flush()
  io.stderr:write("cephmark: warning: ", line, "\n")
end

-------------------------------------------------------------------------------------------
-- Definition

local Scenario = {}
Scenario.__index = Scenario

-- Scenarios defined in this Lua state, in order; run.lua asks which were neither returned
-- nor run, to tell a script that forgot `return` from a plain script.
local defined = {}

function M.is_scenario(value)
  return getmetatable(value) == Scenario
end

-- The first scenario defined but never run, or nil.
function M.pending()
  for _, scenario in ipairs(defined) do
    if not scenario.started then return scenario end
  end
  return nil
end

local pool_fields = { name = true, label = true, type = true, size = true, min_size = true,
  pg_num = true, k = true, m = true, crush_failure_domain = true, application = true,
  keep = true, reuse = true, ec_overwrites = true }
local pool_field_list = "application, crush_failure_domain, ec_overwrites, k, keep, label, m, min_size, name, pg_num, reuse, size, type"

local function check_pool(label, spec, scenario_name, site)
  local function bad(message) fail_at(site, string.format("pool '%s': %s", label, message)) end
  if type(spec) ~= "table" then
    bad("expected a table {type = \"replicated\", size = 3} or {type = \"erasure\", k = 2, m = 1}, got " ..
      params.show(spec))
  end
  for key in pairs(spec) do
    if not pool_fields[key] then bad(string.format("unknown field '%s' (fields: %s)", tostring(key), pool_field_list)) end
  end
  local kind = spec.type or "replicated"
  if kind ~= "replicated" and kind ~= "erasure" then
    bad(string.format("type must be \"replicated\" or \"erasure\", got %s", params.show(kind)))
  end
  for _, field in ipairs { "size", "min_size", "pg_num", "k", "m" } do
    local value = spec[field]
    if value ~= nil and (math.type(value) ~= "integer" or value < 1) then
      bad(string.format("%s must be a positive integer, got %s", field, params.show(value)))
    end
  end
  if spec.ec_overwrites ~= nil and (kind ~= "erasure" or type(spec.ec_overwrites) ~= "boolean") then
    bad("ec_overwrites is true or false, for erasure-coded pools (allow_ec_overwrites)")
  end
  if kind == "erasure" then
    if spec.k == nil or spec.m == nil then
      local missing = spec.k == nil and (spec.m == nil and "k and m are" or "k is") or "m is"
      bad(string.format("an erasure-coded pool needs k and m; %s missing", missing))
    end
    if spec.k < 2 then bad(string.format("erasure coding needs k >= 2, got %d", spec.k)) end
    if spec.size or spec.min_size then
      bad("size and min_size are for replicated pools; an erasure-coded pool's size is k+m")
    end
  elseif spec.k ~= nil or spec.m ~= nil then
    bad("k and m are for erasure-coded pools (type = \"erasure\")")
  end
  if spec.name ~= nil and (type(spec.name) ~= "string" or spec.name == "") then
    bad("name must be a non-empty string")
  end
  local out = copy(spec)
  out.type = kind
  return { label = label, name = spec.name or string.format("cephmark-%s-%s", scenario_name, label),
    spec = out, keep = spec.keep and true or false, reuse = spec.reuse and true or false }
end

-- pools as a map {label = spec} (run in label order) or a list {{label=, ...}, ...} (run in
-- that order) -> an ordered list of checked pools.
local function check_pools(pools, scenario_name, site)
  if pools == nil then return {} end
  if type(pools) ~= "table" then
    fail_at(site, "pools must be a table {label = {type=, ...}} or a function(p) returning one, got " ..
      params.show(pools))
  end
  local list = {}
  if is_list(pools) and #pools > 0 then
    for i, spec in ipairs(pools) do
      local label = type(spec) == "table" and (spec.label or spec.name)
      if type(label) ~= "string" then
        fail_at(site, string.format("pool %d: a pool in a list needs a label (or a name)", i))
      end
      list[#list + 1] = check_pool(label, spec, scenario_name, site)
    end
  else
    local labels = {}
    for label in pairs(pools) do
      if type(label) ~= "string" then
        fail_at(site, "pool labels must be strings, got " .. params.show(label))
      end
      labels[#labels + 1] = label
    end
    table.sort(labels)
    for _, label in ipairs(labels) do list[#list + 1] = check_pool(label, pools[label], scenario_name, site) end
  end
  local names = {}
  for _, pool in ipairs(list) do
    if names[pool.name] then
      fail_at(site, string.format("pools '%s' and '%s' are both named '%s'", names[pool.name], pool.label, pool.name))
    end
    names[pool.name] = pool.label
  end
  return list
end

local scenario_fields = { name = true, description = true, params = true, pools = true, run = true,
  hooks = true, repeats = true, order = true, telemetry = true, prometheus = true, wait_clean = true,
  quiesce = true }

-- Where a scenario is defined when cm.scenario was tail-called (`return cm.scenario {`):
-- the file of its run function or params (else the script being run), and the line
-- that opens the cm.scenario call, found by looking up from the first line known to be
-- inside the definition.
local function definition_site(spec)
  local file, first
  local function consider(source, line)
    if not source or source:sub(1, 1) ~= "@" then return end
    if not file then file = source:sub(2) end
    if source:sub(2) == file and line and line > 0 and (not first or line < first) then first = line end
  end
  if type(spec) == "table" then
    for _, key in ipairs { "run", "pools" } do
      if type(spec[key]) == "function" then
        local info = debug.getinfo(spec[key], "S")
        consider(info.source, info.linedefined)
      end
    end
    for _, value in pairs(type(spec.params) == "table" and spec.params or {}) do
      if params.is_param(value) and value.site then consider("@" .. value.site.file, value.site.line) end
    end
    for _, fn in pairs(type(spec.hooks) == "table" and spec.hooks or {}) do
      if type(fn) == "function" then
        local info = debug.getinfo(fn, "S")
        consider(info.source, info.linedefined)
      end
    end
  end
  if not file then
    local context = package.loaded["cephmark.context"]
    file = context and context.script or "?"
  end
  local text = sys.read_file(file)
  if text then
    local lines = {}
    for line in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
    for n = math.min(first or #lines, #lines), 1, -1 do
      if lines[n]:find("scenario%s*[{(]") then return { file = file, line = n } end
    end
  end
  return { file = file, line = first or 0 }
end

-- wait_clean as a scenario or `run --wait-clean` gives it: a duration ("60s", "2m") or a
-- number of seconds, more than 0 -> seconds; fail(message) otherwise.
function M.check_wait_clean(value, fail)
  local seconds
  if type(value) == "number" or type(value) == "string" then seconds = sys.parse_duration(value) end
  if type(seconds) ~= "number" or not (seconds > 0) or seconds == math.huge then
    fail("wait_clean must be a duration such as \"60s\" or \"2m\" (or a number of seconds), more than 0, got " ..
      params.show(value))
  end
  return seconds
end

-- define(spec, site) -> scenario; everything that can be checked before running is
-- checked here, with the scenario file and line in the message. site is nil when the
-- caller's line is unknown (a tail call).
function M.define(spec, site)
  site = site or definition_site(spec)
  if type(spec) ~= "table" then
    fail_at(site, "cm.scenario expects a table {name = ..., params = ..., pools = ..., run = function(s, p) ... end}, got " ..
      params.show(spec))
  end
  for key in pairs(spec) do
    if not scenario_fields[key] then
      fail_at(site, string.format("cm.scenario: unknown field '%s' (fields: description, hooks, name, order, params, pools, prometheus, quiesce, repeats, run, telemetry, wait_clean)",
        tostring(key)))
    end
  end
  if spec.repeats ~= nil and (math.type(spec.repeats) ~= "integer" or spec.repeats < 1) then
    fail_at(site, "cm.scenario: repeats must be an integer >= 1 (how many times run runs), got " ..
      params.show(spec.repeats))
  end
  if spec.order ~= nil and spec.order ~= repeats.INTERLEAVED and spec.order ~= repeats.FIXED then
    fail_at(site, "cm.scenario: order must be \"interleaved\" or \"fixed\", got " .. params.show(spec.order))
  end
  if spec.telemetry ~= nil and type(spec.telemetry) ~= "boolean" then
    fail_at(site, "cm.scenario: telemetry must be true or false (the cluster's side of each phase), got " ..
      params.show(spec.telemetry))
  end
  if spec.prometheus ~= nil and spec.prometheus ~= false and not prometheus.check_url(spec.prometheus) then
    fail_at(site, prometheus.url_refusal("cm.scenario: prometheus", spec.prometheus) .. " (or false: no Prometheus)")
  end
  local wait_clean = spec.wait_clean ~= nil and M.check_wait_clean(spec.wait_clean, function(message)
    fail_at(site, "cm.scenario: " .. message)
  end) or nil
  if spec.quiesce ~= nil and type(spec.quiesce) ~= "boolean" then
    fail_at(site, "cm.scenario: quiesce must be true or false (noscrub and nodeep-scrub set for the run), got " ..
      params.show(spec.quiesce))
  end
  if type(spec.name) ~= "string" or not spec.name:match("^[%w][%w._-]*$") then
    fail_at(site, "cm.scenario: name must be a word of letters, digits, '.', '_' or '-' (it names pools and the results folder), got " ..
      params.show(spec.name))
  end
  if spec.description ~= nil and type(spec.description) ~= "string" then
    fail_at(site, "cm.scenario: description must be a string")
  end
  if type(spec.run) ~= "function" then
    fail_at(site, string.format("scenario '%s' needs run = function(s, p) ... end, got %s", spec.name,
      params.show(spec.run)))
  end
  local hooks = {}
  if spec.hooks ~= nil then
    if type(spec.hooks) ~= "table" then fail_at(site, "hooks must be a table {before_phase = function ... end}") end
    local valid = {}
    for name in pairs(hook_names) do valid[#valid + 1] = name end
    table.sort(valid)
    for name, fn in pairs(spec.hooks) do
      if not hook_names[name] then
        fail_at(site, string.format("unknown hook '%s' (hooks: %s)", tostring(name), table.concat(valid, ", ")))
      end
      if type(fn) ~= "function" then
        fail_at(site, string.format("hook '%s' must be a function, got %s", name, params.show(fn)))
      end
      hooks[name] = fn
    end
  end
  local self = setmetatable({
    name = spec.name,
    description = spec.description,
    site = site,
    params = params.declare(spec.params, site, builtin_params()),
    body = spec.run,
    hooks = hooks,
    repeats = spec.repeats or 1,
    order = spec.order or repeats.INTERLEAVED,
    telemetry = spec.telemetry ~= false,
    prometheus = spec.prometheus,
    wait_clean = wait_clean,
    quiesce = spec.quiesce == true,
  }, Scenario)
  if type(spec.pools) == "function" then
    self.pools_function = spec.pools
    local info = debug.getinfo(spec.pools, "S")
    self.pools_site = { file = site.file, line = info.linedefined }
  else
    self.pools = check_pools(spec.pools, spec.name, site)
  end
  defined[#defined + 1] = self
  return self
end

-- The pools for these param values (a pools function is called here, and checked).
function Scenario:resolve_pools(values)
  if not self.pools_function then return self.pools end
  local p = params.guard(copy(values), self.params)
  local ok, pools = pcall(self.pools_function, p)
  if not ok then
    if is_operator_error(pools) then error(pools, 0) end
    fail_at(self.pools_site, "pools: " .. error_message(pools))
  end
  return check_pools(pools, self.name, self.pools_site)
end

local function describe_pool_spec(spec)
  if spec.type == "erasure" then return string.format("erasure k=%d m=%d", spec.k, spec.m) end
  return string.format("replicated size=%d", spec.size or 3)
end

function Scenario:print_help(context)
  local lines = {}
  local script = context.script or self.site.file
  lines[#lines + 1] = self.name .. (self.description and (": " .. self.description) or "")
  lines[#lines + 1] = ""
  lines[#lines + 1] = string.format("usage: cephmark run %s [-p NAME=VALUE]... [--params FILE.yaml] [--repeats N] [-o DIR]", script)
  local own, builtin = self.params:help_lines()
  if #own > 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "params:"
    for _, line in ipairs(own) do lines[#lines + 1] = line end
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "params of every scenario:"
  for _, line in ipairs(builtin) do lines[#lines + 1] = line end
  local defaults = {}
  for _, name in ipairs(self.params.names) do defaults[name] = self.params:get(name).default end
  local ok, pools = pcall(self.resolve_pools, self, defaults)
  if ok and #pools > 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = self.pools_function and "pools (with the default params):" or "pools:"
    local width, spec_width = 0, 0
    for _, pool in ipairs(pools) do
      width = math.max(width, #pool.label)
      spec_width = math.max(spec_width, #describe_pool_spec(pool.spec))
    end
    for _, pool in ipairs(pools) do
      lines[#lines + 1] = string.format("  %-" .. width .. "s  %-" .. spec_width .. "s  (%s%s)", pool.label,
        describe_pool_spec(pool.spec), pool.name, pool.reuse and ", reused if it exists" or "")
    end
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = string.format("repetitions: %d, order %s (--repeats N runs the scenario N times over the same",
    self.repeats, self.order)
  lines[#lines + 1] = "pools, with its pools and sweep points in another order each time; --order fixed keeps it)"
  lines[#lines + 1] = ""
  lines[#lines + 1] = "Sizes take K, M, G, T or P (powers of 1024); durations s, ms, m or h; lists are"
  lines[#lines + 1] = "comma-separated (-p threads=1,4,16). A --params file is a YAML mapping (threads: 16)."
  for _, line in ipairs(lines) do say(line) end
end

-------------------------------------------------------------------------------------------
-- Running: the Run object is `s` in run = function(s, p)

local Run = {}
Run.__index = Run

-- The run whose run function is executing, so that cm.sweep called in it checks its option
-- names at once (M.checked_sweep); nil outside a run.
local active_run

local function new_run(scenario, context, values, origins, pools)
  local self = setmetatable({
    scenario = scenario,
    context = context,
    values = values,
    origins = origins,
    pools = pools,
    pool_handles = {},
    pool_labels = setmetatable({}, { __mode = "k" }),
    records = {},
    comparisons = {},
    sweeps = {},
    point_stack = {},
    variant_stack = {},
    written = {},
    puts = {},
    warnings = {},
    progress = values.progress,
    status = "running",
    -- repetitions: how many, the order mode and its seed, what ran in which order
    repeats = context.repeats or scenario.repeats,
    order = context.order or scenario.order,
    seed = context.order_seed or repeats.new_seed(),
    repetitions_completed = 0,
    orders = {},
    ordered = {},
    confirmed = {},
    interim_comparisons = {},
  }, Run)
  self.p = params.guard(values, scenario.params)
  self.config = config.session(function() return self:cluster() end, function(line) say("  " .. line) end)
  return self
end

function Scenario:run(context)
  self.started = true
  context = context or {}
  if context.help then
    self:print_help(context)
    return { failed_ops = 0, help = true }
  end
  if context.repeats ~= nil and (math.type(context.repeats) ~= "integer" or context.repeats < 1) then
    sys.fail("repeats must be an integer >= 1, got " .. params.show(context.repeats))
  end
  if context.order ~= nil and context.order ~= repeats.INTERLEAVED and context.order ~= repeats.FIXED then
    sys.fail("order must be \"interleaved\" or \"fixed\", got " .. params.show(context.order))
  end
  if context.prometheus ~= nil and not prometheus.check_url(context.prometheus) then
    sys.fail(prometheus.url_refusal("prometheus", context.prometheus))
  end
  local values, origins = self.params:resolve { file = context.params_file, cli = context.params }
  local pools = self:resolve_pools(values)
  return new_run(self, context, values, origins, pools):execute()
end

function Run:warn(message)
  self.warnings[#self.warnings + 1] = message
  warn(message)
end

-- The cluster, connected on first use: scenarios without pools or config options (tests on
-- the null target) never connect. context.cluster lets a caller supply its own.
function Run:cluster()
  if self.cluster_handle then return self.cluster_handle end
  local cluster = self.context.cluster
  if cluster then
    self.cluster_borrowed = true
  else
    cluster = require("cephmark.connection").connect()
  end
  self.cluster_handle = cluster
  self:collect_facts()
  return cluster
end

-- Facts about the cluster for results; each is optional, a failure leaves it out.
function Run:collect_facts()
  local cluster = self.cluster_handle
  local facts = {}
  local function try(fn) local ok, value = pcall(fn); return ok and value or nil end
  facts.fsid = try(function() return cluster:fsid() end)
  local version = try(function() return cluster:mon_command { prefix = "version" } end)
  facts.version = type(version) == "table" and version.version or nil
  local versions = try(function() return cluster:mon_command { prefix = "versions" } end)
  facts.versions = type(versions) == "table" and versions or nil
  local up, osds_in = nil, nil
  pcall(function() up, osds_in = cluster:osd_count() end)
  facts.osds_up, facts.osds_in = up, osds_in
  self.facts = facts
  local release = facts.version and facts.version:match("ceph version (%S+)")
  local name = facts.version and facts.version:match("%) (%a+)")
  say(string.format("cluster %s: ceph %s%s, %s OSDs up", facts.fsid or "?", release or "?",
    name and (" " .. name) or "", tostring(up or "?")))
end

-- params line: every param of the scenario, the ones given on the command line or in a
-- file marked, so a pasted log says how the run was configured.
function Run:print_header()
  local scenario = self.scenario
  say(string.format("scenario %s%s", scenario.name,
    scenario.description and (": " .. scenario.description) or ""))
  local parts = {}
  for _, name in ipairs(scenario.params.names) do
    local param = scenario.params:get(name)
    if not param.builtin or self.origins[name] ~= "default" then
      local text = param:format(self.values[name])
      parts[#parts + 1] = name .. "=" .. text .. (self.origins[name] ~= "default" and "*" or "")
    end
  end
  if #parts > 0 then
    say("params: " .. table.concat(parts, " ") .. (self:any_override() and "  (* set by -p or --params)" or ""))
  end
end

function Run:any_override()
  for _, origin in pairs(self.origins) do
    if origin ~= "default" then return true end
  end
  return false
end

function Run:open_results_dir()
  local dir = self.context.output or results.default_dir(self.scenario.name)
  if self.context.output then results.check_dir(dir, "-o") end
  local existed = sys.stat(dir) ~= nil
  local ok, err = sys.mkdir(dir)
  if not ok then sys.fail(string.format("cannot create the results folder %s: %s", dir, tostring(err))) end
  self.results_dir = dir
  self.results_dir_created = not existed
end

-- This run as the owner of what it creates (one run id for its pools and runs).
function Run:owner()
  if not self.owner_record then self.owner_record = require("cephmark.rados").owner() end
  return self.owner_record
end

-- A pool found under a scenario pool's name that another cephmark run created: refused,
-- naming that run, and how to remove it when its process is gone.
function Run:refuse_owned_pool(pool, record, cluster)
  local owner = require "cephmark.rados.owner"
  local handle = cluster:pool(pool.name)
  local state = owner.state(record, handle, owner.POOL_OBJECT, owner.NAMESPACE)
  if handle then handle:close() end
  if state ~= "alive" and record.keep == "1" then return end
  if state == "alive" then
    fail_at(self.scenario.site, string.format(
      "pool '%s' (%s) is in use by another cephmark run (%s); wait for it to end, or give the pool another name",
      pool.name, pool.label, owner.describe(record)))
  end
  fail_at(self.scenario.site, string.format(
    "pool '%s' (%s) was left by a cephmark run that is gone (%s): `cephmark cleanup --leftovers` lists what it left, `cephmark cleanup --leftovers --yes` removes it; or give the pool another name",
    pool.name, pool.label, owner.describe(record)))
end

function Run:create_pools()
  if #self.pools == 0 then return end
  local cluster = self:cluster()
  for _, pool in ipairs(self.pools) do
    if cluster:pool_exists(pool.name) then
      -- another cephmark run's pool is never run in: it deletes the pool when it ends
      local record = cluster:pool_owner(pool.name)
      if record then self:refuse_owned_pool(pool, record, cluster) end
      -- (a pool kept by a run that ended is an existing pool like any other)
      if not pool.reuse then
        fail_at(self.scenario.site, string.format(
          "pool '%s' (%s) already exists and this run did not create it; set reuse = true in its pool spec to run in it (it is then never deleted), or give the pool another name",
          pool.name, pool.label))
      end
      pool.created = false
      say(string.format("pool %s: using the existing pool %s", pool.label, pool.name))
    else
      local spec = copy(pool.spec)
      spec.name, spec.label, spec.keep, spec.reuse = pool.name, nil, nil, nil
      spec.owner = copy(self:owner())
      spec.owner.keep = (pool.keep or self.values.keep_pools) and 1 or 0
      -- marked before the call: an interrupt right after the pool appears still deletes it
      -- (if its owner record says it is this run's)
      pool.creating = true
      local created, err, code, holder = cluster:pool_create(spec)
      if not created then
        pool.creating = nil
        if holder then
          fail_at(self.scenario.site, string.format(
            "pool '%s' (%s) is being created by another cephmark run (%s); nothing was created or deleted: wait for it to end, or give the pool another name",
            pool.name, pool.label, require("cephmark.rados.owner").describe(holder)))
        end
        sys.fail("cannot create " .. tostring(err))
      end
      pool.created = true
      pool.profile = created.profile_created and created.profile or nil
      say(string.format("pool %s: created %s (%s, pg_num %d)", pool.label, pool.name,
        describe_pool_spec(pool.spec), pool.spec.pg_num or 8))
    end
    pool.info = cluster:pool_info(pool.name)
    self:note_autoscale(pool)
    if pool.info and pool.info.erasure_code_profile and pool.info.erasure_code_profile ~= "" then
      local profile = cluster:mon_command { prefix = "osd erasure-code-profile get",
        name = pool.info.erasure_code_profile }
      if type(profile) == "table" then pool.erasure_code_profile = profile end
    end
  end
end

-- The pool's PG autoscaler mode for results: off for the pools this run created
-- (pool_create); a pool it did not create keeps its own, with a warning when it is on.
function Run:note_autoscale(pool)
  pool.pg_autoscale_mode = type(pool.info) == "table" and pool.info.pg_autoscale_mode or nil
  if pool.created == false and pool.pg_autoscale_mode == "on" then
    self:warn(string.format("pool %s: the PG autoscaler is on for %s (a pool this run did not create, left as " ..
      "it is): pg_num may change during the run, and a comparison across such a change means little",
      pool.label, pool.name))
  end
end

-- The run and its end: whatever ends the run function (return, error, a stop signal,
-- os.exit), Run:finish runs after it with stop signals held (sys.with_cleanup), so it is not
-- cut short by the interrupt it handles.
function Run:execute()
  self.context.in_scenario = true
  self.started_at = now_iso()
  self.started_clock = sys.monotonic()
  local outer_run = active_run
  return sys.with_cleanup(function()
    active_run = self
    -- so many repetitions are asked about (or refused) before anything exists
    sweep.confirm_repeats(self.repeats, self.context.yes, self.context.repeats == nil and self.scenario.site or nil)
    self:open_results_dir()
    self:print_header()
    -- with --agents, the agents are chosen and given the scenario before anything is created
    if self.context.agents then self:start_agents() end
    if self.context.monitors then
      self.monitors = monitor.session(self:cluster(), { spec = self.context.monitors.spec,
        control_pool = self.context.monitors.control_pool })
    end
    self:create_pools()
    if self.context.quiesce or self.scenario.quiesce then self:quiesce_cluster() end
    self.reached_run = true
    -- a run killed before its first phase ends still leaves a folder that says what it was
    self:save(false)
    -- the pools are created once and the run hooks run once; the run function once per
    -- repetition
    local before = self.scenario.hooks.before_run
    if before then before(self, self.p) end
    for repetition = 1, self.repeats do
      self:start_repetition(repetition)
      self.scenario.body(self, self.p)
      self:end_repetition(repetition)
    end
    -- what after_run does belongs to no repetition
    self.current_repetition = nil
    local after = self.scenario.hooks.after_run
    if after then after(self, self.p) end
    for _, line in ipairs(space.at_end(self)) do say(line) end
  end, function(e)
    if is_operator_error(e) then return e end
    return debug.traceback(error_message(e), 2)
  end, function(ok, err)
    active_run = outer_run
    return self:finish(ok, err)
  end)
end

-------------------------------------------------------------------------------------------
-- Repetitions

-- The order of an iteration's variants in the current repetition (a list of their declared
-- positions), recorded the first time the repetition asks for it. key names the iteration
-- (with its variants, so that one site iterating other variants is another iteration), at
-- where it is in the script. One repetition runs in the declared order.
function Run:iteration_order(kind, key, at, labels)
  local repetition = self.current_repetition or 1
  local positions = repeats.order(self.seed, key, #labels, repetition,
    self.repeats > 1 and self.order or repeats.FIXED)
  local seen = repetition .. "\0" .. key
  if not self.ordered[seen] then
    self.ordered[seen] = true
    local names = json.array()
    for i, position in ipairs(positions) do names[i] = labels[position] end
    self.orders[#self.orders + 1] = { repetition = repetition, iteration = kind, at = at, order = names }
  end
  return positions
end

-- The pools in the current repetition's order: the order s:each_pool gives.
function Run:pools_in_order()
  local labels = {}
  for i, pool in ipairs(self.pools) do labels[i] = pool.label end
  local positions = self:iteration_order("pools", "pools\0" .. table.concat(labels, "\0"), nil, labels)
  local ordered = {}
  for i, position in ipairs(positions) do ordered[i] = self.pools[position] end
  return ordered
end

function Run:start_repetition(repetition)
  self.current_repetition = repetition
  self.interim_comparisons = {}
  if self.repeats == 1 then return end
  local order = ""
  if #self.pools > 1 then
    local labels = {}
    for i, pool in ipairs(self:pools_in_order()) do labels[i] = pool.label end
    order = " (order: " .. table.concat(labels, ", ") .. ")"
  end
  say(string.format("-- repetition %d/%d%s", repetition, self.repeats, order))
end

-- A repetition's run function returned: its phases are a complete repetition, and the
-- comparisons it built (over every repetition so far) are the ones an interrupted run keeps.
function Run:end_repetition(repetition)
  self.repetitions_completed = repetition
  self.complete_comparisons = self.interim_comparisons
  self.interim_comparisons = {}
end

-- s:repetition() -> the current repetition (1 .. N, nil in the run hooks) and N.
function Run:repetition()
  return self.current_repetition, self.repeats
end

-------------------------------------------------------------------------------------------
-- Phases

function Run:pool(label)
  local handle = self.pool_handles[label]
  if handle then return handle end
  local pool
  for _, candidate in ipairs(self.pools) do
    if candidate.label == label then pool = candidate end
  end
  if not pool then
    local labels = {}
    for _, candidate in ipairs(self.pools) do labels[#labels + 1] = candidate.label end
    error(string.format("s:pool: no pool '%s' in this scenario (pools: %s)", tostring(label),
      #labels > 0 and table.concat(labels, ", ") or "none"), 2)
  end
  local err
  handle, err = self:cluster():pool(pool.name)
  if not handle then sys.fail(err) end
  self.pool_handles[label] = handle
  self.pool_labels[handle] = label
  return handle
end

-- for label, pool in s:each_pool() do ... end, in the scenario's pool order, or with
-- repetitions in the repetition's order
function Run:each_pool()
  local pools = self:pools_in_order()
  local i = 0
  return function()
    i = i + 1
    local pool = pools[i]
    if pool then return pool.label, self:pool(pool.label) end
  end
end

function Run:pool_name(label)
  for _, pool in ipairs(self.pools) do
    if pool.label == label then return pool.name end
  end
  return nil
end

-- The variant a phase runs in: its pool, the sweep points it is inside, and any
-- s:variant scopes; as an ordered list of (dimension, label) and one label for humans.
function Run:current_variant(pool_label, extra)
  local dimensions, variant, label_parts, point_parts = {}, {}, {}, {}
  local function add(dimension, value)
    if variant[dimension] == nil then dimensions[#dimensions + 1] = dimension end
    variant[dimension] = tostring(value)
  end
  if pool_label then
    add("pool", pool_label)
    label_parts[#label_parts + 1] = pool_label
  end
  for _, entry in ipairs(self.point_stack) do
    for _, dimension in ipairs(entry.point.order) do add(dimension, entry.point.labels[dimension]) end
    point_parts[#point_parts + 1] = entry.point.label
  end
  if #point_parts > 0 then label_parts[#label_parts + 1] = table.concat(point_parts, " ") end
  local scopes = {}
  for _, scope in ipairs(self.variant_stack) do scopes[#scopes + 1] = scope end
  if extra then scopes[#scopes + 1] = extra end
  for _, scope in ipairs(scopes) do
    for _, dimension in ipairs(scope.order) do add(dimension, scope.values[dimension]) end
    label_parts[#label_parts + 1] = scope.label
  end
  local label = #label_parts > 0 and table.concat(label_parts, " ") or "run"
  return variant, dimensions, label, #point_parts > 0 and table.concat(point_parts, " ") or nil
end

-- A variant scope from a label ("quiet") or dimensions ({osd_debug = "0/0"}).
local function variant_scope(value, site)
  if type(value) == "string" then
    return { order = { "variant" }, values = { variant = value }, label = value }
  end
  if type(value) ~= "table" then
    fail_at(site, "a variant is a label or a table of dimension = value, got " .. params.show(value))
  end
  local order, parts = {}, {}
  for dimension in pairs(value) do order[#order + 1] = tostring(dimension) end
  table.sort(order)
  local values = {}
  for _, dimension in ipairs(order) do
    values[dimension] = tostring(value[dimension])
    parts[#parts + 1] = dimension .. "=" .. values[dimension]
  end
  return { order = order, values = values, label = table.concat(parts, " ") }
end

local function format_latency(seconds)
  if type(seconds) ~= "number" then return "-" end
  if seconds >= 1 then return string.format("%.3g s", seconds) end
  return string.format("%.3g ms", seconds * 1000)
end

local option_order = { "op", "seconds", "ops", "bytes", "threads", "n", "block_size", "object_size",
  "rate", "warmup", "run_name", "verify" }
local size_options = { bytes = true, block_size = true, object_size = true }
local duration_options = { seconds = true, warmup = true }

local function describe_options(options)
  local parts, shown = {}, {}
  local function show_option(key, value)
    if type(value) == "function" or type(value) == "userdata" or type(value) == "table" then return end
    if size_options[key] and math.type(value) == "integer" then value = params.format_size(value) end
    if duration_options[key] and type(value) == "number" then value = params.format_duration(value) end
    parts[#parts + 1] = key .. "=" .. tostring(value)
  end
  for _, key in ipairs(option_order) do
    if options[key] ~= nil then shown[key] = true; show_option(key, options[key]) end
  end
  local rest = {}
  for key in pairs(options) do
    if not shown[key] and not phase_own_options[key] and key ~= "coordinator" and type(key) == "string" then
      rest[#rest + 1] = key
    end
  end
  table.sort(rest)
  for _, key in ipairs(rest) do show_option(key, options[key]) end
  return table.concat(parts, " ")
end

local function is_bench_result(value)
  return type(value) == "table" and type(value.lat) == "table" and type(value.ops) == "number"
end

-- Printers: how a phase reports itself. "compact" is cephmark's own (a line per second, a
-- summary line); "rados-bench" prints rados bench's layout; "none" only the summary line.
local printers = {}

printers.compact = function(run, record)
  return {
    second = function(second)
      if second.partial or second.warmup or not run.progress then return end
      say(string.format("  %4ds %9.1f MiB/s %8d IOPS  p99 %-9s avg %s", second.sec, second.cur_mib or 0,
        math.floor((second.iops or 0) + 0.5), format_latency(second.p99), format_latency(second.avg_lat)))
    end,
    summary = function(result)
      say(run:summary_line(record, result))
    end,
  }
end

printers.none = function(run, record)
  return { second = function() end, summary = function(result) say(run:summary_line(record, result)) end }
end

printers["rados-bench"] = function(run, record, options)
  local report = require "cephmark.report.rados_bench"
  local op = record.op
  if op == "cleanup" then
    return {
      start = function() say("Cleaning up (deleting benchmark objects)") end,
      second = function() end,
      summary = function(result)
        say(string.format("Removed %d objects", result.ops))
        say(string.format("Clean up completed and total clean up time :%g", result.elapsed))
      end,
    }
  end
  local printer = report.new { mode = op }
  if op == "write" then
    local block = sys.parse_size(options.block_size or "4M")
    local seconds = options.seconds and sys.parse_duration(options.seconds) or 10
    printer:preamble { threads = options.threads or 16, block_size = block,
      -- a size distribution (a table) has no one object size: the largest is its block
      object_size = type(options.object_size) == "table" and block
        or options.object_size and sys.parse_size(options.object_size) or block,
      seconds = math.ceil(seconds), max_objects = options.ops or 0, prefix = options.prefix }
  end
  printer:start()
  return {
    second = function(second) printer:second(second) end,
    summary = function(result) printer:summary(result) end,
  }
end

-- A phase as its output lines name it: "write replica", or "write" for a run without pools.
local function phase_title(record)
  return record.name .. (record.label ~= "run" and (" " .. record.label) or "")
end

function Run:summary_line(record, result)
  local what = phase_title(record)
  if not is_bench_result(result) then
    return string.format("  = %s: done in %.2f s", what, record.elapsed or 0)
  end
  if record.op == "cleanup" then
    return string.format("  = %s: removed %d objects in %.2f s%s", what, result.ops, result.elapsed,
      result.errors > 0 and string.format(", %d errors", result.errors) or "")
  end
  local lat = result.lat or {}
  local extra = ""
  if (result.verify_failures or 0) > 0 then extra = extra .. string.format(", %d verify failures", result.verify_failures) end
  if result.interrupted then extra = extra .. " (interrupted)" end
  if result.warning then extra = extra .. " (" .. result.warning .. ")" end
  return string.format("  = %s: %d ops in %.2f s, %.1f MiB/s, %.0f IOPS, lat avg %s p50 %s p99 %s max %s, %d errors%s",
    what, result.ops, result.elapsed, result.bandwidth_mib, result.iops, format_latency(lat.avg),
    format_latency(lat.p50), format_latency(lat.p99), format_latency(lat.max), result.errors or 0, extra)
end

-- The phase's steady-state window in one line under its summary (docs/steady-state.md), e.g.
-- `    steady s2-s9: 15872 IOPS, 62.0 MiB/s, p50 1 ms p99 1.07 ms, in flight 15.9 of 16`;
-- nil for a cleanup, a phase that is not a bench's, or one without such a window.
local function steady_line(record, result)
  if record.op == "cleanup" or not is_bench_result(result) then return nil end
  local steady = result.steady
  if type(steady) ~= "table" or (steady.seconds or 0) == 0 then return nil end
  local lat = steady.lat or {}
  return string.format("    steady s%d-s%d: %.0f IOPS, %.1f MiB/s, p50 %s p99 %s, in flight %.1f of %d",
    steady.first_second, steady.last_second, steady.iops, steady.bandwidth_mib, format_latency(lat.p50),
    format_latency(lat.p99), steady.in_flight_mean or 0, result.threads or 0)
end

-- A phase that mixed kinds of op: a small table of them under its summary, one line per
-- kind (result.by_op), e.g. `    read      602 ops   120.4 IOPS    0.47 MiB/s  p50 1.2 ms
-- p99 4.1 ms`. An empty list for a phase of one kind.
local function by_op_lines(result)
  local lines = {}
  if not is_bench_result(result) then return lines end
  for _, name in ipairs(results.by_op_names(result)) do
    local op = result.by_op[name]
    local lat = op.latency or {}
    local errors = (op.errors or 0) > 0 and string.format(", %d errors", op.errors) or ""
    lines[#lines + 1] = string.format("    %-8s %8d ops %10.1f IOPS %9.2f MiB/s  p50 %s p99 %s%s", name,
      op.ops or 0, op.iops or 0, op.bandwidth_mib_s or 0, format_latency(lat.p50), format_latency(lat.p99), errors)
  end
  return lines
end

-- The phase's cluster side in one line under its summary: the OSDs' latencies, CPU per op
-- and the cluster's state, each part for what was read, e.g.
-- `    osd: op_w 5.48 ms (process 4.91 ms, subop_w 0.86 ms) over 404 ops on 3 OSDs · cpu/op:
-- client 114 µs, osds 1.22 ms (3 ceph-osd), mon 25.0 µs · state: quiet`. nil when nothing was.
local function cluster_line(record, cpu_figures, cluster_state)
  local parts = {}
  local cluster = record.cluster or {}
  if cluster.osd then parts[#parts + 1] = telemetry.summary_text(cluster.osd) end
  if cpu_figures then parts[#parts + 1] = cpu.summary_text(cpu_figures) end
  if cluster_state then parts[#parts + 1] = state.summary_text(cluster_state) end
  if #parts == 0 then return nil end
  return "    " .. table.concat(parts, " · ")
end

-- The one path every phase takes: header, hooks, the runner (which gets the per-second
-- callback), the record, the summary, the results written so far. `target` describes a
-- target that is not a pool (an rbd image) for the header and the results.
function Run:run_phase(name, op, pool_label, options, runner, site, target)
  local scope = options.variant ~= nil and variant_scope(options.variant, site) or nil
  if options.label ~= nil then
    scope = { order = {}, values = {}, label = tostring(options.label) }
  end
  local variant, dimensions, label, point = self:current_variant(pool_label, scope)
  local record = {
    index = #self.records + 1, name = name, op = op, label = label, point = point,
    pool = pool_label and self:pool_name(pool_label) or nil, variant = variant,
    dimensions = dimensions, options = plain(options), started_at = now_iso(), status = "running",
    target = target, repetition = self.current_repetition,
  }
  local report = options.report or "compact"
  local make_printer = printers[report]
  if not make_printer then
    fail_at(site, string.format("s:phase: report must be \"compact\", \"rados-bench\" or \"none\", got %s",
      params.show(report)))
  end
  local description = describe_options(options)
  local repetition = self.repeats > 1 and record.repetition and
    string.format(" (repetition %d/%d)", record.repetition, self.repeats) or ""
  say(string.format("[%d] %s%s%s%s%s", record.index, name, label ~= "run" and (" " .. label) or "", repetition,
    record.pool and ("  pool " .. record.pool) or (target and ("  " .. target) or ""), description ~= "" and ("  " .. description) or ""))
  local printer = make_printer(self, record, options)
  local hooks = self.scenario.hooks
  if hooks.before_phase then hooks.before_phase(self, record) end
  if printer.start then printer.start() end
  local user_on_second, on_second_hook = options.on_second, hooks.on_second
  local function on_second(second)
    printer.second(second)
    if on_second_hook then on_second_hook(self, record, second) end
    if user_on_second then return user_on_second(second) end
  end
  -- the OSDs' counters are read, and the daemons scanned (only for a target on a cluster),
  -- outside the phase's own time
  local telemetry_on = self.scenario.telemetry and self.context.telemetry ~= false
  local on_cluster = self.next_on_cluster
  self.next_on_cluster = nil
  local side = telemetry_on and self:side_mark() or nil
  local cluster_state = self:state_before(record, pool_label, on_cluster, telemetry_on)
  local space_state = telemetry_on and space.before_phase(self, op, pool_label) or nil
  local counters_before = pool_label and self:telemetry_before() or nil
  -- with --monitors, each OSD host's readings (monitor.lua), around this host's own
  local hosts_before = on_cluster and self.monitors and self.monitors:phase_start(record.index) or nil
  local daemons_before = telemetry_on and on_cluster and cpu.snapshot() or nil
  self.current_record = record
  local phase_mark = side and self:side_mark()
  local started = sys.monotonic()
  local wall_start = sys.realtime()
  local result = runner(on_second, record)
  local phase_end_mark = side and self:side_mark()
  prometheus.note_phase(self, record, wall_start, on_cluster)
  record.elapsed = sys.monotonic() - started
  local daemons_after = daemons_before and cpu.snapshot() or nil
  local hosts = hosts_before and not sys.interrupted() and
    self.monitors:phase_end(hosts_before, is_bench_result(result) and result or nil) or nil
  self.current_record = nil
  if cluster_state and not sys.interrupted() then self.state_watcher:after(cluster_state) end
  if counters_before and not sys.interrupted() then
    local osd = self.telemetry:guarded(self.telemetry.after, counters_before)
    if osd then
      record.cluster = record.cluster or {}
      record.cluster.osd = osd
    end
  end
  if is_bench_result(result) then
    local summary = {}
    for k, v in pairs(result) do
      if k ~= "series" and k ~= "client_cpu" then summary[k] = v end
    end
    record.result = plain(summary)
    compare.keep_histogram(record.result, result)
    record.series = plain(result.series or {})
    if #record.series == 0 then record.series = json.array() end
    record.elapsed = result.elapsed or record.elapsed
    if result.interrupted then
      record.status = "interrupted"
    elseif (result.errors or 0) > 0 or (result.verify_failures or 0) > 0 then
      record.status = "failed"
    else
      record.status = "ok"
    end
  else
    record.status = sys.interrupted() and "interrupted" or "ok"
    if result ~= nil then
      local encodable = pcall(json.encode, result)
      record.value = encodable and result or plain(result)
    end
  end
  local cpu_figures = telemetry_on and cpu.phase(daemons_before, daemons_after,
    is_bench_result(result) and result.client_cpu or nil)
  if cpu_figures then
    record.cluster = record.cluster or {}
    record.cluster.cpu = cpu_figures
  end
  local space_line = telemetry_on and space.after_phase(self, record, pool_label, result, space_state) or nil
  if side and record.cluster then record.cluster.collect = self:side_cost(side, phase_mark, phase_end_mark) end
  self.records[#self.records + 1] = record
  printer.summary(result)
  if report ~= "rados-bench" then -- (rados bench's layout as it is)
    for _, op_line in ipairs(by_op_lines(result)) do say(op_line) end
    local line = steady_line(record, result)
    if line then say(line) end
    line = cluster_line(record, on_cluster and cpu_figures, cluster_state)
    if line then say(line) end
  end
  if hosts then
    record.cluster = record.cluster or {}
    record.cluster.hosts = hosts
    if report ~= "rados-bench" then
      for _, line in ipairs(monitor.summary_lines(hosts)) do say(line) end
    end
  end
  if record.result and type(record.result.agents) == "table" then
    -- a distributed phase: its agents and host monitors, one row per host
    record.result.per_host = plain(require("cephmark.distributed").per_host(record.result.agents,
      record.cluster and record.cluster.hosts, record.result.slow_agents))
  end
  if space_line and report ~= "rados-bench" then say(space_line) end
  if is_bench_result(result) and type(result.gave_up) == "string" then
    -- an HTTP phase stopped on a gateway that stayed down: said once, kept with the phase
    record.error = result.gave_up
    io.stdout:flush()
    io.stderr:write("cephmark: ", result.gave_up, "\n")
  end
  if is_bench_result(result) and not result.interrupted then
    -- what the summary line cannot show: ops the cluster never answered, and a run whose
    -- metadata could not be completed (a full cluster, for one), so that a later phase's
    -- refusal of the run is not the first sign of it
    local what = phase_title(record)
    local abandoned = (result.started or 0) - (result.ops or 0) - (result.errors or 0)
    if result.drained == false and abandoned > 0 then
      self:warn(string.format("%s: %d op%s still in flight when the phase ended %s abandoned unanswered " ..
        "(drain_timeout); the figures count only the ops that completed", what, abandoned,
        abandoned == 1 and "" or "s", abandoned == 1 and "was" or "were"))
    end
    if type(result.metadata_error) == "string" then
      self:warn(string.format("%s: %s", what, result.metadata_error))
    end
    if type(result.early_end) == "string" then
      self:warn(string.format("%s: %s", what, result.early_end))
    end
  end
  if hooks.after_phase then hooks.after_phase(self, record) end
  self:save(false)
  if record.status == "interrupted" then sys.fail("interrupted", sys.EXIT_INTERRUPTED) end
  return result
end

-- The OSDs' counters before a phase on a pool (cephmark.telemetry), nil when telemetry is
-- off: `telemetry = false` in cm.scenario or in the run's context, or after it failed once.
function Run:telemetry_before()
  if not self.scenario.telemetry or self.context.telemetry == false then return nil end
  if not self.telemetry then
    local rados = require "cephmark.rados"
    self.telemetry = telemetry.collector {
      warn = function(message) self:warn(message) end,
      connect = function() return self:cluster() end, borrowed = true,
      osd_ids = function() return self:osd_ids() end,
      client = "client." .. ((rados.defaults or {}).id or "admin"),
    }
  end
  return self.telemetry:guarded(self.telemetry.before)
end

-- What reading the cluster's side costs around a phase: the commands sent through the
-- run's connection (cluster:command_counts) and the seconds, marked at the phase's start,
-- around its measured time and at its end. side_cost gives the phase's `cluster.collect`:
-- the commands and seconds before and after the phase, and the commands sent while it ran
-- (none of the readings'; docs/telemetry.md).
function Run:side_mark()
  local mon, osd
  local handle = self.cluster_handle
  if handle and handle.command_counts then mon, osd = handle:command_counts() end
  return { at = sys.monotonic(), mon = mon, osd = osd }
end

function Run:side_cost(start, phase_start, phase_end)
  local now = self:side_mark()
  -- no connection by the end (a phase on no cluster): nothing to say
  if not (phase_start and phase_end) or now.mon == nil then return nil end
  -- (a connection made during the phase's cluster side counted from 0)
  local function between(a, b, key) return (b[key] or 0) - (a[key] or 0) end
  local cost = {
    mon_commands = between(start, phase_start, "mon") + between(phase_end, now, "mon"),
    osd_commands = between(start, phase_start, "osd") + between(phase_end, now, "osd"),
    -- to the ms: these are the wall times of the steps, not a measurement's precision
    seconds = math.floor((phase_start.at - start.at + now.at - phase_end.at) * 1000 + 0.5) / 1000,
    during = { mon_commands = between(phase_start, phase_end, "mon"),
      osd_commands = between(phase_start, phase_end, "osd") },
  }
  return cost
end

-- The OSDs in the map: the state watcher's list while its readings see the same OSD map,
-- else `osd ls`.
function Run:osd_ids()
  if self.state_watcher then return self.state_watcher:osd_ids() end
  return state.osd_ls(self:cluster())
end

-- The cluster's state before a phase on a cluster (cephmark.state): the wait for a quiet
-- cluster with wait_clean, then the phase's `cluster.state` with its start reading (nil
-- when telemetry is off). A phase not on a pool (an image, a gateway) reads it through
-- the run's connection only when the run has one, unless wait_clean asks for it.
function Run:state_before(record, pool_label, on_cluster, recorded)
  local wait_clean = self.context.wait_clean or self.scenario.wait_clean
  if not pool_label and not (on_cluster and (self.cluster_handle or wait_clean)) then return nil end
  if not recorded and not wait_clean then return nil end
  if not self.state_watcher then
    self.state_watcher = state.watcher { cluster = function() return self:cluster() end,
      pools = function()
        local names = {}
        for _, pool in ipairs(self.pools) do
          if pool.created ~= nil and not pool.deleted then names[#names + 1] = pool.name end
        end
        return names
      end,
      warn = function(message) self:warn(message) end, say = say, wait_clean = wait_clean, record = recorded }
  end
  local phase = self.state_watcher:before(phase_title(record))
  if not phase then return nil end
  phase.quiesced = self.quiesced
  record.cluster = record.cluster or {}
  record.cluster.state = phase
  return phase
end

-- quiesce: no new scrubs for the run (CBT's disable_scrub), through the config session so
-- that the flags are put back as they were wherever the run ends.
function Run:quiesce_cluster()
  self:cluster()
  for _, flag in ipairs(state.QUIESCE_FLAGS) do self.config:set_flag(flag) end
  self.quiesced = true
end

-- fio's rw= words, for the targets that take an I/O type and a pattern (rbd images, disks)
local function io_words(mixed)
  local words = {
    read = { io_type = "read", pattern = "seq" }, write = { io_type = "write", pattern = "seq" },
    randread = { io_type = "read", pattern = "rand" }, randwrite = { io_type = "write", pattern = "rand" },
  }
  if mixed then
    words.readwrite = { io_type = "readwrite", pattern = "seq" }
    words.rw = words.readwrite
    words.randrw = { io_type = "readwrite", pattern = "rand" }
  end
  return words
end

local object_ops = { put = { op = "put" }, get = { op = "get" }, head = { op = "head" }, delete = { op = "delete" },
  list = { op = "list" }, mixed = { op = "mixed" } }

-- What s:phase knows of each kind of target: what a phase's name means on it (the bench
-- options the name stands for), which options say it instead, and what a phase on it is
-- called in messages. Which options a target's bench accepts is not kept here: each module
-- publishes its bench's list (`bench_options`), the one the bench itself checks against.
local target_kinds = {
  pool = { arg = "pool", noun = "a pool phase", keys = { "op" }, say = 'op = "write"',
    names = { write = { op = "write" }, seq = { op = "seq" }, rand = { op = "rand" }, cleanup = { op = "cleanup" },
      overwrite = { op = "overwrite" }, append = { op = "append" }, verify = { op = "verify" },
      mixed = { op = "mixed" } },
    choices = "write, seq, rand, cleanup, overwrite, append, verify or mixed" },
  image = { arg = "image", noun = "an image phase", keys = { "io_type", "pattern" }, names = io_words(true),
    choices = "read, write, randread, randwrite, readwrite or randrw (fio's rw=)",
    say = 'io_type = "write" (and pattern = "rand")', describe = tostring, agent_options = { "per_agent" } },
  swift = { arg = "swift", noun = "a Swift phase", keys = { "op" }, names = object_ops,
    choices = "put, get, head, delete, list or mixed", say = 'op = "put"', objects = true,
    agent_options = { "endpoint" } },
  s3 = { arg = "s3", noun = "an S3 phase", keys = { "op" }, names = object_ops,
    choices = "put, get, head, delete, list or mixed", say = 'op = "put"', objects = true,
    agent_options = { "endpoint" } },
  disk = { arg = "disk", noun = "a disk phase", keys = { "io_type", "pattern" }, names = io_words(false),
    choices = "read, write, randread or randwrite (fio's rw=)", say = 'io_type = "write" (and pattern = "rand")' },
  socket = { arg = "socket", noun = "a socket phase", keys = { "mode", "direction" },
    names = { send = { mode = "stream", direction = "send" }, recv = { mode = "stream", direction = "recv" },
      rr = { mode = "rr" } },
    choices = "send, recv or rr", say = 'mode = "rr" or direction = "recv"', agent_options = { "peer" } },
  null = { noun = "a null phase" },
  other = { noun = "a phase on this target" },
}
for kind_name, kind in pairs(target_kinds) do kind.name = kind_name end
local handle_kinds = { ["cephmark.rados.pool"] = "pool", ["cephmark.rbd.image"] = "image",
  ["cephmark.swift.connection"] = "swift", ["cephmark.s3.connection"] = "s3" }
local module_kinds = { ["cephmark.disk"] = "disk", ["cephmark.socket"] = "socket", ["cephmark.null"] = "null" }

local function target_kind(target)
  if type(target) == "userdata" then
    local meta = getmetatable(target)
    local kind = type(meta) == "table" and handle_kinds[meta.__name]
    return target_kinds[kind or "other"]
  end
  for module, kind in pairs(module_kinds) do
    if package.loaded[module] == target then return target_kinds[kind] end
  end
  return target_kinds.other
end

-- The options of s:phase that go to the bench (or to a custom phase's function).
local function bench_part(options)
  local bench = {}
  for k, v in pairs(options) do
    if not phase_own_options[k] and k ~= "on_second" then bench[k] = v end
  end
  return bench
end

-- Refuses an option name that is not in `accepted` (nor the scenario's own), with the
-- nearest name and every name taken, at the caller's line.
local function check_option_names(what, noun, options, accepted, site)
  local set, all = {}, {}
  local function add(option)
    if not set[option] then set[option] = true; all[#all + 1] = option end
  end
  for _, option in ipairs(accepted) do add(option) end
  for option in pairs(phase_own_options) do add(option) end
  add("on_second")
  table.sort(all)
  local keys = {}
  for key in pairs(options) do keys[#keys + 1] = key end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, key in ipairs(keys) do
    if type(key) ~= "string" then
      fail_at(site, string.format("%s: options are name = value pairs, got a value at [%s]", what, tostring(key)))
    end
    if not set[key] then
      fail_at(site, string.format("%s: unknown option '%s'%s; %s takes %s", what, key, params.suggest(key, all), noun,
        table.concat(all, ", ")))
    end
  end
end

-- The bench options a phase's name stands for on its target (explicit options win), or a
-- refusal naming the phase names the target knows: a misspelt name is caught when s:phase
-- is called, before anything of that phase happens.
local function name_settings(kind, name, bench, site)
  if not kind.names then return {} end
  local settings = kind.names[name]
  if settings then
    local out = {}
    for key, value in pairs(settings) do
      if bench[key] == nil then out[key] = value end
    end
    return out
  end
  for _, key in ipairs(kind.keys) do
    if bench[key] ~= nil then return {} end
  end
  local words = {}
  for word in pairs(kind.names) do words[#words + 1] = word end
  table.sort(words)
  fail_at(site, string.format("s:phase('%s', %s): %s is %s, or says which with %s%s", name, kind.arg, kind.noun,
    kind.choices, kind.say, params.suggest(name, words)))
end

-- s:phase(name, target, options): a phase on a target -- a pool (s:pool), an rbd image, a
-- Swift or S3 connection, the disk or socket module, or any table with a bench function --
-- whose name says what it does there (write/seq/rand/cleanup on a pool, fio's rw words on an
-- image or a disk, put/get/head/delete on a connection, send/recv/rr on a socket), or that
-- says so in its options. s:phase(name, function(phase) ... end [, options]): a custom
-- phase, recorded like a native one when it returns a bench result. The name and the
-- options are checked here, before the phase's header, hooks or any I/O.
function Run:phase(name, target, options)
  local site = params.site(2)
  if type(name) ~= "string" or name == "" then
    fail_at(site, "s:phase: the first argument is the phase's name (write, seq, rand, cleanup, prepare or your own), got " ..
      params.show(name))
  end
  if options ~= nil and type(options) ~= "table" then
    fail_at(site, string.format("s:phase('%s'): options must be a table, got %s", name, params.show(options)))
  end
  options = options or {}
  if options.coordinator ~= nil and (type(target) ~= "function" or type(options.coordinator) ~= "boolean") then
    fail_at(site, string.format("s:phase('%s'): coordinator = true is for a custom function phase that computes "
      .. "from earlier phases' results (it runs in this process, also with --agents), got %s on %s", name,
      params.show(options.coordinator), type(target) == "function" and "a function phase" or "a phase with a target"))
  end
  if type(target) == "function" then
    if self.context.agents and not options.coordinator then
      fail_at(site, string.format("s:phase('%s'): a custom function phase cannot run on agents (--agents): its "
        .. "function lives in this process; give the phase a target the agents open (a pool, an rbd image, a Swift "
        .. "or S3 connection, the disk, socket or null module), or run without --agents (coordinator = true runs a "
        .. "function that only computes from earlier results here)", name))
    end
    -- the function gets what is meant for a bench: variant, label, report stay here
    local bench_options = bench_part(options)
    bench_options.coordinator = nil
    return self:run_phase(name, options.op or name, nil, options, function(on_second, record)
      return target({ name = name, index = record.index, label = record.label, variant = record.variant,
        on_second = on_second, options = bench_options })
    end, site)
  end
  local is_handle = type(target) == "userdata"
  local has_bench = (is_handle or type(target) == "table") and
    (pcall(function() return target.bench end)) and type(target.bench) == "function"
  if not has_bench then
    fail_at(site, string.format("s:phase('%s'): the second argument is what the phase runs on (a pool from s:pool(label), an rbd image, a Swift or S3 connection, require \"cephmark.disk\" or \"cephmark.socket\") or a function, got %s",
      name, params.show(target)))
  end
  local kind = target_kind(target)
  local bench = bench_part(options)
  local accepted = target.bench_options
  if type(accepted) == "table" then
    -- and the options saying where each agent of a multi-client run works (its own rbd
    -- image or a shared one, its gateway endpoint), which stay here (Run:agent_phase)
    local with_agents = { table.unpack(accepted) }
    for _, option in ipairs(kind.agent_options or {}) do with_agents[#with_agents + 1] = option end
    check_option_names(string.format("s:phase('%s')", name), kind.noun, bench, with_agents, site)
  end
  for _, option in ipairs(kind.agent_options or {}) do bench[option] = nil end
  for key, value in pairs(name_settings(kind, name, bench, site)) do bench[key] = value end
  local op = bench.op
  local is_pool = kind.name == "pool"
  local pool_label = is_pool and self.pool_labels[target] or nil
  local entry = pool_label and self:pool_entry(pool_label)
  -- (with --agents, each agent writes under a run name and prefix of its own)
  local local_bench = is_pool and not self.context.agents
  if local_bench and entry and entry.created == false then
    -- a pool this run did not create: a run name of its own, never the shared default,
    -- and a marker that lets `cephmark cleanup --leftovers` find the write after a SIGKILL
    if bench.run_name == nil then bench.run_name = self:default_run_name() end
    if op == "write" then
      bench.temporary = true
      self:remove_own_earlier_write(target, pool_label, bench.run_name)
    end
  end
  if local_bench and op == "cleanup" then self:check_cleanup(target, pool_label, bench, site) end
  if is_pool and options.report == "rados-bench" and op == "write" and bench.prefix == nil then
    -- rados bench prints the object prefix before the run; name it so it can be printed
    bench.prefix = string.format("benchmark_data_%s_%d", sys.hostname(), sys.getpid())
    options = copy(options)
    options.prefix = bench.prefix
  end
  if kind.objects then self:default_from(name, target, bench, site) end
  -- with --agents every phase runs on the agents: checked, and each agent's image made,
  -- here, before the phase's header and before any agent is asked anything
  local agent_spec = self:agent_phase(name, kind, target, bench, options, site)
  self.next_on_cluster = kind.name == "pool" or kind.name == "image" or kind.name == "swift" or kind.name == "s3"
  local result = self:run_phase(name, op or name, pool_label, options, function(on_second)
    if agent_spec then
      bench.on_second = on_second
      local merged = self:distributed_bench(agent_spec, op, bench)
      if kind.objects and is_bench_result(merged) then self:track_put(target, bench, merged) end
      return merged
    end
    local bench_result = self:call_bench(name, target, is_handle, bench, on_second, site)
    -- tracked here, before run_phase raises "interrupted" for an interrupted write, so
    -- the end of the run still removes its objects from a pool it did not create
    if is_pool and is_bench_result(bench_result) then
      self:track_objects(target, pool_label, op, bench, bench_result)
    end
    if kind.objects and is_bench_result(bench_result) then self:track_put(target, bench, bench_result) end
    return bench_result
  end, site, kind.describe and kind.describe(target) or nil)
  return result
end

-- Runs a target's bench. What a bench written in C raises itself -- an option value it
-- refuses, or a refusal to start -- is the operator's input or the world, never a bug in
-- the script: it reads as one line at the phase's line, naming the -p or --params value it
-- came from, exit 2. An error of the script's own code that ran inside the bench (a hook
-- or an on_second function, called each second) keeps its traceback; stop signals and
-- os.exit pass through.
function Run:call_bench(name, target, is_handle, bench, on_second, site)
  local bench_fn = target.bench
  if debug.getinfo(bench_fn, "S").what ~= "C" then
    bench.on_second = on_second
    if is_handle then return bench_fn(target, bench) end
    return bench_fn(bench)
  end
  local callback_error
  bench.on_second = function(second)
    local ok, value = pcall(on_second, second)
    if not ok then
      callback_error = value
      error(value, 0)
    end
    return value
  end
  local ok, result
  if is_handle then
    ok, result = pcall(bench_fn, target, bench)
  else
    ok, result = pcall(bench_fn, bench)
  end
  if ok then return result end
  if rawequal(result, callback_error) or is_interrupt(result) or sys.exit_requested() then error(result, 0) end
  local message, code, operator = sys.error_info(result)
  if (operator and code ~= sys.EXIT_USAGE) or (not operator and type(result) ~= "string") then error(result, 0) end
  message = tostring(message)
  fail_at(site, string.format("s:phase('%s'): %s%s", name, message, self:option_source(bench, message)))
end

-- " (from -p threads=0)" when a bench's refusal names an option whose value is that of a
-- param set by -p or --params: the operator sees which of their inputs to change.
function Run:option_source(bench, message)
  local set, sources, seen = self.scenario.params, {}, {}
  for _, param_name in ipairs(set.names) do
    local origin = self.origins[param_name]
    if origin == "-p" or origin == "file" then
      local param, value = set:get(param_name), self.values[param_name]
      local element = param.kind == "list" and param.element or param
      local values = param.kind == "list" and value or { value }
      for key, option in pairs(bench) do
        local named = type(key) == "string" and
          message:find("%f[%w_]" .. (key:gsub("%p", "%%%0")) .. "%f[^%w_]") ~= nil
        for _, v in ipairs(named and values or {}) do
          if option == v or option == element:format(v) then
            local source = origin == "-p" and
              string.format("-p %s=%s", param_name, (self.context.params or {})[param_name] or param:format(value)) or
              string.format("%s in %s", param_name, tostring(self.context.params_file))
            if not seen[source] then
              seen[source] = true
              sources[#sources + 1] = source
            end
          end
        end
      end
    end
  end
  table.sort(sources)
  return #sources > 0 and (" (from " .. table.concat(sources, ", ") .. ")") or ""
end

local function container_key(bench)
  local one = bench.container or bench.bucket
  if one ~= nil then return tostring(one) end
  local many = bench.containers or bench.buckets
  if type(many) == "table" then return table.concat(many, ",") end
  return nil
end

-- A get, head, delete, list or mixed phase on a Swift or S3 connection without from= or objects= works
-- on the objects of the newest put phase on that connection (into the same containers,
-- when it names them), as a seq phase reads what a write phase wrote in a pool.
function Run:default_from(name, connection, bench, site)
  if bench.op == "put" or bench.from ~= nil or bench.objects ~= nil then return end
  local want = container_key(bench)
  for i = #self.puts, 1, -1 do
    local put = self.puts[i]
    if rawequal(put.connection, connection) and (want == nil or put.key == want) then
      bench.from = put.result
      return
    end
  end
  fail_at(site, string.format(
    "s:phase('%s'): no put phase before it on this connection%s: a %s phase works on the objects a put phase wrote; run one first, or give from = (a put phase's result)",
    name, want and (" (into " .. want .. ")") or "", tostring(bench.op)))
end

function Run:track_put(connection, bench, result)
  if bench.op == "put" then
    self.puts[#self.puts + 1] = { connection = connection, key = container_key(bench), result = result }
  elseif bench.op == "delete" and bench.from ~= nil then
    for i = #self.puts, 1, -1 do
      if rawequal(self.puts[i].result, bench.from) then table.remove(self.puts, i) end
    end
  end
end

-- With `cephmark run --agents`: the phase runs on every agent together (distributed.lua)
-- and the result is the agents' merged result, with each agent's own under .agents.
function Run:start_agents()
  local agents = self.context.agents
  self.coordinator = require("cephmark.distributed").start(self:cluster(), {
    agents = agents.spec, control_pool = agents.control_pool, script = self.context.script,
    params = self.scenario.params:as_params_file(self.values), wait = agents.wait,
  })
  self:check_script_attributes()
end

-- Every "{agent.KEY}" written in the scenario's text must be an attribute of every chosen
-- agent: checked when the run starts, before any pool or phase (a reference built while
-- the run goes is checked at its phase, Run:agent_phase).
function Run:check_script_attributes()
  local script = self.context.script
  local text = script and sys.read_file(script)
  if not text then return end
  local needed = agent_targets.needed(text)
  for _, agent in ipairs(self.coordinator.agents) do
    local attrs = self:agent_attributes(agent)
    for _, key in ipairs(needed) do
      if attrs[key] == nil then
        sys.fail(string.format("agent %s has no attribute '%s', which %s names as {agent.%s}; start it with "
          .. "`cephmark agent --attr %s=VALUE`", agent, key, script, key, key))
      end
    end
  end
end

-- The agents chosen for the run that are still in it, in the run's order.
function Run:active_agents()
  local list = {}
  for _, agent in ipairs(self.coordinator.agents) do
    if self.coordinator.active[agent] then list[#list + 1] = agent end
  end
  return list
end

-- s:agents() -> with --agents, the agents still in the run, in the run's order, each
-- {name =, host =, attrs = {KEY = value}} from its registration (attrs without name and
-- host); nil without --agents. A scenario plans per-host work with it (baseline.lua).
function Run:agents()
  if not self.context.agents then return nil end
  if not self.coordinator then self:start_agents() end
  local list = {}
  for _, agent in ipairs(self:active_agents()) do
    local registration = self.coordinator.registry[agent] or {}
    local attrs = {}
    for key, value in pairs(type(registration.attrs) == "table" and registration.attrs or {}) do attrs[key] = value end
    list[#list + 1] = { name = agent, host = registration.host, attrs = attrs }
  end
  return list
end

-- Each agent's attributes, from its registration ("{agent.KEY}" resolved as it will be
-- resolved on the agent).
function Run:agent_attributes(agent)
  return agent_targets.attributes(agent, self.coordinator.registry[agent] or {})
end

-- With --agents: the phase's checks and its description for the agents, or nil without
-- --agents. Refuses (one line, exit 2) a target the agents cannot open, an attribute an
-- agent lacks, two agents of one host on one disk path; makes each agent's own rbd image.
function Run:agent_phase(name, kind, target, bench, options, site)
  local function refuse(message) fail_at(site, string.format("s:phase('%s'): %s", name, message)) end
  if options.per_agent ~= nil then
    if kind.name ~= "image" then
      refuse("per_agent is for rbd image phases (each agent's own image, or a shared one)")
    end
    local bad = agent_targets.check_per_agent(options.per_agent)
    if bad then refuse(bad) end
  end
  if options.endpoint ~= nil then
    if kind.name ~= "swift" and kind.name ~= "s3" then refuse("endpoint is for Swift and S3 phases") end
    local list = type(options.endpoint) == "table" and options.endpoint or { options.endpoint }
    if #list == 0 then refuse("endpoint = {} names no endpoint") end
    for _, url in ipairs(list) do
      if type(url) ~= "string" or not (url:find("{agent", 1, true) or agent_targets.origin(url)) then
        refuse(string.format("endpoint must be a URL such as http://10.0.0.5:8080 (or \"{agent.KEY}\"), got %s",
          params.show(url)))
      end
    end
  end
  if options.peer ~= nil then
    if kind.name ~= "socket" then refuse("peer is for socket phases (each agent's netserver)") end
    local list = type(options.peer) == "table" and options.peer or { options.peer }
    if #list == 0 then refuse("peer = {} names no netserver") end
    for _, peer in ipairs(list) do
      if type(peer) ~= "string" or peer == "" or peer:find("%s") then
        refuse(string.format("peer must be a netserver's HOST or HOST:PORT (or \"{agent.KEY}\"), got %s",
          params.show(peer)))
      end
    end
  end
  if not self.context.agents then
    if options.endpoint ~= nil then
      refuse("endpoint is for runs with --agents (each agent's gateway); without, the phase uses its connection's")
    end
    if options.peer ~= nil then
      refuse("peer is for runs with --agents (each agent's netserver); without, give host = and port =")
    end
    return nil
  end
  if not self.coordinator then self:start_agents() end
  if not agent_targets.KINDS[kind.name] then
    refuse(string.format("%s cannot run on agents (--agents): the agents can open only a pool, an rbd image, a "
      .. "Swift or S3 connection, the disk, socket or null module; run it without --agents", kind.noun))
  end
  local description, why = agent_targets.describe(kind.name, target,
    { per_agent = options.per_agent, endpoint = options.endpoint, peer = plain(options.peer) })
  if not description then refuse(string.format("%s cannot be sent to the agents: %s", kind.noun, why)) end
  local agents = self:active_agents()
  local needed = agent_targets.needed(bench, description, options.endpoint, options.peer)
  for _, agent in ipairs(agents) do
    local attrs = self:agent_attributes(agent)
    for _, key in ipairs(needed) do
      if attrs[key] == nil then
        refuse(string.format("agent %s has no attribute '%s', which the phase names as {agent.%s}; start it with "
          .. "`cephmark agent --attr %s=VALUE`", agent, key, key, key))
      end
    end
  end
  if kind.name == "disk" then self:check_agent_disks(agents, bench, refuse) end
  if kind.name == "image" and not description.shared then
    self:make_agent_images(agents, target, description, refuse)
  end
  return description
end

-- Two agents on one host (their registrations' host) must not share a disk path.
function Run:check_agent_disks(agents, bench, refuse)
  local seen = {}
  for _, agent in ipairs(agents) do
    local attrs = self:agent_attributes(agent)
    local path = type(bench.path) == "string" and agent_targets.resolve(bench.path, attrs) or nil
    if path then
      local key = tostring(attrs.host) .. "\0" .. path
      if seen[key] then
        refuse(string.format("agents %s and %s run on the same host (%s) and would both use the disk path %s; "
          .. "give each its own (a path with {agent.name}, or --attr per agent)", seen[key], agent,
          tostring(attrs.host), path))
      end
      seen[key] = agent
    end
  end
end

-- Each agent's own image, named from the template, made like the scenario's image (size,
-- object size, features, data pool) unless this run made it for an earlier phase. An image
-- of that name that this run did not make is refused, never used or removed. The run
-- removes the images it made when it ends (Run:remove_agent_images).
function Run:make_agent_images(agents, image, description, refuse)
  local info = assert(image:info())
  local rbd = require "cephmark.rbd"
  self.agent_images = self.agent_images or { list = {}, made = {}, pools = {} }
  local made = self.agent_images
  local owners = {}
  for _, agent in ipairs(agents) do
    local image_name = agent_targets.resolve(description.image, self:agent_attributes(agent))
    if owners[image_name] then
      refuse(string.format("agents %s and %s would both use image %s/%s; use a template that differs per agent "
        .. "(with {agent}), or per_agent = \"shared\"", owners[image_name], agent, description.pool, image_name))
    end
    owners[image_name] = agent
    local key = description.pool .. "/" .. image_name
    if image_name == info.name then
      refuse(string.format("per_agent names the scenario's own image %s for agent %s; use per_agent = \"shared\"",
        key, agent))
    end
    if not made.made[key] then
      local pool = made.pools[description.pool]
      if not pool then
        local err
        pool, err = self:cluster():pool(description.pool)
        if not pool then refuse(string.format("cannot open pool %s: %s", description.pool, tostring(err))) end
        made.pools[description.pool] = pool
      end
      local ok, err = rbd.create(pool, image_name, { size = info.size, object_size = info.object_size,
        features = info.features, data_pool = info.data_pool })
      if not ok then
        refuse(string.format("cannot make agent %s's image %s: %s (an image this run did not make is never used or "
          .. "removed: remove it, or choose another per_agent template)", agent, key, tostring(err)))
      end
      made.made[key] = true
      made.list[#made.list + 1] = { pool = pool, pool_name = description.pool, name = image_name }
      say(string.format("agents: made image %s for agent %s (%s)", key, agent, sys.format_size(info.size)))
    end
  end
end

-- Removes the agents' images this run made (after the agents closed them: the run's end).
function Run:remove_agent_images()
  local made = self.agent_images
  if not made then return end
  local rbd = require "cephmark.rbd"
  for i = #made.list, 1, -1 do
    local entry = made.list[i]
    local ok, err = rbd.remove(entry.pool, entry.name)
    if not ok then error(string.format("image %s/%s: %s", entry.pool_name, entry.name, tostring(err)), 0) end
    table.remove(made.list, i)
    say(string.format("agents: removed image %s/%s", entry.pool_name, entry.name))
  end
  for _, pool in pairs(made.pools) do pcall(pool.close, pool) end
  self.agent_images = nil
end

-- What a disk or socket phase's result says beyond the engine's counts (the file and dd's
-- figures; the peer, its receiver's bits per second and the retransmits): kept from each
-- agent's own result in its entry under result.agents.
local detail_fields = {
  disk = { "path", "io_type", "pattern", "block_size", "direct", "dd", "prepared_bytes", "fallback", "engine" },
  socket = { "peer", "mode", "direction", "streams", "bits_per_second", "receiver_bits_per_second", "retransmits",
    "server" },
}

-- The per-kind results (by_op) of the agents, their counts summed (latency stays per agent).
local function sum_by_op(result)
  local out
  for _, r in pairs(result.agents) do
    for kind, figures in pairs(type(r.by_op) == "table" and r.by_op or {}) do
      out = out or {}
      local sum = out[kind] or { ops = 0, bytes = 0, errors = 0 }
      for _, key in ipairs { "ops", "bytes", "errors" } do sum[key] = sum[key] + (tonumber(figures[key]) or 0) end
      out[kind] = sum
    end
  end
  local elapsed = tonumber(result.elapsed) or 0
  for _, sum in pairs(elapsed > 0 and out or {}) do
    sum.iops, sum.bandwidth_mib_s = sum.ops / elapsed, sum.bytes / elapsed / 1048576
  end
  return out
end

-- The console lines of a phase on agents: one per agent, the excluded and slow ones, the
-- start skew and the rate split.
function Run:say_agents(result)
  local names = {}
  for name in pairs(result.agents) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local r = result.agents[name]
    say(string.format("  agent %-12s %s %d ops in %.2f s, %.1f MiB/s, %.0f IOPS, p50 %s p99 %s, %d errors%s%s%s", name,
      tostring(r.host or "?"), r.ops or 0, r.elapsed or 0, r.bandwidth_mib or 0, r.iops or 0, format_latency(r.p50),
      format_latency(r.p99), r.errors or 0, r.rate and string.format(", rate %g/s", r.rate) or "",
      r.interrupted and " (interrupted)" or "", r.image and ("  image " .. r.image) or
      (r.endpoint and ("  " .. r.endpoint) or "")))
  end
  for _, e in ipairs(result.excluded) do say(string.format("  agent %-12s EXCLUDED: %s", e.agent, e.reason)) end
  for _, slow in ipairs(result.slow_agents or {}) do
    say(string.format("  slow agent %s (%s): %s", slow.agent, tostring(slow.host or "?"), table.concat(slow.reasons, ", ")))
  end
  say(string.format("  %d agents, start skew %.1f ms (agent clocks), scheduled %.0f ms ahead, go notify round trip %.1f ms%s",
    result.agent_count, result.start_skew * 1000, (result.start_lead or 0) * 1000, result.go_round_trip * 1000,
    result.rate and string.format(", rate %g/s split over the agents", result.rate) or ""))
  -- agents that started more than a millisecond after the scheduled instant, latest first
  local late = {}
  for _, name in ipairs(names) do
    local r = result.agents[name]
    if (tonumber(r.start_late) or 0) > 0.001 then late[#late + 1] = { name = name, late = r.start_late, go = r.go_late } end
  end
  table.sort(late, function(a, b) return a.late > b.late end)
  local parts = {}
  for i = 1, math.min(#late, 5) do
    parts[i] = string.format("%s %.1f ms%s", late[i].name, late[i].late * 1000,
      late[i].go and string.format(" (go received %.1f ms after the instant)", late[i].go * 1000) or "")
  end
  if #late > 0 then
    say(string.format("  late start: %s%s", table.concat(parts, ", "), #late > 5 and string.format(" and %d more", #late - 5) or ""))
  end
  if result.series_p99 == "worst agent" then
    say("  per-second p99 is the worst agent's: " .. tostring(result.series_p99_why))
  end
end

function Run:distributed_bench(description, op, bench)
  local options = {}
  for key, value in pairs(bench) do
    if type(value) ~= "function" and key ~= "op" then options[key] = plain(value) end
  end
  if type(bench.from) == "table" and bench.from.agent_phase then
    options.from = { agent_phase = bench.from.agent_phase } -- each agent reads its own put's objects
  end
  local result = self.coordinator:run_phase { pool = description.kind == "pool" and description.pool or nil,
    target = description, op = op, options = options, agent_fields = detail_fields[description.kind] }
  local phase = self.coordinator.phases
  result.agent_phase = phase
  self:say_agents(result)
  result.by_op = result.by_op or sum_by_op(result)
  for _, r in pairs(result.agents) do r.by_op = nil end
  if description.kind == "pool" and op == "write" and not self:pool_entry_by_name(description.pool) then
    self:warn("objects written by agents to a pool this run did not create stay until a cleanup phase removes them")
  end
  return result
end

function Run:pool_entry_by_name(name)
  for _, pool in ipairs(self.pools) do
    if pool.name == name and pool.created then return pool end
  end
  return nil
end

-- The run name of this run's writes in pools it did not create.
function Run:default_run_name()
  if not self.run_name_default then
    self.run_name_default = string.format("cephmark_%s_%s", self.scenario.name:gsub("[^%w_.-]", "_"),
      self:owner().run_id)
  end
  return self.run_name_default
end

-- A second write under the same run name in a pool this run did not create: the first
-- one's objects go first, so none are orphaned in the operator's pool.
function Run:remove_own_earlier_write(handle, pool_label, run_name)
  local key = tostring(pool_label) .. "\0" .. run_name
  local earlier = self.written[key]
  if not earlier then return end
  local removed = earlier.handle:bench { op = "cleanup", run_name = run_name, threads = 64 }
  self.written[key] = nil
  say(string.format("pool %s: removed %d objects of this run's earlier write '%s'", pool_label, removed.ops, run_name))
end

-- A cleanup phase removes a run that exists: a misspelt run name is refused, never
-- taken as a prefix (nothing is removed). The run names this run wrote are listed.
function Run:check_cleanup(handle, pool_label, bench, site)
  if bench.prefix ~= nil then return end -- the script names the objects itself
  local run_name = bench.run_name or "cephmark_bench_last_metadata"
  local text, _, code = handle:get(run_name)
  if text or code ~= -2 then return end
  local wrote = {}
  for _, leftover in pairs(self.written) do
    if leftover.pool == pool_label then wrote[#wrote + 1] = "'" .. leftover.run_name .. "'" end
  end
  table.sort(wrote)
  fail_at(site, string.format(
    "s:phase('cleanup'): no benchmark run '%s' in pool %s (this run wrote %s there); nothing was removed",
    run_name, handle:name(), #wrote > 0 and table.concat(wrote, ", ") or "nothing"))
end

-- Benchmark objects a write left in a pool the scenario did not create are removed at the
-- end (unless a cleanup phase did it), so a reused pool is left as it was found.
function Run:track_objects(handle, pool_label, op, bench, result)
  local run_name = bench.run_name or result.run_name or "cephmark_bench_last_metadata"
  local key = tostring(pool_label) .. "\0" .. run_name
  if op == "write" then
    self.written[key] = { handle = handle, pool = pool_label, run_name = run_name, prefix = result.prefix }
  elseif op == "cleanup" then
    self.written[key] = nil
  end
end

-- s:workers{n=, fn=function(w) ... end, seconds=, ops=, rate=, name=, pool=}: scripted
-- workers (cephmark.workers) as a phase; pool= only labels the variant.
function Run:workers(options)
  local site = params.site(2)
  if type(options) ~= "table" then fail_at(site, "s:workers expects a table {n=, fn=, seconds=, ...}") end
  local ok, workers = pcall(require, "cephmark.workers")
  if not ok then
    fail_at(site, "s:workers needs scripted workers (the cephmark.workers module), which this cephmark does not have")
  end
  local name = options.name or "workers"
  local own = { "name", "pool", "setup" }
  for _, option in ipairs(workers.run_options or {}) do own[#own + 1] = option end
  check_option_names("s:workers", "s:workers", options, own, site)
  if options.setup ~= nil and type(options.setup) ~= "function" then
    fail_at(site, "s:workers: setup must be a function(agent) run once before the workers, got " ..
      params.show(options.setup))
  end
  local pool_label = options.pool and self.pool_labels[options.pool] or nil
  local run_options = {}
  for k, v in pairs(options) do
    if k ~= "name" and k ~= "pool" and k ~= "setup" and not phase_own_options[k] and k ~= "on_second" then
      run_options[k] = v
    end
  end
  self.next_on_cluster = pool_label ~= nil
  if self.context.agents then
    -- refused here, before the phase's header and before any agent hears of it
    if type(options.fn) ~= "function" then
      fail_at(site, "s:workers: fn must be a function(w), got " .. params.show(options.fn))
    end
    local code, refusal = require("cephmark.worker_code").pack(options.fn, options.setup)
    if not code then fail_at(site, "s:workers with --agents: " .. refusal) end
    return self:run_phase(name, "workers", pool_label, options, function()
      return self:distributed_workers(code, run_options)
    end, site)
  end
  local setup = options.setup
  return self:run_phase(name, "workers", pool_label, options, function(on_second)
    run_options.on_second = on_second
    if setup then
      run_options.fn = require("cephmark.worker_code").wrap(options.fn, nil,
        setup { index = 1, agents = 1, n = run_options.n })
    end
    return workers.run(run_options)
  end, site)
end

-- s:workers with --agents: the worker function runs on every agent (n workers each; rate
-- is split so that the agents' rates add up to it) and the result is their merge.
function Run:distributed_workers(code, run_options)
  if not self.coordinator then self:start_agents() end
  local options = {}
  for key, value in pairs(run_options) do
    if type(value) ~= "function" then options[key] = plain(value) end
  end
  local result = self.coordinator:run_phase { kind = "workers", op = "workers", code = code, options = options }
  if result.agent_count == 0 and #result.excluded > 0 and not result.interrupted then
    -- no agent ran it (a worker raised everywhere, or setup did): the phase fails as it
    -- would in a single-client run, with the first agent's reason
    error(string.format("s:workers: the phase failed on every agent; %s: %s", result.excluded[1].agent,
      result.excluded[1].reason), 0)
  end
  self:say_agents(result)
  return result
end

-- s:variant(label or {dimension = value}, function() ... end): phases inside carry the
-- variant, so compare can put them side by side.
function Run:variant(value, fn)
  local site = params.site(2)
  if type(fn) ~= "function" then fail_at(site, "s:variant(label, function() ... end): the second argument must be a function") end
  local scope = variant_scope(value, site)
  local depth = #self.variant_stack
  self.variant_stack[depth + 1] = scope
  local closer <close> = setmetatable({}, { __close = function()
    for i = #self.variant_stack, depth + 1, -1 do self.variant_stack[i] = nil end
  end })
  return fn()
end

-------------------------------------------------------------------------------------------
-- Sweeps and Ceph config

-- A refusal before any phase ran: like a run refused at its start, it leaves no folder.
function Run:refuse_before_phases(err)
  if #self.records == 0 then self.reached_run = false end
  error(err, 0)
end

-- What sweep.check asks of the run (see there).
function Run:option_checker()
  return {
    options = function() return self.config end,
    connected = function() return self.cluster_handle and self.config or nil end,
    own = function(name) return self.scenario.params:get(name) ~= nil end,
    startup_only = function(key, what, site)
      self.startup_warned = self.startup_warned or {}
      if self.startup_warned[key] then return end
      self.startup_warned[key] = true
      self:warn(string.format("%s: %s: '%s' cannot change at runtime (the daemons read it when they start, and cephmark does not restart them): every point runs with the value the daemons started with",
        params.where(site), what, key))
    end,
  }
end

-- Checks a sweep's dimension names against the cluster (sweep.check), once per run and
-- sweep; a refusal before any phase leaves no results folder.
function Run:check_sweep(definition)
  local connected = self.cluster_handle ~= nil
  -- checked again once connected: free names are checked only against a connected cluster
  if definition.checked_by == self and (definition.checked_connected or not connected) then return end
  local ok, err = pcall(sweep.check, definition, self:option_checker())
  if not ok then self:refuse_before_phases(err) end
  definition.checked_by, definition.checked_connected = self, connected
end

-- cm.sweep and cm.zip pass each sweep they build through here: in a run, its names are
-- checked at the line that builds it, before anything else happens.
function M.checked_sweep(definition)
  if active_run then active_run:check_sweep(definition) end
  return definition
end

-- The Param that types a sweep dimension: the element type of the list param whose value
-- the values are (cm.sweep { block_size = p.sizes }), whatever that param is called; else
-- the param of that name (its element type when it is a list), or the list param named
-- with an s added (block_size <- block_sizes); else inferred from the values, as
-- shorthand params are.
function Run:dimension_type(name, values)
  local element = params.element_type(values)
  if element then return element end
  local set = self.scenario.params
  local param = set:get(name)
  if param and not param.builtin then
    return param.kind == "list" and param.element or param
  end
  local plural = set:get(name .. "s")
  if plural and plural.kind == "list" then return plural.element end
  local first = values[1]
  if type(first) == "string" or type(first) == "number" or type(first) == "boolean" then
    return (params.infer(first, self.scenario.site))
  end
  return nil
end

-- for point in s:sweep(cm.sweep{...}) do ... end, or s:sweep(sweep, function(point) ... end)
-- Each point is the params table with the point's coordinates in place (point.threads),
-- plus point.label and point.index. Config dimensions are set before the point's phases
-- and restored when the loop ends, breaks or fails.
function Run:sweep(definition, fn)
  local site = params.site(2)
  if not sweep.is_sweep(definition) then
    if type(definition) == "table" then
      definition = sweep.new(definition, nil, site)
    else
      fail_at(site, "s:sweep expects cm.sweep{...} or cm.zip{...}, got " .. params.show(definition))
    end
  end
  -- its option names, before it is asked about or run
  self:check_sweep(definition)
  -- its size before anything is made of it: a sweep too large to mean is refused (or asked
  -- about) before its points are built and before any of its phases runs
  say(string.format("sweep: %d points (%s)", definition.count, sweep.shape(definition)))
  -- with repetitions, the points of every repetition count: asked once, before the first
  local at = params.where(site)
  local confirm_key = at .. "\0" .. sweep.shape(definition)
  if not self.confirmed[confirm_key] then
    local confirmed, refusal = pcall(sweep.confirm, definition, self.context.yes, site, self.repeats)
    if not confirmed then self:refuse_before_phases(refusal) end
    self.confirmed[confirm_key] = true
  end
  self.dimension_types = self.dimension_types or {}
  local points = sweep.points(definition, function(name, values)
    local param = self:dimension_type(name, values)
    -- kept for s:compare's where, which reads values the way the sweep's labels show them
    self.dimension_types[name] = param
    return param
  end)
  -- described as it runs in the first repetition; later repetitions add their orders
  local repetition = self.current_repetition or 1
  if repetition == 1 then self.sweeps[#self.sweeps + 1] = sweep.describe(definition, points) end
  local labels = {}
  for n, point in ipairs(points) do labels[n] = point.label end
  local positions = self:iteration_order("sweep", at .. "\0" .. table.concat(labels, "\0"), at, labels)
  local sweep_started
  local depth = #self.point_stack
  local touched = {}
  local i = 0
  local closer = setmetatable({}, { __close = function()
    for j = #self.point_stack, depth + 1, -1 do self.point_stack[j] = nil end
    local ok, errors = self.config:restore(touched)
    if not ok then
      for _, message in ipairs(errors) do self:warn(message) end
    end
  end })
  local function next_point()
    self.point_stack[depth + 1] = nil
    i = i + 1
    local point = points[positions[i]]
    if not point then return nil end
    if i == 1 then
      sweep_started = sys.monotonic()
    elseif i == 2 and repetition == 1 then
      -- the first point's duration is the best estimate there is of the others'
      local took = sys.monotonic() - sweep_started
      local all = self.repeats > 1 and string.format(" (about %s for its points in all %d repetitions)",
        sweep.format_duration(took * (#points * self.repeats - 1)), self.repeats) or ""
      say(string.format("sweep: point 1 took %s; about %s for the remaining %d point%s%s", sweep.format_duration(took),
        sweep.format_duration(took * (#points - 1)), #points - 1, #points > 2 and "s" or "", all))
    end
    self.point_stack[depth + 1] = { point = point }
    say(string.format("-- point %d/%d: %s", i, #points, point.label))
    for _, option in ipairs(point.config) do
      touched[option.who .. "/" .. option.name] = true
      self.config:set(option.who, option.name, option.value)
    end
    local values = copy(self.values)
    for name, value in pairs(point.coordinates) do values[name] = value end
    return params.guard(values, self.scenario.params,
      { label = point.label, index = point.index, coordinates = point.coordinates })
  end
  if fn ~= nil then
    if type(fn) ~= "function" then fail_at(site, "s:sweep(sweep, fn): fn must be a function(point)") end
    local close <close> = closer
    for point in next_point do fn(point) end
    return
  end
  return next_point, nil, nil, closer
end

-- s:set_config(who, name, value): a Ceph option for the rest of the run (restored at the
-- end); value may be cm.DEFAULT to remove the setting.
function Run:set_config(who, name, value)
  local site = params.site(2)
  if type(who) ~= "string" or type(name) ~= "string" then
    fail_at(site, "s:set_config(who, name, value): who and name are strings, e.g. s:set_config(\"osd\", \"debug_ms\", \"0/0\")")
  end
  self:check_config_option("s:set_config", who, name, site)
  return self.config:set(who, name, value)
end

-- Refuses an option the cluster does not have at the caller's line, and warns about one
-- the daemons read only when they start.
function Run:check_config_option(what, who, name, site)
  local ok, help = pcall(sweep.check_option, self.config, what, who, name, site)
  if not ok then self:refuse_before_phases(help) end
  if help and help.can_update_at_runtime == false then
    self:option_checker().startup_only(who .. "/" .. name, what, site)
  end
end

function Run:get_config(who, name)
  local value, err = self.config:get(who, name)
  if value == nil then sys.fail(string.format("config %s/%s: %s", who, name, tostring(err))) end
  return value
end

-- s:with_config({["osd/debug_ms"] = "0/0"}, function() ... end): options set for fn only.
function Run:with_config(options, fn)
  local site = params.site(2)
  if type(options) ~= "table" or type(fn) ~= "function" then
    fail_at(site, "s:with_config({[\"WHO/OPTION\"] = value}, function() ... end)")
  end
  local keys, touched = {}, {}
  for key in pairs(options) do
    local who, name = sweep.config_dimension(tostring(key))
    if not who then fail_at(site, string.format("s:with_config: '%s' is not WHO/OPTION (e.g. \"osd/debug_ms\")", tostring(key))) end
    keys[#keys + 1] = key
  end
  table.sort(keys)
  -- every option checked before the first is set, and before fn runs
  for _, key in ipairs(keys) do
    local who, name = sweep.config_dimension(key)
    self:check_config_option("s:with_config", who, name, site)
  end
  local closer <close> = setmetatable({}, { __close = function()
    local ok, errors = self.config:restore(touched)
    if not ok then
      for _, message in ipairs(errors) do self:warn(message) end
    end
  end })
  for _, key in ipairs(keys) do
    local who, name = sweep.config_dimension(key)
    touched[key] = true
    self.config:set(who, name, options[key])
  end
  return fn()
end

-------------------------------------------------------------------------------------------
-- Comparisons

-- Phases of earlier runs' results folders, as records whose variant has run = <folder>.
local function load_previous(dir, site)
  if not sys.stat(dir .. "/results.json") then fail_at(site, string.format("compare: no results.json in %s", dir)) end
  local document, why = results.read_document(dir .. "/results.json", dir)
  if not document then fail_at(site, "compare: " .. why) end
  if type(document) ~= "table" then fail_at(site, string.format("compare: %s/results.json holds no results document", dir)) end
  local run = dir:gsub("/+$", ""):match("([^/]+)$")
  local records = {}
  for _, phase in ipairs(document.phases or {}) do
    local variant = copy(phase.variant)
    variant.run = run
    records[#records + 1] = { index = phase.index, name = phase.name, label = run .. " " .. tostring(phase.label),
      point = phase.point, variant = variant, result = phase.result, cluster = phase.cluster,
      repetition = phase.repetition }
  end
  return records
end

-- A comparison over the first `count` phases recorded (spec as s:compare takes it), raised
-- at the s:compare line `site` when it cannot be built.
function Run:build_comparison(spec, site, count)
  spec = copy(spec)
  local records = {}
  local this_run = (self.results_dir or "this-run"):gsub("/+$", ""):match("([^/]+)$")
  if spec.with ~= nil then
    local dirs = type(spec.with) == "table" and spec.with or { spec.with }
    for _, dir in ipairs(dirs) do
      for _, record in ipairs(load_previous(dir, site)) do records[#records + 1] = record end
    end
    spec.with = nil
  end
  for i = 1, count do
    local record = self.records[i]
    local r = copy(record)
    r.variant = copy(record.variant)
    r.variant.run = this_run
    records[#records + 1] = r
  end
  if type(spec.where) == "table" then
    -- a value of a typed sweep dimension matches however it is written (524288, "512K",
    -- "512KiB"): it is read and shown as the sweep showed its points
    local where = {}
    for dimension, wanted in pairs(spec.where) do
      local param = self.dimension_types and self.dimension_types[dimension]
      local parsed = param and param:parse(wanted)
      where[dimension] = parsed ~= nil and param:format(parsed) or wanted
    end
    spec.where = where
  end
  local ok, comparison = pcall(compare.build, records, spec)
  if not ok then
    if is_operator_error(comparison) then error(comparison, 0) end
    fail_at(site, tostring(comparison))
  end
  return comparison
end

-- A comparison built when first read: a table whose fields, pairs and length are those of
-- build()'s result, computed on first use; force() returns the real table.
local function deferred(build)
  local built
  local function force()
    if not built then built = build() end
    return built
  end
  local proxy = setmetatable({}, {
    __index = function(_, key) return force()[key] end,
    __newindex = function(_, key, value) force()[key] = value end,
    __pairs = function() return next, force(), nil end,
    __len = function() return #force() end,
  })
  return proxy, force
end

-- s:compare{by=, metrics=, phases=, baseline=, where=, with={dirs}, title=}
-- With repetitions, a comparison covers every repetition so far. It is printed and kept in
-- the results in the last repetition, which has them all; in the earlier ones it is only
-- returned (and kept for a run that stops before its last repetition). Repetitions after
-- the first build theirs only when the script reads it or the run needs it: so a run of
-- many repetitions does not build a comparison over all phases so far in each of them.
function Run:compare(spec)
  local site = params.site(2)
  spec = copy(spec)
  local count = #self.records
  local function build() return self:build_comparison(spec, site, count) end
  local repetition = self.current_repetition
  if repetition and repetition < self.repeats then
    local comparison, force
    if repetition == 1 then
      -- built at once: a mistake in spec is reported here, in the first repetition
      comparison = build()
      force = function() return comparison end
    else
      comparison, force = deferred(build)
    end
    self.interim_comparisons[#self.interim_comparisons + 1] = force
    return comparison
  end
  local comparison = build()
  self.comparisons[#self.comparisons + 1] = comparison
  for _, line in ipairs(compare.lines(comparison)) do say(line) end
  self:save(false)
  return comparison
end

-------------------------------------------------------------------------------------------
-- Results and the end of a run

function Run:failed_ops()
  local n = 0
  for _, record in ipairs(self.records) do
    local result = record.result
    if result then n = n + (result.errors or 0) + (result.verify_failures or 0) end
  end
  return n
end

-- A phase as results hold it.
local function phase_entry(record)
  local entry = copy(record)
  entry.dimensions = plain(record.dimensions)
  if next(entry.variant) == nil then entry.variant = nil end
  return entry
end

-- The results document. With progress = true, the small form written while the run goes
-- on: no phases, sweeps or comparisons (they are in the journal, results.lua), so that
-- writing it costs the same at the first phase and the millionth.
function Run:document(complete, progress)
  local scenario = self.scenario
  local values = {}
  for _, name in ipairs(scenario.params.names) do values[name] = plain(self.values[name]) end
  local pools = json.array()
  for i, pool in ipairs(self.pools) do
    pools[i] = { label = pool.label, name = pool.name, spec = plain(pool.spec), created = pool.created or false,
      reused = pool.created == false or nil, kept = pool.kept, deleted = pool.deleted or false,
      info = plain(pool.info), erasure_code_profile = plain(pool.erasure_code_profile),
      pg_autoscale_mode = pool.pg_autoscale_mode }
  end
  local phases, sweeps, comparisons, orders
  if not progress then
    phases = json.array()
    for i, record in ipairs(self.records) do phases[i] = phase_entry(record) end
    sweeps = json.array()
    for i, s in ipairs(self.sweeps) do sweeps[i] = s end
    comparisons = json.array()
    for i, c in ipairs(self.comparisons) do comparisons[i] = c end
    orders = json.array()
    for i, o in ipairs(self.orders) do orders[i] = o end
  end
  local warnings = json.array()
  for i, w in ipairs(self.warnings) do warnings[i] = w end
  local rados_ok, rados = pcall(require, "cephmark.rados")
  return {
    scenario = { name = scenario.name, description = scenario.description,
      script = self.context.script or scenario.site.file, defined_at = params.where(scenario.site) },
    complete = complete,
    status = self.status,
    signal = self.signal,
    exit_code = self.exit_code,
    error = self.error_message,
    started_at = self.started_at,
    finished_at = self.finished and now_iso() or nil,
    elapsed = sys.monotonic() - self.started_clock,
    host = sys.hostname(),
    software = { lua = _VERSION, librados = rados_ok and rados.version or nil },
    params = values,
    params_text = scenario.params:formatted(self.values),
    params_source = self.origins,
    params_file = self.context.params_file,
    cluster = self.facts,
    pools = pools,
    config = self.config:describe(),
    quiesce = self.config:describe_flags(),
    wait_clean = self.context.wait_clean or self.scenario.wait_clean,
    sweeps = sweeps,
    phases = phases,
    comparisons = comparisons,
    warnings = warnings,
    repeats = self.repeats,
    order = self.order,
    order_seed = self.seed,
    orders = orders,
    repetitions_completed = self.repetitions_completed,
    repetition = progress and self.current_repetition or nil,
    journal = progress and results.JOURNAL or nil,
    phases_done = progress and #self.records or nil,
  }
end

-- Writes the results folder; complete=false until the run has ended well. While the run
-- goes on, only what finished since the last save is written (appended to the journal and
-- series.csv) with the small results.json; once the run has finished, the whole folder.
function Run:save(complete)
  if not self.results_dir then return end
  if self.finished then
    results.write_run(self.results_dir, self:document(complete), {
      params_file = self.scenario.params:as_params_file(self.values),
      comparison_columns = compare.csv_columns,
      comparison_rows = compare.csv_rows(self.comparisons),
    })
  else
    local progress = self.progress_state
    if not progress then
      progress = { phases = 0, sweeps = 0, comparisons = 0, orders = 0 }
      self.progress_state = progress
    end
    local entries = {}
    for i = progress.orders + 1, #self.orders do entries[#entries + 1] = { order = self.orders[i] } end
    for i = progress.sweeps + 1, #self.sweeps do entries[#entries + 1] = { sweep = self.sweeps[i] } end
    for i = progress.phases + 1, #self.records do entries[#entries + 1] = { phase = phase_entry(self.records[i]) } end
    for i = progress.comparisons + 1, #self.comparisons do
      entries[#entries + 1] = { comparison = self.comparisons[i] }
    end
    results.write_progress(self.results_dir, self:document(complete, true), entries, progress,
      { params_file = self.scenario.params:as_params_file(self.values) })
    progress.sweeps, progress.phases, progress.comparisons = #self.sweeps, #self.records, #self.comparisons
    progress.orders = #self.orders
  end
  self.saved = true
end

-- Above this many phases, an interrupted run's folder gets no report.html (see finish).
local REPORT_AFTER_INTERRUPT_MAX = 1000

-- The finally path: runs whatever happened, each step on its own so one failure does not
-- skip the others, and a Ctrl-C landing in a step retries it once.
function Run:finish(ok, err)
  local interrupted = (not ok and is_interrupt(err)) or sys.interrupted()
  -- os.exit(n) in the run function, a hook or a worker: the run ends here, cleaned up
  local exit_code = sys.exit_requested()
  self.signal = interrupted and sys.interrupt_signal() or nil
  if self.current_record then
    -- the phase that was running when the error or interrupt came
    local record = self.current_record
    self.current_record = nil
    record.status = interrupted and "interrupted" or exit_code and "exited" or "error"
    record.error = error_message(err)
    self.records[#self.records + 1] = record
  end
  if interrupted then
    self.status = "interrupted"
  elseif exit_code then
    self.status = "exited"
    self.exit_code = exit_code
  elseif not ok then
    self.status = "error"
  elseif self:failed_ops() > 0 then
    self.status = "failed_ops"
  else
    self.status = "ok"
  end
  if not ok then self.error_message = error_message(err) end
  -- stopped before its last repetition ended: the comparisons built over the repetitions
  -- that did end are the ones kept (printed below, with the count)
  local stopped_in
  if self.current_repetition and self.repetitions_completed < self.repeats then
    stopped_in = self.current_repetition
    if #self.comparisons == 0 and self.complete_comparisons and #self.complete_comparisons > 0 then
      for _, force in ipairs(self.complete_comparisons) do
        local built, comparison = pcall(force)
        if built then self.comparisons[#self.comparisons + 1] = comparison end
      end
      self.show_comparisons = true
    end
  end

  local cleanup_errors = {}
  local function step(what, fn)
    local done, step_err = config.attempt(fn)
    if not done then
      local message = string.format("%s: %s", what, error_message(step_err))
      cleanup_errors[#cleanup_errors + 1] = message
      self:warn(message)
    end
  end

  -- The steps are safe to repeat: a SIGINT landing between two of them (its error is
  -- raised once) reruns the whole sequence, and what was done is skipped.
  local function cleanup()
    if self.coordinator then
      step("ending the run on the agents", function() self.coordinator:finish(interrupted) end)
      step("removing the agents' images", function() self:remove_agent_images() end)
    end
    if self.monitors then
      step("ending the run on the monitors", function() self.monitors:finish() end)
    end
    if self.telemetry then self.telemetry:close() end
    step("restoring config", function()
      local restored, errors = self.config:restore()
      if not restored then error(table.concat(errors, "; "), 0) end
    end)

    local keep_all = self.values.keep_pools
    -- objects left by writes in pools this run did not create
    for key, leftover in pairs(self.written) do
      local pool = self:pool_entry(leftover.pool)
      if pool and not pool.created then
        step("removing benchmark objects from " .. pool.name, function()
          local removed = leftover.handle:bench { op = "cleanup", run_name = leftover.run_name,
            prefix = leftover.prefix, threads = 64 }
          self.written[key] = nil
          say(string.format("pool %s: removed %d benchmark objects left by this run", pool.label, removed.ops))
        end)
      end
    end
    for label, handle in pairs(self.pool_handles) do
      pcall(handle.close, handle)
      self.pool_handles[label] = nil
    end
    for i = #self.pools, 1, -1 do
      local pool = self.pools[i]
      if (pool.created or pool.creating) and not pool.deleted and not pool.kept then
        if keep_all or pool.keep then
          pool.kept = true
          say(string.format("pool %s: kept %s (%s)", pool.label, pool.name,
            keep_all and "-p keep_pools=true" or "keep = true"))
        else
          step("deleting pool " .. pool.name, function()
            local cluster = self:cluster()
            if not pool.created and not cluster:pool_exists(pool.name) then return end
            if not pool.created then
              -- interrupted while creating: only a pool whose owner record is this run's
              local record = cluster:pool_owner(pool.name)
              if not record or tostring(record.run_id) ~= tostring(self:owner().run_id) then
                pool.creating = nil
                return
              end
            end
            -- the owner record is checked again: a pool is deleted only if it is this run's
            local deleted, derr = cluster:pool_delete(pool.name, { profile = pool.profile,
              owner = self:owner().run_id })
            if not deleted then error(derr, 0) end
            pool.deleted = true
            say(string.format("pool %s: deleted %s", pool.label, pool.name))
          end)
        end
      end
    end

    if #cleanup_errors > 0 and ok then
      self.status = "error"
      self.error_message = table.concat(cleanup_errors, "; ")
    end
    if self.show_comparisons then
      self.show_comparisons = nil
      for _, comparison in ipairs(self.comparisons) do
        for _, line in ipairs(compare.lines(comparison)) do say(line) end
      end
    end
    if stopped_in and self.repeats > 1 and not self.stop_announced then
      self.stop_announced = true
      local kept = self.repetitions_completed
      say(string.format("%s in repetition %d of %d: %d complete repetition%s kept",
        interrupted and "interrupted" or exit_code and "exited" or "failed", stopped_in, self.repeats, kept,
        kept == 1 and "" or "s"))
    end
    -- the hosts' side of the phases, once their last samples are in Prometheus
    step("reading Prometheus", function() prometheus.read_run(self, interrupted) end)
    self.finished = true
    if self.results_dir then
      if self.reached_run or #self.records > 0 then
        step("writing results", function() self:save(self.status == "ok" or self.status == "failed_ops") end)
        -- an interrupt must take effect within seconds: the report of a large run (about
        -- 1.3 ms per phase, most of the end's writing) is left to `cephmark report`
        local skip_report = interrupted and #self.records > REPORT_AFTER_INTERRUPT_MAX
        if self.saved and not self.reported and not skip_report then
          step("writing the report", function()
            local report = require "cephmark.cmd.report"
            local run = report.load(self.results_dir)
            local path = self.results_dir .. "/report.html"
            local written, werr = report.write({ run }, path, { title = "cephmark: " .. self.scenario.name,
              version = sys.version })
            if not written then error("cannot write " .. path .. ": " .. tostring(werr), 0) end
            self.reported = path
          end)
        end
        if self.saved and not self.announced then
          self.announced = true
          say("results: " .. self.results_dir)
          if self.reported then
            say("report: " .. self.reported)
          elseif skip_report then
            say(string.format("report: not written after an interrupt with %d phases; write it with `cephmark report %s`",
              #self.records, self.results_dir))
          end
        end
      elseif self.results_dir_created then
        -- nothing ran (refused before the run started): leave no empty folder behind
        pcall(sys.remove_tree, self.results_dir)
      end
    end
    if self.cluster_handle and not self.cluster_borrowed then
      pcall(self.cluster_handle.close, self.cluster_handle)
      self.cluster_handle = nil
    end
  end
  local cleaned, cleanup_err = config.attempt(cleanup)
  if not cleaned then self:warn("cleaning up: " .. error_message(cleanup_err)) end
  interrupted = interrupted or sys.interrupted()

  -- a stop signal wins over an error it caused (a killed command, a cut connection)
  if interrupted then sys.fail("interrupted", sys.EXIT_INTERRUPTED) end
  if exit_code then os.exit(exit_code) end
  if not ok then
    if is_operator_error(err) then error(err, 0) end
    sys.fail(tostring(err), sys.EXIT_USAGE)
  end
  if #cleanup_errors > 0 then sys.fail(table.concat(cleanup_errors, "; "), sys.EXIT_USAGE) end
  return {
    failed_ops = self:failed_ops(),
    status = self.status,
    results_dir = self.results_dir,
    phases = self.records,
    comparisons = self.comparisons,
  }
end

function Run:pool_entry(label)
  for _, pool in ipairs(self.pools) do
    if pool.label == label then return pool end
  end
  return nil
end

-- Read access for run functions and hooks.
function Run:results_dir_path() return self.results_dir end
function Run:phase_records() return self.records end
function Run:say(...) say(table.concat({ ... }, " ")) end

return M
