-- Repetitions on the null target: the order design (ABBA for two variants; for more, every
-- variant first and last equally often in each block of repetitions, the first repetition
-- in the declared order, reproducible from the seed), `repeats` and `order` checked where
-- the scenario is defined, the run function run once per repetition with the run hooks
-- once, sweeps (also nested) iterated in each repetition's order, every phase numbered with
-- its repetition, results.json and phases.csv carrying repeats, order, seed and orders,
-- and a comparison over every repetition printed once, at the end.
local cm = require "cephmark"
local json = require "cephmark.json"
local null = require "cephmark.null"
local repeats = require "cephmark.repeats"
local results = require "cephmark.results"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local here = debug.getinfo(1, "S").source:sub(2)
local function line() return debug.getinfo(2, "l").currentline end
local message_of = t.message_of
local capture = t.capture
local base = os.tmpname()
os.remove(base)
assert(sys.mkdir(base))

-- the design ------------------------------------------------------------------------------

local function joined(list) return table.concat(list, ",") end
local two = {}
for r = 1, 4 do two[r] = joined(repeats.order(99, "pools", 2, r, repeats.INTERLEAVED)) end
t.eq(table.concat(two, " "), "1,2 2,1 1,2 2,1", "two variants: ABBA (A B, then B A, and again)")
t.eq(joined(repeats.order(99, "pools", 3, 5, repeats.FIXED)), "1,2,3", "order fixed: the declared order")
t.eq(joined(repeats.order(99, "pools", 1, 2, repeats.INTERLEAVED)), "1", "one variant: nothing to order")

-- three to seven variants, 50 seeds each: in every block of block_size(k) repetitions,
-- each variant is first, and last, equally often, and each follows each other one equally
-- often; the first repetition is in the declared order; the same seed gives the same orders
local balanced, adjacent, first_declared, reproducible = true, true, true, true
local seeds_differ = 0
for k = 3, 7 do
  local size = repeats.block_size(k)
  t.eq(size, k % 2 == 0 and k or 2 * k, "block size for " .. k .. " variants")
  for seed = 1, 50 do
    for block = 0, 2 do
      local firsts, lasts, pairs_seen = {}, {}, {}
      for r = block * size + 1, (block + 1) * size do
        local order = repeats.order(seed, "sweep x", k, r, repeats.INTERLEAVED)
        local seen = {}
        for _, v in ipairs(order) do seen[v] = true end
        for v = 1, k do if not seen[v] then balanced = false end end
        firsts[order[1]] = (firsts[order[1]] or 0) + 1
        lasts[order[k]] = (lasts[order[k]] or 0) + 1
        for j = 1, k - 1 do
          local pair = order[j] .. ">" .. order[j + 1]
          pairs_seen[pair] = (pairs_seen[pair] or 0) + 1
        end
        if r == 1 and joined(order) ~= joined(repeats.order(seed, "sweep x", k, 1, repeats.FIXED)) then
          first_declared = false
        end
        if joined(order) ~= joined(repeats.order(seed, "sweep x", k, r, repeats.INTERLEAVED)) then
          reproducible = false
        end
        if joined(order) ~= joined(repeats.order(seed + 1000, "sweep x", k, r, repeats.INTERLEAVED)) then
          seeds_differ = seeds_differ + 1
        end
      end
      for v = 1, k do
        if firsts[v] ~= size // k or lasts[v] ~= size // k then balanced = false end
        for w = 1, k do
          if v ~= w and pairs_seen[v .. ">" .. w] ~= size // k then adjacent = false end
        end
      end
    end
  end
end
t.ok(balanced, "every variant first and last equally often in each block (k = 3..7, 50 seeds, 3 blocks)")
t.ok(adjacent, "and following every other variant equally often")
t.ok(first_declared, "the first repetition runs in the declared order")
t.ok(reproducible, "the same seed gives the same orders")
t.ok(seeds_differ > 1000, "other seeds give other orders (" .. seeds_differ .. " of 3990 repetitions differ)")
-- a sweep of many points costs one row of the design, not the square
local started = sys.monotonic()
local big = repeats.order(5, "big", 20001, 7, repeats.INTERLEAVED)
t.eq(#big, 20001, "an order of 20001 points")
t.ok(sys.monotonic() - started < 5, "computed without the whole square")

-- definition checks ------------------------------------------------------------------------

local l = line(); local zero = message_of(function() local s = cm.scenario { name = "x", repeats = 0, run = print }; return s end)
t.eq(zero, string.format("%s:%d: cm.scenario: repeats must be an integer >= 1 (how many times run runs), got 0", here, l),
  "repeats = 0")
l = line(); local negative = message_of(function() local s = cm.scenario { name = "x", repeats = -1, run = print }; return s end)
t.eq(negative, string.format("%s:%d: cm.scenario: repeats must be an integer >= 1 (how many times run runs), got -1", here, l),
  "repeats = -1")
l = line(); local text = message_of(function() local s = cm.scenario { name = "x", repeats = "x", run = print }; return s end)
t.eq(text, string.format("%s:%d: cm.scenario: repeats must be an integer >= 1 (how many times run runs), got 'x'", here, l),
  "repeats = \"x\"")
l = line(); local fraction = message_of(function() local s = cm.scenario { name = "x", repeats = 2.5, run = print }; return s end)
t.eq(fraction, string.format("%s:%d: cm.scenario: repeats must be an integer >= 1 (how many times run runs), got 2.5", here, l),
  "repeats = 2.5")
l = line(); local bad_order = message_of(function() local s = cm.scenario { name = "x", order = "random", run = print }; return s end)
t.eq(bad_order, string.format("%s:%d: cm.scenario: order must be \"interleaved\" or \"fixed\", got 'random'", here, l),
  "order = \"random\"")

-- a run of four repetitions over a two-point sweep -----------------------------------------

local calls = { before_run = 0, after_run = 0, body = 0, before_phase = 0 }
local seen_repetitions = {}
local sweep_line
local four = cm.scenario {
  name = "repeats-four",
  repeats = 4,
  params = { ops = 20 },
  hooks = {
    before_run = function() calls.before_run = calls.before_run + 1 end,
    after_run = function() calls.after_run = calls.after_run + 1 end,
    before_phase = function(_, phase)
      calls.before_phase = calls.before_phase + 1
      seen_repetitions[#seen_repetitions + 1] = phase.repetition
    end,
  },
  run = function(s, p)
    calls.body = calls.body + 1
    local r, n = s:repetition()
    calls["body" .. r] = n
    sweep_line = line(); for point in s:sweep(cm.zip({ delay = { "1ms", "2ms" } }, { labels = { "fast", "slow" } })) do
      s:phase("write", null, { threads = 2, ops = p.ops, delay = point.delay })
    end
    calls.compared = s:compare { by = "point", metrics = { "ops", "lat.p50" } }
  end,
}
local dir = base .. "/four"
local printed, ok, err = capture(function() return four:run { output = dir, order_seed = 11 } end)
t.eq(ok, true, "four repetitions ran: " .. tostring(err and (sys.error_info(err))))
t.eq(calls.body, 4, "the run function ran four times")
t.eq(calls.body4, 4, "s:repetition() says which of how many")
t.eq(calls.before_run, 1, "before_run ran once")
t.eq(calls.after_run, 1, "after_run ran once")
t.eq(calls.before_phase, 8, "before_phase for every phase")
t.eq(table.concat(seen_repetitions, ""), "11223344", "the hook sees each phase's repetition")
t.match(printed, "\n%-%- repetition 1/4\n", "each repetition is announced")
t.match(printed, "\n%-%- repetition 4/4\n", "the last one too")
t.match(printed, "\n%[3%] write slow %(repetition 2/4%)  ops=20", "phase headers carry the repetition")
t.match(printed, "\n%-%- point 1/2: slow\n%[3%] write slow", "the second repetition starts with the other point")
t.match(printed, "for the remaining 1 point %(about [%d.]+ s for its points in all 4 repetitions%)\n",
  "the estimate counts every repetition")
local _, tables = printed:gsub("comparison by point", "")
t.eq(tables, 1, "the comparison is printed once, in the last repetition")
t.match(printed, "\ncomparison by point %(baseline fast, marked %*%): medians of 4 repetitions\n",
  "over every repetition, as medians")
t.eq(calls.compared and calls.compared.rows[1].n, 4, "its rows count the repetitions")

local document = json.decode(sys.read_file(dir .. "/results.json"))
t.eq(document.repeats, 4, "results.json: repeats")
t.eq(document.order, "interleaved", "order")
t.eq(document.order_seed, 11, "the seed")
t.eq(document.repetitions_completed, 4, "every repetition completed")
t.eq(#document.phases, 8, "eight phases")
local labels = {}
for i, phase in ipairs(document.phases) do labels[i] = phase.repetition .. ":" .. phase.label end
t.eq(table.concat(labels, " "), "1:fast 1:slow 2:slow 2:fast 3:fast 3:slow 4:slow 4:fast",
  "every phase records its repetition; ABBA across repetitions")
t.eq(#document.orders, 4, "one order per repetition")
t.eq(document.orders[2].iteration, "sweep", "of the sweep")
t.eq(document.orders[2].at, here .. ":" .. sweep_line, "named by its line")
t.eq(table.concat(document.orders[2].order, ","), "slow,fast", "in the order it ran")
t.eq(#document.sweeps, 1, "the sweep is described once")
local comparison = document.comparisons[1]
t.eq(#document.comparisons, 1, "one comparison in the results")
t.eq(comparison.repetitions, 4, "over four repetitions")
t.eq(table.concat(comparison.rows[2].repetitions, ","), "1,2,3,4", "a row names the repetitions it has")
t.eq(#comparison.rows[2].per_repetition["lat.p50"], 4, "and keeps the value of each")
t.eq(comparison.rows[2].per_repetition.ops[3], 20, "in repetition order")
local phases_csv = sys.read_file(dir .. "/phases.csv")
t.match(phases_csv, "^index,[^\n]*,repetition\n", "phases.csv has a repetition column")
t.match(phases_csv, "\n3,write,write,slow,[^\n]*,2\n", "with each phase's repetition")

-- an earlier run's repetitions, compared with this one's (s:compare{with = ...})
local with_rows
local later = cm.scenario {
  name = "repeats-later",
  hooks = {
    before_run = function(s) s:phase("prepare", null, { threads = 1, ops = 5 }) end,
    after_run = function(s)
      with_rows = s:compare { by = "run", with = { base .. "/four" }, where = { delay = "1ms" }, metrics = { "ops" } }.rows
    end,
  },
  run = function(s)
    s:variant({ delay = "1ms" }, function() s:phase("write", null, { threads = 2, ops = 20 }) end)
  end,
}
printed, ok, err = capture(function() return later:run { output = base .. "/later", repeats = 2 } end)
t.eq(ok, true, "compared with an earlier run: " .. tostring(err and (sys.error_info(err))))
t.eq(with_rows and with_rows[1].n, 4, "the earlier run's four repetitions")
t.eq(with_rows and with_rows[2] and with_rows[2].n, 2, "against this run's two")
document = json.decode(sys.read_file(base .. "/later/results.json"))
t.eq(document.phases[1].name, "prepare", "a phase of before_run")
t.eq(document.phases[1].repetition, nil, "belongs to no repetition")
t.match(printed, "\n%[1%] prepare  ops=5", "and its header names none")
t.eq(document.phases[3].repetition, 2, "the run function's phases do")

-- three points, six repetitions (one block): each point first and last twice, the orders
-- recomputed from the seed results.json records
local three = cm.scenario {
  name = "repeats-three",
  run = function(s)
    for point in s:sweep(cm.sweep { threads = { 1, 2, 3 } }) do
      s:phase("write", null, { threads = point.threads, ops = 5 })
    end
  end,
}
dir = base .. "/three"
printed, ok, err = capture(function() return three:run { output = dir, repeats = 6 } end)
t.eq(ok, true, "six repetitions ran: " .. tostring(err and (sys.error_info(err))))
document = json.decode(sys.read_file(dir .. "/results.json"))
t.eq(document.repeats, 6, "context.repeats (cephmark run --repeats) sets the repetitions")
local firsts, lasts = {}, {}
local declared = document.orders[1].order
local recomputed = true
for r, entry in ipairs(document.orders) do
  local order = entry.order
  firsts[order[1]] = (firsts[order[1]] or 0) + 1
  lasts[order[3]] = (lasts[order[3]] or 0) + 1
  local positions = repeats.order(document.order_seed, entry.at .. "\0" .. table.concat(declared, "\0"), 3, r,
    document.order)
  for j, position in ipairs(positions) do
    if declared[position] ~= order[j] then recomputed = false end
  end
  for j = 1, 3 do
    local phase = document.phases[(r - 1) * 3 + j]
    if phase.point ~= order[j] or phase.repetition ~= r then recomputed = false end
  end
end
t.eq(table.concat(declared, ","), "threads=1,threads=2,threads=3", "the first repetition in the declared order")
t.eq(string.format("%d %d %d / %d %d %d", firsts["threads=1"], firsts["threads=2"], firsts["threads=3"],
  lasts["threads=1"], lasts["threads=2"], lasts["threads=3"]), "2 2 2 / 2 2 2", "each point first twice and last twice")
t.ok(recomputed, "the phases ran in the recorded orders, which the recorded seed gives again")

-- order fixed: every repetition in the declared order
dir = base .. "/fixed"
printed, ok, err = capture(function() return three:run { output = dir, repeats = 3, order = "fixed" } end)
t.eq(ok, true, "a fixed order ran")
document = json.decode(sys.read_file(dir .. "/results.json"))
labels = {}
for i, phase in ipairs(document.phases) do labels[i] = phase.result.threads end
t.eq(table.concat(labels, ""), "123123123", "order = fixed keeps the declared order")
t.eq(document.order, "fixed", "and says so")
local scenario_fixed = cm.scenario { name = "fixed", order = "fixed", repeats = 2, run = function(s)
  for point in s:sweep(cm.sweep { threads = { 1, 2 } }) do s:phase("write", null, { threads = point.threads, ops = 5 }) end
end }
dir = base .. "/fixed-field"
capture(function() return scenario_fixed:run { output = dir } end)
document = json.decode(sys.read_file(dir .. "/results.json"))
labels = {}
for i, phase in ipairs(document.phases) do labels[i] = phase.result.threads end
t.eq(table.concat(labels, ""), "1212", "the order field of cm.scenario")
dir = base .. "/fixed-override"
capture(function() return scenario_fixed:run { output = dir, order = "interleaved" } end)
document = json.decode(sys.read_file(dir .. "/results.json"))
labels = {}
for i, phase in ipairs(document.phases) do labels[i] = phase.result.threads end
t.eq(table.concat(labels, ""), "1221", "overridden by the run's order")

-- nested sweeps: each level has its own order; within a repetition the inner order is the
-- same under every outer point, and over the repetitions it alternates under each of them
local nested = cm.scenario {
  name = "repeats-nested",
  run = function(s)
    for outer in s:sweep(cm.sweep { threads = { 1, 2, 3 } }) do
      for inner in s:sweep(cm.zip({ delay = { "1ms", "2ms" } }, { labels = { "a", "b" } })) do
        s:phase("write", null, { threads = outer.threads, ops = 2, delay = inner.delay })
      end
    end
  end,
}
dir = base .. "/nested"
printed, ok, err = capture(function() return nested:run { output = dir, repeats = 4, order_seed = 3 } end)
t.eq(ok, true, "nested sweeps ran: " .. tostring(err and (sys.error_info(err))))
document = json.decode(sys.read_file(dir .. "/results.json"))
local by_repetition = {}
for _, phase in ipairs(document.phases) do
  local r = phase.repetition
  by_repetition[r] = (by_repetition[r] or "") .. phase.result.threads .. phase.label:match("(%a)$")
end
t.eq(by_repetition[1], "1a1b2a2b3a3b", "repetition 1: both levels in the declared order")
t.match(by_repetition[2], "^%db%da%db%da%db%da$", "repetition 2: the inner pair reversed under every outer point")
t.match(by_repetition[3], "^%da%db%da%db%da%db$", "repetition 3: back")
local outer_orders = {}
for r = 1, 4 do outer_orders[r] = by_repetition[r]:gsub("%a", ""):gsub("(%d)%1", "%1") end
t.ok(outer_orders[2] ~= outer_orders[1] or outer_orders[3] ~= outer_orders[1], "the outer points change order too")
local inner_recorded, outer_recorded = 0, 0
for _, entry in ipairs(document.orders) do
  if #entry.order == 2 then inner_recorded = inner_recorded + 1 else outer_recorded = outer_recorded + 1 end
end
t.eq(outer_recorded, 4, "the outer order recorded once per repetition")
t.eq(inner_recorded, 4, "the inner order once per repetition too (the same under every outer point)")
t.eq(#document.sweeps, 4, "the sweeps as the first repetition entered them (the inner one per outer point)")

-- one repetition: nothing announced or reordered, as before repetitions existed
local one = capture(function() return three:run { output = base .. "/one" } end)
t.ok(not one:find("repetition"), "one repetition prints nothing about repetitions")
document = json.decode(sys.read_file(base .. "/one/results.json"))
t.eq(document.repeats, 1, "results.json: repeats 1")
t.eq(document.repetitions_completed, 1, "one repetition completed")
t.eq(document.phases[3].repetition, 1, "its phases are repetition 1")

-- the journal of a running folder carries the orders: a reader of a killed run gets them
local journal_dir = base .. "/journal"
local journal_document
local peek = cm.scenario { name = "repeats-journal", run = function(s)
  for point in s:sweep(cm.sweep { threads = { 1, 2 } }) do s:phase("write", null, { threads = point.threads, ops = 5 }) end
  if s:repetition() == 2 then journal_document = results.read_document(journal_dir .. "/results.json", journal_dir) end
end }
capture(function() return peek:run { output = journal_dir, repeats = 2 } end)
t.eq(journal_document and journal_document.status, "running", "the running folder")
t.eq(journal_document and #journal_document.orders, 2, "its journal holds each repetition's order")
t.eq(journal_document and table.concat(journal_document.orders[2].order, ","), "threads=2,threads=1", "as run")
t.eq(journal_document and journal_document.repetition, 2, "and the repetition under way")

sys.remove_tree(base)
return t.done()
