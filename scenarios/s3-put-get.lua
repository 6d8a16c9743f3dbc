-- s3-put-get: PUT then GET over radosgw's S3 API (SigV4, path-style) for a list of object
-- sizes: each size writes `objects` objects with `threads` connections for at most
-- `seconds`, reads them back at random for `seconds` (every body verified, time to first
-- byte recorded), deletes them; the table compares the sizes.
--
--   cephmark run scenarios/s3-put-get.lua [-p sizes=4K,64K,1M] [-p threads=32] [-p seconds=10]
--
-- Credentials: AWS_ENDPOINT_URL / AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or the local
-- cluster's (`cephmark cluster up --rgw`); see docs/rgw.md.

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
    local pending = {}
    local guard <close> = setmetatable({}, { __close = function()
      for _, put in ipairs(pending) do conn:bench { op = "delete", from = put, threads = p.threads,
        ignore_interrupt = true } end
      conn:delete_bucket(bucket)
    end })
    for _, size in ipairs(p.sizes) do
      local label = params.format_size(size)
      local put = s:phase("put", function(phase)
        return conn:bench { op = "put", bucket = bucket, objects = p.objects, seconds = p.seconds,
          size = size, threads = p.threads, prefix = "obj" .. size, on_second = phase.on_second }
      end, { variant = { size = label } })
      pending[#pending + 1] = put
      if put.objects_written > 0 then
        s:phase("get", function(phase)
          return conn:bench { op = "get", from = put, seconds = p.seconds, threads = p.threads,
            on_second = phase.on_second }
        end, { variant = { size = label } })
      end
      s:phase("delete", function(phase)
        return conn:bench { op = "delete", from = put, threads = p.threads, on_second = phase.on_second }
      end, { variant = { size = label } })
      pending[#pending] = nil
    end
    s:compare { by = "size", phases = { "put", "get" } }
  end,
}
