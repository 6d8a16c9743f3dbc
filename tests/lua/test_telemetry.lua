-- The OSD counters' arithmetic without a cluster (cephmark.telemetry): what is kept from a
-- perf dump, deltas (and a restarted OSD), averages over the phase weighted by ops, the
-- outlier rule, the summary line; and osd.* metrics in comparisons and statistics.
local compare = require "cephmark.compare"
local stats = require "cephmark.stats"
local telemetry = require "cephmark.telemetry"
local t = require "cephmark.test"

local function pair(count, sum) return { avgcount = count, sum = sum, avgtime = count > 0 and sum / count or 0 } end

-- extract: counts, (count, sum) pairs, bluestore's when present; lifetime avgtime ignored
local counters = telemetry.extract {
  osd = { op = 10, op_w = 7, op_r = 3, op_in_bytes = 4096, op_w_latency = pair(7, 0.07), junk = 5 },
  bluestore = { commit_lat = pair(7, 0.035) },
}
t.eq(counters.op_w, 7, "op_w kept")
t.eq(counters.junk, nil, "other counters left out")
t.eq(counters.op_w_latency.count, 7, "pair count")
t.eq(counters.commit_latency.sum, 0.035, "bluestore commit_lat kept as commit_latency")
t.eq(telemetry.extract({ osd = {} }).commit_latency, nil, "memstore: no bluestore section")

-- delta: non-negative, and a counter going backwards means a restart
local before = { op_w = 100, op_w_latency = { count = 100, sum = 1.0 } }
local after = { op_w = 150, op_w_latency = { count = 150, sum = 1.5 } }
local delta = telemetry.delta(before, after)
t.eq(delta.op_w, 50, "delta of a count")
t.eq(delta.op_w_latency.count, 50, "delta of avgcount")
t.near(delta.op_w_latency.sum, 0.5, 1e-12, "delta of sum")
local none, reason = telemetry.delta(after, before)
t.eq(none, nil, "backwards counters give no delta")
t.match(reason, "restarted", "and say why")

-- summarize: totals, ops-weighted averages (not the average of averages), per OSD
local function osd_delta(ops, seconds_each)
  return { op = ops, op_w = ops, op_r = 0, op_w_latency = { count = ops, sum = ops * seconds_each } }
end
local osd = telemetry.summarize({ [0] = osd_delta(100, 0.001), [1] = osd_delta(300, 0.003) }, { [2] = "no answer within 2 s" })
t.eq(osd.op_w, 400, "op_w summed over OSDs")
t.near(osd.op_w_latency, (0.1 + 0.9) / 400, 1e-12, "weighted by ops: 2.5 ms, not 2 ms")
t.eq(osd.osds, 2, "two OSDs answered")
t.eq(#osd.per_osd, 2, "one entry per OSD")
t.near(osd.per_osd[2].op_w_latency, 0.003, 1e-12, "per OSD average")
-- to the nanosecond perf dump measures in: sums of 9 decimals, differences of floats
local json = require "cephmark.json"
local ns = telemetry.summarize({ [0] = { op = 2, op_w = 2, op_r = 0,
  op_w_latency = { count = 2, sum = 0.123456789 - 0.117421008 } } }, {})
t.eq(json.encode(ns.op_w_latency), "0.003017891", "0.0030178905000000007 s is 3017.891 ns")
t.eq(osd.missing[1].osd, 2, "the missing OSD")
t.eq(osd.scope, "all client ops on these OSDs during the phase", "scope said in results")
t.eq(telemetry.summary_text(osd), "osd: op_w 2.5 ms over 400 ops on 2 OSDs; osd.2 missing", "summary line")

-- outliers: more than twice the median of its peers, with enough ops
local deltas = { [0] = osd_delta(100, 0.002), [1] = osd_delta(100, 0.0021), [2] = osd_delta(100, 0.0019),
  [3] = osd_delta(100, 0.0090) }
local found = telemetry.outliers(deltas, "op_w_latency")
t.eq(#found, 1, "one outlier")
t.eq(found[1].osd, 3, "osd.3 named")
t.near(found[1].peers_median, 0.002, 1e-12, "against its peers' median")
deltas[3] = osd_delta(telemetry.MIN_OPS - 1, 0.0090)
t.eq(#telemetry.outliers(deltas, "op_w_latency"), 0, "too few ops to tell")
deltas[3] = osd_delta(100, 0.0039)
t.eq(#telemetry.outliers(deltas, "op_w_latency"), 0, "under twice the median is no outlier")
t.eq(#telemetry.outliers({ [0] = osd_delta(100, 0.001), [1] = osd_delta(100, 0.009) }, "op_w_latency"), 0,
  "two OSDs: no majority to compare with")
deltas[3] = osd_delta(100, 0.0090)
local line = telemetry.summary_text(telemetry.summarize(deltas, {}))
t.match(line, "; outlier osd%.3 9 ms %(peers 2 ms%)$", "outlier in the summary line")

-- reads are judged by op_r
local reads = telemetry.summarize({ [0] = { op = 50, op_r = 50, op_w = 0, op_r_latency = { count = 50, sum = 0.05 },
  op_r_process_latency = { count = 50, sum = 0.025 } } }, {})
t.eq(telemetry.summary_text(reads), "osd: op_r 1 ms (process 0.5 ms) over 50 ops on 1 OSD", "read summary")

-- comparisons: osd.* from record.cluster.osd, latency kind, shown in ms
local record = { result = { ops = 1, iops = 10 }, cluster = { osd = { op_w_latency = 0.0125, op_w = 42 } } }
t.eq(compare.record_value(record, "osd.op_w_latency"), 0.0125, "osd metric from cluster.osd")
t.eq(compare.record_value(record, "iops"), 10, "others from the result")
t.eq(compare.record_value({ result = { ops = 1 } }, "osd.op_w_latency"), nil, "no telemetry: no value")
t.eq(stats.kind_of("osd.op_w_latency"), "latency", "osd latency is a latency")
t.eq(stats.kind_of("osd.op_w"), nil, "osd counts have no direction")
t.eq(compare.format_value("osd.op_w_latency", 0.0125), "12.50", "shown in ms")
t.eq(compare.header("osd.op_w_latency"), "osd op_w ms", "header")
local records = {
  { index = 1, name = "write", label = "a", variant = { pool = "a" }, result = { ops = 10 },
    cluster = { osd = { op_w_latency = 0.010 } } },
  { index = 2, name = "write", label = "b", variant = { pool = "b" }, result = { ops = 10 },
    cluster = { osd = { op_w_latency = 0.015 } } },
}
local comparison = compare.build(records, { by = "pool", metrics = { "iops", "osd.op_w_latency" } })
local text = table.concat(compare.lines(comparison), "\n")
t.match(text, "osd op_w ms", "the comparison has the column")
t.match(text, "15%.00", "and b's figure in ms")

-- The collector asks through the connection it is given, asks an OSD without a bluestore
-- section (memstore) for the osd section alone after the first reading, and never closes
-- a borrowed connection. The cluster here is a recording table of what osd_commands was
-- asked: the commands' choice is the collector's logic, not librados'.
local json = require "cephmark.json"
local asked, closed = {}, 0
local osd_section = json.encode { osd = { op_w = 5, op_w_latency = pair(5, 0.01) } }
local bluestore_section = json.encode { bluestore = { commit_lat = pair(5, 0.005) } }
local fake = {
  mon_command = function(_, command) return command.prefix == "osd ls" and { 0, 1, 2 } or nil end,
  osd_commands = function(_, ids, commands)
    local answers = {}
    for _, id in ipairs(ids) do
      asked[#asked + 1] = string.format("osd.%d:%d", id, #commands)
      -- osd.0 has bluestore, osd.1 is memstore (its bluestore dump is "{}"), osd.2 is down
      if id == 2 then
        answers[id] = { error = "osd down", code = -6, seconds = 0 }
      else
        answers[id] = { osd_section, commands[2] and (id == 0 and bluestore_section or "{}") or nil, seconds = 0 }
      end
    end
    return answers
  end,
  close = function() closed = closed + 1 end,
}
local collector = telemetry.collector { warn = error, connect = function() return fake end, borrowed = true }
local before = collector:before()
t.eq(table.concat(asked, " "), "osd.0:2 osd.1:2 osd.2:2", "the first reading asks every OSD in the map for both sections")
t.eq(before.missing[2], "down", "an OSD that is down answers ENXIO: recorded as down")
asked = {}
local osd = collector:after(before)
table.sort(asked)
t.eq(table.concat(asked, " "), "osd.0:2 osd.1:1", "then an OSD without bluestore is asked for its osd section alone")
t.eq(osd.osds, 2, "and both OSDs up give figures")
t.eq(osd.missing[1].osd, 2, "the one down is missing")
t.eq(osd.missing[1].reason, "down", "as down")
collector:close()
t.eq(closed, 0, "a borrowed connection is not closed")

-- cm.scenario's telemetry field: true or false, checked where it is written
local cm = require "cephmark"
local sys = require "cephmark.sys"
local here = debug.getinfo(1, "S").source:sub(2)
local l = debug.getinfo(1, "l").currentline + 1
local ok, err = pcall(function() local s = cm.scenario { name = "x", telemetry = "no", run = print }; return s end)
t.eq(ok, false, "telemetry = \"no\" is refused")
t.eq(tostring((sys.error_info(err))), string.format("%s:%d: cm.scenario: telemetry must be true or false (the cluster's side of each phase), got 'no'", here, l),
  "with the line and what is expected")
t.done()
