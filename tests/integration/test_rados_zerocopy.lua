-- Zero-copy writes outlive the run that made them: librados sends a write's body from the
-- run's payload stage, without a copy, and a write still queued when the run gives up on it
-- (drain timeout) is sent later, after the run has let go of the stage. With the OSDs
-- stopped after its first second, a 16M write run ends with its writes in librados; the OSDs are resumed from
-- another process once the run is over, the queued writes go out from memory the run no
-- longer owns, and every object they wrote must then read back verified. A stage freed
-- under librados would be unmapped and crash the messenger: a 16M run's stage is 33 MiB,
-- which glibc always maps on its own (its mmap threshold is at most 32 MiB).
local connection = require "cephmark.connection"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local dir = assert(os.getenv("CEPHMARK_CLUSTER_DIR"), "CEPHMARK_CLUSTER_DIR")
local osds = {}
for id = 0, 2 do
  local text = assert(sys.read_file(dir .. "/run/osd." .. id .. ".pid"))
  osds[#osds + 1] = assert(tonumber(text:match("%d+")), "osd pid")
end

local cluster <close> = connection.connect()
local name = "cephmark-test-zerocopy"
if cluster:pool_exists(name) then assert(cluster:pool_delete(name)) end -- left by a crashed run
assert(cluster:pool_create { name = name, size = 3, pg_num = 8 })
local pool <close> = assert(cluster:pool(name))

-- The OSDs stop after the run's first second: a write claims its run name (the metadata
-- object) before its first op, which must go through. The resumer is started first, so the
-- OSDs come back even if this script dies.
local resume_after = 4
local started
local ok, w = pcall(pool.bench, pool, { op = "write", seconds = 2, drain_timeout = 1, threads = 4,
  block_size = "16M", prefix = "zerocopy", run_name = "zerocopy_run",
  on_second = function()
    if started then return end
    assert(sys.spawn { "sh", "-c", string.format("sleep %d; kill -CONT %s", resume_after, table.concat(osds, " ")) })
    for _, pid in ipairs(osds) do assert(sys.kill(pid, "STOP")) end
    started = sys.monotonic()
  end })
started = started or sys.monotonic()
local returned = sys.monotonic() - started
t.ok(ok, "the write run returned: " .. tostring(not ok and w or ""))
if ok then
  t.eq(w.drained, false, "the run gave up on writes still in librados")
  t.ok(w.started >= 4, "a full window of writes was started")
  -- the run metadata is written after the run, and waits for the OSDs
  t.ok(returned >= resume_after - 0.5, "the run returned after the OSDs came back")

  -- the abandoned writes land once the OSDs run again
  local objects
  for _ = 1, 40 do
    objects = #pool:objects("zerocopy_object")
    if objects >= w.started - 1 then break end
    sys.sleep(0.25)
  end
  -- the one write the run cancelled may never reach an OSD
  t.ok(objects >= w.started - 1, string.format("%d of %d writes landed", objects, w.started))
  local r = pool:bench { op = "seq", threads = 4, run_name = "zerocopy_run" }
  t.eq(r.verify_failures, 0, "writes sent after the run read back verified")
  t.ok(r.ops - r.errors >= w.started - 1, string.format("%d of %d blocks read", r.ops - r.errors, w.started))
  pool:bench { op = "cleanup", run_name = "zerocopy_run" }
end
sys.sleep(math.max(0, resume_after + 0.5 - (sys.monotonic() - started)))

pool:close()
assert(cluster:pool_delete(name))
return t.done()
