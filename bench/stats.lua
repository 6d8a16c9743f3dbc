-- bench/stats.lua: what the statistics of a comparison cost (cephmark.stats): for 1000
-- variants x 4 metrics x N repetitions, a summary of each side, the change (paired, as in
-- one run; and unpaired with Welch's fractional df, as between two results folders, the
-- slower case), the verdict and the printed change. CPU seconds per step and per call;
-- the figures are in docs/performance.md.
--   cephmark run bench/stats.lua [-p variants=1000] [-p repetitions=5] [-p metrics=4]
local params = ...
local stats = require "cephmark.stats"

local variants = math.tointeger(tonumber(params.variants or "1000"))
local repetitions = math.tointeger(tonumber(params.repetitions or "5"))
local metrics = math.tointeger(tonumber(params.metrics or "4"))

-- figures of the size and spread of real ones, the same on every run
math.randomseed(19)
local function figures(scale)
  local values = {}
  for i = 1, repetitions do values[i] = scale * math.exp(0.05 * (math.random() + math.random() - 1)) end
  return values
end
local cells = {}
for v = 1, variants do
  for m = 1, metrics do
    local scale = 10 ^ m * (1 + v / variants)
    cells[#cells + 1] = { base = figures(scale), new = figures(scale * (0.9 + 0.2 * math.random())),
      kind = m % 2 == 0 and "latency" or "rate" }
  end
end

local function timed(what, step)
  local start = os.clock()
  step()
  local seconds = os.clock() - start
  print(string.format("%-44s %8.3f s  %6.1f us per cell", what, seconds, seconds / #cells * 1e6))
  return seconds
end

print(string.format("%d variants x %d metrics x %d repetitions (%d cells, %d phases per side)", variants, metrics,
  repetitions, #cells, variants * repetitions))
local summaries = timed("summary of both sides", function()
  for _, cell in ipairs(cells) do
    stats.summary(cell.base)
    stats.summary(cell.new)
  end
end)
local changes = {}
local paired = timed("change, paired (one run)", function()
  for i, cell in ipairs(cells) do changes[i] = stats.change(cell.base, cell.new) end
end)
local unpaired = timed("change, unpaired (two folders, Welch)", function()
  for i, cell in ipairs(cells) do changes[i] = stats.change(cell.base, cell.new, { paired = false }) end
end)
local words = timed("verdict and printed change", function()
  for i, cell in ipairs(cells) do
    stats.verdict(changes[i], cell.kind)
    stats.format_change(changes[i])
  end
end)
print(string.format("%-44s %8.3f s", "total, one run (paired)", summaries + paired + words))
print(string.format("%-44s %8.3f s", "total, two folders (unpaired)", summaries + unpaired + words))
