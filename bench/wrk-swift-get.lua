-- bench/wrk-swift-get.lua: wrk's side of bench/swift-vs-wrk.sh. GETs the objects
-- <container>/<prefix>_0 .. _<objects-1> in order, over and over, with the Swift token, the
-- same requests cephmark's GET phase makes. Requests are formatted once in init, so wrk's
-- per-request cost is the HTTP exchange, not Lua. No response() hook: wrk counts non-2xx/3xx
-- answers itself (errors.status), and a hook would add a Lua call per response to its CPU.
-- Environment: SWIFT_PATH (the storage URL's path, e.g. /swift/v1), SWIFT_CONTAINER,
-- SWIFT_PREFIX, SWIFT_OBJECTS, SWIFT_TOKEN_FILE (a 0600 file holding the token).
local requests, count, index = {}, 0, 0

function init(args)
  local file = assert(io.open(os.getenv("SWIFT_TOKEN_FILE"), "r"))
  local token = file:read("*l")
  file:close()
  local base = os.getenv("SWIFT_PATH") .. "/" .. os.getenv("SWIFT_CONTAINER") .. "/" .. os.getenv("SWIFT_PREFIX")
  count = tonumber(os.getenv("SWIFT_OBJECTS"))
  local headers = { ["X-Auth-Token"] = token }
  for i = 0, count - 1 do
    requests[i] = wrk.format("GET", base .. "_" .. i, headers)
  end
end

function request()
  local r = requests[index]
  index = index + 1
  if index == count then index = 0 end
  return r
end

function done(summary, latency, requests_done)
  io.write(string.format("wrk_requests=%d wrk_seconds=%.6f wrk_p50=%.6f wrk_p99=%.6f wrk_errors_status=%d\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1e6, latency:percentile(99) / 1e6,
    summary.errors.status))
end
