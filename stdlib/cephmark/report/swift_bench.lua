-- swift-bench's output lines (OpenStack swift-bench 1.2.0): "Auth version: 1.0" before each
-- phase, a progress line every 15 s ("N PUTS [F failures], R/s") and the summary line
-- "N PUTS **FINAL** [F failures], R/s" (GETS, DEL), each prefixed "swift-bench DATE TIME
-- LEVEL". cephmark adds, after each summary line, the latency percentiles (and time to first
-- byte for GETs) and the failures by HTTP status. Also the --format json document. Pure
-- formatting, so it is tested from hand-made results with no gateway.

local M = {}

-- the phase names swift-bench prints
M.titles = { put = "PUTS", get = "GETS", delete = "DEL" }

-- swift-bench logs through Python's logging: "swift-bench %(asctime)s %(levelname)s msg".
-- The milliseconds of asctime are left out: the wall clock is read in whole seconds here.
function M.prefix(level, now)
  return string.format("swift-bench %s %s ", os.date("%Y-%m-%d %H:%M:%S", now), level or "INFO")
end

-- "1000 PUTS **FINAL** [0 failures], 290.9/s" (final) or "640 PUTS [0 failures], 213.1/s"
function M.status_line(title, complete, failures, seconds, final)
  local rate = seconds > 0 and complete / seconds or 0
  return string.format("%d %s%s [%d failures], %.1f/s", complete, title, final and " **FINAL**" or "",
    failures, rate)
end

local function ms(seconds)
  if seconds == nil then return "-" end
  return string.format("%.2f", seconds * 1000)
end

-- "  PUTS latency ms: avg 10.21 p50 9.80 p90 14.02 p99 30.11 p99.9 41.00 max 45.20"
function M.latency_line(title, lat, what)
  if not lat or (lat.count or 0) == 0 then
    return string.format("  %s %s ms: no successful requests", title, what or "latency")
  end
  return string.format("  %s %s ms: avg %s p50 %s p90 %s p99 %s p99.9 %s max %s", title,
    what or "latency", ms(lat.avg), ms(lat.p50), ms(lat.p90), ms(lat.p99), ms(lat.p99_9), ms(lat.max))
end

-- "  GETS failures: 404 Not Found x3, no answer x1"
function M.failure_line(title, result)
  local parts = {}
  for _, e in ipairs(result.http_errors or {}) do
    parts[#parts + 1] = string.format("%d%s x%d", e.status, e.reason ~= "" and (" " .. e.reason) or "",
      e.count)
  end
  if (result.transport_errors or 0) > 0 then
    parts[#parts + 1] = string.format("no answer x%d", result.transport_errors)
  end
  if (result.verify_failures or 0) > 0 then
    parts[#parts + 1] = string.format("verify failures x%d", result.verify_failures)
  end
  if #parts == 0 then return nil end
  return string.format("  %s failures: %s", title, table.concat(parts, ", "))
end

-- The lines that follow a phase's FINAL line, as a list.
function M.detail_lines(title, result)
  local lines = { M.latency_line(title, result.lat) }
  if result.ttfb then lines[#lines + 1] = M.latency_line(title, result.ttfb, "first byte") end
  local failures = M.failure_line(title, result)
  if failures then lines[#lines + 1] = failures end
  if result.first_error then lines[#lines + 1] = "  " .. title .. " first failure: " .. result.first_error end
  for _, message in ipairs(result.verify_errors or {}) do
    lines[#lines + 1] = "  " .. title .. " verify: " .. message
  end
  if result.auth_error then lines[#lines + 1] = "  " .. title .. " stopped: " .. result.auth_error end
  return lines
end

-- The --format json document: per phase the count, failures and rate swift-bench prints,
-- plus latency and errors by status.
function M.json_phase(result)
  local errors = {}
  for _, e in ipairs(result.http_errors or {}) do errors[tostring(e.status)] = e.count end
  return {
    count = result.ops, failures = result.errors, rate = result.elapsed > 0 and result.ops / result.elapsed or 0,
    seconds = result.elapsed, concurrency = result.threads, latency = result.lat, ttfb = result.ttfb,
    http_errors = errors, transport_errors = result.transport_errors,
    verify_failures = result.verify_failures, interrupted = result.interrupted,
  }
end

return M
