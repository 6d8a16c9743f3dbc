-- bench/telemetry-readings.lua: a phase's OSD readings on their own, for
-- bench/telemetry-cost.sh to time with bench/cpurun: PART=read takes READINGS readings of
-- every OSD up (the perf dump sections each OSD has, decoded as cephmark.telemetry does) on
-- the run's connection; PART=none only connects as a run does (the baseline).
local rados = require "cephmark.rados"
local telemetry = require "cephmark.telemetry"
local part = os.getenv("PART") or "none"
local readings = tonumber(os.getenv("READINGS") or "100")
local main = assert(rados.connect {})
if part == "read" then
  local collector = telemetry.collector { warn = function(message) error(message) end,
    connect = function() return main end, borrowed = true }
  collector.cluster = main
  local ids = collector:osd_list()
  for _ = 1, readings do collector:read(ids, {}) end
  print(string.format("osds=%d readings=%d", #ids, readings))
end
main:close()
