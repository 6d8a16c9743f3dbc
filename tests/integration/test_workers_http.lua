-- Scripted workers on the local cluster's radosgw, through Swift and S3: conn:put, get,
-- head and delete inside workers go through the HTTP target's per-request submit on the
-- engine's loop (over plain http the native transport, S3 signed by cephmark's SigV4), are
-- counted like a native phase's ops (kinds, bytes, one latency entry per op), and return what
-- the blocking calls return, failures included (a wrong S3 secret: 403 SignatureDoesNotMatch);
-- an S3 connection made with transport = "curl" sends its workers' requests through libcurl
-- (which signs them itself) instead; only the test's own containers and buckets are touched.
local rgw = require "cephmark.rgw"
local swift = require "cephmark.swift"
local s3 = require "cephmark.s3"
local sys = require "cephmark.sys"
local workers = require "cephmark.workers"
local t = require "cephmark.test"

local N, PER, SIZE = 4, 5, 3000

local function exercise(api, conn, container, create, delete, list_all)
  local before = #list_all(conn)
  assert(create(conn, container))
  local mismatches, heads = 0, 0
  local r = workers.run { n = N, fn = function(w)
    for i = 1, PER do
      local name = string.format("w%d/%d", w.id, i)
      assert(conn:put(container, name, string.rep(string.char(64 + w.id), SIZE + i)))
    end
    for i = 1, PER do
      local name = string.format("w%d/%d", w.id, i)
      if conn:get(container, name) ~= string.rep(string.char(64 + w.id), SIZE + i) then
        mismatches = mismatches + 1
      end
      local info = assert(conn:head(container, name))
      if info.size == SIZE + i and #info.etag == 32 then heads = heads + 1 end
    end
    for i = 1, PER do assert(conn:delete(container, string.format("w%d/%d", w.id, i))) end
  end }
  local bytes = 0
  for i = 1, PER do bytes = bytes + 2 * N * (SIZE + i) end
  t.eq(r.errors, 0, api .. ": no failed ops")
  t.eq(r.ops, 4 * N * PER, api .. ": every call was one op")
  t.eq(r.writes, N * PER, api .. ": puts counted as writes")
  t.eq(r.reads, N * PER, api .. ": gets counted as reads")
  t.eq(r.bytes, bytes, api .. ": bytes of every put and get")
  t.eq(r.lat.count, 4 * N * PER, api .. ": one latency per op")
  t.eq(mismatches, 0, api .. ": gets return what the workers put")
  t.eq(heads, N * PER, api .. ": heads give the size and etag")
  t.eq(#conn:list(container), 0, api .. ": the workers deleted every object")

  -- failures come back as the blocking calls return them, and count as failed ops
  local seen
  local f = workers.run { n = 1, fn = function()
    seen = { conn:get(container, "no-such-object") }
  end }
  t.eq(seen[1], nil, api .. ": a failed get returns nil")
  t.match(seen[2], "^GET object '" .. container:gsub("%-", "%%-") .. "/no%-such%-object': 404",
    api .. ": with the object and status named")
  t.eq(seen[3], 404, api .. ": and the status")
  t.eq(f.errors, 1, api .. ": the failed op is counted")
  t.raises(function() workers.run { n = 1, fn = function()
    conn:head(container, "x")
    conn:close()
  end } end, "scripted workers are using this connection", api .. ": no close inside a phase")

  assert(delete(conn, container))
  t.eq(#list_all(conn), before, api .. ": nothing else changed on the account")
end

local sc = rgw.swift_credentials {}
local conn = assert(swift.connect { auth_url = sc.auth_url, user = sc.user, key = sc.key })
exercise("swift", conn, "cephmark-test-workers-" .. sys.getpid(),
  function(c, name) return c:create_container(name) end,
  function(c, name) return c:delete_container(name) end,
  function(c) return c:list_containers() end)
conn:close()

local creds = rgw.s3_credentials {}
local bucket_conn = assert(s3.connect { endpoint = creds.endpoint, access_key = creds.access_key,
  secret_key = creds.secret_key })
exercise("s3", bucket_conn, "cephmark-test-workers-" .. sys.getpid(),
  function(c, name) return c:create_bucket(name) end,
  function(c, name) return c:delete_bucket(name) end,
  function(c) return c:list_buckets() end)
bucket_conn:close()

-- names that must be percent-encoded are signed as sent (the canonical URI is the encoded path)
local odd_conn = assert(s3.connect { endpoint = creds.endpoint, access_key = creds.access_key,
  secret_key = creds.secret_key })
local odd_bucket = "cephmark-test-workers-odd-" .. sys.getpid()
assert(odd_conn:create_bucket(odd_bucket))
local odd_names = { "a b+c/d=e", "percent%20kept", "caf\xc3\xa9/~x;y" }
local odd = {}
local odd_run = workers.run { n = 1, fn = function()
  for i, name in ipairs(odd_names) do
    odd[#odd + 1] = odd_conn:put(odd_bucket, name, "body " .. i)
    odd[#odd + 1] = odd_conn:get(odd_bucket, name) == "body " .. i
    odd[#odd + 1] = odd_conn:delete(odd_bucket, name)
  end
end }
t.eq(odd_run.errors, 0, "odd names: signed and accepted")
t.eq(#odd, 3 * #odd_names, "odd names: every call answered")
for i = 1, #odd do t.eq(odd[i], true, "odd names: call " .. i) end
assert(odd_conn:delete_bucket(odd_bucket))
odd_conn:close()

-- the same over libcurl, the fallback: transport = "curl" on the connection
local curl_conn = assert(s3.connect { endpoint = creds.endpoint, access_key = creds.access_key,
  secret_key = creds.secret_key, transport = "curl" })
exercise("s3 over curl", curl_conn, "cephmark-test-workers-curl-" .. sys.getpid(),
  function(c, name) return c:create_bucket(name) end,
  function(c, name) return c:delete_bucket(name) end,
  function(c) return c:list_buckets() end)
curl_conn:close()

-- which transport carried a worker's request shows in a refused connect's sentence
local port = sys.free_port()
local refusals = {
  native = "cannot connect %(Connection refused%)",
  curl = "Couldn't connect to server",
}
for transport, sentence in pairs(refusals) do
  local closed = assert(s3.connect { endpoint = "http://127.0.0.1:" .. port, access_key = "a",
    secret_key = "b", timeout = 2, transport = transport })
  local got
  workers.run { n = 1, fn = function() got = { closed:get("b", "o") } end }
  t.eq(got[3], -111, transport .. ": a closed port is refused")
  t.match(got[2], sentence, transport .. ": the worker's request went over " .. transport)
  closed:close()
end
t.raises(function() s3.connect { endpoint = creds.endpoint, access_key = "a", secret_key = "b",
  transport = "tcp" } end, "s3.connect: unknown transport 'tcp' %(expected auto, curl or native%)",
  "an unknown transport")

-- a wrong secret inside a worker: the blocking call's answer, S3's code named
local wrong = assert(s3.connect { endpoint = creds.endpoint, access_key = creds.access_key,
  secret_key = "wrong" .. creds.secret_key })
local answers
local refused = workers.run { n = 1, fn = function()
  answers = { wrong:get("cephmark-test-workers-" .. sys.getpid(), "x") }
end }
t.eq(answers[1], nil, "wrong secret: a worker's get returns nil")
t.match(answers[2], "403 Forbidden %(SignatureDoesNotMatch%)", "wrong secret: S3's code in the message")
t.eq(answers[3], 403, "wrong secret: the status")
t.ok(not tostring(answers[2]):find(creds.secret_key, 1, true), "wrong secret: no key in the message")
t.eq(refused.errors, 1, "wrong secret: one failed op")
wrong:close()
return t.done()
