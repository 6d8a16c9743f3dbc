-- Time to first byte of Swift GETs against the local cluster's radosgw, over both transports:
-- `ttfb` covers exactly the requests that `lat` covers (not the warm-up's), from the same
-- start, so no request's first byte comes after its end; over libcurl, cephmark's own first
-- byte is checked against libcurl's CURLINFO_STARTTRANSFER_TIME and TOTAL_TIME of the same
-- requests (`result.curl`), whose clock starts when libcurl picks the request up, after the
-- op's start. Only orderings are asserted, which load cannot change.
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local conn = rgw.swift_connect {}
local C = "cephmark-test-ttfb-" .. sys.getpid()
t.eq(conn:create_container(C), true, "create container")
local put = conn:bench { op = "put", container = C, objects = 32, size = 4096, threads = 4 }
t.eq(put.errors, 0, "put: no errors")

-- The histograms' values carry at most 0.1 % error, and libcurl's are whole microseconds.
local function at_most(a, b)
  return a <= b * 1.002 + 2e-6
end
local percentiles = { "min", "p50", "p90", "p95", "p99", "p99_9", "max" }

-- ---- the same requests as the latency, from the same start -----------------------------------
for _, transport in ipairs { "native", "curl" } do
  local get = conn:bench { op = "get", from = put, seconds = 3, warmup = 1, threads = 4,
    transport = transport }
  local what = transport .. " get with a warm-up: "
  t.eq(get.transport, transport, what .. "transport")
  t.eq(get.errors, 0, what .. "no errors")
  t.ok(get.ops > 0, what .. "ops after the warm-up")
  t.eq(get.ttfb.count, get.lat.count, what .. "ttfb counts the requests lat counts (not the warm-up's)")
  t.eq(get.ttfb.count, get.ops, what .. "one first byte per counted op")
  -- every request's first byte comes before its end, so every percentile does
  for _, p in ipairs(percentiles) do
    t.ok(at_most(get.ttfb[p], get.lat[p]),
      string.format("%sttfb.%s %.3f ms <= lat.%s %.3f ms", what, p, get.ttfb[p] * 1e3, p, get.lat[p] * 1e3))
  end
end

-- ---- against libcurl's own timers, on the same requests -------------------------------------
-- libcurl counts from when it starts the transfer, after the op's start, and stamps the first
-- byte before it hands the status line to cephmark: per request,
-- curl.ttfb <= ttfb <= lat and curl.total <= lat.
local get = conn:bench { op = "get", from = put, ops = 200, threads = 4, transport = "curl" }
if t.ok(get.curl ~= nil, "curl get: libcurl's own timers are in the result") then
  t.eq(get.ops .. "/" .. get.ttfb.count .. "/" .. get.curl.ttfb.count .. "/" .. get.curl.total.count,
    "200/200/200/200", "curl get: ops, ttfb, curl.ttfb and curl.total count the same requests")
  for _, p in ipairs(percentiles) do
    t.ok(at_most(get.curl.ttfb[p], get.ttfb[p]), string.format("curl.ttfb.%s %.3f ms <= ttfb.%s %.3f ms",
      p, get.curl.ttfb[p] * 1e3, p, get.ttfb[p] * 1e3))
    t.ok(at_most(get.curl.total[p], get.lat[p]), string.format("curl.total.%s %.3f ms <= lat.%s %.3f ms",
      p, get.curl.total[p] * 1e3, p, get.lat[p] * 1e3))
  end
  for i = 1, 20 do
    local one = conn:bench { op = "get", from = put, ops = 1, threads = 1, transport = "curl" }
    local curl_ttfb, ttfb, lat, curl_total = one.curl.ttfb.min, one.ttfb.min, one.lat.min, one.curl.total.min
    t.ok(at_most(curl_ttfb, ttfb) and at_most(ttfb, lat) and at_most(curl_total, lat),
      string.format("request %d: curl.ttfb %.3f <= ttfb %.3f <= lat %.3f ms, curl.total %.3f <= lat", i,
        curl_ttfb * 1e3, ttfb * 1e3, lat * 1e3, curl_total * 1e3))
  end
end

-- the native transport has no libcurl timers to report
t.eq(conn:bench { op = "get", from = put, ops = 10, threads = 2, transport = "native" }.curl, nil,
  "native get: no curl timers")

t.eq(conn:bench { op = "delete", from = put, threads = 4 }.ops, 32, "delete the objects")
t.eq(conn:delete_container(C), true, "delete the container")
return t.done()
