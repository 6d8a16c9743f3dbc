-- Sweeps: cm.sweep (the cartesian product of every dimension's values) and cm.zip (the
-- i-th values of all dimensions together), over scenario params and over Ceph config
-- options (a dimension named WHO/OPTION, e.g. "osd/debug_ms", which the scenario sets
-- through the monitors at each point). Each point carries its coordinates and a label, so
-- its results stay attached to them. Running a sweep is the scenario's job (s:sweep); the
-- check of its option names against the cluster is here (check).

local config = require "cephmark.config"
local params = require "cephmark.params"
local sys = require "cephmark.sys"

local M = {}

local Sweep = {}
Sweep.__index = Sweep

function M.is_sweep(value)
  return getmetatable(value) == Sweep
end

-- A dimension named WHO/OPTION is a Ceph config option ("osd/debug_ms",
-- "osd.0/osd_op_num_shards", "global/debug_ms"): `ceph config set WHO OPTION VALUE`.
function M.config_dimension(name)
  local who, option = name:match("^([^/]+)/([%w_]+)$")
  return who, option
end

-- config.DEFAULT, a table, is a value of its own here, never a list
local function is_list(value)
  return value ~= config.DEFAULT and params.is_list(value)
end

local function fail(site, message)
  sys.fail(params.where(site) .. ": " .. message)
end

-- new(dims, options, site) -> sweep. options: mode = "product" | "zip", order = {dim...}
-- (the first dimension varies slowest; default: alphabetical), labels = {one per point}.
function M.new(dims, options, site)
  options = options or {}
  local what = options.mode == "zip" and "zip" or "sweep"
  if type(dims) ~= "table" then
    fail(site, string.format("%s: expected a table of dimension = {values}, got %s", what, params.show(dims)))
  end
  if type(options) ~= "table" then
    fail(site, string.format("%s: options must be a table {order=, labels=}, got %s", what, params.show(options)))
  end
  for key in pairs(options) do
    if key ~= "mode" and key ~= "order" and key ~= "labels" then
      fail(site, string.format("%s: unknown option '%s' (options: mode, order, labels)", what, tostring(key)))
    end
  end
  local mode = options.mode or "product"
  if mode ~= "product" and mode ~= "zip" then
    fail(site, string.format("sweep: mode must be 'product' or 'zip', got %s", params.show(mode)))
  end
  local self = setmetatable({ mode = mode, values = {}, order = {}, site = site }, Sweep)
  for name, values in pairs(dims) do
    if type(name) ~= "string" then
      fail(site, string.format("%s: dimensions are named (threads = {1, 4}), got a value at index %s",
        what, tostring(name)))
    end
    if type(values) == "table" and values ~= config.DEFAULT and not is_list(values) then
      fail(site, string.format("%s: '%s' must be a list of values, got a mapping", what, name))
    end
    if not is_list(values) then values = { values } end
    if #values == 0 then
      fail(site, string.format("%s: '%s' has no values", what, name))
    end
    self.values[name] = values
    self.order[#self.order + 1] = name
  end
  if #self.order == 0 then
    fail(site, string.format("%s: no dimensions; give at least one, e.g. cm.%s { threads = {1, 4, 16} }",
      what, what))
  end
  table.sort(self.order)
  if options.order then
    if not is_list(options.order) or #options.order ~= #self.order then
      fail(site, string.format("%s: order must list every dimension once: %s", what,
        table.concat(self.order, ", ")))
    end
    local seen = {}
    for _, name in ipairs(options.order) do
      if not self.values[name] or seen[name] then
        fail(site, string.format("%s: order must list every dimension once: %s (got '%s')", what,
          table.concat(self.order, ", "), tostring(name)))
      end
      seen[name] = true
    end
    self.order = { table.unpack(options.order) }
  end
  if mode == "zip" then
    local first = self.order[1]
    for _, name in ipairs(self.order) do
      if #self.values[name] ~= #self.values[first] then
        fail(site, string.format("zip: '%s' has %d values but '%s' has %d; zipped dimensions need as many values each",
          first, #self.values[first], name, #self.values[name]))
      end
    end
    self.count = #self.values[first]
  else
    self.count = 1
    for _, name in ipairs(self.order) do self.count = self.count * #self.values[name] end
  end
  if options.labels ~= nil then
    if not is_list(options.labels) or #options.labels ~= self.count then
      fail(site, string.format("%s: labels must name every point: %d labels for %d points", what,
        is_list(options.labels) and #options.labels or 0, self.count))
    end
    self.labels = {}
    for i, label in ipairs(options.labels) do self.labels[i] = tostring(label) end
  end
  return self
end

-- "did you mean" for a checked option, or nothing.
local function meant(suggestion)
  return suggestion and string.format(" (did you mean '%s'?)", suggestion) or ""
end

-- check_option(session, what, who, option, site) refuses WHO/OPTION when the section is
-- not one or the cluster has no such option, at the line that names it; it returns the
-- option's `config help` (nil when the monitors could not be asked).
function M.check_option(session, what, who, option, site)
  local help, problem, suggestion = session:check_option(who, option)
  if help == false then
    fail(site, string.format("%s: '%s/%s': %s%s", what, who, option, problem, meant(suggestion)))
  end
  return help
end

-- check(sweep, checker) refuses, at the sweep's line and before any of its points runs, a
-- dimension naming a Ceph option the cluster does not have (WHO/OPTION), and one naming an
-- option without WHO/: that sets nothing in the cluster, and its points would differ in
-- nothing but their labels. checker fields:
--   options()          the config session, connecting if need be (WHO/OPTION names are
--                      about to be set anyway)
--   connected()        the config session if the cluster is already connected, else nil:
--                      free names are checked only then, so a run on the null target
--                      never needs the monitors
--   own(name)          whether the scenario declares a param of that name (then the name
--                      is the scenario's own, whatever Ceph calls its options)
--   startup_only(name, what, site)  told about an option the daemons read only when they
--                      start
function M.check(self, checker)
  local what = self.mode == "zip" and "zip" or "sweep"
  for _, name in ipairs(self.order) do
    local who, option = M.config_dimension(name)
    if who then
      local help = M.check_option(checker.options(), what, who, option, self.site)
      if help and help.can_update_at_runtime == false then checker.startup_only(name, what, self.site) end
    elseif name:match("^[%w_]+$") and not checker.own(name) then
      local session = checker.connected()
      local help = session and session:option_help(name)
      if help then
        fail(self.site, string.format(
          "%s: '%s' is a Ceph option: a dimension sets it in the cluster only when named WHO/OPTION (did you mean '%s/%s'?); to sweep a value the scenario reads itself under this name, declare it in params",
          what, name, config.likely_section(name, help), name))
      end
    end
  end
end

-- points(sweep, type_of) -> array of {index, coordinates, labels, label, config}
-- type_of(dimension, values) returns the Param that parses and formats the dimension's values
-- (the scenario passes its params), or nil for untyped values.
function M.points(self, type_of)
  type_of = type_of or function() return nil end
  local typed, shown = {}, {}
  for _, name in ipairs(self.order) do
    local param = not M.config_dimension(name) and type_of(name, self.values[name]) or nil
    typed[name], shown[name] = {}, {}
    for i, value in ipairs(self.values[name]) do
      local parsed = value
      if value == config.DEFAULT then
        if not M.config_dimension(name) then
          fail(self.site, string.format("sweep: '%s': cm.DEFAULT only applies to Ceph config options (WHO/OPTION)", name))
        end
      elseif param then
        local err
        parsed, err = param:parse(value)
        if parsed == nil then
          fail(self.site, string.format("sweep: '%s' value %d: %s", name, i, err))
        end
      end
      typed[name][i] = parsed
      if value == config.DEFAULT then
        shown[name][i] = "default"
      elseif param then
        shown[name][i] = param:format(parsed)
      else
        shown[name][i] = tostring(parsed)
      end
    end
  end
  local points = {}
  local function add(indexes)
    local point = { index = #points + 1, coordinates = {}, labels = {}, config = {}, order = self.order }
    local parts = {}
    for d, name in ipairs(self.order) do
      local i = indexes[d]
      point.coordinates[name] = typed[name][i]
      point.labels[name] = shown[name][i]
      parts[#parts + 1] = name .. "=" .. shown[name][i]
      local who, option = M.config_dimension(name)
      if who then
        point.config[#point.config + 1] = { who = who, name = option, value = typed[name][i] }
      end
    end
    point.label = self.labels and self.labels[point.index] or table.concat(parts, " ")
    points[#points + 1] = point
  end
  if self.mode == "zip" then
    for i = 1, self.count do
      local indexes = {}
      for d = 1, #self.order do indexes[d] = i end
      add(indexes)
    end
  else
    local indexes = {}
    local function walk(d)
      if d > #self.order then return add(indexes) end
      for i = 1, #self.values[self.order[d]] do
        indexes[d] = i
        walk(d + 1)
      end
    end
    walk(1)
  end
  return points
end

-- Sweeps above this many points need a confirmation (a terminal's "y", or `cephmark run
-- --yes`). Each point runs at least one phase, typically of 10 s or more, and adds a few
-- KiB to the results: 1000 points is hours of cluster time and megabytes of results, while
-- the sweeps people mean to run (4 thread counts x 5 block sizes x a few pools) stay far
-- below. A sweep far above it is most often a mistake: a list where a value was meant, a
-- dimension swept twice.
M.CONFIRM_ABOVE = 1000

-- "threads 4 x block_size 3" (product) or "zip of block_size, threads" (zip).
function M.shape(self)
  local parts = {}
  for i, name in ipairs(self.order) do
    parts[i] = self.mode == "zip" and name or string.format("%s %d", name, #self.values[name])
  end
  if self.mode == "zip" then return "zip of " .. table.concat(parts, ", ") end
  return table.concat(parts, " x ")
end

-- A duration for people: "45 s", "12 min", "3.5 h", "2.1 days".
function M.format_duration(seconds)
  if seconds < 1 then return string.format("%.2f s", seconds) end
  if seconds < 10 then return string.format("%.1f s", seconds) end
  if seconds < 90 then return string.format("%.0f s", seconds) end
  if seconds < 90 * 60 then return string.format("%.0f min", seconds / 60) end
  if seconds < 48 * 3600 then return string.format("%.1f h", seconds / 3600) end
  return string.format("%.1f days", seconds / 86400)
end

-- Asks before something of more than CONFIRM_ABOVE points runs: on a terminal, a question
-- answered with y; otherwise (a pipe, a CI job) a refusal naming --yes. site (the line that
-- asked for it) may be nil: then the refusal names no line.
local function ask(what, site)
  local where = site and (params.where(site) .. ": ") or ""
  if not sys.isatty(0) then
    sys.fail(string.format("%s%s; confirm it with `cephmark run --yes` (stdin is not a terminal to ask on)", where, what))
  end
  io.stdout:flush()
  io.stderr:write(what .. "; run them all? [y/N] ")
  io.stderr:flush()
  local answer = io.stdin:read("l")
  if not answer or not answer:match("^%s*[yY][eE]?[sS]?%s*$") then
    sys.fail(string.format("%s%s, not confirmed", where, what))
  end
end

-- Asks before a sweep above CONFIRM_ABOVE points runs, counting its points in every
-- repetition (`repeats`, 1 if nil). `yes` is the run's --yes.
function M.confirm(self, yes, site, repeats)
  repeats = repeats or 1
  if self.count * repeats <= M.CONFIRM_ABOVE or yes then return end
  local what
  if repeats > 1 then
    what = string.format("sweep: %d points (%s) x %d repetitions = %d is more than %d", self.count, M.shape(self),
      repeats, self.count * repeats, M.CONFIRM_ABOVE)
  else
    what = string.format("sweep: %d points (%s) is more than %d", self.count, M.shape(self), M.CONFIRM_ABOVE)
  end
  ask(what, site)
end

-- Asks before a run of more than CONFIRM_ABOVE repetitions, each of which runs at least one
-- phase. site is the scenario's when its `repeats` asked for them, nil for --repeats.
function M.confirm_repeats(repeats, yes, site)
  if repeats <= M.CONFIRM_ABOVE or yes then return end
  ask(string.format("%d repetitions (%s) is more than %d", repeats,
    site and string.format("repeats = %d", repeats) or string.format("--repeats %d", repeats), M.CONFIRM_ABOVE), site)
end

-- The sweep as results record it: its mode, dimensions and values (formatted).
function M.describe(self, points)
  local json = require "cephmark.json"
  local out = { mode = self.mode, dimensions = json.array(), points = json.array() }
  for i, name in ipairs(self.order) do out.dimensions[i] = name end
  for i, point in ipairs(points) do
    out.points[i] = { index = point.index, label = point.label, coordinates = point.labels }
  end
  return out
end

return M
