-- A short scenario for the valgrind tests: the null target and scripted workers always;
-- with -p cluster=true also a rados pool (write, seq, rand, cleanup) and, when radosgw
-- credentials are found, Swift PUT/GET/DELETE through libcurl.
local cm = require "cephmark"
local null = require "cephmark.null"
local sys = require "cephmark.sys"

return cm.scenario {
  name = "valgrind",
  params = {
    seconds = cm.duration("1s", "length of each phase"),
    cluster = cm.bool(false, "also run rados and Swift phases against the configured cluster"),
  },
  pools = function(p)
    if not p.cluster then return {} end
    return { data = { type = "replicated", size = 3, pg_num = 8 } }
  end,
  run = function(s, p)
    s:phase("null", function() return null.bench { seconds = p.seconds, threads = 4, delay = "100us" } end)
    s:workers { n = 2, seconds = p.seconds, fn = function(w) while true do w:op(4096) end end }
    if not p.cluster then return end
    local pool = s:pool("data")
    s:phase("write", pool, { seconds = p.seconds, threads = 4, block_size = "16K" })
    s:phase("seq", pool, { seconds = p.seconds, threads = 4 })
    s:phase("rand", pool, { seconds = p.seconds, threads = 4 })
    s:phase("cleanup", pool)
    local rgw = require "cephmark.rgw"
    local ok, conn = pcall(rgw.swift_connect, {})
    if not ok then
      s:say("no radosgw: Swift phases skipped (" .. tostring(conn) .. ")")
      return
    end
    local container = "cephmark-valgrind-" .. sys.getpid()
    assert(conn:create_container(container))
    local put = s:phase("put", function()
      return conn:bench { op = "put", container = container, objects = 50, size = "4K", threads = 4 }
    end)
    s:phase("get", function() return conn:bench { op = "get", from = put, threads = 4, ops = 100 } end)
    s:phase("delete", function() return conn:bench { op = "delete", from = put, threads = 4 } end)
    assert(conn:delete_container(container))
    conn:close()
  end,
}
