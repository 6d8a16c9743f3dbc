-- Axis scales for the HTML report's SVG charts: linear scales with "nice" ticks (1, 2, 5 x
-- 10^k), log10 scales (latency), log2 scales (block sizes: 4K, 64K, 4M), the "nines" scale
-- of percentile plots (50, 90, 99, 99.9 ... evenly spaced), and the unit formatting every
-- axis label and table cell uses (MiB/s, IOPS, latency, sizes). Pure functions, no output.

local M = {}

-- A scale maps a domain value to [0, 1] with :fraction(v); :ticks() lists {value, label}.
local Scale = {}
Scale.__index = Scale

function Scale:fraction(value)
  local t = self.transform(value)
  if self.t_high == self.t_low then return 0.5 end
  return (t - self.t_low) / (self.t_high - self.t_low)
end

function Scale:ticks() return self.tick_list end

local function new_scale(kind, transform, t_low, t_high, ticks)
  return setmetatable({ kind = kind, transform = transform, t_low = t_low, t_high = t_high,
    tick_list = ticks }, Scale)
end

-- ---------------------------------------------------------------- unit formatting

-- Up to `digits` significant figures, without trailing zeros or exponent for
-- everyday magnitudes (0.00125 -> "0.00125", 1500 -> "1500", 2.50 -> "2.5").
function M.number(value, digits)
  digits = digits or 3
  if value == 0 then return "0" end
  if value ~= value then return "nan" end
  local magnitude = math.floor(math.log(math.abs(value), 10))
  local decimals = math.max(0, digits - 1 - magnitude)
  local text = string.format("%." .. decimals .. "f", value)
  if text:find("%.") then text = text:gsub("0+$", ""):gsub("%.$", "") end
  return text
end

-- Counts with k/M/G suffixes, as on IOPS axes: 950, 1.2k, 35k, 1.5M.
function M.count(value)
  local abs = math.abs(value)
  if abs >= 1e9 then return M.number(value / 1e9) .. "G" end
  if abs >= 1e6 then return M.number(value / 1e6) .. "M" end
  if abs >= 1e4 then return M.number(value / 1e3) .. "k" end
  return M.number(value, math.max(3, #string.format("%d", math.floor(abs))))
end

-- Sizes in bytes as operators write them: 512, 4K, 64K, 1M, 4M, 1.5G (powers of 1024).
function M.size(bytes)
  local units = { "", "K", "M", "G", "T", "P" }
  local value, unit = bytes, 1
  while math.abs(value) >= 1024 and unit < #units do
    value = value / 1024
    unit = unit + 1
  end
  return M.number(value) .. units[unit]
end

-- Bandwidth in MiB/s (the unit rados bench calls MB/s).
function M.mib_s(value) return M.number(value) .. " MiB/s" end

-- Latency given in seconds, shown in the unit that keeps 1-3 integer digits.
function M.latency(seconds)
  local abs = math.abs(seconds)
  if abs == 0 then return "0" end
  if abs < 1e-3 then return M.number(seconds * 1e6) .. " µs" end
  if abs < 1 then return M.number(seconds * 1e3) .. " ms" end
  return M.number(seconds) .. " s"
end

-- Percentile labels: 50, 99, 99.9, 99.99.
function M.percentile(p) return M.number(p, 6) end

M.formats = { number = M.number, count = M.count, size = M.size, mib_s = M.mib_s,
  latency = M.latency, percentile = M.percentile }

-- ---------------------------------------------------------------- linear

-- The tick step for about `target` intervals over span: 1, 2 or 5 times a power of ten.
function M.nice_step(span, target)
  target = target or 5
  if span <= 0 then return 1 end
  local raw = span / target
  local power = 10 ^ math.floor(math.log(raw, 10))
  local ratio = raw / power
  local factor = ratio <= 1 and 1 or ratio <= 2 and 2 or ratio <= 5 and 5 or 10
  return factor * power
end

-- linear(low, high, options): domain widened to whole ticks. options.zero (default true)
-- starts the axis at 0 for non-negative data, as bandwidth and IOPS axes should.
function M.linear(low, high, options)
  options = options or {}
  local format = options.format or M.number
  if options.zero ~= false and low > 0 then low = 0 end
  if high < low then low, high = high, low end
  if high == low then high = low + (low == 0 and 1 or math.abs(low)) end
  local step = M.nice_step(high - low, options.ticks or 5)
  local first = math.floor(low / step + 1e-9) * step
  local last = math.ceil(high / step - 1e-9) * step
  local ticks = {}
  local n = math.floor((last - first) / step + 0.5)
  for i = 0, n do
    local value = first + i * step
    if math.abs(value) < step * 1e-9 then value = 0 end
    ticks[#ticks + 1] = { value = value, label = format(value) }
  end
  return new_scale("linear", function(v) return v end, first, last, ticks)
end

-- ---------------------------------------------------------------- log10

-- log10(low, high, options): decades from the one at or below low to the one at or above
-- high; when the axis spans at most three decades, 2 and 5 are ticked too.
function M.log10(low, high, options)
  options = options or {}
  local format = options.format or M.number
  if low <= 0 or high <= 0 then
    error("a log scale needs positive values (got " .. tostring(low) .. ".." .. tostring(high) .. ")", 2)
  end
  if high < low then low, high = high, low end
  local e_low = math.floor(math.log(low, 10) + 1e-9)
  local e_high = math.ceil(math.log(high, 10) - 1e-9)
  if e_high == e_low then e_high = e_low + 1 end
  local ticks = {}
  local minor = e_high - e_low <= 3
  for e = e_low, e_high do
    local decade = 10 ^ e
    ticks[#ticks + 1] = { value = decade, label = format(decade) }
    if minor and e < e_high then
      ticks[#ticks + 1] = { value = 2 * decade, label = format(2 * decade) }
      ticks[#ticks + 1] = { value = 5 * decade, label = format(5 * decade) }
    end
  end
  return new_scale("log10", function(v) return math.log(v, 10) end, e_low, e_high, ticks)
end

-- ---------------------------------------------------------------- log2 (sizes, threads)

-- log2(values, options): for axes whose points are sizes or thread counts swept by
-- doubling; every data value is a tick (labelled 4K, 64K, 4M with format = M.size).
function M.log2(values, options)
  options = options or {}
  local format = options.format or M.number
  local sorted, seen = {}, {}
  for _, v in ipairs(values) do
    if v <= 0 then error("a log2 scale needs positive values (got " .. tostring(v) .. ")", 2) end
    if not seen[v] then
      seen[v] = true
      sorted[#sorted + 1] = v
    end
  end
  table.sort(sorted)
  if #sorted == 0 then sorted = { 1 } end
  local ticks = {}
  for _, v in ipairs(sorted) do ticks[#ticks + 1] = { value = v, label = format(v) } end
  local t_low, t_high = math.log(sorted[1], 2), math.log(sorted[#sorted], 2)
  return new_scale("log2", function(v) return math.log(v, 2) end, t_low, t_high, ticks)
end

-- ---------------------------------------------------------------- nines (percentiles)

local function nines(p) return -math.log(1 - p / 100, 10) end

-- percentiles(max_p): x axis of latency-percentile plots, p in percent; 0 -> 0, 90 -> 1,
-- 99 -> 2, 99.9 -> 3, so the tail gets as much room as the body.
function M.percentiles(max_p)
  max_p = math.min(max_p or 99.99, 99.9999)
  local top = math.max(2, math.ceil(nines(max_p) - 1e-9))
  local ticks = { { value = 0, label = "0" }, { value = 50, label = "50" } }
  for k = 1, top do
    local p = 100 - 100 / 10 ^ k
    ticks[#ticks + 1] = { value = p, label = M.percentile(p) }
  end
  return new_scale("nines", nines, 0, top, ticks)
end

return M
