-- The object gateway's list and head benches against the local cluster's radosgw, over S3
-- and Swift and both transports: objects spread over three buckets, every page's names
-- checked against what was written (a listing of more objects than exist is a verify
-- failure), head of every object.
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local function exercise(api, conn)
  local base = string.format("cephmark-test-ops-%s-%d", api, sys.getpid())
  local names = { base .. "-0", base .. "-1", base .. "-2" }
  for _, name in ipairs(names) do
    t.eq((api == "s3" and conn.create_bucket or conn.create_container)(conn, name), true, api .. ": create " .. name)
  end
  local put = conn:bench { op = "put", containers = names, objects = 250, size = 100, threads = 8, prefix = "l" }
  t.eq(put.objects_written, 250, api .. ": put 250 over three " .. (api == "s3" and "buckets" or "containers"))
  for _, transport in ipairs { "native", "curl" } do
    local what = api .. " over " .. transport .. ": "
    local list = conn:bench { op = "list", from = put, page_size = 30, ops = 40, threads = 2, transport = transport }
    t.eq(list.transport, transport, what .. "list transport")
    t.eq(list.ops, 40, what .. "40 pages")
    t.eq(list.errors, 0, what .. "list: no errors")
    t.eq(list.verify_failures, 0, what .. "list: every name was written")
    -- 84, 83, 83 names per container: 3 pages each, so 40 pages end at least 12 walks
    t.ok(list.listings >= 12, what .. "list: whole walks counted (" .. tostring(list.listings) .. ")")
    t.ok(list.names_listed >= 12 * 83, what .. "list: names counted")
    t.ok(list.lat.p50 > 0, what .. "list: per-page latency")
    local more = conn:bench { op = "list", from = put, objects = 260, page_size = 100, ops = 6, threads = 1,
      transport = transport }
    t.ok(more.verify_failures > 0, what .. "a listing short of what was written is a verify failure")
    t.match(more.verify_errors[1], "names, %d+ were written", what .. "the failure says the counts")
    local head = conn:bench { op = "head", from = put, ops = 50, threads = 4, transport = transport }
    t.eq(head.ops, 50, what .. "head 50")
    t.eq(head.errors, 0, what .. "head: no errors")
  end
  t.raises(function() conn:bench { op = "list", from = put, page_size = 1001 } end, "page_size",
    api .. ": page_size above 1000")
  t.eq(conn:bench { op = "delete", from = put, threads = 8 }.ops, 250, api .. ": delete them")
  for _, name in ipairs(names) do
    t.eq((api == "s3" and conn.delete_bucket or conn.delete_container)(conn, name), true, api .. ": remove " .. name)
  end
end

-- no bucket given: a put makes `spread` of its own (16 by default), each with its index
-- shard count known, and a delete of all its objects removes them
local function spread(api, conn)
  local put = conn:bench { op = "put", objects = 40, size = 64, threads = 4 }
  t.eq(#put.containers, 16, api .. ": 16 containers by default")
  t.eq(put.containers_made, true, api .. ": made by the put")
  t.eq(put.objects_written, 40, api .. ": put over them")
  local shards = assert(rgw.index_shards(put.containers))
  t.ok(math.type(shards[put.containers[1]]) == "integer" and shards[put.containers[1]] >= 1,
    api .. ": index shards of " .. put.containers[1] .. ": " .. tostring(shards[put.containers[1]]))
  local list = conn:bench { op = "list", from = put, ops = 16, threads = 1 }
  t.eq(list.listings, 16, api .. ": each container listed whole")
  t.eq(list.names_listed, 40, api .. ": every name once")
  local few = conn:bench { op = "put", objects = 4, spread = 2, threads = 2 }
  t.eq(#few.containers, 2, api .. ": spread = 2")
  local gone = conn:bench { op = "delete", from = put, threads = 4 }
  t.eq(gone.containers_removed, true, api .. ": the delete removed the containers")
  t.eq(conn:bench { op = "delete", from = few, threads = 2 }.containers_removed, true, api .. ": and spread = 2's")
  local left = {}
  for _, name in ipairs((api == "s3" and conn.list_buckets or conn.list_containers)(conn)) do left[name] = true end
  t.ok(not left[put.containers[1]] and not left[few.containers[2]], api .. ": none left")
end

-- S3 multipart: objects of 12 MiB in parts of 5 MiB (the last one 2 MiB), two in flight,
-- verified on GET; parts below radosgw's minimum are refused with its EntityTooSmall and the
-- uploads aborted, none left behind
local function multipart(conn)
  local B = "cephmark-test-mp-" .. sys.getpid()
  t.eq(conn:create_bucket(B), true, "multipart: bucket")
  local put = conn:bench { op = "put", bucket = B, objects = 4, size = "12M", threads = 2,
    multipart = { part_size = "5M", parts_in_flight = 2 } }
  t.eq(put.objects_written, 4, "multipart: 4 objects")
  t.eq(put.errors, 0, "multipart: no errors")
  t.eq(put.multipart.parts, 12, "multipart: 3 parts each")
  t.eq(put.multipart.part_size, 5 * 1024 * 1024, "multipart: part size in the result")
  local get = conn:bench { op = "get", from = put, ops = 8, threads = 2 }
  t.eq(get.verify_failures, 0, "multipart: every object verifies on GET")
  t.eq(get.errors, 0, "multipart: GETs succeed")
  t.raises(function()
    conn:bench { op = "put", bucket = B, objects = 3, size = "3M", threads = 2, prefix = "small",
      multipart = { part_size = "1M", parts_in_flight = 3 } }
  end, "the gateway refused parts of 1 MiB: CompleteMultipartUpload of '" .. B:gsub("%-", "%%-")
    .. "/small_%d': 400 Bad Request %(EntityTooSmall%)", "multipart: parts below the gateway's minimum")
  t.eq(#conn:list_uploads(B), 0, "multipart: no upload left behind")
  t.eq(#conn:list(B, { prefix = "small" }), 0, "multipart: no object of the refused put")
  t.raises(function() conn:bench { op = "put", bucket = B, objects = 1, transport = "curl",
    multipart = { part_size = "5M" } } end, "multipart uploads are S3's, over the native transport",
    "multipart: not over libcurl")
  t.eq(conn:bench { op = "delete", from = put, threads = 2 }.errors, 0, "multipart: delete")
  t.eq(conn:delete_bucket(B), true, "multipart: bucket removed")
end

-- op = "mixed": the 30/30/30/5/5 mix over four containers, per-op results, no GET or HEAD
-- of an object the phase deleted (misses), even when deletes take most of the set
local function mixed(api, conn)
  local put = conn:bench { op = "put", objects = 200, size = { "1K", "8K" }, threads = 8, spread = 4 }
  local mix = conn:bench { op = "mixed", from = put, ops = 400, threads = 8, page_size = 50,
    mix = { get = 30, put = 30, list = 30, head = 5, delete = 5 } }
  t.eq(mix.ops, 400, api .. " mixed: 400 ops")
  t.eq(mix.errors, 0, api .. " mixed: no errors")
  t.eq(mix.misses, 0, api .. " mixed: no GET or HEAD of a deleted object")
  t.eq(mix.verify_failures, 0, api .. " mixed: GETs and listings verify")
  local sum = 0
  for _, name in ipairs { "get", "put", "list", "head", "delete" } do
    local kind = mix.by_op and mix.by_op[name]
    t.ok(kind and kind.ops > 0 and kind.latency.p50 > 0, api .. " mixed: per-op result of " .. name)
    sum = sum + (kind and kind.ops or 0)
  end
  t.eq(sum, mix.ops, api .. " mixed: the kinds add up to the total")
  -- a seed repeats the kinds drawn, whatever the timing made of the object picks
  local function seeded() return conn:bench { op = "mixed", from = put, ops = 200, threads = 8, page_size = 50,
    seed = 11, mix = { get = 50, head = 30, list = 20 } } end
  local first, again = seeded(), seeded()
  t.eq(first.seed, 11, api .. " mixed: the seed is in the result")
  for _, name in ipairs { "get", "head", "list" } do
    t.eq((again.by_op[name] or {}).ops, (first.by_op[name] or {}).ops, api .. " mixed: seed 11 repeats the " .. name .. " count")
  end
  -- a fresh set (the mix above deleted some of the first): deletes take most of it
  local fresh = conn:bench { op = "put", containers = put.containers, objects = 100, size = "1K", threads = 8,
    prefix = "fresh" }
  local deletes = conn:bench { op = "mixed", from = fresh, ops = 150, threads = 8,
    mix = { get = 45, head = 10, delete = 45 } }
  t.eq(deletes.errors, 0, api .. " delete-heavy mix: no errors")
  t.eq(deletes.misses, 0, api .. " delete-heavy mix: no misses")
  t.raises(function() conn:bench { op = "mixed", from = put, mix = { get = 1, copy = 1 } } end,
    "mix: unknown operation 'copy' %(expected one of get, put, delete, head, list%)", api .. " mixed: unknown op")
  conn:bench { op = "delete", from = put, threads = 8 }
  conn:bench { op = "delete", from = fresh, threads = 8 }
  for _, name in ipairs(put.containers) do
    (api == "s3" and conn.delete_bucket or conn.delete_container)(conn, name)
  end
end

local s3 <close> = rgw.s3_connect {}
mixed("s3", s3)
multipart(s3)
exercise("s3", s3)
spread("s3", s3)
local swift <close> = rgw.swift_connect {}
exercise("swift", swift)
spread("swift", swift)
mixed("swift", swift)
t.raises(function() swift:bench { op = "put", container = "c", objects = 1, multipart = { part_size = "5M" } } end,
  "Swift's SLO and DLO are not supported", "swift: no multipart")
return t.done()
