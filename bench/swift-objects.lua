-- bench/swift-objects.lua: the cephmark side of bench/swift-vs-wrk.sh, as a plain script:
--   cephmark run bench/swift-objects.lua -p mode=put|get|delete -p container=C -p prefix=P
--     -p objects=N -p size=4096 -p threads=64 [-p seconds=10] [-p run_id=ID] [-p verify=yes]
--     [-p transport=auto|native|curl]
-- Credentials come from cephmark.rgw (the local cluster's credentials file next to
-- $CEPH_CONF, or ST_AUTH/ST_USER/ST_KEY). Prints one line of key=value pairs (ops, errors,
-- seconds, ops_s, p50, p99, ...) that the shell script reads; never a secret.
local params = ...
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"

local function need(name)
  local value = params[name]
  if value == nil or value == "" then sys.fail("bench/swift-objects.lua: -p " .. name .. "= is required") end
  return value
end

local mode = need("mode")
local conn <close> = rgw.swift_connect { timeout = 10 }
local container = need("container")
local common = {
  container = container, prefix = need("prefix"), objects = math.tointeger(tonumber(need("objects"))),
  size = math.tointeger(tonumber(params.size or "4096")),
  threads = math.tointeger(tonumber(params.threads or "64")),
  transport = params.transport or "auto",
}
local result
if mode == "put" then
  assert(conn:create_container(container))
  common.op = "put"
  result = conn:bench(common)
elseif mode == "get" then
  common.op = "get"
  common.run_id = math.tointeger(tonumber(need("run_id")))
  common.seconds = tonumber(params.seconds or "10")
  common.random = false -- in order, as the wrk script walks the objects
  common.verify = params.verify ~= "no"
  result = conn:bench(common)
elseif mode == "delete" then
  common.op = "delete"
  result = conn:bench(common)
  local ok, err = conn:delete_container(container)
  if not ok then io.stderr:write(err, "\n") end
else
  sys.fail("bench/swift-objects.lua: mode must be put, get or delete, got " .. mode)
end
print(string.format("transport=%s mode=%s ops=%d errors=%d verify_failures=%d seconds=%.6f ops_s=%.1f p50=%.6f p99=%.6f run_id=%d",
  result.transport, mode, result.ops, result.errors, result.verify_failures, result.elapsed,
  result.elapsed > 0 and result.ops / result.elapsed or 0, result.lat.p50 or 0, result.lat.p99 or 0,
  result.run_id))
if result.errors > 0 then
  io.stderr:write("failures: ", rgw.error_summary(result), "; first: ", tostring(result.first_error), "\n")
  return os.exit(1)
end
