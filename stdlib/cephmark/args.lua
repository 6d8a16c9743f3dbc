-- Command-line parsing for the stdlib's commands (rados-bench, rados-cleanup, ...):
-- "-x VALUE", "--long VALUE", "--long=VALUE" and boolean flags, with one-line errors; and
-- what every command's start shares: -h/--help, the connection flags, the argument count.

local sys = require "cephmark.sys"

local M = {}

-- parse(command, argv, spec) -> options, positionals
-- spec = { ["-t"] = {key="threads", value=true}, ["--no-cleanup"] = {key="no_cleanup"}, ... }
-- A spec entry with value=true takes a value; otherwise it is a flag set to true. An entry
-- with list=true too may be repeated: its values are collected in a list, in order.
function M.parse(command, argv, spec)
  local options, positionals = {}, {}
  local i = 1
  while i <= #argv do
    local arg = argv[i]
    if arg == "--" then
      for j = i + 1, #argv do positionals[#positionals + 1] = argv[j] end
      break
    end
    local name, inline = arg:match("^(%-%-[^=]+)=(.*)$")
    name = name or arg
    local entry = spec[name]
    if entry then
      if entry.value then
        local value = inline
        if value == nil then
          i = i + 1
          value = argv[i]
          if value == nil then
            sys.fail(string.format("%s: option %s needs a value (see `cephmark %s --help`)",
              command, name, command))
          end
        end
        if entry.list then
          options[entry.key] = options[entry.key] or {}
          table.insert(options[entry.key], value)
        else
          options[entry.key] = value
        end
      else
        if inline ~= nil then
          sys.fail(string.format("%s: option %s takes no value", command, name))
        end
        options[entry.key] = true
      end
    elseif arg:sub(1, 1) == "-" and #arg > 1 and not tonumber(arg) then
      sys.fail(string.format("%s: unknown option '%s' (see `cephmark %s --help`)", command, arg,
        command))
    else
      positionals[#positionals + 1] = arg
    end
    i = i + 1
  end
  return options, positionals
end

-- The flags of every command that connects to the cluster, as for `cephmark run`; a spec
-- takes them with spec(), and connection() turns them into connection.configure's table.
M.CONNECTION = {
  ["-c"] = { key = "conf", value = true }, ["--conf"] = { key = "conf", value = true },
  ["--id"] = { key = "id", value = true },
  ["-k"] = { key = "keyring", value = true }, ["--keyring"] = { key = "keyring", value = true },
  ["--timeout"] = { key = "timeout", value = true },
}

-- spec(flags, ...) -> one spec: the entries of each table given, and -h/--help, which every
-- command takes
function M.spec(...)
  local spec = { ["-h"] = { key = "help" }, ["--help"] = { key = "help" } }
  for _, flags in ipairs { ... } do
    for name, entry in pairs(flags) do spec[name] = entry end
  end
  return spec
end

-- command(command, argv, spec, usage) -> options, positionals; or nil when --help was asked,
-- once usage is printed: the command then has nothing more to do but succeed.
function M.command(command, argv, spec, usage)
  local options, positionals = M.parse(command, argv, spec)
  if options.help then
    print(usage)
    return nil
  end
  return options, positionals
end

-- at_most(command, positionals, count): a one-line error naming the first argument past count
function M.at_most(command, positionals, count)
  if #positionals > count then
    sys.fail(string.format("%s: unexpected argument '%s'", command, positionals[count + 1]))
  end
end

-- connection(command, options) -> connection.configure's table, from the CONNECTION flags
-- parsed into options; a bad --timeout is a one-line error.
function M.connection(command, options)
  return { conf = options.conf, id = options.id, keyring = options.keyring,
    timeout = options.timeout and M.seconds(command, "--timeout", options.timeout) }
end

-- Numbers on the command line are decimal: "0x10", "1e309" (infinity), "inf" and "nan",
-- which Lua's tonumber would take, are refused, each with why.
local function why_not(reason)
  if reason == nil or reason == "not a number" then return "" end
  return " (" .. reason .. ")"
end

-- integer(command, name, text, min, max) -> integer, or a one-line error
function M.integer(command, name, text, min, max)
  text = tostring(text)
  local value, reason
  if text:match("^%s*[+-]?%d+%s*$") then
    value = math.tointeger(tonumber(text)) -- exact; too many digits become a float: refused
    if value == nil then reason = "out of range" end
  else
    local number
    number, reason = sys.parse_number(text)
    value = number and math.tointeger(number)
  end
  if value == nil then
    sys.fail(string.format("%s: %s must be an integer, got '%s'%s", command, name, text, why_not(reason)))
  end
  if (min and value < min) or (max and value > max) then
    sys.fail(string.format("%s: %s must be between %d and %d, got %d", command, name, min, max,
      value))
  end
  return value
end

-- number(command, name, text, what) -> a finite number > 0, or a one-line error naming
-- what it counts ("ops/s"): for rates, where 0 or less means nothing.
function M.positive_number(command, name, text, what)
  local value, reason = sys.parse_number(tostring(text))
  if not value or value <= 0 then
    sys.fail(string.format("%s: %s must be a positive number of %s, got '%s'%s", command, name, what,
      tostring(text), why_not(reason)))
  end
  return value
end

-- seconds(command, name, text) -> seconds > 0, for timeouts: a number of seconds or a
-- duration ("30", "1.5", "500ms", "2m"); 0 would wait for nothing, so it is refused.
function M.seconds(command, name, text)
  local value = sys.parse_duration(tostring(text))
  if not value or value <= 0 then
    sys.fail(string.format("%s: %s expects a positive number of seconds, got '%s'", command, name,
      tostring(text)))
  end
  return value
end

-- duration(command, name, text) -> seconds >= 0 ("10", "500ms", "2m"), or a one-line error
function M.duration(command, name, text)
  local value, err = sys.parse_duration(tostring(text))
  if not value then sys.fail(string.format("%s: %s: %s", command, name, err)) end
  return value
end

return M
