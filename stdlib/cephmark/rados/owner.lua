-- Owner records: what a cephmark run writes next to what it creates (a pool, a benchmark
-- run in a pool it did not create), so that another run, or `cephmark cleanup --leftovers`
-- after a SIGKILL, can tell whose it is and whether that process still lives. The records
-- live in the pool's "cephmark" namespace, apart from the pool's own objects; the pool
-- owner also tags the pool's application metadata (key cephmark_owner). docs/rados.md,
-- "Ownership", describes the protocol.

local M = {}

M.NAMESPACE = "cephmark"
M.POOL_OBJECT = "owner"         -- the owner record of a pool cephmark created
M.RUN_PREFIX = "run."           -- run.<run name>: the marker of a write in progress
M.TAG = "cephmark_owner"        -- application metadata key on a pool cephmark created

-- "key value" lines, after a first line naming the kind of record.
function M.format(kind, fields)
  local lines = { "cephmark-owner 1", "kind " .. kind }
  local keys = {}
  for key in pairs(fields) do keys[#keys + 1] = key end
  table.sort(keys)
  for _, key in ipairs(keys) do
    local value = tostring(fields[key])
    if value == "" then value = "-" end
    lines[#lines + 1] = key .. " " .. value
  end
  return table.concat(lines, "\n") .. "\n"
end

-- The record's fields as strings ("-" read back as ""), or nil if the text is not one.
function M.parse(text)
  if type(text) ~= "string" then return nil end
  local record = {}
  for line in text:gmatch("[^\n]+") do
    local key, value = line:match("^(%S+) (.*)$")
    if key then record[key] = value == "-" and "" or value end
  end
  if not record["cephmark-owner"] and not record["cephmark-run-metadata"] then return nil end
  return record
end

-- This process as an owner, with a run id of its own (one per call).
function M.self()
  return require("cephmark.rados").owner()
end

function M.describe(record)
  local started = tonumber(record.started)
  local when = started and started > 0 and os.date("!%Y-%m-%d %H:%M:%S UTC", started) or "at an unknown time"
  return string.format("host %s, pid %s, started %s", record.host or "?", record.pid or "?", when)
end

-- "alive", "gone": from /proc on this host, else by probing the object the holder watches
-- (pool, name, namespace). No answer counts as alive: nothing is removed on a guess.
function M.state(record, pool, name, namespace)
  local state = require("cephmark.rados").owner_state(record)
  if state ~= "elsewhere" then return state end
  if not pool then return "alive" end
  local answered = pool:probe(name, namespace)
  if answered == false then return "gone" end
  return "alive"
end

-- Whether the record was written by this very process.
function M.is_self(record)
  local me = M.self()
  return record.host == me.host and tostring(record.pid) == tostring(me.pid) and
    (record.pid_start == nil or tostring(record.pid_start) == tostring(me.pid_start))
end

-- The owner record of a pool (a cluster:pool handle), or nil and why.
function M.read_pool_owner(pool)
  local text, err, code = pool:get(M.POOL_OBJECT, M.NAMESPACE)
  if not text then return nil, err, code end
  local record = M.parse(text)
  if not record or record.kind ~= "pool" then return nil, "not a cephmark owner record", -22 end
  return record
end

return M
