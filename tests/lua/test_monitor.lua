-- The host monitor's arithmetic without a cluster (cephmark.monitor): /proc/diskstats,
-- /proc/net/dev and /proc/stat parsed from fixture text, which devices are kept, the
-- deltas over a window (utilisation, await, bytes, a counter that went backwards), the
-- figures from two readings with a part that could not be read, and the summary lines.
local monitor = require "cephmark.monitor"
local t = require "cephmark.test"

-- /proc/diskstats as a 5.x kernel writes it (17 fields after the name), with a 4.x line
-- (11 fields), an old kernel's short partition line, loop, ram, zram, partitions, dm, md
local diskstats_before = [[
   7       0 loop0 120 0 960 10 0 0 0 0 0 20 10 0 0 0 0 0 0
   1       0 ram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 253       0 zram0 5 0 40 1 9 0 72 2 0 3 3 0 0 0 0 0 0
   8       0 sda 1000 10 80000 500 2000 20 160000 3000 0 4000 3500 0 0 0 0 0 0
   8       1 sda1 900 10 72000 450 1900 20 150000 2900 0 3900 3350 0 0 0 0 0 0
 259       0 nvme0n1 100 0 800 10 100 0 800 10 0 20 20
 259       1 nvme0n1p1 90 0 720 9 90 0 720 9 0 18 18
   8      16 sdb 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 253       1 dm-0 500 0 4000 100 500 0 4000 100 0 200 200 0 0 0 0 0 0
   9     127 md127 50 0 400 5 50 0 400 5 0 10 10 0 0 0 0 0 0
   8       2 sda2 10 20 30 40
]]
local diskstats_after = [[
   7       0 loop0 220 0 1760 20 0 0 0 0 0 40 20 0 0 0 0 0 0
   1       0 ram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 253       0 zram0 5 0 40 1 9 0 72 2 0 3 3 0 0 0 0 0 0
   8       0 sda 1100 10 88000 700 2300 20 184000 3600 0 4500 4300 0 0 0 0 0 0
   8       1 sda1 1000 10 80000 650 2200 20 174000 3500 0 4400 4150 0 0 0 0 0 0
 259       0 nvme0n1 100 0 800 10 100 0 800 10 0 20 20
 259       1 nvme0n1p1 90 0 720 9 90 0 720 9 0 18 18
   8      16 sdb 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 253       1 dm-0 400 0 3200 80 400 0 3200 80 0 150 150 0 0 0 0 0 0
   9     127 md127 50 0 400 5 50 0 400 5 0 10 10 0 0 0 0 0 0
   8      32 sdc 10 0 80 5 0 0 0 0 0 2000 5 0 0 0 0 0 0
   8       2 sda2 10 20 30 40
]]

local before = monitor.parse_diskstats(diskstats_before)
local after = monitor.parse_diskstats(diskstats_after)
t.eq(after.sda.reads, 1100, "sda reads completed (field 4)")
t.eq(after.sda.read_sectors, 88000, "sda sectors read (field 6)")
t.eq(after.sda.write_ms, 3600, "sda ms writing (field 11)")
t.eq(after.sda.io_ms, 4500, "sda io_ticks (field 13)")
t.eq(after.nvme0n1.writes, 100, "a 4.x line with 11 fields is read")
t.eq(after.sda2, nil, "a short partition line of an old kernel is skipped")

-- which devices: by /sys/block when it can be listed, else by the kernel's naming
local whole = { loop0 = true, ram0 = true, zram0 = true, sda = true, sdb = true, sdc = true, nvme0n1 = true,
  ["dm-0"] = true, md127 = true, ["cciss!c0d0"] = true }
for _, case in ipairs {
  { "sda", true }, { "sda1", false }, { "nvme0n1", true }, { "nvme0n1p1", false }, { "loop0", false },
  { "ram0", false }, { "zram0", false }, { "dm-0", true }, { "md127", true }, { "cciss/c0d0", true },
} do
  t.eq(monitor.disk_kept(case[1], whole), case[2], "with /sys/block: " .. case[1])
end
for _, case in ipairs {
  { "sda", true }, { "sda1", false }, { "vdb", true }, { "vdb12", false }, { "xvda1", false }, { "hdc3", false },
  { "nvme0n1", true }, { "nvme0n1p1", false }, { "mmcblk0", true }, { "mmcblk0p2", false }, { "md0p1", false },
  { "dm-3", true }, { "md127", true }, { "loop7", false }, { "ram15", false }, { "zram0", false }, { "nbd0", true },
} do
  t.eq(monitor.disk_kept(case[1], nil), case[2], "by name: " .. case[1])
end
local kept, why = monitor.disk_kept("sda1", whole)
t.eq(why, "partition", "the rule that left sda1 out")
kept, why = monitor.disk_kept("loop0", whole)
t.eq(why, "loop or memory device", "the rule that left loop0 out")

-- deltas over a 2 s window
local disks = monitor.disk_delta(before, after, 2.0, whole)
local names = {}
for name in pairs(disks) do names[#names + 1] = name end
table.sort(names)
t.eq(table.concat(names, " "), "dm-0 md127 nvme0n1 sda sdc",
  "kept: whole devices that ever did I/O; no loop, ram, zram, partition or never-used sdb")
local sda = disks.sda
t.eq(sda.reads, 100, "sda reads over the window")
t.eq(sda.writes, 300, "sda writes over the window")
t.eq(sda.read_bytes, 8000 * 512, "bytes from 512-byte sectors")
t.eq(sda.write_bytes, 24000 * 512, "written bytes")
t.eq(sda.ops, 400, "ops: reads and writes")
t.near(sda.busy_seconds, 0.5, 1e-12, "io_ticks delta, in seconds")
t.near(sda.utilisation, 0.25, 1e-12, "utilisation = 500 ms busy / 2000 ms")
t.near(sda.await, (200 + 600) / 400 / 1000, 1e-12, "await = (read + write ms) / ops, in seconds")
t.near(sda.read_await, 0.002, 1e-12, "read await")
t.near(sda.write_await, 0.002, 1e-12, "write await")
t.eq(disks.nvme0n1.utilisation, 0, "an idle device: utilisation 0")
t.eq(disks.nvme0n1.await, nil, "no ops, no await (never 0/0)")
t.eq(disks["dm-0"].reset, true, "counters that went backwards: reset, no figures")
t.eq(disks["dm-0"].utilisation, nil, "a reset device has no utilisation")
t.eq(disks.sdc.added, true, "a device that appeared in the window is marked added")
t.eq(disks.sdc.utilisation, 1, "utilisation is at most 1 (io_ticks running past the window)")
t.eq(monitor.disk_delta(before, after, 0, whole).sda.utilisation, nil, "no window, no utilisation")
local by_name = monitor.disk_delta(before, after, 2.0, nil)
t.ok(by_name.sda and not by_name.sda1 and not by_name.nvme0n1p1, "without /sys/block, partitions by name")

-- /proc/net/dev, with a counter touching the colon and the two header lines
local net_before = [[
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000000    1000    0    0    0     0          0         0  1000000    1000    0    0    0     0       0          0
  eth0:123456789012 90000 1 2 0 0 0 0 5000000 40000 3 4 0 0 0 0
  ifb0:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  veth1: 500 5 0 0 0 0 0 0 500 5 0 0 0 0 0 0
]]
local net_after = [[
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 11485760    2000    0    0    0     0          0         0 11485760    2000    0    0    0     0       0          0
  eth0:124456789012 91000 1 3 0 0 0 0 5100000 40500 3 4 0 0 0 0
  ifb0:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  veth1: 100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0
  bond0: 4000 4 0 0 0 0 0 0 8000 8 0 0 0 0 0 0
]]
local nb, na = monitor.parse_net_dev(net_before), monitor.parse_net_dev(net_after)
t.eq(nb.eth0.rx_bytes, 123456789012, "a counter touching the colon is read")
t.eq(nb.eth0.tx_packets, 40000, "tx packets (field 10)")
t.eq(nb.eth0.rx_drops, 2, "rx drops")
t.eq(nb.Inter, nil, "the header lines are not interfaces")
local net = monitor.net_delta(nb, na, 2.0)
t.eq(net.lo.receive_bytes, 10485760, "lo bytes received over the window")
t.eq(net.lo.transmit_bytes, 10485760, "lo bytes sent")
t.eq(net.lo.receive_packets, 1000, "lo packets")
t.near(net.lo.receive_bytes_per_second, 5242880, 1e-6, "rate over the window")
t.eq(net.eth0.receive_bytes, 1000000000, "eth0 (64-bit counters)")
t.eq(net.eth0.receive_drops, 1, "eth0 drops over the window")
t.eq(net.eth0.transmit_errors, 0, "eth0 errors over the window")
t.eq(net.ifb0, nil, "an interface that never moved a byte is left out")
t.eq(net.veth1.reset, true, "an interface recreated in the window: reset")
t.eq(net.bond0.added, true, "an interface that appeared is marked added")
t.eq(net.bond0.transmit_bytes, 8000, "and counted from zero")

-- /proc/stat
local stat_before = monitor.parse_stat("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 400 25 0 0 0 0 0\nintr 1 2\n")
local stat_after = monitor.parse_stat("cpu  160 20 90 860 60 5 5 0 0 0\ncpu0 80 10 45 430 30 2 3 0 0 0\ncpu1 80 10 45 430 30 3 2 0 0 0\n")
t.eq(stat_before.cores, 2, "two cpuN lines")
local host_cpu = monitor.host_cpu_delta(stat_before, stat_after, 1.0)
-- deltas: user 60 nice 20 system 40 idle 60 iowait 10 irq 5 softirq 5: total 200 ticks,
-- which are 2 CPUs over 1 s
t.eq(host_cpu.cpus, 2, "cpus")
t.near(host_cpu.busy_fraction, 130 / 200, 1e-12, "busy: all but idle and iowait")
t.near(host_cpu.busy_seconds, 1.3, 1e-12, "busy seconds: the busy share of 2 CPUs over 1 s")
t.near(host_cpu.seconds.user, 0.6, 1e-12, "user seconds")
t.near(host_cpu.seconds.idle, 0.6, 1e-12, "idle seconds")
t.near(host_cpu.seconds.iowait, 0.1, 1e-12, "iowait seconds")
t.eq(monitor.host_cpu_delta(stat_after, stat_before, 1.0).reset, true, "backwards: reset")
t.eq(monitor.parse_stat("intr 1\n"), nil, "no cpu line: nothing understood")

-- figures from two readings: every part, and a part that could not be read
local daemons_a = { ["osd.0"] = { comm = "ceph-osd", pid = 10, cpu = 5.0, start = 1 } }
local daemons_b = { ["osd.0"] = { comm = "ceph-osd", pid = 10, cpu = 6.5, start = 1 } }
local reading_a = { monotonic = 100, realtime = 1e9, daemons = daemons_a, disks = before, net = nb, stat = stat_before,
  whole = whole }
local reading_b = { monotonic = 102, realtime = 1e9 + 2, daemons = daemons_b, disks = after, net = na, stat = stat_after,
  whole = whole }
local figures = monitor.figures(reading_a, reading_b)
t.eq(figures.window, 2, "window from the monotonic clock")
t.near(figures.ceph.kinds["ceph-osd"].seconds, 1.5, 1e-12, "ceph-osd CPU over the window (cpu.lua's rule)")
t.near(figures.disks.sda.utilisation, 0.25, 1e-12, "disks")
t.eq(figures.network.lo.receive_bytes, 10485760, "network")
t.near(figures.cpu.busy_fraction, 0.65, 1e-12, "host CPU")
t.near(figures.cpu.busy_seconds, 0.65 * 2 * 2, 1e-12, "host CPU seconds over the 2 s window")
t.eq(figures.missing, nil, "nothing missing")
reading_b.net, reading_b.net_error = nil, "read /proc/net/dev: Permission denied"
figures = monitor.figures(reading_a, reading_b)
t.eq(figures.network, nil, "an unreadable part has no figures")
t.eq(figures.missing.network, "read /proc/net/dev: Permission denied", "and says why")
t.ok(figures.disks.sda ~= nil, "the other parts are kept")
reading_b.net = na

-- this host's own reading: every part present on Linux
local now = monitor.read_host("/nonexistent/ceph.conf")
t.ok(now.disks and now.net and now.stat, "this host's /proc/diskstats, /proc/net/dev and /proc/stat are read")
t.ok(now.net.lo ~= nil, "lo is in /proc/net/dev")
t.eq(next(now.daemons), nil, "no daemon reads a config file that does not exist")

-- summary lines: the busiest disk and interface, and a missing monitor with its reason
local lines = monitor.summary_lines {
  ["mon-b"] = { missing = "no answer to the phase-start notify within 3 s; last heartbeat 4.0 s ago" },
  ["mon-a"] = monitor.figures(reading_a, reading_b),
}
t.eq(#lines, 2, "one line per monitor")
lines[1] = lines[1]:gsub("%(nil%)", "(node1)")
t.eq(lines[1], "    host mon-a (node1): osds 1.50 s CPU (1 ceph-osd) · host CPU 65% · sdc 100% util, await 0.50 ms · " ..
  "eth0 953.7 MiB in, 0.1 MiB out", "mon-a's line")
t.eq(lines[2], "    host mon-b: missing (no answer to the phase-start notify within 3 s; last heartbeat 4.0 s ago)",
  "mon-b's line")

t.done()
