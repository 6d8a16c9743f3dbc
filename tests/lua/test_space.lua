-- Space per pool without a cluster (cephmark.space): `ceph df detail` answers recorded on
-- the local cluster (memstore and bluestore, 3 OSDs, a size-3 pool and an EC 2+1 pool
-- holding 8 objects of 4M or 200 of 4K, tests/lua/fixtures) parsed into the figures and the
-- amplification; the rule that says when a lagging reading has settled, on a fake clock;
-- the summary line; space.* in comparisons and statistics, phases.csv and the report.
local compare = require "cephmark.compare"
local html = require "cephmark.report.html"
local json = require "cephmark.json"
local results = require "cephmark.results"
local space = require "cephmark.space"
local stats = require "cephmark.stats"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local fixtures = (os.getenv("CEPHMARK_SOURCE_DIR") or ".") .. "/tests/lua/fixtures/"
local function fixture(name)
  local text = assert(sys.read_file(fixtures .. name))
  return assert(json.decode(text))
end

-- bluestore keeps statistics per pool: bytes_used is the pool's raw bytes
local blue = assert(space.parse(fixture("df-bluestore-4M.json")))
t.eq(blue.per_pool, true, "bluestore: statistics per pool")
local rep = space.figures(blue, "cephmark-space-probe2-rep")
t.eq(rep.status, "measured", "a pool in the list is measured")
t.eq(rep.stored, 33554872, "stored as ceph df says")
t.eq(rep.objects, 10, "8 objects, the run's metadata object and the owner record")
t.eq(rep.raw_used, 100687872, "raw used is the pool's bytes_used")
t.eq(rep.raw_from, "pool", "said to come from the pool")
t.near(rep.raw_per_stored, 3.0, 0.03, "size 3, 4M objects: about 3.0 raw bytes per stored byte")
local ec = space.figures(blue, "cephmark-space-probe2-ec")
t.near(ec.raw_per_stored, 1.5, 0.015, "EC 2+1, 4M objects: about 1.5")
t.ok(ec.max_avail > 0 and ec.percent_used > 0, "max_avail and percent_used kept")
local missing = space.figures(blue, "no-such-pool")
t.eq(missing.status, "unknown", "a pool not in the list is unknown")
t.eq(missing.stored, nil, "and has no figures, never zeros")

-- small objects: a replicated pool's 4K objects pay the 4K allocation unit and the
-- metadata; an EC pool's stored bytes already include each object's padding to a stripe
local small = assert(space.parse(fixture("df-bluestore-4K.json")))
t.near(space.figures(small, "cephmark-space-probe2-rep").raw_per_stored, 3.028, 0.001, "4K objects, size 3")
local ec_small = space.figures(small, "cephmark-space-probe2-ec")
t.near(ec_small.raw_per_stored, 1.5, 0.001, "4K objects, EC 2+1: 1.5 of ceph's padded stored bytes")
t.eq(ec_small.stored, 1654784, "stored: 200 objects of 4K padded to 8K, and the run's small records")

-- memstore has no statistics per pool: bytes_used is the logical bytes, so the pool has
-- no raw figure of its own, and the amplification comes from the cluster's raw change
local mem = assert(space.parse(fixture("df-memstore-4M.json")))
t.eq(mem.per_pool, false, "memstore: no statistics per pool")
local mem_rep = space.figures(mem, "cephmark-space-probe-rep")
t.eq(mem_rep.bytes_used, mem_rep.stored, "memstore's bytes_used is the stored bytes")
t.eq(mem_rep.raw_used, nil, "so no raw figure of the pool")
t.eq(mem_rep.raw_per_stored, nil, "nor an amplification, without the change over a phase")
local changed = space.figures(mem, "cephmark-space-probe-rep", { raw = 3 * 33554432 + 4096, stored = 33554432 })
t.near(changed.raw_per_stored, 3.0, 0.001, "the cluster's raw change over the stored change")
t.eq(changed.raw_from, "cluster change", "said to come from the cluster's change")
t.eq(space.figures(mem, "cephmark-space-probe-rep", { raw = 4096, stored = 0 }).raw_per_stored, nil,
  "nothing stored over the phase: no figure")

t.eq(space.parse({ stats = {} }), nil, "an answer without a pool list is refused")

-- check: a reading older than the run's writes shows fewer bytes written (df's wr_bytes
-- only grows)
local name = "cephmark-space-probe2-rep"
t.eq(space.check(blue, { [name] = { wr_bytes = 32 * 1048576 } }), "ok", "the bytes written are there")
t.eq(space.check(blue, { [name] = { wr_bytes = 64 * 1048576 } }), "short", "fewer bytes than written")
t.eq(space.check(blue, { ["new"] = { wr_bytes = 4096 } }), "short", "a pool written to, not in the list yet")
t.eq(space.check(blue, { ["new"] = { wr_bytes = 0 } }), "ok", "a pool just created, not written to: nothing to wait for")

-- settle on a fake clock: readings come from a list, each read takes no time, sleeping
-- moves the clock; `flushed` says from which poll of the OSDs' sequence numbers on the mons
-- have their flushed statistics (nil: the OSDs could not be asked)
local function settle_with(readings, flushed, window, deadline)
  local now, reads, polls = 0, 0, 0
  local reading, freshness = space.settle {
    read = function()
      reads = reads + 1
      return readings[math.min(reads, #readings)]
    end,
    fresh = flushed and function()
      polls = polls + 1
      return polls >= flushed
    end,
    expect = { p = { wr_bytes = 4096 } }, window = window, deadline = deadline, poll = 0.5,
    clock = function() return now end, sleep = function(s) now = now + s end,
  }
  return reading, freshness, reads, now
end
local function reading_of(objects, wr_bytes)
  return { per_pool = true, total_used_raw = 1000 + objects, pools = { p = { objects = objects, wr_bytes = wr_bytes,
    stored = objects * 10, bytes_used = objects * 30 } } }
end
local stale, fresh = reading_of(1, 0), reading_of(10, 4096)
local got, freshness, reads = settle_with({ fresh }, 4, 7.5, 13)
t.eq(got, fresh, "the reading taken once the flushed statistics are in")
t.eq(freshness.settled, true, "settled")
t.eq(freshness.by, "the OSDs' statistics flushed", "by the flush")
t.near(freshness.waited, 1.5, 1e-9, "after three polls of 0.5 s")
t.eq(reads, 1, "one reading: df is not read while the statistics are on their way")
got, freshness = settle_with({ fresh }, 1, 7.5, 13)
t.eq(freshness.waited, 0, "already in: no wait")
got, freshness = settle_with({ stale, fresh }, 1, 7.5, 13)
t.eq(got, fresh, "flushed but showing fewer bytes than written: read again")
-- OSDs that could not be asked to flush: a full report cycle after the writes
got, freshness, reads = settle_with({ fresh }, nil, 7.5, 13)
t.eq(freshness.settled, true, "a report cycle later: settled")
t.eq(reads, 1, "read once, when the cycle is over")
t.near(freshness.waited, 7.5, 1e-9, "the window counts from the end of the writes")
got, freshness, reads = settle_with({ stale, fresh }, nil, 7.5, 13)
t.eq(got, fresh, "short after the cycle: read again")
t.eq(freshness.by, "a report cycle since the writes", "said so")
t.near(freshness.waited, 8, 1e-9, "one poll later")
t.eq(reads, 2, "two readings")
-- never showing the bytes written: gives up at the deadline, not settled
got, freshness, reads = settle_with({ stale }, 1, 7.5, 13)
t.eq(freshness.settled, false, "not settled")
t.near(freshness.waited, 13, 1e-9, "waited exactly to the deadline")
t.eq(reads, 27, "and no more readings than the polls")
-- statistics that never arrive: one reading, at the deadline, not settled
got, freshness, reads = settle_with({ fresh }, 1000, 7.5, 13)
t.eq(freshness.settled, false, "never flushed: not settled")
t.eq(freshness.by, "deadline", "at the deadline")
t.near(freshness.waited, 13, 1e-9, "waited to the deadline")
t.eq(reads, 1, "and read df once")
-- a failed reading ends the wait with its reason
local clock_now = 0
local none, why = space.settle { read = function() return nil, "mon says no" end, expect = {}, window = 1, deadline = 2,
  clock = function() return clock_now end, sleep = function(s) clock_now = clock_now + s end }
t.eq(none, nil, "a failed reading gives nothing")
t.eq(why, "mon says no", "and why")

-- the tracker without a mgr: unknown at once, never a wait, never zeros
local commands = {}
local slept = 0
local tracker = space.tracker {
  cluster = function()
    return { mon_command = function(_, cmd)
      commands[#commands + 1] = cmd.prefix
      if cmd.prefix == "mgr stat" then return { available = false } end
      error("unexpected command " .. cmd.prefix)
    end }
  end,
  pools = function() return { { label = "rep", name = "p-rep", created = true } } end,
  sleep = function(s) slept = slept + s end,
}
local unknown = tracker:after_phase("rep", tracker:before_phase())
t.eq(unknown.status, "unknown", "no mgr: unknown")
t.eq(unknown.reason, "no mgr reports", "because there are no mgr reports")
t.eq(unknown.stored, nil, "no stored figure")
t.eq(slept, 0, "and no wait")
t.eq(table.concat(commands, ","), "mgr stat,mgr stat", "only asked whether a mgr is there")
t.eq(space.summary_line(unknown), "    space: unknown: no mgr reports", "the summary line says so")

-- a store without statistics per pool (memstore): a settled reading before a write phase
-- and one after it, each after a flush; a later write phase with no phase between stands on
-- the reading after the one before, as does the end of the run, and only while it is
-- recent; the OSDs come from the run's list, not from `osd ls`
do
  local memstore = fixture("df-memstore-4M.json")
  local sent, flushes, clock = {}, 0, 1000
  local sessions = {
    mon_command = function(_, cmd)
      sent[#sent + 1] = cmd.prefix
      if cmd.prefix == "mgr stat" then return { available = true } end
      if cmd.prefix == "config get" then return nil, "not set" end
      if cmd.prefix == "df" then return memstore end
      if cmd.prefix == "osd last-stat-seq" then return "1000" end
      error("unexpected command " .. cmd.prefix)
    end,
    osd_commands = function(_, ids)
      flushes = flushes + 1
      local answers = {}
      for _, id in ipairs(ids) do answers[id] = { "7" } end
      return answers
    end,
  }
  local pool_name
  for _, pool in ipairs(memstore.pools) do
    if pool.stats.stored > 0 and not pool_name then pool_name = pool.name end
  end
  local mem = space.tracker {
    cluster = function() return sessions end,
    pools = function() return { { label = "rep", name = pool_name, created = false } } end,
    osd_ids = function() return { 0, 1, 2 } end,
    clock = function() return clock end,
    sleep = function(seconds) clock = clock + seconds end,
  }
  local function begin_phase() mem.phases_begun = mem.phases_begun + 1 end
  begin_phase()
  local before = mem:before_phase()
  t.eq(flushes, 1, "memstore: a settled reading before the first write")
  t.eq(before.freshness.reused, nil, "taken for it")
  mem:account("rep", "write", { bytes = 0, run_name = "a" })
  local after = mem:after_phase("rep", before)
  t.eq(flushes, 2, "and one after it")
  t.eq(after.status, "measured", "measured")
  begin_phase()
  local again = mem:before_phase()
  t.eq(flushes, 2, "the next write with no phase between: no new flush")
  t.eq(again.freshness.reused, true, "said to stand on the reading after the phase before")
  mem:account("rep", "write", { bytes = 0, run_name = "b" })
  mem:after_phase("rep", again)
  t.eq(flushes, 3, "after it: a reading of its own")
  local ending = mem:at_end()
  t.eq(flushes, 3, "the end of the run right after: the same reading")
  t.eq(ending.reused, true, "said as such")
  begin_phase() -- a read phase: nothing read for it
  begin_phase()
  mem:before_phase()
  t.eq(flushes, 4, "a phase between: a new reading")
  clock = clock + space.REUSE_FOR
  mem:at_end()
  t.eq(flushes, 5, "a reading older than REUSE_FOR: a new one")
  for _, prefix in ipairs(sent) do
    t.ok(prefix ~= "osd ls", "the OSDs come from the run's list, not osd ls")
  end
end

-- a mgr seen active by a state reading of the last seconds spares `mgr stat`; an older
-- sighting, or none, does not
local asked, now_at = {}, 100
local seen_tracker = space.tracker {
  cluster = function()
    return { mon_command = function(_, cmd)
      asked[#asked + 1] = cmd.prefix
      return { available = true }
    end }
  end,
  pools = function() return {} end,
  clock = function() return now_at end,
  mgr_seen = function() return 97 end,
}
t.eq(seen_tracker:mgr_available(), true, "seen 3 s ago: available")
t.eq(#asked, 0, "without a command")
now_at = 103
t.eq(seen_tracker:mgr_available(), true, "seen 6 s ago: asked again")
t.eq(table.concat(asked, ","), "mgr stat", "with mgr stat")
seen_tracker.mgr_seen = function() return nil end
seen_tracker:mgr_available()
t.eq(#asked, 2, "never seen: asked")

-- accounting: a write's objects and its metadata object, the owner record; a cleanup
-- removes its run's; a write it cannot count makes the pool's objects unknown
tracker:account("rep", "write", { objects = 8, bytes = 8 * 4096, run_name = "a" })
tracker:account("rep", "write", { objects = 4, bytes = 4 * 4096, run_name = "b" })
t.eq(tracker:expectations()["p-rep"].objects, 1 + 9 + 5, "owner record + two writes with their metadata")
t.eq(tracker:expectations()["p-rep"].wr_bytes, 12 * 4096, "all bytes written")
tracker:account("rep", "cleanup", { ops = 8, errors = 0, run_name = "a" })
t.eq(tracker:expectations()["p-rep"].objects, 1 + 5, "a cleanup removes its run's objects")
t.eq(tracker:expectations()["p-rep"].wr_bytes, 12 * 4096, "written bytes stay counted (df's wr_bytes never falls)")
t.eq(tracker:written("rep"), 4 * 4096, "the bytes the writes left")
tracker:account("rep", "write", { bytes = 10, run_name = "c" })
t.eq(tracker:expectations()["p-rep"].objects, nil, "a write without an object count: unknown")

-- the summary line of a measured phase
local line = space.summary_line { status = "measured", label = "rep", stored = 32 * 1048576, raw_used = 96 * 1048576,
  raw_per_stored = 3.0, objects = 10, settled = true, waited = 3.04 }
t.eq(line, "    space: rep stored 32 MiB, raw 96 MiB, 3.00x raw/stored, 10 objects (settled in 3.0 s)",
  "the summary line")
line = space.summary_line { status = "measured", label = "ec", stored = 1654784, raw_used = 2482176,
  raw_per_stored = 1.5, raw_per_written = 3.03, objects = 1, settled = false, waited = 13 }
t.match(line, "1.50x raw/stored, 3.03x raw/written, 1 object %(not settled after 13.0 s%)$",
  "raw per written byte when it differs; one object; not settled")

line = space.summary_line { status = "measured", label = "rep", stored = 1024, raw_change = -8192, objects = 1,
  settled = true, waited = 8 }
t.eq(line, "    space: rep stored 1 KiB, cluster raw -8 KiB, 1 object (settled in 8.0 s)", "a cluster that shrank")

-- comparisons and statistics take space.raw_per_stored (a cost: lower is better), and
-- cpu.mib_per_osd_cpu_second still
local record = { result = { iops = 10 }, cluster = { space = { raw_per_stored = 3.01 }, cpu = { mib_per_osd_cpu_second = 40 } } }
t.eq(compare.record_value(record, "space.raw_per_stored"), 3.01, "space.raw_per_stored from cluster.space")
t.eq(compare.record_value(record, "cpu.mib_per_osd_cpu_second"), 40, "cpu.mib_per_osd_cpu_second still")
local listed = {}
for _, metric in ipairs(compare.known_metrics) do listed[metric] = true end
t.ok(listed["space.raw_per_stored"] and listed["cpu.mib_per_osd_cpu_second"], "both are known metrics")
t.eq(stats.kind_of("space.raw_per_stored"), "latency", "amplification is judged like a cost")
t.eq(compare.format_value("space.raw_per_stored", 3.0123), "3.012", "shown with three decimals")

-- phases.csv: the space columns with the figures, only when a phase has them
local phases = {
  { index = 1, name = "write", op = "write", label = "rep", status = "ok", result = { ops = 8 },
    cluster = { space = { status = "measured", stored = 100, raw_used = 300, objects = 10, raw_per_stored = 3,
      settled = true, waited = 1.5 } } },
  { index = 2, name = "write", op = "write", label = "ec", status = "ok", result = { ops = 8 },
    cluster = { space = { status = "unknown", reason = "no mgr reports" } } },
}
local csv = results.phases_csv(phases)
t.match(csv, "^[^\n]*,space_status,space_stored,space_raw_used,space_objects,space_raw_per_stored,", "csv header")
t.match(csv, "\n1,[^\n]*,measured,100,300,10,3,", "a measured row")
t.match(csv, "\n2,[^\n]*,unknown,,,,,", "an unknown row: empty cells, not zeros")
t.eq(results.phases_csv({ { index = 1, name = "write", result = {} } }):find("space_", 1, true), nil,
  "no space columns without space figures")

-- the report's space table: a row per pool of each write phase and of the end
local doc = { scenario = { name = "space" }, status = "ok", complete = true, pools = {},
  cluster = { space = { status = "measured", settled = true, waited = 2, pools = { { label = "rep", name = "p-rep",
    status = "measured", stored = 188, raw_used = 12288, objects = 1, raw_per_stored = 65.36, raw_from = "pool" } } } },
  phases = { phases[1], phases[2] }, comparisons = {}, sweeps = {} }
phases[1].cluster.space.pools = { { label = "rep", name = "p-rep", status = "measured", stored = 32 * 1048576,
  raw_used = 96 * 1048576, objects = 10, raw_per_stored = 3.0, raw_from = "pool" } }
local page = html.build({ assert(html.normalize(doc, "results/space")) })
t.match(page, "Space per pool", "the report has the space table")
t.match(page, "<td>%[1%] write rep</td><td>rep</td><td class=\"n\">32M</td><td class=\"n\">96M</td>", "the phase's row")
t.match(page, "<td>%[2%] write ec</td>.-unknown: no mgr reports", "an unknown phase says why")
t.match(page, "<td>end of the run</td><td>rep</td><td class=\"n\">188</td>.-65%.36x", "the end of the run")

return t.done()
