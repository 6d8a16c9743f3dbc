-- bench/cpu-scan.lua: what one /proc scan of cephmark.cpu costs (sys.process_cpu, twice
-- per phase), in CPU µs per scan, with N matching "daemons" on the host: N `sleep`
-- processes stand in for ceph daemons (the same work: comm, stat and cmdline read per
-- match; every other process costs one comm read). Needs no cluster.
-- usage: cephmark run bench/cpu-scan.lua [-p counts=0,3,12,100,1000] [-p scans=200]
local cm = require "cephmark"
local sys = require "cephmark.sys"
return cm.scenario {
  name = "cpu-scan",
  params = { counts = cm.list(cm.integer(), { 0, 3, 12, 100, 1000 }), scans = cm.integer(200) },
  run = function(s, p)
    for _, count in ipairs(p.counts) do
      local children = {}
      local ok, err = pcall(function()
        for i = 1, count do children[i] = assert(sys.spawn { "sleep", "600" }) end
        local processes = #sys.list_dir("/proc")
        local found
        local user0, system0 = sys.cpu_times()
        local wall0 = sys.monotonic()
        for _ = 1, p.scans do found = sys.process_cpu({ "sleep" }) end
        local user1, system1 = sys.cpu_times()
        local wall = sys.monotonic() - wall0
        local scan_us = ((user1 - user0) + (system1 - system0)) / p.scans * 1e6
        print(string.format("daemons=%d found=%d proc_entries=%d cpu_us_per_scan=%.0f wall_us_per_scan=%.0f",
          count, #found, processes, scan_us, wall / p.scans * 1e6))
      end)
      for _, pid in ipairs(children) do sys.kill(pid, "KILL") end
      sys.sleep(0.2)
      sys.reap()
      if not ok then error(err, 0) end
    end
  end,
}
