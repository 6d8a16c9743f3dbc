-- Which cluster cephmark talks to: -c / CEPH_CONF / /etc/ceph/ceph.conf, in the order
-- librados itself looks, else the local throwaway cluster (started on first use). Sets
-- the defaults every rados.connect{} call starts from.

local sys = require "cephmark.sys"

local M = {}

local function configured_conf(opts)
  if opts.conf then return opts.conf, "-c" end
  local env = os.getenv("CEPH_CONF")
  if env and env ~= "" then return env, "CEPH_CONF" end
  if sys.stat("/etc/ceph/ceph.conf") then return "/etc/ceph/ceph.conf", "/etc/ceph/ceph.conf" end
  return nil
end

-- configure{conf=, id=, keyring=, timeout=}: with no cluster configured, the local
-- cluster is started when a connection first needs it, so a script that never connects
-- (a null-target test) never starts daemons.
function M.configure(opts)
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

-- connect() with the configured defaults; a failure is the operator's to fix, so it is
-- raised as a one-line error.
function M.connect(options)
  local rados = require "cephmark.rados"
  local cluster, err = rados.connect(options)
  if not cluster then sys.fail(err) end
  return cluster
end

return M
