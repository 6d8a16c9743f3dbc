-- The simulated experiments that prove cephmark.stats (tests/lua/test_stats.lua, and
-- bench/stats-coverage.lua for other settings): a seeded splitmix64 generator and the
-- families of per-repetition figures, from the narrow spread of bandwidth to Pareto tails
-- and outlier repetitions, with a drift shared by the variants of a repetition.
--
-- In repetition i, variant v's figure is theta_v * drift_i * noise_vi. drift_i (lognormal)
-- is shared by both variants of a repetition when they ran in it (paired), and drawn for
-- each figure when they come from different runs (unpaired); noise_vi is drawn for each
-- figure from the same distribution on both sides. The two variants' distributions thus
-- differ only by the factor theta_new / theta_base: that is the true ratio, equally the
-- ratio of their medians, of any percentile and of their geometric means, and the true
-- change is (ratio - 1) * 100.
local stats = require "cephmark.stats"

local M = {}

-- splitmix64 over Lua's 64-bit integers (wrapping multiplication, logical shifts)
function M.generator(seed)
  local state = seed
  local g = {}
  function g.next()
    state = state + 0x9E3779B97F4A7C15
    local z = state
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
  function g.uniform() return ((g.next() >> 11) + 0.5) * 2.0 ^ -53 end -- in (0, 1)
  function g.normal() return math.sqrt(-2 * math.log(g.uniform())) * math.cos(2 * math.pi * g.uniform()) end
  return g
end

-- A fraction `rate` of the figures (a repetition has one with probability about 2 * rate)
-- `factor` times the others: a scrub, a compaction, another tenant.
function M.outliers(rate, factor)
  return { name = string.format("outlier repetitions: lognormal 3 %%, %g %% of figures x%g, drift 10 %%",
    rate * 100, factor), ratio = 0.90, drift = 0.10,
    noise = function(g) return math.exp(0.03 * g.normal()) * (g.uniform() < rate and factor or 1) end }
end

-- A Pareto tail of index alpha: the log of the noise is exponential, so skewed.
function M.pareto(alpha)
  return { name = string.format("Pareto tail (alpha %g), drift 20 %%", alpha), ratio = 1.30, drift = 0.20,
    noise = function(g) return g.uniform() ^ (-1 / alpha) end }
end

M.families = {
  { name = "bandwidth: lognormal 5 %, drift 10 %", ratio = 1.10, drift = 0.10,
    noise = function(g) return math.exp(0.05 * g.normal()) end },
  { name = "latency percentile: lognormal sigma 0.6, drift 30 %", ratio = 0.80, drift = 0.30,
    noise = function(g) return math.exp(0.6 * g.normal()) end },
  M.pareto(1.5), -- infinite variance
  M.outliers(0.02, 2.5), -- 1 repetition in 25
}

-- experiment(g, family, n, paired, ratio) -> stats.change of one simulated experiment
function M.experiment(g, family, n, paired, ratio)
  local base_values, new_values = {}, {}
  for i = 1, n do
    local drift = math.exp(family.drift * g.normal())
    local other = paired and drift or math.exp(family.drift * g.normal())
    base_values[i] = 1000 * drift * family.noise(g)
    new_values[i] = 1000 * ratio * other * family.noise(g)
  end
  return stats.change(base_values, new_values, { paired = paired })
end

-- coverage(g, family, n, paired, experiments) -> the fraction of experiments whose interval
-- covers the true change, and the fraction of A/A experiments (ratio 1) that say
-- "no difference detectable"
function M.coverage(g, family, n, paired, experiments)
  local truth, covered, none = (family.ratio - 1) * 100, 0, 0
  for _ = 1, experiments do
    local c = M.experiment(g, family, n, paired, family.ratio)
    if c.change_ci_low <= truth and truth <= c.change_ci_high then covered = covered + 1 end
    if M.experiment(g, family, n, paired, 1).direction == "none" then none = none + 1 end
  end
  return covered / experiments, none / experiments
end

return M
