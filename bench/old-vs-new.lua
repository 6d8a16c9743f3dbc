-- bench/old-vs-new.lua: one workload of bench/old-vs-new.sh, run by both binaries alike:
--   cephmark run bench/old-vs-new.lua -p workload=null|rados|swift-put|swift-get|swift-delete|disk
--     [-p pool=P] [-p container=C] [-p path=FILE] [-p seconds=S] [-p threads=T] [-p run_id=ID]
-- Prints one line of key=value pairs: the workload, ops, client CPU seconds over the run
-- (user + system of the whole process, librados's threads included), CPU per op in µs and
-- ops/s. Uses only options every cephmark version since the drop-ins has, so that an older
-- binary runs it unchanged.
local params = ...
local sys = require "cephmark.sys"

local workload = params.workload or sys.fail("bench/old-vs-new.lua: -p workload= is required")
local seconds = tonumber(params.seconds or "5")
local threads = math.tointeger(tonumber(params.threads or "16"))

local function report(r)
  local cpu = r.client_cpu.user + r.client_cpu.system
  local ops = r.client_cpu.ops
  print(string.format("workload=%s ops=%d cpu_s=%.4f cpu_us_per_op=%.3f ops_s=%.1f errors=%d run_id=%s",
    workload, ops, cpu, ops > 0 and cpu / ops * 1e6 or 0, r.iops, r.errors, tostring(r.run_id or "")))
end

if workload == "null" then
  report(require("cephmark.null").bench { threads = threads, seconds = seconds })
elseif workload == "rados" then
  local connection = require "cephmark.connection"
  local cluster <close> = connection.connect()
  local pool <close> = assert(cluster:pool(params.pool or sys.fail("-p pool= is required")))
  local run = string.format("old_vs_new_%d", sys.getpid())
  report(pool:bench { op = "write", threads = threads, seconds = seconds, block_size = "4K", run_name = run,
    prefix = run })
  pool:bench { op = "cleanup", run_name = run }
elseif workload:match("^swift%-") then
  local rgw = require "cephmark.rgw"
  local conn <close> = rgw.swift_connect { timeout = 10 }
  local options = { container = params.container, prefix = "old_vs_new", objects = 1000, size = 4096,
    threads = threads, transport = "native" }
  if workload == "swift-put" then
    assert(conn:create_container(params.container))
    options.op = "put"
  elseif workload == "swift-get" then
    options.op, options.seconds = "get", seconds
    options.run_id = math.tointeger(tonumber(params.run_id))
  else
    options.op = "delete"
    options.run_id = math.tointeger(tonumber(params.run_id))
  end
  local r = conn:bench(options)
  report(r)
  if workload == "swift-delete" then conn:delete_container(params.container) end
elseif workload == "disk" then
  report(require("cephmark.disk").bench { path = params.path, io_type = "read", pattern = "rand",
    block_size = "4K", threads = threads, seconds = seconds, direct = true })
else
  sys.fail("bench/old-vs-new.lua: unknown workload " .. workload)
end
