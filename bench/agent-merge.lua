-- bench/agent-merge.lua: how long the coordinator takes from the moment every agent has
-- written its result to the merged result, as the number of agents grows, with
-- one-hour-sized results. Each agent's result is what `cephmark agent` writes after a phase
-- (its bench result as JSON, per-second series included, and its encoded latency
-- histogram), made from a real null-target phase whose series is stretched to `seconds`
-- entries. For each agent count, interleaved over `rounds`: the objects are written into a
-- pool of the bench's own, then timed: the coordinator's fetch of every agent (stat and
-- reads, as distributed.lua's result loop does) and the merger (each result folded in as
-- it arrives: series summed by second, histograms merged exactly), twice, interleaved: as
-- before the per-second histograms ("worst agent": each second's p99 the worst agent's)
-- and with them ("merged": each agent's per-second histograms read and folded second by
-- second). Prints the medians, bytes per agent and the peak resident memory (run one agent
-- count at a time to read it per count).
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

-- one agent's result, as an agent writes it (with its per-second histograms)
local base_hists = {}
local r = null.bench { seconds = 3, threads = 16, delay = 0.001, second_histograms = true,
  on_second = function(second) base_hists[#base_hists + 1] = second.hist end }
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
local second_hists = {}
for i = 1, seconds do second_hists[i] = base_hists[(i - 1) % #base_hists + 1] end
local packed_seconds = distributed.pack_seconds(second_hists, seconds)
-- "worst agent": the coordinator as it was, each second's p99 the worst agent's (no
-- per-second histograms written or read); "merged": the per-second histograms written,
-- read and folded second by second. Both interleaved in every round.
local modes = { "worst agent", "merged" }

local cluster <close> = connection.connect()
local pool_name = "cephmark-bench-merge-" .. sys.getpid()
assert(cluster:pool_create { name = pool_name, type = "replicated", size = 3 })
local pool <close> = assert(cluster:pool(pool_name))
local ok, err = pcall(function()
  local samples = {}
  local bytes
  for round = 1, rounds do
    for _, n in ipairs(counts) do
      for m, mode in ipairs(round % 2 == 1 and modes or { modes[2], modes[1] }) do
        local run = string.format("bm%d%d%d", round, n, m)
        local names = {}
        for a = 1, n do
          local name = string.format("agent%04d", a)
          names[a] = name
          document.agent = name
          local text = json.encode(document)
          bytes = #text + #hist + #packed_seconds
          assert(pool:write_full(distributed.result_object(run, 1, name), text))
          assert(pool:write_full(distributed.hist_object(run, 1, name), hist))
          if mode == "merged" then
            assert(pool:write_full(distributed.second_hist_object(run, 1, name), packed_seconds))
          end
        end
        local coordinator = setmetatable({ pool = pool, run = run, objects = {} }, distributed.Coordinator)
        -- as the coordinator's result loop: each agent fetched, folded into the merger, dropped
        local merger, fetch_s, merge_s = distributed.merger(), 0, 0
        for _, name in ipairs(names) do
          local t0 = sys.monotonic()
          local result, h, shist = coordinator:fetch(1, name)
          local t1 = sys.monotonic()
          merger:add(assert(result, "no result for " .. name), h, shist)
          result.series = nil
          fetch_s, merge_s = fetch_s + (t1 - t0), merge_s + (sys.monotonic() - t1)
        end
        local t2 = sys.monotonic()
        local merged = merger:result()
        merge_s = merge_s + (sys.monotonic() - t2)
        assert(merged.ops == n * r.ops and merged.lat.count == n * r.lat.count, "the merge lost ops")
        assert(#merged.series == seconds)
        assert(merged.series_p99 == mode, "series p99 is " .. tostring(merged.series_p99) .. ", expected " .. mode)
        if mode == "merged" then
          local s = merged.series[1]
          assert(s.lat_count == n * base[1].ops, "a merged second lost ops")
        end
        samples[mode] = samples[mode] or {}
        samples[mode][n] = samples[mode][n] or { fetch = {}, merge = {} }
        table.insert(samples[mode][n].fetch, fetch_s)
        table.insert(samples[mode][n].merge, merge_s)
        for _, name in ipairs(coordinator.objects) do pool:remove(name) end
        io.stderr:write(string.format("round %d, %d agents, %s: fetch %.3f s, merge %.3f s\n", round, n, mode,
          fetch_s, merge_s))
      end
    end
  end
  local function median(list)
    table.sort(list)
    local m = #list // 2
    return #list % 2 == 1 and list[m + 1] or (list[m] + list[m + 1]) / 2
  end
  print(string.format("one agent's result: %d bytes (%d-second series; per-second histograms %d bytes), "
    .. "medians of %d rounds", bytes, seconds, #packed_seconds, rounds))
  print("series p99     agents  fetch s  merge s  total s  per agent ms")
  for _, n in ipairs(counts) do
    for _, mode in ipairs(modes) do
      local f, m = median(samples[mode][n].fetch), median(samples[mode][n].merge)
      print(string.format("%-12s  %6d  %7.3f  %7.3f  %7.3f  %12.1f", mode, n, f, m, f + m, (f + m) * 1000 / n))
    end
  end
end)
local status = io.open("/proc/self/status"):read("a")
print("peak resident memory (VmHWM): " .. (status:match("VmHWM:%s*(%d+ kB)") or "?"))
pool:close()
cluster:pool_delete(pool_name)
if not ok then error(err, 0) end
