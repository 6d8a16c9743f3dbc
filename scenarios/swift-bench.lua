-- swift-bench: the seed's swift-bench run on radosgw (swift-bench -c 64 -s 4096 -n 1000
-- -g 100): containers are created, -n objects PUT with -c connections, -g random objects
-- read back (every body verified), all objects deleted, containers removed. Each step is a
-- phase of the results folder, with latency percentiles, time to first byte (GET) and
-- failures by HTTP status.
--
--   cephmark run scenarios/swift-bench.lua [-p concurrency=64] [-p object_size=4K]
--     [-p num_objects=1000] [-p num_gets=100]
--
-- Credentials: ST_AUTH / ST_USER / ST_KEY, or the local cluster's (`cephmark cluster up
-- --rgw`); see docs/rgw.md. `cephmark swift-bench` takes swift-bench's own flags instead.
-- The phases are phases on the Swift connection, so the run also goes on many client hosts
-- with `--agents N` (docs/distributed.md): each agent in containers of its own, -n and -g
-- per agent, the counts summed.

local cm = require "cephmark"
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"

return cm.scenario {
  name = "swift-bench",
  description = "swift-bench's PUT / GET / DELETE run on radosgw's Swift API (-c 64 -s 4096 -n 1000 -g 100)",
  params = {
    concurrency = cm.integer(64, "connections, as swift-bench -c", { min = 1, max = 4096 }),
    object_size = cm.size("4K", "bytes per object, as swift-bench -s", { max = "1G" }),
    num_objects = cm.integer(1000, "objects to PUT, as swift-bench -n", { min = 1 }),
    num_gets = cm.integer(100, "GETs of random objects, as swift-bench -g", { min = 0 }),
    num_containers = cm.integer(20, "containers the objects are spread over, as swift-bench -C",
      { min = 1, max = 1024 }),
    timeout = cm.duration("10s", "connect timeout, and how long a request may make no progress"),
  },
  run = function(s, p)
    local conn <close>, where = rgw.swift_connect { timeout = p.timeout }
    s:say("swift: " .. where.auth_url .. " as " .. where.user .. " (" .. where.source .. ")")
    local base = string.format("cephmark_swift_bench_%d", sys.getpid())
    local containers = {}
    -- every container made here is removed however the run ends, with any object a put
    -- left in it (the delete phase did not run: an error, Ctrl-C). With --agents each agent
    -- works in containers of its own (<name>-<agent>), which it makes and removes the same way
    local guard <close> = setmetatable({}, { __close = function() rgw.remove_containers(conn, containers) end })
    for i = 0, p.num_containers - 1 do
      local name = string.format("%s_%d", base, i)
      local ok, err = conn:create_container(name)
      if not ok then sys.fail("cannot create the benchmark containers: " .. err) end
      containers[#containers + 1] = name
    end
    local put = s:phase("put", conn, { containers = containers, objects = p.num_objects, size = p.object_size,
      threads = p.concurrency })
    if p.num_gets > 0 and put.objects_written > 0 then
      s:phase("get", conn, { from = put, ops = p.num_gets, threads = p.concurrency })
    end
    s:phase("delete", conn, { from = put, threads = p.concurrency, ignore_interrupt = true })
  end,
}
