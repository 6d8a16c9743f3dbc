-- bench/space-reading-cost.lua: what a phase's space reading (docs/space.md) costs the
-- client: 30 settled readings on a cluster with a mgr (each: flush_pg_stats to every OSD,
-- osd last-stat-seq polled every 0.5 s until the mons have the reports, ceph df detail),
-- and 30 `mgr stat` commands (all a reading costs without a mgr); CPU time of this process
-- and wall time, per reading. Run with CEPH_CONF pointing at the cluster:
--   CEPH_CONF=... build/cephmark run bench/space-reading-cost.lua
local space = require "cephmark.space"
local rados = require "cephmark.rados"
local sys = require "cephmark.sys"
local c = rados.connect {}
local n = 30
local tr = space.tracker { cluster = function() return c end, pools = function() return {} end }
tr.per_pool = true
local function cpu() local u, s = sys.cpu_times(); return u + s end
local c0, w0 = cpu(), sys.monotonic()
for _ = 1, n do tr:settled_reading(sys.monotonic() - 100) end
local c1, w1 = cpu(), sys.monotonic()
for _ = 1, n do tr:mgr_available() end
local c2, w2 = cpu(), sys.monotonic()
print(string.format("settled reading: %.2f ms CPU, %.0f ms wall each; mgr stat: %.3f ms CPU, %.2f ms wall each",
  (c1 - c0) / n * 1000, (w1 - w0) / n * 1000, (c2 - c1) / n * 1000, (w2 - w1) / n * 1000))
