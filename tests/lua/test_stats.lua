-- The statistics library (cephmark.stats) without a cluster: t quantiles against printed
-- tables, summaries, changes (paired, unpaired, missing repetitions), verdict words and
-- printed forms, the edge cases (no value, one, two, zeros, equal values, nan and inf
-- refused), the best point of a sweep, pooled percentiles through the engine's own
-- histograms on the null target; then the method proven by seeded simulation
-- (docs/statistics.md): coverage of the change interval at N = 3, 5 and 10 over skewed,
-- heavy-tailed and drifting figures, A/A, a known effect, and the smallest detectable change.
-- Deterministic: every simulated figure comes from a splitmix64 generator with a fixed seed.
local control = require "cephmark.control"
local null = require "cephmark.null"
local stats = require "cephmark.stats"
local t = require "cephmark.test"
local model = require "stats_model"

-- t quantiles, against the values printed in every statistics table
local printed = { { 1, 12.7062 }, { 2, 4.3027 }, { 3, 3.1824 }, { 4, 2.7764 }, { 9, 2.2622 }, { 29, 2.0452 } }
for _, row in ipairs(printed) do
  t.near(stats.t_quantile(0.975, row[1]), row[2], 1e-4, "t(0.975, " .. row[1] .. ")")
end
t.near(stats.t_quantile(0.8, 4), 0.9410, 1e-4, "t(0.80, 4)")
t.near(stats.t_quantile(0.975, 1e7), 1.95996, 1e-5, "a large df gives the normal quantile")
t.near(stats.t_quantile(0.025, 4), -2.7764, 1e-4, "lower quantiles by symmetry")
local fractional = stats.t_quantile(0.975, 2.5)
t.ok(fractional < 4.3027 and fractional > 3.1824, "a fractional df (Welch's) lies between its neighbours")
t.raises(function() stats.t_quantile(1, 3) end, "p must be a number between 0 and 1", "p = 1 refused")
t.raises(function() stats.t_quantile(0.9, 0) end, "df must be a positive finite number", "df = 0 refused")

-- ---------------------------------------------------------------- summary

local s = stats.summary { 100, 110, 90 }
t.eq(s.n, 3, "summary n")
t.eq(s.median, 100, "summary median")
t.eq(s.min, 90, "min")
t.eq(s.max, 110, "max")
t.eq(s.values[2], 110, "the values, in repetition order")
t.eq(s.repetitions[3], 3, "with their repetition numbers")
-- the t interval on the logs, computed here from its definition
local logs = { math.log(100), math.log(110), math.log(90) }
local mean = (logs[1] + logs[2] + logs[3]) / 3
local sd = math.sqrt(((logs[1] - mean) ^ 2 + (logs[2] - mean) ^ 2 + (logs[3] - mean) ^ 2) / 2)
t.near(s.ci_low, math.exp(mean - 4.30265 * sd / math.sqrt(3)), 1e-3, "ci_low: t interval on log values")
t.near(s.ci_high, math.exp(mean + 4.30265 * sd / math.sqrt(3)), 1e-3, "ci_high")
t.near(s.center, math.exp(mean), 1e-9, "center: the geometric mean")
t.near(s.spread, sd * 100, 1e-9, "spread: sd of the logs in percent")

local one = stats.summary { 42 }
t.eq(one.n, 1, "n = 1")
t.eq(one.median, 42, "n = 1 has a median")
t.eq(one.ci_low, nil, "n = 1: no interval (low)")
t.eq(one.ci_high, nil, "n = 1: no interval (high)")
local none = stats.summary {}
t.eq(none.n, 0, "n = 0")
t.eq(none.median, nil, "n = 0: no median")
local two = stats.summary { 10, 20 }
t.eq(two.median, 15, "n = 2: the median of two is their middle")
t.ok(two.ci_low < 10 and two.ci_high > 20, "n = 2: a wide interval, 12.7 standard errors each side")
local flat = stats.summary { 5, 5, 5 }
t.near(flat.ci_low, 5, 1e-12, "zero spread: the interval is the value (low)")
t.near(flat.ci_high, 5, 1e-12, "zero spread: the interval is the value (high)")
local zeros = stats.summary { 0, 0, 0 }
t.eq(zeros.median, 0, "zeros: median 0")
t.eq(zeros.ci_low, 0, "zeros: interval [0, 0] (low)")
t.eq(zeros.ci_high, 0, "zeros: interval [0, 0] (high)")
local errors = stats.summary { 0, 0, 3 }
t.eq(errors.method, "t on values", "a figure of 0 takes the t interval on the values")
t.eq(errors.ci_low, 0, "counts that cannot be negative: the interval stops at 0")
t.ok(errors.ci_high > 3, "and reaches above the largest count")
local keyed = stats.summary { [1] = 10, [3] = 30, ["4"] = 40 }
t.eq(keyed.n, 3, "a table keyed by repetition, with a hole")
t.eq(table.concat(keyed.repetitions, ","), "1,3,4", "repetition numbers kept, decimal string keys read")
t.eq(keyed.values[2], 30, "values follow the repetitions")
t.raises(function() stats.summary { 1, 0 / 0, 3 } end, "the value of repetition 2 is nan, expected a finite number",
  "nan refused")
t.raises(function() stats.summary { 1, math.huge } end, "the value of repetition 2 is inf", "inf refused")
t.raises(function() stats.summary { -math.huge } end, "is -inf", "-inf refused")
t.raises(function() stats.summary { "12" } end, "the value of repetition 1 is a string", "strings refused")
t.raises(function() stats.summary(12) end, "expected a table of per-repetition values, got number", "not a table")
t.raises(function() stats.summary { x = 1 } end, "key \"x\" is not a repetition number", "a name is no repetition")
t.raises(function() stats.summary { [1] = 1, ["1"] = 2 } end, "repetition 1 is given twice", "1 and \"1\"")

-- ---------------------------------------------------------------- change

-- paired: log ratios ln(1.1) + {-1, 0, +1} * 0.02, whose interval is known in closed form
local base = { 100, 200, 400 }
local new = {}
for i, k in ipairs { -1, 0, 1 } do new[i] = base[i] * 1.1 * math.exp(0.02 * k) end
local c = stats.change(base, new)
t.eq(c.paired, true, "same repetitions: paired")
t.eq(c.n, 3, "three pairs")
t.eq(c.method, "paired t on log ratios", "method named")
t.near(c.change, 10, 1e-9, "change: +10 %")
local half = 4.30265 * 0.02 / math.sqrt(3)
t.near(c.change_ci_low, (1.1 * math.exp(-half) - 1) * 100, 1e-3, "change_ci_low")
t.near(c.change_ci_high, (1.1 * math.exp(half) - 1) * 100, 1e-3, "change_ci_high")
t.near(c.half_width, (c.change_ci_high - c.change_ci_low) / 2, 1e-12, "half_width")
t.eq(c.direction, "up", "above 0: up")
t.near(c.mde, (math.exp((4.30265 + 1.06066) * 0.02 / math.sqrt(3)) - 1) * 100, 1e-3,
  "mde: (t(0.975, 2) + t(0.80, 2)) standard errors")
t.eq(c.power, 0.8, "the power of the mde is stated")
t.eq(stats.verdict(c, "rate"), "faster", "rate up: faster")
t.eq(stats.verdict(c, "latency"), "higher", "latency up: higher")
local down = stats.change(new, base)
t.eq(down.direction, "down", "the other way: down")
t.eq(stats.verdict(down, "rate"), "slower", "rate down: slower")
t.eq(stats.verdict(down, "latency"), "lower", "latency down: lower")
t.raises(function() stats.verdict(c, "iops") end, "metric kind must be 'rate' or 'latency', got iops", "bad kind")

-- a shared drift is cancelled by pairing, not by Welch
local drifting_base, drifting_new = { 100, 150, 80, 120 }, {}
for i, v in ipairs(drifting_base) do drifting_new[i] = v * 1.05 * (i % 2 == 0 and 1.001 or 0.999) end
local paired_drift = stats.change(drifting_base, drifting_new)
local welch_drift = stats.change(drifting_base, drifting_new, { paired = false })
t.eq(paired_drift.direction, "up", "paired: +5 % seen through a drift of -20 % .. +50 %")
t.eq(welch_drift.direction, "none", "unpaired: the drift hides it")
t.eq(welch_drift.paired, false, "paired = false honoured")
t.eq(welch_drift.method, "Welch t on log values", "Welch named")

-- Welch at equal spreads and n: df = 2n - 2
local wb, wn = { 90, 100, 110 }, { 99, 110, 121 }
local welch = stats.change(wb, wn, { paired = false })
t.near(welch.df, 4, 1e-9, "Welch df at equal spreads: 2n - 2")
local lb = { math.log(90), math.log(100), math.log(110) }
local lm = (lb[1] + lb[2] + lb[3]) / 3
local lsd = math.sqrt(((lb[1] - lm) ^ 2 + (lb[2] - lm) ^ 2 + (lb[3] - lm) ^ 2) / 2)
local welch_half = 2.77645 * lsd * math.sqrt(2 / 3)
t.near(welch.change, 10, 1e-9, "Welch change +10 %")
t.near(welch.change_ci_high, (1.1 * math.exp(welch_half) - 1) * 100, 1e-3, "Welch interval")

-- missing repetitions: the pairs both sides have
local gappy = stats.change({ [1] = 100, [2] = 100, [3] = 120, [4] = 90 }, { [1] = 110, [2] = 111, [4] = 99 })
t.eq(gappy.paired, true, "missing repetition: still paired")
t.eq(gappy.n, 3, "on the 3 repetitions both sides have")
t.eq(gappy.n_base, 4, "n_base counts every baseline value")
local disjoint = stats.change({ [1] = 100, [2] = 104 }, { [3] = 110, [4] = 112 })
t.eq(disjoint.paired, false, "no common repetition: unpaired")
t.ok(disjoint.change_ci_low ~= nil, "still an interval from Welch")
local one_common = stats.change({ [1] = 100, [2] = 104, [3] = 98 }, { [3] = 110, [4] = 112, [5] = 108 })
t.eq(one_common.paired, false, "one common repetition is no pairing")

-- n = 1 and n = 2
local single = stats.change({ 100 }, { 112 })
t.eq(single.direction, "unknown", "n = 1: direction unknown")
t.near(single.change, 12, 1e-9, "n = 1: the change is still the point figure")
t.eq(single.change_ci_low, nil, "n = 1: no interval")
t.eq(single.mde, nil, "n = 1: no mde")
t.eq(stats.verdict(single, "rate"), "one run each: uncertainty unknown", "n = 1 says so plainly")
t.eq(stats.format_change(single), "+12 % [-, -]", "n = 1: no decimals, no interval")
t.eq(stats.verdict(stats.change({ 100 }, { 100, 101 }, { paired = false }), "rate"),
  "one run of the baseline: uncertainty unknown", "one baseline run")
t.eq(stats.verdict(stats.change({ 100, 101 }, { 100 }, { paired = false }), "latency"),
  "one run of this variant: uncertainty unknown", "one run of the variant")
local pair = stats.change({ 100, 102 }, { 110, 113 })
t.eq(pair.df, 1, "n = 2 paired: df 1")
t.ok(pair.change_ci_low ~= nil and pair.change_ci_high > pair.change_ci_low, "n = 2: an interval")
local empty = stats.change({}, { 1, 2 })
t.eq(empty.direction, "unknown", "no baseline values")
t.eq(stats.verdict(empty, "rate"), "nothing to compare: no values", "said plainly")
t.eq(stats.format_change(empty), "- [-, -]", "all pieces unknown")

-- equal values and zeros
local same = stats.change({ 7, 7, 7 }, { 7, 7, 7 })
t.eq(same.change, 0, "equal values: change 0")
t.eq(same.half_width, 0, "of no width")
t.eq(same.direction, "none", "no direction")
t.eq(stats.verdict(same, "rate"), "no difference detectable (±0.0 %)", "said with the precision of equal values")
local exact = stats.change({ 100, 100, 100 }, { 110, 110, 110 })
t.eq(exact.direction, "up", "a change without spread is a change")
t.eq(stats.format_change(exact), "+10.0 % [+10.0, +10.0]", "printed with one decimal")
local zero_zero = stats.change({ 0, 0, 0 }, { 0, 0, 0 })
t.eq(zero_zero.change, 0, "zeros against zeros: no change")
t.eq(zero_zero.direction, "none", "and no difference")
local zero_some = stats.change({ 0, 1, 2 }, { 1, 2, 3 })
t.eq(zero_some.direction, "unknown", "a figure of 0: no ratio interval")
t.match(zero_some.reason, "not all positive", "the reason is given")
t.eq(zero_some.change, 100, "the change of the medians, when the baseline's is positive")
t.eq(stats.verdict(zero_some, "rate"), "no ratio (figures of 0): uncertainty unknown", "said plainly")
t.eq(stats.change({ 0, 0 }, { 1, 2 }).change, nil, "no percentage against 0")

-- refused input
t.raises(function() stats.change({ 1, 2 }, { 1, 0 / 0 }) end, "stats.change (new): the value of repetition 2 is nan",
  "nan refused")
t.raises(function() stats.change({ math.huge, 2 }, { 1, 2 }) end,
  "stats.change (base): the value of repetition 1 is inf",
  "inf refused")
t.raises(function() stats.change({ 1, 2 }, { 1, 2 }, { pared = false }) end, "unknown option 'pared'",
  "options checked")
t.raises(function() stats.change({ 1, 2 }, { 1, 2 }, { paired = "no" }) end, "paired must be true or false",
  "paired checked")

-- ---------------------------------------------------------------- printed forms

local function shaped(change, low, high)
  return { change = change, change_ci_low = low, change_ci_high = high, half_width = (high - low) / 2,
    direction = (low > 0 and "up") or (high < 0 and "down") or "none", n_base = 5, n_new = 5 }
end
t.eq(stats.format_change(shaped(12.4, 6.1, 18.0)), "+12 % [+6, +18]", "an interval 12 % wide: no decimals")
t.eq(stats.format_change(shaped(12.44, 10.0, 14.9)), "+12.4 % [+10.0, +14.9]", "4.9 % wide: one decimal")
t.eq(stats.format_change(shaped(-3.214, -3.5, -2.9)), "-3.21 % [-3.50, -2.90]", "0.6 % wide: two decimals")
t.eq(stats.format_change(shaped(1.2345, 1.2341, 1.2349)), "+1.234 % [+1.234, +1.235]", "at most three decimals")
t.eq(stats.format_change(shaped(-0.02, -3.3, 3.1)), "+0.0 % [-3.3, +3.1]", "never -0.0")
t.eq(stats.verdict(shaped(1.1, -7.2, 9.4), "rate"), "no difference detectable (±8 %)", "± half-width, as supported")
t.eq(stats.verdict(shaped(0.5, -2.1, 3.1), "latency"), "no difference detectable (±2.6 %)",
  "with a decimal when 5 % wide")
t.raises(function() stats.format_change(nil) end, "expected the table of stats.change, got nil",
  "format_change checked")

-- the smallest detectable change, as tabulated in docs/statistics.md
t.near(stats.detectable(5, 3), (math.exp((2.77645 + 0.94096) * 0.03 * math.sqrt(2 / 5)) - 1) * 100, 1e-3,
  "detectable(5, 3 %)")
t.ok(stats.detectable(10, 3) < stats.detectable(5, 3), "more repetitions detect less")
t.raises(function() stats.detectable(1, 3) end, "n must be an integer of 2 or more", "detectable(1) refused")

t.eq(stats.kind_of("bandwidth_mib"), "rate", "bandwidth is a rate")
t.eq(stats.kind_of("iops"), "rate", "IOPS is a rate")
t.eq(stats.kind_of("lat.p99"), "latency", "lat.p99 is a latency")
t.eq(stats.kind_of("ttfb.p50"), "latency", "ttfb is a latency")
t.eq(stats.kind_of("iops_stddev"), nil, "a spread is neither")
t.eq(stats.kind_of("errors"), nil, "a count is neither")

-- ---------------------------------------------------------------- best point of a sweep

local points = {
  stats.summary { 100, 102, 98, 101, 99 },
  stats.summary { 150, 149, 152, 151, 148 }, -- the best
  stats.summary { 147, 150, 149, 153, 146 }, -- within noise of it
  stats.summary { 120, 121, 119, 122, 118 },
}
local best, as_good = stats.best(points, "rate")
t.eq(best, 2, "best rate: the highest median")
t.eq(table.concat(as_good, ","), "2,3", "as good as the best: itself and the point within noise")
local lowest, lows = stats.best(points, "latency")
t.eq(lowest, 1, "best latency: the lowest median")
t.eq(table.concat(lows, ","), "1", "nothing else as low")
local singles = { stats.summary { 10 }, stats.summary { 12 }, stats.summary { 12 }, stats.summary {} }
local single_best, single_set = stats.best(singles, "rate")
t.eq(single_best, 2, "one repetition per point: still a best point")
t.eq(table.concat(single_set, ","), "2,3", "and only exact ties beside it")
local nobody, nothing = stats.best({ stats.summary {} }, "rate")
t.eq(nobody, nil, "no median anywhere: no best")
t.eq(#nothing, 0, "and an empty list")
t.raises(function() stats.best({ 5 }, "rate") end, "point 1 is a number, expected a stats.summary result",
  "points checked")
-- paired by repetition when the summaries come from the same run: a drift shared by the
-- points of a repetition does not hide a 3 % difference
local drift = { 1.0, 1.4, 0.7, 1.2, 0.9 }
local run_a, run_b = {}, {}
for i, d in ipairs(drift) do
  run_a[i] = 100 * d * (1 + 0.002 * (i % 2))
  run_b[i] = 103 * d * (1 - 0.002 * (i % 2))
end
local _, drifted = stats.best({ stats.summary(run_a), stats.summary(run_b) }, "rate")
t.eq(table.concat(drifted, ","), "2", "paired by repetition: 3 % apart through the drift")
local _, unpaired_set = stats.best({ stats.summary(run_a), stats.summary(run_b) }, "rate", { paired = false })
t.eq(table.concat(unpaired_set, ","), "1,2", "unpaired, the drift hides it")

-- ---------------------------------------------------------------- pooled percentiles

local fast = null.bench { threads = 1, ops = 200, delay = 0.001 }
local slow = null.bench { threads = 4, ops = 600, delay = 0.004 }
local pooled, merged = stats.pooled_percentiles(fast, slow)
t.eq(pooled.count, 800, "pooled: every op of both repetitions")
t.eq(pooled.max, math.max(fast.lat.max, slow.lat.max), "pooled max: the larger max")
t.eq(pooled.min, math.min(fast.lat.min, slow.lat.min), "pooled min: the smaller min")
t.ok(pooled.p50 >= 0.004 * 0.999, "pooled p50: 600 of 800 ops took at least 4 ms (less the histogram's 0.1 %)")
local direct = control.merge_histograms { control.histogram(fast), control.histogram(slow) }
for _, key in ipairs { "p50", "p90", "p99", "p99_9", "avg", "stddev" } do
  t.eq(pooled[key], direct[key], "the exact merge of runtime/hist.c: " .. key)
end
t.eq(type(merged), "string", "and the merged histogram, encoded")
local listed = stats.pooled_percentiles { fast, control.histogram(slow) }
t.eq(listed.p99, pooled.p99, "a list of results and encoded histograms gives the same")
t.eq(stats.pooled_percentiles(fast).p99, fast.lat.p99, "one repetition pools to itself")
t.raises(function() stats.pooled_percentiles({ lat = { p50 = 1 } }) end, "result 1 has no histogram",
  "a result read back from a file has none")
t.raises(function() stats.pooled_percentiles(fast, 5) end, "argument 2 is a number", "bad argument")
t.raises(function() stats.pooled_percentiles("garbage") end, "histogram 1 cannot be merged", "a bad histogram")

-- ---------------------------------------------------------------- proof by simulation

-- The model and the true value of each simulation: tests/lua/stats_model.lua.
local g = model.generator(19)
for _, family in ipairs(model.families) do
  for _, paired in ipairs { true, false } do
    for _, n in ipairs { 3, 5, 10 } do
      local covered, none = model.coverage(g, family, n, paired, 1000)
      local label = string.format("%s, %s, N = %d", family.name, paired and "paired" or "unpaired", n)
      print(string.format("coverage %.3f  A/A no difference %.3f  %s", covered, none, label))
      t.ok(covered >= 0.92 and covered <= 0.98, string.format("coverage %.3f in [0.92, 0.98]: %s", covered, label))
      t.ok(none >= 0.90, string.format("A/A no difference detectable %.3f >= 0.90: %s", none, label))
    end
  end
end

-- A known effect: 10 % at a 3 % spread (each variant's figures: sd of the logs 0.03),
-- N = 5, detected in the right direction. Interleaved in one run, a quarter of the
-- variance shared by the variants of a repetition (paired); as two separate runs
-- (unpaired); and paired with nothing shared, where pairing only costs degrees of freedom
-- (4 instead of about 8), with 4000 experiments for a figure (95.6 %) this close to 95 %.
local function known_effect(ratio, paired, shared, experiments)
  local detected, want = 0, ratio > 1 and "up" or "down"
  local shared_sd, own_sd = 0.03 * math.sqrt(shared), 0.03 * math.sqrt(1 - shared)
  for _ = 1, experiments do
    local base_values, new_values = {}, {}
    for i = 1, 5 do
      local drift = math.exp(shared_sd * g.normal())
      local other = paired and drift or math.exp(shared_sd * g.normal())
      base_values[i] = 100 * drift * math.exp(own_sd * g.normal())
      new_values[i] = 100 * ratio * other * math.exp(own_sd * g.normal())
    end
    if stats.change(base_values, new_values, { paired = paired }).direction == want then detected = detected + 1 end
  end
  return detected / experiments
end
for _, case in ipairs {
  { "interleaved (paired, 1/4 of the variance shared)", true, 0.25, 1000 },
  { "separate runs (unpaired)", false, 0, 1000 },
  { "paired, nothing shared", true, 0, 4000 },
} do
  for _, ratio in ipairs { 1.10, 1 / 1.10 } do
    local rate = known_effect(ratio, case[2], case[3], case[4])
    local label = string.format("%+.1f %% at 3 %%, N = 5, %s", (ratio - 1) * 100, case[1])
    print(string.format("known effect detected %.3f  %s", rate, label))
    t.ok(rate >= 0.95, string.format("known effect detected in the right direction %.3f >= 0.95: %s", rate, label))
  end
end

-- Pairing cancels a drift: +10 % under a drift of 20 % shared by both variants of a
-- repetition, N = 5, spread 3 %.
local function drift_case(paired)
  local detected = 0
  for _ = 1, 1000 do
    local base_values, new_values = {}, {}
    for i = 1, 5 do
      local drift = math.exp(0.2 * g.normal())
      base_values[i] = 100 * drift * math.exp(0.03 * g.normal())
      new_values[i] = 110 * drift * math.exp(0.03 * g.normal())
    end
    if stats.change(base_values, new_values, { paired = paired }).direction == "up" then detected = detected + 1 end
  end
  return detected / 1000
end
local with_pairs, without_pairs = drift_case(true), drift_case(false)
print(string.format("+10 %% under a shared 20 %% drift, N = 5: paired detects %.3f, unpaired %.3f", with_pairs,
  without_pairs))
t.ok(with_pairs >= 0.90, "pairing cancels a shared drift (95.6 % expected, as with nothing shared)")
t.ok(without_pairs < 0.5, "which hides the change from an unpaired comparison")

-- The smallest detectable change is what it says: a true change of stats.detectable(n, 5)
-- at a 5 % spread is detected in about 80 % of experiments (paired: 77 % at N = 3, where
-- the shifted-t approximation of the power is rough; unpaired above, Welch's df being at
-- least n - 1).
for _, n in ipairs { 3, 5, 10 } do
  local mde = stats.detectable(n, 5)
  for _, paired in ipairs { true, false } do
    local detected = 0
    for _ = 1, 1000 do
      local base_values, new_values = {}, {}
      for i = 1, n do
        base_values[i] = 100 * math.exp(0.05 * g.normal())
        new_values[i] = 100 * (1 + mde / 100) * math.exp(0.05 * g.normal())
      end
      if stats.change(base_values, new_values, { paired = paired }).direction == "up" then detected = detected + 1 end
    end
    local label = string.format("N = %d, %s, mde %.1f %%", n, paired and "paired" or "unpaired", mde)
    print(string.format("detected at the mde %.3f  %s", detected / 1000, label))
    t.ok(detected >= 720 and (not paired or detected <= 880), string.format("detection at the mde %.3f: %s",
      detected / 1000, label))
  end
end

-- A variant's own interval: exact for lognormal figures (the true value: their median,
-- exp(mu), also their geometric mean)
for _, n in ipairs { 3, 5, 10 } do
  local covered = 0
  for _ = 1, 1000 do
    local values = {}
    for i = 1, n do values[i] = 200 * math.exp(0.3 * g.normal()) end
    local summary = stats.summary(values)
    if summary.ci_low <= 200 and 200 <= summary.ci_high then covered = covered + 1 end
  end
  print(string.format("summary coverage %.3f  lognormal sigma 0.3, N = %d", covered / 1000, n))
  t.ok(covered >= 920 and covered <= 980, string.format("summary coverage %.3f, N = %d", covered / 1000, n))
end

-- ... and its limit (docs/statistics.md): when the log values are skewed (a Pareto tail,
-- whose logs are exponential), the t interval covers their geometric mean
-- (200 * exp(1 / 1.5)) less often than 95 %. Comparisons are not affected: the difference
-- of two sides' log values with the same skew is symmetric (the coverage above).
for _, n in ipairs { 3, 10 } do
  local covered, truth = 0, 200 * math.exp(1 / 1.5)
  for _ = 1, 1000 do
    local values = {}
    for i = 1, n do values[i] = 200 * g.uniform() ^ (-1 / 1.5) end
    local summary = stats.summary(values)
    if summary.ci_low <= truth and truth <= summary.ci_high then covered = covered + 1 end
  end
  print(string.format("summary coverage %.3f  Pareto tail alpha 1.5, N = %d (documented limit)", covered / 1000, n))
  t.ok(covered >= 850 and covered <= 930, string.format("Pareto summary coverage %.3f as documented, N = %d",
    covered / 1000, n))
end

return t.done()
