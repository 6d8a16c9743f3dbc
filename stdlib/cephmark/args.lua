-- Command-line parsing for the stdlib's commands (rados-bench, rados-cleanup, ...):
-- "-x VALUE", "--long VALUE", "--long=VALUE" and boolean flags, with one-line errors.

local sys = require "cephmark.sys"

local M = {}

-- parse(command, argv, spec) -> options, positionals
-- spec = { ["-t"] = {key="threads", value=true}, ["--no-cleanup"] = {key="no_cleanup"}, ... }
-- A spec entry with value=true takes a value; otherwise it is a flag set to true.
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
        options[entry.key] = value
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

-- integer(command, name, text, min, max) -> integer, or a one-line error
function M.integer(command, name, text, min, max)
  local value = math.tointeger(tonumber(text))
  if value == nil then
    sys.fail(string.format("%s: %s must be an integer, got '%s'", command, name, tostring(text)))
  end
  if (min and value < min) or (max and value > max) then
    sys.fail(string.format("%s: %s must be between %d and %d, got %d", command, name, min, max,
      value))
  end
  return value
end

return M
