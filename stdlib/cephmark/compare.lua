-- Comparisons: the chosen metrics of recorded phases, one row per variant (pool, sweep
-- point, config setting, or any variant dimension) and phase, with each value's relative
-- difference against a baseline variant. With repetitions every figure carries its 95 %
-- interval, every change its interval, a verdict and the smallest change the repetitions
-- detect (cephmark.stats, docs/statistics.md), and each phase and metric names its best
-- variant and those as good within noise. Built from the phase records a scenario keeps
-- (or two results folders: cmd/compare.lua), printed as an aligned table, and stored in
-- results as data.

local json = require "cephmark.json"
local stats = require "cephmark.stats"

local M = {}

M.default_metrics = { "bandwidth_mib", "iops", "lat.p50", "lat.p99" }

-- The summary fields a bench result has (docs/rados.md); other numeric fields of a custom
-- phase's result are accepted when some phase has them.
M.known_metrics = { "bandwidth_mib", "bandwidth_stddev", "bandwidth_max", "bandwidth_min",
  "iops", "iops_stddev", "iops_max", "iops_min", "elapsed", "ops", "bytes", "started",
  "errors", "verify_failures", "lat.avg", "lat.stddev", "lat.min", "lat.max", "lat.p50",
  "lat.p90", "lat.p95", "lat.p99", "lat.p99_9", "lat.p99_99",
  -- the OSDs' side of the phase (cluster.osd: cephmark.telemetry, docs/telemetry.md)
  "osd.op_latency", "osd.op_r_latency", "osd.op_w_latency", "osd.op_rw_latency", "osd.op_process_latency",
  "osd.op_r_process_latency", "osd.op_w_process_latency", "osd.subop_w_latency", "osd.commit_latency",
  "osd.kv_sync_latency", "osd.op", "osd.op_r", "osd.op_w", "osd.op_in_bytes", "osd.op_out_bytes",
  -- the phase's cluster table (docs/cpu.md)
  "cpu.client_per_op", "cpu.osd_per_op", "cpu.mib_per_osd_cpu_second",
  -- the phase's pool after a write phase (cluster.space, docs/space.md): raw GiB per stored
  -- GiB (and per GiB written), stored and raw bytes
  "space.raw_per_stored", "space.raw_per_written", "space.stored", "space.raw_used" }

local known = {}
for _, name in ipairs(M.known_metrics) do known[name] = true end

-- value(summary, "lat.p99") -> number | nil
function M.value(summary, path)
  local value = summary
  for part in path:gmatch("[^.]+") do
    if type(value) ~= "table" then return nil end
    value = value[part]
  end
  return type(value) == "number" and value or nil
end

-- record_value(record, metric) -> number | nil: a phase record's figure: of its result, else
-- of its `cluster` table, what the cluster's side measured over the phase (osd.* from the
-- OSDs' counters, docs/telemetry.md; cpu.* from the CPU of the client and the daemons,
-- docs/cpu.md; space.* from ceph df after a write phase, docs/space.md).
function M.record_value(record, metric)
  if type(record) ~= "table" then return nil end
  local value = M.value(record.result, metric)
  if value == nil and type(record.cluster) == "table" then value = M.value(record.cluster, metric) end
  return value
end

-- relative(value, base) -> percent difference, or nil when it has no meaning
function M.relative(value, base)
  if value == nil or base == nil then return nil end
  if base == 0 then return value == 0 and 0 or nil end
  return (value - base) / base * 100
end

local function row_key(record, by)
  if by == "variant" then return record.label end
  if by == "point" then return record.point end
  return record.variant and record.variant[by]
end

local function fail(message)
  error(message, 0)
end

-- Appends item to list unless seen has it: distinct items in order of first appearance.
local function add_once(list, seen, item)
  if not seen[item] then
    seen[item] = true
    list[#list + 1] = item
  end
end

local function where_value(record, dimension)
  if dimension == "point" then return record.point end
  return (record.variant or {})[dimension]
end

-- The message for a `where` that no measured phase matches: what was asked, and for each
-- of its dimensions the values the phases do have, so a value written in another form
-- ("524288" for "512K") or a misspelt dimension shows at once.
local function where_mismatch(measured, where)
  local dimensions, asked, known = {}, {}, {}
  for dimension in pairs(where) do dimensions[#dimensions + 1] = tostring(dimension) end
  table.sort(dimensions)
  local all_dimensions, seen_dimension = {}, {}
  for _, record in ipairs(measured) do
    if record.point then add_once(all_dimensions, seen_dimension, "point") end
    for dimension in pairs(record.variant or {}) do add_once(all_dimensions, seen_dimension, dimension) end
  end
  table.sort(all_dimensions)
  for _, dimension in ipairs(dimensions) do
    asked[#asked + 1] = string.format("%s = '%s'", dimension, tostring(where[dimension]))
    local values, seen = {}, {}
    for _, record in ipairs(measured) do
      local value = where_value(record, dimension)
      if value ~= nil and not seen[value] then
        seen[value] = true
        values[#values + 1] = tostring(value)
      end
    end
    if #values > 0 then
      known[#known + 1] = string.format("%s: %s", dimension, table.concat(values, ", "))
    else
      known[#known + 1] = string.format("no phase has a %s; dimensions: %s", dimension,
        #all_dimensions > 0 and table.concat(all_dimensions, ", ") or "none")
    end
  end
  return string.format("compare: no phase matches where = {%s} (%s)", table.concat(asked, ", "),
    table.concat(known, "; "))
end

-- The median of a list of numbers (nil for none).
local function median(values)
  local sorted = {}
  for i, v in ipairs(values) do sorted[i] = v end
  if #sorted == 0 then return nil end
  table.sort(sorted)
  local middle = (#sorted + 1) // 2
  if #sorted % 2 == 1 then return sorted[middle] end
  return (sorted[middle] + sorted[middle + 1]) / 2
end

-- cell_value(records, metric) -> the value a comparison shows for a variant's phase, and
-- the value of each record (json.null where it has none): the value of its one phase, or
-- with repetitions the median of theirs.
function M.cell_value(records, metric)
  local values, numbers = json.array(), {}
  for i, record in ipairs(records) do
    local value = M.record_value(record, metric)
    values[i] = value == nil and json.null or value
    if value ~= nil then numbers[#numbers + 1] = value end
  end
  if #records == 1 then return numbers[1], values end
  return median(numbers), values
end

-- The run a cell's phases come from (a results folder's name with s:compare{with=}, or this
-- run's): repetition numbers pair two cells only within one run.
local function run_of(cell)
  local record = cell[1]
  return record and record.variant and record.variant.run or ""
end

-- A cell's figures of one metric keyed by repetition, for cephmark.stats; figures that are
-- missing or not finite are left out (the per-repetition list shows them as null).
local function keyed_values(cell, metric)
  local keyed = {}
  for _, record in ipairs(cell) do
    local value = M.record_value(record, metric)
    if value ~= nil and value == value and value ~= math.huge and value ~= -math.huge then
      keyed[record.repetition or 1] = value
    end
  end
  return keyed
end

-- Whether a phase record started while the cluster was not quiet (its
-- cluster.state.unquiet: cephmark.state, docs/cluster-state.md).
function M.is_unquiet(record)
  local state = type(record) == "table" and type(record.cluster) == "table" and record.cluster.state
  return type(state) == "table" and type(state.unquiet) == "table" and #state.unquiet > 0
end

-- How many of the cells' phases started unquiet, of how many.
local function unquiet_count(...)
  local unquiet, total = 0, 0
  for _, cell in pairs { ... } do
    for _, record in ipairs(cell) do
      total = total + 1
      if M.is_unquiet(record) then unquiet = unquiet + 1 end
    end
  end
  return unquiet, total
end

-- The mention a verdict carries when some of the phases behind it started unquiet.
function M.unquiet_text(unquiet, total)
  return string.format("(unquiet: %d of %d phase%s)", unquiet, total, total == 1 and "" or "s")
end

-- The verdict words of a metric: stats' for bandwidth, IOPS and latency; higher / lower
-- for the others (counts, seconds).
local function kind(metric)
  return stats.kind_of(metric) or "latency"
end

-- row_stats(cell, metric [, base_cell, paired]) -> the figures of one row and metric: n,
-- median, ci_low, ci_high (95 %, nil with one repetition) and values (per repetition, null
-- where a phase has none); against a baseline cell also change, change_ci_low,
-- change_ci_high (percent), mde (the smallest change these repetitions detect), paired,
-- direction and verdict. paired = false for cells from different runs.
function M.row_stats(cell, metric, base_cell, paired)
  local keyed = keyed_values(cell, metric)
  local summary = stats.summary(keyed)
  local _, values = M.cell_value(cell, metric)
  local entry = { n = summary.n, median = summary.median, ci_low = summary.ci_low, ci_high = summary.ci_high,
    spread = summary.spread, values = values }
  if base_cell then
    local change = stats.change(keyed_values(base_cell, metric), keyed, { paired = paired ~= false })
    entry.change, entry.change_ci_low, entry.change_ci_high = change.change, change.change_ci_low,
      change.change_ci_high
    entry.mde, entry.paired, entry.direction = change.mde, change.paired, change.direction
    entry.verdict = stats.verdict(change, kind(metric))
    entry.formatted = stats.format_change(change)
  end
  -- a change measured on a cluster that was not quiet says so in its verdict
  local unquiet, total = unquiet_count(cell, base_cell or {})
  if unquiet > 0 then
    entry.unquiet = { phases = unquiet, of = total }
    if entry.verdict then entry.verdict = entry.verdict .. " " .. M.unquiet_text(unquiet, total) end
  end
  return entry
end

-- The encoded latency histograms of recorded results (a phase record holds a plain copy of
-- its bench result, which the engine's own histogram registry does not know), weak-keyed:
-- they live as long as the record, and are never written to results (docs/statistics.md).
local histograms = setmetatable({}, { __mode = "k" })

-- keep_histogram(record_result, bench_result): remembers the histogram of bench_result
-- (one the engine measured in this process) for its plain copy record_result.
function M.keep_histogram(record_result, bench_result)
  local ok, control = pcall(require, "cephmark.control")
  if not ok or type(record_result) ~= "table" or type(bench_result) ~= "table" then return end
  local blob = control.histogram(bench_result)
  if blob then histograms[record_result] = blob end
end

-- The pooled latency percentiles of a cell's phases: the exact merge of their histograms
-- (stats.pooled_percentiles), for phases measured in this process with more than one
-- repetition; nil otherwise (one repetition: its own percentiles are the pooled ones;
-- phases read back from a results folder carry no histogram).
local function pooled_latency(cell)
  if #cell < 2 then return nil end
  local blobs = {}
  for i, record in ipairs(cell) do
    local blob = type(record.result) == "table" and histograms[record.result]
    if not blob then return nil end
    blobs[i] = blob
  end
  local ok, latency = pcall(stats.pooled_percentiles, blobs)
  if not ok or type(latency) ~= "table" then return nil end
  local pooled = {}
  for _, key in ipairs { "count", "avg", "p50", "p90", "p95", "p99", "p99_9", "p99_99" } do
    if type(latency[key]) == "number" then pooled[key] = latency[key] end
  end
  return pooled
end

-- best_of(rows, metric [, paired]) -> {metric, best = variant, as_good = {variants}, n} for
-- one phase's rows: the variant with the best median (highest bandwidth or IOPS, lowest
-- latency) and those whose change against it has an interval that includes 0 (stats.best).
-- nil for a metric without a better direction, or with no figures.
function M.best_of(rows, metric, paired)
  local metric_kind = stats.kind_of(metric)
  if metric_kind == nil or #rows == 0 then return nil end
  local summaries, same_run = {}, true
  for i, row in ipairs(rows) do
    local entry = row.stats and row.stats[metric]
    local values, repetitions = {}, {}
    for j, value in ipairs(entry and entry.values or {}) do
      if type(value) == "number" then
        values[#values + 1] = value
        repetitions[#repetitions + 1] = row.repetitions and row.repetitions[j] or j
      end
    end
    summaries[i] = { median = entry and entry.median, values = values, repetitions = repetitions }
    if row.run ~= rows[1].run then same_run = false end
  end
  local best, as_good = stats.best(summaries, metric_kind, { paired = paired ~= false and same_run })
  if best == nil then return nil end
  local result = { metric = metric, best = rows[best].variant, as_good = json.array(), n = rows[best].n }
  for _, i in ipairs(as_good) do
    if i ~= best then result.as_good[#result.as_good + 1] = rows[i].variant end
  end
  return result
end

-- build(records, spec) -> comparison
-- records: phase records ({name, label, point, variant = {dimension = label}, result})
-- spec: {by = "pool"|"point"|"variant"|<dimension>, metrics = {...}, phases = {...},
--        baseline = "<variant>", where = {dimension = value}}
-- Raises a plain message on misuse; the scenario adds the file and line.
function M.build(records, spec)
  spec = spec or {}
  for key in pairs(spec) do
    if key ~= "by" and key ~= "metrics" and key ~= "phases" and key ~= "baseline" and
      key ~= "where" and key ~= "title" then
      fail(string.format("compare: unknown option '%s' (options: by, metrics, phases, baseline, where, title)",
        tostring(key)))
    end
  end
  local by = spec.by or "variant"
  if type(by) ~= "string" then fail("compare: by must be a string (pool, point, variant or a dimension)") end
  local metrics = spec.metrics or M.default_metrics
  if type(metrics) == "string" then metrics = { metrics } end
  if type(metrics) ~= "table" or #metrics == 0 then
    fail("compare: metrics must be a non-empty list, e.g. {\"bandwidth_mib\", \"lat.p99\"}")
  end

  if spec.where ~= nil and type(spec.where) ~= "table" then
    fail("compare: where must be a table {dimension = value}, e.g. where = {block_size = \"4K\"}")
  end
  -- the phases that measured something, filtered by `where`
  local candidates, measured = {}, {}
  for _, record in ipairs(records) do
    local keep = type(record.result) == "table" and record.result.ops ~= nil
    if keep then measured[#measured + 1] = record end
    for dimension, wanted in pairs(spec.where or {}) do
      if where_value(record, dimension) ~= tostring(wanted) then keep = false end
    end
    if keep then candidates[#candidates + 1] = record end
  end
  if #candidates == 0 and #measured > 0 and next(spec.where or {}) then
    fail(where_mismatch(measured, spec.where))
  end

  for _, metric in ipairs(metrics) do
    local found = known[metric]
    for _, record in ipairs(candidates) do
      if M.record_value(record, metric) ~= nil then found = true end
    end
    if not found then
      fail(string.format("compare: unknown metric '%s' (metrics: %s)", tostring(metric),
        table.concat(M.known_metrics, ", ")))
    end
  end

  local phase_names, wanted_phase = {}, nil
  if spec.phases then
    if type(spec.phases) == "string" then spec.phases = { spec.phases } end
    wanted_phase = {}
    for _, name in ipairs(spec.phases) do
      phase_names[#phase_names + 1] = name
      wanted_phase[name] = true
    end
  else
    local seen = {}
    for _, record in ipairs(candidates) do
      if record.name ~= "cleanup" then add_once(phase_names, seen, record.name) end
    end
  end

  -- group the records: phase -> variant -> record, variants in order of appearance
  local variants, variant_seen = {}, {}
  local cells = {}
  local dimensions_seen, dimension_seen = {}, {}
  for _, record in ipairs(candidates) do
    for dimension in pairs(record.variant or {}) do add_once(dimensions_seen, dimension_seen, dimension) end
    local key = row_key(record, by)
    local phase_ok = (wanted_phase and wanted_phase[record.name]) or
      (not wanted_phase and record.name ~= "cleanup")
    if key ~= nil and phase_ok then
      cells[record.name] = cells[record.name] or {}
      -- a cell holds the variant's phase of each repetition (one without repetitions)
      local cell = cells[record.name][key] or { by_repetition = {} }
      local repetition = record.repetition or 1
      local previous = cell.by_repetition[repetition]
      if previous then
        fail(string.format(
          "compare by %s: phase '%s' ran twice for %s '%s' (%s and %s); compare by variant, or narrow it with where = {...}",
          by, record.name, by, key, previous.label, record.label))
      end
      cell.by_repetition[repetition] = record
      cell[#cell + 1] = record
      cells[record.name][key] = cell
      add_once(variants, variant_seen, key)
    end
  end
  if wanted_phase then
    local ran = {}
    for _, record in ipairs(candidates) do ran[record.name] = true end
    for _, name in ipairs(phase_names) do
      if not ran[name] then fail(string.format("compare: no '%s' phase to compare", name)) end
    end
  end
  if #variants == 0 then
    table.sort(dimensions_seen)
    if #candidates == 0 then fail("compare: no phase with results to compare yet") end
    fail(string.format("compare by %s: no phase has a %s (compare by: variant, point%s%s)", by, by,
      #dimensions_seen > 0 and ", " or "", table.concat(dimensions_seen, ", ")))
  end
  for _, name in ipairs(phase_names) do
    if not cells[name] then
      fail(string.format("compare: no '%s' phase to compare", name))
    end
  end

  local baseline = spec.baseline ~= nil and tostring(spec.baseline) or variants[1]
  if not variant_seen[baseline] then
    fail(string.format("compare: baseline '%s' is not a %s of this run (%ss: %s)", baseline, by, by,
      table.concat(variants, ", ")))
  end
  local ordered = { baseline }
  for _, key in ipairs(variants) do
    if key ~= baseline then ordered[#ordered + 1] = key end
  end

  local comparison = { by = by, baseline = baseline, title = spec.title, unquiet = 0, metrics = json.array(),
    phases = json.array(), rows = json.array(), repetitions = 1, best = json.array() }
  for i, metric in ipairs(metrics) do comparison.metrics[i] = metric end
  for i, name in ipairs(phase_names) do comparison.phases[i] = name end
  for _, name in ipairs(phase_names) do
    local base_cell = cells[name][baseline]
    local phase_rows = {}
    for _, key in ipairs(ordered) do
      local cell = cells[name][key]
      if cell then
        table.sort(cell, function(a, b) return (a.repetition or 1) < (b.repetition or 1) end)
        local record = cell[1]
        local row = { phase = name, variant = key, label = record.label, phase_index = record.index,
          baseline = key == baseline, values = {}, relative = {}, n = #cell, repetitions = json.array(),
          per_repetition = {}, stats = {}, run = run_of(cell) ~= "" and run_of(cell) or nil }
        for i, r in ipairs(cell) do row.repetitions[i] = r.repetition or 1 end
        comparison.repetitions = math.max(comparison.repetitions, #cell)
        local paired = base_cell ~= nil and run_of(base_cell) == run_of(cell)
        for _, metric in ipairs(metrics) do
          local value, values = M.cell_value(cell, metric)
          row.values[metric] = value
          row.per_repetition[metric] = values
          local entry = M.row_stats(cell, metric, key ~= baseline and base_cell or nil, paired)
          row.stats[metric] = entry
          if key ~= baseline and base_cell then row.relative[metric] = entry.change end
        end
        local pooled = pooled_latency(cell)
        if pooled then row.pooled = pooled end
        local unquiet = unquiet_count(cell)
        if unquiet > 0 then row.unquiet = unquiet end
        comparison.rows[#comparison.rows + 1] = row
        phase_rows[#phase_rows + 1] = row
        comparison.phase_count = (comparison.phase_count or 0) + #cell
        comparison.unquiet = (comparison.unquiet or 0) + (row.unquiet or 0)
      end
    end
    for _, metric in ipairs(metrics) do
      local best = M.best_of(phase_rows, metric)
      if best then
        best.phase = name
        comparison.best[#comparison.best + 1] = best
      end
    end
  end
  return comparison
end

-- How a metric is shown: latencies in ms, counts as integers.
local headers = { bandwidth_mib = "MiB/s", bandwidth_stddev = "MiB/s sd", bandwidth_max = "max MiB/s",
  bandwidth_min = "min MiB/s", iops = "IOPS", iops_stddev = "IOPS sd", iops_max = "max IOPS",
  iops_min = "min IOPS", elapsed = "seconds" }
local integral = { iops = true, iops_max = true, iops_min = true, ops = true, bytes = true,
  errors = true, verify_failures = true, started = true, ["osd.op"] = true, ["osd.op_r"] = true,
  ["osd.op_w"] = true, ["osd.op_in_bytes"] = true, ["osd.op_out_bytes"] = true, ["space.stored"] = true,
  ["space.raw_used"] = true }

-- osd.* latencies are seconds, shown in ms like lat.*
local function in_ms(metric)
  return metric:match("^lat%.") or metric:match("^osd%.[%w_]*latency$")
end

-- CPU per op (docs/cpu.md) is kept in seconds and shown in µs
local function is_cpu_per_op(metric)
  return metric:match("^cpu%..*per_op$") ~= nil
end

function M.header(metric)
  if headers[metric] then return headers[metric] end
  local lat = metric:match("^lat%.(.+)$")
  if lat then return (lat:gsub("_", ".")) .. " ms" end
  local osd = metric:match("^osd%.(.+)_latency$")
  if osd then return "osd " .. osd .. " ms" end
  if is_cpu_per_op(metric) then return metric .. " µs" end
  return metric
end

-- Three significant digits or so, without exponents: 3712, 312.5, 41.27, 0.512.
function M.format_value(metric, value)
  if value == nil then return "-" end
  if in_ms(metric) then value = value * 1000 end
  if is_cpu_per_op(metric) then value = value * 1e6 end
  if integral[metric] then return string.format("%.0f", value) end
  local magnitude = math.abs(value)
  if magnitude >= 1000 then return string.format("%.0f", value) end
  if magnitude >= 100 then return string.format("%.1f", value) end
  if magnitude >= 10 then return string.format("%.2f", value) end
  return string.format("%.3f", value)
end

-- format_relative(percent) -> "(+106%)": a change measured once, in whole percent: one run
-- says nothing of its own precision, so no decimals suggest one.
function M.format_relative(percent)
  if percent == nil then return "(n/a)" end
  local text = string.format("%+.0f%%", percent)
  if text == "-0%" then text = "+0%" end
  return "(" .. text .. ")"
end

local function scaled(metric, value)
  if in_ms(metric) then return value * 1000 end
  if is_cpu_per_op(metric) then return value * 1e6 end
  return value
end

-- The decimals an interval of `metric` supports (in its printed unit), nil without one.
local function interval_decimals(metric, entry)
  if entry == nil or entry.ci_low == nil or entry.ci_high == nil then return nil end
  local width = scaled(metric, entry.ci_high) - scaled(metric, entry.ci_low)
  if width <= 0 then return nil end
  local decimals = math.min(3, 1 - math.floor(math.log(width, 10)))
  if integral[metric] then decimals = math.min(decimals, 0) end
  return math.max(decimals, -9)
end

-- value with `decimals` decimals; a negative count rounds to tens, hundreds, ...: 1927
-- with an interval 2000 wide is 1900.
local function fixed(value, decimals)
  if decimals >= 0 then return string.format("%." .. decimals .. "f", value) end
  local unit = 10 ^ -decimals
  local text = string.format("%.0f", math.floor(value / unit + 0.5) * unit)
  if text == "-0" then text = "0" end
  return text
end

-- format_interval(metric, entry) -> "189 [181, 197]": a median with its 95 % interval (the
-- unit of M.format_value), with the digits the interval's width supports (the last digit
-- one place below the width's leading digit: "1900 [1200, 3300]" for an interval 2000
-- wide); the median alone when there is no interval.
function M.format_interval(metric, entry)
  if entry == nil or entry.median == nil then return "-" end
  if entry.ci_low == nil or entry.ci_high == nil then return M.format_value(metric, entry.median) end
  local decimals = interval_decimals(metric, entry)
  if decimals == nil then
    local same = M.format_value(metric, entry.median)
    return string.format("%s [%s, %s]", same, same, same)
  end
  return string.format("%s [%s, %s]", fixed(scaled(metric, entry.median), decimals),
    fixed(scaled(metric, entry.ci_low), decimals), fixed(scaled(metric, entry.ci_high), decimals))
end

-- format_alongside(metric, value, entry) -> value with the decimals of entry's interval: a
-- figure printed next to a median (the pooled percentile) is no more precise than it.
function M.format_alongside(metric, value, entry)
  local decimals = interval_decimals(metric, entry)
  if value == nil then return "" end
  if decimals == nil then return M.format_value(metric, value) end
  return fixed(scaled(metric, value), decimals)
end

-- format_detectable(mde) -> "12 %", "1.4 %", "0.06 %": the smallest detectable change to
-- two significant digits at most (it is itself an estimate from the spread seen).
function M.format_detectable(mde)
  if mde == nil then return "" end
  if mde <= 0 then return "0 %" end
  local decimals = math.max(0, math.min(3, 1 - math.floor(math.log(mde, 10))))
  if mde >= 10 then decimals = 0 end
  return string.format("%." .. decimals .. "f %%", mde)
end

local function pad(text, width, right)
  if right then return string.rep(" ", width - #text) .. text end
  return text .. string.rep(" ", width - #text)
end

-- Columns of text, aligned: spec = {{title, right = bool}, ...}, rows of cells.
local function aligned(spec, rows)
  local widths = {}
  for c, column in ipairs(spec) do widths[c] = utf8.len(column[1]) or #column[1] end
  for _, cells in ipairs(rows) do
    for c = 1, #spec do widths[c] = math.max(widths[c], utf8.len(cells[c]) or #cells[c]) end
  end
  local lines = {}
  local function render(cells)
    local parts = {}
    for c, column in ipairs(spec) do
      local text = cells[c]
      local extra = #text - (utf8.len(text) or #text)
      parts[c] = pad(text, widths[c] + extra, column.right)
    end
    return (table.concat(parts, "  "):gsub("%s+$", ""))
  end
  local titles = {}
  for c, column in ipairs(spec) do titles[c] = column[1] end
  lines[1] = render(titles)
  for _, cells in ipairs(rows) do lines[#lines + 1] = render(cells) end
  return lines
end

-- aligned_lines(spec, rows) -> the lines of a table whose columns are aligned as in the
-- comparison tables (spec = {{title, right = bool}, ...}), for cmd/compare.lua.
M.aligned_lines = aligned

-- The pooled percentile of a latency metric ("lat.p99" -> row.pooled.p99), if any.
local function pooled_value(row, metric)
  local key = metric:match("^lat%.(p[%d_]+)$")
  return key and row.pooled and row.pooled[key] or nil
end

local function best_lines(comparison, single)
  local lines = {}
  local variants = {}
  for _, row in ipairs(comparison.rows) do variants[row.variant] = true end
  local count = 0
  for _ in pairs(variants) do count = count + 1 end
  if comparison.by ~= "point" and count < 3 then return lines end
  if single then
    -- one line per phase: with one run each, nothing says which others are as good
    local by_phase, phases = {}, {}
    for _, best in ipairs(comparison.best or {}) do
      if not by_phase[best.phase] then
        by_phase[best.phase] = {}
        phases[#phases + 1] = best.phase
      end
      local list = by_phase[best.phase]
      list[#list + 1] = M.header(best.metric) .. " " .. best.best
    end
    for _, phase in ipairs(phases) do
      lines[#lines + 1] = string.format("best %s: %s (one run each: which others are as good is unknown)", phase,
        table.concat(by_phase[phase], ", "))
    end
    return lines
  end
  for _, best in ipairs(comparison.best or {}) do
    local tail
    if #best.as_good == 0 then
      tail = "no other " .. comparison.by .. " within noise"
    else
      tail = "as good within noise: " .. table.concat(best.as_good, ", ")
    end
    lines[#lines + 1] = string.format("best %s %s: %s (%s)", best.phase, M.header(best.metric), best.best, tail)
  end
  return lines
end

-- The one-repetition table: a column per metric, each value followed by its change against
-- the baseline row of the same phase in whole percent.
local function single_lines(comparison)
  local spec = { { "phase" }, { comparison.by == "variant" and "variant" or comparison.by } }
  for _, metric in ipairs(comparison.metrics) do spec[#spec + 1] = { M.header(metric), right = true } end
  local rows = {}
  for _, row in ipairs(comparison.rows) do
    local cells = { row.phase, row.variant .. (row.baseline and " *" or "") }
    for _, metric in ipairs(comparison.metrics) do
      local text = M.format_value(metric, row.values[metric])
      if not row.baseline then text = text .. " " .. M.format_relative(row.relative[metric]) end
      cells[#cells + 1] = text
    end
    rows[#rows + 1] = cells
  end
  -- the changes' column of a metric starts at the same place on every row
  for m = 1, #comparison.metrics do
    local c = m + 2
    local value_width, relative_width = #spec[c][1], 0
    for _, cells in ipairs(rows) do
      local value, relative = cells[c]:match("^(%S+) ?(.*)$")
      value_width = math.max(value_width, #value)
      relative_width = math.max(relative_width, #relative)
    end
    spec[c].right = false
    spec[c][1] = pad(spec[c][1], value_width, true)
    for _, cells in ipairs(rows) do
      local value, relative = cells[c]:match("^(%S+) ?(.*)$")
      cells[c] = pad(value, value_width, true) .. (relative_width > 0 and " " .. pad(relative, relative_width) or "")
    end
  end
  local title = comparison.title or string.format(
    "comparison by %s (baseline %s, marked *; one run each: the uncertainty of these changes is unknown, --repeats N measures it)",
    comparison.by, comparison.baseline)
  local lines = { title }
  for _, line in ipairs(aligned(spec, rows)) do lines[#lines + 1] = line end
  return lines
end

-- The table with repetitions: a line per phase, metric and variant with the median and its
-- interval, the change against the baseline with its interval, the verdict, and the
-- smallest change the repetitions detect.
local function repeated_lines(comparison)
  local by = comparison.by == "variant" and "variant" or comparison.by
  local pooled = false
  for _, row in ipairs(comparison.rows) do
    for _, metric in ipairs(comparison.metrics) do
      if pooled_value(row, metric) then pooled = true end
    end
  end
  local spec = { { "phase" }, { "metric" }, { by }, { "median [95 % interval]", right = true } }
  if pooled then spec[#spec + 1] = { "pooled", right = true } end
  spec[#spec + 1] = { "change [95 % interval]" }
  spec[#spec + 1] = { "verdict" }
  spec[#spec + 1] = { "detectable", right = true }
  local rows = {}
  for _, phase in ipairs(comparison.phases) do
    for _, metric in ipairs(comparison.metrics) do
      local first = true
      for _, row in ipairs(comparison.rows) do
        if row.phase == phase then
          local entry = row.stats and row.stats[metric] or {}
          local cells = { first and phase or "", first and M.header(metric) or "",
            row.variant .. (row.baseline and " *" or ""), M.format_interval(metric, entry) }
          if pooled then
            local value = pooled_value(row, metric)
            cells[#cells + 1] = value and M.format_alongside(metric, value, entry) or ""
          end
          if row.baseline then
            cells[#cells + 1], cells[#cells + 2], cells[#cells + 3] = "", "", ""
          else
            cells[#cells + 1] = entry.formatted or M.format_relative(row.relative[metric])
            cells[#cells + 1] = entry.verdict or ""
            cells[#cells + 1] = M.format_detectable(entry.mde)
          end
          rows[#rows + 1] = cells
          first = false
        end
      end
    end
  end
  local title = comparison.title or string.format(
    "comparison by %s (baseline %s, marked *): medians of %d repetitions", comparison.by, comparison.baseline,
    comparison.repetitions)
  local lines = { title }
  for _, line in ipairs(aligned(spec, rows)) do lines[#lines + 1] = line end
  local paired = false
  for _, row in ipairs(comparison.rows) do
    for _, entry in pairs(row.stats or {}) do
      if entry.paired then paired = true end
    end
  end
  lines[#lines + 1] = string.format("[ ]: 95 %% intervals; change: %s; detectable: the smallest change " ..
    "these repetitions detect 80 %% of the time at the spread seen%s", paired and
    "paired with the baseline by repetition" or "against the baseline", pooled and
    "; pooled: the percentile of all repetitions' latencies merged" or "")
  return lines
end

-- lines(comparison) -> the table as text lines, columns aligned, then the best variant of
-- each phase and metric of a sweep (or of three variants or more).
function M.lines(comparison)
  local single = (comparison.repetitions or 1) <= 1
  local lines = single and single_lines(comparison) or repeated_lines(comparison)
  for _, line in ipairs(best_lines(comparison, single)) do lines[#lines + 1] = line end
  local unquiet_line = M.unquiet_line(comparison)
  if unquiet_line then lines[#lines + 1] = unquiet_line end
  return lines
end

-- The line under a comparison some of whose phases started while the cluster was not
-- quiet: how many, and which rows.
function M.unquiet_line(comparison)
  if (comparison.unquiet or 0) == 0 then return nil end
  local where = {}
  for _, row in ipairs(comparison.rows or {}) do
    if (row.unquiet or 0) > 0 then
      where[#where + 1] = string.format("%s %s%s", row.phase, row.variant,
        row.n > 1 and string.format(" (%d of %d)", row.unquiet, row.n) or "")
    end
  end
  return string.format("unquiet: %d of %d phases started while the cluster was not quiet (%s); their figures " ..
    "may not compare (docs/cluster-state.md)", comparison.unquiet, comparison.phase_count or 0,
    table.concat(where, ", "))
end

-- The standing of a row's variant among its phase's for a metric: "best", "as good" (within
-- noise of the best) or "" (worse, or a metric without a better direction).
local function standing(comparison, row, metric)
  for _, best in ipairs(comparison.best or {}) do
    if best.phase == row.phase and best.metric == metric then
      if best.best == row.variant then return "best" end
      for _, variant in ipairs(best.as_good) do
        if variant == row.variant then return "as good" end
      end
      return ""
    end
  end
  return ""
end

-- csv_rows(comparisons) -> rows for comparison.csv: one per comparison, phase, variant and
-- metric (a long table: its columns never change with the metrics chosen). values holds
-- the per-repetition figures joined by ";" (empty where a repetition has none).
function M.csv_rows(comparisons)
  local rows = {}
  for c, comparison in ipairs(comparisons) do
    for _, row in ipairs(comparison.rows) do
      for _, metric in ipairs(comparison.metrics) do
        local entry = row.stats and row.stats[metric] or {}
        local values = {}
        for i, value in ipairs(entry.values or {}) do
          values[i] = type(value) == "number" and string.format("%.17g", value) or ""
        end
        rows[#rows + 1] = { comparison = c, by = comparison.by, baseline = comparison.baseline,
          phase = row.phase, variant = row.variant, is_baseline = row.baseline, metric = metric,
          value = row.values[metric], relative_pct = row.relative[metric], n = entry.n, median = entry.median,
          ci_low = entry.ci_low, ci_high = entry.ci_high, change = entry.change,
          change_ci_low = entry.change_ci_low, change_ci_high = entry.change_ci_high, verdict = entry.verdict,
          mde = entry.mde, standing = standing(comparison, row, metric), values = table.concat(values, ";") }
      end
    end
  end
  return rows
end

M.csv_columns = { "comparison", "by", "baseline", "phase", "variant", "is_baseline", "metric",
  "value", "relative_pct", "n", "median", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high",
  "verdict", "mde", "standing", "values" }

return M
