-- Repetitions: the order in which a scenario's variants (its pools in s:each_pool, the
-- points of an s:sweep) run in each repetition, so that no variant always runs first or
-- last and none always follows the same other one (a cache one warmed for the next, a
-- cluster still settling from the previous write). Two variants alternate (ABBA: A B, then
-- B A, ...). Three or more follow a Williams design, a Latin square in which every variant
-- takes every position once and follows every other variant equally often, with its
-- variants relabelled and its rows taken in an order drawn from a seeded generator; a new
-- draw every block of rows. The first repetition always runs in the declared order. The same seed and the same variants give the same orders, so
-- a run's orders can be recomputed from the seed its results record. Pure Lua, no I/O
-- except the fresh seed.

local M = {}

M.INTERLEAVED = "interleaved"
M.FIXED = "fixed"
M.orders = { M.INTERLEAVED, M.FIXED }

-- Seeds stay below 2^53, so results.json (JSON numbers are doubles) keeps them exact.
M.MAX_SEED = (1 << 53) - 1

-- splitmix64: small, fast, and well mixed from any seed, even consecutive ones; Lua's
-- integers wrap around on overflow, which is the arithmetic it needs.
local function generator(seed)
  local state = seed
  return function()
    state = state + 0x9E3779B97F4A7C15
    local z = state
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
end

-- An integer in 1..n from the generator (the modulo bias is below 2^-50 for any n here).
local function below(next_value, n)
  return (next_value() >> 11) % n + 1
end

-- FNV-1a over a string: one number per iteration key, mixed into the seed.
local function hash(text)
  local h = 0xCBF29CE484222325
  for i = 1, #text do
    h = (h ~ text:byte(i)) * 0x100000001B3
  end
  return h
end

local function shuffled(next_value, n)
  local list = {}
  for i = 1, n do list[i] = i end
  for i = n, 2, -1 do
    local j = below(next_value, i)
    list[i], list[j] = list[j], list[i]
  end
  return list
end

-- williams_row(k, index) -> the index-th row (a list of 1..k) of the Williams design for k
-- variants: k rows for an even k, 2k for an odd one (the square and its mirror image). Over
-- all its rows, each variant takes each position, and follows each other variant, equally
-- often. Row i of the square is its first row (0, 1, k-1, 2, k-2, ...) plus i, modulo k;
-- a row is computed alone, so a sweep of many points costs one row, not the square.
function M.williams_row(k, index)
  local mirrored = index > k
  local shift = (mirrored and index - k or index) - 1
  local first, low, high = { 0 }, 1, k - 1
  while #first < k do
    first[#first + 1] = low
    low = low + 1
    if #first < k then
      first[#first + 1] = high
      high = high - 1
    end
  end
  local row = {}
  for j = 1, k do
    local symbol = first[mirrored and k + 1 - j or j]
    row[j] = (symbol + shift) % k + 1
  end
  return row
end

-- The number of repetitions after which every variant has been first and last equally
-- often: 1 for one variant, two for two, k or 2k (the Williams design's rows) for more.
function M.block_size(k)
  if k <= 2 then return k < 1 and 1 or k end
  return k % 2 == 0 and k or 2 * k
end

-- order(seed, key, k, repetition, mode) -> a list of 1..k: the declared positions of the k
-- variants of the iteration named key ("pools", or a sweep's site and points), in the order
-- repetition runs them. mode "fixed" (or a single variant) keeps the declared order; two
-- variants alternate, starting in the declared order; more follow the Williams design, its
-- rows taken in a shuffled order and its variants relabelled, drawn anew for every block of
-- block_size(k) repetitions from the seed, the key and the block's number. The first
-- repetition is in the declared order.
function M.order(seed, key, k, repetition, mode)
  local out = {}
  for i = 1, k do out[i] = i end
  if mode == M.FIXED or k <= 1 then return out end
  if k == 2 then
    if repetition % 2 == 0 then out[1], out[2] = 2, 1 end
    return out
  end
  local size = M.block_size(k)
  local block = (repetition - 1) // size
  local next_value = generator(seed ~ hash(key) ~ (block * 0x632BE59BD9B4E019))
  local relabel = shuffled(next_value, k)
  local row_order = shuffled(next_value, size)
  if block == 0 then
    -- the first repetition runs in the declared order, as a single one does (and the first
    -- variant stays the comparisons' baseline): the first block relabels its first row so
    local first = M.williams_row(k, row_order[1])
    for j = 1, k do relabel[first[j]] = j end
  end
  local row = M.williams_row(k, row_order[(repetition - 1) % size + 1])
  for j = 1, k do out[j] = relabel[row[j]] end
  return out
end

-- A fresh seed from the kernel's random source (the clock and pid if it cannot be read).
function M.new_seed()
  local file = io.open("/dev/urandom", "rb")
  local bytes = file and file:read(7)
  if file then file:close() end
  local seed = 0
  if bytes and #bytes == 7 then
    for i = 1, 7 do seed = (seed << 8) | bytes:byte(i) end
  else
    local sys = require "cephmark.sys"
    seed = generator(math.floor(sys.realtime() * 1e6) ~ (sys.getpid() << 32))()
  end
  return seed & M.MAX_SEED
end

return M
