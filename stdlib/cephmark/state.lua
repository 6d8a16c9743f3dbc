-- The cluster's state around a phase: one reading is the monitors' `status` (health and
-- its checks, OSDs up and in, PG states and recovery rates as the mgr last reported them)
-- and, for a run with pools, `df` (each pool's fill ratio). A reading is classified here
-- without I/O (M.classify), so the rules are testable on captured JSON: a phase that
-- starts while PGs are not all active+clean, recover or backfill, scrub, or while OSDs
-- that hold PGs are down, is `unquiet`, with its reasons. Also the wait for a quiet
-- cluster (wait_clean) and the state word of the phase summary. See docs/cluster-state.md.

local json = require "cephmark.json"
local sys = require "cephmark.sys"

local M = {}

-- What a reading says where the mgr has reported nothing: PG states, recovery figures and
-- pool usage all come from its reports, never a zero in their place.
M.NO_MGR = "unknown: no mgr reports"
M.NOT_YET = "unknown: the mgr has not reported PG statistics yet"
M.POLL_INTERVAL = 1
-- The OSD map flags `quiesce = true` sets for a run: no new scrubs or deep scrubs.
M.QUIESCE_FLAGS = { "noscrub", "nodeep-scrub" } -- seconds between two readings while waiting for a quiet cluster

-- The flags of a PG state that leave the PG quiet (active+clean), and those of a scrub,
-- which is background work of its own kind (quiesce stops new ones).
local clean_flags = { active = true, clean = true }
local scrub_flags = { scrubbing = true, deep = true }
local recovery_flags = { recovering = true, recovery_wait = true, forced_recovery = true, recovery_toofull = true }
local backfill_flags = { backfilling = true, backfill_wait = true, forced_backfill = true, backfill_toofull = true }

local function flags_of(state_name)
  local flags = {}
  for flag in tostring(state_name):gmatch("[^+]+") do flags[flag] = true end
  return flags
end

local function any(flags, set)
  for flag in pairs(flags) do
    if set[flag] then return true end
  end
  return false
end

-- The health checks raised, by name: {name, severity, summary}, sorted by name.
local function health_checks(health)
  local checks = json.array()
  local names = {}
  for name in pairs(type(health) == "table" and type(health.checks) == "table" and health.checks or {}) do
    names[#names + 1] = name
  end
  table.sort(names)
  for _, name in ipairs(names) do
    local check = health.checks[name]
    local summary = type(check) == "table" and type(check.summary) == "table" and check.summary.message or nil
    checks[#checks + 1] = { name = name, severity = type(check) == "table" and check.severity or nil,
      summary = summary }
  end
  return checks
end

-- The pools' usage from `df` (only the pools named in `pools`, a list of names): a list
-- of {name, fill_ratio (df's percent_used, a fraction of the pool's usable space), stored,
-- objects, max_avail}, or M.NO_MGR when df has no pool figures.
local function pool_usage(df, pools)
  if type(df) ~= "table" then return nil end
  local by_name = {}
  for _, pool in ipairs(type(df.pools) == "table" and df.pools or {}) do
    if type(pool) == "table" and pool.name then by_name[pool.name] = pool.stats end
  end
  local usage = json.array()
  for _, name in ipairs(pools or {}) do
    local stats = by_name[name]
    if type(stats) ~= "table" then return M.NO_MGR end
    usage[#usage + 1] = { name = name, fill_ratio = stats.percent_used, stored = stats.stored,
      objects = stats.objects, max_avail = stats.max_avail }
  end
  return usage
end

-- classify(status [, df, pools]) -> a reading: the monitors' `status` (and `df`, for the
-- pools named) as results keep it, with `reasons`: why the cluster is not quiet (an
-- empty list when it is), and `scrub_only` when scrubs are the only reasons.
function M.classify(status, df, pools)
  status = type(status) == "table" and status or {}
  local health = type(status.health) == "table" and status.health or {}
  local osdmap = type(status.osdmap) == "table" and status.osdmap or {}
  if type(osdmap.osdmap) == "table" then osdmap = osdmap.osdmap end -- the layout before Octopus
  local pgmap = type(status.pgmap) == "table" and status.pgmap or {}
  local mgr = type(status.mgrmap) == "table" and status.mgrmap.available == true
  local reading = {
    health = health.status or health.overall_status,
    checks = health_checks(health),
    osds = { total = osdmap.num_osds, up = osdmap.num_up_osds, ["in"] = osdmap.num_in_osds },
    osdmap_epoch = math.tointeger(osdmap.epoch),
    mgr = mgr,
  }
  local reasons, scrub_reasons = json.array(), 0
  for _, check in ipairs(reading.checks) do
    -- raised by the monitors themselves from the OSD map: OSDs down that are still in,
    -- so hold PGs (an OSD out holds none once its data has moved)
    if check.name == "OSD_DOWN" or check.name:match("^OSD_%u+_DOWN$") then
      reasons[#reasons + 1] = check.summary or check.name
    end
  end
  local by_state = type(pgmap.pgs_by_state) == "table" and pgmap.pgs_by_state or {}
  local total = math.tointeger(pgmap.num_pgs) or 0
  if not mgr then
    reading.pgs, reading.activity = M.NO_MGR, M.NO_MGR
  elseif total == 0 or #by_state == 0 then
    reading.pgs, reading.activity = M.NOT_YET, M.NOT_YET
  else
    local pgs = { total = total, active_clean = 0, by_state = {} }
    local activity = { recovering = 0, backfilling = 0, scrubbing = 0, deep = 0 }
    local not_clean, recovering, backfilling, unclean_states, unreported = 0, 0, 0, {}, 0
    for _, entry in ipairs(by_state) do
      local name, count = tostring(entry.state_name), math.tointeger(entry.count) or 0
      local flags = flags_of(name)
      pgs.by_state[name] = (pgs.by_state[name] or 0) + count
      if name == "unknown" then
        -- no report of the PG yet: a pool created seconds ago, as the mgr's statistics
        -- lag by its report period; neither quiet nor unquiet (OSDs down that would
        -- leave a PG unreported raise OSD_DOWN)
        unreported = unreported + count
        goto next_state
      end
      -- quiet: active and clean, with no other flag than a scrub's
      local quiet = flags.active and flags.clean
      for flag in pairs(flags) do
        if not clean_flags[flag] and not scrub_flags[flag] then quiet = false end
      end
      if quiet then pgs.active_clean = pgs.active_clean + count end
      if flags.scrubbing then activity.scrubbing = activity.scrubbing + count end
      if flags.deep then activity.deep = activity.deep + count end
      if any(flags, recovery_flags) then
        activity.recovering = activity.recovering + count
        recovering = recovering + count
      elseif any(flags, backfill_flags) then
        activity.backfilling = activity.backfilling + count
        backfilling = backfilling + count
      elseif not quiet then
        not_clean = not_clean + count
        unclean_states[#unclean_states + 1] = { name = name, count = count }
      end
      ::next_state::
    end
    if unreported > 0 then pgs.unreported = unreported end
    -- the mgr's recovery figures, when it has any (moving averages: they outlast the
    -- recovery by a few seconds, so they are recorded, never a reason on their own)
    for _, key in ipairs { "recovering_objects_per_sec", "recovering_bytes_per_sec", "degraded_objects",
      "misplaced_objects", "degraded_ratio", "misplaced_ratio" } do
      if type(pgmap[key]) == "number" then activity[key] = pgmap[key] end
    end
    reading.pgs, reading.activity = pgs, activity
    if recovering > 0 then reasons[#reasons + 1] = string.format("%d pgs recovering", recovering) end
    if backfilling > 0 then reasons[#reasons + 1] = string.format("%d pgs backfilling", backfilling) end
    if not_clean > 0 then
      table.sort(unclean_states, function(a, b)
        if a.count ~= b.count then return a.count > b.count end
        return a.name < b.name
      end)
      local shown = {}
      for i = 1, math.min(3, #unclean_states) do
        shown[i] = string.format("%d %s", unclean_states[i].count, unclean_states[i].name)
      end
      reasons[#reasons + 1] = string.format("%d pgs not active+clean (%s%s)", not_clean, table.concat(shown, ", "),
        #unclean_states > 3 and ", ..." or "")
    end
    if activity.scrubbing > 0 then
      reasons[#reasons + 1] = string.format("%d pgs scrubbing%s", activity.scrubbing,
        activity.deep > 0 and string.format(" (%d deep)", activity.deep) or "")
      scrub_reasons = 1
    end
  end
  if pools and #pools > 0 then reading.pools = pool_usage(df, pools) end
  reading.reasons = reasons
  reading.quiet = #reasons == 0
  -- quiet but for scrubs, every PG reported: what wait_clean waits for (quiesce is for
  -- scrubs)
  reading.settled = #reasons == scrub_reasons and not (type(reading.pgs) == "table" and reading.pgs.unreported)
  return reading
end

-- Whether the reading knows the PG states (a mgr has reported them).
function M.knows_pgs(reading)
  return type(reading) == "table" and type(reading.pgs) == "table"
end

-- The state a phase records (`cluster.state`) from its readings at the start and the
-- end: start, end, quiet, unquiet (the reasons at the start, only when not quiet).
function M.phase_state(start, finish)
  local state = { start = start, ["end"] = finish }
  if start then
    state.quiet = start.quiet
    if not start.quiet then
      state.unquiet = json.array()
      for i, reason in ipairs(start.reasons) do state.unquiet[i] = reason end
    end
  end
  return state
end

-- The state word of a phase: "quiet", "unquiet: 12 pgs recovering", with what the end
-- reading adds when it differs, and a word on PG states the mgr did not report.
function M.word(state)
  local start = type(state) == "table" and state.start or nil
  if type(start) ~= "table" then return "unknown (no reading)" end
  local text
  if start.quiet then
    text = "quiet"
  else
    text = "unquiet: " .. table.concat(start.reasons or {}, "; ")
  end
  -- what the reading could not tell: in brackets after "quiet", as one more item after
  -- the reasons
  local unknown
  if not M.knows_pgs(start) then
    unknown = string.format("PG states %s", start.pgs == M.NO_MGR and "unknown: no mgr" or "not reported yet")
  elseif start.pgs.unreported then
    unknown = string.format("%d of %d PGs not reported yet by the mgr", start.pgs.unreported, start.pgs.total)
  end
  if unknown then text = text .. (start.quiet and (" (" .. unknown .. ")") or ("; " .. unknown)) end
  local finish = state["end"]
  if type(finish) == "table" and not finish.quiet and
    table.concat(finish.reasons or {}, "; ") ~= table.concat(start.reasons or {}, "; ") then
    text = text .. "; at the end: " .. table.concat(finish.reasons, "; ")
  end
  return text
end

function M.summary_text(state)
  return "state: " .. M.word(state)
end

-- A reading of the cluster through a connection: `status`, and `df` when pools are named
-- (two mon commands; nothing the mgr must answer, so it never waits on a missing mgr).
-- Returns the reading, or nil and a message.
function M.read(cluster, pools)
  local started = sys.monotonic()
  local status, err = cluster:mon_command { prefix = "status" }
  if type(status) ~= "table" then return nil, "status: " .. tostring(err or "no answer") end
  local df
  if pools and #pools > 0 then
    df, err = cluster:mon_command { prefix = "df" }
    if type(df) ~= "table" then return nil, "df: " .. tostring(err or "no answer") end
  end
  local reading = M.classify(status, df, pools)
  reading.at = sys.utc_timestamp("%Y-%m-%dT%H:%M:%SZ")
  reading.collect_seconds = sys.monotonic() - started
  return reading
end

local function seconds_text(seconds)
  if seconds == math.floor(seconds) then return string.format("%d s", math.floor(seconds)) end
  return string.format("%.3g s", seconds)
end
M.seconds_text = seconds_text

-- wait_clean(read, seconds, options) -> the first settled reading (quiet but for scrubs)
-- and the seconds waited. read() -> reading | nil, message. Raises an operator error when
-- the PG states cannot be known (no mgr: waiting could not end), when a reading fails, or
-- when the cluster is not settled within `seconds`. options: say(line), sleep(seconds),
-- now(), interval.
function M.wait_clean(read, seconds, options)
  options = options or {}
  local say = options.say or function() end
  local sleep = options.sleep or sys.sleep
  local now = options.now or sys.monotonic
  local interval = options.interval or M.POLL_INTERVAL
  local started = now()
  local announced = false
  while true do
    local reading, err = read()
    if not reading then sys.fail("wait_clean: cannot read the cluster's state: " .. tostring(err)) end
    if not M.knows_pgs(reading) then
      sys.fail(string.format("wait_clean: cannot tell whether the PGs are active+clean: %s (PG states come from " ..
        "the mgr's reports); start a mgr, or run without wait_clean",
        reading.pgs == M.NO_MGR and "the cluster has no active mgr" or "the mgr has not reported PG statistics yet"))
    end
    local waited = now() - started
    if reading.settled then
      if announced then say(string.format("cluster quiet after %.1f s", waited)) end
      return reading, waited
    end
    local why = {}
    for i, reason in ipairs(reading.reasons) do why[i] = reason end
    if reading.pgs.unreported then
      why[#why + 1] = string.format("%d pgs not reported yet by the mgr", reading.pgs.unreported)
    end
    why = table.concat(why, "; ")
    if waited >= seconds then
      sys.fail(string.format("wait_clean: the cluster was not quiet after %s (%s); the phase did not run",
        seconds_text(seconds), why))
    end
    if not announced then
      announced = true
      say(string.format("waiting up to %s for the PGs to be active+clean: %s", seconds_text(seconds), why))
    end
    sleep(math.min(interval, math.max(0, seconds - waited)))
  end
end

-------------------------------------------------------------------------------------------
-- The watcher a run keeps: a reading before and after each phase on a cluster, the wait
-- for a quiet cluster before it (wait_clean), and the warning for a phase that starts
-- while the cluster is not quiet. A failed reading never fails a phase: it is said once
-- and the run goes on without readings; only wait_clean, which cannot do without them,
-- stops the run.

local Watcher = {}
Watcher.__index = Watcher

-- watcher{cluster = fn() -> connection, pools = fn() -> {names}, warn = fn(message),
-- say = fn(line), wait_clean = seconds | nil, record = bool (readings kept in results)}
function M.watcher(options)
  return setmetatable({ cluster = options.cluster, pools = options.pools, warn = options.warn,
    say = options.say, wait_clean = options.wait_clean, record = options.record ~= false, enabled = true },
    Watcher)
end

function Watcher:reading()
  local ok, reading, err = pcall(M.read, self.cluster(), self.pools())
  if not ok then
    if sys.interrupted() or sys.exit_requested() then error(reading, 0) end
    return nil, tostring((sys.error_info(reading)))
  end
  -- when the mgr was last seen active (the space reading after the phase asks no more)
  if reading and reading.mgr == true then self.mgr_seen_at = sys.monotonic() end
  -- (a failed reading says nothing of the OSD map: the list is asked for again)
  self.osdmap_epoch = reading and reading.osdmap_epoch or nil
  return reading, err
end

-- osd_ls(cluster) -> the ids of every OSD in the map (`osd ls`: a short list, where the
-- whole OSD map grows with the cluster and costs more to decode), or nil and why.
function M.osd_ls(cluster)
  local ids, err = cluster:mon_command { prefix = "osd ls" }
  if type(ids) ~= "table" then return nil, err or "no OSD list" end
  local list = {}
  for _, id in ipairs(ids) do
    if math.type(id) == "integer" then list[#list + 1] = id end
  end
  return list
end

-- The OSDs in the map (`osd ls`), asked again only when a state reading has seen the OSD
-- map change since they were listed: the OSD counters and the space reading around one
-- phase would otherwise each list them, one mon command each. Without an epoch (no
-- reading yet, or a status without one) they are always asked.
function Watcher:osd_ids()
  local epoch = self.enabled ~= false and self.osdmap_epoch or nil
  if epoch and self.osd_list and self.osd_list.epoch == epoch then return self.osd_list.ids end
  local list, err = M.osd_ls(self.cluster())
  if not list then return nil, err end
  self.osd_list = epoch and { epoch = epoch, ids = list } or nil
  return list
end

-- Before a phase (title: how its lines name it): waits for a quiet cluster with
-- wait_clean, then the phase's `cluster.state` with its start reading (nil when nothing
-- is recorded), after a warning when the cluster is not quiet.
function Watcher:before(title)
  local reading, waited
  if self.wait_clean then
    reading, waited = M.wait_clean(function() return self:reading() end, self.wait_clean,
      { say = function(line) self.say("  " .. line) end })
  elseif self.record and self.enabled then
    local err
    reading, err = self:reading()
    if not reading then
      self.enabled = false
      self.warn(string.format("cannot read the cluster's state: %s; phases run without state readings", err))
      return nil
    end
  end
  if not self.record or not reading then return nil end
  local phase = M.phase_state(reading)
  if waited then phase.waited = waited end
  if not reading.quiet then
    self.warn(string.format("%s: started while the cluster was not quiet: %s; its figures may not compare with a " ..
      "quiet phase's", title, table.concat(reading.reasons, "; ")))
  end
  return phase
end

-- After the phase: its end reading into the phase's state (left without one when the
-- reading fails; the next phase tries again).
function Watcher:after(phase)
  if not phase or not self.enabled then return end
  phase["end"] = self:reading()
end

return M
