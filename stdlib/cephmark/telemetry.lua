-- The OSDs' side of a phase: every OSD's perf counters (`ceph tell osd.N perf dump`) read
-- just before and just after a phase on a pool, kept as deltas over the phase: client ops
-- and bytes, the phase's own average latencies from the (sum, avgcount) pairs (never the
-- lifetime averages), a cluster-wide figure weighted by ops and one per OSD, the OSD whose
-- latency stands out, and the summary line. Telemetry never fails a phase: an OSD that
-- does not answer in time is recorded as missing, and a key without the caps to read the
-- counters gets one warning and phases without telemetry. See docs/telemetry.md.

local json = require "cephmark.json"
local state = require "cephmark.state"
local sys = require "cephmark.sys"

local M = {}

M.SCOPE = "all client ops on these OSDs during the phase"
M.TIMEOUT = 2   -- seconds an OSD has to answer before it is recorded as missing
M.MIN_OPS = 20  -- ops an OSD needs over the phase before its average can make it an outlier
M.OUTLIER_FACTOR = 2
M.CAPS = "mon 'allow r' osd 'allow *'"

local COMMANDS = { '{"prefix":"perf dump","logger":"osd"}', '{"prefix":"perf dump","logger":"bluestore"}' }

-- Counters kept as deltas: counts and bytes of the `osd` section.
M.COUNTS = { "op", "op_r", "op_w", "op_rw", "op_in_bytes", "op_out_bytes", "subop", "subop_w" }

-- Latencies: the results' name, the perf dump section and counter. Each is a (sum,
-- avgcount) pair whose deltas give the phase's average.
M.LATENCIES = {
  { "op_latency", "osd", "op_latency" },
  { "op_r_latency", "osd", "op_r_latency" },
  { "op_w_latency", "osd", "op_w_latency" },
  { "op_rw_latency", "osd", "op_rw_latency" },
  { "op_process_latency", "osd", "op_process_latency" },
  { "op_r_process_latency", "osd", "op_r_process_latency" },
  { "op_w_process_latency", "osd", "op_w_process_latency" },
  { "op_rw_process_latency", "osd", "op_rw_process_latency" },
  { "subop_w_latency", "osd", "subop_w_latency" },
  { "commit_latency", "bluestore", "commit_lat" },
  { "kv_sync_latency", "bluestore", "kv_sync_lat" },
}

-- What a reading decodes of a perf dump (json.decode's keep table): the counters above and
-- nothing else of the 200-odd an OSD reports, which is most of a reading's client CPU.
local KEEP = { osd = {}, bluestore = {} }
for _, name in ipairs(M.COUNTS) do KEEP.osd[name] = true end
for _, spec in ipairs(M.LATENCIES) do KEEP[spec[2]][spec[3]] = true end

-- The counters this module keeps from one OSD's decoded sections: {name = number} for
-- counts, {name = {count, sum}} for latencies. Anything absent (memstore has no bluestore
-- section) is left out.
function M.extract(sections)
  local counters = {}
  local osd = sections.osd or {}
  for _, name in ipairs(M.COUNTS) do
    if type(osd[name]) == "number" then counters[name] = osd[name] end
  end
  for _, spec in ipairs(M.LATENCIES) do
    local pair = (sections[spec[2]] or {})[spec[3]]
    if type(pair) == "table" and type(pair.avgcount) == "number" and type(pair.sum) == "number" then
      counters[spec[1]] = { count = pair.avgcount, sum = pair.sum }
    end
  end
  return counters
end

-- delta(before, after) -> the counters over the interval, or nil and a reason when a
-- counter went backwards (the OSD restarted in between: its counters started again).
function M.delta(before, after)
  local delta = {}
  for name, value in pairs(after) do
    local old = before[name]
    if type(value) == "number" and type(old) == "number" then
      if value < old then return nil, "restarted during the phase (its counters started again)" end
      delta[name] = value - old
    elseif type(value) == "table" and type(old) == "table" then
      local count, sum = value.count - old.count, value.sum - old.sum
      if count < 0 or sum < 0 then return nil, "restarted during the phase (its counters started again)" end
      delta[name] = { count = count, sum = sum }
    end
  end
  return delta
end

local function median(values)
  local sorted = {}
  for i, v in ipairs(values) do sorted[i] = v end
  table.sort(sorted)
  local n = #sorted
  if n == 0 then return nil end
  if n % 2 == 1 then return sorted[(n + 1) // 2] end
  return (sorted[n // 2] + sorted[n // 2 + 1]) / 2
end
M.median = median -- (distributed.lua names slow agents by the same rule)

-- An average over the phase, to the nanosecond: perf dump gives its sums in seconds with
-- nine decimals, so finer digits were never measured (and 0.0030178905000000007 is a
-- difference of two floats, not a latency).
local function average(pair)
  if type(pair) ~= "table" or pair.count <= 0 then return nil end
  return math.floor(pair.sum / pair.count * 1e9 + 0.5) / 1e9
end

-- The OSDs whose average latency of `counter` is more than OUTLIER_FACTOR times the
-- median of their peers', among the OSDs with at least MIN_OPS such ops (at least two
-- peers to compare with), worst first.
function M.outliers(deltas, counter)
  local eligible = {}
  for id, delta in pairs(deltas) do
    local pair = delta[counter]
    if type(pair) == "table" and pair.count >= M.MIN_OPS then
      eligible[#eligible + 1] = { osd = id, latency = pair.sum / pair.count, ops = pair.count }
    end
  end
  local found = {}
  if #eligible < 3 then return found end
  for _, entry in ipairs(eligible) do
    local peers = {}
    for _, other in ipairs(eligible) do
      if other ~= entry then peers[#peers + 1] = other.latency end
    end
    local peer_median = median(peers)
    if peer_median and entry.latency > M.OUTLIER_FACTOR * peer_median then
      found[#found + 1] = { osd = entry.osd, counter = counter, latency = entry.latency,
        peers_median = peer_median, ops = entry.ops }
    end
  end
  table.sort(found, function(a, b) return a.latency / a.peers_median > b.latency / b.peers_median end)
  return found
end

-- summarize(deltas, missing) -> the phase's `cluster.osd` table: totals of the counts,
-- latencies weighted by ops (sum of the OSDs' sums over the sum of their counts), one entry
-- per OSD, the outliers and the OSDs that gave no figures. deltas: {[osd id] = delta};
-- missing: {[osd id] = reason}.
function M.summarize(deltas, missing)
  local osd = { scope = M.SCOPE, osds = 0, per_osd = json.array(), missing = json.array() }
  local ids = {}
  for id in pairs(deltas) do ids[#ids + 1] = id end
  table.sort(ids)
  local totals = {}
  for _, id in ipairs(ids) do
    local delta = deltas[id]
    osd.osds = osd.osds + 1
    local entry = { osd = id }
    for _, name in ipairs(M.COUNTS) do
      if delta[name] then
        entry[name] = delta[name]
        osd[name] = (osd[name] or 0) + delta[name]
      end
    end
    for _, spec in ipairs(M.LATENCIES) do
      local pair = delta[spec[1]]
      if pair then
        entry[spec[1]] = average(pair)
        local total = totals[spec[1]] or { count = 0, sum = 0 }
        total.count, total.sum = total.count + pair.count, total.sum + pair.sum
        totals[spec[1]] = total
      end
    end
    osd.per_osd[#osd.per_osd + 1] = entry
  end
  for _, spec in ipairs(M.LATENCIES) do
    local total = totals[spec[1]]
    if total then
      osd[spec[1]] = average(total)
    end
  end
  local missing_ids = {}
  for id in pairs(missing or {}) do missing_ids[#missing_ids + 1] = id end
  table.sort(missing_ids)
  for _, id in ipairs(missing_ids) do osd.missing[#osd.missing + 1] = { osd = id, reason = missing[id] } end
  -- reads are judged by their latency, anything else by the writes'
  local counter = (osd.op_r or 0) > (osd.op_w or 0) and "op_r_latency" or "op_w_latency"
  osd.outliers = M.outliers(deltas, counter)
  if #osd.outliers == 0 then osd.outliers = json.array() end
  return osd
end

local function format_latency(seconds)
  if seconds >= 1 then return string.format("%.3g s", seconds) end
  return string.format("%.3g ms", seconds * 1000)
end
M.format_latency = format_latency

-- The phase line's `osd:` part for a `cluster.osd` table (scenario.lua joins it with the
-- CPU and state parts into one line).
function M.summary_text(osd)
  local parts = {}
  local reads = (osd.op_r or 0) > (osd.op_w or 0)
  local kind = reads and "op_r" or "op_w"
  local main = osd[kind .. "_latency"]
  local noun = osd.osds == 1 and "OSD" or "OSDs"
  if main then
    local details = {}
    local process = osd[kind .. "_process_latency"]
    if process then details[#details + 1] = "process " .. format_latency(process) end
    if not reads and osd.subop_w_latency then details[#details + 1] = "subop_w " .. format_latency(osd.subop_w_latency) end
    if not reads and osd.commit_latency then details[#details + 1] = "commit " .. format_latency(osd.commit_latency) end
    parts[1] = string.format("%s %s%s over %d ops on %d %s", kind, format_latency(main),
      #details > 0 and (" (" .. table.concat(details, ", ") .. ")") or "", osd[kind] or 0, osd.osds, noun)
  elseif osd.osds > 0 then
    parts[1] = string.format("no client reads or writes on %d %s", osd.osds, noun)
  else
    parts[1] = "no counters"
  end
  for _, outlier in ipairs(osd.outliers or {}) do
    parts[#parts + 1] = string.format("outlier osd.%d %s (peers %s)", outlier.osd, format_latency(outlier.latency),
      format_latency(outlier.peers_median))
  end
  for _, entry in ipairs(osd.missing or {}) do
    parts[#parts + 1] = string.format("osd.%d missing", entry.osd)
  end
  return "osd: " .. table.concat(parts, "; ")
end

-------------------------------------------------------------------------------------------
-- The collector a run keeps. It asks through the run's own connection (a second one would
-- cost 10-18 ms of client CPU per run): cluster:osd_commands gives up on an OSD after
-- TIMEOUT by itself, and leaves the stuck request to end when the OSD answers or is marked
-- down. An OSD whose first answer had no bluestore section (memstore) is asked for the
-- `osd` section alone afterwards: one command instead of two.

local Collector = {}
Collector.__index = Collector

-- new{warn = fn(message), connect = fn() -> cluster | nil, err, client = "client.admin",
-- timeout = seconds, borrowed = true when the connection is the run's (never closed here),
-- osd_ids = fn() -> {ids} | nil, err: the OSDs in the map, when the run keeps them}
function M.collector(options)
  return setmetatable({ warn = options.warn, connect = options.connect, client = options.client or "client.admin",
    timeout = options.timeout or M.TIMEOUT, borrowed = options.borrowed, osd_ids = options.osd_ids, enabled = true,
    bluestore = {} }, Collector)
end

function Collector:disable(message)
  self.enabled = false
  if message then self.warn(message) end
  self:close()
end

function Collector:close()
  if self.cluster and not self.borrowed then pcall(self.cluster.close, self.cluster) end
  self.cluster = nil
end

-- The OSDs to ask: every OSD in the map, as the run keeps the list or from `osd ls`. One
-- that is down answers at once with ENXIO and is recorded as down.
function Collector:osd_list()
  local ids, err
  if self.osd_ids then
    ids, err = self.osd_ids()
  else
    ids, err = state.osd_ls(self.cluster)
  end
  if type(ids) ~= "table" then return nil, err or "no OSD list" end
  return ids, {}
end

-- The answers of every OSD in `ids` to the commands it needs: both sections, or the `osd`
-- section alone for an OSD known to have no bluestore one. One parallel batch when all
-- OSDs need the same (the usual case), two otherwise.
function Collector:ask(ids)
  local both, osd_only = {}, {}
  for _, id in ipairs(ids) do
    local list = self.bluestore[id] == false and osd_only or both
    list[#list + 1] = id
  end
  local answers = {}
  for _, batch in ipairs { { both, COMMANDS }, { osd_only, { COMMANDS[1] } } } do
    if #batch[1] > 0 then
      for id, answer in pairs(self.cluster:osd_commands(batch[1], batch[2], self.timeout)) do answers[id] = answer end
    end
  end
  return answers
end

-- One reading of every OSD: {[id] = counters}, {[id] = reason}
function Collector:read(ids, missing)
  local answers = self:ask(ids)
  local counters, denied, asked = {}, 0, 0
  for _, id in ipairs(ids) do
    asked = asked + 1
    local answer = answers[id]
    if answer.code then
      if answer.code == -13 then denied = denied + 1 end
      missing[id] = (answer.code == -110 and string.format("no answer within %g s", self.timeout)) or
        (answer.code == -6 and "down") or tostring(answer.error)
    else
      local sections = {}
      for i = 1, #answer do
        local decoded = json.decode(answer[i] or "", KEEP)
        if type(decoded) == "table" then
          for name, section in pairs(decoded) do sections[name] = section end
        end
      end
      if #answer == #COMMANDS then self.bluestore[id] = sections.bluestore ~= nil end
      if sections.osd then
        counters[id] = M.extract(sections)
      else
        missing[id] = "no osd counters in its perf dump"
      end
    end
  end
  return counters, asked > 0 and denied == asked
end

-- Runs fn(self, ...) so that a failure of telemetry never fails the phase: it is said
-- once, and the run goes on without telemetry. Stop signals and os.exit go through.
function Collector:guarded(fn, ...)
  local ok, value = pcall(fn, self, ...)
  if ok then return value end
  if sys.interrupted() or sys.exit_requested() then error(value, 0) end
  self:disable(string.format("OSD telemetry failed: %s; phases run without OSD telemetry",
    tostring((sys.error_info(value)))))
  return nil
end

-- Before a phase: a reading, or nil when telemetry is off for this run.
function Collector:before()
  if not self.enabled then return nil end
  local started = sys.monotonic()
  if not self.cluster then
    local ok, cluster, err = pcall(self.connect)
    if not ok or not cluster then
      self:disable(string.format("cannot read the OSDs' perf counters: %s; phases run without OSD telemetry",
        tostring(ok and err or cluster)))
      return nil
    end
    self.cluster = cluster
  end
  local ids, missing = self:osd_list()
  if not ids then
    self:disable(string.format("cannot read the OSD map for telemetry: %s; phases run without OSD telemetry",
      tostring(missing)))
    return nil
  end
  local counters, denied = self:read(ids, missing)
  if denied then
    self:disable(string.format("%s may not read the OSDs' perf counters (permission denied; it needs %s); " ..
      "phases run without OSD telemetry", self.client, M.CAPS))
    return nil
  end
  return { ids = ids, counters = counters, missing = missing, seconds = sys.monotonic() - started }
end

-- After a phase: the `cluster.osd` table from the reading before it and one now.
function Collector:after(before)
  if not before or not self.cluster then return nil end
  local started = sys.monotonic()
  local missing = {}
  for id, reason in pairs(before.missing) do missing[id] = reason end
  local ids = {}
  for _, id in ipairs(before.ids) do
    if before.counters[id] then ids[#ids + 1] = id end
  end
  local after = self:read(ids, missing)
  local deltas = {}
  for _, id in ipairs(ids) do
    if after[id] then
      local delta, reason = M.delta(before.counters[id], after[id])
      if delta then deltas[id] = delta else missing[id] = reason end
    end
  end
  local osd = M.summarize(deltas, missing)
  osd.collect_seconds = { before = before.seconds, after = sys.monotonic() - started }
  return osd
end

return M
