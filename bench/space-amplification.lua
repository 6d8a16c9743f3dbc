-- bench/space-amplification.lua: the measured space amplification (docs/space.md) of a
-- size-3 pool and an EC 2+1 pool for one object size: `ops` objects of `block_size` written
-- into each, ceph df detail read after each write (cluster.space), one line per pool:
-- stored, raw used, objects, raw per stored byte, raw per byte written, the wait for
-- settled figures. Run by bench/space-amplification.sh against a cluster with a mgr.
local cm = require "cephmark"
local sys = require "cephmark.sys"

return cm.scenario {
  name = "space-amplification",
  params = {
    block_size = cm.size("4M", "object size", { min = 1 }),
    ops = cm.integer(8, "objects written into each pool", { min = 1 }),
    store = cm.string("?", "the OSDs' store, for the lines"),
  },
  pools = { rep = { type = "replicated", size = 3, pg_num = 8 }, ec = { type = "erasure", k = 2, m = 1, pg_num = 8 } },
  run = function(s, p)
    for _, label in ipairs { "rep", "ec" } do
      s:phase("write", s:pool(label), { ops = p.ops, threads = 4, block_size = p.block_size, report = "none" })
      local space = s:phase_records()[#s:phase_records()].cluster.space
      local function f(v, format) return v and string.format(format, v) or "-" end
      print(string.format("%-9s %6s %4d x %-5s stored %12s raw %12s objects %4s raw/stored %6s raw/written %6s %s %s",
        p.store, label, p.ops, sys.format_size(p.block_size), f(space.stored, "%d"),
        f(space.raw_used or space.raw_change, "%d"), f(space.objects, "%d"), f(space.raw_per_stored, "%.3f"),
        f(space.raw_per_written, "%.3f"), space.settled and "settled in" or "NOT settled after",
        f(space.waited, "%.1f s")))
    end
  end,
}
