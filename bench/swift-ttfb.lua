-- bench/swift-ttfb.lua: time to first byte against latency of small Swift GETs, over both
-- transports, with libcurl's own timers of the same requests next to cephmark's
-- (docs/rgw.md, "Time to first byte"). A plain script:
--   cephmark run bench/swift-ttfb.lua [-p objects=200] [-p size=4096] [-p gets=2000] [-p threads=8]
-- Credentials come from cephmark.rgw (the local cluster's credentials file next to
-- $CEPH_CONF, or ST_AUTH/ST_USER/ST_KEY). It writes its objects into a container of its
-- own and removes both at the end.
local params = ...
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"

local function integer(name, default)
  local value = math.tointeger(tonumber(params[name] or default))
  if not value or value < 1 then sys.fail("bench/swift-ttfb.lua: -p " .. name .. "= expects a positive integer") end
  return value
end
local objects, size = integer("objects", 200), integer("size", 4096)
local gets, threads = integer("gets", 2000), integer("threads", 8)

local conn <close>, where = rgw.swift_connect { timeout = 10 }
print(string.format("swift %s as %s: %d GETs of %d objects of %d bytes, %d in flight", where.auth_url,
  where.user, gets, objects, size, threads))
local container = "cephmark-ttfb-" .. sys.getpid()
assert(conn:create_container(container))
local put = conn:bench { op = "put", container = container, objects = objects, size = size, threads = threads }
local function ms(h, p) return string.format("%7.2f", h[p] * 1e3) end
local ok, err = pcall(function()
  for _, transport in ipairs { "native", "curl" } do
    local get = conn:bench { op = "get", from = put, ops = gets, threads = threads, transport = transport }
    print(string.format("%-6s %5.0f GETs/s  lat p50 %s p90 %s ms  ttfb p50 %s p90 %s ms  (%d errors)",
      transport, get.iops, ms(get.lat, "p50"), ms(get.lat, "p90"), ms(get.ttfb, "p50"), ms(get.ttfb, "p90"),
      get.errors))
    if get.curl then
      print(string.format("       libcurl's own timers: TOTAL_TIME p50 %s p90 %s ms  STARTTRANSFER_TIME p50 %s p90 %s ms",
        ms(get.curl.total, "p50"), ms(get.curl.total, "p90"), ms(get.curl.ttfb, "p50"), ms(get.curl.ttfb, "p90")))
    end
  end
end)
conn:bench { op = "delete", from = put, threads = threads, ignore_interrupt = true }
conn:delete_container(container)
if not ok then error(err, 0) end
