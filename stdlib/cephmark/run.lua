-- `cephmark run`: resolves which cluster to use, loads the scenario script and runs it,
-- and turns the outcome into the exit code (0 ok, 1 failed ops, 2 errors, 130 interrupted).
-- Called from runtime/main.c with the parsed command-line options.

local sys = require "cephmark.sys"

local M = {}

-- Where the cluster configuration comes from, in the order librados itself looks.
local function configured_conf(opts)
  if opts.conf then return opts.conf, "-c" end
  local env = os.getenv("CEPH_CONF")
  if env and env ~= "" then return env, "CEPH_CONF" end
  if sys.stat("/etc/ceph/ceph.conf") then return "/etc/ceph/ceph.conf", "/etc/ceph/ceph.conf" end
  return nil
end

-- The connection defaults every rados.connect{} call starts from. With no cluster
-- configured, the local throwaway cluster is started on first use, not before, so a
-- script that never connects (a null-target test) never starts daemons.
local function install_connection_defaults(opts)
  local rados = require "cephmark.rados"
  local defaults = { id = opts.id, keyring = opts.keyring, timeout = opts.timeout }
  local conf, source = configured_conf(opts)
  if conf then
    if not sys.stat(conf) then
      sys.fail(string.format("the cluster configuration %s (from %s) does not exist", conf, source))
    end
    defaults.conf = conf
    rados.defaults = defaults
    return
  end
  local resolved = false
  rados.defaults = setmetatable(defaults, {
    __index = function(t, key)
      if resolved or (key ~= "conf" and key ~= "keyring") then return nil end
      resolved = true
      local cluster = require "cephmark.cluster"
      io.stderr:write(string.format(
        "cephmark: no cluster configured (no -c, CEPH_CONF or /etc/ceph/ceph.conf); using the local cluster in %s\n",
        cluster.default_dir()))
      local info = cluster.up { quiet = true }
      rawset(t, "conf", info.conf)
      if not rawget(t, "keyring") then rawset(t, "keyring", info.keyring) end
      sys.setenv("CEPH_CONF", info.conf)
      return rawget(t, key)
    end,
  })
end

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
  install_connection_defaults(opts)
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
