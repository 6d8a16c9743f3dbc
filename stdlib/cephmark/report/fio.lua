-- fio's normal output layout (fio 3.33, stat.c) for a bench result: the job description
-- line, the job header, a block per data direction -- "write: IOPS=..., BW=...", the
-- " lat (usec): min=, max=, avg=, stdev=" line, the "clat percentiles (usec):" block, the
-- bw and iops sample lines -- and the "Run status group" lines. Number formatting follows
-- fio's num2str and its unit choices, so the lines read (and parse) like fio's. Pure
-- formatting: tested from hand-made results with no cluster.

local M = {}

-- fio's default percentile_list
M.default_percentiles = { 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99 }

-- the percentiles every cephmark result carries (lat.p50 ...), by fio's number for them
local result_percentiles = {
  { 50, "p50" }, { 90, "p90" }, { 95, "p95" }, { 99, "p99" }, { 99.9, "p99_9" }, { 99.99, "p99_99" },
}

local SIG_FIGS = 4 -- fio's sig_figs default
local KB_BASE = 1024 -- fio's kb_base default: binary units first, decimal in parentheses

local unit_suffixes = { none = "", persec = "/s", byte = "B", bit = "bit", bytepersec = "B/s",
  bitpersec = "bit/s" }
local si_prefixes = { "", "k", "M", "G", "T", "P", "E" }
local iec_prefixes = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" }

local function digits(n) return #string.format("%d", n) end

-- fio's num2str(num, maxlen, base, pow2, units): divides by 1000 (or 1024) until the
-- number has at most maxlen digits, then spends the room left on decimals, rounding the
-- way fio does (so 30954273 B/s is "29.5MiB/s" and "31.0MB/s").
function M.num2str(num, maxlen, base, pow2, units)
  num = math.tointeger(math.floor(num)) or 0
  local prefixes = pow2 and iec_prefixes or si_prefixes
  local thousand = pow2 and 1024 or 1000
  local post_index = 0
  while base > 1 do
    base = base // thousand
    post_index = post_index + 1
  end
  if units == "bit" or units == "bitpersec" then num = num * 8 end
  local modulo, carry
  while post_index < #si_prefixes do
    if digits(num) <= maxlen then break end
    modulo = num % thousand
    num = num // thousand
    carry = modulo >= thousand // 2
    post_index = post_index + 1
  end
  if post_index >= #si_prefixes then post_index = 0 end
  local prefix, suffix = prefixes[post_index + 1], unit_suffixes[units]
  if modulo == nil then return string.format("%d%s%s", num, prefix, suffix) end
  local room = maxlen - digits(num)
  if room <= 1 then
    if carry then num = num + 1 end
    return string.format("%d%s%s", num, prefix, suffix)
  end
  local fraction = string.format("%." .. (room - 1) .. "f", modulo / thousand)
  if fraction:sub(1, 1) == "1" then num = num + 1 end
  return string.format("%d.%s%s%s", num, fraction:sub(3), prefix, suffix)
end

local function ns(seconds)
  return math.tointeger(math.floor(seconds * 1e9 + 0.5)) or 0
end

-- The percentiles to print for a latency table, as {p, value in ns}, ascending. With
-- lat.percentiles (any list fio asks for: {{p=1, value=s}, ...} or {[1]=s, ["99.5"]=s})
-- it is fio's default list; otherwise the ones every result has, p50 to p99.99.
function M.percentile_values(lat, list)
  local entries = {}
  local extra = lat.percentiles
  if type(extra) == "table" then
    local by_p = {}
    for key, value in pairs(extra) do
      if type(value) == "table" and value.p then
        by_p[tonumber(value.p)] = value.value
      elseif tonumber(key) then
        by_p[tonumber(key)] = value
      end
    end
    for _, p in ipairs(list or M.default_percentiles) do
      if by_p[p] then entries[#entries + 1] = { p = p, ns = ns(by_p[p]) } end
    end
    if #entries > 0 then return entries end
  end
  for _, pair in ipairs(result_percentiles) do
    local value = lat[pair[2]]
    if value then entries[#entries + 1] = { p = pair[1], ns = ns(value) } end
  end
  return entries
end

-- fio's show_clat_percentiles: the unit follows the smallest and largest values shown
-- (nsec, usec above 2 us / 100 us, msec above 2 ms / 100 ms), values rounded up into it,
-- as many per line as fit in 80 columns.
function M.percentile_lines(name, entries, precision)
  precision = precision or 2
  if #entries == 0 then return {} end
  local minv, maxv = math.maxinteger, 0
  for _, e in ipairs(entries) do
    minv = math.min(minv, e.ns)
    maxv = math.max(maxv, e.ns)
  end
  local scale_down, divisor, unit
  if minv > 2000000 and maxv > 99999999 then
    scale_down, divisor, unit = 2, 1000000, "msec"
  elseif minv > 2000 and maxv > 99999 then
    scale_down, divisor, unit = 1, 1000, "usec"
  else
    scale_down, divisor, unit = 0, 1, "nsec"
  end
  local scaled_max = maxv // divisor
  local time_width = 5
  if scaled_max >= 1 then time_width = math.max(5, math.floor(math.log(scaled_max, 10) + 1)) end
  local format = string.format(" %%%d.%dfth=[%%%dd]%%s", precision + 3, precision, time_width)
  local per_line = (80 - 7) // (precision + 10 + time_width)
  local text = { string.format("    %s percentiles (%s):\n     |", name, unit) }
  for j = 0, #entries - 1 do
    if j ~= 0 and j % per_line == 0 then text[#text + 1] = "     |" end
    local is_last = j == #entries - 1
    local value = entries[j + 1].ns
    for _ = 1, scale_down do value = (value + 999) // 1000 end
    text[#text + 1] = string.format(format, entries[j + 1].p, value, is_last and "\n" or ",")
    if is_last then break end
    if j % per_line == per_line - 1 then text[#text + 1] = "\n" end
  end
  local lines = {}
  for line in table.concat(text):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  return lines
end

-- fio's display_lat: min and max as integers of the unit, usec or msec only when the
-- spread (stdev) makes the finer unit noise.
function M.lat_line(name, lat)
  local min, max = ns(lat.min or 0), ns(lat.max or 0)
  local mean, dev = (lat.avg or 0) * 1e9, (lat.stddev or 0) * 1e9
  local base = "(nsec)"
  if min > 2000000 and max > 99999999 and dev > 1000000.0 then
    min, max, mean, dev, base = min // 1000000, max // 1000000, mean / 1000000, dev / 1000000, "(msec)"
  elseif min > 2000 and max > 99999 and dev > 1000.0 then
    min, max, mean, dev, base = min // 1000, max // 1000, mean / 1000, dev / 1000, "(usec)"
  end
  return string.format("    %s %s: min=%s, max=%s, avg=%5.02f, stdev=%5.02f", name, base,
    M.num2str(min, 6, 1, false, "none"), M.num2str(max, 6, 1, false, "none"), mean, dev)
end

-- min, max, mean and sample standard deviation, as fio's calc_lat gives them
local function sample_stats(samples)
  local n = #samples
  if n == 0 then return nil end
  local min, max, sum = samples[1], samples[1], 0
  for _, v in ipairs(samples) do
    min, max, sum = math.min(min, v), math.max(max, v), sum + v
  end
  local mean = sum / n
  local squares = 0
  for _, v in ipairs(samples) do squares = squares + (v - mean) ^ 2 end
  local dev = n > 1 and math.sqrt(squares / (n - 1)) or 0
  return min, max, mean, dev, n
end

-- fio's bw line: per-interval samples in KiB/s (MiB/s above 1 GiB/s), their share of the
-- group's aggregate bandwidth as per=. fio samples every 500 ms; cephmark every second.
function M.bw_line(samples_kib, aggregate_bytes_per_sec)
  local min, max, mean, dev, n = sample_stats(samples_kib)
  if not min then return nil end
  local share = 100.0
  if aggregate_bytes_per_sec > 1024 then
    share = math.min(100.0, mean * 100.0 / (aggregate_bytes_per_sec / 1024.0))
  end
  local unit = "KiB"
  if mean > KB_BASE * KB_BASE then
    min, max = math.floor(min / KB_BASE), math.floor(max / KB_BASE)
    mean, dev, unit = mean / KB_BASE, dev / KB_BASE, "MiB"
  end
  return string.format("   bw (%5s/s): min=%5d, max=%5d, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, samples=%d",
    unit, min, max, share, mean, dev, n)
end

function M.iops_line(samples)
  local min, max, mean, dev, n = sample_stats(samples)
  if not min then return nil end
  return string.format("   iops        : min=%5d, max=%5d, avg=%5.02f, stdev=%5.02f, samples=%d",
    min, max, mean, dev, n)
end

-- fio's runtime is whole milliseconds; never 0, which fio would not print at all
local function runtime_ms(elapsed)
  return math.max(1, math.floor((elapsed or 0) * 1000))
end

-- One data direction's block. d = {name = "read"|"write"|"mixed", ops, bytes, runtime_ms,
-- lat, bw_samples (KiB/s), iops_samples, aggregate (B/s)}.
function M.direction_lines(d, options)
  options = options or {}
  local runt = d.runtime_ms
  local bw = d.bytes * 1000 // runt
  local iops = d.ops * 1000 // runt
  -- fio reports zoned-device resets on every write line
  local post = d.name == "write" and "; 0 zone resets" or ""
  local lines = {
    string.format("  %s: IOPS=%s, BW=%s (%s)(%s/%dmsec)%s", d.name, M.num2str(iops, SIG_FIGS, 1, false, "none"),
      M.num2str(bw, SIG_FIGS, 1, true, "bytepersec"), M.num2str(bw, SIG_FIGS, 1, false, "bytepersec"),
      M.num2str(d.bytes, SIG_FIGS, 1, true, "byte"), runt, post),
  }
  if d.lat and (d.lat.count or 1) > 0 and d.lat.min then
    lines[#lines + 1] = M.lat_line(" lat", d.lat)
    for _, line in ipairs(M.percentile_lines("clat", M.percentile_values(d.lat, options.percentiles))) do
      lines[#lines + 1] = line
    end
  end
  local bw_text = d.bw_samples and M.bw_line(d.bw_samples, d.aggregate or bw)
  if bw_text then lines[#lines + 1] = bw_text end
  local iops_text = d.iops_samples and M.iops_line(d.iops_samples)
  if iops_text then lines[#lines + 1] = iops_text end
  return lines
end

-- fio's "Run status group" line for one direction (one job: min = max = aggregate)
function M.group_line(label, bytes, runt)
  local agg = bytes * 1000 // runt
  local function both(value, units)
    return M.num2str(value, SIG_FIGS, 1, true, units), M.num2str(value, SIG_FIGS, 1, false, units)
  end
  local bw, bw_alt = both(agg, "bytepersec")
  local io, io_alt = both(bytes, "byte")
  return string.format("%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%d-%dmsec", label, bw, bw_alt,
    bw, bw, bw_alt, bw_alt, io, io_alt, runt, runt)
end

-- fio's rw= name for an io type and pattern
function M.rw_name(io_type, pattern)
  local random = pattern == "rand"
  if io_type == "read" then return random and "randread" or "read" end
  if io_type == "write" then return random and "randwrite" or "write" end
  return random and "randrw" or "rw"
end

-- "rbd_iodepth32: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) ..., ioengine=rbd, iodepth=32"
function M.description_line(o)
  local bs = M.num2str(o.io_size, SIG_FIGS, 1, true, "byte")
  return string.format("%s: (g=0): rw=%s, bs=(R) %s-%s, (W) %s-%s, (T) %s-%s, ioengine=%s, iodepth=%d",
    o.name, M.rw_name(o.io_type, o.pattern), bs, bs, bs, bs, bs, bs, o.ioengine or "rbd", o.iodepth)
end

-- Full seconds of the series (the partial last one and warm-up left out, as in the summary)
local function sample_seconds(series)
  local seconds = {}
  for _, s in ipairs(series or {}) do
    if not s.partial and not s.warmup then seconds[#seconds + 1] = s end
  end
  return seconds
end

local function samples_from(seconds, ops_key, bytes_key)
  local kib, iops = {}, {}
  for _, s in ipairs(seconds) do
    if s[ops_key] == nil or s[bytes_key] == nil then return nil, nil end
    kib[#kib + 1] = s[bytes_key] // 1024
    iops[#iops + 1] = s[ops_key]
  end
  return kib, iops
end

-- The whole report for an rbd bench result, as lines. options: name (the job), pid,
-- time (for the header's date), percentiles (fio's list), io_size, iodepth.
-- A readwrite result is split into read and write blocks when it carries each
-- direction's latency (lat_read, lat_write); otherwise it is reported as fio does with
-- unified_rw_reporting=mixed, one "mixed" block over all ops.
function M.lines(result, options)
  local name = options.name or "cephmark"
  local io_size = options.io_size or result.io_size
  local runt = runtime_ms(result.elapsed)
  local seconds = sample_seconds(result.series)
  local lines = {
    string.format("%s: (groupid=0, jobs=1): err= 0: pid=%d: %s", name, options.pid or 0,
      os.date("%a %b %e %H:%M:%S %Y", options.time)),
  }
  local groups = {}
  local function add(direction, group_label)
    for _, line in ipairs(M.direction_lines(direction, options)) do lines[#lines + 1] = line end
    groups[#groups + 1] = M.group_line(group_label, direction.bytes, runt)
  end
  local io_type = result.io_type or options.io_type
  if io_type == "readwrite" and result.lat_read and result.lat_write then
    for _, dir in ipairs { { "read", "   READ" }, { "write", "  WRITE" } } do
      local ops = result[dir[1] .. "s"] or 0
      local kib, iops = samples_from(seconds, dir[1] .. "_ops", dir[1] .. "_bytes")
      add({ name = dir[1], ops = ops, bytes = ops * io_size, runtime_ms = runt,
        lat = result["lat_" .. dir[1]], bw_samples = kib, iops_samples = iops }, dir[2])
    end
  else
    local direction = io_type == "readwrite" and "mixed" or io_type
    local label = ({ read = "   READ", write = "  WRITE", mixed = "  MIXED" })[direction]
    local kib, iops = samples_from(seconds, "ops", "bytes")
    add({ name = direction, ops = result.ops, bytes = result.bytes, runtime_ms = runt, lat = result.lat,
      bw_samples = kib, iops_samples = iops }, label)
  end
  -- fio's count of I/Os issued per direction (reads, writes, trims, syncs)
  local reads, writes = result.reads, result.writes
  if reads == nil or writes == nil then
    reads = io_type == "read" and result.ops or (io_type == "write" and 0 or nil)
    writes = io_type == "write" and result.ops or (io_type == "read" and 0 or nil)
  end
  if reads and writes then
    lines[#lines + 1] = string.format("     issued rwts: total=%d,%d,0,0 short=0,0,0,0 dropped=0,0,0,0",
      reads, writes)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "Run status group 0 (all jobs):"
  for _, line in ipairs(groups) do lines[#lines + 1] = line end
  return lines
end

return M
