-- Comparisons with repetitions, from chosen per-repetition figures (exact, no timing): each
-- row's median and 95 % interval, the change against the baseline with its interval,
-- paired by repetition within a run and unpaired across runs, the verdict words, the
-- smallest detectable change, the printed table (digits the interval supports), the best
-- variant and those as good within noise, comparison.csv's columns, the plain wording of a
-- single run, and pooled percentiles from the exact merge of the repetitions' histograms.
local compare = require "cephmark.compare"
local stats = require "cephmark.stats"
local t = require "cephmark.test"

-- records of one variant: a write phase per repetition with the given IOPS and p50 (s)
local index = 0
local function variant(records, label, iops, p50, run)
  for repetition = 1, #iops do
    index = index + 1
    records[#records + 1] = { index = index, name = "write", label = label, point = label, repetition = repetition,
      variant = { point = label, run = run },
      result = { ops = 1000, iops = iops[repetition], bandwidth_mib = iops[repetition] / 256, errors = 0,
        lat = { p50 = p50[repetition], p99 = p50[repetition] * 3 } } }
  end
end

local base_iops = { 1000, 1030, 970, 1010, 990 }
local base_p50 = { 0.0040, 0.0041, 0.0039, 0.0040, 0.0041 }
local records = {}
variant(records, "base", base_iops, base_p50)
-- +10 % in every repetition, give or take 1 %: faster and lower, clearly
variant(records, "tuned", { 1100, 1140, 1060, 1115, 1085 }, { 0.0036, 0.0037, 0.0035, 0.0036, 0.0037 })
-- the same figures in another order of repetitions: no change the pairs can see
variant(records, "same", { 1010, 1020, 980, 1000, 995 }, { 0.0040, 0.0040, 0.0040, 0.0041, 0.0040 })

local c = compare.build(records, { by = "point", baseline = "base", metrics = { "iops", "lat.p50", "errors" } })
t.eq(c.repetitions, 5, "five repetitions")
local base, tuned, same = c.rows[1], c.rows[2], c.rows[3]
t.eq(tuned.variant, "tuned", "rows in order of appearance after the baseline")

-- every row: n, median, interval, per-repetition values
local s = base.stats.iops
t.eq(s.n, 5, "n")
t.eq(s.median, 1000, "the median of the five figures")
local expected = stats.summary(base_iops)
t.near(s.ci_low, expected.ci_low, 1e-9, "ci_low as stats.summary")
t.near(s.ci_high, expected.ci_high, 1e-9, "ci_high as stats.summary")
t.ok(s.ci_low < 1000 and s.ci_high > 1000, "the interval holds the median here")
t.eq(table.concat(s.values, ","), "1000,1030,970,1010,990", "per-repetition values in repetition order")
t.eq(s.change, nil, "the baseline has no change")
t.eq(s.verdict, nil, "nor a verdict")

-- against the baseline: paired by repetition
local ti = tuned.stats.iops
local paired = stats.change(base_iops, { 1100, 1140, 1060, 1115, 1085 })
t.eq(ti.paired, true, "within one run the repetitions pair")
t.near(ti.change, paired.change, 1e-9, "change as stats.change")
t.near(ti.change_ci_low, paired.change_ci_low, 1e-9, "change_ci_low")
t.near(ti.change_ci_high, paired.change_ci_high, 1e-9, "change_ci_high")
t.ok(ti.change > 9 and ti.change < 11, "about +10 %")
t.ok(ti.change_ci_low > 0, "the interval excludes 0")
t.eq(ti.verdict, "faster", "IOPS up: faster")
t.near(ti.mde, paired.mde, 1e-9, "the smallest detectable change")
t.near(tuned.relative.iops, ti.change, 1e-12, "relative is the change")
t.eq(tuned.stats["lat.p50"].verdict, "lower", "latency down: lower")
t.eq(ti.formatted, stats.format_change(paired), "the printed change as stats.format_change")

local si = same.stats.iops
t.eq(si.direction, "none", "A/A: the interval includes 0")
t.match(si.verdict, "^no difference detectable %(±[%d.]+ %%%)$", "A/A: no difference detectable, with its ±")
t.eq(same.stats.errors.verdict, "no difference detectable (±0.0 %)", "0 errors against 0: no difference, exactly")

-- the printed table: one line per phase, metric and variant, with the verdict words
local lines = compare.lines(c)
t.eq(lines[1], "comparison by point (baseline base, marked *): medians of 5 repetitions", "title")
t.match(lines[2], "^phase  metric  point   median %[95 %% interval%]  change %[95 %% interval%]%s+verdict%s+detectable$",
  "heading")
local text = table.concat(lines, "\n")
t.match(text, "\nwrite  IOPS    base %*  +1000 %[%d+, %d+%]\n", "the baseline row: median and interval")
t.match(text, "\n%s+tuned%s+1100 %[%d+, %d+%]%s+%+[%d.]+ %% %[%+[%d.]+, %+[%d.]+%]%s+faster%s+[%d.]+ %%\n",
  "the tuned row: change, interval, verdict, detectable")
t.match(text, "lower", "the latency verdict")
t.match(text, "no difference detectable", "the A/A row")
t.match(text, "\n%[ %]: 95 %% intervals; change: paired with the baseline by repetition", "the legend")
t.eq(text:find("one run each", 1, true), nil, "no single-run wording with repetitions")

-- digits: never more than the interval supports
t.eq(compare.format_interval("iops", { median = 1000, ci_low = 972.4, ci_high = 1031.9 }), "1000 [972, 1032]",
  "an interval 60 wide: whole numbers")
t.eq(compare.format_interval("bandwidth_mib", { median = 15.55, ci_low = 15.44, ci_high = 15.64 }),
  "15.55 [15.44, 15.64]", "0.2 wide: two decimals")
t.eq(compare.format_interval("lat.p99", { median = 0.00116, ci_low = 0.00097, ci_high = 0.00135 }),
  "1.16 [0.97, 1.35]", "latency in ms, 0.38 wide: two decimals")
t.eq(compare.format_interval("iops", { median = 3712.6 }), "3713", "no interval: the value alone")
t.eq(compare.format_detectable(66.4), "66 %", "detectable: whole percent from 10 %")
t.eq(compare.format_detectable(6.04), "6.0 %", "two digits below 10 %")
t.eq(compare.format_detectable(0.153), "0.15 %", "and below 1 %")

-- the best variant and those as good within noise
t.eq(#c.best, 2, "a best per metric with a direction (iops, lat.p50; errors has none)")
t.eq(c.best[1].metric, "iops", "iops first")
t.eq(c.best[1].best, "tuned", "the best IOPS")
t.eq(#c.best[1].as_good, 0, "nothing as good as +10 %")
t.eq(c.best[2].best, "tuned", "the lowest p50")
t.match(text, "\nbest write IOPS: tuned %(no other point within noise%)", "printed for a sweep")

local ties = {}
variant(ties, "a", { 1000, 1030, 970, 1010, 990 }, base_p50)
variant(ties, "b", { 1010, 1025, 985, 1005, 1000 }, base_p50)
variant(ties, "c", { 500, 515, 485, 505, 495 }, base_p50)
local tc = compare.build(ties, { by = "point", metrics = { "iops" } })
t.eq(tc.best[1].best, "b", "the highest median is the best")
t.eq(table.concat(tc.best[1].as_good, ","), "a", "a is as good within noise, c is not")
t.match(table.concat(compare.lines(tc), "\n"), "\nbest write IOPS: b %(as good within noise: a%)$", "printed")

-- comparison.csv: every row carries the figures
local csv = compare.csv_rows { c }
local row
for _, r in ipairs(csv) do
  if r.variant == "tuned" and r.metric == "iops" then row = r end
end
t.eq(row.n, 5, "csv: n")
t.eq(row.median, 1100, "csv: median")
t.near(row.change_ci_low, ti.change_ci_low, 1e-12, "csv: change_ci_low")
t.eq(row.verdict, "faster", "csv: verdict")
t.eq(row.standing, "best", "csv: standing")
t.eq(row.values, "1100;1140;1060;1115;1085", "csv: per-repetition values")
for _, column in ipairs { "n", "median", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high", "verdict",
  "values" } do
  local found = false
  for _, name in ipairs(compare.csv_columns) do found = found or name == column end
  t.ok(found, "comparison.csv has the column " .. column)
end

-- across two runs (s:compare{with=}): repetition numbers mean nothing to each other
local runs = {}
variant(runs, "x", base_iops, base_p50, "before")
variant(runs, "x", { 1100, 1140, 1060, 1115, 1085 }, base_p50, "after")
local rc = compare.build(runs, { by = "run", metrics = { "iops" } })
t.eq(rc.rows[2].stats.iops.paired, false, "two runs: unpaired")
t.near(rc.rows[2].stats.iops.change,
  stats.change(base_iops, { 1100, 1140, 1060, 1115, 1085 }, { paired = false }).change, 1e-9, "Welch's change")

-- one run each: said plainly, no interval, whole percent
local single = {}
variant(single, "base", { 1000 }, { 0.004 })
variant(single, "tuned", { 1234 }, { 0.003 })
local sc = compare.build(single, { by = "point", metrics = { "iops" } })
t.eq(sc.rows[2].stats.iops.n, 1, "n = 1")
t.eq(sc.rows[2].stats.iops.ci_low, nil, "no interval")
t.eq(sc.rows[2].stats.iops.change_ci_low, nil, "no interval of the change")
t.eq(sc.rows[2].stats.iops.verdict, "one run each: uncertainty unknown", "the verdict says so")
local single_text = table.concat(compare.lines(sc), "\n")
t.match(single_text, "^comparison by point %(baseline base, marked %*; one run each: the uncertainty of these " ..
  "changes is unknown, %-%-repeats N measures it%)\n", "the title says so")
t.match(single_text, "\nwrite  tuned   1234 %(%+23%%%)\n", "the change in whole percent")
t.match(single_text, "\nbest write: IOPS tuned %(one run each: which others are as good is unknown%)$",
  "no within-noise claim")

-- pooled percentiles: the exact merge of the repetitions' histograms, at run time
local null = require "cephmark.null"
local pooled_records = {}
local results = {}
for repetition = 1, 3 do
  for _, point in ipairs { { "one", "1ms" }, { "two", "2ms" } } do
    local bench = null.bench { threads = 2, ops = 40, delay = point[2], delay_max = "3ms", seed = repetition }
    local plain = { ops = bench.ops, iops = bench.iops, lat = { p50 = bench.lat.p50, p99 = bench.lat.p99 } }
    compare.keep_histogram(plain, bench)
    results[point[1]] = results[point[1]] or {}
    table.insert(results[point[1]], bench)
    index = index + 1
    pooled_records[#pooled_records + 1] = { index = index, name = "write", label = point[1], point = point[1],
      repetition = repetition, variant = { point = point[1] }, result = plain }
  end
end
local pc = compare.build(pooled_records, { by = "point", metrics = { "lat.p99" } })
local want = stats.pooled_percentiles(results.two)
t.ok(pc.rows[2].pooled ~= nil, "rows carry pooled percentiles")
t.eq(pc.rows[2].pooled.p99, want.p99, "the pooled p99 is the merged histogram's")
t.eq(pc.rows[2].pooled.count, 120, "of every repetition's ops")
t.match(table.concat(compare.lines(pc), "\n"), "pooled", "printed next to the medians")
local read_back = compare.build(records, { by = "point", metrics = { "lat.p99" } })
t.eq(read_back.rows[1].pooled, nil, "figures without histograms (read from results) have no pooled percentiles")

return t.done()
