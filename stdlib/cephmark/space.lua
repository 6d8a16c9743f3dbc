-- Space per pool: `ceph df detail` read after each write phase on a pool and at the end of
-- the run, for every pool the run uses: stored bytes, raw used bytes, objects, percent
-- used, max avail, and the measured space amplification (raw bytes per stored byte).
-- The figures come from the mgr's pool statistics, which lag the writes by up to a report
-- cycle, so the OSDs are asked to flush their statistics and df is polled (bounded) until
-- the mons have them, and the reading says how fresh it is. Without a mgr there are no
-- pool statistics: the space is recorded as unknown at once, never as zeros. Kept as the
-- phase's `cluster.space` and the results' `cluster.space` (docs/space.md).

local json = require "cephmark.json"
local cluster_state = require "cephmark.state"
local sys = require "cephmark.sys"

local M = {}

M.SOURCE = "ceph df detail (the mgr's pool statistics)"
M.NO_MGR = "no mgr reports"
M.POLL = 0.5            -- seconds between two readings while waiting
M.MGR_SEEN_FOR = 5      -- seconds a state reading's active mgr stands for `mgr stat`
M.STATS_PERIOD = 5      -- mgr_stats_period's default: how often daemons report to the mgr
M.TICK_PERIOD = 2       -- mgr_tick_period's default: how often the mgr reports to the mons
M.FLUSH_TIMEOUT = 2     -- seconds an OSD has to answer flush_pg_stats
M.HEARTBEAT_INTERVAL = 6 -- osd_heartbeat_interval's default: how often an OSD reads its store's usage
M.REUSE_FOR = 2         -- seconds a settled reading stands for the next one when no phase ran between

-- The per-pool fields kept from `ceph df detail` (its names).
M.FIELDS = { "stored", "bytes_used", "objects", "percent_used", "max_avail", "stored_raw", "wr_bytes" }

local function number(value)
  if type(value) == "number" then return value end
  return tonumber(value)
end

local function ratio(numerator, denominator)
  if type(numerator) ~= "number" or type(denominator) ~= "number" or denominator <= 0 then return nil end
  return numerator / denominator
end

-- parse(df) -> a reading of `ceph df detail`'s JSON: {per_pool, total_used_raw, pools =
-- {[name] = fields}}, or nil and why. per_pool is true when every OSD's store keeps
-- statistics per pool (bluestore): only then is a pool's bytes_used its raw bytes. Other
-- stores (memstore, filestore) leave Ceph to report a pool's logical bytes there.
function M.parse(df)
  if type(df) ~= "table" or type(df.pools) ~= "table" then return nil, "no pool list in ceph df's answer" end
  local stats = type(df.stats) == "table" and df.stats or {}
  local osds, per_pool_osds = number(stats.num_osds), number(stats.num_per_pool_osds)
  local reading = { pools = {}, total_used_raw = number(stats.total_used_raw_bytes), osds = osds,
    per_pool = osds ~= nil and osds > 0 and per_pool_osds == osds }
  for _, pool in ipairs(df.pools) do
    if type(pool) == "table" and type(pool.name) == "string" then
      local entry = {}
      for _, field in ipairs(M.FIELDS) do entry[field] = number((pool.stats or {})[field]) end
      reading.pools[pool.name] = entry
    end
  end
  return reading
end

-- figures(reading, name, change) -> one pool's figures for results: df's fields, the raw
-- bytes taken as the pool's (raw_used) and raw_per_stored, its amplification. On stores
-- with statistics per pool both come from the pool's bytes_used; on the others a pool has
-- no raw figure of its own, and `change` (the cluster's raw bytes and this pool's stored
-- bytes gained over a phase that wrote only this pool) gives the amplification instead.
function M.figures(reading, name, change)
  local entry = reading.pools[name]
  if not entry then return { name = name, status = "unknown", reason = "not in ceph df's pool list" } end
  local figures = { name = name, status = "measured" }
  for _, field in ipairs(M.FIELDS) do
    if field ~= "wr_bytes" then figures[field] = entry[field] end
  end
  if reading.per_pool then
    figures.raw_used = entry.bytes_used
    figures.raw_per_stored = ratio(entry.bytes_used, entry.stored)
    figures.raw_from = "pool"
  elseif change then
    figures.raw_change, figures.stored_change = change.raw, change.stored
    -- a change too small to weigh (a phase that stored next to nothing) gives no figure
    if change.stored and change.stored > 0 then figures.raw_per_stored = ratio(change.raw, change.stored) end
    figures.raw_from = "cluster change"
  end
  return figures
end

-- check(reading, expect) -> "short" when a pool is missing from the reading or shows fewer
-- written bytes than the run wrote there (a report older than the writes: df's wr_bytes
-- only grows), else "ok". expect: {[name] = {wr_bytes = n}}.
function M.check(reading, expect)
  for name, want in pairs(expect) do
    local entry = reading.pools[name]
    -- (a pool created a moment ago may not be in the mgr's reports yet: it holds nothing)
    if not entry and (want.wr_bytes or 0) > 0 then return "short" end
    if entry and want.wr_bytes and (entry.wr_bytes or 0) < want.wr_bytes then return "short" end
  end
  return "ok"
end

-- settle{read, expect, fresh, ended, window, deadline, poll, clock, sleep} -> reading,
-- freshness | nil, err. Reads until a reading is known to hold every report sent after the
-- writes: `fresh()` says so when the OSDs' statistics were flushed (true once the mons
-- have what each OSD sent), or else, when fresh is nil, a full report cycle (`window`
-- seconds) has passed since `ended`. A reading that shows fewer bytes written than the run
-- wrote is never settled. Past the deadline the last reading is kept, not settled.
-- freshness = {settled, waited, by}.
function M.settle(options)
  local clock, sleep = options.clock or sys.monotonic, options.sleep or sys.sleep
  local started = clock()
  local ended = options.ended or started
  while true do
    -- asked before df is read: a reading taken after the mons had the reports holds them
    local caught_up = options.fresh and options.fresh()
    local now = clock()
    -- df is read only once a reading could settle (each costs the client about 0.1 ms of
    -- CPU, and there were ten a phase): the statistics flushed, or a report cycle since
    -- the writes when the OSDs could not be asked, or the deadline
    local due
    if options.fresh then
      due = caught_up
    else
      due = now - ended >= options.window
    end
    if due or now - started >= options.deadline then
      local reading, err = options.read()
      if not reading then return nil, err end
      now = clock()
      local state = M.check(reading, options.expect)
      if state == "ok" and caught_up then
        return reading, { settled = true, waited = now - started, by = "the OSDs' statistics flushed" }
      end
      if state == "ok" and not options.fresh and now - ended >= options.window then
        return reading, { settled = true, waited = now - started, by = "a report cycle since the writes" }
      end
      if now - started >= options.deadline then
        return reading, { settled = false, waited = now - started, by = "deadline" }
      end
    end
    sleep(math.max(0, math.min(options.poll or M.POLL, started + options.deadline - now)))
  end
end

local function size(bytes)
  if type(bytes) ~= "number" then return "?" end
  if bytes < 0 then return "-" .. size(-bytes) end
  return sys.format_size(math.floor(bytes + 0.5))
end

-- The words for one pool's figures: "rep stored 32 MiB, raw 96 MiB, 3.00x, 10 objects".
function M.describe_pool(figures, label)
  if figures.status ~= "measured" then
    return string.format("%s unknown: %s", label or figures.name, tostring(figures.reason))
  end
  local parts = { string.format("%s stored %s", label or figures.name, size(figures.stored)) }
  if figures.raw_used then
    parts[#parts + 1] = "raw " .. size(figures.raw_used)
  elseif figures.raw_change then
    parts[#parts + 1] = "cluster raw " .. (figures.raw_change < 0 and "" or "+") .. size(figures.raw_change)
  end
  if figures.raw_per_stored then
    parts[#parts + 1] = string.format("%.2fx raw/stored%s", figures.raw_per_stored,
      figures.raw_from == "an earlier phase's cluster change" and " (at its last write)" or "")
  end
  -- an EC pool's stored bytes include the padding of each object to a full stripe: the
  -- bytes written say what small objects really cost
  local per_written = figures.raw_per_written
  if per_written and figures.raw_per_stored and math.abs(per_written / figures.raw_per_stored - 1) > 0.05 then
    parts[#parts + 1] = string.format("%.2fx raw/written", per_written)
  end
  parts[#parts + 1] = string.format("%s object%s", tostring(figures.objects), figures.objects == 1 and "" or "s")
  return table.concat(parts, ", ")
end

local function freshness_words(space)
  if space.settled then return string.format("settled in %.1f s", space.waited or 0) end
  return string.format("not settled after %.1f s", space.waited or 0)
end

-- The phase summary's line for its `cluster.space`.
function M.summary_line(space)
  if type(space) ~= "table" then return nil end
  if space.status ~= "measured" then return "    space: unknown: " .. tostring(space.reason) end
  return string.format("    space: %s (%s)", M.describe_pool(space, space.label), freshness_words(space))
end

-------------------------------------------------------------------------------------------
-- The tracker a run keeps: what its writes left in each pool (to know when a reading shows
-- them), the report periods, and the readings.

local Tracker = {}
Tracker.__index = Tracker

-- tracker{cluster = fn() -> connection, pools = fn() -> {{label, name, created}}, clock,
-- sleep}
function M.tracker(options)
  return setmetatable({ cluster = options.cluster, pools = options.pools, mgr_seen = options.mgr_seen,
    osd_ids = options.osd_ids,
    clock = options.clock or sys.monotonic,
    sleep = options.sleep or sys.sleep, writes = {}, written_bytes = {}, unknown = {}, amplification = {},
    phases_begun = 0 }, Tracker)
end

-- The last settled reading and its freshness, when it stands for a new one: no phase began
-- since it was taken (`phases_since` more than those counted by then: 1 before a phase,
-- which is already counted, 0 at the end of the run) and it is under REUSE_FOR seconds
-- old. Nothing of the run wrote in between, so a second flush and wait would read the
-- same; it is said as such in its freshness.
function Tracker:reusable(phases_since)
  local last = self.last_settled
  if not last or last.phases + phases_since ~= self.phases_begun then return nil end
  if self.clock() - last.at >= M.REUSE_FOR then return nil end
  local freshness = {}
  for key, value in pairs(last.freshness) do freshness[key] = value end
  freshness.reused = true
  return last.reading, freshness
end

-- Whether a mgr is active: without one the mons have no pool statistics to give. A mgr
-- seen active by the cluster-state reading of the last few seconds (`mgr_seen`, the time
-- it was) spares the command; one not seen is always asked about.
function Tracker:mgr_available()
  local seen = self.mgr_seen and self.mgr_seen()
  if seen and self.clock() - seen < M.MGR_SEEN_FOR then return true end
  local stat = self.cluster():mon_command { prefix = "mgr stat" }
  return type(stat) == "table" and stat.available == true
end

-- The report cycle: mgr_stats_period + mgr_tick_period as the mons know them (defaults
-- when they cannot say), read once.
function Tracker:periods()
  if not self.stats_period then
    local function get(key, default, who)
      local ok, value = pcall(function()
        return self.cluster():mon_command { prefix = "config get", who = who or "mgr", key = key }
      end)
      value = ok and number(value) or nil
      return (value and value > 0) and value or default
    end
    self.stats_period = get("mgr_stats_period", M.STATS_PERIOD)
    self.tick_period = get("mgr_tick_period", M.TICK_PERIOD)
    self.heartbeat_interval = get("osd_heartbeat_interval", M.HEARTBEAT_INTERVAL, "osd")
  end
  return self.stats_period, self.tick_period
end

function Tracker:read()
  local df, err = self.cluster():mon_command { prefix = "df", detail = "detail" }
  if type(df) ~= "table" then return nil, err or "ceph df gave no answer" end
  return M.parse(df)
end

-- What the run knows each of its pools holds: for a pool it created, its owner record plus
-- each write's objects and run metadata object (nil when it cannot count them: a pool it
-- did not create, a write by other means), and at least the bytes it wrote.
function Tracker:expectations()
  local expect = {}
  for _, pool in ipairs(self.pools()) do
    local objects = (pool.created and not self.unknown[pool.label]) and 1 or nil
    for _, write in pairs(self.writes[pool.label] or {}) do
      if objects then objects = objects + write.objects + 1 end
    end
    expect[pool.name] = { objects = objects, wr_bytes = self.written_bytes[pool.label] or 0 }
  end
  return expect
end

-- Asks every OSD up to send its statistics to the mgr now (`ceph tell osd.N
-- flush_pg_stats`, as Ceph's own tests do) and returns a function that says whether the
-- mons have them all (`ceph osd last-stat-seq N` reached the sequence each OSD gave), or
-- nil when an OSD could not be asked (no caps, no answer in time): then only time tells.
function Tracker:flush()
  local cluster = self.cluster()
  -- every OSD in the map (as the run keeps the list, or `osd ls`); one that is down answers
  -- at once with ENXIO and has nothing to flush
  local ids
  if self.osd_ids then ids = self.osd_ids() else ids = cluster_state.osd_ls(cluster) end
  if type(ids) ~= "table" or #ids == 0 then return nil end
  local answers = cluster:osd_commands(ids, { '{"prefix":"flush_pg_stats"}' }, M.FLUSH_TIMEOUT)
  local waiting = {}
  for _, id in ipairs(ids) do
    local answer = answers[id]
    if not (answer and answer.code == -6) then
      local sequence = answer and not answer.code and tonumber(answer[1])
      if not sequence then return nil end
      waiting[id] = sequence
    end
  end
  if next(waiting) == nil then return nil end
  return function()
    for id, sequence in pairs(waiting) do
      -- (its JSON form is empty in pacific: the plain text is the number)
      local last = cluster:mon_command { prefix = "osd last-stat-seq", id = id, format = "plain" }
      if (tonumber(last) or -1) < sequence then return false end
      waiting[id] = nil
    end
    return true
  end
end

-- A settled reading of every pool of the run, or nil and why (no mgr: at once). `ended` is
-- when the writes ended.
function Tracker:settled_reading(ended)
  if not self:mgr_available() then return nil, M.NO_MGR end
  local stats_period, tick_period = self:periods()
  local window = stats_period + tick_period + M.POLL
  local started = self.clock()
  ended = ended or started
  if self.per_pool == false then
    -- the cluster's raw bytes are each OSD's usage of its whole store, which the OSD reads
    -- again only at its heartbeat (every 0.5 + 0.9 x osd_heartbeat_interval seconds at
    -- most), not when it is asked to flush its statistics: that long after the writes first
    local ready = ended + 0.5 + 0.9 * self.heartbeat_interval + M.POLL
    if ready > started then self.sleep(ready - started) end
  end
  local ok, fresh = pcall(self.flush, self)
  if not ok then
    if sys.interrupted() or sys.exit_requested() then error(fresh, 0) end
    fresh = nil
  end
  -- the mons have flushed statistics only once the mgr's next tick has passed: asking at
  -- once would almost never find them
  if fresh then self.sleep(M.POLL) end
  local reading, freshness = M.settle { read = function() return self:read() end, expect = self:expectations(),
    fresh = fresh, ended = ended, window = window, deadline = window + stats_period + 1, poll = M.POLL,
    clock = self.clock, sleep = self.sleep }
  if freshness and type(freshness) == "table" then freshness.waited = self.clock() - started end
  if reading and freshness.settled then
    self.last_settled = { reading = reading, freshness = freshness, phases = self.phases_begun, at = self.clock() }
  end
  return reading, freshness
end

-- After a phase on a pool: what it left there. Writes count objects and bytes under their
-- run name, a cleanup removes its run's; writes the run cannot count (other targets, agents)
-- make the pool's objects unknown.
function Tracker:account(label, op, result, options)
  self.last_phase_end = self.clock()
  if type(result) ~= "table" then return end
  local writes = self.writes[label] or {}
  self.writes[label] = writes
  local run_name = result.run_name or (options and options.run_name) or "cephmark_bench_last_metadata"
  if op == "write" then
    if math.type(result.objects) == "integer" and not result.agents then
      writes[run_name] = { objects = result.objects, bytes = result.bytes or 0 }
    else
      self.unknown[label] = true
    end
    self.written_bytes[label] = (self.written_bytes[label] or 0) + (number(result.bytes) or 0)
  elseif op == "cleanup" then
    if writes[run_name] and (result.errors or 0) == 0 and not result.interrupted then
      writes[run_name] = nil
    else
      self.unknown[label] = true
    end
  end
end

-- The bytes this run's writes left in a pool, when it knows them.
function Tracker:written(label)
  if self.unknown[label] then return nil end
  local total
  for _, write in pairs(self.writes[label] or {}) do total = (total or 0) + write.bytes end
  return total
end

-- The `space` table of a reading: one entry per pool of the run, the freshness, and (for a
-- phase) the phase's pool's figures at the top, where comparisons find them.
function Tracker:table_of(reading, freshness, phase_label, change)
  local space = { status = "measured", source = M.SOURCE, settled = freshness.settled,
    waited = freshness.waited, settled_by = freshness.by, reused = freshness.reused,
    per_pool_statistics = reading.per_pool,
    report_period = self.stats_period, pools = json.array() }
  local expect = self:expectations()
  for _, pool in ipairs(self.pools()) do
    local figures = M.figures(reading, pool.name, pool.label == phase_label and change or nil)
    figures.label = pool.label
    -- the objects the run knows the pool holds, beside those the mgr reports
    figures.expected_objects = expect[pool.name] and expect[pool.name].objects
    -- on stores without statistics per pool, the amplification a phase measured stays with
    -- its pool in later readings, said as such
    if figures.raw_from == "cluster change" then
      self.amplification[pool.label] = figures.raw_per_stored
    elseif not reading.per_pool and figures.status == "measured" and self.amplification[pool.label] then
      figures.raw_per_stored = self.amplification[pool.label]
      figures.raw_from = "an earlier phase's cluster change"
    end
    local written = self:written(pool.label)
    if written and figures.raw_used then
      figures.written = written
      figures.raw_per_written = ratio(figures.raw_used, written)
    end
    space.pools[#space.pools + 1] = figures
    if pool.label == phase_label then
      for key, value in pairs(figures) do
        if key ~= "name" and key ~= "label" then space[key] = value end
      end
      space.pool, space.label = pool.name, pool.label
    end
  end
  return space
end

local function unknown(reason)
  return { status = "unknown", reason = reason, source = M.SOURCE }
end

-- Before a write phase: on stores without statistics per pool the amplification comes from
-- the cluster's raw change over the phase, so a settled reading is taken before it too.
-- Elsewhere nothing is read before a phase.
function Tracker:before_phase()
  if self.per_pool == nil then
    -- the first write: whether the stores keep statistics per pool is not known yet
    if not self:mgr_available() then return nil, M.NO_MGR end
    local first, err = self:read()
    if not first then return nil, err end
    self.per_pool = first.per_pool
  end
  if self.per_pool then return nil end
  local reading, freshness = self:reusable(1)
  if not reading then reading, freshness = self:settled_reading(self.last_phase_end) end
  if not reading then return nil, freshness end
  return { reading = reading, freshness = freshness }
end

-- After a write phase on pool `label`: its `cluster.space`.
function Tracker:after_phase(label, before)
  local reading, freshness = self:settled_reading(self.last_phase_end)
  if not reading then return unknown(freshness) end
  self.per_pool = reading.per_pool
  local change
  if not reading.per_pool and before then
    local name
    for _, pool in ipairs(self.pools()) do
      if pool.label == label then name = pool.name end
    end
    -- a pool not in the reading before had nothing stored yet
    local old, new = before.reading.pools[name] or { stored = 0 }, reading.pools[name]
    if new and before.reading.total_used_raw and reading.total_used_raw then
      change = { raw = reading.total_used_raw - before.reading.total_used_raw,
        stored = (new.stored or 0) - (old.stored or 0) }
    end
  end
  local space = self:table_of(reading, freshness, label, change)
  if before then
    space.before = { settled = before.freshness.settled, waited = before.freshness.waited,
      reused = before.freshness.reused }
  end
  return space
end

-- At the end of the run: every pool's `space`.
function Tracker:at_end()
  local reading, freshness = self:reusable(0)
  if not reading then reading, freshness = self:settled_reading(self.last_phase_end) end
  if not reading then return unknown(freshness) end
  return self:table_of(reading, freshness, nil, nil)
end

-- The lines said at the end of a run, one per pool.
function M.end_lines(space)
  if type(space) ~= "table" then return {} end
  if space.status ~= "measured" then return { "space at the end: unknown: " .. tostring(space.reason) } end
  local lines = {}
  for _, figures in ipairs(space.pools or {}) do
    lines[#lines + 1] = string.format("space at the end: %s (%s)", M.describe_pool(figures, figures.label),
      freshness_words(space))
  end
  return lines
end

-------------------------------------------------------------------------------------------
-- The calls a run makes (scenario.lua): kept here so that the run's phase path changes by
-- a few lines. Space is part of the phase's telemetry: off with it.

-- The run's tracker, made on first use.
local function tracker_of(run)
  if not run.space_tracker then
    run.space_tracker = M.tracker {
      cluster = function() return run:cluster() end,
      mgr_seen = function() return run.state_watcher and run.state_watcher.mgr_seen_at end,
      osd_ids = function() return run:osd_ids() end,
      pools = function()
        local list = {}
        for _, pool in ipairs(run.pools) do
          list[#list + 1] = { label = pool.label, name = pool.name, created = pool.created == true }
        end
        return list
      end,
    }
  end
  return run.space_tracker
end

-- Runs fn so that a failure never fails the phase: the space is recorded as unknown with
-- the reason. Stop signals and os.exit go through.
local function guarded(fn)
  local ok, value = pcall(fn)
  if ok then return value end
  if sys.interrupted() or sys.exit_requested() then error(value, 0) end
  return unknown(tostring((sys.error_info(value))))
end

-- Before a phase on a pool (op as the phase records it): state to hand to M.after_phase.
function M.before_phase(run, op, pool_label)
  local tracker = tracker_of(run)
  tracker.phases_begun = tracker.phases_begun + 1
  if op ~= "write" or not pool_label then return nil end
  local ok, before, why = pcall(tracker.before_phase, tracker)
  if not ok and (sys.interrupted() or sys.exit_requested()) then error(before, 0) end
  if not ok then before, why = nil, tostring((sys.error_info(before))) end
  return { before = before, before_missing = why }
end

-- After a phase on a pool: what it left is counted; a write phase's record gets its
-- `cluster.space`, and the line for the summary is returned.
function M.after_phase(run, record, pool_label, result, state)
  if not pool_label then return nil end
  local tracker = tracker_of(run)
  tracker:account(pool_label, record.op, result, record.options)
  if record.op ~= "write" or not state or sys.interrupted() or type(result) ~= "table" then return nil end
  local space = guarded(function() return tracker:after_phase(pool_label, state.before) end)
  if state.before_missing and space.status == "measured" and not space.per_pool_statistics then
    -- (why a store without statistics per pool has no amplification for this phase)
    space.before = { missing = state.before_missing }
  end
  record.cluster = record.cluster or {}
  record.cluster.space = space
  return M.summary_line(space)
end

-- At the end of a run that used pools: the results' `cluster.space` and its lines.
function M.at_end(run)
  if #run.pools == 0 or sys.interrupted() then return {} end
  if not run.scenario.telemetry or run.context.telemetry == false then return {} end
  local space = guarded(function() return tracker_of(run):at_end() end)
  if run.facts then run.facts.space = space end
  -- (without a mgr, each write phase's line has said so already)
  if space.status ~= "measured" then return {} end
  return M.end_lines(space)
end

return M
