-- bench/aa-spread-report.lua: reads the results folder of an A/A run (bench/aa-spread.lua:
-- two identical variants a and b, in one pool or two) and prints, for 4K and 4M writes and for IOPS (bandwidth
-- moves with it: the block size is fixed), p50 and p99 latency: the spread of each
-- variant and of the paired A/A ratios, the A/A change with its interval over the first 3,
-- 5 and 10 repetitions, and the smallest change 3, 5 and 10 repetitions detect at the
-- spread measured. docs/statistics.md ("Measured on the local cluster") holds its figures.
--   cephmark run bench/aa-spread-report.lua -p results=DIR
local params = ...
local stats = require "cephmark.stats"
local results = require "cephmark.results"

local function fail(message)
  io.stderr:write("aa-spread-report: ", message, "\n")
  os.exit(2)
end

local dir = params.results
if dir == nil or dir == "" then fail("usage: cephmark run bench/aa-spread-report.lua -p results=DIR") end
local document, err = results.read_document(dir .. "/results.json", dir)
if document == nil then fail(err) end
if type(document.phases) ~= "table" then fail(dir .. "/results.json has no phases") end

local BASE, NEW = "a", "b"
local SIZES = { "4K", "4M" }
local METRICS = {
  { name = "iops", label = "IOPS", get = function(r) return r.iops end },
  { name = "lat.p50", label = "p50", get = function(r) return r.lat and r.lat.p50 end },
  { name = "lat.p99", label = "p99", get = function(r) return r.lat and r.lat.p99 end },
}
local WINDOWS = { 3, 5, 10 }

-- values[size][pool][metric] = {[repetition] = figure}, from the write phases that ended well
local values, repetitions = {}, 0
for _, phase in ipairs(document.phases) do
  local variant = phase.variant or {}
  -- the side: a sweep point in one pool, or the pool itself (layout two-pools)
  local size, pool, repetition = variant.block_size, variant.side or variant.pool, phase.repetition
  if phase.name == "write" and phase.status == "ok" and size and pool and math.type(repetition) == "integer" then
    repetitions = math.max(repetitions, repetition)
    for _, metric in ipairs(METRICS) do
      local figure = metric.get(phase.result or {})
      if type(figure) == "number" then
        values[size] = values[size] or {}
        values[size][pool] = values[size][pool] or {}
        values[size][pool][metric.name] = values[size][pool][metric.name] or {}
        values[size][pool][metric.name][repetition] = figure
      end
    end
  end
end
if repetitions == 0 then fail(dir .. ": no write phase with a repetition (run bench/aa-spread.lua with --repeats)") end

-- `digits` significant digits. A standard deviation from 10 figures is itself uncertain by
-- about a quarter of its value (1 / sqrt(2 * 9)), so spreads and what follows from them get
-- 2; a median of 10 figures that spread by a few percent is good to about 1 %, so 3.
local function significant(value, digits)
  if value == nil then return "-" end
  if value == 0 then return "0" end
  local magnitude = math.floor(math.log(math.abs(value), 10))
  if magnitude >= digits - 1 then
    local unit = 10 ^ (magnitude - digits + 1)
    return string.format("%.0f", math.floor(value / unit + 0.5) * unit)
  end
  return string.format("%." .. (digits - 1 - magnitude) .. "f", value)
end
local function two_digits(value) return significant(value, 2) end

local function first(keyed, n)
  local subset = {}
  for repetition = 1, n do subset[repetition] = keyed[repetition] end
  return subset
end

local function count(keyed)
  local n = 0
  for _ in pairs(keyed) do n = n + 1 end
  return n
end

print(string.format("A/A run %s: scenario %s, %d repetitions (%s complete), started %s, order seed %s",
  dir, tostring(document.scenario and document.scenario.name or document.scenario), repetitions,
  tostring(document.repetitions_completed), tostring(document.started_at), tostring(document.order_seed)))
local params_of = type(document.params) == "table" and document.params or {}
print(string.format("layout %s, pg_num %s: change = b against a, paired by repetition",
  tostring(params_of.layout or "two-pools"), tostring(params_of.pg_num or 8)))
print()
print("spread: sd of the log figures over the repetitions, % (2 digits; the sd of 10 figures")
print("is itself uncertain by about a quarter); shared: the part of the variants' variance")
print("that a repetition gives both (pairing cancels it)")
print(string.format("%-4s %-5s %10s %10s %9s %9s %10s %8s", "size", "metric", "median a", "median b", "spread a",
  "spread b", "spread b/a", "shared"))

local rows = {}
for _, size in ipairs(SIZES) do
  for _, metric in ipairs(METRICS) do
    local base = values[size] and values[size][BASE] and values[size][BASE][metric.name]
    local new = values[size] and values[size][NEW] and values[size][NEW][metric.name]
    if base and new then
      local a, b, change = stats.summary(base), stats.summary(new), stats.change(base, new)
      local row = { size = size, metric = metric, base = base, new = new, a = a, b = b, change = change }
      rows[#rows + 1] = row
      -- per-variant variance against the unshared part the ratio keeps (sd_ratio^2 / 2)
      local shared
      if a.spread and b.spread and change.spread then
        local variance = (a.spread ^ 2 + b.spread ^ 2) / 2
        if variance > 0 then shared = math.max(0, 1 - change.spread ^ 2 / 2 / variance) * 100 end
      end
      local scale, unit = 1, ""
      if metric.name:match("^lat") then scale, unit = 1000, " ms" end
      print(string.format("%-4s %-5s %10s %10s %9s %9s %10s %8s", size, metric.label,
        significant(a.median * scale, 3) .. unit, significant(b.median * scale, 3) .. unit, two_digits(a.spread),
        two_digits(b.spread), two_digits(change.spread), shared and string.format("%.0f %%", shared) or "-"))
    end
  end
end
if #rows == 0 then fail(dir .. ": no write phases of both a and b at block_size 4K or 4M") end

print()
print("A/A change b against a over the first n repetitions (stats.change, paired), and its verdict")
for _, row in ipairs(rows) do
  local kind = stats.kind_of(row.metric.name)
  for _, n in ipairs(WINDOWS) do
    if n <= repetitions then
      local change = stats.change(first(row.base, n), first(row.new, n))
      print(string.format("%-4s %-5s n=%-2d %-24s %s", row.size, row.metric.label, change.n,
        stats.format_change(change), stats.verdict(change, kind)))
    end
  end
end

print()
print("smallest change detected in 80 % of experiments, %:")
print("  mde: stats.change's over the first n repetitions (its own spread each time)")
print(string.format("  paired: stats.detectable(n, spread b/a / sqrt 2) at the paired spread of all %d repetitions",
  repetitions))
print("  unpaired: stats.detectable(n, spread of a variant, rms of a and b), for two separate runs")
local header = string.format("%-4s %-5s | %-16s | %-16s | %-16s", "size", "metric", "mde n=3/5/10",
  "paired 3/5/10", "unpaired 3/5/10")
print(header)
for _, row in ipairs(rows) do
  local mde, paired, unpaired = {}, {}, {}
  local variant_spread
  if row.a.spread and row.b.spread then variant_spread = math.sqrt((row.a.spread ^ 2 + row.b.spread ^ 2) / 2) end
  for _, n in ipairs(WINDOWS) do
    local subset = n <= repetitions and stats.change(first(row.base, n), first(row.new, n)) or {}
    mde[#mde + 1] = two_digits(subset.mde)
    paired[#paired + 1] = row.change.spread and two_digits(stats.detectable(n, row.change.spread / math.sqrt(2)))
      or "-"
    unpaired[#unpaired + 1] = variant_spread and two_digits(stats.detectable(n, variant_spread)) or "-"
  end
  print(string.format("%-4s %-5s | %-16s | %-16s | %-16s", row.size, row.metric.label, table.concat(mde, " / "),
    table.concat(paired, " / "), table.concat(unpaired, " / ")))
end

-- the windows of 3 and 5 that do not overlap: how much one short experiment's view moves
print()
print("A/A over disjoint windows of repetitions (change [interval], mde %):")
for _, row in ipairs(rows) do
  local parts = {}
  for _, n in ipairs { 3, 5 } do
    for start = 1, repetitions - n + 1, n do
      local base, new = {}, {}
      for repetition = start, start + n - 1 do
        base[repetition], new[repetition] = row.base[repetition], row.new[repetition]
      end
      if count(base) == n and count(new) == n then
        local change = stats.change(base, new)
        parts[#parts + 1] = string.format("%d-%d %s mde %s", start, start + n - 1, stats.format_change(change),
          two_digits(change.mde))
      end
    end
  end
  print(string.format("%-4s %-5s %s", row.size, row.metric.label, table.concat(parts, "; ")))
end
