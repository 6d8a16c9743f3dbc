-- Statistics over repetitions: per variant, the median and a 95 % interval of one metric's
-- per-repetition figures; per comparison, the change against a baseline with its 95 %
-- interval, the smallest change the repetitions could detect, a verdict word and its
-- printed form; the best point of a sweep and the points that cannot be told from it; and
-- pooled latency percentiles from the exact merge of the repetitions' histograms.
-- The method (t intervals on log values, paired by repetition where both sides ran in the
-- same one), its assumptions and its proof by seeded simulation: docs/statistics.md.
--
--   stats.summary(values) -> {n, median, ci_low, ci_high, values, repetitions, ...}
--   stats.change(base, new [, {paired = false}]) -> {n, paired, change, change_ci_low,
--     change_ci_high, half_width, mde, direction, ...}      (percent: +10 = 10 % more)
--   stats.verdict(change, "rate" | "latency") -> "faster", ..., "no difference detectable (±8 %)"
--   stats.format_change(change) -> "+12 % [+6, +18]"
--   stats.best(summaries, "rate" | "latency") -> best index, {indexes as good as the best}
--   stats.pooled_percentiles(result_or_histogram, ...) -> latency table, merged histogram
--   stats.detectable(n, spread_percent) -> the smallest change n repetitions detect
--   stats.t_quantile(p, df)

local M = {}

-- The levels every figure uses, fixed (the verdicts and docs/statistics.md say 95 %):
M.confidence = 0.95 -- two-sided level of every interval
M.power = 0.80 -- the chance of detecting a change of exactly `mde`

local log, exp, sqrt, abs, floor = math.log, math.exp, math.sqrt, math.abs, math.floor

-- ---------------------------------------------------------------- Student's t distribution

-- log Gamma(x), x > 0: Stirling's series, after shifting x up to 8 or more where the series'
-- next term is below 1e-11.
local function log_gamma(x)
  local shift = 0
  while x < 8 do
    shift = shift + log(x)
    x = x + 1
  end
  local inverse = 1 / x
  local square = inverse * inverse
  local series = inverse * (1 / 12 - square * (1 / 360 - square * (1 / 1260 - square / 1680)))
  return (x - 0.5) * log(x) - x + 0.5 * log(2 * math.pi) + series - shift
end

-- The continued fraction of the incomplete beta function (DLMF 8.17.22), evaluated with the
-- modified Lentz method; it converges fast for x < (a + 1) / (a + b + 2).
local function beta_fraction(a, b, x)
  local tiny = 1e-300
  local function guard(value)
    if abs(value) < tiny then return tiny end
    return value
  end
  local c = 1
  local d = 1 / guard(1 - (a + b) * x / (a + 1))
  local fraction = d
  for m = 1, 500 do
    local m2 = 2 * m
    local even = m * (b - m) * x / ((a + m2 - 1) * (a + m2))
    d = 1 / guard(1 + even * d)
    c = guard(1 + even / c)
    fraction = fraction * d * c
    local odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))
    d = 1 / guard(1 + odd * d)
    c = guard(1 + odd / c)
    local step = d * c
    fraction = fraction * step
    if abs(step - 1) < 1e-15 then break end
  end
  return fraction
end

-- The regularized incomplete beta function I_x(a, b); log_beta = log B(a, b), which a
-- quantile search computes once for all its steps.
local function regularized_beta(a, b, x, log_beta)
  if x <= 0 then return 0 end
  if x >= 1 then return 1 end
  local front = exp(a * log(x) + b * log(1 - x) - log_beta)
  if x < (a + 1) / (a + b + 2) then return front * beta_fraction(a, b, x) / a end
  return 1 - front * beta_fraction(b, a, 1 - x) / b
end

-- A start for the quantile search: the normal quantile (Abramowitz and Stegun 26.2.23)
-- widened by the first terms of the Cornish-Fisher expansion of t.
local function t_start(q, df)
  local w = sqrt(-2 * log(q))
  local z = w - (2.515517 + w * (0.802853 + w * 0.010328)) /
    (1 + w * (1.432788 + w * (0.189269 + w * 0.001308)))
  return z + (z ^ 3 + z) / (4 * df) + (5 * z ^ 5 + 16 * z ^ 3 + 3 * z) / (96 * df * df)
end

-- Quantiles are asked for over and over with the same few (p, df): every paired comparison
-- of N repetitions uses df = N - 1. The cache is dropped when Welch's fractional df fill it.
local quantile_cache, cached = {}, 0

-- t_quantile(p, df) -> t such that P(T <= t) = p for Student's t with df degrees of freedom
-- (df need not be whole: Welch's is not). Newton's method on the upper tail
-- P(T > t) = I_(df / (df + t^2))(df / 2, 1 / 2) / 2, kept inside a bracket that bisection
-- narrows when a step would leave it.
function M.t_quantile(p, df)
  if type(p) ~= "number" or not (p > 0 and p < 1) then
    error("stats.t_quantile: p must be a number between 0 and 1, got " .. tostring(p), 2)
  end
  if type(df) ~= "number" or not (df > 0 and df < math.huge) then
    error("stats.t_quantile: df must be a positive finite number, got " .. tostring(df), 2)
  end
  if p < 0.5 then return -M.t_quantile(1 - p, df) end
  if p == 0.5 then return 0 end
  local by_df = quantile_cache[p]
  if by_df and by_df[df] then return by_df[df] end
  local q, a = 1 - p, df / 2
  local log_beta = log_gamma(a) + log_gamma(0.5) - log_gamma(a + 0.5)
  local function upper_tail(t) return 0.5 * regularized_beta(a, 0.5, df / (df + t * t), log_beta) end
  -- the density, with its constant factor 1 / (sqrt(df) B(df / 2, 1 / 2))
  local density_log_constant = -0.5 * log(df) - log_beta
  local function density(t) return exp(density_log_constant - (df + 1) / 2 * log(1 + t * t / df)) end
  local start = t_start(q, df)
  local low, high = 0, math.max(1, 2 * start)
  while upper_tail(high) > q do
    low, high = high, high * 2
  end
  local t = math.min(math.max(start, low), high)
  for _ = 1, 200 do
    local excess = upper_tail(t) - q
    if excess > 0 then low = t else high = t end
    local step = excess / density(t)
    if abs(step) <= 1e-12 * t then break end
    local next_t = t + step
    if not (next_t > low and next_t < high) then next_t = (low + high) / 2 end
    t = next_t
    if high - low <= 1e-12 * t then break end
  end
  if cached >= 4096 then quantile_cache, cached = {}, 0 end
  quantile_cache[p] = quantile_cache[p] or {}
  quantile_cache[p][df] = t
  cached = cached + 1
  return t
end

-- ---------------------------------------------------------------- values

local function describe(value)
  if value ~= value then return "nan" end
  if value == math.huge then return "inf" end
  if value == -math.huge then return "-inf" end
  return tostring(value)
end

-- collect(values, who, level) -> values in repetition order, their repetition numbers, and
-- the table repetition -> value. A list is a table keyed 1..n, so it reads the same way;
-- keys may also be decimal strings, as a JSON object's keys come back. Raises on anything
-- that is not a finite number under a repetition number.
local function collect(values, who, level)
  if type(values) ~= "table" then
    error(string.format("%s: expected a table of per-repetition values, got %s", who, type(values)), level)
  end
  local repetitions, by_repetition = {}, {}
  for key, value in pairs(values) do
    local repetition = key
    if type(key) == "string" and key:match("^%d+$") then repetition = math.tointeger(tonumber(key)) end
    if math.type(repetition) ~= "integer" or repetition < 1 then
      error(string.format("%s: key %q is not a repetition number (expected a list, or a table keyed 1, 2, ...)",
        who, tostring(key)), level)
    end
    if type(value) ~= "number" then
      error(string.format("%s: the value of repetition %d is a %s, expected a finite number", who, repetition,
        type(value)), level)
    end
    if value ~= value or value == math.huge or value == -math.huge then
      error(string.format("%s: the value of repetition %d is %s, expected a finite number", who, repetition,
        describe(value)), level)
    end
    if by_repetition[repetition] ~= nil then
      error(string.format("%s: repetition %d is given twice", who, repetition), level)
    end
    by_repetition[repetition] = value
    repetitions[#repetitions + 1] = repetition
  end
  table.sort(repetitions)
  local list = {}
  for i, repetition in ipairs(repetitions) do list[i] = by_repetition[repetition] end
  return list, repetitions, by_repetition
end

local function median_of(list)
  local sorted = table.move(list, 1, #list, 1, {})
  table.sort(sorted)
  local n = #sorted
  if n == 0 then return nil, sorted end
  if n % 2 == 1 then return sorted[(n + 1) // 2], sorted end
  return (sorted[n // 2] + sorted[n // 2 + 1]) / 2, sorted
end

-- mean and sample standard deviation, in two passes (the spread of log values is small
-- against their mean; one pass would lose it)
local function mean_sd(list)
  local n, sum = #list, 0
  for i = 1, n do sum = sum + list[i] end
  local mean = sum / n
  if n < 2 then return mean, nil end
  local squares = 0
  for i = 1, n do squares = squares + (list[i] - mean) ^ 2 end
  return mean, sqrt(squares / (n - 1))
end

local function logs_of(list)
  local logs = {}
  for i = 1, #list do logs[i] = log(list[i]) end
  return logs
end

local function all_positive(list)
  for i = 1, #list do
    if list[i] <= 0 then return false end
  end
  return true
end

local t_critical_p, power = 1 - (1 - M.confidence) / 2, M.power

-- summary(values) -> {n, median, ci_low, ci_high, center, spread, min, max, method, values,
-- repetitions}. values: one metric's figures, a list or a table keyed by repetition.
-- The interval is a t interval on the log values, so for the geometric mean of the figures
-- (the median, when the spread is symmetric on a log scale); `center` is that geometric
-- mean and `spread` the standard deviation of the log values in percent (about the
-- coefficient of variation). Figures that are not all positive (error counts) get a t
-- interval on the values themselves, around their mean, not below 0 when none is negative.
-- n = 1 gives no interval; n = 0 no median either.
function M.summary(values)
  local list, repetitions = collect(values, "stats.summary", 3)
  local n = #list
  local result = { n = n, values = list, repetitions = repetitions }
  if n == 0 then return result end
  local median, sorted = median_of(list)
  result.median, result.min, result.max = median, sorted[1], sorted[n]
  if n < 2 then
    result.center = list[1]
    return result
  end
  local t = M.t_quantile(t_critical_p, n - 1)
  if sorted[1] > 0 then
    local mean, sd = mean_sd(logs_of(list))
    local half = t * sd / sqrt(n)
    result.center, result.ci_low, result.ci_high = exp(mean), exp(mean - half), exp(mean + half)
    result.spread = sd * 100
    result.method = "t on log values"
  else
    local mean, sd = mean_sd(list)
    local half = t * sd / sqrt(n)
    result.center, result.ci_low, result.ci_high = mean, mean - half, mean + half
    if sorted[1] >= 0 and result.ci_low < 0 then result.ci_low = 0 end
    if mean ~= 0 then result.spread = sd / abs(mean) * 100 end
    result.method = "t on values"
  end
  return result
end

-- ---------------------------------------------------------------- change

local function percent(log_ratio) return (exp(log_ratio) - 1) * 100 end

-- The interval of a mean log ratio `estimate` with standard error `se` and df degrees of
-- freedom, stored in `result` in percent, with the smallest change detectable at this
-- standard error: a true change of `mde` gives an interval above 0 with probability M.power
-- (one-sided shift of the t statistic: t_(1-alpha/2) + t_(power)).
local function fill_interval(result, estimate, se, df)
  local t = M.t_quantile(t_critical_p, df)
  result.df = df
  result.change = percent(estimate)
  result.change_ci_low = percent(estimate - t * se)
  result.change_ci_high = percent(estimate + t * se)
  result.half_width = (result.change_ci_high - result.change_ci_low) / 2
  result.mde = percent((t + M.t_quantile(power, df)) * se)
  if result.change_ci_low > 0 then
    result.direction = "up"
  elseif result.change_ci_high < 0 then
    result.direction = "down"
  else
    result.direction = "none"
  end
end

local function paired_change(result, base_values, new_values)
  local ratios = {}
  for i = 1, #base_values do ratios[i] = log(new_values[i]) - log(base_values[i]) end
  local n = #ratios
  local mean, sd = mean_sd(ratios)
  result.n, result.paired, result.method = n, true, "paired t on log ratios"
  result.spread = sd * 100
  fill_interval(result, mean, sd / sqrt(n), n - 1)
end

-- Welch's t on the two sides' log values; its df comes from the two variances, and falls
-- back to the side that has spread when the other has none.
local function welch_change(result, base_values, new_values)
  local base_mean, base_sd = mean_sd(logs_of(base_values))
  local new_mean, new_sd = mean_sd(logs_of(new_values))
  local nb, nn = #base_values, #new_values
  local vb, vn = base_sd ^ 2 / nb, new_sd ^ 2 / nn
  local se = sqrt(vb + vn)
  local df
  if vb + vn == 0 then
    df = nb + nn - 2
  else
    df = (vb + vn) ^ 2 / (vb ^ 2 / (nb - 1) + vn ^ 2 / (nn - 1))
    -- rounded down to 0.01, so that t quantiles repeat and come from the cache: a lower df
    -- only widens the interval, here by under 0.2 %
    df = math.max(floor(df * 100) / 100, math.min(nb, nn) - 1)
  end
  result.n, result.paired, result.method = math.min(nb, nn), false, "Welch t on log values"
  fill_interval(result, new_mean - base_mean, se, df)
end

local function all_equal(list, value)
  for i = 1, #list do
    if list[i] ~= value then return false end
  end
  return true
end

-- change(base, new [, options]) -> the change of `new` against `base` in percent
-- ((new - base) / base * 100) with its 95 % interval, the smallest detectable change (`mde`,
-- at M.power) and a direction: "up" or "down" when the interval excludes 0 on that side,
-- "none" when it includes 0, "unknown" when it cannot be computed (fewer than 2 values on a
-- side, or figures that are not all positive: then `reason` says which).
-- base, new: lists or tables keyed by repetition number. By default the repetitions both
-- sides have are paired (the interval of the mean log ratio of the pairs), which cancels
-- what a repetition shares (the cluster's state, the time of day); with fewer than 2 common
-- repetitions, or options.paired = false (two runs, e.g. two results folders, whose
-- repetition numbers mean nothing to each other), Welch's interval of the difference of
-- the mean log values. A list is a table keyed 1..n: lists from two different runs need
-- paired = false, or they are paired by position (still a valid interval, a wider one).
function M.change(base, new, options)
  if options ~= nil and type(options) ~= "table" then
    error("stats.change: options must be a table such as {paired = false}, got " .. type(options), 2)
  end
  options = options or {}
  for key in pairs(options) do
    if key ~= "paired" then
      error(string.format("stats.change: unknown option '%s' (options: paired)", tostring(key)), 2)
    end
  end
  if options.paired ~= nil and type(options.paired) ~= "boolean" then
    error("stats.change: paired must be true or false, got " .. tostring(options.paired), 2)
  end
  local base_list, base_repetitions = collect(base, "stats.change (base)", 3)
  local new_list, _, new_by_repetition = collect(new, "stats.change (new)", 3)
  local result = { n_base = #base_list, n_new = #new_list, paired = false, direction = "unknown",
    confidence = M.confidence, power = power }

  -- the pairs: repetitions both sides have
  local paired_base, paired_new = {}, {}
  if options.paired ~= false then
    for i, repetition in ipairs(base_repetitions) do
      local other = new_by_repetition[repetition]
      if other ~= nil then
        paired_base[#paired_base + 1] = base_list[i]
        paired_new[#paired_new + 1] = other
      end
    end
  end
  local use_pairs = #paired_base >= 2
  local used_base = use_pairs and paired_base or base_list
  local used_new = use_pairs and paired_new or new_list
  result.n = use_pairs and #paired_base or math.min(#base_list, #new_list)

  if not use_pairs and (#base_list < 2 or #new_list < 2) then
    -- no interval: the point change from the one pair, or from the medians
    local base_point, new_point
    if #paired_base == 1 then
      base_point, new_point = paired_base[1], paired_new[1]
      result.paired = true
    else
      base_point, new_point = median_of(base_list), median_of(new_list)
    end
    if base_point ~= nil and new_point ~= nil then
      if base_point > 0 then
        result.change = (new_point - base_point) / base_point * 100
      elseif base_point == 0 and new_point == 0 then
        result.change = 0
      end
    end
    result.reason = (#base_list == 0 or #new_list == 0) and "no values" or "fewer than 2 repetitions"
    return result
  end

  if not (all_positive(used_base) and all_positive(used_new)) then
    local first = used_base[1]
    if all_equal(used_base, first) and all_equal(used_new, first) then
      -- the same figure everywhere (0 errors against 0 errors): no change, exactly
      result.paired = use_pairs
      result.change, result.change_ci_low, result.change_ci_high, result.half_width = 0, 0, 0, 0
      result.direction = "none"
      result.method = "equal values"
      return result
    end
    local base_point, new_point = median_of(used_base), median_of(used_new)
    if base_point > 0 then result.change = (new_point - base_point) / base_point * 100 end
    result.paired = use_pairs
    result.reason = "values not all positive: a ratio has no interval"
    return result
  end

  if use_pairs then
    paired_change(result, used_base, used_new)
  else
    welch_change(result, used_base, used_new)
  end
  return result
end

-- detectable(n, spread) -> the smallest change in percent that n repetitions per variant
-- detect with probability M.power (about: the shifted-t approximation of the power), when
-- each variant's figures spread by `spread` percent (standard deviation of the log values,
-- about the coefficient of variation) independently of the other's. The log ratio then
-- spreads by sqrt(2) * spread; df = n - 1, which is exact paired and the lowest Welch's df
-- can be unpaired, so the figure holds for both. What both variants of a repetition share
-- (drift) is not in `spread` when they are paired (pairing cancels it), and adds to it when
-- they are not.
function M.detectable(n, spread)
  if math.type(n) ~= "integer" or n < 2 then
    error("stats.detectable: n must be an integer of 2 or more, got " .. tostring(n), 2)
  end
  if type(spread) ~= "number" or not (spread >= 0 and spread < math.huge) then
    error("stats.detectable: spread must be a percentage of 0 or more, got " .. tostring(spread), 2)
  end
  local se = spread / 100 * sqrt(2 / n)
  return percent((M.t_quantile(t_critical_p, n - 1) + M.t_quantile(power, n - 1)) * se)
end

-- ---------------------------------------------------------------- words

local words = {
  rate = { up = "faster", down = "slower" },
  latency = { up = "higher", down = "lower" },
}

-- kind_of(metric) -> "latency" for latency figures (lat.*, ttfb.*, osd.*_latency) and CPU
-- per op (cpu.*_per_op) and space amplification (space.raw_per_*), "rate" for bandwidth, IOPS and cpu.mib_per_osd_cpu_second, nil
-- for the others (counts, seconds), which have no verdict word.
function M.kind_of(metric)
  if type(metric) ~= "string" then return nil end
  if metric:match("^lat[%._]") or metric:match("^lat$") or metric:match("^ttfb") then return "latency" end
  if metric:match("^osd%.[%w_]*latency$") then return "latency" end
  -- CPU per op costs like a latency; MiB per OSD CPU-second is earned like a bandwidth
  if metric:match("^cpu%..*per_op$") then return "latency" end
  if metric == "cpu.mib_per_osd_cpu_second" then return "rate" end
  -- raw bytes per stored (or written) byte is a cost: less is better
  if metric:match("^space%.raw_per_") then return "latency" end
  if metric:match("^bandwidth_mib") or metric:match("^iops") then
    if metric:match("_stddev$") or metric:match("_max$") or metric:match("_min$") then return nil end
    return "rate"
  end
  return nil
end

-- The decimals an interval supports: the last digit shown is one place below the leading
-- digit of the interval's width (10 % wide: none; 1 to 10 % wide: one), at most 3. An
-- interval of no width (identical figures) gets one; no interval at all, none.
local function decimals_for(result)
  local low, high = result.change_ci_low, result.change_ci_high
  if low == nil or high == nil then return 0 end
  local width = high - low
  if width <= 0 then return 1 end
  return math.max(0, math.min(3, 1 - floor(log(width, 10))))
end

local function signed(value, decimals)
  local text = string.format("%+." .. decimals .. "f", value)
  if text:match("^%-[0.]+$") then text = "+" .. text:sub(2) end -- never -0
  return text
end

local function unsigned(value, decimals)
  return string.format("%." .. decimals .. "f", value)
end

local function check_change(result, who)
  if type(result) ~= "table" then
    error(string.format("%s: expected the table of stats.change, got %s", who, type(result)), 3)
  end
end

-- format_change(change) -> "+12 % [+6, +18]": the change and its interval with the
-- decimals the interval supports; "-" for what is unknown ("+12 % [-, -]" from one run).
function M.format_change(result)
  check_change(result, "stats.format_change")
  local decimals = decimals_for(result)
  local change = result.change ~= nil and signed(result.change, decimals) .. " %" or "-"
  if result.change_ci_low == nil or result.change_ci_high == nil then return change .. " [-, -]" end
  return string.format("%s [%s, %s]", change, signed(result.change_ci_low, decimals),
    signed(result.change_ci_high, decimals))
end

-- verdict(change, kind) -> the word of a comparison row: "faster" / "slower" (kind "rate":
-- bandwidth, IOPS) or "higher" / "lower" (kind "latency") when the interval excludes 0;
-- "no difference detectable (±8 %)" when it includes 0, the ± being the interval's
-- half-width; a plain statement when no interval is known.
function M.verdict(result, kind)
  check_change(result, "stats.verdict")
  local word = words[kind]
  if word == nil then
    error(string.format("stats.verdict: metric kind must be 'rate' or 'latency', got %s", tostring(kind)), 2)
  end
  if result.direction == "up" or result.direction == "down" then return word[result.direction] end
  if result.direction == "none" then
    return string.format("no difference detectable (±%s %%)", unsigned(result.half_width, decimals_for(result)))
  end
  local nb, nn = result.n_base or 0, result.n_new or 0
  if nb == 0 or nn == 0 then return "nothing to compare: no values" end
  if nb < 2 and nn < 2 then return "one run each: uncertainty unknown" end
  if nb < 2 then return "one run of the baseline: uncertainty unknown" end
  if nn < 2 then return "one run of this variant: uncertainty unknown" end
  return "no ratio (figures of 0): uncertainty unknown"
end

-- ---------------------------------------------------------------- sweeps

local function by_repetition(summary)
  if summary.repetitions == nil then return summary.values or {}, false end
  local keyed = {}
  for i, repetition in ipairs(summary.repetitions) do keyed[repetition] = summary.values[i] end
  return keyed, true
end

-- best(points, kind [, {paired = false}]) -> the index of the best point (highest median
-- for kind "rate", lowest for "latency"), and the indexes, in order, of the points as good
-- as the best within noise: the best itself, and each point whose change against the best
-- has an interval that includes 0 (stats.change, paired by repetition when the summaries
-- say which; paired = false for points from different runs). A point without an interval
-- (one repetition) is as good as the best only with the same median. nil, {} when no point
-- has a median.
function M.best(points, kind, options)
  if type(points) ~= "table" then
    error("stats.best: expected a list of stats.summary results, got " .. type(points), 2)
  end
  if words[kind] == nil then
    error(string.format("stats.best: metric kind must be 'rate' or 'latency', got %s", tostring(kind)), 2)
  end
  local higher_is_better = kind == "rate"
  local best
  for i, point in ipairs(points) do
    if type(point) ~= "table" then
      error(string.format("stats.best: point %d is a %s, expected a stats.summary result", i, type(point)), 2)
    end
    if point.median ~= nil then
      local best_median = best and points[best].median
      if best == nil or (higher_is_better and point.median > best_median) or
        (not higher_is_better and point.median < best_median) then
        best = i
      end
    end
  end
  if best == nil then return nil, {} end
  local paired = not (options and options.paired == false)
  local best_values, best_keyed = by_repetition(points[best])
  local as_good = {}
  for i, point in ipairs(points) do
    if i == best or point.median == points[best].median then
      as_good[#as_good + 1] = i
    elseif point.median ~= nil then
      local values, keyed = by_repetition(point)
      local change = M.change(best_values, values, { paired = paired and keyed and best_keyed })
      if change.direction == "none" then as_good[#as_good + 1] = i end
    end
  end
  return best, as_good
end

-- ---------------------------------------------------------------- pooled percentiles

-- pooled_percentiles(r1, r2, ...) or pooled_percentiles({r1, r2, ...}) -> the latency table
-- of the exact merge of the repetitions' histograms (count, avg, p50 ... p99_99, fio's
-- percentile list, as a bench result's `lat`), and the merged encoded histogram. Each r is
-- a bench result of this process (its histogram is kept beside it, not in the table) or an
-- encoded histogram (control.histogram(result), as multi-client runs store them). The
-- merge is runtime/hist.c's, through cephmark.control.
function M.pooled_percentiles(...)
  local items = { ... }
  if select("#", ...) == 1 and type(items[1]) == "table" and items[1].lat == nil then items = items[1] end
  local control = require "cephmark.control"
  local blobs = {}
  for i, item in ipairs(items) do
    if type(item) == "string" then
      blobs[i] = item
    elseif type(item) == "table" then
      blobs[i] = control.histogram(item)
      if blobs[i] == nil then
        error(string.format("stats.pooled_percentiles: result %d has no histogram (only results of a bench " ..
          "run in this process carry one, not results read back from a file)", i), 2)
      end
    else
      error(string.format("stats.pooled_percentiles: argument %d is a %s, expected a bench result or an " ..
        "encoded histogram", i, type(item)), 2)
    end
  end
  local ok, latency, merged = pcall(control.merge_histograms, blobs)
  if not ok then error("stats.pooled_percentiles: " .. tostring(latency), 2) end
  return latency, merged
end

return M
