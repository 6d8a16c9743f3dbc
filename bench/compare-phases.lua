-- bench/compare-phases.lua: a null-target scenario of many short phases, the input of
-- bench/compare-cost.sh: `points` sweep points x 2 phases x `repeats` repetitions (default
-- 100 x 2 x 5 = 1000 phases), each phase a few ops with no delay.
--   cephmark run bench/compare-phases.lua [-p points=100] [--repeats 5] -o DIR
local cm = require "cephmark"
local null = require "cephmark.null"
return cm.scenario {
  name = "compare-phases",
  repeats = 5,
  params = { points = cm.integer(100, "sweep points", { min = 1, max = 1000 }), ops = cm.integer(20, "ops per phase") },
  run = function(s, p)
    local depths, labels = {}, {}
    for i = 1, p.points do
      depths[i] = 1 + i % 4
      labels[i] = string.format("p%03d", i)
    end
    for point in s:sweep(cm.zip({ threads = depths }, { labels = labels })) do
      s:phase("write", null, { threads = point.threads, ops = p.ops })
      s:phase("read", null, { threads = point.threads, ops = p.ops })
    end
  end,
}
