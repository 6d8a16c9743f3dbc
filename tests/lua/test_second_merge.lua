-- The merged per-second percentiles of a multi-client phase (distributed.lua's Merger) from
-- two simulated agents on the null target: a fast one (many ops of ~2 ms) and a slow one
-- (a few ops of at least 500 ms). Each second's merged p99 must equal the p99 of the union
-- of both agents' ops of that second (computed independently: the two histograms decoded
-- and merged whole), and where the slow agent's ops are under 1 % of the second's, the
-- merged p99 is below the worst agent's. No cluster needed; only counts, floors and exact
-- equalities are asserted.
local control = require "cephmark.control"
local distributed = require "cephmark.distributed"
local null = require "cephmark.null"
local t = require "cephmark.test"

-- one agent's phase as `cephmark agent` runs it: the bench result and the second histograms
local function agent(name, options)
  local hists, seconds = {}, 0
  options.second_histograms = true
  options.on_second = function(second)
    seconds = seconds + 1
    hists[seconds] = second.hist
    if second.ops > 0 then
      t.ok(type(second.hist) == "string", name .. ": a second with ops carries its histogram")
    else
      t.eq(second.hist, nil, name .. ": a second without completions carries none")
    end
  end
  local r = null.bench(options)
  r.agent = name
  t.eq(seconds, #r.series, name .. ": one callback per second of the series")
  return r, control.histogram(r), hists, distributed.pack_seconds(hists, seconds)
end

local fast, fast_hist, fast_seconds, fast_packed = agent("fast", { threads = 8, seconds = 3, delay = 0.002 })
local slow, slow_hist, slow_seconds, slow_packed = agent("slow", { threads = 1, seconds = 3, delay = 0.5 })

-- the packing gives back what went in, second by second
local unpacked = {}
for i, encoding in assert(distributed.unpack_seconds(fast_packed)) do unpacked[i] = encoding or false end
t.eq(#unpacked, #fast.series, "every second unpacked")
for i = 1, #fast.series do
  t.eq(unpacked[i] or nil, fast_seconds[i], "second " .. i .. " unpacked as packed")
end
t.eq(select(2, distributed.unpack_seconds("junk")), "not a per-second histogram object", "junk refused")
t.ok(distributed.unpack_seconds(fast_packed:sub(1, -2)) == nil, "a truncated object is refused")

-- control.merge_encoded and hist_quantiles: bad input is nil, message
t.eq(control.merge_encoded(nil, "x"), nil, "merge_encoded refuses a non-encoding")
t.eq(control.hist_quantiles("x"), nil, "hist_quantiles refuses a non-encoding")
local q = control.hist_quantiles(fast_hist)
t.eq(q.count, fast.lat.count, "hist_quantiles counts the whole histogram")
t.eq(q.p99, fast.lat.p99, "and its p99 is the bench's")

local merger = distributed.merger()
merger:add(fast, fast_hist, fast_packed)
merger:add(slow, slow_hist, slow_packed)
local merged = merger:result()
t.eq(merged.series_p99, "merged", "the series' p99 comes from merged histograms")
t.eq(merged.ops, fast.ops + slow.ops, "ops summed")
t.eq(merged.lat.count, fast.lat.count + slow.lat.count, "the whole histogram merged")

local differing = 0
for i, s in ipairs(merged.series) do
  local a, b = fast_seconds[i], slow_seconds[i]
  local parts = {}
  if a then parts[#parts + 1] = a end
  if b then parts[#parts + 1] = b end
  if #parts > 0 then
    local union = control.merge_histograms(parts)
    t.eq(s.lat_count, union.count, "second " .. i .. ": the merged histogram holds both agents' ops")
    t.eq(s.lat_count, s.ops, "second " .. i .. ": as many as the series' ops")
    t.eq(s.p99, union.p99, "second " .. i .. ": p99 is the union's p99")
    t.eq(s.p50, union.p50, "second " .. i .. ": p50 is the union's p50")
    t.eq(s.p999, union.p99_9, "second " .. i .. ": p99.9 is the union's")
    t.eq(s.max_lat, union.max, "second " .. i .. ": max is the union's")
    local worst = math.max(fast.series[i] and fast.series[i].p99 or 0, slow.series[i] and slow.series[i].p99 or 0)
    t.eq(s.p99_worst_agent, worst, "second " .. i .. ": the worst agent's p99 is kept beside it")
    t.ok(s.p99 <= s.p99_worst_agent * 1.001, "second " .. i .. ": never above the worst agent's")
    local slow_ops = slow.series[i] and slow.series[i].ops or 0
    if slow_ops > 0 and slow_ops * 100 < s.ops and fast.series[i].max_lat < 0.5 then
      t.ok(s.p99 < s.p99_worst_agent, "second " .. i .. ": the slow agent's few ops do not make the p99")
      t.ok(s.p99_worst_agent >= 0.5, "second " .. i .. ": the worst agent's p99 is the slow one's")
      differing = differing + 1
    end
  end
end
t.ok(differing >= 1, "at least one second where the merged p99 and the worst agent's differ")

-- an agent without per-second histograms: the series says its p99 is the worst agent's
local partial = distributed.merger()
partial:add(fast, fast_hist, fast_packed)
partial:add(slow, slow_hist, nil)
local worst_only = partial:result()
t.eq(worst_only.series_p99, "worst agent", "a missing per-second object falls back to the worst agent")
t.ok(worst_only.series_p99_why:find("slow", 1, true) ~= nil, "and names the agent")
t.eq(worst_only.series[1].p99, worst_only.series[1].p99_worst_agent, "p99 is then the worst agent's")

t.done()
