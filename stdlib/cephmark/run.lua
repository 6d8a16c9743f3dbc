-- `cephmark run`: resolves which cluster to use, loads the scenario script and runs it,
-- and turns the outcome into the exit code (0 ok, 1 failed ops, 2 errors, 130 interrupted).
-- Called from runtime/main.c with the parsed command-line options.

local sys = require "cephmark.sys"

local M = {}

local function parse_cli_params(list)
  local params = {}
  for _, item in ipairs(list or {}) do
    local key, value = item:match("^([^=]+)=(.*)$")
    params[key] = value
  end
  return params
end

-- A script may return a table with failed_ops (or errors) to say the benchmark ran but
-- some operations failed; that is exit code 1.
local function exit_code_for(result)
  if type(result) == "table" then
    local failed = tonumber(result.failed_ops or result.errors or 0) or 0
    if failed > 0 then return sys.EXIT_FAILED_OPS end
  end
  return sys.EXIT_OK
end

function M.main(opts)
  require("cephmark.connection").configure(opts)
  local script = opts.script
  local st = sys.stat(script)
  if not st then
    sys.fail(string.format("cannot open script '%s': no such file", script))
  elseif st.type ~= "file" then
    sys.fail(string.format("cannot open script '%s': not a regular file", script))
  end
  local chunk, err = loadfile(script, "t")
  if not chunk then
    sys.fail(err)
  end
  local context = {
    params = parse_cli_params(opts.params),
    params_file = opts.params_file,
    output = opts.output,
    args = opts.args or {},
    script = script,
    help = opts.help,
  }
  package.loaded["cephmark.context"] = context
  local result = chunk(context.params, context.args)
  if type(result) == "table" and type(result.run) == "function" then
    -- a scenario (built by cm.scenario): it runs itself with the context
    result = result:run(context)
  end
  return exit_code_for(result)
end

return M
