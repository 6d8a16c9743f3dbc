-- A Swift key that changes during a run, against the local cluster's radosgw: the token the
-- run holds stops working (401), cephmark re-authenticates once with the key it has, is
-- refused, and stops the run with one auth error, instead of retrying every request. A
-- throwaway rgw user of its own is made (and purged) so the cluster's user is untouched.
local swift = require "cephmark.swift"
local json = require "cephmark.json"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local conf = assert(os.getenv("CEPH_CONF"), "CEPH_CONF must name the test cluster's ceph.conf")
local dir = conf:match("^(.*)/[^/]*$")
local uid = "cmtest-reauth-" .. sys.getpid()
local subuser = uid .. ":swift"

local function admin(...)
  local argv = { "radosgw-admin", "-c", conf, "-n", "client.admin", "--log-file", "/dev/null", ... }
  local result = assert(sys.run(argv, { timeout = 60 }))
  assert(result.status == 0, "radosgw-admin " .. table.concat({ ... }, " ") .. ": " .. result.stderr)
  return json.decode(result.stdout)
end

local function swift_key(user)
  for _, key in ipairs(user.swift_keys or {}) do
    if key.user == subuser then return key.secret_key end
  end
end

admin("user", "create", "--uid", uid, "--display-name", "cephmark reauth test")
local user = admin("subuser", "create", "--uid", uid, "--subuser", subuser, "--access", "full",
  "--key-type", "swift", "--gen-secret")
local key = assert(swift_key(user), "the subuser's swift key")
local ini = sys.read_file(dir .. "/credentials.conf")
local auth_url = assert(ini and ini:match("auth_url = (%S+)"), "the cluster's auth URL")

local ok, err = pcall(function()
  local conn = assert(swift.connect { auth_url = auth_url, user = subuser, key = key, timeout = 10 })
  t.eq(conn:info().auth_requests, 1, "one auth request to connect")
  assert(conn:create_container("reauth"))
  local put = conn:bench { op = "put", container = "reauth", objects = 40, threads = 4 }
  t.eq(put.errors, 0, "put with the first token")

  -- the key changes after the first second: the token stops working
  local changed = false
  local started = sys.monotonic()
  local get = conn:bench { op = "get", from = put, seconds = 20, threads = 4, on_second = function()
    if not changed then
      changed = true
      admin("key", "create", "--subuser", subuser, "--key-type", "swift", "--gen-secret")
    end
  end }
  local elapsed = sys.monotonic() - started
  t.ok(changed, "the key was changed during the run")
  t.eq(get.reauths, 1, "one re-authentication")
  t.ok(get.auth_error ~= nil, "the run says why it stopped")
  t.match(get.auth_error or "", "401 Unauthorized", "the auth error is the refusal")
  t.ok(not (get.auth_error or ""):find(key, 1, true), "the auth error has no key")
  t.ok(elapsed < 10, string.format("the run stopped early (%.1f s of 20)", elapsed))
  local unauthorized = 0
  for _, e in ipairs(get.http_errors) do
    if e.status == 401 then unauthorized = e.count end
  end
  t.ok(unauthorized >= 1 and unauthorized <= 8,
    "a few 401s (the requests in flight), not a storm: " .. unauthorized)
  t.eq(conn:info().auth_requests, 2, "two auth requests in all")
  conn:close()
end)
t.ok(ok, "the run: " .. tostring(err))
admin("user", "rm", "--uid", uid, "--purge-data")
return t.done()
