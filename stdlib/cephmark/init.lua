-- The `cephmark` module, what scenario scripts are written with:
--   local cm = require "cephmark"
--   return cm.scenario { name = ..., params = { threads = cm.integer(16, "ops in flight") },
--     pools = { ... }, run = function(s, p) s:phase("write", s:pool("bench"), {...}) end }
-- It gathers the scenario language from its parts: params (typed params), sweep (cm.sweep,
-- cm.zip), config (cm.DEFAULT) and scenario (cm.scenario, the Run object `s`). See
-- docs/dsl.md for the reference.

local config = require "cephmark.config"
local params = require "cephmark.params"
local scenario = require "cephmark.scenario"
local sweep = require "cephmark.sweep"

local cm = {}

-- cm.scenario{name=, description=, params=, pools=, hooks=, run=} -> a scenario; the
-- script returns it and `cephmark run` runs it.
function cm.scenario(spec)
  -- `return cm.scenario {...}` is a tail call, which leaves no frame for the caller's
  -- line; the scenario module then finds the line from the definition itself.
  local tail = debug.getinfo(1, "t").istailcall
  return scenario.define(spec, not tail and params.site(2) or nil)
end

-- Param types. Each records the line that declares it, for error messages, so they are
-- the params module's own functions (a wrapper would record this file instead).
cm.integer = params.integer
cm.number = params.number
cm.size = params.size
cm.duration = params.duration
cm.bool = params.bool
cm.string = params.string
cm.enum = params.enum
cm.list = params.list

-- cm.sweep(dimensions [, {order=, labels=}]): every combination of the dimensions' values.
-- In a run, its option names are checked against the cluster here, at the caller's line.
function cm.sweep(dimensions, options)
  return scenario.checked_sweep(sweep.new(dimensions, options, params.site(2)))
end

-- cm.zip(dimensions [, {order=, labels=}]): the i-th values of every dimension together.
function cm.zip(dimensions, options)
  local zipped = {}
  for k, v in pairs(options or {}) do zipped[k] = v end
  zipped.mode = "zip"
  return scenario.checked_sweep(sweep.new(dimensions, zipped, params.site(2)))
end

-- A config value meaning "no setting of our own": `ceph config rm WHO OPTION`.
cm.DEFAULT = config.DEFAULT

-- Hook and phase names (see docs/dsl.md).
cm.hooks = scenario.hooks
cm.phases = scenario.phases
for constant, name in pairs(scenario.hooks) do cm[constant] = name end

cm.is_scenario = scenario.is_scenario

return cm
