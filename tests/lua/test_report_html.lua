-- The HTML report built from results documents (stdlib/cephmark/report/html.lua): which
-- charts appear for a variant comparison, a sweep and a drop-in command's result, that each
-- chart carries data points, that several runs get an across-runs section, that text from
-- the results is escaped, and that the page fetches nothing.
local html = require "cephmark.report.html"
local results = require "cephmark.results"
local t = require "cephmark.test"

local function series(n, mib, lat)
  local out = {}
  for i = 1, n do
    out[i] = { sec = i, cur_ops = 16, ops = 100 + i, cur_mib = mib + i, iops = 100 + i, avg_lat = lat,
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
    result = { ops = 1000, bytes = 4096 * 1000, elapsed = 3, bandwidth_mib = mib, bandwidth_stddev = mib / 10,
      iops = mib * 256, iops_stddev = mib * 25, errors = 0, verify_failures = 0,
      lat = { avg = lat, p50 = lat, p90 = lat * 2, p99 = lat * 3, p99_9 = lat * 4, p99_99 = lat * 5, max = lat * 6,
        percentiles = percentiles(lat) } },
    series = series(3, mib, lat) }
end

local function count(text, pattern)
  local n = 0
  for _ in text:gmatch(pattern) do n = n + 1 end
  return n
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
local sweep_page = html.build({ assert(html.normalize(sweep_doc, "results/sweep")) })
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

return t.done()
