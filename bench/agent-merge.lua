-- bench/agent-merge.lua: how long the coordinator takes from the moment every agent has
-- written its result to the merged result, as the number of agents grows, with
-- one-hour-sized results. Each agent's result is what `cephmark agent` writes after a phase
-- (its bench result as JSON, per-second series included, and its encoded latency
-- histogram), made from a real null-target phase whose series is stretched to `seconds`
-- entries. For each agent count, interleaved over `rounds`: the objects are written into a
-- pool of the bench's own, then timed: the coordinator's fetch of every agent (stat and
-- two reads, as distributed.lua's result loop does) and the merger (each result folded in as
-- it arrives: series summed by second, histograms merged exactly). Prints the medians, bytes per agent and the peak
-- resident memory (run one agent count at a time to read it per count).
--   cephmark run bench/agent-merge.lua [-p agents=2,8,24] [-p seconds=3600] [-p rounds=3]
-- Needs a cluster (CEPH_CONF); creates and deletes the pool cephmark-bench-merge-<pid>.
local connection = require "cephmark.connection"
local control = require "cephmark.control"
local distributed = require "cephmark.distributed"
local json = require "cephmark.json"
local null = require "cephmark.null"
local sys = require "cephmark.sys"

local p = ...
local counts = {}
for n in (p.agents or "2,8,24"):gmatch("%d+") do counts[#counts + 1] = tonumber(n) end
local seconds = tonumber(p.seconds or "3600")
local rounds = tonumber(p.rounds or "3")

-- one agent's result, as an agent writes it
local r = null.bench { seconds = 3, threads = 16, delay = 0.001 }
local hist = control.histogram(r)
local document = {}
for k, v in pairs(r) do document[k] = v end
local base = r.series
local series = {}
for i = 1, seconds do
  local s = {}
  for k, v in pairs(base[(i - 1) % #base + 1]) do s[k] = v end
  s.sec = i
  series[i] = s
end
document.series = series
document.stopped = false

local cluster <close> = connection.connect()
local pool_name = "cephmark-bench-merge-" .. sys.getpid()
assert(cluster:pool_create { name = pool_name, type = "replicated", size = 3 })
local pool <close> = assert(cluster:pool(pool_name))
local ok, err = pcall(function()
  local samples = {}
  local bytes
  for round = 1, rounds do
    for _, n in ipairs(counts) do
      local run = string.format("bm%d%d", round, n)
      local names = {}
      for a = 1, n do
        local name = string.format("agent%04d", a)
        names[a] = name
        document.agent = name
        local text = json.encode(document)
        bytes = #text + #hist
        assert(pool:write_full(distributed.result_object(run, 1, name), text))
        assert(pool:write_full(distributed.hist_object(run, 1, name), hist))
      end
      local coordinator = setmetatable({ pool = pool, run = run, objects = {} }, distributed.Coordinator)
      -- as the coordinator's result loop: each agent fetched, folded into the merger, dropped
      local merger, fetch_s, merge_s = distributed.merger(), 0, 0
      for _, name in ipairs(names) do
        local t0 = sys.monotonic()
        local result, h = coordinator:fetch(1, name)
        local t1 = sys.monotonic()
        merger:add(assert(result, "no result for " .. name), h)
        result.series = nil
        fetch_s, merge_s = fetch_s + (t1 - t0), merge_s + (sys.monotonic() - t1)
      end
      local t2 = sys.monotonic()
      local merged = merger:result()
      merge_s = merge_s + (sys.monotonic() - t2)
      assert(merged.ops == n * r.ops and merged.lat.count == n * r.lat.count, "the merge lost ops")
      assert(#merged.series == seconds)
      samples[n] = samples[n] or { fetch = {}, merge = {} }
      table.insert(samples[n].fetch, fetch_s)
      table.insert(samples[n].merge, merge_s)
      for _, name in ipairs(coordinator.objects) do pool:remove(name) end
      io.stderr:write(string.format("round %d, %d agents: fetch %.3f s, merge %.3f s\n", round, n, fetch_s, merge_s))
    end
  end
  local function median(list)
    table.sort(list)
    local m = #list // 2
    return #list % 2 == 1 and list[m + 1] or (list[m] + list[m + 1]) / 2
  end
  print(string.format("one agent's result: %d bytes (%d-second series), medians of %d rounds", bytes, seconds, rounds))
  print("agents  fetch s  merge s  total s  per agent ms")
  for _, n in ipairs(counts) do
    local f, m = median(samples[n].fetch), median(samples[n].merge)
    print(string.format("%6d  %7.3f  %7.3f  %7.3f  %12.1f", n, f, m, f + m, (f + m) * 1000 / n))
  end
end)
local status = io.open("/proc/self/status"):read("a")
print("peak resident memory (VmHWM): " .. (status:match("VmHWM:%s*(%d+ kB)") or "?"))
pool:close()
cluster:pool_delete(pool_name)
if not ok then error(err, 0) end
