-- s3-put-get: PUT then GET over radosgw's S3 API (SigV4, path-style) for a list of object
-- sizes: each size writes `objects` objects with `threads` connections for at most
-- `seconds`, reads them back at random for `seconds` (every body verified, time to first
-- byte recorded), deletes them; the table compares the sizes.
--
--   cephmark run scenarios/s3-put-get.lua [-p sizes=4K,64K,1M] [-p threads=32] [-p seconds=10]
--
-- Credentials: AWS_ENDPOINT_URL / AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or the local
-- cluster's (`cephmark cluster up --rgw`); see docs/rgw.md. The phases are phases on the S3
-- connection, so the run also goes on many client hosts with `--agents N`
-- (docs/distributed.md): each agent in a bucket of its own, `objects` per agent.

local cm = require "cephmark"
local params = require "cephmark.params"
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"

return cm.scenario {
  name = "s3-put-get",
  description = "S3 PUT and GET of several object sizes on radosgw, compared",
  params = {
    sizes = cm.list(cm.size(), { "4K", "64K", "1M" }, "object sizes, one PUT/GET pair each"),
    objects = cm.integer(500, "objects written per size (the PUT phase stops there)", { min = 1 }),
    threads = cm.integer(32, "connections", { min = 1, max = 4096 }),
    seconds = cm.duration("10s", "at most this long per PUT phase; the length of each GET phase"),
    timeout = cm.duration("10s", "connect timeout, and how long a request may make no progress"),
  },
  run = function(s, p)
    local conn <close>, where = rgw.s3_connect { timeout = p.timeout }
    s:say("s3: " .. where.endpoint .. " (" .. where.source .. ")")
    local bucket = string.format("cephmark-s3-put-get-%d", sys.getpid())
    local ok, err = conn:create_bucket(bucket)
    if not ok then sys.fail("cannot create bucket " .. bucket .. ": " .. err) end
    -- the bucket goes however the run ends, with any object a put left in it (its delete
    -- phase did not run: an error, Ctrl-C). With --agents each agent works in a bucket of
    -- its own (<bucket>-<agent>), which it makes and removes the same way
    local guard <close> = setmetatable({}, { __close = function() rgw.remove_containers(conn, { bucket }) end })
    for _, size in ipairs(p.sizes) do
      local variant = { size = params.format_size(size) }
      local put = s:phase("put", conn, { bucket = bucket, objects = p.objects, seconds = p.seconds, size = size,
        threads = p.threads, prefix = "obj" .. size, variant = variant })
      if put.objects_written > 0 then
        s:phase("get", conn, { from = put, seconds = p.seconds, threads = p.threads, variant = variant })
      end
      s:phase("delete", conn, { from = put, threads = p.threads, ignore_interrupt = true, variant = variant })
    end
    s:compare { by = "size", phases = { "put", "get" } }
  end,
}
