-- The HTML report's charts of the cluster's side of each phase (stdlib/cephmark/report/html.lua):
-- "where the time goes" (the client's average latency against the OSDs' op, process,
-- sub-op, commit and kv sync latencies, horizontal bars on one time axis) and CPU per op
-- by variant (client, OSDs, mon, mgr, rgw, with 95 % intervals when repeated). Built from a
-- real run's results, trimmed: fixtures/report-cluster-side/results.json is
--   cephmark run scenarios/ec-vs-replica.lua -p seconds=1 -p block_size=64K -p threads=8 --repeats 2
-- on `cephmark cluster up --bluestore --mgr` (3 bluestore OSDs), with the series cut to one
-- second and per_osd, cpu.daemons and collect_seconds removed (the report reads none of them).
-- Checks the charts' presence, their bars' exact values and labels, the shared axis, the
-- medians and intervals over repetitions, and that phases without these figures draw nothing.
local compare = require "cephmark.compare"
local html = require "cephmark.report.html"
local results = require "cephmark.results"
local t = require "cephmark.test"
local pages = require "report_pages"

local count = pages.count

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local fixture_dir = here .. "/fixtures/report-cluster-side"

local function load()
  return assert(results.read_document(fixture_dir .. "/results.json", fixture_dir))
end

-- the <svg> of the chart titled `title`, or nil
local function chart_of(page, title)
  local at = page:find('aria-label="' .. title .. '"', 1, true)
  if not at then return nil end
  local start = 1
  while true do
    local next_start = page:find("<svg ", start, true)
    if not next_start or next_start > at then break end
    start = next_start + 1
  end
  local finish = page:find("</svg>", at, true)
  return page:sub(start - 1, finish + 5)
end

-- the rows of a horizontal bar chart: label, bar width, data value, the value written after it
local function hbar_rows(chart)
  local rows = {}
  for label, width, value, text in (chart or ""):gmatch('<text class="row%-label"[^>]*>([^<]*)</text>\n' ..
    '<rect class="bar" x="[%d.]+" y="[%d.]+" width="([%d.]+)" height="[%d.]+" fill="[^"]+" ' ..
    'data%-value="([^"]+)"><title>[^<]*</title></rect>\n<text class="value"[^>]*>([^<]*)</text>') do
    rows[#rows + 1] = { label = label, width = tonumber(width), value = tonumber(value), text = text }
  end
  return rows
end

local function phases_of(doc, name, label)
  local list = {}
  for _, phase in ipairs(doc.phases) do
    if phase.name == name and phase.label == label then list[#list + 1] = phase end
  end
  return list
end

local function median2(list, get)
  t.eq(#list, 2, "two repetitions in the fixture")
  return (get(list[1]) + get(list[2])) / 2
end

-- ---------------------------------------------------------------- two repetitions

local doc = load()
local page = pages.page(doc, "results/ec-vs-replica")
t.eq(count(page, 'data%-kind="hbar"'), 6, "a 'where the time goes' chart per phase and variant (3 x 2)")
t.eq(count(page, "<h3>Where the time goes</h3>"), 1, "one section")
t.eq(count(page, "<h3>CPU per op</h3>"), 1, "one CPU section")
t.ok(page:find("cleanup replica: where the time goes", 1, true) == nil, "cleanup phases get no chart")
t.ok(page:find("<script", 1, true) == nil and page:find("src=", 1, true) == nil and
  page:find('href="http', 1, true) == nil, "still self-contained")
t.match(page, "The bars overlap rather than add up", "the section says how to read the bars")

local write_replica = chart_of(page, "write replica: where the time goes")
t.ok(write_replica ~= nil, "write replica chart")
t.match(write_replica or "", 'data%-points="6"', "six bars")
t.match(write_replica or "", ">Medians of 2 repetitions%.</text>", "the chart says its bars are medians")
local rows = hbar_rows(write_replica)
local want = {
  { "client: average latency", "20.2 ms" },
  { "OSDs: op_w (op received to reply)", "17.5 ms" },
  { "OSDs: op_w process (after the queue)", "16.6 ms" },
  { "OSDs: subop_w (a replica write)", "9.91 ms" },
  { "OSDs: commit (bluestore)", "9.01 ms" },
  { "OSDs: kv sync (bluestore)", "4.72 ms" },
}
t.eq(#rows, #want, "write replica: the rows drawn")
for i, w in ipairs(want) do
  t.eq((rows[i] or {}).label, w[1], "write replica row " .. i)
  t.eq((rows[i] or {}).text, w[2], "write replica value " .. i)
end
-- the values are the medians of the two repetitions' figures
local records = phases_of(doc, "write", "replica")
local function osd(key) return function(phase) return phase.cluster.osd[key] end end
local medians = { median2(records, function(phase) return phase.result.lat.avg end),
  median2(records, osd("op_w_latency")), median2(records, osd("op_w_process_latency")),
  median2(records, osd("subop_w_latency")), median2(records, osd("commit_latency")),
  median2(records, osd("kv_sync_latency")) }
for i, m in ipairs(medians) do t.near((rows[i] or {}).value or -1, m, 1e-12, "write replica: median " .. i) end
t.match(page, "OSD latencies are averages over all client ops on the OSDs during the phase %(scope: all client " ..
  "ops on these OSDs during the phase%), weighted by ops: 416 op_w ops on 3 OSDs %(medians of 2 repetitions%)%.",
  "the caption: averages over all client ops, the scope string, the ops")

-- erasure-coded writes: Ceph counts no sub-ops for their shards, and the chart says so
local write_ec = chart_of(page, "write ec: where the time goes")
local ec_rows = hbar_rows(write_ec)
t.eq(#ec_rows, 5, "write ec: no sub-op bar")
t.eq((ec_rows[4] or {}).label, "OSDs: commit (bluestore)", "write ec: commit after process")
t.match(page, "No sub%-op bar: the OSDs counted no replication sub%-ops", "write ec: the missing bar explained")
-- one time axis for the charts of one phase name: the same pixels per second
local per_second = {}
for _, r in ipairs(rows) do per_second[#per_second + 1] = r.width / r.value end
for _, r in ipairs(ec_rows) do per_second[#per_second + 1] = r.width / r.value end
for i = 2, #per_second do t.near(per_second[i], per_second[1], per_second[1] * 0.01, "shared axis, bar " .. i) end
t.match(write_replica or "", ">25 ms</text>", "write replica's axis reaches write ec's longest bar")

-- reads: op_r, its process part, nothing of writes
local seq_rows = hbar_rows(chart_of(page, "seq replica: where the time goes"))
t.eq(#seq_rows, 3, "seq replica: three bars")
t.eq((seq_rows[2] or {}).label, "OSDs: op_r (op received to reply)", "seq: the OSDs' read latency")
t.eq((seq_rows[3] or {}).label, "OSDs: op_r process (after the queue)", "seq: its process part")
t.eq((seq_rows[2] or {}).text, "1.36 ms", "seq replica: op_r's median")

-- CPU per op: one chart per phase name, a bar per variant and CPU owner
local cpu_write = chart_of(page, "write: CPU per op by variant")
t.ok(cpu_write ~= nil, "write: CPU per op chart")
t.eq(count(page, "CPU per op by variant</text>"), 3, "a CPU chart per phase name (write, seq, rand)")
t.match(cpu_write or "", 'data%-points="8"', "2 variants x (client, OSDs, mon, mgr)")
t.match(cpu_write or "", ">client</text>.*>OSDs</text>.*>mon</text>.*>mgr</text>", "the owners, in order")
t.ok((cpu_write or ""):find(">rgw</text>", 1, true) == nil, "no rgw where none ran")
t.match(cpu_write or "", ">replica</text>.*>ec</text>", "a legend of the variants")
t.match(cpu_write or "", "Bars: medians of the repetitions; whiskers: 95 %% intervals%.", "what the whiskers are")
local bars, whiskers, labels = {}, {}, {}
for value in (cpu_write or ""):gmatch('<rect class="bar"[^>]*data%-value="([^"]+)"') do
  bars[#bars + 1] = tonumber(value)
end
local interval_pattern = '<path class="error%-bar interval" data%-low="([^"]+)" data%-high="([^"]+)"'
for low, high in (cpu_write or ""):gmatch(interval_pattern) do
  whiskers[#whiskers + 1] = { tonumber(low), tonumber(high) }
end
for text in (cpu_write or ""):gmatch('<text class="value"[^>]*>([^<]*)</text>') do labels[#labels + 1] = text end
t.eq(#bars, 8, "eight bars")
t.eq(#whiskers, 8, "an interval on each")
-- drawing order: per owner, replica then ec; values and intervals are compare's statistics
local expected, expected_labels = {}, {}
for _, metric in ipairs { "cpu.client_per_op", "cpu.osd_per_op", "cpu.kinds.ceph-mon.per_op",
  "cpu.kinds.ceph-mgr.per_op" } do
  for _, variant in ipairs { "replica", "ec" } do
    expected[#expected + 1] = compare.row_stats(phases_of(doc, "write", variant), metric)
  end
end
for i, entry in ipairs(expected) do
  t.near(bars[i] or -1, entry.median, 1e-15, "CPU bar " .. i .. " at the median")
  t.near((whiskers[i] or {})[1] or -1, entry.ci_low, 1e-15, "CPU whisker " .. i .. " low")
  t.near((whiskers[i] or {})[2] or -1, entry.ci_high, 1e-15, "CPU whisker " .. i .. " high")
end
t.eq(labels[1], "164 µs", "client CPU per op of replica, written above its bar")
t.eq(labels[3], "3.02 ms", "OSD CPU per op of replica")
t.eq(labels[4], "4.95 ms", "OSD CPU per op of ec")
t.near(bars[3], median2(phases_of(doc, "write", "replica"), function(p) return p.cluster.cpu.osd_per_op end), 1e-15,
  "the OSDs' bar is the median of the repetitions")

-- ---------------------------------------------------------------- one run

local single = load()
local kept = {}
for _, phase in ipairs(single.phases) do
  if phase.repetition == 1 then kept[#kept + 1] = phase end
end
single.phases, single.comparisons = kept, {}
local single_page = pages.page(single, "results/one")
t.eq(count(single_page, 'data%-kind="hbar"'), 6, "one run: the same charts")
local one = phases_of(single, "write", "replica")[1]
local one_rows = hbar_rows(chart_of(single_page, "write replica: where the time goes"))
t.eq((one_rows[1] or {}).value, one.result.lat.avg, "one run: the client's own average")
t.eq((one_rows[2] or {}).value, one.cluster.osd.op_w_latency, "one run: the OSDs' own op_w")
t.ok(single_page:find("Medians of", 1, true) == nil, "one run: no medians")
local single_cpu = chart_of(single_page, "write: CPU per op by variant")
t.eq(count(single_cpu or "", "error%-bar"), 0, "one run: no whiskers")
t.match(single_cpu or "", "One run each: no interval is known, so no whiskers%.", "one run: said plainly")
t.match(single_page, '<td class="n">none: one run</td>', "one run: no interval in the table")

-- ---------------------------------------------------------------- without the figures

-- telemetry off (or no cluster): no cluster table, no section, no empty chart
local off = load()
for _, phase in ipairs(off.phases) do phase.cluster = nil end
local off_page = pages.page(off, "results/off")
t.ok(off_page:find("Where the time goes", 1, true) == nil, "telemetry off: no time section")
t.ok(off_page:find("CPU per op", 1, true) == nil, "telemetry off: no CPU section")
t.eq(count(off_page, 'data%-kind="hbar"'), 0, "telemetry off: no time chart")
t.eq(count(page, "<svg ") - count(off_page, "<svg "), 9, "the cluster's side adds 6 + 3 charts, nothing else")

-- the OSDs gave nothing (all missing), and the CPU came from the client alone (a remote cluster)
local partial = load()
for _, phase in ipairs(partial.phases) do
  if phase.label == "ec" then
    phase.cluster.osd = { osds = 0, scope = "all client ops on these OSDs during the phase",
      missing = { { osd = 0, reason = "no answer within 2 s" } } }
    phase.cluster.cpu = { client = phase.cluster.cpu.client, client_per_op = phase.cluster.cpu.client_per_op,
      scope = "daemons on this host", daemons = {}, kinds = {} }
  end
end
local partial_page = pages.page(partial, "results/partial")
t.eq(count(partial_page, 'data%-kind="hbar"'), 3, "only the variant with OSD figures gets time charts")
t.ok(partial_page:find("write ec: where the time goes", 1, true) == nil, "none for the one without")
local partial_cpu = chart_of(partial_page, "write: CPU per op by variant")
t.match(partial_cpu or "", 'data%-points="5"', "ec's client bar, replica's four")

-- a cluster on other hosts: the client's bar only, and the caption says why
local remote = load()
for _, phase in ipairs(remote.phases) do
  if phase.cluster then
    phase.cluster.osd = nil
    phase.cluster.cpu = { client = phase.cluster.cpu.client, client_per_op = phase.cluster.cpu.client_per_op,
      scope = "daemons on this host", daemons = {}, kinds = {} }
  end
end
local remote_page = pages.page(remote, "remote")
t.eq(count(remote_page, 'data%-kind="hbar"'), 0, "no OSD figures: no time chart")
t.match(chart_of(remote_page, "write: CPU per op by variant") or "", 'data%-points="2"',
  "remote: a client bar per variant")
t.match(remote_page, "No daemon of this cluster was found on this host, so only the client is drawn%.", "remote: said")

-- the null target, a disk or a socket: the client's CPU without a daemon scan is no cluster's side
local null = load()
for _, phase in ipairs(null.phases) do
  if phase.cluster then
    phase.cluster = { cpu = { client = phase.cluster.cpu.client, client_per_op = phase.cluster.cpu.client_per_op } }
  end
end
t.ok(pages.page(null, "null"):find("CPU per op", 1, true) == nil,
  "no daemon scan: no CPU section")

-- memstore: no bluestore section, so no commit or kv sync bar
local memstore = load()
for _, phase in ipairs(memstore.phases) do
  if phase.cluster then
    phase.cluster.osd.commit_latency, phase.cluster.osd.kv_sync_latency = nil, nil
  end
end
local memstore_rows = hbar_rows(chart_of(pages.page(memstore, "m"),
  "write replica: where the time goes"))
t.eq(#memstore_rows, 4, "memstore: client, op_w, process, subop_w")
t.eq((memstore_rows[4] or {}).label, "OSDs: subop_w (a replica write)", "memstore: the sub-op bar stays")

-- radosgw's CPU, when it ran on this host
local rgw = load()
for _, phase in ipairs(rgw.phases) do
  if phase.cluster and phase.cluster.cpu.kinds then
    phase.cluster.cpu.kinds.radosgw = { count = 1, seconds = 0.01, per_op = 2e-5, restarted = 0, gone = 0 }
  end
end
local rgw_cpu = chart_of(pages.page(rgw, "r"), "write: CPU per op by variant")
t.match(rgw_cpu or "", ">mgr</text>.*>rgw</text>", "rgw after mgr")
t.match(rgw_cpu or "", 'data%-points="10"', "2 variants x 5 owners")

-- a phase without a variant (a custom phase, no label): titled by its name alone
local unlabelled = load()
local kept_one = {}
for _, phase in ipairs(unlabelled.phases) do
  if phase.index == 1 then
    phase.label = nil
    kept_one[1] = phase
  end
end
unlabelled.phases, unlabelled.comparisons = kept_one, {}
local unlabelled_page = pages.page(unlabelled, "u")
t.ok(chart_of(unlabelled_page, "write: where the time goes") ~= nil, "no label: the phase's name alone")
t.match(unlabelled_page, "<tr><td>write</td><td>client</td>", "no label: the CPU table names the phase")

-- a figure of the wrong type is refused where it is
local bad = load()
bad.phases[1].cluster.osd.op_w_latency = "fast"
t.eq(select(2, html.normalize(bad, "x")), "phases[1].cluster.osd.op_w_latency is a string, expected a number",
  "a cluster.osd figure of the wrong type")
bad = load()
bad.phases[2].cluster.cpu.kinds["ceph-osd"] = 3
t.eq(select(2, html.normalize(bad, "x")), 'phases[2].cluster.cpu.kinds["ceph-osd"] is a number, expected a table',
  "a cluster.cpu kind of the wrong type")

return t.done()
