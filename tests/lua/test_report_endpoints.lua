-- The HTML report's endpoints section (stdlib/cephmark/report/html.lua): a phase whose
-- agents were spread over two endpoints (result.by_endpoint, docs/distributed.md "Several
-- gateways") gets a table with one row per endpoint in name order, a chart of each
-- endpoint's IOPS per second and one of its p99 per second, one line per endpoint, with the
-- per-second tables under them; a hostile endpoint name is escaped everywhere; a phase
-- without by_endpoint adds nothing; a malformed by_endpoint is refused with where it is.
-- The document goes through JSON first, as `cephmark report` reads results.json.
local html = require "cephmark.report.html"
local json = require "cephmark.json"
local t = require "cephmark.test"
local pages = require "report_pages"

local count = pages.count
local plain = "http://10.0.0.1:8080"
local hostile = "http://x/<script>alert(1)</script>"
local hostile_html = "http://x/&lt;script&gt;alert(1)&lt;/script&gt;"

-- n seconds of an endpoint: ops_per_second ops each, p99 rising by the second
local function seconds(n, ops_per_second, p99, agents)
  local out = json.array()
  for i = 1, n do
    out[i] = { sec = i, agents = agents, ops = ops_per_second, bytes = ops_per_second * 4096, errors = 0,
      iops = ops_per_second, cur_mib = ops_per_second * 4096 / 1048576, p50 = p99 / 2, p99 = p99 * i,
      p999 = p99 * i * 2, max_lat = p99 * i * 3, lat_count = ops_per_second }
  end
  return out
end

local function phase(index, name)
  return { index = index, name = name, op = name, label = "run", status = "ok", variant = {},
    result = { ops = 1500, bytes = 1500 * 4096, elapsed = 3, threads = 2, bandwidth_mib = 1.95, iops = 500,
      errors = 0, lat = { avg = 0.004, p50 = 0.003, p99 = 0.012, max = 0.02,
        percentiles = { { p = 50, value = 0.003 }, { p = 99, value = 0.012 } } } },
    series = { { sec = 1, ops = 500, iops = 500, cur_mib = 1.95, p99 = 0.012, avg_lat = 0.004, max_lat = 0.02 },
      { sec = 2, ops = 500, iops = 500, cur_mib = 1.95, p99 = 0.012, avg_lat = 0.004, max_lat = 0.02 },
      { sec = 3, ops = 500, iops = 500, cur_mib = 1.95, p99 = 0.012, avg_lat = 0.004, max_lat = 0.02 } } }
end

local put = phase(1, "put")
put.result.by_endpoint = {
  [plain] = { agents = json.array { "a1", "a3" }, ops = 900, bytes = 900 * 4096, errors = 0, iops = 300,
    bandwidth_mib = 1.17, p50 = 0.002, p99 = 0.008, series_p99 = "merged", series = seconds(3, 300, 0.004, 2) },
  [hostile] = { agents = json.array { "a2" }, ops = 600, bytes = 600 * 4096, errors = 2, iops = 200,
    bandwidth_mib = 0.781, p50 = 0.005, p99 = 0.030, series_p99 = "worst agent", series = seconds(3, 200, 0.010, 1) },
}
local doc = { scenario = { name = "endpoints" }, status = "ok", complete = true, host = "coordinator",
  started_at = "2026-12-01T00:00:00Z", params_text = {}, params_source = {}, pools = {},
  phases = { put, phase(2, "get") } }
doc = json.decode(json.encode(doc))
local page = pages.page(doc, "results/endpoints-1")

t.eq(count(page, "<h3>Endpoints</h3>"), 1, "one endpoints section")

-- the table per endpoint: one row each, in name order, with the entry's figures
local function table_of(text, title)
  local start = text:find("<summary>" .. title .. " (table)</summary>", 1, true)
  if not start then return nil end
  return text:sub(start, text:find("</table>", start, true))
end
local per_endpoint = table_of(page, "[1] put run: per endpoint")
t.ok(per_endpoint ~= nil, "a table per endpoint")
per_endpoint = per_endpoint or ""
t.eq(count(per_endpoint, "<tr><td>"), 2, "one row per endpoint")
t.ok(per_endpoint:find("<th>endpoint</th><th>agents</th><th>ops</th><th>IOPS</th><th>MiB/s</th><th>p50</th>" ..
  "<th>p99</th><th>errors</th><th>per-second p99</th>", 1, true) ~= nil, "the table's columns")
local plain_row = '<tr><td>' .. plain .. '</td><td>a1, a3</td><td class="n">900</td><td class="n">300</td>' ..
  '<td class="n">1.17</td><td class="n">2 ms</td><td class="n">8 ms</td><td class="n">0</td>' ..
  "<td>merged (its agents&#39; histograms)</td></tr>"
local hostile_row = '<tr><td>' .. hostile_html .. '</td><td>a2</td><td class="n">600</td><td class="n">200</td>' ..
  '<td class="n">0.781</td><td class="n">5 ms</td><td class="n">30 ms</td><td class="n">2</td>' ..
  "<td>worst agent (an agent sent no per-second histograms)</td></tr>"
local at_plain = per_endpoint:find(plain_row, 1, true)
local at_hostile = per_endpoint:find(hostile_row, 1, true)
t.ok(at_plain ~= nil, "the first endpoint's row and figures")
t.ok(at_hostile ~= nil, "the second endpoint's row, its errors and its worst agent's p99 said")
t.ok(at_plain and at_hostile and at_plain < at_hostile, "endpoints in name order")

-- the per-second tables: 3 seconds x 2 endpoints each
local per_second = table_of(page, "[1] put run: per endpoint and second") or ""
t.eq(count(per_second, "<tr><td"), 6, "a row per endpoint and second")
t.ok(per_second:find('<tr><td class="n">2</td><td>' .. plain .. '</td><td class="n">2</td><td class="n">300</td>' ..
  '<td class="n">300</td>', 1, true) ~= nil, "second 2 of the first endpoint: its agents, ops and IOPS")
local latencies = table_of(page, "[1] put run: latency per endpoint and second") or ""
t.eq(count(latencies, "<tr><td"), 6, "a latency row per endpoint and second")
t.ok(latencies:find('<tr><td class="n">3</td><td>' .. hostile_html .. '</td><td class="n">200</td>' ..
  '<td class="n">5 ms</td><td class="n">30 ms</td><td class="n">60 ms</td><td class="n">90 ms</td></tr>', 1, true) ~= nil,
  "second 3 of the second endpoint: ops timed, p50, p99, p99.9, max")

-- the charts: one line per endpoint, each with its 3 seconds; the legend names both
local function chart_of(text, title)
  local start = text:find('aria%-label="' .. title:gsub("[%[%]%(%)%.%-]", "%%%0") .. '"')
  if not start then return nil end
  start = text:sub(1, start):match(".*()<svg ")
  return text:sub(start, text:find("</svg>", start, true))
end
for _, title in ipairs { "[1] put run: IOPS per second, by endpoint", "[1] put run: p99 per second, by endpoint" } do
  local chart = chart_of(page, title)
  t.ok(chart ~= nil, title .. ": drawn")
  chart = chart or ""
  t.eq(count(chart, '<polyline class="series"'), 2, title .. ": one line per endpoint")
  t.eq(chart:match('data%-points="(%d+)"'), "6", title .. ": 3 seconds per endpoint")
  t.ok(chart:find('<text class="legend" x="[%d.]+" y="[%d.]+">' .. plain:gsub("[%.%-]", "%%%0") .. "</text>") ~= nil,
    title .. ": the first endpoint in the legend")
  t.ok(chart:find(hostile_html, 1, true) ~= nil, title .. ": the second endpoint in the legend, escaped")
end
local p99_chart = chart_of(page, "[1] put run: p99 per second, by endpoint") or ""
t.ok(p99_chart:find(hostile_html .. " (worst agent&#39;s p99)", 1, true) ~= nil,
  "a line of a worst agent's p99 says so")
t.ok(p99_chart:find(">" .. hostile_html .. ": the worst agent&#39;s p99 (an agent sent no per-second histograms)</text>",
  1, true) ~= nil, "and the chart's note names its endpoint")
t.ok(p99_chart:find(">p99 of each second from the merge of its agents&#39; histograms</text>", 1, true) ~= nil,
  "the note says how the other lines' p99 was found")
t.eq(p99_chart:find(plain .. ": the worst agent", 1, true), nil, "a merged endpoint is not named in the note")
-- log latency scale: the p99s span 4 ms .. 30 ms, ticks at 5, 10 and 20 ms (a linear
-- scale from 0 would have a tick at 0)
t.ok(p99_chart:find(">10 ms</text>", 1, true) ~= nil, "the p99 axis has a 10 ms tick")
t.eq(p99_chart:find('text%-anchor="end">0</text>'), nil, "the p99 axis does not start at 0 (log scale)")
local iops_chart = chart_of(page, "[1] put run: IOPS per second, by endpoint") or ""
t.ok(iops_chart:find('text%-anchor="end">0</text>') ~= nil, "the IOPS axis starts at 0")

-- escaped everywhere: the raw name appears nowhere
t.eq(page:find("<script", 1, true), nil, "no raw <script in the page")

-- the phase without by_endpoint adds nothing
t.eq(page:find("[2] get run: per endpoint", 1, true), nil, "no endpoint table for a phase without by_endpoint")
t.eq(page:find("[2] get run: IOPS per second, by endpoint", 1, true), nil, "nor its charts")
local plain_doc = json.decode(json.encode { scenario = { name = "one" }, status = "ok", complete = true,
  params_text = {}, params_source = {}, pools = {}, phases = { phase(1, "get") } })
t.eq(pages.page(plain_doc, "results/one"):find("Endpoints", 1, true), nil, "no endpoints section without by_endpoint")

-- an endpoint entry without seconds: its table alone, no empty chart
local no_seconds = json.decode(json.encode(doc))
for _, group in pairs(no_seconds.phases[1].result.by_endpoint) do group.series = nil end
local bare = pages.page(no_seconds, "results/bare")
t.ok(bare:find("[1] put run: per endpoint (table)", 1, true) ~= nil, "without seconds the table stays")
t.eq(bare:find("by endpoint", 1, true), nil, "and no chart is drawn")

-- a malformed by_endpoint is refused, saying where
local bad = json.decode(json.encode(doc))
bad.phases[1].result.by_endpoint = "everywhere"
t.eq(select(2, html.normalize(bad, "x")), "phases[1].result.by_endpoint is a string, expected a table",
  "by_endpoint must be a table")
bad = json.decode(json.encode(doc))
bad.phases[1].result.by_endpoint[plain].series = 3
t.eq(select(2, html.normalize(bad, "x")),
  'phases[1].result.by_endpoint["' .. plain .. '"].series is a number, expected a list', "its series a list")
bad = json.decode(json.encode(doc))
bad.phases[1].result.by_endpoint[plain].p99 = "8 ms"
t.eq(select(2, html.normalize(bad, "x")),
  'phases[1].result.by_endpoint["' .. plain .. '"].p99 is a string, expected a number or null', "its figures numbers")

return t.done()
