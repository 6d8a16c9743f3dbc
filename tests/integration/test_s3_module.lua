-- cephmark.s3 against the local cluster's radosgw: SigV4 requests signed by libcurl,
-- path-style; buckets (create, list, delete), objects (put, get, head, delete, size 0), a
-- listing of more than one page (1000 keys), conn:bench put/get/delete with verified
-- payloads, errors by HTTP status (NoSuchBucket), a wrong secret (one clear 403, no retry),
-- an unreachable endpoint, and a size range with low > high.
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

local data = conn:bench { op = "put", bucket = B, objects = 50, size = { "1K", "16K" }, threads = 8 }
t.eq(data.errors, 0, "put a size range")
local get = conn:bench { op = "get", from = data, ops = 150, threads = 8 }
t.eq(get.transport, "curl", "S3 runs over libcurl (SigV4 signing)")
t.raises(function() conn:bench { op = "get", from = data, ops = 1, transport = "native" } end,
  "transport \"native\" cannot serve this endpoint: it speaks Swift only", "no native transport for S3")
t.eq(get.errors, 0, "get: no errors")
t.eq(get.verify_failures, 0, "get: verified")
t.ok(get.ttfb and get.ttfb.count == 150, "get: time to first byte")
t.eq(conn:bench { op = "delete", from = data, threads = 8 }.errors, 0, "delete")

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
local refused = wrong:bench { op = "put", bucket = B, objects = 8, threads = 2 }
t.eq(refused.errors, 8, "wrong secret in a bench: counted as errors")
t.eq(refused.http_errors[1] and refused.http_errors[1].status, 403, "as 403")

-- unreachable: a closed port answers at once with a clear error
local port = sys.free_port()
local closed = assert(s3.connect { endpoint = "http://127.0.0.1:" .. port, access_key = "a",
  secret_key = "b", timeout = 2 })
local started = sys.monotonic()
value, err, code = closed:list_buckets()
t.eq(code, -111, "closed port: -ECONNREFUSED")
t.match(err, "http://127.0.0.1:" .. port, "closed port: the URL in the message")
t.ok(sys.monotonic() - started < 3, "closed port: fails within the timeout")
t.raises(function() s3.connect { endpoint = "127.0.0.1:80", access_key = "a", secret_key = "b" } end,
  "must be an http:// or https:// URL", "an endpoint without a scheme")

return t.done()
