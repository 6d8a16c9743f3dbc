-- Scripted workers on agents: packs a worker function (and an optional setup function) on
-- the coordinator into a text the agents load, and restores them there.
--
-- A Lua function travels as its bytecode (string.dump, debug information kept so that
-- tracebacks name the scenario's lines) plus its upvalues, captured with debug.getupvalue:
--   nil, booleans, numbers, strings     copied
--   tables of those (nested)            copied; a table whose metatable has an __index
--                                       function (a params table) arrives as a plain table
--                                       of its values; an object (__index a table of
--                                       methods) is refused
--   a rados pool handle                 sent by pool name, opened again by the agent
--   a loaded module, or a function or   sent by name (`require "cephmark.json"`,
--   table of one (string.format)        string.format) and looked up on the agent
--   another Lua function                sent the same way, once, whatever refers to it
--   _ENV                                the agent's own environment (a fresh table over
--                                       its globals, one per phase)
-- An upvalue that several of the functions share (a local of the scenario that the worker
-- function, a helper and setup all use) stays shared on the agent (debug.upvaluejoin), so
-- what setup assigns to it, the workers see. Anything else (an rbd image, a Swift/S3,
-- socket or cluster connection, a coroutine, a C function of no module, a table holding
-- one, a table that refers to itself) cannot travel: pack refuses it, naming the upvalue,
-- and the scenario opens it inside the worker or in `setup`, which runs once per agent.
--
-- The packed form is Lua text of statements over a few constructors: chunk(bytes) loads
-- one function (binary mode), set(f, i, value) and join(f, i, g, j) restore its upvalues,
-- pool(name), module(name, field) and env() make the values that are not plain. The agent
-- loads that text in text mode with only the constructors in its environment. Bytecode
-- is specific to the Lua version and to the machine's word sizes and byte order: agents
-- run the coordinator's release (distributed.lua checks), on the same architecture.

local M = {}

local POOL_TYPE = "cephmark.rados.pool"

-- function or table -> {module name [, field]}, over every loaded module
local function module_index()
  local names = {}
  for name in pairs(package.loaded) do
    if type(name) == "string" and name ~= "_G" then names[#names + 1] = name end
  end
  table.sort(names) -- a value found under two names is sent under the same one every time
  local members = {}
  for _, name in ipairs(names) do
    local value = package.loaded[name]
    if type(value) == "table" or type(value) == "function" then
      if not members[value] then members[value] = { name } end
      if type(value) == "table" then
        for field, member in pairs(value) do
          local kind = type(member)
          if type(field) == "string" and (kind == "function" or kind == "table") and not members[member] then
            members[member] = { name, field }
          end
        end
      end
    end
  end
  return members
end

local function is_pool(value)
  local meta = type(value) == "userdata" and debug.getmetatable(value)
  return meta and meta.__name == POOL_TYPE
end

local function describe(value)
  local meta = debug.getmetatable(value)
  if type(value) == "userdata" then
    return (meta and type(meta.__name) == "string") and ("a " .. meta.__name) or "a userdata"
  end
  if type(value) == "table" then return "an object (a table with methods)" end
  if type(value) == "function" then return "a C function of no loaded module" end
  return "a " .. type(value)
end

local function refuse(fmt, ...) error({ refused = string.format(fmt, ...) }, 0) end

local function key_order(a, b)
  if type(a) == type(b) and type(a) ~= "boolean" then return a < b end
  return type(a) .. tostring(a) < type(b) .. tostring(b)
end

local Packer = {}
Packer.__index = Packer

-- the text of a value; a refusal names it as upvalue `name` (with a field path) `where`
-- (" of function 'helper'" for a function's upvalues other than fn's and setup's)
function Packer:value(value, name, where, seen)
  local kind = type(value)
  if kind == "nil" or kind == "boolean" or kind == "number" or kind == "string" then
    return string.format("%q", value)
  end
  local member = self.members[value]
  if member then
    return member[2] and string.format("module(%q, %q)", member[1], member[2]) or string.format("module(%q)", member[1])
  end
  if is_pool(value) then return string.format("pool(%q)", value:name()) end
  if kind == "function" and debug.getinfo(value, "S").what ~= "C" then
    return string.format("F[%d]", self:fn(value, name))
  end
  local meta = kind == "table" and debug.getmetatable(value)
  if kind ~= "table" or (meta and type(rawget(meta, "__index")) == "table") then
    refuse("upvalue '%s'%s is %s", name, where, describe(value))
  end
  seen = seen or {}
  if seen[value] then refuse("upvalue '%s'%s refers to itself", name, where) end
  seen[value] = true
  local keys = {}
  for key in next, value do
    local key_kind = type(key)
    if key_kind ~= "string" and key_kind ~= "number" and key_kind ~= "boolean" then
      refuse("upvalue '%s'%s has a key that is %s", name, where, describe(key))
    end
    keys[#keys + 1] = key
  end
  table.sort(keys, key_order)
  local parts = {}
  for _, key in ipairs(keys) do
    local field = type(key) == "string" and key:match("^[%a_][%w_]*$") and (name .. "." .. key) or
      string.format("%s[%s]", name, type(key) == "string" and string.format("%q", key) or tostring(key))
    parts[#parts + 1] = string.format("[%q] = %s", key, self:value(rawget(value, key), field, where, seen))
  end
  seen[value] = nil
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- Packs one Lua function (once, however many refer to it) and returns its number in F.
-- `role` names it in refusals: "fn", "setup", or the upvalue it was found under.
function Packer:fn(fn, role)
  local known = self.index[fn]
  if known then return known end
  local ok, chunk = pcall(string.dump, fn)
  if not ok then refuse("%s cannot be dumped: %s", role, tostring(chunk)) end
  local number = #self.chunks + 1
  self.index[fn] = number
  self.chunks[number] = string.format("F[%d] = chunk(%q)", number, chunk)
  local where = (role == "fn" or role == "setup") and "" or string.format(" of function '%s'", role)
  for i = 1, math.huge do
    local name, value = debug.getupvalue(fn, i)
    if name == nil then break end
    local id = debug.upvalueid(fn, i)
    local first = self.upvalues[id]
    if first then
      self.joins[#self.joins + 1] = string.format("join(F[%d], %d, F[%d], %d)", number, i, first[1], first[2])
    else
      self.upvalues[id] = { number, i }
      local text
      if name == "_ENV" then
        text = "env()"
      else
        text = self:value(value, name ~= "" and name or ("#" .. i), where)
      end
      self.sets[#self.sets + 1] = string.format("set(F[%d], %d, %s)", number, i, text)
    end
  end
  return number
end

-- pack(fn, setup) -> text | nil, message. The message names what cannot travel and says
-- what to do instead.
function M.pack(fn, setup)
  local packer = setmetatable({ members = module_index(), index = {}, chunks = {}, sets = {}, joins = {},
    upvalues = {} }, Packer)
  local ok, text = pcall(function()
    local roles = { string.format("fn = F[%d]", packer:fn(fn, "fn")) }
    if setup ~= nil then roles[2] = string.format("setup = F[%d]", packer:fn(setup, "setup")) end
    local lines = { "local F = {}" }
    for _, list in ipairs { packer.chunks, packer.sets, packer.joins } do
      for _, line in ipairs(list) do lines[#lines + 1] = line end
    end
    lines[#lines + 1] = "return {" .. table.concat(roles, ", ") .. "}"
    return table.concat(lines, "\n")
  end)
  if ok then return text end
  if type(text) ~= "table" or not text.refused then error(text, 0) end
  return nil, text.refused .. ", which cannot be sent to the agents: open it inside the worker function, " ..
    "or in setup = function(agent) ... end (run once per agent; what it returns is w.shared)"
end

-- unpack(text, opts) -> {fn = function, setup = function|nil} | nil, message
-- opts.pool(name) -> pool handle | nil, message: opens (or reuses) a pool on the agent.
function M.unpack(text, opts)
  local env = setmetatable({}, { __index = _G })
  local failure
  local function fail(message)
    failure = failure or message
    error(message, 0)
  end
  local constructors = {
    chunk = function(bytes)
      local fn, err = load(bytes, "=chunk", "b")
      if not fn then fail("cannot load the worker code: " .. tostring(err)) end
      return fn
    end,
    set = function(fn, i, value) debug.setupvalue(fn, i, value) end,
    join = function(fn, i, other, j) debug.upvaluejoin(fn, i, other, j) end,
    pool = function(name)
      local pool, err = opts.pool(name)
      if not pool then fail(string.format("cannot open pool %s: %s", name, tostring(err))) end
      return pool
    end,
    module = function(name, field)
      local ok, value = pcall(require, name)
      if not ok then fail(string.format("module %s is not available: %s", name, tostring(value))) end
      if field == nil then return value end
      return value[field]
    end,
    env = function() return env end,
  }
  local loader, err = load(text, "=worker code", "t", constructors)
  if not loader then return nil, "cannot read the worker code: " .. tostring(err) end
  local ok, code = pcall(loader)
  if not ok then return nil, failure or ("cannot read the worker code: " .. tostring(code)) end
  if type(code) ~= "table" or type(code.fn) ~= "function" then return nil, "the worker code has no function" end
  return code
end

-- The worker function workers.run calls: fn(w) with w.agent and w.shared set.
function M.wrap(fn, agent, shared)
  return function(w)
    w.agent, w.shared = agent, shared
    return fn(w)
  end
end

return M
