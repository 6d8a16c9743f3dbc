-- bench/null-access.lua: the null target's ceiling (ops complete at once, nothing moves)
-- with an access distribution picking one of `objects` objects per op, against a plain
-- phase that picks nothing, interleaved: each round runs every variant once, in an order
-- that rotates from round to round. Per variant: the medians over the rounds of ops/s and
-- of CPU per op (os.clock: the process's user+sys time; the figure that a shared machine
-- disturbs least), and of the per-round ratios to the plain phase of the same round.
-- Target (issue 22): distributed access keeps the ceiling within 10 % of the plain phase.
--   taskset -c 0 cephmark run bench/null-access.lua [-p rounds=7] [-p seconds=3]
--     [-p objects=10000000] [-p threads=16]
local params = ...
local null = require "cephmark.null"

local rounds = math.tointeger(tonumber(params.rounds or "7"))
local seconds = tonumber(params.seconds or "3")
local objects = math.tointeger(tonumber(params.objects or "10000000"))
local threads = math.tointeger(tonumber(params.threads or "16"))
local variants = { "plain", "uniform", "zipf:0.99", "zipf:1.2", "hotspot:10/90", "pareto:0.2" }

local function run(variant)
  local options = { threads = threads, seconds = seconds, block_size = 4096 }
  if variant ~= "plain" then
    options.access = variant
    options.objects = objects
  end
  local cpu = os.clock()
  local r = null.bench(options)
  cpu = os.clock() - cpu
  assert(r.errors == 0)
  return { ops_s = r.ops / r.elapsed, cpu_ns = cpu * 1e9 / r.ops }
end

local function median(list)
  local sorted = {}
  for i, v in ipairs(list) do sorted[i] = v end
  table.sort(sorted)
  local n = #sorted
  return n % 2 == 1 and sorted[(n + 1) // 2] or (sorted[n // 2] + sorted[n // 2 + 1]) / 2
end

local samples = {}
for _, v in ipairs(variants) do samples[v] = { ops_s = {}, cpu_ns = {}, ops_ratio = {}, cpu_ratio = {} } end
print("round variant ops/s cpu_ns/op")
for round = 1, rounds do
  local got = {}
  for i = 1, #variants do
    local v = variants[(i + round - 2) % #variants + 1]
    got[v] = run(v)
    print(string.format("%d %s %.0f %.1f", round, v, got[v].ops_s, got[v].cpu_ns))
  end
  for _, v in ipairs(variants) do
    local s = samples[v]
    s.ops_s[#s.ops_s + 1] = got[v].ops_s
    s.cpu_ns[#s.cpu_ns + 1] = got[v].cpu_ns
    s.ops_ratio[#s.ops_ratio + 1] = got[v].ops_s / got.plain.ops_s
    s.cpu_ratio[#s.cpu_ratio + 1] = got[v].cpu_ns / got.plain.cpu_ns
  end
end
print(string.format("medians over %d rounds (objects=%d threads=%d seconds=%g):", rounds, objects,
  threads, seconds))
print("variant ops/s cpu_ns/op ops/s_vs_plain cpu/op_vs_plain")
for _, v in ipairs(variants) do
  local s = samples[v]
  print(string.format("%s %.0f %.1f %.3f %.3f", v, median(s.ops_s), median(s.cpu_ns),
    median(s.ops_ratio), median(s.cpu_ratio)))
end
