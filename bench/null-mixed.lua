-- bench/null-mixed.lua: the engine's ceiling with a mix of op kinds. On the null target (ops
-- complete at once, no data moves), a plain phase (every op of one kind) and a mixed phase
-- (mix = {read = 60, write = 30, stat = 5, remove = 5}: a draw per op, per-kind counters and
-- histograms) run in turn, ROUNDS rounds with the order alternating, SECONDS each, in one
-- process. Prints each phase, then the medians of ops/s and of client CPU per op (user +
-- system of the process over the phase, divided by its ops) and the mixed/plain ratios of
-- those medians and the medians of the per-round ratios. Target: mixed ops/s within 10 % of
-- plain. Needs no cluster.
--   cephmark run bench/null-mixed.lua [-p rounds=8] [-p seconds=3] [-p threads=16]
local params = ...
local null = require "cephmark.null"
local stats = require "cephmark.stats"

local rounds = math.tointeger(tonumber(params.rounds or "8"))
local seconds = tonumber(params.seconds or "3")
local threads = math.tointeger(tonumber(params.threads or "16"))
local mix = { read = 60, write = 30, stat = 5, remove = 5 }

local figures = { plain = { ops = {}, cpu = {} }, mixed = { ops = {}, cpu = {} } }
local ratios = { ops = {}, cpu = {} }

local function run(which)
  local r = null.bench { threads = threads, seconds = seconds, block_size = 4096, seed = 1,
    mix = which == "mixed" and mix or nil }
  local cpu = r.client_cpu
  local ops_s, cpu_ns = r.ops / r.elapsed, (cpu.user + cpu.system) * 1e9 / cpu.ops
  local kinds = 0
  for _ in pairs(r.by_op or {}) do kinds = kinds + 1 end
  print(string.format("%-5s ops=%d ops_s=%.0f cpu_ns_op=%.1f kinds=%d errors=%d", which, r.ops, ops_s, cpu_ns,
    math.max(kinds, 1), r.errors))
  local f = figures[which]
  f.ops[#f.ops + 1], f.cpu[#f.cpu + 1] = ops_s, cpu_ns
  return ops_s, cpu_ns
end

for round = 1, rounds do
  local order = round % 2 == 1 and { "plain", "mixed" } or { "mixed", "plain" }
  local got = {}
  for _, which in ipairs(order) do got[which] = { run(which) } end
  ratios.ops[round] = got.mixed[1] / got.plain[1]
  ratios.cpu[round] = got.mixed[2] / got.plain[2]
end

local function median(list) return stats.summary(list).median end
local plain_ops, mixed_ops = median(figures.plain.ops), median(figures.mixed.ops)
local plain_cpu, mixed_cpu = median(figures.plain.cpu), median(figures.mixed.cpu)
print(string.format("median ops/s: plain %.0f mixed %.0f (mixed/plain %.3f; median of round ratios %.3f, %.3f-%.3f)",
  plain_ops, mixed_ops, mixed_ops / plain_ops, median(ratios.ops), stats.summary(ratios.ops).min,
  stats.summary(ratios.ops).max))
print(string.format("median cpu ns/op: plain %.1f mixed %.1f (mixed/plain %.3f; median of round ratios %.3f, %.3f-%.3f)",
  plain_cpu, mixed_cpu, mixed_cpu / plain_cpu, median(ratios.cpu), stats.summary(ratios.cpu).min,
  stats.summary(ratios.cpu).max))
