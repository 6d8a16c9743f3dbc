-- bench/stats-coverage.lua: the coverage of cephmark.stats' change interval and its A/A
-- rate over more experiments, or other settings, than tests/lua/test_stats.lua runs (the
-- same model: tests/lua/stats_model.lua). The figures of docs/statistics.md come from it.
--   cephmark run -L tests/lua bench/stats-coverage.lua [-p experiments=20000] [-p seed=19]
--     [-p family=all|bandwidth|latency|pareto|outliers] [-p alpha=1.5]
--     [-p outliers=0.02] [-p factor=2.5]
local params = ...
local model = require "stats_model"

local experiments = math.tointeger(tonumber(params.experiments or "20000"))
local seed = math.tointeger(tonumber(params.seed or "19"))
local which = params.family or "all"
local families = {
  bandwidth = model.families[1],
  latency = model.families[2],
  pareto = model.pareto(tonumber(params.alpha or "1.5")),
  outliers = model.outliers(tonumber(params.outliers or "0.02"), tonumber(params.factor or "2.5")),
}
local chosen = which == "all" and { families.bandwidth, families.latency, families.pareto, families.outliers }
  or { families[which] }
if chosen[1] == nil then
  io.stderr:write("stats-coverage: family must be all, bandwidth, latency, pareto or outliers\n")
  os.exit(2)
end

local g = model.generator(seed)
print(string.format("%d experiments per cell (and as many A/A), seed %d", experiments, seed))
for _, family in ipairs(chosen) do
  for _, paired in ipairs { true, false } do
    local cells = {}
    for _, n in ipairs { 3, 5, 10 } do
      local covered, none = model.coverage(g, family, n, paired, experiments)
      cells[#cells + 1] = string.format("N=%-2d %.3f / %.3f", n, covered, none)
    end
    print(string.format("%-8s %s  %s", paired and "paired" or "unpaired", table.concat(cells, "   "), family.name))
  end
end
print("(coverage of the true change / A/A runs that say no difference detectable)")
