-- The HTML report built from results documents (stdlib/cephmark/report/html.lua): which
-- charts appear for a variant comparison, a sweep and a drop-in command's result, that each
-- chart carries data points, that several runs get an across-runs section, that text from
-- the results is escaped, and that the page fetches nothing. With repetitions: whiskers
-- that are the 95 % intervals, the per-second stddev labelled as such, none for one run,
-- and the marks of the best variant, those as good within noise and those not told apart
-- from the baseline.
local html = require "cephmark.report.html"
local results = require "cephmark.results"
local t = require "cephmark.test"
local pages = require "report_pages"

local count = pages.count

local function series(n, mib, lat)
  local out = {}
  for i = 1, n do
    out[i] = { sec = i, cur_ops = 16, in_flight_mean = 15.5 + i / 10, ops = 100 + i, cur_mib = mib + i, iops = 100 + i, avg_lat = lat,
      p99 = lat * 3, max_lat = lat * 5, errors = 0, warmup = false, partial = false }
  end
  return out
end

local function percentiles(base)
  local out = {}
  for i, p in ipairs { 1, 50, 90, 99, 99.9, 99.99 } do out[i] = { p = p, value = base * i } end
  return out
end

local function phase(index, name, label, mib, lat, variant, point)
  return { index = index, name = name, op = name, label = label, status = "ok", variant = variant, point = point,
    result = { ops = 1000, bytes = 4096 * 1000, elapsed = 3, threads = 16, bandwidth_mib = mib, bandwidth_stddev = mib / 10,
      iops = mib * 256, iops_stddev = mib * 25, errors = 0, verify_failures = 0,
      lat = { avg = lat, p50 = lat, p90 = lat * 2, p99 = lat * 3, p99_9 = lat * 4, p99_99 = lat * 5, max = lat * 6,
        percentiles = percentiles(lat) } },
    series = series(3, mib, lat) }
end

-- every chart has a positive data-points count, and as many polylines or bars as it says
local function charts_have_data(text, what)
  local charts, empty = 0, 0
  for points in text:gmatch('<svg class="chart" data%-kind="%a+" data%-points="(%d+)"') do
    charts = charts + 1
    if tonumber(points) == 0 then empty = empty + 1 end
  end
  t.ok(charts > 0, what .. ": has charts")
  t.eq(empty, 0, what .. ": charts without data points")
  return charts
end

-- A scenario comparing two pools, with a hostile label.
local comparison_doc = {
  scenario = { name = "ec-vs-replica", description = "replicated vs <b>EC</b>" },
  status = "ok", complete = true, host = "client-1", started_at = "2026-12-01T00:00:00Z",
  cluster = { fsid = "f00", version = "ceph version 16.2.15", osds_up = 3, osds_in = 3 },
  params_text = { seconds = "3s", threads = "16" }, params_source = { seconds = "-p", threads = "default" },
  pools = { { label = "replica", name = "p-r", spec = { type = "replicated", size = 3 }, created = true },
    { label = "ec", name = "p-e", spec = { type = "erasure", k = 2, m = 1 }, created = true } },
  phases = {
    phase(1, "write", "replica", 100, 0.004, { pool = "replica" }),
    phase(2, "seq", "replica", 400, 0.001, { pool = "replica" }),
    phase(3, "write", "<script>alert(1)</script>", 150, 0.003, { pool = "ec" }),
    phase(4, "seq", "<script>alert(1)</script>", 300, 0.002, { pool = "ec" }),
    { index = 5, name = "cleanup", op = "cleanup", label = "replica", status = "ok", result = { ops = 1000 },
      series = {} },
  },
  comparisons = { { by = "pool", baseline = "replica", metrics = { "bandwidth_mib", "iops", "lat.p99" },
    rows = {
      { phase = "write", phase_index = 1, variant = "replica", baseline = true, relative = {},
        values = { bandwidth_mib = 100, iops = 25600, ["lat.p99"] = 0.012 } },
      { phase = "write", phase_index = 3, variant = "ec", baseline = false, relative = { bandwidth_mib = 50 },
        values = { bandwidth_mib = 150, iops = 38400, ["lat.p99"] = 0.009 } },
      { phase = "seq", phase_index = 2, variant = "replica", baseline = true, relative = {},
        values = { bandwidth_mib = 400, iops = 102400, ["lat.p99"] = 0.003 } },
      { phase = "seq", phase_index = 4, variant = "ec", baseline = false, relative = { bandwidth_mib = -25 },
        values = { bandwidth_mib = 300, iops = 76800, ["lat.p99"] = 0.006 } },
    } } },
  sweeps = {},
}

local run = assert(html.normalize(comparison_doc, "results/ec-vs-replica-1"))
local page = html.build({ run }, { title = "test report" })
t.match(page, "^<!DOCTYPE html>", "a full page")
-- 3 comparison bar charts + 2 percentile charts (write, seq) + 4 phases x 2 timelines
t.eq(charts_have_data(page, "comparison"), 13, "charts of a two-pool comparison")
t.eq(count(page, 'data%-kind="bar"'), 3, "one bar chart per compared metric")
t.eq(count(page, '<rect class="bar"'), 12, "2 phases x 2 pools x 3 metrics bars")
t.eq(count(page, 'class="error%-bar"'), 8, "stddev whiskers on the MiB/s and IOPS bars")
t.ok(page:find("<script", 1, true) == nil, "no script element, not even from a label")
t.match(page, "&lt;script&gt;alert%(1%)&lt;/script&gt;", "labels are escaped")
-- a phase that mixed kinds of op gets a row per kind in the Operations table; others none
t.eq(count(page, "<h3>Operations</h3>"), 0, "no Operations section without a mixed phase")
local mixed_doc = { scenario = { name = "mixed" }, status = "ok", complete = true, phases = {
  { index = 1, name = "mixed", op = "mixed", label = "", status = "ok",
    result = { ops = 1000, bytes = 700 * 4096, elapsed = 2, iops = 500, errors = 0,
      lat = { avg = 0.002, p50 = 0.002, p99 = 0.004, max = 0.01, percentiles = percentiles(0.002) },
      by_op = {
        read = { ops = 600, bytes = 600 * 4096, errors = 0, iops = 300, bandwidth_mib_s = 1.17,
          latency = { p50 = 0.0015, p99 = 0.003, max = 0.008 } },
        write = { ops = 300, bytes = 100 * 4096, errors = 0, iops = 150, bandwidth_mib_s = 0.2,
          latency = { p50 = 0.003, p99 = 0.006, max = 0.01 } },
        stat = { ops = 100, bytes = 0, errors = 0, iops = 50, bandwidth_mib_s = 0,
          latency = { p50 = 0.001, p99 = 0.002, max = 0.003 } } } },
    series = series(2, 1, 0.002) } } }
local mixed_page = html.build({ assert(html.normalize(mixed_doc, "results/mixed-1")) })
t.eq(count(mixed_page, "<h3>Operations</h3>"), 1, "an Operations section for the mixed phase")
local operations = mixed_page:match("Operations of the phases that mixed them.-</table>")
t.eq(count(operations or "", "<tr><td"), 3, "one row per kind")
t.match(operations or "", "<td>read</td><td class=\"n\">600</td><td class=\"n\">60</td>", "read first, with its share of the ops")
t.match(operations or "", "<td>stat</td>", "and the stats")
-- the per-second table shows the achieved ops in flight against the requested depth
t.eq(count(page, "<th>in flight, mean %(of 16%)</th>"), 4, "one mean-in-flight column per timeline table")
t.match(page, '<td class="n">15%.8</td>', "the third second's time-weighted mean in flight")
t.match(page, "replicated vs &lt;b&gt;EC&lt;/b&gt;", "description escaped")
t.ok(page:find("src=", 1, true) == nil and page:find('href="http', 1, true) == nil, "nothing fetched")
t.match(page, "ceph version 16%.2%.15", "cluster facts at the top")
t.match(page, "<td>seconds</td><td>3s</td><td>%-p</td>", "params with their source")
t.match(page, "erasure k=2 m=1", "pool layout")
t.match(page, "p99 latency by pool", "latency metric titled")
t.ok(page:find("Across runs", 1, true) == nil, "no across-runs section for one run")
t.ok(page:find("cleanup: latency", 1, true) == nil, "cleanup has no percentile chart")

-- the CSV tables behind the charts
local rows = html.percentile_rows(run.phases)
t.eq(#rows, 24, "6 percentiles x 4 measured phases")
local csv = results.percentiles_csv(run.phases)
t.match(csv, "^phase_index,phase,label,percentile,latency\n1,write,replica,1,0%.004\n", "percentiles.csv")
t.match(csv, "\n3,write,<script>alert%(1%)</script>,99%.9,0%.015\n", "labels kept verbatim in CSV")

-- A sweep over block size x threads: each metric against each dimension.
local sweep_doc = { scenario = { name = "sweep-t-b" }, status = "ok", phases = {}, comparisons = {},
  sweeps = { { dimensions = { "block_size", "threads" }, mode = "product", points = {} } } }
local index = 0
for _, bs in ipairs { "4K", "64K", "4M" } do
  for _, threads in ipairs { "1", "16" } do
    index = index + 1
    local label = "block_size=" .. bs .. " threads=" .. threads
    table.insert(sweep_doc.sweeps[1].points, { index = index, label = label,
      coordinates = { block_size = bs, threads = threads } })
    sweep_doc.phases[#sweep_doc.phases + 1] = phase(index, "write", "bench " .. label, 10 * index, 0.001 * index,
      { pool = "bench", block_size = bs, threads = threads }, label)
  end
end
local sweep_page = pages.page(sweep_doc, "results/sweep")
-- 2 dimensions x 3 metrics sweep charts + 1 percentile chart + 6 phases x 2 timelines
t.eq(charts_have_data(sweep_page, "sweep"), 19, "charts of a 3 x 2 sweep")
t.match(sweep_page, "write: MiB/s vs block_size", "metric vs block size")
t.match(sweep_page, "write: p99 latency vs threads", "metric vs threads")
t.match(sweep_page, '>4K</text>.*>64K</text>.*>4M</text>', "size axis labelled 4K, 64K, 4M")
t.match(sweep_page, ">threads=1</text>", "one line per thread count")
t.match(sweep_page, ">block_size=64K</text>", "one line per block size")

-- Two runs of the same scenario: the across-runs section matches their phases.
local second = assert(html.normalize(comparison_doc, "results/ec-vs-replica-2"))
local both = html.build({ run, second })
t.match(both, '<section class="run" id="across">', "across-runs section")
t.match(both, "MiB/s across runs", "bandwidth across runs")
t.match(both, "Whiskers: ± per%-second stddev within each phase, not an uncertainty", "across runs: whiskers labelled")
t.match(both, "write replica: latency by percentile, by run", "percentiles across runs")
t.match(both, 'href="#run%-2"', "navigation to each run")

-- A drop-in command's folder (rados-bench -o): one result with its series inside.
local bench_doc = { command = "rados-bench", pool = "rbd", mode = "write",
  result = { op = "write", ops = 500, bytes = 2048000, elapsed = 2, bandwidth_mib = 1, iops = 250,
    lat = { avg = 0.004, percentiles = percentiles(0.001) }, series = series(2, 1, 0.004) } }
local bench_run = assert(html.normalize(bench_doc, "results/rb"))
t.eq(#bench_run.phases, 1, "one phase")
t.eq(bench_run.phases[1].result.series, nil, "the series moves out of the result")
t.eq(#bench_run.phases[1].series, 2, "into the phase")
t.eq(charts_have_data(html.build({ bench_run }), "rados-bench"), 3, "percentiles + 2 timelines")

local nothing, why = html.normalize({ hello = 1 }, "x")
t.eq(nothing, nil, "a document without phases or result is refused")
t.eq(why, "it holds neither phases nor a result", "with a reason")

-- ---------------------------------------------------------------- repetitions

local json = require "cephmark.json"

-- A comparison row as compare.build writes it: stats per metric, values per repetition.
local function stats_entry(median, low, high, n, extra)
  local values = json.array()
  for i = 1, n do values[i] = median end
  local entry = { n = n, median = median, ci_low = low, ci_high = high, values = values }
  for k, v in pairs(extra or {}) do entry[k] = v end
  return entry
end

local function repeated_doc(n)
  local doc = { scenario = { name = "null-delays" }, status = "ok", complete = true, phases = {}, sweeps = {} }
  for i = 1, 3 * n do
    local variant = ({ "a", "b", "c" })[(i - 1) // n + 1]
    local p = phase(i, "write", variant, 100, 0.001, { point = variant })
    p.repetition = (i - 1) % n + 1
    doc.phases[i] = p
  end
  local one = n == 1
  local function ci(median, half) return not one and median - half or nil, not one and median + half or nil end
  local a_low, a_high = ci(100, 10)
  local b_low, b_high = ci(140, 5)
  local c_low, c_high = ci(136, 20)
  local rows = json.array()
  rows[1] = { phase = "write", phase_index = 1, variant = "a", baseline = true, relative = {}, n = n,
    values = { bandwidth_mib = 100 }, stats = { bandwidth_mib = stats_entry(100, a_low, a_high, n) } }
  rows[2] = { phase = "write", phase_index = n + 1, variant = "b", baseline = false, n = n,
    relative = { bandwidth_mib = 40 }, values = { bandwidth_mib = 140 },
    stats = { bandwidth_mib = stats_entry(140, b_low, b_high, n, { change = 40, change_ci_low = not one and 31.2 or nil,
      change_ci_high = not one and 49.6 or nil, mde = not one and 8.31 or nil, paired = true,
      direction = one and "unknown" or "up", verdict = one and "one run each: uncertainty unknown" or "faster",
      formatted = one and "+40 % [-, -]" or "+40 % [+31, +50]" }) } }
  rows[3] = { phase = "write", phase_index = 2 * n + 1, variant = "c", baseline = false, n = n,
    relative = { bandwidth_mib = 36 }, values = { bandwidth_mib = 136 },
    stats = { bandwidth_mib = stats_entry(136, c_low, c_high, n, { change = 36, change_ci_low = not one and -1.5 or nil,
      change_ci_high = not one and 77 or nil, mde = not one and 42 or nil, paired = true,
      direction = one and "unknown" or "none",
      verdict = one and "one run each: uncertainty unknown" or "no difference detectable (±39 %)",
      formatted = one and "+36 % [-, -]" or "+36 % [-2, +77]" }) } }
  local as_good = json.array()
  if not one then as_good[1] = "c" end
  doc.comparisons = { { by = "point", baseline = "a", metrics = { "bandwidth_mib" }, phases = { "write" },
    repetitions = n, rows = rows,
    best = { { phase = "write", metric = "bandwidth_mib", best = "b", as_good = as_good, n = n } } } }
  return doc
end

-- the one bar chart of a page, and its bars and whiskers in drawing order
local function bar_chart(text)
  local chart = text:match('<svg class="chart" data%-kind="bar".-</svg>')
  assert(chart, "a bar chart")
  local bars, whiskers = {}, {}
  for y, height, value in chart:gmatch('<rect class="bar" x="[%d.]+" y="([%d.]+)" width="[%d.]+" height="([%d.]+)" fill="[^"]+" data%-value="([^"]+)"') do
    bars[#bars + 1] = { y = tonumber(y), height = tonumber(height), value = tonumber(value) }
  end
  for low, high, top, bottom in chart:gmatch('<path class="error%-bar interval" data%-low="([^"]+)" data%-high="([^"]+)" d="M[%d.]+ ([%d.]+)V([%d.]+)') do
    whiskers[#whiskers + 1] = { low = tonumber(low), high = tonumber(high), top = tonumber(top),
      bottom = tonumber(bottom) }
  end
  return chart, bars, whiskers
end

local repeated = pages.page(repeated_doc(5), "results/r5")
local chart, bars, whiskers = bar_chart(repeated)
t.eq(#bars, 3, "one bar per variant")
t.eq(#whiskers, 3, "one interval whisker per variant")
t.eq(count(chart, 'class="error%-bar"'), 0, "no per-second stddev whisker beside the intervals")
-- the whiskers are the intervals, on the bars' own scale (linear from 0: px per unit = height / value)
for i, want in ipairs { { 90, 110 }, { 135, 145 }, { 116, 156 } } do
  local bar, whisker = bars[i] or { y = 0, height = 0, value = 1 }, whiskers[i] or {}
  t.eq(whisker.low, want[1], "whisker " .. i .. " low is ci_low")
  t.eq(whisker.high, want[2], "whisker " .. i .. " high is ci_high")
  local bottom, per_unit = bar.y + bar.height, bar.height / bar.value
  t.near(whisker.top or -1, bottom - want[2] * per_unit, 0.2, "whisker " .. i .. " top at ci_high on the axis")
  t.near(whisker.bottom or -1, bottom - want[1] * per_unit, 0.2, "whisker " .. i .. " bottom at ci_low on the axis")
end
t.match(chart, "whiskers: 95 %% intervals", "the figure says what its whiskers are")
t.match(repeated, "<th>per%-second stddev within one run %(its first repetition%)</th>", "stddev column labelled")
t.match(repeated, '<td class="n">10</td>', "the per-second stddev of the first repetition is still in the table")
t.match(repeated, "<th>n</th><th>median %(MiB/s%)</th><th>95 %% interval %(MiB/s%)</th><th>change %[95 %% interval%]</th>" ..
  "<th>verdict</th><th>detectable</th><th>standing</th>", "the table's statistics columns")
t.match(repeated, '<td>b</td><td>no</td><td class="n">5</td><td class="n">140</td><td class="n">%[135, 145%]</td>' ..
  '<td class="n">%+40 %% %[%+31, %+50%]</td><td>faster</td><td class="n">8%.3 %%</td><td>★ best</td>',
  "a row: n, median and interval with the digits the interval supports, change, verdict, detectable, standing")
-- marks: the best (filled star), as good within noise (hollow star), no difference vs the baseline (hatched)
t.eq(count(chart, '<polygon class="mark mark%-best"'), 1, "one best mark")
t.eq(count(chart, '<polygon class="mark mark%-as%-good"'), 1, "one as-good mark")
t.eq(count(chart, '<rect class="hatch"'), 1, "one hatched bar")
t.match(chart, '<polygon class="mark mark%-best"[^>]*><title>b write: best</title>', "the best mark is on b")
t.match(chart, '<polygon class="mark mark%-as%-good"[^>]*><title>c write: as good as the best, within noise</title>',
  "the as-good mark is on c")
t.match(chart, '<rect class="hatch" x="[%d.]+" y="' .. string.format("%.1f", (bars[3] or {}).y or -1), "c's bar is hatched")
t.match(chart, ">best</text>.*>as good as the best, within noise</text>.*>no difference detectable against the baseline</text>",
  "the marks have a key")
t.match(repeated, "<td>☆ as good</td>", "as good in the standing column")
t.match(repeated, "<td>no difference detectable %(±39 %%%)</td>", "the verdict marks the row too")
t.match(repeated, '<td>a</td><td>yes</td><td class="n">5</td><td class="n">100</td><td class="n">%[90, 110%]</td>' ..
  '<td class="n"></td><td></td><td class="n"></td><td>%-</td>', "the baseline: no change, no standing")

-- one repetition: no whiskers, and the figure says that one run gives no interval
local single = pages.page(repeated_doc(1), "results/r1")
local single_chart, single_bars = bar_chart(single)
t.eq(#single_bars, 3, "one run: the bars")
t.eq(count(single_chart, "error%-bar"), 0, "one run: no whiskers at all")
t.match(single_chart, "One run each: no interval is known, so no whiskers", "one run: said plainly")
t.eq(count(single_chart, '<rect class="hatch"'), 0, "one run: nothing is 'no difference detectable'")
t.match(single_chart, ">best of one run each</text>", "one run: the best mark says it is of one run")
t.match(single, '<td class="n">none: one run</td>', "one run: no interval in the table")
t.match(single, "<td>one run each: uncertainty unknown</td>", "one run: the verdict")
t.match(single, "<th>per%-second stddev within the run</th>", "one run: stddev column labelled")

-- a folder from before repetitions (no stats): as before, stddev whiskers, labelled
local old = pages.page(comparison_doc, "results/old")
t.eq(count(old, 'class="error%-bar"'), 8, "old folder: stddev whiskers as before")
t.eq(count(old, "error%-bar interval"), 0, "old folder: no interval whiskers")
t.match(old, "Whiskers: ± per%-second stddev within the run, not an uncertainty of the figure", "old folder: labelled")
t.match(old, "<th>vs baseline %%</th>", "old folder: its table as before")
t.eq(count(old, "mark%-best"), 0, "old folder: no marks")

-- a sweep with repetitions: one point per sweep point (the median), its interval, the marks
local sweep_rep = { scenario = { name = "sweep" }, status = "ok", phases = {},
  sweeps = { { dimensions = { "threads" }, points = {} } } }
local index_rep = 0
for p, threads in ipairs { "1", "4", "16" } do
  local label = "threads=" .. threads
  sweep_rep.sweeps[1].points[p] = { index = p, label = label, coordinates = { threads = threads } }
  for repetition, mib in ipairs { 10 * p, 10 * p + 2, 10 * p - 2 } do
    index_rep = index_rep + 1
    local ph = phase(index_rep, "write", "bench " .. label, mib, 0.001, { threads = threads }, label)
    ph.repetition = repetition
    sweep_rep.phases[index_rep] = ph
  end
end
sweep_rep.comparisons = { { by = "point", baseline = "threads=1", metrics = { "bandwidth_mib" }, repetitions = 3,
  rows = {}, best = { { phase = "write", metric = "bandwidth_mib", best = "threads=16", as_good = { "threads=4" },
    n = 3 } } } }
local sweep_rep_page = pages.page(sweep_rep, "results/sweep-rep")
local mib_chart = sweep_rep_page:match('<svg class="chart" data%-kind="line"[^>]*aria%-label="write: MiB/s vs threads".-</svg>')
t.ok(mib_chart ~= nil, "sweep with repetitions: MiB/s vs threads")
t.match(mib_chart or "", 'data%-points="3"', "one point per sweep point, not one per repetition")
t.eq(count(mib_chart or "", "error%-bar interval"), 3, "an interval whisker per point")
t.eq(count(mib_chart or "", "mark%-best"), 1, "the best point marked")
t.eq(count(mib_chart or "", "mark%-as%-good"), 1, "the point as good within noise marked")
t.match(sweep_rep_page, "<td>16</td><td class=\"n\">30%.0</td><td class=\"n\">3</td><td class=\"n\">%[25%.4, 35%.4%]</td><td>★ best</td>",
  "median and interval with the digits the interval supports, n, standing")

-- the new fields are validated like the others
local bad = repeated_doc(5)
bad.comparisons[1].rows[2].stats.bandwidth_mib.ci_low = "low"
local refused, why_bad = html.normalize(bad, "x")
t.eq(refused, nil, "a stats figure of the wrong type is refused")
t.eq(why_bad, 'comparisons[1].rows[2].stats["bandwidth_mib"].ci_low is a string, expected a number', "and says where")
bad = repeated_doc(5)
bad.comparisons[1].best[1].as_good = "c"
t.eq(select(2, html.normalize(bad, "x")), "comparisons[1].best[1].as_good is a string, expected a list",
  "best.as_good must be a list")
bad = repeated_doc(5)
bad.comparisons[1].rows[1].stats.bandwidth_mib.values[2] = { x = 1 }
t.eq(select(2, html.normalize(bad, "x")),
  'comparisons[1].rows[1].stats["bandwidth_mib"].values[2] is a table, expected a number or null', "values items")
bad = repeated_doc(5)
bad.comparisons[1].rows[1].stats.bandwidth_mib.values[2] = json.null
t.ok(html.normalize(bad, "x") ~= nil, "a null repetition value is fine")
bad = repeated_doc(5)
bad.comparisons[1].repetitions = "5"
t.eq(select(2, html.normalize(bad, "x")), "comparisons[1].repetitions is a string, expected a number", "repetitions")

-- A phase on three agents: the agents' section (IOPS per agent, the slow one named, the
-- per-agent and per-host tables) and the worst agent's p99 labelled in the timeline.
local distributed_doc = {
  scenario = { name = "agents" }, status = "ok", complete = true, host = "coordinator",
  started_at = "2026-12-01T00:00:00Z", params_text = {}, params_source = {}, pools = {},
  phases = { phase(1, "write", "", 100, 0.004, {}) },
}
local on_agents = distributed_doc.phases[1]
on_agents.result.agents = {
  a1 = { host = "client-1", ops = 600, iops = 200, bandwidth_mib = 50, p50 = 0.003, p99 = 0.010, errors = 0, elapsed = 3 },
  a2 = { host = "client-1", ops = 580, iops = 193, bandwidth_mib = 48, p50 = 0.003, p99 = 0.011, errors = 0, elapsed = 3 },
  a3 = { host = "client-<3>", ops = 90, iops = 30, bandwidth_mib = 7, p50 = 0.020, p99 = 0.090, errors = 0, elapsed = 3 },
}
on_agents.result.slow_agents = { { agent = "a3", host = "client-<3>", reasons = { "p99 90 ms (peers 10.5 ms)" } } }
on_agents.result.per_host = {
  ["client-1"] = { host = "client-1", agents = { "a1", "a2" }, ops = 1180, iops = 393, bandwidth_mib = 98, p99 = 0.011,
    errors = 0, monitor = "osd-mon-1", host_cpu_busy = 0.4, osd_cpu_seconds = 2.5 },
  ["client-<3>"] = { host = "client-<3>", agents = { "a3" }, ops = 90, iops = 30, bandwidth_mib = 7, p99 = 0.090,
    errors = 0, slow = true },
}
for _, s in ipairs(on_agents.series) do s.p99_worst_agent = s.p99 * 2 end
local agents_page = html.build({ assert(html.normalize(distributed_doc, "results/agents-1")) })
t.ok(agents_page:find("<h3>Agents and hosts</h3>", 1, true) ~= nil, "a phase on agents has the agents' section")
t.ok(agents_page:find("write: IOPS per agent", 1, true) ~= nil, "a bar chart of IOPS per agent")
t.ok(agents_page:find("slow agent a3 (client-&lt;3&gt;): p99 90 ms (peers 10.5 ms)", 1, true) ~= nil,
  "the slow agent named, escaped")
t.ok(agents_page:find("per host (agents and host monitor)", 1, true) ~= nil, "a per-host table")
t.ok(agents_page:find("osd-mon-1", 1, true) ~= nil, "with the host's monitor")
t.ok(agents_page:find("p99 of the second, worst agent", 1, true) ~= nil, "the worst agent's p99 labelled")
t.ok(agents_page:find("p99 of the second (all agents)", 1, true) ~= nil, "the merged p99 labelled")
charts_have_data(agents_page, "agents page")
t.eq(page:find("Agents and hosts", 1, true), nil, "no agents' section without agents")

return t.done()
