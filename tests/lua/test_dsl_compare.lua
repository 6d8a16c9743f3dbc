-- Comparisons without a cluster: values and relative differences against the baseline,
-- the aligned table exactly as printed, grouping by pool, point or any dimension, and the
-- messages for comparisons that cannot be made; then s:compare inside a scenario.
local compare = require "cephmark.compare"
local cm = require "cephmark"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local here = debug.getinfo(1, "S").source:sub(2)
local function line() return debug.getinfo(2, "l").currentline end

local function record(index, name, pool, bw, iops, p50, p99)
  return { index = index, name = name, label = pool, variant = { pool = pool },
    result = { ops = 100, bandwidth_mib = bw, iops = iops, errors = 0, lat = { p50 = p50, p99 = p99 } } }
end
local records = {
  record(1, "write", "replica", 100, 25, 0.010, 0.040),
  record(2, "seq", "replica", 400, 100, 0.002, 0.008),
  record(3, "cleanup", "replica", 0, 900, 0.001, 0.002),
  record(4, "write", "ec", 123.4, 30.85, 0.008, 0.050),
  record(5, "seq", "ec", 200, 50, 0.004, 0.008),
}

local c = compare.build(records, { by = "pool", baseline = "replica" })
t.eq(#c.rows, 4, "write and seq for two pools; cleanup left out by default")
t.eq(c.rows[1].variant, "replica", "the baseline row first")
t.eq(c.rows[2].variant, "ec", "then the others")
t.near(c.rows[2].relative.bandwidth_mib, 23.4, 1e-9, "+23.4% bandwidth")
t.near(c.rows[2].relative["lat.p50"], -20, 1e-9, "-20% p50")
t.near(c.rows[2].relative["lat.p99"], 25, 1e-9, "+25% p99")
t.near(c.rows[4].relative.bandwidth_mib, -50, 1e-9, "seq: -50%")
t.eq(c.rows[4].relative["lat.p99"], 0, "an equal value is 0%")
t.eq(c.rows[1].relative.bandwidth_mib, nil, "no difference on the baseline row")
t.eq(c.rows[2].values.iops, 30.85, "values kept")

local lines = compare.lines(c)
local want = {
  "comparison by pool (baseline replica, marked *; one run each: the uncertainty of these changes is unknown, --repeats N measures it)",
  "phase  pool       MiB/s         IOPS         p50 ms          p99 ms",
  "write  replica *  100.0           25          10.00           40.00",
  "write  ec         123.4 (+23%)    31 (+23%)   8.000 (-20%)    50.00 (+25%)",
  "seq    replica *  400.0          100          2.000           8.000",
  "seq    ec         200.0 (-50%)    50 (-50%)   4.000 (+100%)   8.000 (+0%)",
}
t.eq(#lines, #want, "table line count")
for i = 1, #want do t.eq(lines[i], want[i], "table line " .. i) end

-- relative differences in general
t.near(compare.relative(112.3, 100), 12.3, 1e-9, "+12.3%")
t.eq(compare.relative(5, 0), nil, "no percentage against zero")
t.eq(compare.relative(0, 0), 0, "zero against zero")
t.eq(compare.format_relative(12.345), "(+12%)", "one run: whole percent, with a sign")
t.eq(compare.format_relative(-0.01), "(+0%)", "never -0%")
t.eq(compare.format_relative(nil), "(n/a)", "no baseline value")
t.eq(compare.format_value("lat.p99", 0.0123), "12.30", "latency in ms")
t.eq(compare.format_value("iops", 3712.6), "3713", "IOPS as an integer")

-- chosen metrics and phases; the default baseline is the first variant
local c2 = compare.build(records, { by = "pool", metrics = { "lat.p99", "errors" }, phases = { "seq", "cleanup" } })
t.eq(c2.baseline, "replica", "default baseline: the first variant")
t.eq(#c2.rows, 3, "seq for both pools, cleanup for replica only")
t.eq(c2.rows[3].phase, "cleanup", "phases in the order asked")
t.eq(compare.lines(c2)[2], "phase    pool       p99 ms        errors", "headers of the chosen metrics")

-- by a sweep dimension, filtered with where
local swept = {
  { index = 1, name = "write", label = "bench t=1 b=4K", point = "t=1 b=4K", variant = { pool = "bench", t = "1", b = "4K" },
    result = { ops = 1, iops = 10 } },
  { index = 2, name = "write", label = "bench t=4 b=4K", point = "t=4 b=4K", variant = { pool = "bench", t = "4", b = "4K" },
    result = { ops = 1, iops = 30 } },
  { index = 3, name = "write", label = "bench t=1 b=1M", point = "t=1 b=1M", variant = { pool = "bench", t = "1", b = "1M" },
    result = { ops = 1, iops = 5 } },
}
local by_t = compare.build(swept, { by = "t", metrics = { "iops" }, where = { b = "4K" } })
t.eq(#by_t.rows, 2, "where keeps the 4K points")
t.near(by_t.rows[2].relative.iops, 200, 1e-9, "t=4 against t=1: +200%")
local by_point = compare.build(swept, { by = "point", metrics = { "iops" }, baseline = "t=1 b=1M" })
t.eq(by_point.rows[1].variant, "t=1 b=1M", "a named baseline comes first")
t.near(by_point.rows[2].relative.iops, 100, 1e-9, "t=1 b=4K against t=1 b=1M")

-- comparisons that cannot be made
local function message(spec, from)
  local ok, err = pcall(compare.build, from or records, spec)
  return not ok and err or nil
end
t.eq(message { by = "pool", baseline = "replicas" }, "compare: baseline 'replicas' is not a pool of this run (pools: replica, ec)",
  "an unknown baseline")
t.eq(message { by = "pool", metrics = { "lat.p77" } }, "compare: unknown metric 'lat.p77' (metrics: " ..
  table.concat(compare.known_metrics, ", ") .. ")", "an unknown metric")
t.eq(message { by = "host" }, "compare by host: no phase has a host (compare by: variant, point, pool)", "an unknown dimension")
t.eq(message({ by = "t" }, swept), "compare by t: phase 'write' ran twice for t '1' (bench t=1 b=4K and bench t=1 b=1M); compare by variant, or narrow it with where = {...}",
  "two phases in one cell")
t.eq(message { phases = { "rand" }, by = "pool" }, "compare: no 'rand' phase to compare", "a phase that did not run")
t.eq(message { by = "pool", colour = true }, "compare: unknown option 'colour' (options: by, metrics, phases, baseline, where, title)",
  "an unknown option")
-- a where that matches no phase says so, with the values the phases have (it is not "no
-- phase with results yet": they ran)
t.eq(message({ by = "t", where = { b = "64K" } }, swept), "compare: no phase matches where = {b = '64K'} (b: 4K, 1M)",
  "a where value no phase has")
t.eq(message({ by = "t", where = { b = "1M", t = "4" } }, swept), "compare: no phase matches where = {b = '1M', t = '4'} (b: 4K, 1M; t: 1, 4)",
  "a combination no phase has")
t.eq(message({ by = "t", where = { bs = "4K" } }, swept),
  "compare: no phase matches where = {bs = '4K'} (no phase has a bs; dimensions: b, point, pool, t)", "a dimension no phase has")
t.eq(message({ by = "t", where = "b=4K" }, swept), "compare: where must be a table {dimension = value}, e.g. where = {block_size = \"4K\"}",
  "where that is not a table")
t.eq(message({ by = "t" }, {}), "compare: no phase with results to compare yet", "nothing measured yet")

-- comparison.csv rows: long form, one per metric
local rows = compare.csv_rows { c }
t.eq(#rows, 16, "4 rows x 4 metrics")
t.eq(rows[5].variant, "ec", "second row's variant")
t.near(rows[5].relative_pct, 23.4, 1e-9, "its relative difference")

-- s:compare in a scenario: printed, kept in results, errors with the caller's line
local out = os.tmpname()
os.remove(out)
local printed, bad_line = {}, nil
local scenario = cm.scenario {
  name = "compare-test",
  run = function(s)
    for _, delay in ipairs { "1ms", "2ms" } do
      s:variant({ delay = delay }, function()
        s:phase("write", require "cephmark.null", { threads = 2, ops = 200, delay = delay })
      end)
    end
    s:compare { by = "delay", metrics = { "lat.p50" } }
    bad_line = line(); s:compare { by = "delay", baseline = "3ms" }
  end,
}
local saved = io.stdout
io.stdout = { write = function(self, ...) for _, v in ipairs { ... } do printed[#printed + 1] = v end return self end,
  flush = function() end }
local ok, err = pcall(scenario.run, scenario, { output = out })
io.stdout = saved
t.eq(ok, false, "a bad baseline stops the run")
t.eq(tostring((sys.error_info(err))),
  string.format("%s:%d: compare: baseline '3ms' is not a delay of this run (delays: 1ms, 2ms)", here, bad_line),
  "with the line of s:compare")
local text = table.concat(printed)
t.match(text, "\nphase  delay  p50 ms\n", "the table is printed")
local json = require "cephmark.json"
local document = json.decode(sys.read_file(out .. "/results.json"))
t.eq(#document.comparisons, 1, "the comparison is in the results")
local rows = document.comparisons[1].rows
t.eq(rows[2].variant, "2ms", "with its rows")
local p50_1, p50_2 = rows[1].values["lat.p50"], rows[2].values["lat.p50"]
t.near(rows[2].relative["lat.p50"], (p50_2 - p50_1) / p50_1 * 100, 1e-9, "and relative differences")
t.ok(p50_1 >= 0.001 and p50_2 >= 0.002, "each p50 is at least its delay")
t.match(text, "\nwrite  2ms +" .. compare.format_value("lat.p50", p50_2):gsub("%.", "%%.") .. " " ..
  compare.format_relative(rows[2].relative["lat.p50"]):gsub("[%(%)%.%+%%]", "%%%0") .. "\n", "the printed row")
local csv = sys.read_file(out .. "/comparison.csv")
t.match(csv, "^comparison,by,baseline,phase,variant,is_baseline,metric,value,relative_pct,n,median,ci_low,ci_high,change,change_ci_low,change_ci_high,verdict,mde,standing,values\n", "comparison.csv header")
t.match(csv, "\n1,delay,1ms,write,2ms,false,lat.p50,0.002%d*,%d", "comparison.csv row")

-- against an earlier run's results folder: by = "run", the earlier run is the baseline
local function delay_run(dir, delay, with)
  local comparison
  local scenario_run = cm.scenario { name = "runs", run = function(s)
    s:phase("write", require "cephmark.null", { threads = 2, ops = 100, delay = delay })
    if with then comparison = s:compare { by = "run", with = with, metrics = { "lat.p50" } } end
  end }
  local saved_out = io.stdout
  io.stdout = { write = function(self) return self end, flush = function() end }
  local run_ok, run_err = pcall(scenario_run.run, scenario_run, { output = dir })
  io.stdout = saved_out
  assert(run_ok, run_err)
  return comparison
end
delay_run(out .. "-before", "1ms")
local across = delay_run(out .. "-after", "3ms", { out .. "-before" })
local before_name = (out .. "-before"):match("([^/]+)$")
t.eq(across.baseline, before_name, "the earlier run is the baseline")
t.eq(across.rows[2].variant, (out .. "-after"):match("([^/]+)$"), "this run is named by its folder")
local before_p50, after_p50 = across.rows[1].values["lat.p50"], across.rows[2].values["lat.p50"]
t.near(across.rows[2].relative["lat.p50"], (after_p50 - before_p50) / before_p50 * 100, 1e-9, "relative to the earlier run")
t.ok(before_p50 >= 0.001 and after_p50 >= 0.003, "each p50 is at least its delay")
sys.remove_tree(out .. "-before")
sys.remove_tree(out .. "-after")
sys.remove_tree(out)
return t.done()
