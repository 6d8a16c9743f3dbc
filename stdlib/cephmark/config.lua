-- Ceph config options changed for a benchmark and put back afterwards, through the
-- monitors' config database (`ceph config set/rm`). Before an option is first changed, its
-- previous state is read: the effective value (`config get`) and whether it was set
-- explicitly in the database for that section (`config dump`). Restoring sets the old
-- explicit value back, or removes the setting when there was none, so the cluster ends
-- exactly as it was, not with a default written in as if an operator had chosen it.
-- Scenarios call restore from their finally path, so errors and SIGINT restore too.
-- OSD map flags (noscrub, nodeep-scrub: a run's `quiesce`) go the same way: the flag is
-- set only when it was not, and only a flag this session set is unset again, so an
-- operator's own flag stays as it was.
-- Option names are checked against the monitors before anything is set (`config help`,
-- and `config ls` for "did you mean"), each answer asked once per session.

local params = require "cephmark.params"
local sys = require "cephmark.sys"

local M = {}

-- cm.DEFAULT as a value: remove the explicit setting (`config rm WHO OPTION`), so the
-- option takes its default (or a broader section's value) for that point.
M.DEFAULT = setmetatable({}, {
  __name = "cephmark.DEFAULT",
  __tostring = function() return "default" end,
})

local Session = {}
Session.__index = Session

-- session(get_cluster [, log]) -> a session; get_cluster() returns a connected cluster
-- (called only when an option is first touched), log(line) reports each change.
function M.session(get_cluster, log)
  return setmetatable({ get_cluster = get_cluster, log = log or function() end, changes = {},
    active = {}, flags = {} }, Session)
end

local function command(cluster, cmd)
  local result, status, code = cluster:mon_command(cmd)
  if result == nil and code then return nil, status ~= "" and status or ("error " .. code), code end
  return result == nil and true or result, status
end

-- Values travel as text, as the ceph CLI writes them.
function M.text(value)
  if type(value) == "string" then return (value:gsub("%s+$", "")) end
  if math.type(value) == "float" and value == math.floor(value) then
    return string.format("%d", math.floor(value))
  end
  return tostring(value)
end

-- The option's effective value for WHO, as the monitors see it (text), or nil, message.
function Session:get(who, name)
  local value, err = command(self.get_cluster(), { prefix = "config get", who = who, key = name })
  if value == nil then return nil, err end
  if value == true then return "" end
  return M.text(value)
end

-- Whether WHO has its own setting of the option in the config database, and its text.
function Session:explicit_setting(who, name)
  local dump, err = command(self.get_cluster(), { prefix = "config dump" })
  if dump == nil then return nil, err end
  for _, entry in ipairs(type(dump) == "table" and dump or {}) do
    if entry.section == who and entry.name == name and (entry.mask == nil or entry.mask == "") then
      return true, M.text(entry.value)
    end
  end
  return false
end

-- The sections a setting is made for (`ceph config set WHO ...`): every daemon, one type
-- of daemon, or one daemon (osd.0, client.rgw.a). The monitors refuse anything else
-- ("unrecognized config target"), but only once the first value is set.
M.SECTION_TYPES = { "global", "mon", "mgr", "osd", "mds", "client" }

-- is_section(who) -> true, or false and the nearest section type (or nil).
function M.is_section(who)
  for _, section in ipairs(M.SECTION_TYPES) do
    if who == section then return true end
    if section ~= "global" and #who > #section + 1 and who:sub(1, #section + 1) == section .. "." then
      return true
    end
  end
  return false, params.closest(who, M.SECTION_TYPES)
end

-- The section an option is most likely meant for, for "did you mean": from its name's
-- prefix (osd_op_num_shards -> osd), else the one daemon type the monitors say uses it,
-- else global. Clients (librbd, radosgw) read their options as client.
local prefix_sections = { osd = "osd", bluestore = "osd", filestore = "osd", memstore = "osd",
  journal = "osd", objectstore = "osd", mon = "mon", paxos = "mon", mgr = "mgr", mds = "mds",
  rgw = "client", rbd = "client" }
local service_sections = { mon = "mon", mgr = "mgr", osd = "osd", mds = "mds", rgw = "client",
  rbd = "client", ["rbd-mirror"] = "client" }

function M.likely_section(name, help)
  local prefix = name:match("^(%a+)_")
  if prefix and prefix_sections[prefix] then return prefix_sections[prefix] end
  local services = type(help) == "table" and type(help.services) == "table" and help.services or {}
  if #services == 1 and service_sections[services[1]] then return service_sections[services[1]] end
  return "global"
end

-- option_help(name) -> the monitors' `config help` for the option (a table), false when
-- the cluster has no such option, or nil and a message when they could not be asked
-- (a monitor too old for the command, a user without the caps).
function Session:option_help(name)
  self.help_cache = self.help_cache or {}
  if self.help_cache[name] ~= nil then return self.help_cache[name] end
  local result, err, code = self.get_cluster():mon_command { prefix = "config help", key = name }
  if result == nil and code == -2 then -- ENOENT: no option of that name
    self.help_cache[name] = false
    return false
  end
  if type(result) ~= "table" then return nil, err or "no answer to config help" end
  self.help_cache[name] = result
  return result
end

-- Every option name the monitors know (`config ls`), asked once; an empty list when they
-- cannot say, which only costs the "did you mean".
function Session:option_names()
  if not self.option_list then
    local result = self.get_cluster():mon_command { prefix = "config ls" }
    self.option_list = {}
    for _, name in ipairs(type(result) == "table" and result or {}) do
      if type(name) == "string" then self.option_list[#self.option_list + 1] = name end
    end
  end
  return self.option_list
end

-- The names one edit away from name: a character dropped, two swapped, one replaced or one
-- added (letters, digits, _).
local function one_edit(name)
  local alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_"
  local out = {}
  for i = 1, #name do out[#out + 1] = name:sub(1, i - 1) .. name:sub(i + 1) end
  for i = 1, #name - 1 do
    out[#out + 1] = name:sub(1, i - 1) .. name:sub(i + 1, i + 1) .. name:sub(i, i) .. name:sub(i + 2)
  end
  for i = 1, #name + 1 do
    for c in alphabet:gmatch(".") do
      if i <= #name then out[#out + 1] = name:sub(1, i - 1) .. c .. name:sub(i + 1) end
      out[#out + 1] = name:sub(1, i - 1) .. c .. name:sub(i)
    end
  end
  return out
end

-- The option most likely meant by a name the cluster does not have, or nil. `config ls`
-- leaves out the debug_<subsystem> log levels (debug_osd, debug_ms), the options most
-- often swept; for those the names one edit away are looked up in the client's own
-- configuration, which has them all (a local lookup, no round trip).
function Session:nearest_option(name)
  local nearest = params.closest(name, self:option_names())
  if nearest then return nearest end
  local cluster = self.get_cluster()
  if type(cluster.conf_get) ~= "function" then return nil end
  for _, candidate in ipairs(one_edit(name)) do
    if candidate ~= name and cluster:conf_get(candidate) ~= nil then return candidate end
  end
  return nil
end

-- check_option(who, name) -> the option's `config help` (a table; nil when the monitors
-- could not be asked, so the change itself will tell), or false, the problem and the
-- WHO/OPTION most likely meant (or nil).
function Session:check_option(who, name)
  local section, nearest_section = M.is_section(who)
  if not section then
    return false, string.format("'%s' is not a config section (global, mon, mgr, osd, mds, client, or one daemon such as osd.0)", who),
      nearest_section and (nearest_section .. "/" .. name) or nil
  end
  local help = self:option_help(name)
  if help == false then
    local nearest = self:nearest_option(name)
    return false, string.format("the cluster has no config option '%s'", name), nearest and (who .. "/" .. nearest) or nil
  end
  return help
end

local function failure(who, name, err)
  sys.fail(string.format("config %s/%s: %s", who, name, tostring(err)))
end

-- set(who, name, value): value is text, a number, a boolean or M.DEFAULT. The first change
-- of an option records how it was; later changes only change it.
function Session:set(who, name, value)
  local key = who .. "/" .. name
  local entry = self.active[key]
  if not entry then
    local original, err = self:get(who, name)
    if original == nil then failure(who, name, err) end
    local explicit, explicit_value = self:explicit_setting(who, name)
    if explicit == nil then failure(who, name, explicit_value) end
    entry = { who = who, name = name, original = original, explicit = explicit,
      explicit_value = explicit_value, values = {} }
    -- recorded before the change, so an interrupt right after it still restores
    self.changes[#self.changes + 1] = entry
    self.active[key] = entry
  end
  local cluster = self.get_cluster()
  local ok, err
  if value == M.DEFAULT then
    ok, err = command(cluster, { prefix = "config rm", who = who, name = name })
  else
    ok, err = command(cluster, { prefix = "config set", who = who, name = name, value = M.text(value) })
  end
  if not ok then failure(who, name, err) end
  local now = self:get(who, name)
  entry.values[#entry.values + 1] = { set = value == M.DEFAULT and "default" or M.text(value), effective = now }
  self.log(string.format("config %s = %s%s (was %s%s)", key,
    value == M.DEFAULT and "default" or M.text(value),
    (value == M.DEFAULT and now) and (": " .. now) or "",
    entry.original, entry.explicit and ", set in the config database" or ", not set in the config database"))
  return now
end

-- Whether the OSD map has a flag set (`osd dump`'s comma-separated flags).
function Session:flag_set(flag)
  local dump, err = command(self.get_cluster(), { prefix = "osd dump" })
  if type(dump) ~= "table" then return nil, err or "no OSD map" end
  return ("," .. tostring(dump.flags or "") .. ","):find("," .. flag .. ",", 1, true) ~= nil
end

-- set_flag(flag): an OSD map flag set for the rest of the session (`osd set FLAG`); a flag
-- already set is left alone, and left set by restore.
function Session:set_flag(flag)
  for _, entry in ipairs(self.flags) do
    if entry.flag == flag then return end
  end
  local was_set, err = self:flag_set(flag)
  if was_set == nil then sys.fail(string.format("osd flag %s: cannot read the OSD map: %s", flag, tostring(err))) end
  local entry = { flag = flag, was_set = was_set, set = false }
  -- recorded before the change, so an interrupt right after it still unsets it
  self.flags[#self.flags + 1] = entry
  if was_set then
    self.log(string.format("osd flag %s: already set before this run (left set)", flag))
    return
  end
  entry.set = true
  local ok, serr = command(self.get_cluster(), { prefix = "osd set", key = flag })
  if not ok then sys.fail(string.format("osd flag %s: cannot set it: %s", flag, tostring(serr))) end
  self.log(string.format("osd flag %s set (it was not; unset at the end)", flag))
end

local function is_interrupt(err)
  local message, code = sys.error_info(err)
  return code == sys.EXIT_INTERRUPTED and message == "interrupted"
end

-- Runs fn protected; a SIGINT that lands in it (its error is raised once) is retried, so
-- an operator's Ctrl-C during the restore itself does not leave an option changed.
function M.attempt(fn)
  local ok, err = pcall(fn)
  if not ok and is_interrupt(err) then ok, err = pcall(fn) end
  return ok, err
end

-- restore([only]) puts back every changed option (or only those whose "who/name" key is
-- in the set `only`), newest first. Returns true, or false and the failures' messages;
-- each option is attempted even when another fails.
function Session:restore(only)
  local errors = {}
  for i = #self.changes, 1, -1 do
    local entry = self.changes[i]
    local key = entry.who .. "/" .. entry.name
    if not entry.restored and (only == nil or only[key]) then
      local ok, err = M.attempt(function()
        local cluster = self.get_cluster()
        local done, cerr
        if entry.explicit then
          done, cerr = command(cluster, { prefix = "config set", who = entry.who, name = entry.name,
            value = entry.explicit_value })
        else
          done, cerr = command(cluster, { prefix = "config rm", who = entry.who, name = entry.name })
        end
        if not done then error(cerr, 0) end
        entry.after = self:get(entry.who, entry.name)
      end)
      self.active[key] = nil
      entry.restored = ok
      if ok then
        self.log(string.format("config %s restored to %s%s", key, entry.after or entry.original,
          entry.explicit and "" or " (setting removed)"))
      else
        entry.restore_error = tostring((sys.error_info(err)))
        errors[#errors + 1] = string.format("cannot restore config %s (was %s): %s", key,
          entry.explicit and entry.explicit_value or "not set", entry.restore_error)
      end
    end
  end
  if only == nil then self:restore_flags(errors) end
  if #errors > 0 then return false, errors end
  return true
end

-- Unsets the flags this session set (newest first), adding failures to errors.
function Session:restore_flags(errors)
  for i = #self.flags, 1, -1 do
    local entry = self.flags[i]
    if entry.set and not entry.restored then
      local ok, err = M.attempt(function()
        local done, cerr = command(self.get_cluster(), { prefix = "osd unset", key = entry.flag })
        if not done then error(cerr, 0) end
      end)
      entry.restored = ok
      if ok then
        self.log(string.format("osd flag %s unset (restored)", entry.flag))
      else
        entry.restore_error = tostring((sys.error_info(err)))
        errors[#errors + 1] = string.format("cannot unset osd flag %s (set by this run): %s", entry.flag,
          entry.restore_error)
      end
    end
  end
end

-- What results record of the flags: each, whether it was set before, whether this run
-- set it and unset it again; nil when no flag was touched.
function Session:describe_flags()
  if #self.flags == 0 then return nil end
  local json = require "cephmark.json"
  local out = json.array()
  for i, entry in ipairs(self.flags) do
    out[i] = { flag = entry.flag, was_set = entry.was_set, set_by_run = entry.set,
      restored = entry.set and (entry.restored or false) or nil, restore_error = entry.restore_error }
  end
  return out
end

-- What results record: each option changed, how it was, what it was set to, and whether
-- it was put back.
function Session:describe()
  local json = require "cephmark.json"
  local out = json.array()
  for i, entry in ipairs(self.changes) do
    local values = json.array()
    for j, v in ipairs(entry.values) do values[j] = v end
    out[i] = { who = entry.who, name = entry.name, original = entry.original,
      explicit = entry.explicit, explicit_value = entry.explicit_value, values = values,
      restored = entry.restored or false, after = entry.after, restore_error = entry.restore_error }
  end
  return out
end

return M
