-- CPU per op (cephmark.cpu, sys.process_cpu) without a cluster: the /proc scan against
-- children started here (a busy shell loop for a known time, and what their command lines
-- say: name, config file, cluster), the phase's figures from two snapshots (a daemon that
-- restarted or went away in between is never subtracted across), the summary line, and
-- the client's CPU that the engine measures on the null target.
local sys = require "cephmark.sys"
local cpu = require "cephmark.cpu"
local t = require "cephmark.test"

-- the scan itself: ceph daemons or none, every entry whole
local all = sys.process_cpu()
t.eq(type(all), "table", "process_cpu() returns a list")
for _, process in ipairs(all) do
  t.ok(process.cpu >= 0 and process.start > 0 and process.pid > 0, "entry " .. process.name .. " is whole")
end
t.raises(function() sys.process_cpu({}) end, "list of 1 to 32 process names", "an empty list of names")
t.raises(function() sys.process_cpu({ 1 }) end, "process names %(strings%)", "a name that is not a string")

local dir = os.getenv("TMPDIR") or "/tmp"
local conf_a = string.format("%s/cephmark-cpu-test-%d-a.conf", dir, sys.getpid())
local conf_b = string.format("%s/cephmark-cpu-test-%d-b.conf", dir, sys.getpid())
sys.write_file(conf_a, "")
sys.write_file(conf_b, "")
-- `sh -c SCRIPT $0 ARGS...`: the arguments after the script are a daemon's flags to /proc
local loop = "while :; do :; done"
local busy = assert(sys.spawn { "sh", "-c", loop, "sh", "--id", "7", "--conf", conf_a, "--cluster=c1" })
local idle = assert(sys.spawn { "sh", "-c", "sleep 30", "sh", "-n", "client.rgw.x", "-c", conf_b })
local function find(list, pid)
  for _, process in ipairs(list) do
    if process.pid == pid then return process end
  end
end
local ok, err = pcall(function()
  local first = find(sys.process_cpu({ "sh" }), busy)
  t.ok(first ~= nil, "the busy child is found by its comm")
  t.eq(first.comm, "sh", "comm")
  t.eq(first.name, "sh.7", "--id 7 names it <kind>.7")
  t.eq(first.conf, conf_a, "--conf is the config file it reads (the last -c/--conf wins)")
  t.eq(first.cluster, "c1", "--cluster=c1")
  local second = find(sys.process_cpu({ "sh" }), idle)
  t.eq(second.name, "client.rgw.x", "-n names it by its own name")
  t.eq(second.conf, conf_b, "-c")
  t.eq(second.cluster, nil, "no --cluster")
  t.eq(find(sys.process_cpu({ "ceph-osd" }), busy), nil, "a process of another name is left out")

  -- the busy loop's CPU over a known time: more than nothing, at most the wall time (one
  -- core) and a clock tick
  -- the wall time spans both readings, so it is never shorter than the CPU interval
  local started = sys.monotonic()
  local before = cpu.snapshot(conf_a, { "sh" })
  sys.sleep(1)
  local after = cpu.snapshot(conf_a, { "sh" })
  local wall = sys.monotonic() - started
  t.ok(before["sh.7"] ~= nil, "snapshot keeps the process reading its conf")
  t.eq(before["client.rgw.x"], nil, "and leaves out one reading another conf (another cluster)")
  local figures = cpu.phase(before, after, { user = 0.1, system = 0.1, ops = 100, bytes = 100 * 1048576 })
  local busy_seconds = figures.daemons["sh.7"].seconds
  t.ok(busy_seconds > 0, "the busy child's CPU over the second is > 0 (" .. busy_seconds .. " s)")
  t.ok(busy_seconds <= wall + 0.02, string.format("and <= the wall time (%.3f s against %.3f s)", busy_seconds, wall))
  t.eq(figures.scope, "daemons on this host", "scope")
  t.eq(cpu.snapshot(conf_a .. ".missing", { "sh" }) and next(cpu.snapshot(conf_a .. ".missing", { "sh" })), nil,
    "a conf no process reads: none")
  t.eq(cpu.snapshot(nil, { "sh" }) == nil or next(cpu.snapshot(nil, { "sh" })) == nil, true,
    "no conf known: no daemons")
end)
-- a "ceph-osd" (a copy of sh, so that its comm is that) reading conf_a, restarted between
-- two snapshots: the default scan finds it as osd.9, and the phase marks it restarted
local fake = dir .. "/cephmark-cpu-test-" .. sys.getpid() .. "/ceph-osd"
local fake_pids = {}
local restarted_ok, restarted_err = pcall(function()
  assert(sys.mkdir(fake:match("(.*)/")))
  assert(sys.write_file(fake, assert(sys.read_file("/bin/sh"))))
  assert(sys.run { "chmod", "+x", fake }.status == 0)
  local argv = { fake, "-c", loop, "ceph-osd", "--conf", conf_a, "-i", "9" }
  fake_pids[1] = assert(sys.spawn(argv))
  sys.sleep(0.3)
  local before = cpu.snapshot(conf_a)
  t.eq(before["osd.9"] and before["osd.9"].pid, fake_pids[1], "the default scan finds a ceph-osd reading conf_a as osd.9")
  sys.kill(fake_pids[1], "KILL")
  fake_pids[2] = assert(sys.spawn(argv))
  sys.sleep(0.3)
  local after = cpu.snapshot(conf_a)
  local figures = cpu.phase(before, after, { user = 0, system = 0, ops = 10, bytes = 0 })
  t.eq(figures.daemons["osd.9"].restarted, true, "a new process under the same name: restarted")
  t.ok(figures.daemons["osd.9"].seconds <= after["osd.9"].cpu, "counted from its own start only")
  t.eq(figures.osds, 1, "one ceph-osd")
  t.match(cpu.summary_text(figures), "%(1 ceph%-osd, 1 restarted%)", "the line says so")
end)
for _, pid in ipairs(fake_pids) do sys.kill(pid, "KILL") end
os.remove(fake)
os.remove(fake:match("(.*)/"))
sys.kill(busy, "KILL")
sys.kill(idle, "KILL")
if not restarted_ok then error(restarted_err, 0) end
os.remove(conf_a)
os.remove(conf_b)
if not ok then error(err, 0) end

-- the phase's figures from two snapshots, by hand
local before = {
  ["osd.0"] = { comm = "ceph-osd", pid = 10, cpu = 5.0, start = 100 },
  ["osd.1"] = { comm = "ceph-osd", pid = 11, cpu = 7.0, start = 100 },
  ["osd.2"] = { comm = "ceph-osd", pid = 12, cpu = 9.0, start = 100 },
  ["mon.a"] = { comm = "ceph-mon", pid = 13, cpu = 1.0, start = 90 },
  ["client.rgw.x"] = { comm = "radosgw", pid = 14, cpu = 1.0, start = 90 },
}
local after = {
  ["osd.0"] = { comm = "ceph-osd", pid = 10, cpu = 6.0, start = 100 },
  -- restarted: a new process with a smaller total; only its own CPU counts
  ["osd.1"] = { comm = "ceph-osd", pid = 21, cpu = 0.5, start = 300 },
  ["osd.2"] = { comm = "ceph-osd", pid = 12, cpu = 10.5, start = 100 },
  ["mon.a"] = { comm = "ceph-mon", pid = 13, cpu = 1.04, start = 90 },
  ["mgr.x"] = { comm = "ceph-mgr", pid = 15, cpu = 0.2, start = 350 },
}
local figures = cpu.phase(before, after, { user = 0.03, system = 0.01, ops = 1000, bytes = 1000 * 4096 })
t.near(figures.client.seconds, 0.04, 1e-12, "client seconds = user + system")
t.near(figures.client_per_op, 40e-6, 1e-12, "client per op")
t.near(figures.daemons["osd.0"].seconds, 1.0, 1e-12, "osd.0: the difference")
t.eq(figures.daemons["osd.1"].restarted, true, "osd.1 restarted (its start time changed)")
t.near(figures.daemons["osd.1"].seconds, 0.5, 1e-12, "osd.1: only the new process's CPU, never 0.5 - 7")
t.eq(figures.daemons["mgr.x"].started, true, "a daemon that was not there before: started")
t.eq(figures.daemons["client.rgw.x"].gone, true, "a daemon gone by the end")
t.eq(figures.daemons["client.rgw.x"].seconds, nil, "is not counted")
t.eq(figures.osds, 3, "three ceph-osd")
t.near(figures.osd_seconds, 3.0, 1e-12, "the OSDs' seconds: 1 + 0.5 + 1.5")
t.near(figures.osd_per_op, 3e-3, 1e-12, "osd per op")
t.eq(figures.kinds["ceph-osd"].restarted, 1, "one OSD restarted")
t.near(figures.kinds["ceph-mon"].per_op, 40e-6, 1e-12, "mon per op")
t.near(figures.mib_per_osd_cpu_second, 1000 * 4096 / 1048576 / 3.0, 1e-9, "MiB per OSD CPU-second")
t.eq(cpu.summary_text(figures),
  "cpu/op: client 40.0 µs, osds 3.00 ms (3 ceph-osd, 1 restarted), mon 40.0 µs, mgr 200 µs",
  "the summary line (a kind whose only daemon went away is not named)")

-- no OSD found: the client only, no daemon figures in the line
local no_osds = cpu.phase({ ["mon.a"] = before["mon.a"] }, { ["mon.a"] = after["mon.a"] },
  { user = 0.001, system = 0, ops = 10, bytes = 0 })
t.eq(no_osds.osd_per_op, nil, "no OSD: no osd_per_op")
t.eq(cpu.summary_text(no_osds), "cpu/op: client 100 µs", "no OSD: the client only")
t.eq(cpu.phase(nil, nil, nil), nil, "nothing measured: no table")
t.match(cpu.phase({ ["osd.0"] = { comm = "ceph-osd", pid = 1, cpu = "x", start = 1 } },
  { ["osd.0"] = { comm = "ceph-osd", pid = 1, cpu = 2, start = 1 } }, nil).missing, ".",
  "figures that cannot be made are recorded as missing, never raised")
t.eq(cpu.phase(nil, nil, { user = 0, system = 0, ops = 0, bytes = 0 }).client_per_op, nil, "no ops: no per op")

-- the precision measured, no more: ticks from /proc (with ticks and hz in the snapshots, as
-- sys.process_cpu gives them) and µs from getrusage; per-op figures keep as many
-- significant digits as the count of units
local json = require "cephmark.json"
local function ticked(pid, ticks) return { comm = "ceph-osd", pid = pid, cpu = ticks / 100, ticks = ticks, hz = 100, start = 7 } end
local tick_figures = cpu.phase({ ["osd.0"] = ticked(1, 501), ["osd.1"] = ticked(2, 1002), ["osd.2"] = ticked(3, 703) },
  { ["osd.0"] = ticked(1, 502), ["osd.1"] = ticked(2, 1003), ["osd.2"] = ticked(3, 704) },
  { user = 0.12767099999999987, system = 0.007408000000000003, ops = 10, bytes = 40960 })
t.eq(json.encode(tick_figures.daemons["osd.0"].seconds), "0.01", "one tick is 0.01 s")
t.eq(json.encode(tick_figures.osd_seconds), "0.03", "three ticks are 0.03 s, not a sum of floats")
t.eq(json.encode(tick_figures.osd_per_op), "0.003", "3 ticks over 10 ops: one significant digit")
t.eq(json.encode(tick_figures.daemons["osd.1"].per_op), "0.001", "1 tick over 10 ops")
t.eq(json.encode(tick_figures.mib_per_osd_cpu_second), "1.0", "one digit from three ticks")
t.eq(json.encode(tick_figures.client.user), "0.127671", "the client's user time in µs")
t.eq(json.encode(tick_figures.client.system), "0.007408", "and its system time")
t.eq(json.encode(tick_figures.client.seconds), "0.135079", "their sum in µs")
t.eq(json.encode(tick_figures.client_per_op), "0.0135079", "135079 µs over 10 ops: six digits")
local long = cpu.phase({ ["osd.0"] = ticked(1, 0) }, { ["osd.0"] = ticked(1, 123456789) },
  { user = 1, system = 0, ops = 7, bytes = 0 })
t.eq(json.encode(long.osd_per_op), "176367.0", "never more than six significant digits (176366.84...)")

-- formatting: three significant digits at most, ms from 1000 µs
t.eq(cpu.format(45.23e-6), "45.2 µs", "45.2 µs")
t.eq(cpu.format(410.4e-6), "410 µs", "410 µs")
t.eq(cpu.format(1.2345e-3), "1.23 ms", "1.23 ms")
t.eq(cpu.format(0.9996e-3), "1.00 ms", "rounds up into ms")
t.eq(cpu.format(0), "0 µs", "zero")
t.eq(cpu.format(1 / 100 / 6000, 1), "2 µs", "one tick over 6000 ops: one digit, not 1.67 µs")
t.eq(cpu.format(0.003, 1), "3 ms", "one digit in ms")
t.eq(cpu.format(45.23e-6, 2), "45 µs", "two digits")
t.eq(cpu.format(9.96e-6, 2), "10 µs", "two digits rounding up a decade")
t.eq(cpu.format(45.23e-6, 6), "45.2 µs", "never more than three")
t.eq(cpu.summary_text(tick_figures), "cpu/op: client 13.5 ms, osds 3 ms (3 ceph-osd)",
  "the line keeps the digits the ticks measured: 3 ticks over 10 ops")

-- comparisons judge CPU per op like a latency and MiB per OSD CPU-second like a bandwidth
local stats = require "cephmark.stats"
t.eq(stats.kind_of("cpu.osd_per_op"), "latency", "cpu.osd_per_op: lower is better")
t.eq(stats.kind_of("cpu.client_per_op"), "latency", "cpu.client_per_op: lower is better")
t.eq(stats.kind_of("cpu.mib_per_osd_cpu_second"), "rate", "cpu.mib_per_osd_cpu_second: higher is better")
t.eq(stats.kind_of("cpu.osds"), nil, "a count has no direction")
local compare = require "cephmark.compare"
t.eq(compare.record_value({ result = { iops = 5 }, cluster = { cpu = { osd_per_op = 4e-4 } } }, "cpu.osd_per_op"), 4e-4,
  "a metric read from the phase's cluster table")
t.eq(compare.record_value({ result = { iops = 5 } }, "cpu.osd_per_op"), nil, "absent without one")
t.eq(compare.record_value({ result = { iops = 5 }, cluster = { cpu = {} } }, "iops"), 5, "result fields as before")
t.eq(compare.header("cpu.osd_per_op"), "cpu.osd_per_op µs", "tables show CPU per op in µs")
t.eq(compare.format_value("cpu.osd_per_op", 517e-6), "517.0", "517 µs, not 0.001 s")
t.eq(compare.format_interval("cpu.client_per_op", { median = 81.2e-6, ci_low = 76.3e-6, ci_high = 86.3e-6 }),
  "81 [76, 86]", "an interval in µs, with the digits its width supports")
t.eq(compare.format_value("cpu.mib_per_osd_cpu_second", 5.1), "5.100", "MiB per OSD CPU-second as it is")

-- the engine measures the client's CPU on the null target: over the run, all its ops
local null = require "cephmark.null"
local result = null.bench { seconds = 0.5, threads = 4, delay = "1ms" }
t.eq(type(result.client_cpu), "table", "a bench result carries client_cpu")
t.eq(result.client_cpu.ops, result.ops, "over every completed op (no warm-up here)")
t.ok(result.client_cpu.user + result.client_cpu.system > 0, "some CPU was used")
t.ok(result.client_cpu.user + result.client_cpu.system <= result.elapsed * 2 + 0.05,
  "at most the wall time on each of two cores")

return t.done()
