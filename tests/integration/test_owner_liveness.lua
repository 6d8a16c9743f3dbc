-- Whether the holder of an owner record lives, as `cephmark cleanup --leftovers` and the
-- refusals decide it: on this host from /proc (the pid and its start time, the boot id);
-- for another host's record, by a notify on the object the holder watches, answered by a
-- live holder, unanswered by one that was SIGKILLed (its watch lingers in the OSD until the
-- watch timeout, but nobody answers).
local connection = require "cephmark.connection"
local owner = require "cephmark.rados.owner"
local rados = require "cephmark.rados"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local cluster <close> = connection.connect()
local name = "cephmark-test-liveness"
if cluster:pool_exists(name) then assert(cluster:pool_delete(name)) end
local created = assert(cluster:pool_create { name = name, size = 3, pg_num = 8 })
t.eq(created.owner.keep, 1, "a pool made through the API is kept (never a leftover)")
local record = assert(cluster:pool_owner(name))
t.eq(record.pid, tostring(sys.getpid()), "the pool's owner record names this process")
t.eq(rados.owner_state(record), "alive", "this process is alive")

-- same host: a pid that ended, a pid reused by another process, another boot
local me = rados.owner()
local pid = assert(sys.spawn { "true" })
for _ = 1, 50 do if not sys.alive(pid) then break end sys.sleep(0.05) end
sys.reap()
t.eq(rados.owner_state { host = me.host, pid = pid, pid_start = 1 }, "gone", "an ended pid is gone")
t.eq(rados.owner_state { host = me.host, pid = me.pid, pid_start = me.pid_start + 1 }, "gone",
  "a live pid with another start time is another process")
t.eq(rados.owner_state { host = me.host, pid = me.pid, pid_start = me.pid_start, boot_id = "another-boot" },
  "gone", "a record of another boot is gone")
t.eq(rados.owner_state { host = "another-host", pid = me.pid }, "elsewhere", "another host's record is asked for")

-- another host's record: probe the object its holder watches
local other = owner.format("run", { host = "another-host", pid = 1, run_id = 7, started = os.time() })
local prober <close> = assert(connection.connect())
local probe_pool <close> = assert(prober:pool(name))
local pool <close> = assert(cluster:pool(name))
assert(pool:put("run.watched", other, owner.NAMESPACE))
local parsed = owner.parse(other)
t.eq(owner.state(parsed, probe_pool, "run.watched", owner.NAMESPACE), "gone", "nobody watches: gone")
assert(pool:watch("run.watched", owner.NAMESPACE))
t.eq(owner.state(parsed, probe_pool, "run.watched", owner.NAMESPACE), "alive", "a live watcher answers: alive")
pool:unwatch("run.watched", owner.NAMESPACE)
t.eq(owner.state(parsed, probe_pool, "run.watched", owner.NAMESPACE), "gone", "after unwatch: gone")

-- a holder SIGKILLed while it watches: its watch stays in the OSD, unanswered
local dir = os.getenv("TMPDIR") or "/tmp"
local script = dir .. "/cephmark-liveness-" .. sys.getpid() .. ".lua"
assert(sys.write_file(script, string.format([[
local pool = assert(require("cephmark.connection").connect():pool(%q))
assert(pool:watch("run.killed", "cephmark"))
assert(pool:put("run.killed.ready", "1", "cephmark"))
require("cephmark.sys").sleep(120)
]], name)))
assert(pool:put("run.killed", other, owner.NAMESPACE))
local holder = assert(sys.spawn { os.getenv("CEPHMARK"), "run", script })
for _ = 1, 100 do
  if pool:get("run.killed.ready", owner.NAMESPACE) then break end
  sys.sleep(0.1)
end
t.eq(owner.state(parsed, probe_pool, "run.killed", owner.NAMESPACE), "alive", "the other process's watch answers")
sys.kill(holder, "KILL")
for _ = 1, 50 do if not sys.alive(holder) then break end sys.sleep(0.05) end
sys.reap()
local started = sys.monotonic()
t.eq(owner.state(parsed, probe_pool, "run.killed", owner.NAMESPACE), "gone", "a SIGKILLed holder does not answer")
t.ok(sys.monotonic() - started < 20, "the probe is bounded")
os.remove(script)

pool:close()
probe_pool:close()
assert(cluster:pool_delete(name))
return t.done()
