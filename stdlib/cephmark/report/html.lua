-- The HTML report: one self-contained page (inline CSS and SVG, no scripts, no network
-- fetches) built from one or more results folders. For each run: cluster facts and params,
-- the phase table, per-phase per-second timelines of bandwidth/IOPS and latency, latency
-- percentile curves on a log scale, sweep curves (a metric vs one swept dimension, one line
-- per value of another, both ways round; with repetitions, medians with their 95 %
-- intervals) and variant comparisons as bars with whiskers of their 95 % intervals and
-- marks for the best variant, those as good within noise and those not told apart from the
-- baseline; the cluster's side of each phase (where the time goes: the client's latency
-- against the OSDs'; CPU per op by variant); for a phase on agents, its agents, hosts and,
-- when the agents were spread over endpoints (gateways, netservers), each endpoint's figures
-- and per-second IOPS and p99; with several runs, a side-by-side section comparing them.
-- Every chart is followed by the table behind it. The same tables feed the CSV files (see
-- tables()).

local compare = require "cephmark.compare"
local scale = require "cephmark.report.scale"
local stats = require "cephmark.stats"
local svg = require "cephmark.report.svg"

local M = {}

local escape = svg.escape

-- ---------------------------------------------------------------- documents

local function is_array(t) return type(t) == "table" and (t[1] ~= nil or next(t) == nil) end

local function num(v) return type(v) == "number" and v or nil end

-- Appends item to groups[key], a new list the first time key comes, when key is appended
-- to order: the groups in order of first appearance.
local function add_to_group(groups, order, key, item)
  if not groups[key] then
    groups[key] = {}
    order[#order + 1] = key
  end
  table.insert(groups[key], item)
end

-- The shape of what the report reads from a document, checked before anything is drawn, so
-- a hand-edited or foreign results.json is refused with where it goes wrong
-- ("phases[1].series[2] is a number, expected a table") instead of failing mid-report.
-- Only types are checked: a missing field is fine, the report shows what there is.
local function kind(v)
  if v == nil then return "missing" end
  if type(v) == "table" then return is_array(v) and "a list" or "a table" end
  return "a " .. type(v)
end

local function expect(v, where, wanted, ...)
  if v == nil then return nil end
  local t = type(v)
  for i = 1, select("#", ...) do
    if t == select(i, ...) then return nil end
  end
  return string.format("%s is %s, expected %s", where, kind(v), wanted)
end

local function expect_list(v, where, wanted_item, check_item)
  if v == nil then return nil end
  if type(v) ~= "table" or not is_array(v) then
    return string.format("%s is %s, expected a list", where, kind(v))
  end
  for i, item in ipairs(v) do
    local why = check_item(item, string.format("%s[%d]", where, i), wanted_item)
    if why then return why end
  end
  return nil
end

local function table_item(item, where, wanted) return expect(item, where, wanted, "table") end
local function text_item(item, where) return expect(item, where, "a string", "string", "number") end

local function number_item(item, where) return expect(item, where, "a number", "number") end

-- A list item that may be JSON's null (a repetition without that figure).
local function number_or_null_item(item, where)
  if type(item) == "userdata" then return nil end
  return expect(item, where, "a number or null", "number")
end

-- One entry of result.by_endpoint (docs/distributed.md, "Several gateways").
local endpoint_numbers = { "ops", "bytes", "errors", "iops", "bandwidth_mib", "p50", "p99" }

local function check_endpoint(group, where)
  local why = table_item(group, where, "a table")
  if why then return why end
  for _, key in ipairs(endpoint_numbers) do
    why = number_or_null_item(group[key], where .. "." .. key)
    if why then return why end
  end
  return expect(group.series_p99, where .. ".series_p99", "a string", "string") or
    expect_list(group.agents, where .. ".agents", "a string", text_item) or
    expect_list(group.series, where .. ".series", "a table (one per second)", table_item)
end

local function check_result(result, where)
  local why = expect(result, where, "a table", "table")
  if why or result == nil then return why end
  why = expect(result.by_endpoint, where .. ".by_endpoint", "a table", "table")
  if why then return why end
  for endpoint, group in pairs(type(result.by_endpoint) == "table" and result.by_endpoint or {}) do
    why = check_endpoint(group, string.format("%s.by_endpoint[%q]", where, tostring(endpoint)))
    if why then return why end
  end
  why = expect(result.lat, where .. ".lat", "a table", "table")
  if why or type(result.lat) ~= "table" then return why end
  return expect_list(result.lat.percentiles, where .. ".lat.percentiles", "a table {p, value}", table_item)
end

local function check_best(best, where)
  local why = table_item(best, where, "a table")
  if why then return why end
  return text_item(best.phase, where .. ".phase") or expect(best.metric, where .. ".metric", "a string", "string") or
    text_item(best.best, where .. ".best") or expect_list(best.as_good, where .. ".as_good", "a string", text_item) or
    expect(best.n, where .. ".n", "a number", "number")
end

local stats_numbers = { "n", "median", "ci_low", "ci_high", "spread", "change", "change_ci_low", "change_ci_high",
  "mde" }
local stats_texts = { "direction", "verdict", "formatted" }

-- A comparison row's statistics (compare.row_stats): row.stats[metric] and row.pooled.
local function check_row_stats(row, where)
  local why = expect(row.stats, where .. ".stats", "a table", "table") or
    expect(row.pooled, where .. ".pooled", "a table", "table") or expect(row.n, where .. ".n", "a number", "number")
  if why then return why end
  for key, value in pairs(type(row.pooled) == "table" and row.pooled or {}) do
    why = number_item(value, string.format("%s.pooled.%s", where, tostring(key)))
    if why then return why end
  end
  for metric, entry in pairs(type(row.stats) == "table" and row.stats or {}) do
    local at = string.format("%s.stats[%q]", where, tostring(metric))
    why = expect(entry, at, "a table", "table")
    if why then return why end
    for _, key in ipairs(stats_numbers) do
      why = number_item(entry[key], at .. "." .. key)
      if why then return why end
    end
    for _, key in ipairs(stats_texts) do
      why = expect(entry[key], at .. "." .. key, "a string", "string")
      if why then return why end
    end
    why = expect(entry.paired, at .. ".paired", "a boolean", "boolean") or
      expect_list(entry.values, at .. ".values", nil, number_or_null_item)
    if why then return why end
  end
  return nil
end

-- The cluster's side of a phase as the report draws it: cluster.osd's counts and latencies
-- (docs/telemetry.md) and cluster.cpu's per-op figures (docs/cpu.md).
local osd_figures = { "osds", "op_r", "op_w", "op_r_latency", "op_w_latency", "op_r_process_latency",
  "op_w_process_latency", "subop_w_latency", "commit_latency", "kv_sync_latency" }

local function check_cluster_figures(cluster, where)
  local why = expect(cluster, where, "a table", "table")
  if why or type(cluster) ~= "table" then return why end
  why = expect(cluster.osd, where .. ".osd", "a table", "table") or
    expect(cluster.cpu, where .. ".cpu", "a table", "table")
  if why then return why end
  if type(cluster.osd) == "table" then
    for _, key in ipairs(osd_figures) do
      why = number_item(cluster.osd[key], where .. ".osd." .. key)
      if why then return why end
    end
    why = expect(cluster.osd.scope, where .. ".osd.scope", "a string", "string")
    if why then return why end
  end
  local cpu = cluster.cpu
  if type(cpu) == "table" then
    why = number_item(cpu.client_per_op, where .. ".cpu.client_per_op") or
      number_item(cpu.osd_per_op, where .. ".cpu.osd_per_op") or
      expect(cpu.scope, where .. ".cpu.scope", "a string", "string") or
      expect(cpu.kinds, where .. ".cpu.kinds", "a table", "table")
    if why then return why end
    for name, entry in pairs(type(cpu.kinds) == "table" and cpu.kinds or {}) do
      local at = string.format("%s.cpu.kinds[%q]", where, tostring(name))
      why = expect(entry, at, "a table", "table") or
        (type(entry) == "table" and number_item(entry.per_op, at .. ".per_op"))
      if why then return why end
    end
  end
  return nil
end

local function check_shape(doc)
  local label_fields = { "command", "mode", "pool", "image", "status" }
  for _, key in ipairs(label_fields) do
    local why = text_item(doc[key], key)
    if why then return why end
  end
  local why = expect(doc.scenario, "scenario", "a table", "table") or
    expect(doc.cluster, "cluster", "a table", "table") or
    expect_list(doc.pools, "pools", "a table", table_item) or
    expect_list(doc.comparisons, "comparisons", "a table", table_item) or
    expect_list(doc.sweeps, "sweeps", "a table", table_item)
  if why then return why end
  for i, pool in ipairs(doc.pools or {}) do
    why = expect(pool.spec, string.format("pools[%d].spec", i), "a table", "table")
    if why then return why end
  end
  for i, comparison in ipairs(doc.comparisons or {}) do
    local where = string.format("comparisons[%d]", i)
    why = text_item(comparison.by, where .. ".by") or
      expect_list(comparison.metrics, where .. ".metrics", "a string", text_item) or
      expect_list(comparison.rows, where .. ".rows", "a table", table_item)
    if why then return why end
    why = expect(comparison.repetitions, where .. ".repetitions", "a number", "number") or
      expect_list(comparison.best, where .. ".best", "a table", check_best)
    if why then return why end
    for j, row in ipairs(comparison.rows or {}) do
      if row.phase == nil then return string.format("%s.rows[%d].phase is missing", where, j) end
      why = expect(row.values, string.format("%s.rows[%d].values", where, j), "a table", "table") or
        check_row_stats(row, string.format("%s.rows[%d]", where, j))
      if why then return why end
    end
  end
  for i, sweep in ipairs(doc.sweeps or {}) do
    local where = string.format("sweeps[%d]", i)
    why = expect_list(sweep.dimensions, where .. ".dimensions", "a string", text_item) or
      expect_list(sweep.points, where .. ".points", "a table", table_item)
    if why then return why end
    for j, point in ipairs(sweep.points or {}) do
      why = expect(point.coordinates, string.format("%s.points[%d].coordinates", where, j), "a table", "table")
      if why then return why end
    end
  end
  if doc.phases ~= nil then
    why = expect_list(doc.phases, "phases", "a table", table_item)
    if why then return why end
    for i, phase in ipairs(doc.phases) do
      local where = string.format("phases[%d]", i)
      why = text_item(phase.name, where .. ".name") or text_item(phase.op, where .. ".op") or
        text_item(phase.label, where .. ".label") or text_item(phase.status, where .. ".status") or
        expect(phase.index, where .. ".index", "a number", "number") or
        expect(phase.variant, where .. ".variant", "a table", "table") or
        check_result(phase.result, where .. ".result") or
        check_cluster_figures(phase.cluster, where .. ".cluster") or
        expect_list(phase.series, where .. ".series", "a table (one per second)", table_item)
      if why then return why end
    end
  elseif type(doc.result) == "table" then
    return check_result(doc.result, "result") or
      expect_list(doc.result.series, "result.series", "a table (one per second)", table_item)
  end
  return nil
end

-- A results document as the report sees it: scenario runs have phases already; the
-- drop-in commands (rados-bench -o, rbd-bench -o) hold one result, made into one phase.
function M.normalize(doc, dir)
  local shape_error = check_shape(doc)
  if shape_error then return nil, shape_error end
  local run = { dir = dir, doc = doc }
  if type(doc.phases) == "table" then
    run.title = (doc.scenario and doc.scenario.name) or "scenario"
    run.description = doc.scenario and doc.scenario.description
    run.phases = doc.phases
  elseif type(doc.result) == "table" then
    run.title = doc.command or "benchmark"
    local result = {}
    for k, v in pairs(doc.result) do
      if k ~= "series" then result[k] = v end
    end
    run.phases = { { index = 1, name = doc.mode or doc.result.op or "run", op = doc.mode or doc.result.op,
      label = doc.pool or doc.image or "", status = doc.result.interrupted and "interrupted" or "ok",
      result = result, series = doc.result.series or {} } }
  else
    return nil, "it holds neither phases nor a result"
  end
  run.comparisons = is_array(doc.comparisons) and doc.comparisons or {}
  run.sweeps = is_array(doc.sweeps) and doc.sweeps or {}
  return run
end

local function phase_title(phase)
  local label = phase.label and phase.label ~= "" and (" " .. phase.label) or ""
  return string.format("[%d] %s%s", phase.index or 0, phase.name or phase.op or "phase", label)
end

-- Phases that measured I/O (cleanup and hooks also have results, but no series to show).
local function measured(phase)
  return type(phase.result) == "table" and num(phase.result.ops) and phase.result.ops > 0 and
    phase.op ~= "cleanup"
end

-- ---------------------------------------------------------------- tables

local function cell(value, format)
  if value == nil then return "" end
  if format and type(value) == "number" then return format(value) end
  if type(value) == "number" then return scale.number(value, 4) end
  if type(value) == "boolean" then return value and "yes" or "no" end
  return tostring(value)
end

-- A table is {title, columns = {{key, title, format}}, rows = {{key = value}}}.
local function table_html(t, open)
  local out = { string.format('<details class="data"%s><summary>%s (table)</summary><table>', open and " open" or "",
    escape(t.title)) }
  local head = {}
  for _, c in ipairs(t.columns) do head[#head + 1] = "<th>" .. escape(c.title or c.key) .. "</th>" end
  out[#out + 1] = "<thead><tr>" .. table.concat(head) .. "</tr></thead><tbody>"
  for _, row in ipairs(t.rows) do
    local cells = {}
    for _, c in ipairs(t.columns) do
      local class = (type(row[c.key]) == "number" or c.nowrap) and ' class="n"' or ""
      cells[#cells + 1] = "<td" .. class .. ">" .. escape(cell(row[c.key], c.format)) .. "</td>"
    end
    out[#out + 1] = "<tr>" .. table.concat(cells) .. "</tr>"
  end
  out[#out + 1] = "</tbody></table></details>"
  return table.concat(out, "\n")
end

local function key_value_table(title, pairs_list)
  local t = { title = title, columns = { { key = "name", title = "" }, { key = "value", title = "" } }, rows = {} }
  for _, kv in ipairs(pairs_list) do t.rows[#t.rows + 1] = { name = kv[1], value = kv[2] } end
  return t
end

local lat = scale.latency

M.phase_columns = {
  { key = "index", title = "#" }, { key = "name", title = "phase" }, { key = "label", title = "variant" },
  { key = "status", title = "status" }, { key = "ops", title = "ops", format = scale.count },
  { key = "elapsed", title = "seconds" }, { key = "bandwidth_mib", title = "MiB/s" },
  { key = "bandwidth_stddev", title = "MiB/s stddev" }, { key = "iops", title = "IOPS", format = scale.count },
  { key = "iops_stddev", title = "IOPS stddev" }, { key = "lat_avg", title = "avg lat", format = lat },
  { key = "lat_p50", title = "p50", format = lat }, { key = "lat_p90", title = "p90", format = lat },
  { key = "lat_p99", title = "p99", format = lat }, { key = "lat_p99_9", title = "p99.9", format = lat },
  { key = "lat_p99_99", title = "p99.99", format = lat }, { key = "lat_max", title = "max", format = lat },
  { key = "errors", title = "errors" }, { key = "verify_failures", title = "verify failures" },
}

local function phase_row(phase)
  local r = phase.result or {}
  local l = type(r.lat) == "table" and r.lat or {}
  return { index = phase.index, name = phase.name, label = phase.label, status = phase.status, ops = r.ops,
    elapsed = r.elapsed or phase.elapsed, bandwidth_mib = r.bandwidth_mib, bandwidth_stddev = r.bandwidth_stddev,
    iops = r.iops, iops_stddev = r.iops_stddev, lat_avg = l.avg, lat_p50 = l.p50, lat_p90 = l.p90,
    lat_p99 = l.p99, lat_p99_9 = l.p99_9, lat_p99_99 = l.p99_99, lat_max = l.max, errors = r.errors,
    verify_failures = r.verify_failures }
end

-- Latency percentiles of every measured phase, one row per (phase, percentile).
function M.percentile_rows(phases)
  local rows = {}
  for _, phase in ipairs(phases) do
    local l = type(phase.result) == "table" and phase.result.lat
    if measured(phase) and type(l) == "table" and is_array(l.percentiles) then
      for _, p in ipairs(l.percentiles) do
        rows[#rows + 1] = { phase_index = phase.index, phase = phase.name, label = phase.label,
          percentile = p.p, latency = p.value }
      end
    end
  end
  return rows
end
M.percentile_csv_columns = { "phase_index", "phase", "label", "percentile", "latency" }

-- ---------------------------------------------------------------- charts

local function extent(values)
  local low, high = math.huge, -math.huge
  for _, v in ipairs(values) do
    if v < low then low = v end
    if v > high then high = v end
  end
  return low, high
end

local function positive_extent(values)
  local kept = {}
  for _, v in ipairs(values) do
    if v > 0 then kept[#kept + 1] = v end
  end
  if #kept == 0 then return nil end
  return extent(kept)
end

local function figure(chart, tables)
  local out = { '<figure class="chart-box">', chart }
  for _, t in ipairs(tables or {}) do out[#out + 1] = table_html(t) end
  out[#out + 1] = "</figure>"
  return table.concat(out, "\n")
end

-- Bandwidth (or IOPS, for phases that move no bytes) and latency, second by second.
local function timeline_figures(phase)
  local series = phase.series or {}
  if #series == 0 then return nil end
  local moves_bytes = (num(phase.result and phase.result.bytes) or 0) > 0
  local rate_points, lat_avg, lat_p99, lat_max, rows, xs = {}, {}, {}, {}, {}, {}
  local lat_worst = {} -- a distributed phase's: the worst agent's p99 of each second
  for _, s in ipairs(series) do
    local x = num(s.sec) or (#xs + 1)
    xs[#xs + 1] = x
    local rate = moves_bytes and num(s.cur_mib) or num(s.iops)
    if rate then rate_points[#rate_points + 1] = { x, rate } end
    if num(s.avg_lat) and s.avg_lat > 0 then lat_avg[#lat_avg + 1] = { x, s.avg_lat } end
    if num(s.p99) and s.p99 > 0 then lat_p99[#lat_p99 + 1] = { x, s.p99 } end
    if num(s.p99_worst_agent) and s.p99_worst_agent > 0 then lat_worst[#lat_worst + 1] = { x, s.p99_worst_agent } end
    if num(s.max_lat) and s.max_lat > 0 then lat_max[#lat_max + 1] = { x, s.max_lat } end
    rows[#rows + 1] = { sec = s.sec, cur_ops = s.cur_ops, ops = s.ops, cur_mib = s.cur_mib, iops = s.iops,
      in_flight_mean = s.in_flight_mean, avg_lat = s.avg_lat, p99 = s.p99, max_lat = s.max_lat,
      errors = s.errors, warmup = s.warmup, partial = s.partial, p99_worst_agent = s.p99_worst_agent }
  end
  local x_low, x_high = extent(xs)
  local x_axis = { scale = scale.linear(x_low - 1, x_high, { format = scale.number }), title = "second",
    format = scale.number }
  local rates = {}
  for _, p in ipairs(rate_points) do rates[#rates + 1] = p[2] end
  local _, rate_high = extent(#rates > 0 and rates or { 0 })
  local rate_format = moves_bytes and scale.number or scale.count
  local rate_chart = svg.line {
    title = string.format("%s: %s per second", phase_title(phase), moves_bytes and "MiB/s" or "IOPS"),
    x = x_axis,
    y = { scale = scale.linear(0, rate_high, { format = rate_format }), title = moves_bytes and "MiB/s" or "IOPS",
      format = rate_format },
    series = { { name = moves_bytes and "MiB/s" or "IOPS", points = rate_points } },
  }
  local lat_values = {}
  for _, list in ipairs { lat_avg, lat_p99, lat_max, lat_worst } do
    for _, p in ipairs(list) do lat_values[#lat_values + 1] = p[2] end
  end
  local lat_chart
  local lat_low, lat_high = positive_extent(lat_values)
  if lat_low then
    local merged = #lat_worst > 0
    local lat_series = { { name = "avg (since start)", points = lat_avg },
      { name = merged and "p99 of the second (all agents)" or "p99 of the second", points = lat_p99 },
      { name = "max of the second", points = lat_max } }
    if merged then lat_series[#lat_series + 1] = { name = "p99 of the second, worst agent", points = lat_worst } end
    lat_chart = svg.line {
      title = phase_title(phase) .. ": latency per second",
      x = x_axis,
      y = { scale = scale.log10(lat_low, lat_high, { format = lat }), title = "latency", format = lat },
      series = lat_series,
    }
  end
  -- Ops in flight twice: as the second ended, and time-weighted over the second against the
  -- depth the phase asked for (a closed loop that keeps its slots full shows the depth).
  local depth = num(phase.result and phase.result.threads)
  local mean_title = depth and string.format("in flight, mean (of %d)", depth) or "in flight, mean"
  local t = { title = phase_title(phase) .. ": per-second series", rows = rows, columns = {
    { key = "sec", title = "sec" }, { key = "cur_ops", title = "in flight at end" },
    { key = "in_flight_mean", title = mean_title, format = scale.number }, { key = "ops", title = "ops" },
    { key = "cur_mib", title = "MiB/s" }, { key = "iops", title = "IOPS", format = scale.count },
    { key = "avg_lat", title = "avg lat", format = lat }, { key = "p99", title = "p99", format = lat },
    { key = "max_lat", title = "max", format = lat }, { key = "errors", title = "errors" },
    { key = "warmup", title = "warm-up" }, { key = "partial", title = "partial" } } }
  if #lat_worst > 0 then
    table.insert(t.columns, 9, { key = "p99_worst_agent", title = "p99 worst agent", format = lat })
  end
  return figure(rate_chart) .. "\n" .. (lat_chart and figure(lat_chart, { t }) or figure("", { t }))
end

-- A distributed phase's agents: a bar of IOPS per agent (a slow agent's in another colour,
-- named in the note, by the rule of docs/distributed.md), a table per agent and a table
-- per host that joins the agents and the host monitor on each host. nil for a phase that
-- did not run on agents.
local function agents_figure(phase)
  local result = type(phase.result) == "table" and phase.result or {}
  local agents = type(result.agents) == "table" and result.agents or nil
  if not agents or not next(agents) then return nil end
  local slow = {}
  local notes = {}
  for _, entry in ipairs(is_array(result.slow_agents) and result.slow_agents or {}) do
    if type(entry) == "table" and type(entry.agent) == "string" then
      slow[entry.agent] = true
      local reasons = is_array(entry.reasons) and table.concat(entry.reasons, ", ") or ""
      notes[#notes + 1] = string.format("slow agent %s (%s): %s", entry.agent, tostring(entry.host or "?"), reasons)
    end
  end
  if #notes == 0 then notes[1] = "No slow agent (p99 over twice, or IOPS under half, the median of at least two peers)." end
  local names, bars, agent_rows = {}, {}, {}
  for name, a in pairs(agents) do
    if type(a) == "table" then names[#names + 1] = name end
  end
  table.sort(names)
  for _, name in ipairs(names) do
    local a = agents[name]
    local host = type(a.host) == "string" and a.host or "?"
    bars[#bars + 1] = { label = string.format("%s (%s)", name, host), value = num(a.iops) or 0,
      color = slow[name] and 2 or 1, title = name .. (slow[name] and ", slow" or "") }
    agent_rows[#agent_rows + 1] = { agent = name, host = host, ops = num(a.ops), iops = num(a.iops),
      bandwidth_mib = num(a.bandwidth_mib), p50 = num(a.p50), p99 = num(a.p99), errors = num(a.errors),
      elapsed = num(a.elapsed), rate = num(a.rate), slow = slow[name] and "slow" or "" }
  end
  local chart = svg.hbars { title = phase_title(phase) .. ": IOPS per agent", rows = bars, note = notes,
    x = { title = "IOPS", format = scale.count } }
  local agent_table = { title = phase_title(phase) .. ": per agent", rows = agent_rows, columns = {
    { key = "agent", title = "agent" }, { key = "host", title = "host" }, { key = "ops", title = "ops", format = scale.count },
    { key = "iops", title = "IOPS", format = scale.count }, { key = "bandwidth_mib", title = "MiB/s" },
    { key = "p50", title = "p50", format = lat }, { key = "p99", title = "p99", format = lat },
    { key = "errors", title = "errors" }, { key = "elapsed", title = "seconds" }, { key = "rate", title = "rate share" },
    { key = "slow", title = "slow" } } }
  local hosts, host_rows = type(result.per_host) == "table" and result.per_host or {}, {}
  local host_names = {}
  for host, row in pairs(hosts) do
    if type(row) == "table" then host_names[#host_names + 1] = host end
  end
  table.sort(host_names)
  for _, host in ipairs(host_names) do
    local row = hosts[host]
    host_rows[#host_rows + 1] = { host = host, agents = is_array(row.agents) and table.concat(row.agents, ", ") or "",
      ops = num(row.ops), iops = num(row.iops), bandwidth_mib = num(row.bandwidth_mib), p99 = num(row.p99),
      errors = num(row.errors), monitor = type(row.monitor) == "string" and row.monitor or "",
      host_cpu_busy = num(row.host_cpu_busy) and row.host_cpu_busy * 100, osd_cpu_seconds = num(row.osd_cpu_seconds),
      slow = row.slow == true and "slow" or (type(row.monitor_missing) == "string" and "monitor missing" or "") }
  end
  local tables = { agent_table }
  if #host_rows > 0 then
    tables[#tables + 1] = { title = phase_title(phase) .. ": per host (agents and host monitor)", rows = host_rows,
      columns = { { key = "host", title = "host" }, { key = "agents", title = "agents" },
        { key = "ops", title = "ops", format = scale.count }, { key = "iops", title = "IOPS", format = scale.count },
        { key = "bandwidth_mib", title = "MiB/s" }, { key = "p99", title = "worst agent p99", format = lat },
        { key = "errors", title = "errors" }, { key = "monitor", title = "monitor" },
        { key = "host_cpu_busy", title = "host CPU %" }, { key = "osd_cpu_seconds", title = "OSD CPU s" },
        { key = "slow", title = "" } } }
  end
  return figure(chart, tables)
end

-- How a by_endpoint entry's seconds got their p99 (series_p99, docs/distributed.md).
local endpoint_p99_words = { merged = "merged (its agents' histograms)",
  ["worst agent"] = "worst agent (an agent sent no per-second histograms)" }

-- A phase whose agents were spread over several endpoints (gateways with `endpoint =`,
-- netservers with `peer =`; result.by_endpoint): a chart of each endpoint's IOPS per second
-- with the table per endpoint and the per-second table under it, and a chart of each
-- endpoint's p99 per second (log scale) with the seconds' latencies. Endpoints in name
-- order, one line each. nil for a phase without by_endpoint.
local function endpoints_figures(phase)
  local by_endpoint = type(phase.result) == "table" and phase.result.by_endpoint
  if type(by_endpoint) ~= "table" then return nil end
  local names = {}
  for endpoint, group in pairs(by_endpoint) do
    if type(group) == "table" then names[#names + 1] = tostring(endpoint) end
  end
  if #names == 0 then return nil end
  table.sort(names)
  local summary_rows, second_rows, lat_rows, iops_series, p99_series = {}, {}, {}, {}, {}
  local xs, iops_values, lat_values, worst = {}, {}, {}, {}
  for _, endpoint in ipairs(names) do
    local group = by_endpoint[endpoint]
    local how = type(group.series_p99) == "string" and group.series_p99 or nil
    if how == "worst agent" then worst[#worst + 1] = endpoint end
    summary_rows[#summary_rows + 1] = { endpoint = endpoint,
      agents = is_array(group.agents) and table.concat(group.agents, ", ") or "", ops = num(group.ops),
      iops = num(group.iops), bandwidth_mib = num(group.bandwidth_mib), p50 = num(group.p50), p99 = num(group.p99),
      errors = num(group.errors), series_p99 = how and (endpoint_p99_words[how] or how) or "" }
    local line_name = how == "worst agent" and (endpoint .. " (worst agent's p99)") or endpoint
    local iops_points, p99_points = {}, {}
    for _, s in ipairs(is_array(group.series) and group.series or {}) do
      if type(s) == "table" and num(s.sec) then
        xs[#xs + 1] = s.sec
        if num(s.iops) then
          iops_points[#iops_points + 1] = { s.sec, s.iops }
          iops_values[#iops_values + 1] = s.iops
        end
        if num(s.p99) and s.p99 > 0 then
          p99_points[#p99_points + 1] = { s.sec, s.p99 }
          lat_values[#lat_values + 1] = s.p99
        end
        second_rows[#second_rows + 1] = { sec = s.sec, endpoint = endpoint, agents = num(s.agents), ops = num(s.ops),
          iops = num(s.iops), cur_mib = num(s.cur_mib), errors = num(s.errors), warmup = s.warmup, partial = s.partial }
        lat_rows[#lat_rows + 1] = { sec = s.sec, endpoint = endpoint, lat_count = num(s.lat_count), p50 = num(s.p50),
          p99 = num(s.p99), p999 = num(s.p999), max_lat = num(s.max_lat) }
      end
    end
    iops_series[#iops_series + 1] = { name = endpoint, points = iops_points }
    p99_series[#p99_series + 1] = { name = line_name, points = p99_points }
  end
  local title = phase_title(phase)
  local summary = { title = title .. ": per endpoint", rows = summary_rows, columns = {
    { key = "endpoint", title = "endpoint" }, { key = "agents", title = "agents" },
    { key = "ops", title = "ops", format = scale.count }, { key = "iops", title = "IOPS", format = scale.count },
    { key = "bandwidth_mib", title = "MiB/s" }, { key = "p50", title = "p50", format = lat },
    { key = "p99", title = "p99", format = lat }, { key = "errors", title = "errors" },
    { key = "series_p99", title = "per-second p99" } } }
  if #xs == 0 then return { figure("", { summary }) } end
  local x_low, x_high = extent(xs)
  local x_axis = { scale = scale.linear(x_low - 1, x_high, { format = scale.number }), title = "second",
    format = scale.number }
  local _, iops_high = extent(#iops_values > 0 and iops_values or { 0 })
  local seconds = { title = title .. ": per endpoint and second", rows = second_rows, columns = {
    { key = "sec", title = "sec" }, { key = "endpoint", title = "endpoint" }, { key = "agents", title = "agents" },
    { key = "ops", title = "ops" }, { key = "iops", title = "IOPS", format = scale.count },
    { key = "cur_mib", title = "MiB/s" }, { key = "errors", title = "errors" }, { key = "warmup", title = "warm-up" },
    { key = "partial", title = "partial" } } }
  local out = { figure(svg.line {
    title = title .. ": IOPS per second, by endpoint",
    x = x_axis,
    y = { scale = scale.linear(0, iops_high, { format = scale.count }), title = "IOPS", format = scale.count },
    series = iops_series,
  }, { summary, seconds }) }
  local latencies = { title = title .. ": latency per endpoint and second", rows = lat_rows, columns = {
    { key = "sec", title = "sec" }, { key = "endpoint", title = "endpoint" }, { key = "lat_count", title = "ops timed" },
    { key = "p50", title = "p50", format = lat }, { key = "p99", title = "p99", format = lat },
    { key = "p999", title = "p99.9", format = lat }, { key = "max_lat", title = "max", format = lat } } }
  local lat_low, lat_high = positive_extent(lat_values)
  if not lat_low then
    out[#out + 1] = figure("", { latencies })
    return out
  end
  -- how each line's p99 was found, one line of the note per endpoint that is not merged
  local note = { "p99 of each second from the merge of its agents' histograms" }
  for _, endpoint in ipairs(worst) do
    note[#note + 1] = endpoint .. ": the worst agent's p99 (an agent sent no per-second histograms)"
  end
  out[#out + 1] = figure(svg.line {
    title = title .. ": p99 per second, by endpoint",
    note = note,
    x = x_axis,
    y = { scale = scale.log10(lat_low, lat_high, { format = lat }), title = "latency", format = lat },
    series = p99_series,
  }, { latencies })
  return out
end

-- One curve per phase: latency (log) against percentile (nines scale).
local function percentile_figure(title, curves)
  if #curves == 0 then return nil end
  local values, max_p, series, rows = {}, 99, {}, {}
  for _, c in ipairs(curves) do
    local points = {}
    for _, p in ipairs(c.percentiles) do
      if num(p.value) and p.value > 0 and num(p.p) then
        points[#points + 1] = { p.p, p.value }
        values[#values + 1] = p.value
        if p.p > max_p then max_p = p.p end
        rows[#rows + 1] = { curve = c.name, percentile = p.p, latency = p.value }
      end
    end
    series[#series + 1] = { name = c.name, points = points }
  end
  local low, high = positive_extent(values)
  if not low then return nil end
  local chart = svg.line {
    title = title,
    x = { scale = scale.percentiles(max_p), title = "percentile", format = scale.percentile },
    y = { scale = scale.log10(low, high, { format = lat }), title = "latency", format = lat },
    series = series,
  }
  return figure(chart, { { title = title, rows = rows, columns = { { key = "curve", title = "phase" },
    { key = "percentile", title = "percentile", format = scale.percentile },
    { key = "latency", title = "latency", format = lat } } } })
end

local function percentile_curves(phases, name_of)
  local by_op, order = {}, {}
  for _, phase in ipairs(phases) do
    local l = type(phase.result) == "table" and phase.result.lat
    if measured(phase) and type(l) == "table" and is_array(l.percentiles) and #l.percentiles > 0 then
      add_to_group(by_op, order, phase.name or phase.op or "phase",
        { name = name_of(phase), percentiles = l.percentiles })
    end
  end
  return by_op, order
end

-- ---------------------------------------------------------------- sweeps

-- The unit a metric's median and interval are written in (compare.format_interval's:
-- latencies in ms).
local function interval_unit(metric)
  if metric:match("^lat%.") or metric:match("^osd%.[%w_]*latency$") then return "ms" end
  if metric:match("^cpu%..*per_op$") then return "µs" end -- (docs/cpu.md)
  return compare.header(metric)
end

-- How the best and those as good within noise are marked in tables (the figures' stars).
local standing_text = { best = "★ best", ["as good"] = "☆ as good" }


local function parse_number(text)
  if type(text) == "number" then return text end
  local sys_ok, sys = pcall(require, "cephmark.sys")
  if sys_ok and type(text) == "string" then
    local v = sys.parse_size(text)
    if v then return v end
  end
  return tonumber(text)
end

local size_dimensions = { block_size = true, object_size = true, io_size = true, size = true, bs = true }

-- An x axis for a swept dimension: numeric values on a log2 scale (sizes labelled 4K, 64K,
-- 4M), anything else as evenly spaced categories.
local function dimension_axis(name, values)
  local numbers = {}
  for _, v in ipairs(values) do
    local n = parse_number(v)
    if not n or n <= 0 then numbers = nil break end
    numbers[#numbers + 1] = n
  end
  if numbers then
    local format = size_dimensions[name] and scale.size or scale.number
    return { scale = scale.log2(numbers, { format = format }), title = name, format = format },
      function(v) return parse_number(v) end
  end
  local index = {}
  for i, v in ipairs(values) do index[v] = i end
  local ticks = {}
  for i, v in ipairs(values) do ticks[i] = { value = i, label = tostring(v) } end
  local category_scale = scale.linear(1, math.max(2, #values), { zero = false })
  category_scale.tick_list = ticks
  return { scale = category_scale, title = name, format = function(i) return tostring(values[i] or i) end },
    function(v) return index[v] end
end

local sweep_metrics = {
  { key = "bandwidth_mib", title = "MiB/s", format = scale.number, get = function(r) return r.bandwidth_mib end },
  { key = "iops", title = "IOPS", format = scale.count, get = function(r) return r.iops end },
  { key = "lat.p99", title = "p99 latency", format = lat, log = true,
    get = function(r) return type(r.lat) == "table" and r.lat.p99 or nil end },
}

local function sweep_figures(run, sweep)
  local dims = is_array(sweep.dimensions) and sweep.dimensions or {}
  if #dims == 0 then return {} end
  -- values of each dimension, in the order the sweep visits them
  local values, seen = {}, {}
  for _, d in ipairs(dims) do
    values[d], seen[d] = {}, {}
  end
  for _, point in ipairs(is_array(sweep.points) and sweep.points or {}) do
    for _, d in ipairs(dims) do
      local v = point.coordinates and point.coordinates[d]
      if v ~= nil and not seen[d][v] then
        seen[d][v] = true
        values[d][#values[d] + 1] = v
      end
    end
  end
  -- measured phases of the sweep's points, by phase name
  local by_name, names = {}, {}
  for _, phase in ipairs(run.phases) do
    if measured(phase) and phase.point and type(phase.variant) == "table" then
      local complete = true
      for _, d in ipairs(dims) do
        if phase.variant[d] == nil then complete = false end
      end
      if complete then add_to_group(by_name, names, phase.name, phase) end
    end
  end
  -- the best point and those as good within noise, per phase name and metric, from the
  -- run's comparisons by point (a sweep alone names no best)
  local point_marks = {}
  for _, comparison in ipairs(run.comparisons) do
    if comparison.by == "point" then
      for _, best in ipairs(is_array(comparison.best) and comparison.best or {}) do
        if best.phase ~= nil and best.metric ~= nil then
          point_marks[best.phase] = point_marks[best.phase] or {}
          local marks = point_marks[best.phase][best.metric] or {}
          point_marks[best.phase][best.metric] = marks
          for _, variant in ipairs(is_array(best.as_good) and best.as_good or {}) do
            marks[tostring(variant)] = "as good"
          end
          marks[tostring(best.best)] = "best"
        end
      end
    end
  end
  local out = {}
  for _, name in ipairs(names) do
    local phases = by_name[name]
    -- x = each dimension in turn; one line per combination of the others
    for _, x_dim in ipairs(dims) do
      local axis, position = dimension_axis(x_dim, values[x_dim])
      for _, metric in ipairs(sweep_metrics) do
        local lines, order, all, rows = {}, {}, {}, {}
        local marks = point_marks[name] and point_marks[name][metric.key] or {}
        local repeated, marked = false, false
        for _, phase in ipairs(phases) do
          local others = {}
          for _, d in ipairs(dims) do
            if d ~= x_dim then others[#others + 1] = d .. "=" .. tostring(phase.variant[d]) end
          end
          local line_name = #others > 0 and table.concat(others, " ") or metric.title
          local y = metric.get(phase.result)
          local x = position(phase.variant[x_dim])
          if num(y) and x and (not metric.log or y > 0) and y == y and y ~= math.huge then
            if not lines[line_name] then
              lines[line_name] = { points = {}, at = {} }
              order[#order + 1] = line_name
            end
            -- the repetitions of a point make one point; phases without a repetition
            -- number (older folders) stay one point each, as they were drawn
            local line = lines[line_name]
            local key = phase.repetition ~= nil and tostring(x) or (tostring(x) .. "#" .. tostring(phase.index))
            local point = line.at[key]
            if not point then
              point = { x = x, label = phase.variant[x_dim], values = {}, mark = marks[tostring(phase.point)] }
              line.at[key] = point
              line.points[#line.points + 1] = point
            end
            point.values[#point.values + 1] = y
            if #point.values > 1 then repeated = true end
            if point.mark then marked = true end
          end
        end
        if #order > 0 then
          local series = {}
          for _, line_name in ipairs(order) do
            local points = {}
            for _, point in ipairs(lines[line_name].points) do
              local summary = #point.values > 1 and stats.summary(point.values) or
                { n = 1, median = point.values[1] }
              local drawn = { point.x, summary.median, mark = point.mark }
              all[#all + 1] = summary.median
              if summary.ci_low and summary.ci_high and (not metric.log or summary.ci_low > 0) then
                drawn.interval = { summary.ci_low, summary.ci_high }
                all[#all + 1] = summary.ci_low
                all[#all + 1] = summary.ci_high
              end
              points[#points + 1] = drawn
              local interval_text = compare.format_interval(metric.key, { median = summary.median,
                ci_low = summary.ci_low, ci_high = summary.ci_high })
              rows[#rows + 1] = { line = line_name, x = point.label, value = summary.median, n = summary.n,
                median = interval_text:match("^(%S+) %[") or interval_text,
                interval = interval_text:match("%[.*%]$") or "none",
                standing = point.mark and standing_text[point.mark] or "-" }
            end
            table.sort(points, function(a, b) return a[1] < b[1] end)
            series[#series + 1] = { name = line_name, points = points }
          end
          local low, high = extent(all)
          if marked then
            -- room above the highest whisker for the stars
            high = metric.log and high * 1.2 or high * 1.1
          end
          local y_scale = metric.log and scale.log10(low, high, { format = metric.format }) or
            scale.linear(0, high, { format = metric.format })
          local title = string.format("%s: %s vs %s", name, metric.title, x_dim)
          local columns = { { key = "line", title = "line" }, { key = "x", title = x_dim },
            { key = "value", title = metric.title, format = metric.format } }
          local note
          if repeated then
            local unit = interval_unit(metric.key)
            columns[3] = { key = "median", title = "median (" .. unit .. ")", nowrap = true }
            columns[#columns + 1] = { key = "n", title = "n" }
            columns[#columns + 1] = { key = "interval", title = "95 % interval (" .. unit .. ")", nowrap = true }
            note = "Points: medians of the repetitions; whiskers: 95 % intervals."
          end
          if marked then columns[#columns + 1] = { key = "standing", title = "standing (s:compare by point)" } end
          out[#out + 1] = figure(svg.line {
            title = title, x = axis, note = note,
            y = { scale = y_scale, title = metric.title, format = metric.format }, series = series,
          }, { { title = title, rows = rows, columns = columns } })
        end
      end
    end
  end
  return out
end

-- ---------------------------------------------------------------- comparisons

local comparison_metrics = {
  bandwidth_mib = { title = "MiB/s", format = scale.number, stddev = "bandwidth_stddev" },
  iops = { title = "IOPS", format = scale.count, stddev = "iops_stddev" },
  ops = { title = "ops", format = scale.count },
}

-- "lat.p99" -> "p99 latency", "lat.avg" -> "avg latency"
local function metric_info(metric)
  if comparison_metrics[metric] then return comparison_metrics[metric] end
  local latency = metric:match("^lat%.(.+)$")
  if latency then return { title = latency:gsub("_", ".") .. " latency", format = lat } end
  local osd = metric:match("^osd%.([%w_]+)_latency$")
  if osd then return { title = "OSD " .. osd .. " latency", format = lat } end
  if metric:match("^cpu%..*per_op$") then return { title = metric .. " (CPU seconds per op)", format = lat } end
  return { title = metric, format = scale.number }
end

-- The standing of a row's variant among its phase's for a metric (comparison.best): "best",
-- "as good" (within noise of the best) or nil.
local function standing(comparison, row, metric)
  for _, best in ipairs(is_array(comparison.best) and comparison.best or {}) do
    if best.phase == row.phase and best.metric == metric then
      if tostring(best.best) == tostring(row.variant) then return "best" end
      for _, variant in ipairs(is_array(best.as_good) and best.as_good or {}) do
        if tostring(variant) == tostring(row.variant) then return "as good" end
      end
      return nil
    end
  end
  return nil
end

local function no_difference(entry)
  return type(entry.verdict) == "string" and entry.verdict:find("^no difference detectable") ~= nil
end

-- One bar chart per metric: bars at the variants' medians. With repetitions the whiskers are
-- the 95 % intervals (row.stats); with one run there are none, and the figure says so; a
-- comparison from before repetitions (no stats) keeps its per-second stddev whiskers,
-- labelled as that. Per-second stddevs stay in the table, labelled as what they are.
local function comparison_figures(run, comparison, figure_id)
  local phase_by_index = {}
  for _, phase in ipairs(run.phases) do phase_by_index[phase.index] = phase end
  local rows = is_array(comparison.rows) and comparison.rows or {}
  local categories, category_index, variants, variant_index = {}, {}, {}, {}
  local with_stats = false
  for _, row in ipairs(rows) do
    if not category_index[row.phase] then
      categories[#categories + 1] = row.phase
      category_index[row.phase] = #categories
    end
    local v = tostring(row.variant or row.label)
    if not variant_index[v] then
      variants[#variants + 1] = v
      variant_index[v] = #variants
    end
    if type(row.stats) == "table" then with_stats = true end
  end
  local repetitions = num(comparison.repetitions) or 1
  local out = {}
  for m, metric in ipairs(is_array(comparison.metrics) and comparison.metrics or {}) do
    local info = metric_info(metric)
    local groups = {}
    for i, v in ipairs(variants) do
      groups[i] = { name = v, values = {}, errors = {}, intervals = {}, marks = {}, hatched = {} }
    end
    local table_rows = {}
    local drew_interval, drew_stddev = false, false
    for _, row in ipairs(rows) do
      local entry = with_stats and type(row.stats) == "table" and type(row.stats[metric]) == "table" and
        row.stats[metric] or nil
      local value = entry and num(entry.median) or (row.values and num(row.values[metric]))
      if value then
        local variant = tostring(row.variant or row.label)
        local g = groups[variant_index[variant]]
        local c = category_index[row.phase]
        g.values[c] = value
        local phase = phase_by_index[row.phase_index]
        local stddev = info.stddev and phase and phase.result and num(phase.result[info.stddev])
        if not with_stats then
          g.errors[c] = stddev
          if stddev and stddev > 0 then drew_stddev = true end
          table_rows[#table_rows + 1] = { phase = row.phase, variant = variant, value = value, stddev = stddev,
            relative = row.relative and row.relative[metric], baseline = row.baseline }
        else
          entry = entry or {}
          local n = num(entry.n) or num(row.n)
          if n and n >= 2 and num(entry.ci_low) and num(entry.ci_high) then
            g.intervals[c] = { entry.ci_low, entry.ci_high }
            drew_interval = true
          end
          local mark = standing(comparison, row, metric)
          g.marks[c] = mark
          if not row.baseline and no_difference(entry) then g.hatched[c] = true end
          local interval_text = compare.format_interval(metric, { median = value, ci_low = entry.ci_low,
            ci_high = entry.ci_high })
          local median_text, bracket = interval_text:match("^(%S+) (%[.*%])$")
          table_rows[#table_rows + 1] = { phase = row.phase, variant = variant, baseline = row.baseline, n = n,
            median = median_text or interval_text,
            interval = bracket or (n == 1 and "none: one run" or "none"),
            change = not row.baseline and entry.formatted or nil,
            verdict = not row.baseline and entry.verdict or nil,
            detectable = not row.baseline and num(entry.mde) and compare.format_detectable(entry.mde) or nil,
            standing = mark and (standing_text[mark] .. (repetitions <= 1 and " (one run)" or "")) or "-",
            stddev = stddev }
        end
      end
    end
    if #table_rows > 0 then
      local title = string.format("%s by %s", info.title, comparison.by or "variant")
      local by = comparison.by or "variant"
      local columns, note
      if with_stats then
        local unit = interval_unit(metric)
        columns = { { key = "phase", title = "phase" }, { key = "variant", title = by },
          { key = "baseline", title = "baseline" }, { key = "n", title = "n" },
          { key = "median", title = "median (" .. unit .. ")", nowrap = true },
          { key = "interval", title = "95 % interval (" .. unit .. ")", nowrap = true },
          { key = "change", title = "change [95 % interval]", nowrap = true }, { key = "verdict", title = "verdict" },
          { key = "detectable", title = "detectable", nowrap = true }, { key = "standing", title = "standing" } }
        if info.stddev then
          columns[#columns + 1] = { key = "stddev", format = info.format, title = repetitions > 1 and
            "per-second stddev within one run (its first repetition)" or "per-second stddev within the run" }
        end
        if repetitions > 1 then
          note = drew_interval and
            string.format("Bars: medians of %d repetitions; whiskers: 95 %% intervals.", repetitions) or
            string.format("Bars: medians of %d repetitions; no interval known.", repetitions)
        else
          note = { "One run each: no interval is known, so no whiskers, and which variants",
            "are as good as the best is unknown (--repeats N measures both)." }
        end
      else
        columns = { { key = "phase", title = "phase" }, { key = "variant", title = by },
          { key = "value", title = info.title, format = info.format },
          { key = "stddev", title = "per-second stddev", format = info.format },
          { key = "relative", title = "vs baseline %" }, { key = "baseline", title = "baseline" } }
        if drew_stddev then
          note = "Whiskers: ± per-second stddev within the run, not an uncertainty of the figure."
        end
      end
      out[#out + 1] = figure(svg.bars { title = title, categories = categories, groups = groups, note = note,
        mark_texts = with_stats and repetitions <= 1 and { best = "best of one run each" } or nil,
        id = string.format("%s-%d", figure_id, m), y = { title = info.title, format = info.format } },
        { { title = title, rows = table_rows, columns = columns } })
    end
  end
  return out
end

-- ---------------------------------------------------------------- the cluster's side

-- The measured phases whose `cluster` table has a figure (has(phase) is true), grouped by
-- phase name and variant in order of appearance: the repetitions of a (phase, variant) make
-- one group, whose figures are their medians. Phases without a repetition number (older
-- folders) that share a name and variant stay apart.
local function cluster_groups(phases, has)
  local groups, by_key = {}, {}
  for _, phase in ipairs(phases) do
    if measured(phase) and type(phase.cluster) == "table" and has(phase) then
      local label = phase.label ~= nil and tostring(phase.label) or ""
      local key = tostring(phase.name) .. "\0" .. label
      if phase.repetition == nil and by_key[key] then key = key .. "\0" .. tostring(phase.index) end
      local group = by_key[key]
      if not group then
        group = { name = tostring(phase.name or phase.op or "phase"), variant = label, records = {} }
        if key:find("\0.*\0") then group.variant = string.format("%s [%s]", label, tostring(phase.index)) end
        by_key[key] = group
        groups[#groups + 1] = group
      end
      group.records[#group.records + 1] = phase
    end
  end
  return groups
end

local function osd_table(phase) return type(phase.cluster.osd) == "table" and phase.cluster.osd or nil end

local function has_osd_latency(phase)
  local osd = osd_table(phase)
  return osd ~= nil and (num(osd.op_w_latency) or num(osd.op_r_latency)) ~= nil
end

-- The bars of "where the time goes": the client's average, then the OSDs' latencies of the
-- phase's kind of op (reads when the OSDs served more reads than writes, as in the phase's
-- summary line), then, for writes, the replicas' sub-ops and bluestore's commit and kv sync.
local function time_rows(reads)
  local kind = reads and "op_r" or "op_w"
  local rows = {
    { metric = "lat.avg", label = "client: average latency", color = 1 },
    { metric = "osd." .. kind .. "_latency", label = "OSDs: " .. kind .. " (op received to reply)", color = 2 },
    { metric = "osd." .. kind .. "_process_latency", label = "OSDs: " .. kind .. " process (after the queue)",
      color = 3 },
  }
  if not reads then
    rows[#rows + 1] = { metric = "osd.subop_w_latency", label = "OSDs: subop_w (a replica write)",
      color = 4 }
    rows[#rows + 1] = { metric = "osd.commit_latency", label = "OSDs: commit (bluestore)", color = 5 }
    rows[#rows + 1] = { metric = "osd.kv_sync_latency", label = "OSDs: kv sync (bluestore)", color = 6 }
  end
  return rows
end

local function sum_of(records, metric)
  local total = 0
  for _, record in ipairs(records) do total = total + (compare.record_value(record, metric) or 0) end
  return total
end

local function values_text(values, format)
  local parts = {}
  for i, value in ipairs(values) do parts[i] = type(value) == "number" and format(value) or "-" end
  return table.concat(parts, ", ")
end

-- One "where the time goes" chart per phase name and variant: the client's average latency
-- against the OSDs' op, process, sub-op and commit latencies (cluster.osd), as horizontal
-- bars on one time axis, shared by the charts of the same phase name so that variants
-- compare by length. With repetitions, each bar is the median of the repetitions' figures.
-- A phase whose OSDs gave no latency of its kind of op gets no chart.
local function time_figures(run)
  local charts, high_of_name = {}, {}
  for _, group in ipairs(cluster_groups(run.phases, has_osd_latency)) do
    local records = group.records
    local reads = sum_of(records, "osd.op_r") > sum_of(records, "osd.op_w")
    local rows, table_rows, osd_rows = {}, {}, 0
    for _, row in ipairs(time_rows(reads)) do
      local value, values = compare.cell_value(records, row.metric)
      if value then
        local n = 0
        for _, v in ipairs(values) do
          if type(v) == "number" then n = n + 1 end
        end
        rows[#rows + 1] = { label = row.label, value = value, color = row.color }
        table_rows[#table_rows + 1] = { figure = row.label, metric = row.metric, value = value, n = n,
          per_repetition = #records > 1 and values_text(values, lat) or nil }
        if row.metric:find("^osd%.") then osd_rows = osd_rows + 1 end
      end
    end
    if osd_rows > 0 then
      for _, row in ipairs(rows) do high_of_name[group.name] = math.max(high_of_name[group.name] or 0, row.value) end
      charts[#charts + 1] = { group = group, rows = rows, table_rows = table_rows, reads = reads }
    end
  end
  local out = {}
  for _, chart in ipairs(charts) do
    local group, records = chart.group, chart.group.records
    local kind = chart.reads and "op_r" or "op_w"
    local scope = osd_table(records[1]).scope
    local ops = compare.cell_value(records, "osd." .. kind)
    local osds = compare.cell_value(records, "osd.osds")
    local title = string.format("%s%s: where the time goes", group.name,
      group.variant ~= "" and (" " .. group.variant) or "")
    if type(scope) ~= "string" then scope = "all client ops on these OSDs during the phase" end
    local caption = { string.format("OSD latencies are averages over all client ops on the OSDs during the phase " ..
      "(scope: %s), weighted by ops", scope) }
    if ops then
      caption[1] = caption[1] .. string.format(": %s %s ops on %s OSDs%s", scale.count(ops), kind,
        scale.number(osds or 0), #records > 1 and string.format(" (medians of %d repetitions)", #records) or "")
    end
    caption[1] = caption[1] .. "."
    if not chart.reads and compare.cell_value(records, "osd.subop_w_latency") == nil then
      caption[#caption + 1] = "No sub-op bar: the OSDs counted no replication sub-ops (a pool of size 1, or an " ..
        "erasure-coded pool, whose shard writes Ceph does not count as sub-ops)."
    end
    local columns = { { key = "figure", title = "figure" }, { key = "metric", title = "in results" },
      { key = "n", title = "n" }, { key = "value", title = #records > 1 and "median" or "value", format = lat } }
    if #records > 1 then
      columns[#columns + 1] = { key = "per_repetition", title = "per repetition", nowrap = true }
    end
    local chart_svg = svg.hbars { title = title, rows = chart.rows,
      note = #records > 1 and string.format("Medians of %d repetitions.", #records) or nil,
      x = { title = "latency (linear, from 0)", format = lat, high = high_of_name[group.name] } }
    out[#out + 1] = figure(chart_svg .. '\n<p class="caption">' .. escape(table.concat(caption, " ")) .. "</p>",
      { { title = title, rows = chart.table_rows, columns = columns } })
  end
  return out
end

local time_intro = "The client's average latency against the OSDs' average latencies over the same phase, " ..
  "as bars from 0 on one time axis, shared by the charts of one phase name so that variants compare by length. " ..
  "The bars overlap rather than add up: the OSDs' op latency (from receiving a client op to replying) falls " ..
  "within the client's, its process part (after the op left the OSD's queue) within that, and a replica's " ..
  "sub-op and bluestore's commit and kv sync latencies within the process part. With repetitions, each bar " ..
  "is the median of the repetitions' figures."

local cpu_intro = "User + system CPU over the phase, per client op: the client is this cephmark process " ..
  "(librados' threads included); the OSDs are all ceph-osd processes, so the work of a pool's replicas or " ..
  "shards counts in each client op; mon, mgr and rgw are those daemons, when found on this host. " ..
  "Bars per variant, at the median of the repetitions, with their 95 % interval as whiskers when there are two or more."

-- The CPU figures drawn per op (cluster.cpu, docs/cpu.md): the client's, the OSDs' (all
-- ceph-osd processes, the replicas' work included) and the other daemons' when found.
local cpu_categories = {
  { metric = "cpu.client_per_op", name = "client" },
  { metric = "cpu.osd_per_op", name = "OSDs" },
  { metric = "cpu.kinds.ceph-mon.per_op", name = "mon" },
  { metric = "cpu.kinds.ceph-mgr.per_op", name = "mgr" },
  { metric = "cpu.kinds.radosgw.per_op", name = "rgw" },
}

-- Phases on a cluster's target only (cpu.scope: the daemons were looked for), as the phase's
-- `cpu/op` line: the client's CPU on the null target, a disk or a socket is no cluster's side.
local function has_cpu(phase)
  local cpu = phase.cluster.cpu
  return type(cpu) == "table" and type(cpu.scope) == "string" and num(cpu.client_per_op) ~= nil
end

-- One chart per phase name: bars of CPU per op for each variant (the client, the OSDs, and
-- mon, mgr, rgw when found), at the median of the repetitions with the 95 % interval of
-- compare's statistics as whiskers when there are two or more.
local function cpu_figures(run)
  local names, by_name = {}, {}
  for _, group in ipairs(cluster_groups(run.phases, has_cpu)) do
    add_to_group(by_name, names, group.name, group)
  end
  local out = {}
  for _, name in ipairs(names) do
    local groups = by_name[name]
    local categories, bar_groups, table_rows = {}, {}, {}
    local repeated, drew_interval = false, false
    for g, group in ipairs(groups) do
      bar_groups[g] = { name = group.variant ~= "" and group.variant or name, values = {}, intervals = {} }
      if #group.records > 1 then repeated = true end
    end
    for _, category in ipairs(cpu_categories) do
      local present = false
      for _, group in ipairs(groups) do
        if compare.cell_value(group.records, category.metric) then present = true end
      end
      if present then
        categories[#categories + 1] = category.name
        local c = #categories
        for g, group in ipairs(groups) do
          local entry = compare.row_stats(group.records, category.metric)
          if num(entry.median) then
            bar_groups[g].values[c] = entry.median
            local interval
            if (entry.n or 0) >= 2 and num(entry.ci_low) and num(entry.ci_high) then
              interval = { entry.ci_low, entry.ci_high }
              bar_groups[g].intervals[c] = interval
              drew_interval = true
            end
            -- in µs, with the digits the interval supports, as in the comparisons' tables
            local text = compare.format_interval(category.metric, { median = entry.median,
              ci_low = interval and interval[1], ci_high = interval and interval[2] })
            local median_text, bracket = text:match("^(%S+) (%[.*%])$")
            table_rows[#table_rows + 1] = { variant = bar_groups[g].name, who = category.name, metric = category.metric,
              n = entry.n, median = median_text or text,
              interval = bracket or (entry.n == 1 and "none: one run" or "none"),
              per_repetition = entry.n > 1 and values_text(entry.values, lat) or nil }
          end
        end
      end
    end
    if #table_rows > 0 then
      local title = string.format("%s: CPU per op by variant", name)
      local note
      if repeated then
        note = drew_interval and "Bars: medians of the repetitions; whiskers: 95 % intervals." or
          "Bars: medians of the repetitions; no interval known."
      else
        note = "One run each: no interval is known, so no whiskers."
      end
      local caption = string.format("Daemons' scope: %s.", groups[1].records[1].cluster.cpu.scope)
      if categories[#categories] == "client" then
        caption = caption .. " No daemon of this cluster was found on this host, so only the client is drawn."
      end
      local columns = { { key = "variant", title = "variant" }, { key = "who", title = "CPU of" },
        { key = "metric", title = "in results" }, { key = "n", title = "n" },
        { key = "median", title = (repeated and "median" or "value") .. " (µs)", nowrap = true },
        { key = "interval", title = "95 % interval (µs)", nowrap = true } }
      if repeated then
        columns[#columns + 1] = { key = "per_repetition", title = "per repetition", nowrap = true }
      end
      local chart_svg = svg.bars { title = title, categories = categories, groups = bar_groups, note = note,
        value_labels = true, y = { title = "CPU seconds per op", format = lat } }
      out[#out + 1] = figure(chart_svg .. '\n<p class="caption">' .. escape(caption) .. "</p>",
        { { title = title, rows = table_rows, columns = columns } })
    end
  end
  return out
end

-- The cluster's side of a run's phases: the "where the time goes" and CPU per op sections,
-- each only when some phase has its figures (telemetry off, or no cluster: nothing).
local function cluster_sections(run)
  local out = {}
  for _, part in ipairs { { "Where the time goes", time_figures(run), time_intro },
    { "CPU per op", cpu_figures(run), cpu_intro } } do
    if #part[2] > 0 then
      out[#out + 1] = string.format('<h3>%s</h3><p class="intro">%s</p><div class="grid">', part[1], escape(part[3]))
      for _, f in ipairs(part[2]) do out[#out + 1] = f end
      out[#out + 1] = "</div>"
    end
  end
  return out
end

-- ---------------------------------------------------------------- runs

local function facts(run)
  local doc = run.doc
  local list = {}
  local function add(name, value)
    if value ~= nil and value ~= "" then list[#list + 1] = { name, value } end
  end
  add("results folder", run.dir)
  add("command", doc.command)
  add("scenario", doc.scenario and doc.scenario.script)
  add("status", doc.status)
  if doc.complete == false then add("complete", "no (the run stopped early; what it finished is shown)") end
  add("started", doc.started_at)
  add("finished", doc.finished_at)
  add("client host", doc.host)
  local cluster = type(doc.cluster) == "table" and doc.cluster or {}
  add("ceph", cluster.version)
  add("fsid", cluster.fsid)
  if cluster.osds_up then add("OSDs up / in", string.format("%s / %s", cluster.osds_up, cluster.osds_in)) end
  if type(doc.software) == "table" then
    add("software", string.format("%s, librados %s", doc.software.lua or "?", doc.software.librados or "?"))
  end
  add("pool", doc.pool)
  return key_value_table("Run and cluster", list)
end

local function params_table(doc)
  if type(doc.params_text) ~= "table" then return nil end
  local names = {}
  for name in pairs(doc.params_text) do names[#names + 1] = name end
  table.sort(names)
  local t = { title = "Params", columns = { { key = "name", title = "param" }, { key = "value", title = "value" },
    { key = "source", title = "from" } }, rows = {} }
  for _, name in ipairs(names) do
    t.rows[#t.rows + 1] = { name = name, value = doc.params_text[name],
      source = type(doc.params_source) == "table" and doc.params_source[name] or nil }
  end
  return t
end

local function pools_table(doc)
  if not is_array(doc.pools) or #doc.pools == 0 then return nil end
  local t = { title = "Pools", columns = { { key = "label", title = "pool" }, { key = "name", title = "name" },
    { key = "layout", title = "layout" }, { key = "pg_num", title = "pg_num" },
    { key = "created", title = "created by the run" } }, rows = {} }
  for _, pool in ipairs(doc.pools) do
    local spec = type(pool.spec) == "table" and pool.spec or {}
    local layout = spec.type == "erasure" and string.format("erasure k=%s m=%s", spec.k or "?", spec.m or "?") or
      (spec.type and string.format("%s size=%s", spec.type, spec.size or "?")) or ""
    t.rows[#t.rows + 1] = { label = pool.label, name = pool.name, layout = layout,
      pg_num = type(pool.info) == "table" and pool.info.pg_num or nil, created = pool.created }
  end
  return t
end

-- Space per pool (docs/space.md): after each write phase, one row per pool of the run, and
-- the run's end; "unknown" with its reason where no figures could be read (no mgr).
M.space_columns = {
  { key = "phase", title = "phase" }, { key = "pool", title = "pool" },
  { key = "stored", title = "stored", format = scale.size }, { key = "raw_used", title = "raw used", format = scale.size },
  { key = "objects", title = "objects", format = scale.count },
  { key = "raw_per_stored", title = "raw / stored", format = function(v) return string.format("%.2fx", v) end },
  { key = "raw_per_written", title = "raw / written", format = function(v) return string.format("%.2fx", v) end },
  { key = "percent_used", title = "% used", format = function(v) return string.format("%.2f %%", v * 100) end },
  { key = "fresh", title = "figures" },
}

local raw_from_words = { ["cluster change"] = "; raw/stored from the cluster's raw change over the phase",
  ["an earlier phase's cluster change"] = "; raw/stored from the cluster's raw change at its last write" }

local function space_rows(rows, title, space)
  if type(space) ~= "table" then return end
  if space.status ~= "measured" then
    rows[#rows + 1] = { phase = title, fresh = "unknown: " .. tostring(space.reason) }
    return
  end
  local fresh = space.settled and string.format("settled in %.1f s", num(space.waited) or 0) or
    string.format("not settled after %.1f s", num(space.waited) or 0)
  for _, pool in ipairs(is_array(space.pools) and space.pools or {}) do
    if type(pool) == "table" then
      local raw = num(pool.raw_used)
      rows[#rows + 1] = { phase = title, pool = pool.label or pool.name, stored = num(pool.stored), raw_used = raw,
        objects = num(pool.objects), raw_per_stored = num(pool.raw_per_stored),
        raw_per_written = num(pool.raw_per_written), percent_used = num(pool.percent_used),
        fresh = pool.status == "measured" and fresh .. (raw_from_words[pool.raw_from] or "") or
          ("unknown: " .. tostring(pool.reason)) }
    end
  end
end

local function space_table(run)
  local rows = {}
  for _, phase in ipairs(run.phases) do
    if type(phase.cluster) == "table" then space_rows(rows, phase_title(phase), phase.cluster.space) end
  end
  if type(run.doc.cluster) == "table" then space_rows(rows, "end of the run", run.doc.cluster.space) end
  if #rows == 0 then return nil end
  return table_html({ title = "Space per pool", columns = M.space_columns, rows = rows }, true)
end

-- The phases that mixed kinds of op: one row per phase and kind (result.by_op), as
-- operations.csv, with each kind's share of the phase's ops; nil when no phase mixed.
local function operations_table(run)
  local rows = require("cephmark.results").operations_rows(run.phases)
  if #rows == 0 then return nil end
  local totals = {}
  for _, phase in ipairs(run.phases) do totals[phase.index or 0] = num(phase.result and phase.result.ops) end
  for _, row in ipairs(rows) do
    local total = totals[row.phase_index or 0]
    if total and total > 0 and num(row.ops) then row.share = 100 * row.ops / total end
  end
  return table_html({ title = "Operations of the phases that mixed them", rows = rows, columns = {
    { key = "phase_index", title = "#" }, { key = "phase", title = "phase" }, { key = "label", title = "label" },
    { key = "op", title = "op" }, { key = "ops", title = "ops" },
    { key = "share", title = "% of ops", format = scale.number },
    { key = "iops", title = "IOPS", format = scale.count },
    { key = "bandwidth_mib_s", title = "MiB/s", format = scale.number },
    { key = "lat_p50", title = "p50", format = lat }, { key = "lat_p99", title = "p99", format = lat },
    { key = "lat_max", title = "max", format = lat }, { key = "errors", title = "errors (phase)" } } }, true)
end

local function run_section(run, number, many)
  local out = {}
  local title = run.title .. (many and string.format(" (run %d)", number) or "")
  out[#out + 1] = string.format('<section class="run" id="run-%d"><h2>%s</h2>', number, escape(title))
  if run.description then out[#out + 1] = "<p>" .. escape(run.description) .. "</p>" end
  out[#out + 1] = '<div class="facts">'
  out[#out + 1] = table_html(facts(run), true)
  local params = params_table(run.doc)
  if params then out[#out + 1] = table_html(params, true) end
  local pools = pools_table(run.doc)
  if pools then out[#out + 1] = table_html(pools, true) end
  out[#out + 1] = "</div>"

  local rows = {}
  for _, phase in ipairs(run.phases) do rows[#rows + 1] = phase_row(phase) end
  out[#out + 1] = "<h3>Phases</h3>"
  out[#out + 1] = table_html({ title = "Phase summary", columns = M.phase_columns, rows = rows }, true)
  local operations = operations_table(run)
  if operations then out[#out + 1] = "<h3>Operations</h3>" .. operations end
  local space = space_table(run)
  if space then out[#out + 1] = "<h3>Space</h3>" .. space end

  for c, comparison in ipairs(run.comparisons) do
    out[#out + 1] = string.format("<h3>Comparison by %s</h3><div class=\"grid\">", escape(comparison.by or "variant"))
    for _, f in ipairs(comparison_figures(run, comparison, string.format("run%d-comparison%d", number, c))) do
      out[#out + 1] = f
    end
    out[#out + 1] = "</div>"
  end
  for _, sweep in ipairs(run.sweeps) do
    local figures = sweep_figures(run, sweep)
    if #figures > 0 then
      out[#out + 1] = string.format("<h3>Sweep over %s</h3><div class=\"grid\">",
        escape(table.concat(sweep.dimensions, " × ")))
      for _, f in ipairs(figures) do out[#out + 1] = f end
      out[#out + 1] = "</div>"
    end
  end

  for _, part in ipairs(cluster_sections(run)) do out[#out + 1] = part end

  local by_op, order = percentile_curves(run.phases, function(phase)
    return string.format("[%d] %s", phase.index or 0, phase.label ~= "" and phase.label or phase.name)
  end)
  if #order > 0 then
    out[#out + 1] = '<h3>Latency percentiles</h3><div class="grid">'
    for _, op in ipairs(order) do
      out[#out + 1] = percentile_figure(op .. ": latency by percentile", by_op[op])
    end
    out[#out + 1] = "</div>"
  end

  local agent_figures = {}
  for _, phase in ipairs(run.phases) do
    if measured(phase) then agent_figures[#agent_figures + 1] = agents_figure(phase) end
  end
  if #agent_figures > 0 then
    out[#out + 1] = '<h3>Agents and hosts</h3><div class="grid">' .. table.concat(agent_figures, "\n") .. "</div>"
  end

  local endpoint_figures = {}
  for _, phase in ipairs(run.phases) do
    if measured(phase) then
      for _, f in ipairs(endpoints_figures(phase) or {}) do endpoint_figures[#endpoint_figures + 1] = f end
    end
  end
  if #endpoint_figures > 0 then
    out[#out + 1] = '<h3>Endpoints</h3><div class="grid">' .. table.concat(endpoint_figures, "\n") .. "</div>"
  end

  out[#out + 1] = '<h3>Timelines</h3><div class="grid">'
  for _, phase in ipairs(run.phases) do
    if measured(phase) then
      local figures = timeline_figures(phase)
      if figures then out[#out + 1] = figures end
    end
  end
  out[#out + 1] = "</div></section>"
  return table.concat(out, "\n")
end

-- Runs side by side: the same (phase, variant) in each run, with change vs the first run.
local function across_runs(runs)
  local keys, key_index, cells = {}, {}, {}
  for r, run in ipairs(runs) do
    for _, phase in ipairs(run.phases) do
      if measured(phase) then
        local key = phase.name .. (phase.label and phase.label ~= "" and (" " .. phase.label) or "")
        if not key_index[key] then
          keys[#keys + 1] = key
          key_index[key] = #keys
        end
        cells[key] = cells[key] or {}
        cells[key][r] = cells[key][r] or phase -- the first phase of that name in the run
      end
    end
  end
  local shared = {}
  for _, key in ipairs(keys) do
    local count = 0
    for r = 1, #runs do
      if cells[key][r] then count = count + 1 end
    end
    if count > 1 then shared[#shared + 1] = key end
  end
  keys = shared
  if #keys == 0 then
    return '<section class="run" id="across"><h2>Across runs</h2><p>No phase (by name and variant) appears in more than one of these runs, so there is nothing to set side by side; each run is shown below.</p></section>'
  end
  local out = { '<section class="run" id="across"><h2>Across runs</h2>',
    "<p>Each measured phase, matched by phase name and variant across the runs; changes are relative to run 1.</p>",
    '<div class="grid">' }
  for _, metric in ipairs { { "bandwidth_mib", "bandwidth_stddev", "MiB/s", scale.number },
    { "iops", "iops_stddev", "IOPS", scale.count } } do
    local groups, rows = {}, {}
    for r, run in ipairs(runs) do
      groups[r] = { name = string.format("run %d: %s", r, run.dir or run.title), values = {}, errors = {} }
    end
    local any = false
    for k, key in ipairs(keys) do
      local base
      for r = 1, #runs do
        local phase = cells[key][r]
        local value = phase and num(phase.result[metric[1]])
        if value then
          any = true
          groups[r].values[k] = value
          groups[r].errors[k] = num(phase.result[metric[2]])
          if r == 1 then base = value end
          rows[#rows + 1] = { phase = key, run = r, value = value, stddev = num(phase.result[metric[2]]),
            change = base and base ~= 0 and r > 1 and (value / base - 1) * 100 or nil }
        end
      end
    end
    if any then
      local title = metric[3] .. " across runs"
      out[#out + 1] = figure(svg.bars { title = title, categories = keys, groups = groups,
        note = "Whiskers: ± per-second stddev within each phase, not an uncertainty of the figure.",
        y = { title = metric[3], format = metric[4] }, width = math.max(600, 110 * #keys) },
        { { title = title, rows = rows, columns = { { key = "phase", title = "phase" }, { key = "run", title = "run" },
          { key = "value", title = metric[3], format = metric[4] },
          { key = "stddev", title = "per-second stddev", format = metric[4] },
          { key = "change", title = "vs run 1 %" } } } })
    end
  end
  -- percentile curves of the same phase across runs
  for _, key in ipairs(keys) do
    local curves = {}
    for r = 1, #runs do
      local phase = cells[key][r]
      local l = phase and phase.result.lat
      if type(l) == "table" and is_array(l.percentiles) and #l.percentiles > 0 then
        curves[#curves + 1] = { name = "run " .. r, percentiles = l.percentiles }
      end
    end
    if #curves > 1 then
      out[#out + 1] = percentile_figure(key .. ": latency by percentile, by run", curves)
    end
  end
  out[#out + 1] = "</div></section>"
  return table.concat(out, "\n")
end

local css = [[
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{background:#1d2430;color:#fff;padding:16px 28px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#c9d1dc}nav{padding:8px 28px;background:#e9edf2}nav a{margin-right:14px}
main{padding:12px 28px}section.run{background:#fff;border:1px solid #dde3ea;border-radius:6px;padding:12px 20px;margin:16px 0}
h2{margin:4px 0 8px;font-size:19px}h3{margin:18px 0 6px;font-size:16px;border-bottom:1px solid #e4e8ee}
.grid{display:flex;flex-wrap:wrap;gap:14px}.facts{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}
figure.chart-box{margin:0;flex:1 1 540px;max-width:640px;overflow-x:auto}svg.chart{max-width:100%;height:auto;background:#fff}
svg .grid{stroke:#e6e9ee;stroke-width:1}svg .axis{stroke:#5b6675;stroke-width:1}
svg text{font:11px system-ui,sans-serif;fill:#3b4552}svg .chart-title{font-size:13px;font-weight:600;fill:#1d2430}
svg .axis-title{font-size:11px;fill:#5b6675}svg .chart-note{font-size:11px;fill:#1d2430}svg .error-bar{stroke:#1d2430;stroke-width:1.2;fill:none}
details.data{margin:4px 0 10px}details.data summary{cursor:pointer;color:#3a5f8f;font-size:12px}
table{border-collapse:collapse;font-size:12px;margin-top:4px}th,td{border:1px solid #dde3ea;padding:2px 7px;text-align:left}
th{background:#eef1f5}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
footer{padding:10px 28px 30px;color:#6b7685;font-size:12px}
p.caption{margin:2px 0 6px;font-size:12px;color:#3b4552}p.intro{margin:4px 0 8px;max-width:1100px}
svg .value{font-size:11px;fill:#1d2430}svg .row-label{fill:#1d2430}
]]

-- build(runs, options) -> the HTML text; runs come from normalize().
function M.build(runs, options)
  options = options or {}
  local many = #runs > 1
  local out = { "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>" .. escape(options.title or "cephmark report") .. "</title>",
    "<style>" .. css .. "</style></head><body>" }
  local subtitle = {}
  for i, run in ipairs(runs) do
    subtitle[#subtitle + 1] = string.format("%s%s", many and ("run " .. i .. ": ") or "", run.dir or run.title)
  end
  out[#out + 1] = string.format("<header><h1>%s</h1><p>%s</p></header>", escape(options.title or "cephmark report"),
    escape(table.concat(subtitle, " · ")))
  if many then
    local links = {}
    for i, run in ipairs(runs) do links[#links + 1] = string.format('<a href="#run-%d">run %d: %s</a>', i, i, escape(run.title)) end
    links[#links + 1] = '<a href="#across">across runs</a>'
    out[#out + 1] = "<nav>" .. table.concat(links) .. "</nav>"
  end
  out[#out + 1] = "<main>"
  if many then out[#out + 1] = across_runs(runs) end
  for i, run in ipairs(runs) do out[#out + 1] = run_section(run, i, many) end
  out[#out + 1] = "</main>"
  out[#out + 1] = string.format("<footer>Made by cephmark%s. Latency axes are logarithmic, except the linear time axes of where the time goes; MiB/s is 2^20 bytes per second (rados bench's \"MB/s\").</footer>",
    options.version and (" " .. escape(options.version)) or "")
  out[#out + 1] = "</body></html>\n"
  return table.concat(out, "\n")
end

return M
