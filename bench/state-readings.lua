-- bench/state-readings.lua: the cluster-state readings of a phase on their own, for
-- bench/state-cost.sh to time with bench/cpurun: PART=read takes READINGS readings
-- (`status`, and `df` for POOLS pool names, classified as cephmark.state does) on the
-- run's connection; PART=none only connects as a run does (the baseline).
local rados = require "cephmark.rados"
local state = require "cephmark.state"
local part = os.getenv("PART") or "none"
local readings = tonumber(os.getenv("READINGS") or "100")
local pools = {}
for i = 1, tonumber(os.getenv("POOLS") or "2") do pools[i] = "cephmark-bench-pool-" .. i end
local main = assert(rados.connect {})
if part == "read" then
  local reading
  for _ = 1, readings do reading = assert(state.read(main, pools)) end
  print(string.format("readings=%d mgr=%s pgs=%s", readings, tostring(reading.mgr),
    type(reading.pgs) == "table" and tostring(reading.pgs.total) or "unknown"))
end
main:close()
