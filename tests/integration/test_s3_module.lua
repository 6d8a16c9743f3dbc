-- cephmark.s3 against the local cluster's radosgw: SigV4 requests, path-style; buckets
-- (create, list, delete), objects (put, get, head, delete, size 0), a listing of more than
-- one page (1000 keys), conn:bench put/get/head/delete with verified payloads over both
-- transports (native, signed by cephmark, the default on http://; libcurl, signing itself,
-- when asked for and on https://), errors by HTTP status (NoSuchBucket), a wrong secret (one
-- clear 403 SignatureDoesNotMatch, no retry, over both transports), an unreachable
-- endpoint, and a size range with low > high.
local rgw = require "cephmark.rgw"
local s3 = require "cephmark.s3"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local creds = rgw.s3_credentials {}
local conn = assert(s3.connect { endpoint = creds.endpoint, access_key = creds.access_key,
  secret_key = creds.secret_key })
local B = "cephmark-test-s3-" .. sys.getpid()

local function shows_secret(text)
  text = tostring(text)
  return text:find(creds.secret_key, 1, true) ~= nil or text:find(creds.access_key, 1, true) ~= nil
end
t.ok(not shows_secret(tostring(conn)), "tostring has no keys")
for k, v in pairs(conn:info()) do t.ok(not shows_secret(v), "info." .. k .. " has no keys") end

t.eq(conn:create_bucket(B), true, "create bucket")
local found = false
for _, name in ipairs(conn:list_buckets()) do found = found or name == B end
t.ok(found, "list_buckets shows it")
t.eq(conn:put(B, "dir/one two", "hello"), true, "put (a name with / and a space)")
t.eq(conn:get(B, "dir/one two"), "hello", "get")
t.eq(conn:head(B, "dir/one two").size, 5, "head size")
t.eq(conn:put(B, "empty", ""), true, "put size 0")
t.eq(conn:get(B, "empty"), "", "get size 0")
t.eq(#conn:list(B, { prefix = "dir/" }), 1, "list with a prefix")

local value, err, code = conn:get(B, "no-such-key")
t.eq(code, 404, "missing key: 404")
t.match(err, "404 Not Found %(NoSuchKey%)", "missing key: S3's code in the message")
value, err, code = conn:put("cephmark-no-such-bucket", "x", "y")
t.eq(code, 404, "missing bucket: 404")
t.match(err, "NoSuchBucket", "missing bucket: S3's code")

-- more than a page of keys: 1100 objects of size 0 through the bench, listed in full
local put = conn:bench { op = "put", bucket = B, objects = 1100, size = 0, threads = 16, prefix = "k" }
t.eq(put.ops, 1100, "put 1100 objects")
t.eq(put.errors, 0, "put: no errors")
t.eq(#conn:list(B, { prefix = "k_" }), 1100, "list follows continuation tokens")
t.eq(conn:bench { op = "delete", from = put, threads = 16 }.ops, 1100, "delete them")

-- put, get, head and delete through each transport; each reads what the other wrote
local wrote = {}
for _, transport in ipairs { "auto", "native", "curl" } do
  local used = transport == "auto" and "native" or transport
  local data = conn:bench { op = "put", bucket = B, objects = 50, size = { "1K", "16K" }, threads = 8,
    prefix = "t_" .. transport, transport = transport }
  t.eq(data.transport, used, transport .. ": put over " .. used)
  t.eq(data.ops, 50, transport .. ": put 50")
  t.eq(data.errors, 0, transport .. ": put a size range")
  wrote[transport] = data
end
for transport, data in pairs(wrote) do
  local other = transport == "curl" and "native" or "curl"
  local get = conn:bench { op = "get", from = data, ops = 150, threads = 8, transport = other }
  t.eq(get.transport, other, transport .. "'s objects: get over " .. other)
  t.eq(get.ops, 150, other .. ": get 150")
  t.eq(get.errors, 0, other .. ": get: no errors")
  t.eq(get.verify_failures, 0, other .. ": get: verified")
  t.ok(get.ttfb and get.ttfb.count == 150, other .. ": get: time to first byte")
  local head = conn:bench { op = "head", from = data, ops = 60, threads = 4, transport = transport }
  t.eq(head.ops, 60, transport .. ": head 60")
  t.eq(head.errors, 0, transport .. ": head: no errors")
  local gone = conn:bench { op = "delete", from = data, threads = 8, transport = transport }
  t.eq(gone.transport, transport == "auto" and "native" or transport, transport .. ": delete")
  t.eq(gone.ops, 50, transport .. ": delete 50")
  t.eq(gone.errors, 0, transport .. ": delete: no errors")
  t.eq(conn:bench { op = "get", from = data, ops = 5, threads = 1, transport = other }.http_errors[1].status,
    404, transport .. ": deleted objects are gone")
end
t.eq(#conn:list(B, { prefix = "t_" }), 0, "nothing left of the transports' objects")

local missing = conn:bench { op = "get", bucket = "cephmark-no-such-bucket", objects = 5, ops = 10, threads = 2 }
t.eq(missing.errors, 10, "bench on a missing bucket: every op fails")
t.eq(missing.http_errors[1] and missing.http_errors[1].status, 404, "counted under 404")

t.raises(function() conn:bench { op = "put", bucket = B, size = { 4096, 1024 } } end,
  "the low end is above the high end", "size range low > high")

t.eq(conn:delete(B, "dir/one two"), true, "delete object")
t.eq(conn:delete(B, "empty"), true, "delete empty object")
t.eq(conn:delete_bucket(B), true, "delete bucket")
conn:close()

-- a wrong secret: S3 has no auth step, so the first request says it, once
local wrong = assert(s3.connect { endpoint = creds.endpoint, access_key = creds.access_key,
  secret_key = "wrong" .. creds.secret_key })
value, err, code = wrong:list_buckets()
t.eq(code, 403, "wrong secret: 403")
t.match(err, "SignatureDoesNotMatch", "wrong secret: S3's code")
t.ok(not shows_secret(err), "wrong secret: no key in the message")
for _, transport in ipairs { "native", "curl" } do
  local refused = wrong:bench { op = "put", bucket = B, objects = 8, threads = 2, transport = transport }
  t.eq(refused.transport, transport, "wrong secret: over " .. transport)
  t.eq(refused.errors, 8, transport .. ": wrong secret in a bench: counted as errors")
  t.eq(refused.http_errors[1] and refused.http_errors[1].status, 403, transport .. ": as 403")
  t.ok(not shows_secret(refused.first_error), transport .. ": no key in the first error")
end
local refused = wrong:bench { op = "get", bucket = B, objects = 4, ops = 4, threads = 2 }
t.match(refused.first_error, "^GET http://.*: 403 Forbidden %(SignatureDoesNotMatch%)$",
  "native: the first error names S3's code")

-- unreachable: a closed port answers at once with a clear error
local port = sys.free_port()
local closed = assert(s3.connect { endpoint = "http://127.0.0.1:" .. port, access_key = "a",
  secret_key = "b", timeout = 2 })
local started = sys.monotonic()
value, err, code = closed:list_buckets()
t.eq(code, -111, "closed port: -ECONNREFUSED")
t.match(err, "http://127.0.0.1:" .. port, "closed port: the URL in the message")
t.ok(sys.monotonic() - started < 3, "closed port: fails within the timeout")
-- https: libcurl's; the native transport refuses it up front
local tls = assert(s3.connect { endpoint = "https://127.0.0.1:" .. port, access_key = "a",
  secret_key = "b", timeout = 2 })
local over_tls = tls:bench { op = "get", bucket = "b", objects = 1, ops = 1, threads = 1, give_up = 0 }
t.eq(over_tls.transport, "curl", "https: auto picks libcurl")
t.raises(function() tls:bench { op = "get", bucket = "b", objects = 1, ops = 1, transport = "native" } end,
  "transport \"native\" cannot serve this endpoint: the storage URL https://127.0.0.1:%d+ is not plain http://",
  "https: no native transport")
t.raises(function() s3.connect { endpoint = "127.0.0.1:80", access_key = "a", secret_key = "b" } end,
  "must be an http:// or https:// URL", "an endpoint without a scheme")

return t.done()
