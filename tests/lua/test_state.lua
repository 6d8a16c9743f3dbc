-- The cluster's state around a phase (cephmark.state) without a cluster: the
-- classification of real `status` and `df` answers captured from a local pacific cluster
-- (tests/lua/data/state/: clean, an OSD marked out, the peering after it came back in, an
-- OSD killed, the recovery after its restart, and a cluster without a mgr), the state
-- word, and the wait for a quiet cluster on a scripted sequence of readings.
local json = require "cephmark.json"
local state = require "cephmark.state"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local dir = (os.getenv("CEPHMARK_SOURCE_DIR") or ".") .. "/tests/lua/data/state/"
local function load(name)
  local text = assert(sys.read_file(dir .. name), "cannot read " .. dir .. name)
  return json.decode(text)
end

-- clean, with a mgr: quiet, every PG counted, health and its checks kept
local clean = state.classify(load("status-clean.json"), load("df-mgr.json"), { "statex" })
t.eq(clean.quiet, true, "clean: quiet")
t.eq(#clean.reasons, 0, "clean: no reasons")
t.eq(clean.health, "HEALTH_WARN", "clean: health status")
t.eq(clean.checks[1].name, "MON_DISK_LOW", "clean: the check raised")
t.eq(clean.checks[1].summary, "mon a is low on available space", "clean: its summary")
t.eq(clean.pgs.total, 17, "clean: PG total")
t.eq(clean.pgs.active_clean, 17, "clean: all active+clean")
t.eq(clean.pgs.by_state["active+clean"], 17, "clean: PG state counts")
t.eq(clean.osds.total, 3, "clean: OSDs")
t.eq(clean.osds.up, 3, "clean: OSDs up")
t.eq(clean.osds["in"], 3, "clean: OSDs in")
t.eq(clean.activity.recovering, 0, "clean: nothing recovering")
t.eq(clean.pools[1].name, "statex", "clean: the run's pool")
t.near(clean.pools[1].fill_ratio, 0.008096, 1e-6, "clean: its fill ratio (df percent_used)")
t.eq(clean.pools[1].objects, 745, "clean: its objects")
t.eq(state.word(state.phase_state(clean, clean)), "quiet", "clean: the word")

-- an OSD marked out (and still up): its PGs stay active+clean+remapped, objects misplaced
local out = state.classify(load("status-out-remapped.json"))
t.eq(out.quiet, false, "out: unquiet")
t.eq(out.reasons[1], "17 pgs not active+clean (17 active+clean+remapped)", "out: the reason")
t.eq(out.activity.misplaced_objects, 745, "out: misplaced objects recorded")
t.eq(out.pools, nil, "out: no pools asked, no df figures")

-- back in: peering and activating
local peering = state.classify(load("status-in-peering.json"))
t.eq(peering.quiet, false, "peering: unquiet")
t.eq(peering.reasons[1], "17 pgs not active+clean (9 activating, 5 remapped, 2 peering, ...)", "peering: the reason")
t.eq(peering.pgs.active_clean, 0, "peering: none active+clean")

-- an OSD killed: OSD_DOWN (raised by the monitors) and degraded PGs
local down = state.classify(load("status-osd-down.json"))
t.eq(down.reasons[1], "1 osds down", "osd down: the monitors' check first")
t.match(down.reasons[2], "^17 pgs not active%+clean %(", "osd down: the degraded PGs")
t.eq(down.osds.up, 2, "osd down: 2 of 3 up")
t.eq(down.settled, false, "osd down: not settled")

-- recovering after the restart: recovering and waiting PGs, the mgr's rates
local recovering = state.classify(load("status-recovering.json"))
t.eq(recovering.reasons[1], "12 pgs recovering", "recovering: recovering and recovery_wait PGs")
t.eq(recovering.reasons[2], "4 pgs not active+clean (4 active+undersized+degraded)", "recovering: the rest")
t.eq(recovering.activity.recovering, 12, "recovering: the count")
t.eq(recovering.activity.recovering_objects_per_sec, 2, "recovering: the mgr's rate")
t.eq(state.word(state.phase_state(recovering, clean)),
  "unquiet: 12 pgs recovering; 4 pgs not active+clean (4 active+undersized+degraded)", "recovering: the word")
local phase = state.phase_state(recovering, clean)
t.eq(phase.quiet, false, "recovering: the phase is not quiet")
t.eq(#phase.unquiet, 2, "recovering: the phase's unquiet reasons")

-- scrubbing (the clean answer with two of its PGs scrubbing, one deep): unquiet, settled
local scrub_status = load("status-clean.json")
scrub_status.pgmap.pgs_by_state = { { state_name = "active+clean", count = 15 },
  { state_name = "active+clean+scrubbing", count = 1 }, { state_name = "active+clean+scrubbing+deep", count = 1 } }
local scrubbing = state.classify(scrub_status)
t.eq(scrubbing.reasons[1], "2 pgs scrubbing (1 deep)", "scrubbing: the reason")
t.eq(scrubbing.quiet, false, "scrubbing: unquiet")
t.eq(scrubbing.settled, true, "scrubbing: settled (wait_clean does not wait for scrubs)")
t.eq(scrubbing.pgs.active_clean, 17, "scrubbing: scrubbing PGs are active+clean")
t.eq(state.word(state.phase_state(clean, scrubbing)), "quiet; at the end: 2 pgs scrubbing (1 deep)",
  "the word says what the end adds")

-- a pool created a moment ago: its PGs not reported yet by the mgr (state "unknown") are
-- neither quiet nor unquiet, and wait_clean waits for their report
local new_pool = load("status-clean.json")
new_pool.pgmap.pgs_by_state = { { state_name = "active+clean", count = 1 }, { state_name = "unknown", count = 8 } }
new_pool.pgmap.num_pgs = 9
local unreported = state.classify(new_pool)
t.eq(unreported.quiet, true, "new pool: not unquiet")
t.eq(unreported.settled, false, "new pool: not settled")
t.eq(unreported.pgs.unreported, 8, "new pool: unreported PGs counted")
t.eq(state.word(state.phase_state(unreported)), "quiet (8 of 9 PGs not reported yet by the mgr)", "new pool: the word")

local out_new_pool = load("status-out-remapped.json")
out_new_pool.pgmap.pgs_by_state[#out_new_pool.pgmap.pgs_by_state + 1] = { state_name = "unknown", count = 8 }
out_new_pool.pgmap.num_pgs = 25
t.eq(state.word(state.phase_state(state.classify(out_new_pool))),
  "unquiet: 17 pgs not active+clean (17 active+clean+remapped); 8 of 25 PGs not reported yet by the mgr",
  "unquiet with a new pool: what is unknown after the reasons")

-- no mgr: PG figures unknown, never zero; quiet as far as the monitors tell
local nomgr = state.classify(load("status-no-mgr.json"), load("df-no-mgr.json"), { "cephmark-x" })
t.eq(nomgr.pgs, "unknown: no mgr reports", "no mgr: PGs unknown")
t.eq(nomgr.activity, "unknown: no mgr reports", "no mgr: activity unknown")
t.eq(nomgr.pools, "unknown: no mgr reports", "no mgr: pool fill unknown")
t.eq(nomgr.mgr, false, "no mgr: said")
t.eq(nomgr.quiet, true, "no mgr: nothing the monitors know is unquiet")
t.eq(state.word(state.phase_state(nomgr, nomgr)), "quiet (PG states unknown: no mgr)", "no mgr: the word")
local encoded = json.encode(state.phase_state(nomgr, nomgr))
t.ok(encoded:find('"pgs":"unknown: no mgr reports"', 1, true) ~= nil, "no mgr: results say so plainly")

-- wait_clean on scripted readings: waits out recovery, fails after the duration, refuses
-- without a mgr; never sleeps for real here
local function scripted(readings)
  local clock, i, lines = 0, 0, {}
  local options = { now = function() return clock end, sleep = function(s) clock = clock + s end,
    say = function(line) lines[#lines + 1] = line end }
  local function read()
    i = math.min(i + 1, #readings)
    return readings[i]
  end
  return read, options, lines
end
local read, options, lines = scripted { recovering, recovering, scrubbing }
local reading, waited = state.wait_clean(read, 60, options)
t.eq(reading, scrubbing, "wait_clean: returns the settled reading")
t.eq(waited, 2, "wait_clean: two polls of a second")
t.eq(lines[1], "waiting up to 60 s for the PGs to be active+clean: 12 pgs recovering; 4 pgs not active+clean " ..
  "(4 active+undersized+degraded)", "wait_clean: says what it waits for")
t.eq(lines[2], "cluster quiet after 2.0 s", "wait_clean: says when it is over")
read, options = scripted { clean }
reading, waited = state.wait_clean(read, 60, options)
t.eq(waited, 0, "wait_clean: a quiet cluster costs one reading")
read, options = scripted { down }
t.raises(function() state.wait_clean(read, 3, options) end,
  "wait_clean: the cluster was not quiet after 3 s (1 osds down; 17 pgs not active+clean", "wait_clean: gives up")
read, options, lines = scripted { unreported, clean }
reading, waited = state.wait_clean(read, 60, options)
t.eq(lines[1], "waiting up to 60 s for the PGs to be active+clean: 8 pgs not reported yet by the mgr",
  "wait_clean: waits for the mgr's report of new PGs")
read, options = scripted { nomgr }
t.raises(function() state.wait_clean(read, 3, options) end,
  "wait_clean: cannot tell whether the PGs are active+clean: the cluster has no active mgr", "wait_clean: no mgr")
read, options = scripted { false }
t.raises(function() state.wait_clean(function() return nil, "timed out" end, 3, options) end,
  "wait_clean: cannot read the cluster's state: timed out", "wait_clean: a failed reading")

-- comparisons: a verdict over phases that started unquiet says how many, and the table
-- has a line naming the rows; a comparison of quiet phases has neither
local compare = require "cephmark.compare"
local function records_of(unquiet_at)
  local records, index = {}, 0
  for _, spec in ipairs { { "base", { 1000, 1030, 970 } }, { "tuned", { 1100, 1140, 1060 } } } do
    for repetition = 1, 3 do
      index = index + 1
      local record = { index = index, name = "write", label = spec[1], point = spec[1], repetition = repetition,
        variant = { point = spec[1] }, result = { ops = 1000, iops = spec[2][repetition], errors = 0, lat = {} },
        cluster = { state = state.phase_state(clean) } }
      if unquiet_at[spec[1] .. repetition] then record.cluster.state = state.phase_state(recovering) end
      records[#records + 1] = record
    end
  end
  return records
end
local quiet_comparison = compare.build(records_of {}, { by = "point", baseline = "base", metrics = { "iops" } })
t.eq(quiet_comparison.rows[2].stats.iops.verdict, "faster", "compare: a quiet comparison's verdict as it was")
t.eq(compare.unquiet_line(quiet_comparison), nil, "compare: no unquiet line")
local unquiet_comparison = compare.build(records_of { tuned2 = true, base3 = true },
  { by = "point", baseline = "base", metrics = { "iops" } })
t.eq(unquiet_comparison.rows[2].stats.iops.verdict, "faster (unquiet: 2 of 6 phases)", "compare: the verdict says so")
t.eq(unquiet_comparison.rows[2].stats.iops.unquiet.phases, 2, "compare: the count kept with the figures")
t.eq(unquiet_comparison.unquiet, 2, "compare: the comparison's count")
local printed = compare.lines(unquiet_comparison)
t.eq(printed[#printed], "unquiet: 2 of 6 phases started while the cluster was not quiet (write base (1 of 3), " ..
  "write tuned (1 of 3)); their figures may not compare (docs/cluster-state.md)", "compare: the line under the table")
local found = false
for _, line in ipairs(printed) do
  if line:find("faster (unquiet: 2 of 6 phases)", 1, true) then found = true end
end
t.ok(found, "compare: the printed verdict carries the mention")

-- the OSD list a run shares between its OSD counters and its space readings: asked once,
-- and again only when a state reading shows another OSD map epoch (or none)
do
  local status = load("status-clean.json")
  local sent = {}
  local fake = { mon_command = function(_, cmd)
    sent[#sent + 1] = cmd.prefix
    if cmd.prefix == "status" then return status end
    if cmd.prefix == "osd ls" then return { 0, 1, 2 } end
    error("unexpected command " .. cmd.prefix)
  end }
  local watcher = state.watcher { cluster = function() return fake end, pools = function() return {} end,
    warn = print, say = print, record = true }
  local function count(prefix)
    local n = 0
    for _, p in ipairs(sent) do if p == prefix then n = n + 1 end end
    return n
  end
  t.eq(state.classify(status).osdmap_epoch, math.tointeger(status.osdmap.epoch), "a reading keeps the OSD map epoch")
  watcher:before("[1] write")
  t.eq(#watcher:osd_ids(), 3, "the OSDs")
  t.eq(#watcher:osd_ids(), 3, "again")
  t.eq(count("osd ls"), 1, "listed once for the same epoch")
  status.osdmap.epoch = status.osdmap.epoch + 1
  watcher:before("[2] write")
  watcher:osd_ids()
  t.eq(count("osd ls"), 2, "a new epoch: listed again")
  local broken = status
  status = nil -- a status that fails: nothing known of the OSD map
  watcher:after({})
  watcher:osd_ids()
  t.eq(count("osd ls"), 3, "after a failed reading: listed again")
  status = broken
  status.osdmap.epoch = nil
  watcher:before("[3] write")
  watcher:osd_ids()
  watcher:osd_ids()
  t.eq(count("osd ls"), 5, "no epoch: listed each time")
end

return t.done()
