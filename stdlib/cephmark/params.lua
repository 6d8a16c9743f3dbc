-- Typed scenario parameters: the constructors scenarios declare them with (cm.integer,
-- cm.size, cm.duration, cm.enum, cm.bool, cm.string, cm.number, cm.list), shorthand
-- inference from plain values (`threads = 16`), parsing of `-p` strings and YAML values,
-- the precedence defaults < --params FILE.yaml < -p, and the help listing. Every error
-- names where the bad value came from (the -p argument, the YAML file and line) and where
-- the param is defined.

local sys = require "cephmark.sys"

local M = {}

local Param = {}
Param.__index = Param

-- Where the caller of a constructor is: the line that declares a param, a sweep or a
-- scenario, so that errors point at the scenario file rather than at the stdlib.
function M.site(level)
  level = level + 1
  local info = debug.getinfo(level, "Sl")
  -- a tail call leaves a C function (pcall) as the caller: the nearest Lua frame is
  -- the best place left to point at
  while info and info.what == "C" do
    level = level + 1
    info = debug.getinfo(level, "Sl")
  end
  if not info then return { file = "?", line = 0 } end
  local file = info.source:sub(1, 1) == "@" and info.source:sub(2) or info.short_src
  return { file = file, line = info.currentline }
end

function M.where(site)
  if not site then return "?" end
  return string.format("%s:%d", site.file, site.line or 0)
end

function M.is_param(value)
  return getmetatable(value) == Param
end

-- A short Lua-ish rendering of a bad value for messages: strings quoted, tables named.
local function show(value)
  if type(value) == "string" then return "'" .. value .. "'" end
  if type(value) == "table" then
    if value[1] ~= nil or next(value) == nil then return "a list" end
    return "a mapping"
  end
  if type(value) == "boolean" or type(value) == "number" then return tostring(value) end
  if value == nil then return "nothing" end
  if value == require("cephmark.json").null then return "null" end
  return "a " .. type(value)
end
M.show = show

local function trim(text)
  return (text:gsub("^%s+", ""):gsub("%s+$", ""))
end

-- Sizes print in the largest binary unit that divides them exactly (4194304 -> "4M"), the
-- way they are written on the command line, so help and params.yaml read back the same.
function M.format_size(bytes)
  if math.type(bytes) ~= "integer" then return tostring(bytes) end
  local units = { "K", "M", "G", "T", "P" }
  local value, unit = bytes, ""
  for _, u in ipairs(units) do
    if value == 0 or value % 1024 ~= 0 then break end
    value, unit = value // 1024, u
  end
  return tostring(value) .. unit
end

function M.format_duration(seconds)
  if type(seconds) ~= "number" then return tostring(seconds) end
  if seconds >= 3600 and seconds % 3600 == 0 then return string.format("%dh", seconds // 3600) end
  if seconds >= 60 and seconds % 60 == 0 then return string.format("%dm", seconds // 60) end
  if seconds == math.floor(seconds) then return string.format("%ds", math.floor(seconds)) end
  local ms = seconds * 1000
  if ms == math.floor(ms) then return string.format("%dms", math.floor(ms)) end
  return string.format("%gs", seconds)
end

-- The kinds: parse(param, value) -> typed value | nil, message; format(param, value) -> text.
local kinds = {}

-- A number from a param value: a finite Lua number, or decimal text. Lua's tonumber would
-- also read "0x10", and "1e309" as infinity; those come back as nil and the reason.
local function number_from(value)
  if type(value) == "number" then
    if value ~= value or value == math.huge or value == -math.huge then return nil, "out of range" end
    return value
  end
  if type(value) ~= "string" then return nil end
  local text = trim(value)
  if text:match("^[+-]?%d+$") then return tonumber(text) end -- exact for integers that fit
  local n, reason = sys.parse_number(text)
  if n then return n end
  return nil, reason ~= "not a number" and reason or nil
end

local function because(reason)
  return reason and (" (" .. reason .. ")") or ""
end

local function check_bounds(param, value, shown)
  shown = shown or tostring(value)
  if param.min ~= nil and value < param.min then
    return nil, string.format("must be at least %s, got %s", param:format(param.min), shown)
  end
  if param.max ~= nil and value > param.max then
    return nil, string.format("must be at most %s, got %s", param:format(param.max), shown)
  end
  return value
end

kinds.integer = {
  parse = function(param, value)
    local n, reason = number_from(value)
    local integer = n and math.tointeger(n)
    if not integer then return nil, "expected an integer, got " .. show(value) .. because(reason) end
    return check_bounds(param, integer)
  end,
  format = function(_, value) return tostring(value) end,
}

kinds.number = {
  parse = function(param, value)
    local n, reason = number_from(value)
    if not n then return nil, "expected a number, got " .. show(value) .. because(reason) end
    return check_bounds(param, n)
  end,
  format = function(_, value) return string.format("%g", value) end,
}

kinds.size = {
  parse = function(param, value)
    if type(value) == "number" then
      local integer = math.tointeger(value)
      if not integer or integer < 0 then
        return nil, "expected a size (bytes, or a number with K, M, G, T or P), got " .. show(value)
      end
      value = integer
    elseif type(value) == "string" then
      local bytes, err = sys.parse_size(trim(value))
      if not bytes then return nil, err end
      value = bytes
    else
      return nil, "expected a size (bytes, or a number with K, M, G, T or P), got " .. show(value)
    end
    return check_bounds(param, value, M.format_size(value))
  end,
  format = function(_, value) return M.format_size(value) end,
}

kinds.duration = {
  parse = function(param, value)
    if type(value) ~= "number" and type(value) ~= "string" then
      return nil, "expected a duration (seconds, or a number with s, ms, m or h), got " .. show(value)
    end
    local seconds, err = sys.parse_duration(type(value) == "string" and trim(value) or value)
    if not seconds then return nil, err end
    if seconds == math.huge then return nil, "duration " .. show(value) .. " is too long" end
    if seconds == 0 and param.positive then return nil, "must be more than 0s, got 0s" end
    return check_bounds(param, seconds, M.format_duration(seconds))
  end,
  format = function(_, value) return M.format_duration(value) end,
}

local truth = { ["true"] = true, yes = true, on = true, ["1"] = true,
  ["false"] = false, no = false, off = false, ["0"] = false }

kinds.bool = {
  parse = function(_, value)
    if type(value) == "boolean" then return value end
    if type(value) == "string" or math.type(value) == "integer" then
      local b = truth[trim(tostring(value)):lower()]
      if b ~= nil then return b end
    end
    return nil, "expected true or false, got " .. show(value)
  end,
  format = function(_, value) return tostring(value) end,
}

kinds.string = {
  parse = function(_, value)
    if type(value) == "string" then return value end
    if type(value) == "number" then return tostring(value) end
    return nil, "expected a string, got " .. show(value)
  end,
  format = function(_, value) return tostring(value) end,
}

kinds.enum = {
  parse = function(param, value)
    local text = (type(value) == "string" or type(value) == "number") and trim(tostring(value))
    for _, choice in ipairs(param.choices) do
      if text == choice then return choice end
    end
    return nil, string.format("expected one of %s, got %s", table.concat(param.choices, ", "),
      show(value))
  end,
  format = function(_, value) return tostring(value) end,
}

-- is_list(value) -> whether value is a table whose keys are exactly 1..n (an empty table is one)
local function is_list(value)
  if type(value) ~= "table" then return false end
  local n = 0
  for _ in pairs(value) do n = n + 1 end
  return n == #value
end
M.is_list = is_list

-- The element param of every list value parsed here, by the list's identity: a sweep over
-- p.sizes then types its values as sizes, whatever the list param is called. Weak keys:
-- a list forgotten by the scenario is forgotten here.
local list_elements = setmetatable({}, { __mode = "k" })

-- element_type(value) -> the element Param of a list a list param parsed, or nil.
function M.element_type(value)
  return type(value) == "table" and list_elements[value] or nil
end

kinds.list = {
  -- A list comes from a YAML sequence, a Lua array, or a comma-separated string ("1,4,16");
  -- a single scalar is a list of one.
  parse = function(param, value)
    local items
    if type(value) == "string" then
      items = {}
      if trim(value) ~= "" then
        for item in (value .. ","):gmatch("([^,]*),") do items[#items + 1] = trim(item) end
      end
    elseif is_list(value) then
      items = value
    elseif type(value) == "number" or type(value) == "boolean" then
      items = { value }
    else
      return nil, "expected a list (a YAML sequence or comma-separated values), got " .. show(value)
    end
    if #items < (param.min_count or 1) then
      return nil, "expected at least one value, got an empty list"
    end
    local out = {}
    for i, item in ipairs(items) do
      local parsed, err = param.element:parse(item)
      if parsed == nil then
        if #items == 1 then return nil, err end
        return nil, string.format("value %d: %s", i, err)
      end
      out[i] = parsed
    end
    list_elements[out] = param.element
    return out
  end,
  format = function(param, value)
    local parts = {}
    for i, item in ipairs(value) do parts[i] = param.element:format(item) end
    return table.concat(parts, ",")
  end,
}

function Param:parse(value)
  return kinds[self.kind].parse(self, value)
end

function Param:format(value)
  if value == nil then return "" end
  return kinds[self.kind].format(self, value)
end

-- The type as the help listing shows it: "integer", "integer 1..65536", "size",
-- "read|write", "list of size".
function Param:type_name()
  if self.kind == "enum" then return table.concat(self.choices, "|") end
  if self.kind == "list" then return "list of " .. self.element:type_name() end
  if self.min ~= nil and self.max ~= nil then
    return string.format("%s %s..%s", self.kind, self:format(self.min), self:format(self.max))
  elseif self.min ~= nil then
    return string.format("%s >= %s", self.kind, self:format(self.min))
  elseif self.max ~= nil then
    return string.format("%s <= %s", self.kind, self:format(self.max))
  end
  return self.kind
end

local option_keys = { default = true, description = true, min = true, max = true,
  optional = true, min_count = true }

-- The kinds whose values have an order, so min and max mean something.
local ordered_kinds = { integer = true, number = true, size = true, duration = true }

-- A list's bounds are its elements' bounds: the element param is copied with the tighter
-- of its own bounds and the list's, so one declaration checks every value and --help
-- shows them ("list of integer >= 1").
local function bounded_element(element, bounds)
  local bounded = setmetatable({}, Param)
  for k, v in pairs(element) do bounded[k] = v end
  if bounds.min ~= nil and (bounded.min == nil or bounds.min > bounded.min) then bounded.min = bounds.min end
  if bounds.max ~= nil and (bounded.max == nil or bounds.max < bounded.max) then bounded.max = bounds.max end
  -- a declared min says whether 0 is a duration, as for a duration param of its own
  if bounded.min ~= nil then bounded.positive = nil end
  return bounded
end

-- The constructors share one calling convention: cm.integer(default, description,
-- {min=, max=}) or cm.integer{default=, description=, min=, max=}. A param without a
-- default is required unless optional=true.
local function make(kind, site, default, description, options, element)
  local param = setmetatable({ kind = kind, site = site, element = element }, Param)
  if type(default) == "table" and not is_list(default) and not M.is_param(default) then
    options, default, description = default, nil, nil
    for key in pairs(options) do
      if not option_keys[key] then
        sys.fail(string.format("%s: %s param: unknown option '%s' (options: default, description, min, max, optional)",
          M.where(site), kind, tostring(key)))
      end
    end
    default, description = options.default, options.description
  end
  options = options or {}
  if description ~= nil and type(description) ~= "string" then
    sys.fail(string.format("%s: %s param: the description must be a string, got %s", M.where(site),
      kind, show(description)))
  end
  param.raw_default = default
  param.description = description
  param.optional = options.optional
  param.min_count = options.min_count
  -- bounds are given in the param's own units ("4K" for a size), a list's in its
  -- elements' units
  local bounds = {}
  local bounded_kind = kind == "list" and element.kind or kind
  for _, bound in ipairs { "min", "max" } do
    if options[bound] ~= nil then
      if not ordered_kinds[bounded_kind] then
        sys.fail(string.format("%s: %s param: %s applies to integers, numbers, sizes and durations (and lists of them), not to a %s",
          M.where(site), kind == "list" and "list of " .. bounded_kind or kind, bound, bounded_kind))
      end
      local value, err = kinds[bounded_kind].parse({ kind = bounded_kind }, options[bound])
      if value == nil then
        sys.fail(string.format("%s: %s param: %s: %s", M.where(site), kind, bound, err))
      end
      bounds[bound] = value
    end
  end
  if kind == "list" then
    if next(bounds) then param.element = bounded_element(element, bounds) end
  else
    param.min, param.max = bounds.min, bounds.max
  end
  -- A duration is a length of time: 0 would be a phase of nothing or a timeout that waits
  -- for nothing, and a bench given seconds = 0 would run its default length instead. So 0
  -- is refused, unless the param declares a min (min = 0: zero means something, e.g. no
  -- warm-up) or defaults to 0 itself.
  if kind == "duration" and param.min == nil then
    local zero_default = default ~= nil and kinds.duration.parse({ kind = kind }, default) == 0
    param.positive = not zero_default
  end
  return param
end

for _, kind in ipairs { "integer", "number", "size", "duration", "bool", "string" } do
  M[kind] = function(default, description, options)
    return make(kind, M.site(2), default, description, options)
  end
end

-- cm.enum({"a", "b"}, "a", "description")
function M.enum(choices, default, description)
  local site = M.site(2)
  if not is_list(choices) or #choices == 0 then
    sys.fail(M.where(site) .. ": enum param: expected a list of choices, e.g. cm.enum({\"read\", \"write\"}, \"read\")")
  end
  local param = make("enum", site, default, description)
  param.choices = {}
  for i, choice in ipairs(choices) do param.choices[i] = tostring(choice) end
  return param
end

-- cm.list(cm.size(), {"4K", "64K"}, "description"): the element param's own default is
-- not used; its kind and bounds check every element.
function M.list(element, default, description, options)
  local site = M.site(2)
  if not M.is_param(element) then
    sys.fail(M.where(site) .. ": list param: the first argument is the element type, e.g. cm.list(cm.size(), {\"4K\", \"64K\"})")
  end
  if element.kind == "list" then
    sys.fail(M.where(site) .. ": list param: lists of lists are not supported")
  end
  return make("list", site, default, description, options, element)
end

-- A string written with a size suffix in capitals ("4M", "64K", "1GiB") is a size; one
-- with a time unit ("10s", "500ms", "2m", "1h") is a duration. Lower-case "m" is minutes,
-- so "4m" never silently becomes 4 MiB.
local function infer_string(text)
  if text:match("^%d+%.?%d*[KMGTP]i?B?$") then return "size" end
  if text:match("^%d+%.?%d*ms$") or text:match("^%d+%.?%d*[smh]$") then return "duration" end
  return "string"
end

-- infer(value, site) -> a Param: the shorthand `threads = 16` is an integer param with
-- default 16; `block_size = "4M"` a size; `verify = true` a bool; {1, 4, 16} a list.
function M.infer(value, site)
  if M.is_param(value) then return value end
  local kind
  local t = type(value)
  if math.type(value) == "integer" then
    kind = "integer"
  elseif t == "number" then
    kind = "number"
  elseif t == "boolean" then
    kind = "bool"
  elseif t == "string" then
    kind = infer_string(value)
  elseif t == "table" and is_list(value) and #value > 0 then
    return make("list", site, value, nil, nil, M.infer(value[1], site))
  else
    return nil, "a param is a plain value (16, \"4M\", \"10s\", true, {1, 4}) or a cm.<type>(...) declaration, got " .. show(value)
  end
  return make(kind, site, value)
end

-- Edit distance, for "did you mean 'threads'?" on a mistyped name; two neighbouring
-- letters swapped ("raed") count as one edit, as they are one slip of the fingers.
-- With a limit, gives up (returning limit + 1) as soon as a row's smallest value exceeds
-- it: no later row can then come back under it (a row's smallest value is at most one
-- more than the row before's, so a swap reaching back two rows cannot undercut it).
local function distance(a, b, limit)
  local before, previous, current = {}, {}, {}
  for j = 0, #b do previous[j] = j end
  for i = 1, #a do
    current[0] = i
    local row_min = i
    local ai = a:byte(i)
    for j = 1, #b do
      local bj = b:byte(j)
      local d = previous[j - 1] + (ai == bj and 0 or 1)
      if previous[j] + 1 < d then d = previous[j] + 1 end
      if current[j - 1] + 1 < d then d = current[j - 1] + 1 end
      if i > 1 and j > 1 and ai == b:byte(j - 1) and a:byte(i - 1) == bj and before[j - 2] + 1 < d then
        d = before[j - 2] + 1
      end
      current[j] = d
      if d < row_min then row_min = d end
    end
    if limit and row_min > limit then return limit + 1 end
    before, previous, current = previous, current, before
  end
  return previous[#b]
end

-- The candidate nearest to a mistyped name, or nil when none is near enough.
function M.closest(name, names)
  local best, best_distance
  local limit = math.max(1, #name // 3)
  for _, candidate in ipairs(names) do
    -- the distance is at least the difference in length: most of a long list (the
    -- cluster's ~1700 option names) is passed over without computing it
    if math.abs(#candidate - #name) <= limit then
      local d = distance(name, candidate, limit)
      if d <= limit and (not best_distance or d < best_distance) then
        best, best_distance = candidate, d
      end
    end
  end
  return best
end

function M.suggest(name, names)
  local best = M.closest(name, names)
  return best and string.format(" (did you mean '%s'?)", best) or ""
end

-- A set of declared params: an ordered list (alphabetical: Lua tables have no order, and
-- help and results must be stable) plus lookup by name.
local Set = {}
Set.__index = Set

-- declare(spec, site, builtins) -> set. spec maps names to Params or shorthand values;
-- every default is checked here, so a bad default fails at the scenario's definition.
function M.declare(spec, site, builtins)
  local set = setmetatable({ by_name = {}, names = {}, site = site }, Set)
  local function add(name, value, is_builtin)
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
      sys.fail(string.format("%s: param names are identifiers (letters, digits, _), got %s",
        M.where(site), show(name)))
    end
    local inferred, err = M.infer(value, site)
    if not inferred then sys.fail(string.format("%s: param '%s': %s", M.where(site), name, err)) end
    -- a shared Param object (one cm.size() used for two names) gets a copy per name
    local param = setmetatable({}, Param)
    for k, v in pairs(inferred) do param[k] = v end
    param.name = name
    param.builtin = is_builtin
    if param.raw_default ~= nil then
      local default, derr = param:parse(param.raw_default)
      if default == nil then
        sys.fail(string.format("%s: param '%s': default %s: %s", M.where(param.site), name,
          show(param.raw_default), derr))
      end
      param.default = default
    end
    set.by_name[name] = param
    set.names[#set.names + 1] = name
  end
  if spec ~= nil and type(spec) ~= "table" then
    sys.fail(string.format("%s: params must be a table of name = value or cm.<type>(...), got %s",
      M.where(site), show(spec)))
  end
  for name, value in pairs(spec or {}) do
    if builtins and builtins[name] then
      sys.fail(string.format("%s: param '%s' is built in (every scenario has it); choose another name",
        M.where(site), name))
    end
    add(name, value, false)
  end
  for name, value in pairs(builtins or {}) do add(name, value, true) end
  table.sort(set.names)
  return set
end

function Set:get(name) return self.by_name[name] end

function Set:valid_names()
  return table.concat(self.names, ", ")
end

-- Where a top-level key sits in a YAML file's text, for messages: block mappings put
-- their keys at column 1, quoted or not. Flow-style files fall back to line 1.
function M.yaml_key_lines(text)
  local lines = {}
  local number = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    number = number + 1
    local key = line:match("^([%w_%-%.]+)%s*:") or line:match("^\"([^\"]*)\"%s*:") or
      line:match("^'([^']*)'%s*:")
    if key and not lines[key] then lines[key] = number end
  end
  return lines
end

-- Reads a --params file: a YAML mapping of param names to values. Returns the values and
-- the line of each key. An empty file is no params.
function M.read_file(path)
  local ok_yaml, yaml = pcall(require, "cephmark.yaml")
  if not ok_yaml then
    sys.fail("--params " .. path .. ": this cephmark has no YAML support (module cephmark.yaml)")
  end
  local text, read_err = sys.read_file(path)
  if not text then
    local reason = tostring(read_err):sub(#("read " .. path .. ": ") + 1)
    sys.fail(string.format("cannot read the --params file %s: %s", path, reason))
  end
  sys.note_input(path) -- params.yaml written into a results folder must never replace it
  local value, err = yaml.decode(text, path)
  if err then sys.fail(err) end
  if value == nil then return {}, {} end
  if type(value) ~= "table" or (is_list(value) and #value > 0) then
    sys.fail(string.format("%s:1: expected a mapping of param names to values (threads: 16), got %s",
      path, show(value)))
  end
  return value, M.yaml_key_lines(text)
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

-- A params table that refuses to read an undeclared name, so a typo in the scenario's
-- own code (p.thread) fails at once with the valid names instead of running with nil.
-- extra holds read-only fields consulted after the values (a sweep point's label).
function M.guard(values, set, extra)
  return setmetatable(values, {
    __index = function(_, key)
      if extra and extra[key] ~= nil then return extra[key] end
      if set.by_name[key] then return nil end
      error(string.format("unknown param '%s'%s; params: %s", tostring(key),
        M.suggest(tostring(key), set.names), set:valid_names()), 2)
    end,
  })
end

-- " (did you mean ...)" for an unknown param; for the run's own settings that are not params
-- (repeats, order), where they are set instead.
local run_settings = {
  repeats = " (repetitions are not a param: `cephmark run SCRIPT --repeats N`, or repeats = N in cm.scenario)",
  order = " (the order of variants is not a param: `cephmark run SCRIPT --order fixed`, or order = \"fixed\" in cm.scenario)",
}
local function unknown_hint(key, names)
  return run_settings[key] or M.suggest(key, names)
end

-- resolve(set, {file=path, cli={name=text}}) -> values, origins
-- Precedence: the declared defaults, then the --params file, then -p.
function Set:resolve(sources)
  sources = sources or {}
  local values, origins = {}, {}
  for _, name in ipairs(self.names) do
    values[name] = self.by_name[name].default
    origins[name] = "default"
  end
  if sources.file then
    local file_values, lines = M.read_file(sources.file)
    for _, key in ipairs(sorted_keys(file_values)) do
      local where = string.format("%s:%d", sources.file, lines[key] or 1)
      local param = self.by_name[key]
      if not param then
        sys.fail(string.format("%s: unknown param '%s'%s; valid params: %s", where, tostring(key),
          unknown_hint(tostring(key), self.names), self:valid_names()))
      end
      local value, err = param:parse(file_values[key])
      if value == nil then sys.fail(string.format("%s: %s: %s", where, key, err)) end
      values[key], origins[key] = value, "file"
    end
  end
  for _, key in ipairs(sorted_keys(sources.cli or {})) do
    local text = sources.cli[key]
    local param = self.by_name[key]
    if not param then
      sys.fail(string.format("%s: -p %s=%s: unknown param '%s'%s; valid params: %s",
        M.where(self.site), key, text, key, unknown_hint(key, self.names), self:valid_names()))
    end
    local value, err = param:parse(text)
    if value == nil then
      sys.fail(string.format("%s: -p %s=%s: %s", M.where(param.site), key, text, err))
    end
    values[key], origins[key] = value, "-p"
  end
  for _, name in ipairs(self.names) do
    local param = self.by_name[name]
    if values[name] == nil and not param.optional then
      sys.fail(string.format("%s: param '%s' is required: pass -p %s=VALUE or set it in a --params file",
        M.where(param.site), name, name))
    end
  end
  return values, origins
end

-- The values as text, in the form -p and --params accept ("4M", "10s", "1,4,16").
function Set:formatted(values)
  local out = {}
  for _, name in ipairs(self.names) do
    if values[name] ~= nil then out[name] = self.by_name[name]:format(values[name]) end
  end
  return out
end

-- The params as a YAML document that --params reads back: sizes and durations with their
-- units, lists as sequences.
function Set:as_params_file(values)
  local json = require "cephmark.json"
  local out = {}
  for _, name in ipairs(self.names) do
    local param, value = self.by_name[name], values[name]
    if value ~= nil then
      if param.kind == "list" then
        local items = json.array()
        for i, item in ipairs(value) do
          local kind = param.element.kind
          items[i] = (kind == "size" or kind == "duration") and param.element:format(item) or item
        end
        out[name] = items
      elseif param.kind == "size" or param.kind == "duration" then
        out[name] = param:format(value)
      else
        out[name] = value
      end
    end
  end
  return out
end

-- Help lines: name, type, default and description in aligned columns, the scenario's own
-- params first, then the built-in ones.
function Set:help_lines()
  local rows = { own = {}, builtin = {} }
  for _, name in ipairs(self.names) do
    local param = self.by_name[name]
    local default = param.default ~= nil and param:format(param.default) or
      (param.optional and "(none)" or "(required)")
    local row = { name, param:type_name(), default, param.description or "" }
    local group = param.builtin and rows.builtin or rows.own
    group[#group + 1] = row
  end
  local widths = { 0, 0, 0 }
  for _, group in pairs(rows) do
    for _, row in ipairs(group) do
      for i = 1, 3 do widths[i] = math.max(widths[i], #row[i]) end
    end
  end
  local function render(group)
    local lines = {}
    for _, row in ipairs(group) do
      lines[#lines + 1] = (string.format("  %-" .. widths[1] .. "s  %-" .. widths[2] .. "s  %-" ..
        widths[3] .. "s  %s", row[1], row[2], row[3], row[4]):gsub("%s+$", ""))
    end
    return lines
  end
  return render(rows.own), render(rows.builtin)
end

return M
