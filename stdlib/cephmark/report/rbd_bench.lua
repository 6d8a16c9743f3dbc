-- rbd bench's output layout (Ceph pacific's `rbd bench`): the "bench  type ..." line, the
-- SEC / OPS / OPS/SEC / BYTES/SEC table, the elapsed line and, for readwrite, the read_ops
-- and write_ops lines; then cephmark's latency percentiles, errors and verify failures
-- after rbd bench's own lines. Also the --format json document. Used by the rbd-bench
-- command; pure formatting, so it is tested from hand-made results with no cluster.

local json = require "cephmark.json"

local M = {}
M.__index = M

-- rbd bench writes doubles through a C++ stream with its default format: six significant
-- digits, trailing zeros dropped, which is printf's %g.
local function ostream_double(value)
  return string.format("%g", value)
end
M.ostream_double = ostream_double

local byte_units = { " B", " KiB", " MiB", " GiB", " TiB", " PiB", " EiB" }

-- Ceph's byte_u_t: the value is a uint64_t (a rate is truncated to whole bytes first),
-- shown in the largest binary unit that keeps the number at 1024 or more, with as many
-- decimals (2, 1 or 0) as fit in 7 characters including the unit ("3.6 MiB", "27 MiB").
function M.byte_u(value)
  if value ~= value or value == math.huge or value < 0 then value = 0 end
  local v = math.tointeger(math.floor(value)) or 0
  local n, index = v, 0
  while n >= 1024 and index < 6 do
    n = n // 1024
    index = index + 1
  end
  local unit = byte_units[index + 1]
  local mult = 1 << (10 * index)
  if index == 0 or v % mult == 0 then return string.format("%d%s", n, unit) end
  local text
  for precision = 2, 0, -1 do
    text = string.format("%." .. precision .. "f%s", v / mult, unit)
    if #text <= 7 then break end
  end
  return text
end

local pattern_names = { rand = "random", seq = "sequential" }
M.pattern_names = pattern_names

-- "bench  type readwrite read:write=75:25 io_size 4096 io_threads 16 bytes 1073741824 pattern random"
function M.header_line(o)
  local mix = ""
  if o.io_type == "readwrite" then
    mix = string.format(" read:write=%d:%d", o.rw_mix_read, 100 - o.rw_mix_read)
  end
  return string.format("bench  type %s%s io_size %d io_threads %d bytes %d pattern %s", o.io_type,
    mix, o.io_size, o.threads, o.bytes, pattern_names[o.pattern] or o.pattern)
end

M.table_header = "  SEC       OPS   OPS/SEC   BYTES/SEC"

-- rbd bench averages its OPS/SEC and BYTES/SEC over a rolling window of the last 5
-- intervals; cephmark's intervals are the engine's whole seconds.
local WINDOW = 5

-- new{json=, out=, io_type=, io_size=, threads=, bytes=, pattern=, rw_mix_read=}
function M.new(options)
  local self = setmetatable({}, M)
  self.options = options
  self.json = options.json
  self.out = options.out or print
  self.rows = {}
  self.window = {}
  return self
end

function M:start()
  if self.json then return end
  self.out(M.header_line(self.options))
  self.out(M.table_header)
end

-- One second of the engine's series. The partial last second is not a row, as rbd bench
-- prints a row only when a second boundary passes. OPS is rbd bench's "ops started minus
-- io_threads", which equals the ops completed while the pipeline is full.
function M:second(s)
  if s.partial then return nil end
  local window = self.window
  window[#window + 1] = { ops = s.ops or 0, bytes = s.bytes or 0 }
  if #window > WINDOW then table.remove(window, 1) end
  local ops, bytes = 0, 0
  for _, w in ipairs(window) do
    ops = ops + w.ops
    bytes = bytes + w.bytes
  end
  local ops_so_far = s.finished or 0
  if s.started then ops_so_far = math.max(0, s.started - (self.options.threads or 0)) end
  local row = {
    sec = s.sec,
    ops = ops_so_far,
    ops_per_sec = ops / #window,
    bytes_per_sec = bytes / #window,
  }
  self.rows[#self.rows + 1] = row
  if not self.json then self.out(M.row_line(row)) end
  return row
end

function M.row_line(row)
  return string.format("%5d%10d%10s%10s/s", row.sec, row.ops, ostream_double(row.ops_per_sec),
    M.byte_u(row.bytes_per_sec))
end

-- per second of elapsed time; a run with no measured time shows 0 rather than inf
local function rate(count, elapsed)
  if not elapsed or elapsed <= 0 then return 0 end
  return count / elapsed
end

-- rbd bench's closing lines for a result: elapsed (whole seconds, truncated), ops, and
-- the rates over the exact elapsed time; readwrite adds a line per direction.
function M.summary_lines(result, options)
  local elapsed = result.elapsed or 0
  local lines = {
    string.format("elapsed: %d   ops: %d   ops/sec: %s   bytes/sec: %s/s", math.floor(elapsed),
      result.ops, ostream_double(rate(result.ops, elapsed)), M.byte_u(rate(result.bytes, elapsed))),
  }
  if options.io_type == "readwrite" then
    for _, direction in ipairs { "read", "write" } do
      local ops = result[direction .. "s"] or 0
      lines[#lines + 1] = string.format("%s_ops: %d   %s_ops/sec: %s   %s_bytes/sec: %s/s", direction,
        ops, direction, ostream_double(rate(ops, elapsed)), direction,
        M.byte_u(rate(ops * options.io_size, elapsed)))
    end
  end
  return lines
end

local function lat(result, key)
  return (result.lat or {})[key] or 0
end

-- cephmark's lines, after rbd bench's own: latency in seconds as rados-bench prints it,
-- then failed ops, and verify failures where something was read.
function M.extra_lines(result, options)
  local g = ostream_double
  local lines = {
    string.format("latency(s) avg: %s   stddev: %s   min: %s   max: %s", g(lat(result, "avg")),
      g(lat(result, "stddev")), g(lat(result, "min")), g(lat(result, "max"))),
    string.format("latency(s) p50: %s   p90: %s   p95: %s   p99: %s   p99.9: %s   p99.99: %s",
      g(lat(result, "p50")), g(lat(result, "p90")), g(lat(result, "p95")), g(lat(result, "p99")),
      g(lat(result, "p99_9")), g(lat(result, "p99_99"))),
  }
  if options.io_type == "write" then
    lines[#lines + 1] = string.format("errors: %d", result.errors or 0)
  else
    -- reads of data no cephmark run wrote (another tool's) cannot be checked; say how many
    -- when there were some, rather than let them pass as verified
    local skipped = (result.verify_skipped or 0) > 0 and
      string.format("   verify_skipped: %d", result.verify_skipped) or ""
    lines[#lines + 1] = string.format("errors: %d   verify_failures: %d%s", result.errors or 0,
      result.verify_failures or 0, skipped)
  end
  return lines
end

function M:summary(result)
  if self.json then
    self.out(json.encode(M.json_document(result, self.options, self.rows)))
  else
    for _, line in ipairs(M.summary_lines(result, self.options)) do self.out(line) end
    for _, line in ipairs(M.extra_lines(result, self.options)) do self.out(line) end
  end
  for _, message in ipairs(result.verify_errors or {}) do
    io.stderr:write("verify failed: " .. message .. "\n")
  end
  if result.metadata_error then io.stderr:write("warning: " .. result.metadata_error .. "\n") end
  if result.first_error then
    io.stderr:write(string.format("%d ops failed; the first error: %s\n", result.errors or 0,
      result.first_error))
  end
end

-- rbd bench has no JSON output; this document names its fields after the text layout's
-- labels (ops_per_sec for "ops/sec"), numbers as numbers, rates per second of the exact
-- elapsed time, latencies in seconds.
function M.json_document(result, options, rows)
  local elapsed = result.elapsed or 0
  local datas = json.array()
  for i, row in ipairs(rows or {}) do
    datas[i] = { sec = row.sec, ops = row.ops, ops_per_sec = row.ops_per_sec,
      bytes_per_sec = row.bytes_per_sec }
  end
  local bench = { type = options.io_type, io_size = options.io_size, io_threads = options.threads,
    bytes = options.bytes, pattern = pattern_names[options.pattern] or options.pattern }
  if options.io_type == "readwrite" then
    bench.read_write = string.format("%d:%d", options.rw_mix_read, 100 - options.rw_mix_read)
  end
  local latency = {}
  for _, key in ipairs { "avg", "stddev", "min", "max", "p50", "p90", "p95", "p99", "p99_9", "p99_99" } do
    latency[key] = lat(result, key)
  end
  local doc = {
    bench = bench,
    datas = datas,
    elapsed = elapsed,
    ops = result.ops,
    ops_per_sec = rate(result.ops, elapsed),
    bytes_per_sec = rate(result.bytes, elapsed),
    latency = latency,
    errors = result.errors or 0,
    verify_failures = result.verify_failures or 0,
    verify_skipped = result.verify_skipped or 0,
    interrupted = result.interrupted or false,
  }
  if options.io_type == "readwrite" then
    for _, direction in ipairs { "read", "write" } do
      local ops = result[direction .. "s"] or 0
      doc[direction .. "_ops"] = ops
      doc[direction .. "_ops_per_sec"] = rate(ops, elapsed)
      doc[direction .. "_bytes_per_sec"] = rate(ops * options.io_size, elapsed)
    end
  end
  return doc
end

return M
