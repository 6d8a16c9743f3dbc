-- Comparisons: the chosen metrics of recorded phases, one row per variant (pool, sweep
-- point, config setting, or any variant dimension) and phase, with each value's relative
-- difference against a baseline variant. Built from the phase records a scenario keeps,
-- printed as an aligned table, and stored in results as data.

local json = require "cephmark.json"

local M = {}

M.default_metrics = { "bandwidth_mib", "iops", "lat.p50", "lat.p99" }

-- The summary fields a bench result has (docs/rados.md); other numeric fields of a custom
-- phase's result are accepted when some phase has them.
M.known_metrics = { "bandwidth_mib", "bandwidth_stddev", "bandwidth_max", "bandwidth_min",
  "iops", "iops_stddev", "iops_max", "iops_min", "elapsed", "ops", "bytes", "started",
  "errors", "verify_failures", "lat.avg", "lat.stddev", "lat.min", "lat.max", "lat.p50",
  "lat.p90", "lat.p95", "lat.p99", "lat.p99_9", "lat.p99_99" }

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
    if record.point and not seen_dimension.point then
      seen_dimension.point = true
      all_dimensions[#all_dimensions + 1] = "point"
    end
    for dimension in pairs(record.variant or {}) do
      if not seen_dimension[dimension] then
        seen_dimension[dimension] = true
        all_dimensions[#all_dimensions + 1] = dimension
      end
    end
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
    local value = M.value(record.result, metric)
    values[i] = value == nil and json.null or value
    if value ~= nil then numbers[#numbers + 1] = value end
  end
  if #records == 1 then return numbers[1], values end
  return median(numbers), values
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
      if M.value(record.result, metric) ~= nil then found = true end
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
      if record.name ~= "cleanup" and not seen[record.name] then
        seen[record.name] = true
        phase_names[#phase_names + 1] = record.name
      end
    end
  end

  -- group the records: phase -> variant -> record, variants in order of appearance
  local variants, variant_seen = {}, {}
  local cells = {}
  local dimensions_seen, dimension_seen = {}, {}
  for _, record in ipairs(candidates) do
    for dimension in pairs(record.variant or {}) do
      if not dimension_seen[dimension] then
        dimension_seen[dimension] = true
        dimensions_seen[#dimensions_seen + 1] = dimension
      end
    end
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
      if not variant_seen[key] then
        variant_seen[key] = true
        variants[#variants + 1] = key
      end
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

  local comparison = { by = by, baseline = baseline, title = spec.title, metrics = json.array(),
    phases = json.array(), rows = json.array(), repetitions = 1 }
  for i, metric in ipairs(metrics) do comparison.metrics[i] = metric end
  for i, name in ipairs(phase_names) do comparison.phases[i] = name end
  for _, name in ipairs(phase_names) do
    local base_cell = cells[name][baseline]
    for _, key in ipairs(ordered) do
      local cell = cells[name][key]
      if cell then
        table.sort(cell, function(a, b) return (a.repetition or 1) < (b.repetition or 1) end)
        local record = cell[1]
        local row = { phase = name, variant = key, label = record.label, phase_index = record.index,
          baseline = key == baseline, values = {}, relative = {}, n = #cell, repetitions = json.array(),
          per_repetition = {} }
        for i, r in ipairs(cell) do row.repetitions[i] = r.repetition or 1 end
        comparison.repetitions = math.max(comparison.repetitions, #cell)
        for _, metric in ipairs(metrics) do
          local value, values = M.cell_value(cell, metric)
          row.values[metric] = value
          row.per_repetition[metric] = values
          if key ~= baseline and base_cell then
            row.relative[metric] = M.relative(value, (M.cell_value(base_cell, metric)))
          end
        end
        comparison.rows[#comparison.rows + 1] = row
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
  errors = true, verify_failures = true, started = true }

function M.header(metric)
  if headers[metric] then return headers[metric] end
  local lat = metric:match("^lat%.(.+)$")
  if lat then return (lat:gsub("_", ".")) .. " ms" end
  return metric
end

-- Three significant digits or so, without exponents: 3712, 312.5, 41.27, 0.512.
function M.format_value(metric, value)
  if value == nil then return "-" end
  if metric:match("^lat%.") then value = value * 1000 end
  if integral[metric] then return string.format("%.0f", value) end
  local magnitude = math.abs(value)
  if magnitude >= 1000 then return string.format("%.0f", value) end
  if magnitude >= 100 then return string.format("%.1f", value) end
  if magnitude >= 10 then return string.format("%.2f", value) end
  return string.format("%.3f", value)
end

function M.format_relative(percent)
  if percent == nil then return "(n/a)" end
  -- a difference that rounds to zero prints as +0.0%, never -0.0%
  if math.abs(percent) < 0.05 then percent = 0 end
  return string.format("(%+.1f%%)", percent)
end

-- lines(comparison) -> the table as text lines, columns aligned; each value is followed by
-- its difference against the baseline row of the same phase.
function M.lines(comparison)
  local heading = { "phase", comparison.by == "variant" and "variant" or comparison.by }
  local table_rows = {}
  for _, row in ipairs(comparison.rows) do
    local cells = { row.phase, row.variant .. (row.baseline and " *" or "") }
    for _, metric in ipairs(comparison.metrics) do
      local relative = ""
      if not row.baseline then relative = M.format_relative(row.relative[metric]) end
      cells[#cells + 1] = { M.format_value(metric, row.values[metric]), relative }
    end
    table_rows[#table_rows + 1] = cells
  end
  local widths = { #heading[1], #heading[2] }
  local value_widths, relative_widths = {}, {}
  for m, metric in ipairs(comparison.metrics) do
    value_widths[m], relative_widths[m] = #M.header(metric), 0
  end
  for _, cells in ipairs(table_rows) do
    widths[1] = math.max(widths[1], #cells[1])
    widths[2] = math.max(widths[2], #cells[2])
    for m = 1, #comparison.metrics do
      value_widths[m] = math.max(value_widths[m], #cells[m + 2][1])
      relative_widths[m] = math.max(relative_widths[m], #cells[m + 2][2])
    end
  end
  local function metric_cell(m, value, relative)
    local text = string.rep(" ", value_widths[m] - #value) .. value
    if relative_widths[m] > 0 then
      text = text .. " " .. relative .. string.rep(" ", relative_widths[m] - #relative)
    end
    return text
  end
  local lines = {}
  local repetitions = (comparison.repetitions or 1) > 1 and
    string.format("; medians of %d repetitions", comparison.repetitions) or ""
  local title = comparison.title or string.format("comparison by %s (baseline %s, marked *%s)",
    comparison.by, comparison.baseline, repetitions)
  lines[1] = title
  local head = { string.format("%-" .. widths[1] .. "s  %-" .. widths[2] .. "s", heading[1], heading[2]) }
  for m, metric in ipairs(comparison.metrics) do head[#head + 1] = metric_cell(m, M.header(metric), "") end
  lines[2] = (table.concat(head, "  "):gsub("%s+$", ""))
  for _, cells in ipairs(table_rows) do
    local parts = { string.format("%-" .. widths[1] .. "s  %-" .. widths[2] .. "s", cells[1], cells[2]) }
    for m = 1, #comparison.metrics do parts[#parts + 1] = metric_cell(m, cells[m + 2][1], cells[m + 2][2]) end
    lines[#lines + 1] = (table.concat(parts, "  "):gsub("%s+$", ""))
  end
  return lines
end

-- csv_rows(comparisons) -> rows for comparison.csv: one per comparison, phase, variant and
-- metric (a long table: its columns never change with the metrics chosen).
function M.csv_rows(comparisons)
  local rows = {}
  for c, comparison in ipairs(comparisons) do
    for _, row in ipairs(comparison.rows) do
      for _, metric in ipairs(comparison.metrics) do
        rows[#rows + 1] = { comparison = c, by = comparison.by, baseline = comparison.baseline,
          phase = row.phase, variant = row.variant, is_baseline = row.baseline, metric = metric,
          value = row.values[metric], relative_pct = row.relative[metric] }
      end
    end
  end
  return rows
end

M.csv_columns = { "comparison", "by", "baseline", "phase", "variant", "is_baseline", "metric",
  "value", "relative_pct" }

return M
