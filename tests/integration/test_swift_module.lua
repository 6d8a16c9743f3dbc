-- cephmark.swift against the local cluster's radosgw: auth v1.0 with the cluster's
-- credentials, containers (create, list, delete), objects (put, get, head, delete, list with
-- a prefix), objects of size 0, conn:bench put/get/head/delete with verified payloads and a
-- size range, errors by HTTP status for a missing container, and the bad inputs: a wrong key
-- (one clear auth error), an unreachable endpoint (an error within the timeout), a size
-- range with low > high, a closed connection. Secrets never show in what the module returns.
local rgw = require "cephmark.rgw"
local swift = require "cephmark.swift"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local creds = rgw.swift_credentials {}
local conn = assert(swift.connect { auth_url = creds.auth_url, user = creds.user, key = creds.key,
  timeout = 10 })
local C = "cephmark-test-swift-" .. sys.getpid()

-- ---- the connection says nothing secret ----------------------------------------------------
local info = conn:info()
t.eq(info.api, "swift", "info.api")
t.match(info.storage_url, "/swift/v1$", "storage URL from auth")
t.eq(info.user, creds.user, "info.user")
t.eq(info.auth_requests, 1, "one auth request to connect")
local function shows_secret(text)
  return tostring(text):find(creds.key, 1, true) ~= nil
end
t.ok(not shows_secret(tostring(conn)), "tostring has no key")
for k, v in pairs(info) do t.ok(not shows_secret(v), "info." .. k .. " has no key") end

-- ---- containers and objects ----------------------------------------------------------------
t.eq(conn:create_container(C), true, "create container")
local found = false
for _, name in ipairs(conn:list_containers()) do found = found or name == C end
t.ok(found, "list_containers shows it")
t.eq(conn:put(C, "dir/one two", "hello"), true, "put a name with / and a space")
t.eq(conn:get(C, "dir/one two"), "hello", "get it back")
local head = conn:head(C, "dir/one two")
t.eq(head.size, 5, "head size")
t.eq(head.etag, "5d41402abc4b2a76b9719d911017c592", "head etag is the MD5")
t.eq(conn:put(C, "empty", ""), true, "put an object of size 0")
t.eq(conn:get(C, "empty"), "", "get an object of size 0")
t.eq(conn:head(C, "empty").size, 0, "head of size 0")
local names = conn:list(C)
t.eq(#names, 2, "list shows both objects")
local prefixed = conn:list(C, { prefix = "dir/" })
t.eq(#prefixed, 1, "list with a prefix")
t.eq(prefixed[1], "dir/one two", "list with a prefix: the name")

-- ---- failures of the world: nil, message, HTTP status ---------------------------------------
local value, err, code = conn:get(C, "no-such-object")
t.eq(value, nil, "get a missing object")
t.eq(code, 404, "missing object: 404")
t.match(err, "^GET object '.-/no%-such%-object': 404 Not Found", "missing object message")
value, err, code = conn:put("cephmark-no-such-container", "x", "y")
t.eq(code, 404, "put into a missing container: 404")
t.match(err, "404 Not Found", "missing container message")
value, err, code = conn:delete_container(C)
t.eq(code, 409, "delete a non-empty container: 409")
t.match(err, "not empty", "non-empty container message")

-- ---- bench: put, get (verified), head, delete -----------------------------------------------
local put = conn:bench { op = "put", container = C, objects = 64, size = { 1000, 9000 }, threads = 8,
  prefix = "bench" }
t.eq(put.ops, 64, "put: 64 objects")
t.eq(put.errors, 0, "put: no errors")
t.eq(put.objects_written, 64, "put: objects_written")
t.eq(put.method, "PUT", "put: method")
t.eq(put.transport, "native", "put: the native HTTP/1.1 transport by default for Swift over http")
t.ok(put.lat.p99 and put.lat.p99 > 0, "put: latency percentiles")
t.eq(#conn:list(C, { prefix = "bench_" }), 64, "the put objects are listed")
local sizes = {}
for i = 0, 4 do sizes[#sizes + 1] = conn:head(C, "bench_" .. i).size end
local distinct, all_in_range = {}, true
for _, size in ipairs(sizes) do
  distinct[size] = true
  all_in_range = all_in_range and size >= 1000 and size <= 9000
end
t.ok(all_in_range, "sizes within the range: " .. table.concat(sizes, " "))
t.ok(next(distinct, next(distinct)) ~= nil, "sizes vary within the range")

local get = conn:bench { op = "get", from = put, ops = 200, threads = 8 }
t.eq(get.ops, 200, "get: 200 ops")
t.eq(get.errors, 0, "get: no errors")
t.eq(get.verify_failures, 0, "get: every body verifies")
t.ok(get.ttfb and get.ttfb.count == 200, "get: time to first byte of every op")
t.ok(get.ttfb.p50 <= get.lat.p50, "get: first byte comes before the end")
-- the same through libcurl's multi interface
local curl_get = conn:bench { op = "get", from = put, ops = 100, threads = 4, transport = "curl" }
t.eq(curl_get.transport, "curl", "transport = curl is used")
t.eq(curl_get.ops .. "/" .. curl_get.errors .. "/" .. curl_get.verify_failures, "100/0/0",
  "curl get: 100 ops, no errors, every body verifies")
t.ok(curl_get.ttfb and curl_get.ttfb.count == 100, "curl get: time to first byte of every op")

-- a body that differs from what the put wrote is caught, with the object named
assert(conn:put(C, "bench_3", string.rep("x", conn:head(C, "bench_3").size)))
local bad = conn:bench { op = "get", from = put, ops = 64, threads = 4, random = false }
t.eq(bad.verify_failures, 1, "get: the overwritten object fails verification")
t.match(bad.verify_errors[1] or "", "bench_3", "verify error names the object")

local heads = conn:bench { op = "head", from = put, ops = 32, threads = 4 }
t.eq(heads.errors, 0, "head: no errors")

local zero = conn:bench { op = "put", container = C, objects = 16, size = 0, threads = 4, prefix = "zero" }
t.eq(zero.errors, 0, "put of size 0: no errors")
local zero_get = conn:bench { op = "get", from = zero, ops = 16, threads = 4 }
t.eq(zero_get.errors + zero_get.verify_failures, 0, "get of size 0 verifies")
t.eq(conn:bench { op = "delete", from = zero, threads = 4 }.ops, 16, "delete size-0 objects")

local del = conn:bench { op = "delete", from = put, threads = 8 }
t.eq(del.ops, 64, "delete: every object")
t.eq(#conn:list(C, { prefix = "bench_" }), 0, "no bench object left")

-- the same objects again: they are gone, so every GET is a 404, counted by status
local gone = conn:bench { op = "get", from = put, ops = 20, threads = 4 }
t.eq(gone.errors, 20, "get of deleted objects: all fail")
t.eq(#gone.http_errors, 1, "one kind of HTTP error")
t.eq(gone.http_errors[1] and gone.http_errors[1].status, 404, "counted under 404")
t.eq(gone.http_errors[1] and gone.http_errors[1].count, 20, "20 of them")
t.match(gone.first_error or "", "404 Not Found", "first_error says 404")

-- a missing container in a bench: 404s, not a crash or a hang
local missing = conn:bench { op = "put", container = "cephmark-no-such-container", objects = 10, threads = 2 }
t.eq(missing.errors, 10, "put into a missing container: every op fails")
t.eq(missing.http_errors[1] and missing.http_errors[1].status, 404, "as 404")

-- ---- misuse raises, naming the option ------------------------------------------------------
t.raises(function() conn:bench { op = "put", container = C, size = { "8K", "1K" }, objects = 1 } end,
  "the low end is above the high end", "size range low > high")
t.raises(function() conn:bench { op = "get", container = C } end, "needs objects", "get without objects")
t.raises(function() conn:bench { op = "put", container = C, threds = 4 } end, "unknown option 'threds'",
  "a typo in an option")
t.raises(function() conn:bench { op = "fly", container = C } end,
  "unknown op 'fly' %(expected put, get, head, delete, list or mixed%)", "unknown op: the choices from the option table")
t.raises(function() conn:bench { op = "get", container = C, objects = 1, transport = "tcp" } end,
  "unknown transport 'tcp' %(expected auto, curl or native%)", "unknown transport")
t.raises(function() conn:bench { op = "get", objects = 1 } end, "which container", "get: no container")
t.raises(function() swift.connect { auth_url = creds.auth_url, user = creds.user } end, "key is missing",
  "connect without a key")

-- ---- clean up ------------------------------------------------------------------------------
t.eq(conn:delete(C, "dir/one two"), true, "delete object")
t.eq(conn:delete(C, "empty"), true, "delete empty object")
t.eq(conn:delete_container(C), true, "delete the container")
value, err, code = conn:delete_container(C)
t.eq(code, 404, "delete it again: 404")
conn:close()
t.raises(function() conn:info() end, "connection is closed", "a closed connection")

-- ---- a wrong key: one clear auth error, at once --------------------------------------------
local started = sys.monotonic()
local nothing, auth_err, auth_code = swift.connect { auth_url = creds.auth_url, user = creds.user,
  key = "wrong-" .. creds.key, timeout = 10 }
t.eq(nothing, nil, "wrong key: no connection")
t.eq(auth_code, -13, "wrong key: -EACCES")
t.match(auth_err, "401 Unauthorized %(wrong user or key%?%)", "wrong key: the message says why")
t.ok(not shows_secret(auth_err), "wrong key: the message has no key")
t.ok(sys.monotonic() - started < 3, "wrong key: fails at once")

-- ---- an endpoint that cannot be reached: an error within the timeout -------------------------
local port = sys.free_port()
started = sys.monotonic()
nothing, err, code = swift.connect { auth_url = "http://127.0.0.1:" .. port .. "/auth/v1.0",
  user = "u", key = "k", timeout = 2 }
t.eq(nothing, nil, "closed port: no connection")
t.eq(code, -111, "closed port: -ECONNREFUSED")
t.match(err, "cannot reach http://127.0.0.1:" .. port .. "/auth/v1.0", "closed port: the message")
t.ok(sys.monotonic() - started < 3, "closed port: fails within the timeout")

-- ---- a storage URL that refuses connections during a bench: errors, but no storm -------------
-- (a slot waits 100 ms, then 200, 400, ... before its next connect; 8 slots for 1.5 s make
-- a few errors each, not thousands)
local down = assert(swift.connect { auth_url = creds.auth_url, user = creds.user, key = creds.key,
  storage_url = "http://127.0.0.1:" .. port .. "/swift/v1", timeout = 2 })
for _, transport in ipairs { "native", "curl" } do
  local r = down:bench { op = "get", container = C, objects = 10, threads = 8, seconds = 1.5, transport = transport }
  t.ok(r.errors >= 8 and r.errors <= 48, transport .. ": refused connects back off: " .. r.errors .. " errors in 1.5 s")
  t.eq(r.transport_errors, r.errors, transport .. ": counted as requests without an answer")
  t.eq(r.ops, 0, transport .. ": nothing succeeded")
end
down:close()

return t.done()
