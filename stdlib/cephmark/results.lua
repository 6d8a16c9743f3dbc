-- Results on disk: a folder with results.json and results.yaml, phases.csv (one summary
-- row per phase), series.csv (one row per second per phase) and percentiles.csv (the
-- latency percentiles of each phase); for scenarios also params.yaml (reusable with
-- --params), params.csv, pools.csv and comparison.csv, and report.html (cmd/report.lua).
-- Every file is written atomically (a temporary file renamed into place), so a reader
-- never sees half a file; a scenario rewrites them after each phase, so an interrupted run
-- keeps what it finished.

local json = require "cephmark.json"
local sys = require "cephmark.sys"

local M = {}

local function write(path, text)
  local ok, err = sys.write_file(path, text)
  if not ok then sys.fail("cannot write results: " .. err) end
end

local function yaml_module()
  local ok, yaml = pcall(require, "cephmark.yaml")
  return ok and yaml or nil
end

-- write_dir(dir, document): creates dir if needed and writes the document in both forms;
-- a drop-in command's single result also gets phases.csv, series.csv and percentiles.csv.
function M.write_dir(dir, document)
  local ok, err = sys.mkdir(dir)
  if not ok then sys.fail("cannot create the results folder: " .. err) end
  -- a drop-in stopped by SIGINT, SIGTERM or SIGHUP says which (result.interrupted is set)
  if document.signal == nil then document.signal = sys.interrupt_signal() end
  if type(document.result) == "table" then
    local run = require("cephmark.report.html").normalize(document, dir)
    if run then M.write_csv_tables(dir, run.phases) end
  end
  write(dir .. "/results.json", json.encode(document, { indent = 2 }) .. "\n")
  local yaml = yaml_module()
  if yaml then write(dir .. "/results.yaml", yaml.encode(document)) end
  return dir
end

-- A fresh folder name for a run: results/<scenario>-<UTC timestamp>, with -2, -3, ... when
-- two runs start in the same second.
function M.default_dir(name, base)
  base = base or "results"
  local stem = string.format("%s/%s-%s", base, name, sys.utc_timestamp())
  local dir, n = stem, 1
  while sys.stat(dir) do
    n = n + 1
    dir = string.format("%s-%d", stem, n)
  end
  return dir
end

-- Numbers as the shortest text that reads back to the same value.
local function number_text(value)
  if math.type(value) == "integer" then return string.format("%d", value) end
  if value ~= value or value == math.huge or value == -math.huge then return "" end
  for digits = 15, 17 do
    local text = string.format("%." .. digits .. "g", value)
    if tonumber(text) == value then return text end
  end
  return string.format("%.17g", value)
end

local function csv_field(value)
  if value == nil or value == json.null then return "" end
  if type(value) == "number" then return number_text(value) end
  local text = tostring(value)
  if text:find('[,"\r\n]') or text:match("^%s") or text:match("%s$") then
    return '"' .. text:gsub('"', '""') .. '"'
  end
  return text
end

-- csv(columns, rows) -> text: a header line, then one line per row; rows are tables keyed
-- by column name (RFC 4180 quoting).
function M.csv(columns, rows)
  local lines = { table.concat(columns, ",") }
  for _, row in ipairs(rows) do
    local fields = {}
    for i, column in ipairs(columns) do fields[i] = csv_field(row[column]) end
    lines[#lines + 1] = table.concat(fields, ",")
  end
  return table.concat(lines, "\n") .. "\n"
end

local summary_columns = { "elapsed", "started", "ops", "bytes", "errors", "verify_failures",
  "bandwidth_mib", "bandwidth_stddev", "bandwidth_max", "bandwidth_min", "iops", "iops_stddev",
  "iops_max", "iops_min" }
local latency_columns = { "avg", "stddev", "min", "max", "p50", "p90", "p95", "p99", "p99_9", "p99_99" }
local setting_columns = { "threads", "block_size", "object_size", "rate", "interrupted" }
M.series_columns = { "phase_index", "phase", "label", "sec", "cur_ops", "started", "finished", "ops",
  "bytes", "errors", "avg_mib", "cur_mib", "iops", "last_lat", "avg_lat", "p99", "max_lat", "warmup",
  "partial" }

-- phases_csv(phases) -> text: one row per phase, its variant's dimensions as
-- variant.<name> columns (the union over all phases, in order of appearance).
function M.phases_csv(phases)
  local columns = { "index", "name", "op", "label", "status", "pool", "point" }
  local dimension_seen = {}
  for _, phase in ipairs(phases) do
    for _, dimension in ipairs(phase.dimensions or {}) do
      if not dimension_seen[dimension] then
        dimension_seen[dimension] = true
        columns[#columns + 1] = "variant." .. dimension
      end
    end
  end
  columns[#columns + 1] = "started_at"
  for _, c in ipairs(summary_columns) do columns[#columns + 1] = c end
  for _, c in ipairs(latency_columns) do columns[#columns + 1] = "lat_" .. c end
  for _, c in ipairs(setting_columns) do columns[#columns + 1] = c end
  local rows = {}
  for _, phase in ipairs(phases) do
    local result = phase.result or {}
    local row = { index = phase.index, name = phase.name, op = phase.op, label = phase.label,
      status = phase.status, pool = phase.pool, point = phase.point, started_at = phase.started_at }
    for dimension, value in pairs(phase.variant or {}) do row["variant." .. dimension] = value end
    for _, c in ipairs(summary_columns) do row[c] = result[c] end
    for _, c in ipairs(latency_columns) do row["lat_" .. c] = (result.lat or {})[c] end
    for _, c in ipairs(setting_columns) do row[c] = result[c] end
    if row.elapsed == nil then row.elapsed = phase.elapsed end
    rows[#rows + 1] = row
  end
  return M.csv(columns, rows)
end

function M.series_csv(phases)
  local rows = {}
  for _, phase in ipairs(phases) do
    for _, second in ipairs(phase.series or {}) do
      local row = { phase_index = phase.index, phase = phase.name, label = phase.label }
      -- the columns after the first three are the engine's own per-second fields
      for i = 4, #M.series_columns do
        local column = M.series_columns[i]
        row[column] = second[column]
      end
      rows[#rows + 1] = row
    end
  end
  return M.csv(M.series_columns, rows)
end

-- Latency percentiles of every measured phase (the report's percentile plots).
function M.percentiles_csv(phases)
  local html = require "cephmark.report.html"
  return M.csv(html.percentile_csv_columns, html.percentile_rows(phases))
end

-- The per-phase tables every results folder has: phases.csv, series.csv, percentiles.csv.
function M.write_csv_tables(dir, phases)
  write(dir .. "/phases.csv", M.phases_csv(phases))
  write(dir .. "/series.csv", M.series_csv(phases))
  write(dir .. "/percentiles.csv", M.percentiles_csv(phases))
end

-- params.csv: name, value as given, where it came from (default, -p, --params).
local function params_csv(document)
  local rows, names = {}, {}
  for name in pairs(document.params_text or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    rows[#rows + 1] = { name = name, value = document.params_text[name],
      source = (document.params_source or {})[name] }
  end
  return M.csv({ "name", "value", "source" }, rows)
end

-- pools.csv: the pools a scenario used, their layout and whether the run created them.
local function pools_csv(document)
  local rows = {}
  for _, pool in ipairs(document.pools or {}) do
    local spec = pool.spec or {}
    local profile = type(pool.erasure_code_profile) == "table" and pool.erasure_code_profile or {}
    rows[#rows + 1] = { label = pool.label, name = pool.name, type = spec.type, size = spec.size,
      k = spec.k or profile.k, m = spec.m or profile.m, pg_num = (type(pool.info) == "table" and pool.info.pg_num) or nil,
      created = pool.created, deleted = pool.deleted }
  end
  return M.csv({ "label", "name", "type", "size", "k", "m", "pg_num", "created", "deleted" }, rows)
end

-- write_run(dir, document, extra): a scenario's results folder. extra.params_file is the
-- params as --params reads them; extra.comparison_rows/columns feed comparison.csv.
function M.write_run(dir, document, extra)
  extra = extra or {}
  local ok, err = sys.mkdir(dir)
  if not ok then sys.fail("cannot create the results folder: " .. err) end
  local yaml = yaml_module()
  if yaml and extra.params_file then
    local params_yaml = next(extra.params_file) and yaml.encode(extra.params_file) or "{}\n"
    write(dir .. "/params.yaml",
      "# the params of this run; repeat it with: cephmark run SCRIPT --params params.yaml\n" .. params_yaml)
  end
  M.write_csv_tables(dir, document.phases or {})
  write(dir .. "/params.csv", params_csv(document))
  write(dir .. "/pools.csv", pools_csv(document))
  if extra.comparison_columns then
    write(dir .. "/comparison.csv", M.csv(extra.comparison_columns, extra.comparison_rows or {}))
  end
  if yaml then write(dir .. "/results.yaml", yaml.encode(document)) end
  write(dir .. "/results.json", json.encode(document, { indent = 2 }) .. "\n")
  return dir
end

return M
