-- rados bench's output layout: the per-second table (its columns plus IOPS and p99) and
-- the summary (its fields plus percentiles, errors and verify failures), as text or as
-- rados bench's --format json document. Shared by the rados-bench command and scenarios.

local json = require "cephmark.json"

local M = {}
M.__index = M

-- rados bench prints doubles through a C++ stream: 6 significant digits.
local function g(value) return string.format("%.6g", value) end

local header = "  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)      IOPS  p99 lat(s)"

-- new{json=bool, mode="write"|"seq"|"rand", out=function(line)}
function M.new(options)
  local self = setmetatable({}, M)
  self.json = options.json
  self.mode = options.mode
  self.out = options.out or print
  self.rows = 0
  return self
end

-- The preamble and table header are printed when the first second arrives (or before
-- the summary), so a run refused at start prints nothing but its error.
function M:preamble(p)
  self.pending_preamble = p
end

function M:start()
  self.started = false
end

function M:flush_start()
  if self.json or self.started then return end
  self.started = true
  local p = self.pending_preamble
  if p then
    self.out(string.format(
    "Maintaining %d concurrent writes of %d bytes to objects of size %d for up to %d seconds or %d objects",
    p.threads, p.block_size, p.object_size, p.seconds, p.max_objects))
    if p.prefix then self.out("Object prefix: " .. p.prefix) end
  end
  self.out(header)
  self.out(string.format("%5d %7d %9d %9d %9s %9s %11s %11s %9s %11s", 0, 0, 0, 0, "0", "0", "-",
    "0", "0", "-"))
end

-- one second of the engine's series; the partial last second is not a table row, as in
-- rados bench
function M:second(s)
  if self.json or s.partial then return end
  self:flush_start()
  self.rows = self.rows + 1
  if self.rows % 20 == 0 then self.out(header) end
  self.out(string.format("%5d %7d %9d %9d %9s %9s %11s %11s %9d %11s", s.sec, s.cur_ops,
    s.started, s.finished, g(s.avg_mib), g(s.cur_mib), s.last_lat and g(s.last_lat) or "-",
    g(s.avg_lat), math.floor(s.iops + 0.5), s.p99 and g(s.p99) or "-"))
end

local function lat(result, key)
  return result.lat[key] or 0
end

function M:summary(result)
  if self.json then
    self.out(json.encode(M.json_document(result, self.mode)))
    return
  end
  self:flush_start()
  local write = self.mode == "write"
  local width = write and 24 or 22
  local function line(label, value)
    self.out(label .. string.rep(" ", math.max(1, width - #label)) .. value)
  end
  line("Total time run:", g(result.elapsed))
  line(write and "Total writes made:" or "Total reads made:", tostring(result.ops))
  line(write and "Write size:" or "Read size:", tostring(result.block_size))
  line("Object size:", tostring(result.object_size))
  line("Bandwidth (MB/sec):", g(result.bandwidth_mib))
  if write then
    line("Stddev Bandwidth:", g(result.bandwidth_stddev))
    line("Max bandwidth (MB/sec):", g(result.bandwidth_max))
    line("Min bandwidth (MB/sec):", g(result.bandwidth_min))
  end
  line("Average IOPS:", tostring(math.floor(result.iops)))
  line("Stddev IOPS:", g(result.iops_stddev))
  line("Max IOPS:", tostring(math.floor(result.iops_max)))
  line("Min IOPS:", tostring(math.floor(result.iops_min)))
  line("Average Latency(s):", g(lat(result, "avg")))
  if write then line("Stddev Latency(s):", g(lat(result, "stddev"))) end
  line("Max latency(s):", g(lat(result, "max")))
  line("Min latency(s):", g(lat(result, "min")))
  line("Latency p50(s):", g(lat(result, "p50")))
  line("Latency p90(s):", g(lat(result, "p90")))
  line("Latency p99(s):", g(lat(result, "p99")))
  line("Latency p99.9(s):", g(lat(result, "p99_9")))
  line("Latency p99.99(s):", g(lat(result, "p99_99")))
  line("Errors:", tostring(result.errors))
  if not write then line("Verify failures:", tostring(result.verify_failures)) end
  for _, message in ipairs(result.verify_errors or {}) do
    io.stderr:write("verify failed: " .. message .. "\n")
  end
  if result.first_error then
    io.stderr:write(string.format("%d ops failed; the first error: %s\n", result.errors,
      result.first_error))
  end
end

-- rados bench's JSON document: every value is a string, numbers printed with %f, the
-- way rados bench's formatter writes them. cephmark's additions use new field names.
function M.json_document(result, mode)
  local function f(value) return string.format("%f", value or 0) end
  local datas = json.array()
  for _, s in ipairs(result.series or {}) do
    if not s.partial then
      datas[#datas + 1] = {
        sec = tostring(s.sec), cur_ops = tostring(s.cur_ops), started = tostring(s.started),
        finished = tostring(s.finished), avg_bw = f(s.avg_mib), cur_bw = f(s.cur_mib),
        last_lat = f(s.last_lat), avg_lat = f(s.avg_lat),
        cur_iops = tostring(math.floor(s.iops + 0.5)), p99_lat = f(s.p99),
      }
    end
  end
  local doc = {
    datas = datas,
    total_time_run = f(result.elapsed),
    object_size = tostring(result.object_size),
    bandwidth = f(result.bandwidth_mib),
    average_iops = tostring(math.floor(result.iops)),
    stddev_iops = f(result.iops_stddev),
    max_iops = tostring(math.floor(result.iops_max)),
    min_iops = tostring(math.floor(result.iops_min)),
    average_latency = f(lat(result, "avg")),
    max_latency = f(lat(result, "max")),
    min_latency = f(lat(result, "min")),
    latency_p50 = f(lat(result, "p50")), latency_p90 = f(lat(result, "p90")),
    latency_p99 = f(lat(result, "p99")), latency_p99_9 = f(lat(result, "p99_9")),
    latency_p99_99 = f(lat(result, "p99_99")),
    errors = tostring(result.errors), verify_failures = tostring(result.verify_failures),
  }
  if mode == "write" then
    doc.concurrent_ios = tostring(result.threads)
    doc.op_size = tostring(result.block_size)
    doc.object_prefix = result.prefix
    doc.total_writes_made = tostring(result.ops)
    doc.write_size = tostring(result.block_size)
    doc.stddev_bandwidth = f(result.bandwidth_stddev)
    doc.max_bandwidth = f(result.bandwidth_max)
    doc.min_bandwidth = f(result.bandwidth_min)
    doc.stddev_latency = f(lat(result, "stddev"))
  else
    doc.total_reads_made = tostring(result.ops)
    doc.read_size = tostring(result.block_size)
  end
  return doc
end

return M
