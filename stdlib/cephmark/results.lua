-- Results on disk: a folder with results.json and results.yaml, phases.csv (one summary
-- row per phase), series.csv (one row per second per phase), percentiles.csv (the
-- latency percentiles of each phase) and, when a phase mixed kinds of op, operations.csv
-- (one row per phase and kind: result.by_op), when a phase's agents were spread over
-- gateways, endpoint_series.csv (one row per second per endpoint); for scenarios also params.yaml (reusable with
-- --params), params.csv, pools.csv and comparison.csv, and report.html (cmd/report.lua).
-- Rewritten files are written atomically (a temporary file renamed into place), so a
-- reader never sees half a file.
--
-- While a scenario runs, its cost per phase must not grow with the phases before it: each
-- finished phase's seconds are appended to series.csv and then the phase as one line to
-- journal.jsonl (so a killed run's series.csv may hold one phase more, never fewer), and results.json is a small document (status running, what was done so far, where the
-- journal is) rewritten whole. The complete folder is written once, at the end (also of
-- an interrupted or failed run), and the journal is then removed. A folder whose process
-- was killed keeps the small results.json and the journal: read_document puts them
-- together, so a reader gets every phase that finished (docs/report.md).

local json = require "cephmark.json"
local sys = require "cephmark.sys"

local M = {}

local function write(path, text)
  local ok, err = sys.write_file(path, text)
  if not ok then sys.fail("cannot write results: " .. err) end
end

-- Appends text with one write(2): the stream's buffer holds all of it, so a line is never
-- split between two writes, and a process killed at any point leaves whole lines behind.
local function append(path, text)
  local file, err = io.open(path, "a")
  if not file then sys.fail("cannot write results: " .. tostring(err)) end
  file:setvbuf("full", #text + 1)
  local written, werr = file:write(text)
  local closed, cerr = file:close()
  if not written or not closed then sys.fail("cannot write results: " .. tostring(werr or cerr)) end
end

-- The journal of a running scenario, next to its results.json.
M.JOURNAL = "journal.jsonl"

local function yaml_module()
  local ok, yaml = pcall(require, "cephmark.yaml")
  return ok and yaml or nil
end

-- Every file a results folder may get, for check_dir.
M.FILES = { "results.json", "results.yaml", "params.yaml", "params.csv", "pools.csv", "comparison.csv",
  "phases.csv", "series.csv", "percentiles.csv", "operations.csv", "endpoint_series.csv",
  "report.html" }

-- check_dir(dir, option [, command]): before a run starts, a one-line refusal (exit 2) if
-- its results could not be written into dir as asked: dir is not a folder, or a file it
-- would replace there is not a regular file or is one of the command's inputs
-- (sys.check_target); so a refusal never comes after the benchmark ran. `option` names
-- the option ("-o"), `command` the drop-in command that prefixes its messages.
function M.check_dir(dir, option, command)
  local prefix = command and (command .. ": ") or ""
  local st = sys.stat(dir)
  if st and st.type ~= "dir" then
    sys.fail(string.format("%scannot write the results into %s (%s): it exists and is not a folder", prefix, dir,
      option))
  end
  if not st then return end
  for _, name in ipairs(M.FILES) do
    local ok, why = sys.check_target(dir .. "/" .. name)
    if not ok then
      sys.fail(string.format("%scannot write the results into %s (%s): %s/%s: %s", prefix, dir, option, dir, name,
        why))
    end
  end
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
-- the achieved depth and the steady-state window (docs/steady-state.md), as steady_<name>
local steady_columns = { "seconds", "first_second", "last_second", "iops", "bandwidth_mib", "in_flight_mean" }
-- the OSDs' side of the phase (cluster.osd, cephmark.telemetry), as osd_<name> columns
local osd_columns = { "osds", "missing", "op", "op_r", "op_r_latency", "op_w", "op_w_latency",
  "op_w_process_latency", "subop_w_latency", "commit_latency", "op_in_bytes", "op_out_bytes", "outlier" }
-- from the phase's cluster.cpu: seconds of CPU per op, the OSDs found, MiB per OSD CPU-second
local cpu_columns = { "client_per_op", "osd_per_op", "osds", "mib_per_osd_cpu_second" }
-- the phase's pool after a write phase (cluster.space, cephmark.space), as space_<name> columns
local space_columns = { "status", "stored", "raw_used", "objects", "raw_per_stored", "raw_per_written",
  "percent_used", "max_avail", "settled", "waited" }
M.series_columns = { "phase_index", "phase", "label", "sec", "cur_ops", "started", "finished", "ops",
  "bytes", "errors", "avg_mib", "cur_mib", "iops", "last_lat", "avg_lat", "p99", "max_lat", "warmup",
  "partial", "in_flight_mean", "steady", "p99_worst_agent" }

-- phases_csv(phases) -> text: one row per phase, its variant's dimensions as
-- variant.<name> columns (the union over all phases, in order of appearance), and a last
-- column `repetition` when the phases come from a scenario (which numbers its repetitions).
function M.phases_csv(phases)
  local columns = { "index", "name", "op", "label", "status", "pool", "point" }
  local dimension_seen, repetitions = {}, false
  for _, phase in ipairs(phases) do
    if phase.repetition ~= nil then repetitions = true end
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
  columns[#columns + 1] = "in_flight_mean"
  for _, c in ipairs(steady_columns) do columns[#columns + 1] = "steady_" .. c end
  columns[#columns + 1] = "steady_lat_p50"
  columns[#columns + 1] = "steady_lat_p99"
  for _, c in ipairs(cpu_columns) do columns[#columns + 1] = "cpu_" .. c end
  if repetitions then columns[#columns + 1] = "repetition" end
  -- a part of phase.cluster has its columns when any phase recorded it
  local function cluster_columns(part, names, prefix)
    for _, phase in ipairs(phases) do
      if type(phase.cluster) == "table" and type(phase.cluster[part]) == "table" then
        for _, c in ipairs(names) do columns[#columns + 1] = prefix .. c end
        return
      end
    end
  end
  cluster_columns("osd", osd_columns, "osd_")
  -- the cluster's state at the phase's start (cluster.state, cephmark.state): quiet or
  -- unquiet, the reasons joined by "; ", the health status
  cluster_columns("state", { "state", "state_unquiet", "state_health" }, "")
  cluster_columns("space", space_columns, "space_")
  local rows = {}
  for _, phase in ipairs(phases) do
    local result = phase.result or {}
    local row = { index = phase.index, name = phase.name, op = phase.op, label = phase.label,
      status = phase.status, pool = phase.pool, point = phase.point, started_at = phase.started_at,
      repetition = phase.repetition }
    for dimension, value in pairs(phase.variant or {}) do row["variant." .. dimension] = value end
    for _, c in ipairs(summary_columns) do row[c] = result[c] end
    for _, c in ipairs(latency_columns) do row["lat_" .. c] = (result.lat or {})[c] end
    for _, c in ipairs(setting_columns) do row[c] = result[c] end
    row.in_flight_mean = result.in_flight_mean
    local steady = type(result.steady) == "table" and result.steady or {}
    for _, c in ipairs(steady_columns) do row["steady_" .. c] = steady[c] end
    row.steady_lat_p50, row.steady_lat_p99 = (steady.lat or {}).p50, (steady.lat or {}).p99
    local cpu = type(phase.cluster) == "table" and type(phase.cluster.cpu) == "table" and phase.cluster.cpu or {}
    for _, c in ipairs(cpu_columns) do row["cpu_" .. c] = cpu[c] end
    if row.elapsed == nil then row.elapsed = phase.elapsed end
    local osd = type(phase.cluster) == "table" and phase.cluster.osd
    if type(osd) == "table" then
      for _, c in ipairs(osd_columns) do row["osd_" .. c] = osd[c] end
      row.osd_missing = type(osd.missing) == "table" and #osd.missing or nil
      local outlier = type(osd.outliers) == "table" and osd.outliers[1]
      row.osd_outlier = type(outlier) == "table" and outlier.osd and ("osd." .. tostring(outlier.osd)) or nil
    end
    local state = type(phase.cluster) == "table" and phase.cluster.state
    if type(state) == "table" and state.quiet ~= nil then
      row.state = state.quiet and "quiet" or "unquiet"
      row.state_unquiet = type(state.unquiet) == "table" and table.concat(state.unquiet, "; ") or nil
      row.state_health = type(state.start) == "table" and state.start.health or nil
    end
    local space = type(phase.cluster) == "table" and phase.cluster.space
    if type(space) == "table" then
      for _, c in ipairs(space_columns) do row["space_" .. c] = space[c] end
    end
    rows[#rows + 1] = row
  end
  return M.csv(columns, rows)
end

-- second_row(phase, second, columns, first, row) -> row (a new one when nil) with the phase's
-- index, name and label, and columns[first..] from one second of a series (the engine's own
-- per-second fields)
local function second_row(phase, second, columns, first, row)
  row = row or {}
  row.phase_index, row.phase, row.label = phase.index, phase.name, phase.label
  for i = first, #columns do row[columns[i]] = second[columns[i]] end
  return row
end

-- series_rows(phases) -> rows for series.csv (header not included)
function M.series_rows(phases)
  local rows = {}
  for _, phase in ipairs(phases) do
    for _, second in ipairs(phase.series or {}) do
      rows[#rows + 1] = second_row(phase, second, M.series_columns, 4)
    end
  end
  return rows
end

function M.series_csv(phases)
  return M.csv(M.series_columns, M.series_rows(phases))
end

-- Latency percentiles of every measured phase (the report's percentile plots).
function M.percentiles_csv(phases)
  local html = require "cephmark.report.html"
  return M.csv(html.percentile_csv_columns, html.percentile_rows(phases))
end

-- by_op_names(result) -> the names of result.by_op in order (reads, writes, then the rest
-- by name), or an empty list when the phase ran one kind of op.
local op_order = { read = 1, get = 1, write = 2, put = 2 }
function M.by_op_names(result)
  local names = {}
  if type(result) ~= "table" or type(result.by_op) ~= "table" then return names end
  for name in pairs(result.by_op) do names[#names + 1] = name end
  table.sort(names, function(a, b)
    local ra, rb = op_order[a] or 3, op_order[b] or 3
    if ra ~= rb then return ra < rb end
    return a < b
  end)
  return names
end

M.operations_columns = { "phase_index", "phase", "label", "op", "ops", "bytes", "errors", "iops",
  "bandwidth_mib_s", "lat_avg", "lat_p50", "lat_p90", "lat_p99", "lat_p99_9", "lat_max" }

-- operations_rows(phases) -> rows for operations.csv: one per phase and kind of op of the
-- phases that mixed kinds (result.by_op).
function M.operations_rows(phases)
  local rows = {}
  for _, phase in ipairs(phases) do
    local result = phase.result
    for _, name in ipairs(M.by_op_names(result)) do
      local op = result.by_op[name]
      local row = { phase_index = phase.index, phase = phase.name, label = phase.label, op = name }
      for i = 5, #M.operations_columns do
        local column = M.operations_columns[i]
        local lat = column:match("^lat_(.*)$")
        if lat then row[column] = (op.latency or {})[lat] else row[column] = op[column] end
      end
      rows[#rows + 1] = row
    end
  end
  return rows
end

M.endpoint_series_columns = { "phase_index", "phase", "label", "endpoint", "sec", "agents", "ops", "bytes", "errors",
  "iops", "cur_mib", "p50", "p99", "p999", "max_lat", "lat_count" }

-- endpoint_series_rows(phases) -> rows for endpoint_series.csv: one per second per gateway
-- endpoint of the phases whose agents were spread over endpoints (result.by_endpoint[e].series),
-- the endpoints of a phase in name order.
function M.endpoint_series_rows(phases)
  local rows = {}
  for _, phase in ipairs(phases) do
    local by_endpoint = type(phase.result) == "table" and phase.result.by_endpoint
    local names = {}
    for endpoint in pairs(type(by_endpoint) == "table" and by_endpoint or {}) do names[#names + 1] = endpoint end
    table.sort(names)
    for _, endpoint in ipairs(names) do
      local group = by_endpoint[endpoint]
      for _, second in ipairs(type(group) == "table" and type(group.series) == "table" and group.series or {}) do
        rows[#rows + 1] = second_row(phase, second, M.endpoint_series_columns, 5, { endpoint = endpoint })
      end
    end
  end
  return rows
end

-- The per-phase tables every results folder has: phases.csv, series.csv, percentiles.csv,
-- operations.csv when a phase mixed kinds of op, and endpoint_series.csv when a phase's
-- agents were spread over gateway endpoints.
function M.write_csv_tables(dir, phases)
  write(dir .. "/phases.csv", M.phases_csv(phases))
  write(dir .. "/series.csv", M.series_csv(phases))
  write(dir .. "/percentiles.csv", M.percentiles_csv(phases))
  local operations = M.operations_rows(phases)
  if #operations > 0 then write(dir .. "/operations.csv", M.csv(M.operations_columns, operations)) end
  local endpoint_seconds = M.endpoint_series_rows(phases)
  if #endpoint_seconds > 0 then
    write(dir .. "/endpoint_series.csv", M.csv(M.endpoint_series_columns, endpoint_seconds))
  end
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
  -- the complete document holds everything the journal did
  os.remove(dir .. "/" .. M.JOURNAL)
  return dir
end

-- write_progress(dir, document, entries, progress): a scenario's folder while it runs.
-- entries are what finished since the last call, in order: {phase = p}, {sweep = s},
-- {comparison = c} or {order = o} (a repetition's order of an iteration's variants); their phases' seconds go to series.csv. document is the small
-- results.json (no phases, sweeps or comparisons; journal = M.JOURNAL). progress is the
-- caller's state table, {} on the first call: the first call starts the journal and
-- series.csv afresh (and writes params.yaml from extra.params_file), later ones append.
-- Cost: that of the entries and the small document, whatever came before.
function M.write_progress(dir, document, entries, progress, extra)
  local lines, phases = {}, {}
  for _, entry in ipairs(entries) do
    lines[#lines + 1] = json.encode(entry)
    if entry.phase then phases[#phases + 1] = entry.phase end
  end
  local journal = table.concat(lines, "\n") .. (#lines > 0 and "\n" or "")
  local series_rows = M.csv(M.series_columns, M.series_rows(phases))
  if not progress.started then
    local ok, err = sys.mkdir(dir)
    if not ok then sys.fail("cannot create the results folder: " .. err) end
    local yaml = yaml_module()
    if yaml and extra and extra.params_file then
      local params_yaml = next(extra.params_file) and yaml.encode(extra.params_file) or "{}\n"
      write(dir .. "/params.yaml",
        "# the params of this run; repeat it with: cephmark run SCRIPT --params params.yaml\n" .. params_yaml)
    end
    write(dir .. "/series.csv", series_rows)
    write(dir .. "/" .. M.JOURNAL, journal)
    progress.started = true
  else
    -- the seconds first, then the journal's line: a process killed between the two leaves
    -- series.csv ahead of the journal by the entries' seconds, never behind it
    local rows = series_rows:match("^[^\n]*\n(.*)$")
    if rows ~= "" then append(dir .. "/series.csv", rows) end
    if #lines > 0 then append(dir .. "/" .. M.JOURNAL, journal) end
  end
  write(dir .. "/results.json", json.encode(document, { indent = 2 }) .. "\n")
end

-- read_document(path, dir) -> document, or nil and a one-line reason. A complete document
-- is returned as it is; a running one (results.json naming its journal) gets the phases,
-- sweeps, comparisons and orders of the journal, in order. The journal's last line counts only
-- when it ends in a newline: lines are appended whole, but a reader may look mid-append.
function M.read_document(path, dir)
  local text, err = sys.read_file(path)
  if not text then return nil, string.format("cannot read %s: %s", path, err) end
  local ok, doc, decode_err = pcall(json.decode, text)
  if not ok or doc == nil then
    local why = ok and decode_err or sys.error_info(doc)
    return nil, string.format("%s is not valid JSON: %s", path, tostring(why))
  end
  if type(doc) ~= "table" or type(doc.journal) ~= "string" or doc.phases ~= nil then return doc end
  -- a plain file name next to results.json, never a path elsewhere
  if not doc.journal:match("^[%w._-]+$") then
    return nil, string.format("%s names a journal '%s' that is not a file name", path, doc.journal)
  end
  local journal_path = dir .. "/" .. doc.journal
  local journal = sys.read_file(journal_path) or ""
  doc.phases, doc.sweeps, doc.comparisons, doc.orders = json.array(), json.array(), json.array(), json.array()
  local number = 0
  for line in journal:gmatch("([^\n]*)\n") do
    number = number + 1
    local line_ok, entry = pcall(json.decode, line)
    if not line_ok or type(entry) ~= "table" then
      return nil, string.format("%s: line %d is not a JSON object", journal_path, number)
    end
    if type(entry.phase) == "table" then doc.phases[#doc.phases + 1] = entry.phase end
    if type(entry.sweep) == "table" then doc.sweeps[#doc.sweeps + 1] = entry.sweep end
    if type(entry.comparison) == "table" then doc.comparisons[#doc.comparisons + 1] = entry.comparison end
    if type(entry.order) == "table" then doc.orders[#doc.orders + 1] = entry.order end
  end
  return doc
end

return M
