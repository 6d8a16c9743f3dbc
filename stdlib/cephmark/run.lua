-- `cephmark run`: resolves which cluster to use, loads the scenario script and runs it,
-- and turns the outcome into the exit code (0 ok, 1 failed ops, 2 errors, 130 interrupted:
-- main.c reports 128 + the stop signal's number; os.exit(n) unwinds to main with n).
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

-- A script that returns nothing is a plain script (scenarios/smoke-rados.lua), unless it
-- defined a scenario with cm.scenario and neither returned nor ran it: that is a
-- forgotten `return`, and running nothing silently would look like success.
local function check_scenario_returned(scenario, result)
  local pending = scenario.pending()
  if not pending then return end
  local got = result == nil and "does not return it" or
    string.format("returns %s instead", type(result) == "table" and "a table that is not a scenario" or
      ("a " .. type(result)))
  sys.fail(string.format("%s:%d: scenario '%s' is defined here but the script %s; end the script with `return cm.scenario { ... }`",
    pending.site.file, pending.site.line, pending.name, got))
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
  sys.note_input(script)
  local context = {
    params = parse_cli_params(opts.params),
    params_file = opts.params_file,
    output = opts.output,
    args = opts.args or {},
    script = script,
    help = opts.help,
    yes = opts.yes,
    telemetry = opts.telemetry,
    prometheus = opts.prometheus,
    wait_clean = opts.wait_clean,
    quiesce = opts.quiesce,
    repeats = opts.repeats,
    order = opts.order,
    order_seed = opts.order_seed,
    agents = opts.agents and { spec = opts.agents, control_pool = opts.control_pool } or nil,
    monitors = opts.monitors and { spec = opts.monitors, control_pool = opts.control_pool } or nil,
  }
  if opts.control_pool and not opts.agents and not opts.monitors then
    sys.fail("--control-pool goes with --agents or --monitors")
  end
  if opts.monitors and opts.monitors ~= "all" then
    -- names as `cephmark agent --name` takes them, separated by commas
    for name in (opts.monitors .. ","):gmatch("([^,]*),") do
      if not name:match("^[%w][%w._-]*$") or #name > 64 then
        sys.fail("--monitors expects 'all' or monitor names separated by commas (each letters, digits, " ..
          "'.', '_' or '-', at most 64), got '" .. opts.monitors .. "'")
      end
    end
  end
  -- refused before anything runs: a typo must not cost a whole run's figures
  if opts.prometheus and not require("cephmark.prometheus").check_url(opts.prometheus) then
    sys.fail(require("cephmark.prometheus").url_refusal("--prometheus", opts.prometheus))
  end
  -- digits are a count; "0x2", "1e3", "2.5" (which Lua's tonumber would read) are neither
  -- a count nor a list of names
  if opts.agents then
    local digits = opts.agents:match("^%d+$")
    local count = digits and math.tointeger(tonumber(opts.agents))
    if (digits and not (count and count >= 1)) or (not digits and tonumber(opts.agents) ~= nil) then
      sys.fail("--agents expects a positive number of agents (in decimal) or a list of agent names, got '"
        .. opts.agents .. "'")
    end
  end
  package.loaded["cephmark.context"] = context
  -- the flag a plain script cannot honour, named in the refusals below
  local flag = context.agents and "--agents" or context.monitors and "--monitors"
  local what = context.agents and "runs the phases" or "reads the hosts around the phases"
  if flag then
    -- a plain script would do its I/O here, on this host: refuse before it connects
    local rados = require "cephmark.rados"
    local connect = rados.connect
    rados.connect = function(...)
      if not context.in_scenario then
        sys.fail(string.format("%s %s of a scenario (cm.scenario); %s is a plain script: run it without %s",
          flag, what, script, flag))
      end
      return connect(...)
    end
  end
  local result = chunk(context.params, context.args)
  local scenario = package.loaded["cephmark.scenario"]
  if type(result) == "table" and type(result.run) == "function" then
    -- a scenario (built by cm.scenario): it runs itself with the context
    result = result:run(context)
  elseif scenario then
    check_scenario_returned(scenario, result)
  end
  if flag and not context.in_scenario then
    sys.fail(string.format("%s %s of a scenario (cm.scenario); %s is a plain script", flag, what, script))
  end
  return exit_code_for(result)
end

return M
