-- Scripted workers on agents: packs a worker function (and an optional setup function) on
-- the coordinator into a text the agents load, and restores them there.
--
-- A function travels as its bytecode (string.dump, debug information kept so tracebacks
-- name the scenario's lines) plus its upvalues, captured with debug.getupvalue:
--   nil, booleans, numbers, strings     copied
--   tables of those (nested)            copied (metatables dropped: a params table arrives
--                                       as a plain table of its values)
--   a rados pool handle                 sent by pool name, opened again by the agent
--   a loaded module, or a function or   sent by name (`require "cephmark.json"`,
--   table of one (string.format)        string.format) and looked up on the agent
--   _ENV                                the agent's own environment (a fresh table over
--                                       its globals, one per phase)
-- Anything else (another Lua function, an rbd image, a Swift/S3 or socket connection, a
-- coroutine, a table holding one) cannot travel: pack refuses it naming the upvalue, and
-- the scenario opens it inside the worker or in `setup`, which runs once per agent.
--
-- The packed form is Lua text: `return {fn = {chunk = "...", n = 3, upvalues = {...}},
-- setup = ...}`, in which a pool is the call pool("name"), a module module("name",
-- "field") and _ENV env(). The agent loads it in text mode with only those three
-- functions in its environment, then loads each chunk in binary mode. Bytecode is
-- specific to the Lua version and the machine's word sizes and byte order: agents run
-- the coordinator's release (distributed.lua checks), on the same architecture.

local M = {}

local POOL_TYPE = "cephmark.rados.pool"

-- name -> module table, and function or table -> "module", "field", over every loaded
-- module, built on first use (a scenario's modules are loaded by then)
local function module_index()
  local modules, members = {}, {}
  local names = {}
  for name in pairs(package.loaded) do
    if type(name) == "string" then names[#names + 1] = name end
  end
  table.sort(names) -- the same value found under two names picks the same one every time
  for _, name in ipairs(names) do
    local value = package.loaded[name]
    if type(value) == "table" and name ~= "_G" then
      if not members[value] then members[value] = { name } end
      for field, member in pairs(value) do
        local kind = type(member)
        if type(field) == "string" and (kind == "function" or kind == "table") and not members[member] then
          members[member] = { name, field }
        end
      end
    end
    modules[name] = value
  end
  return members
end

local function is_pool(value)
  local meta = type(value) == "userdata" and debug.getmetatable(value)
  return meta and meta.__name == POOL_TYPE
end

local function describe(value)
  if type(value) == "userdata" then
    local meta = debug.getmetatable(value)
    return (meta and type(meta.__name) == "string") and ("a " .. meta.__name) or "a userdata"
  end
  if type(value) == "function" then return "a function" end
  return "a " .. type(value)
end

local Packer = {}
Packer.__index = Packer

-- the text of a value; raises {refused = what} for one that cannot travel
function Packer:value(value, path, seen)
  local kind = type(value)
  if kind == "nil" or kind == "boolean" or kind == "number" or kind == "string" then
    return string.format("%q", value)
  end
  local member = self.members[value]
  if member then
    return member[2] and string.format("module(%q, %q)", member[1], member[2]) or string.format("module(%q)", member[1])
  end
  if is_pool(value) then return string.format("pool(%q)", value:name()) end
  if kind == "table" then
    seen = seen or {}
    if seen[value] then error({ refused = string.format("upvalue '%s' refers to itself", path) }, 0) end
    seen[value] = true
    local keys = {}
    for key in next, value do
      local key_kind = type(key)
      if key_kind ~= "string" and key_kind ~= "number" and key_kind ~= "boolean" then
        error({ refused = string.format("upvalue '%s' has a key that is %s", path, describe(key)) }, 0)
      end
      keys[#keys + 1] = key
    end
    table.sort(keys, function(a, b)
      if type(a) == type(b) and type(a) ~= "boolean" then return a < b end
      return tostring(type(a)) .. tostring(a) < tostring(type(b)) .. tostring(b)
    end)
    local parts = {}
    for _, key in ipairs(keys) do
      local field = type(key) == "string" and key:match("^[%a_][%w_]*$") and (path .. "." .. key) or
        string.format("%s[%s]", path, type(key) == "string" and string.format("%q", key) or tostring(key))
      parts[#parts + 1] = string.format("[%q] = %s", key, self:value(rawget(value, key), field, seen))
    end
    seen[value] = nil
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  error({ refused = string.format("upvalue '%s' is %s", path, describe(value)) }, 0)
end

-- the text of one function: its chunk and its upvalues by index
function Packer:fn(fn, role)
  if debug.getinfo(fn, "S").what == "C" then
    error({ refused = string.format("%s is a C function (give a Lua function)", role) }, 0)
  end
  local ok, chunk = pcall(string.dump, fn)
  if not ok then error({ refused = string.format("%s cannot be dumped: %s", role, tostring(chunk)) }, 0) end
  local parts, count = {}, 0
  for i = 1, math.huge do
    local name, value = debug.getupvalue(fn, i)
    if name == nil then break end
    count = i
    local text
    if name == "_ENV" then
      text = "env()"
    else
      text = self:value(value, name ~= "" and name or ("#" .. i))
    end
    parts[#parts + 1] = string.format("[%d] = %s", i, text)
  end
  return string.format("{chunk = %q, n = %d, upvalues = {%s}}", chunk, count, table.concat(parts, ", "))
end

-- pack(fn, setup) -> text | nil, message. The message names what cannot travel and says
-- what to do instead.
function M.pack(fn, setup)
  local packer = setmetatable({ members = module_index() }, Packer)
  local ok, text = pcall(function()
    local out = { "return {fn = ", packer:fn(fn, "fn") }
    if setup ~= nil then
      out[#out + 1] = ", setup = "
      out[#out + 1] = packer:fn(setup, "setup")
    end
    out[#out + 1] = "}"
    return table.concat(out)
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
  local builders = {
    pool = function(name)
      local pool, err = opts.pool(name)
      if not pool then failure = failure or string.format("cannot open pool %s: %s", name, tostring(err)) end
      return pool
    end,
    module = function(name, field)
      local ok, value = pcall(require, name)
      if not ok then
        failure = failure or string.format("module %s is not available: %s", name, tostring(value))
        return nil
      end
      if field == nil then return value end
      return value[field]
    end,
    env = function() return env end,
  }
  local loader, err = load(text, "=worker code", "t", builders)
  if not loader then return nil, "cannot read the worker code: " .. tostring(err) end
  local ok, spec = pcall(loader)
  if not ok or type(spec) ~= "table" then return nil, "cannot read the worker code: " .. tostring(spec) end
  if failure then return nil, failure end
  local out = {}
  for _, role in ipairs { "fn", "setup" } do
    local packed = spec[role]
    if packed then
      local fn, load_err = load(packed.chunk, "=" .. role, "b")
      if not fn then return nil, string.format("cannot load the %s function: %s", role, tostring(load_err)) end
      for i = 1, packed.n do debug.setupvalue(fn, i, packed.upvalues[i]) end
      out[role] = fn
    end
  end
  return out
end

-- The worker function workers.run calls: fn(w) with w.agent and w.shared set.
function M.wrap(fn, agent, shared)
  return function(w)
    w.agent, w.shared = agent, shared
    return fn(w)
  end
end

return M
