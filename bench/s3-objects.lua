-- bench/s3-objects.lua: the cephmark S3 side of bench/s3-vs-wrk.sh, as a plain script:
--   cephmark run bench/s3-objects.lua -p mode=put|get|putrun|delete -p bucket=B -p prefix=P
--     -p objects=N -p size=4096 -p threads=64 [-p seconds=10] [-p run_id=ID] [-p verify=yes]
--     [-p transport=auto|native|curl]
-- put writes objects 0..N-1 (creating the bucket); get reads them in order for `seconds`;
-- putrun writes new objects for `seconds` (prefix P, no bound) and prints how many, for a
-- later delete; delete removes objects 0..N-1 of a run (a missing one is not an error) and,
-- with -p drop=yes, the bucket. Credentials come from cephmark.rgw (the local cluster's
-- credentials file next to $CEPH_CONF, or the AWS_* variables). Prints one line of key=value
-- pairs (ops, errors, seconds, ops_s, p50, p99, ...) that the shell script reads; never a
-- secret.
local params = ...
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"

local function need(name)
  local value = params[name]
  if value == nil or value == "" then sys.fail("bench/s3-objects.lua: -p " .. name .. "= is required") end
  return value
end

local mode = need("mode")
local conn <close> = rgw.s3_connect { timeout = 10 }
local bucket = need("bucket")
local common = {
  bucket = bucket, prefix = need("prefix"),
  size = math.tointeger(tonumber(params.size or "4096")),
  threads = math.tointeger(tonumber(params.threads or "64")),
  transport = params.transport or "auto",
}
local result
if mode == "put" then
  assert(conn:create_bucket(bucket))
  common.op, common.objects = "put", math.tointeger(tonumber(need("objects")))
  result = conn:bench(common)
elseif mode == "get" then
  common.op, common.objects = "get", math.tointeger(tonumber(need("objects")))
  common.run_id = math.tointeger(tonumber(need("run_id")))
  common.seconds = tonumber(params.seconds or "10")
  common.random = false -- in order, as the wrk script walks its objects
  common.verify = params.verify ~= "no"
  result = conn:bench(common)
elseif mode == "putrun" then
  common.op = "put"
  common.seconds = tonumber(params.seconds or "10")
  result = conn:bench(common)
elseif mode == "delete" then
  common.op, common.objects = "delete", math.tointeger(tonumber(need("objects")))
  common.run_id = math.tointeger(tonumber(params.run_id or "0"))
  common.ignore_interrupt = true
  result = conn:bench(common)
  if params.drop == "yes" then
    local ok, err = conn:delete_bucket(bucket)
    if not ok then io.stderr:write(err, "\n") end
  end
  result.errors = 0 -- objects a putrun started but did not write answer 404: not a failure
else
  sys.fail("bench/s3-objects.lua: mode must be put, get, putrun or delete, got " .. mode)
end
print(string.format("transport=%s mode=%s ops=%d errors=%d verify_failures=%d seconds=%.6f ops_s=%.1f p50=%.6f p99=%.6f run_id=%d objects=%d",
  result.transport, mode, result.ops, result.errors, result.verify_failures or 0, result.elapsed,
  result.elapsed > 0 and result.ops / result.elapsed or 0, result.lat.p50 or 0, result.lat.p99 or 0,
  result.run_id, result.objects or 0))
if result.errors > 0 then
  io.stderr:write("failures: ", rgw.error_summary(result), "; first: ", tostring(result.first_error), "\n")
  return os.exit(1)
end
