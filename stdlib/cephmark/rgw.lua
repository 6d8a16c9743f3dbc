-- cephmark.rgw: where the object-gateway credentials come from, and connecting with them.
-- Swift: explicit values > a config file ([bench] of swift-bench, or [swift] of cephmark's
-- credentials file) > ST_AUTH / ST_USER / ST_KEY > the local cluster's credentials file.
-- S3: explicit values > a config file ([s3]) > AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
-- AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL, S3_ENDPOINT) / AWS_REGION > the local cluster's
-- credentials file. The local cluster's file is found through CEPHMARK_CREDENTIALS (set by
-- `cephmark cluster env`), next to $CEPH_CONF, or in the default cluster folder.
-- Keys and secrets are handed to the C modules and never printed or returned in results:
-- `describe` says where credentials came from without showing them.
-- Also radosgw-admin from Lua (bucket index shards), and removing the containers a run made
-- with whatever they still hold (remove_containers: scenarios' and agents' cleanup), and the
-- names of the containers phases work in, also on agents (containers_of).

local sys = require "cephmark.sys"

local M = {}

-- An INI file as { section = { key = value } } (keys lower-cased, "key = value" or
-- "key: value", '#' and ';' start comment lines). Raises a one-line error naming the file
-- and line of anything else.
function M.read_ini(path)
  local text, err = sys.read_file(path)
  if not text then sys.fail(string.format("cannot read the config file %s: %s", path, tostring(err))) end
  local sections, current, number = {}, nil, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    number = number + 1
    local stripped = line:gsub("\r$", ""):match("^%s*(.-)%s*$")
    if stripped ~= "" and not stripped:match("^[#;]") then
      local section = stripped:match("^%[%s*(.-)%s*%]$")
      if section then
        current = section:lower()
        sections[current] = sections[current] or {}
      else
        local key, value = stripped:match("^([^=:]-)%s*[=:]%s*(.*)$")
        if not key or key == "" then
          sys.fail(string.format("%s:%d: expected 'key = value' or '[section]', got '%s'", path, number,
            stripped))
        end
        if not current then
          sys.fail(string.format("%s:%d: '%s' comes before any [section]", path, number, key))
        end
        sections[current][key:lower()] = value
      end
    end
  end
  return sections
end

local function env(name)
  local value = os.getenv(name)
  if value and value ~= "" then return value end
end

local function dirname(path) return path:match("^(.*)/[^/]*$") or "." end

-- The local cluster's credentials file, or nil.
function M.cluster_credentials_file()
  local explicit = env("CEPHMARK_CREDENTIALS")
  if explicit then
    if not sys.stat(explicit) then
      sys.fail(string.format("CEPHMARK_CREDENTIALS names %s, which does not exist", explicit))
    end
    return explicit
  end
  local conf = env("CEPH_CONF")
  if conf then
    local beside = dirname(conf) .. "/credentials.conf"
    if sys.stat(beside) then return beside end
  end
  local ok, cluster = pcall(require, "cephmark.cluster")
  if ok then
    local info = cluster.info {}
    if info and info.rgw and sys.stat(info.rgw.credentials) then return info.rgw.credentials end
  end
end

local function first(...)
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if v ~= nil and v ~= "" then return v end
  end
end

-- swift_credentials{auth=, user=, key=, storage_url=, config=FILE} ->
--   {auth_url=, user=, key=, storage_url=}, source (a sentence without secrets)
function M.swift_credentials(opts)
  opts = opts or {}
  local file = {}
  if opts.config then
    local ini = M.read_ini(opts.config)
    local bench, swift = ini.bench or {}, ini.swift or {}
    file = { auth = first(bench.auth, swift.auth_url, swift.auth), user = first(bench.user, swift.user),
      key = first(bench.key, swift.key), url = first(bench.url, swift.storage_url) }
  end
  local creds = {
    auth_url = first(opts.auth, file.auth, env("ST_AUTH")),
    user = first(opts.user, file.user, env("ST_USER")),
    key = first(opts.key, file.key, env("ST_KEY")),
    storage_url = first(opts.storage_url, file.url),
  }
  local source = opts.config and ("config file " .. opts.config) or "command line / environment"
  if not creds.auth_url and not creds.user and not creds.key then
    local path = M.cluster_credentials_file()
    if path then
      local swift = M.read_ini(path).swift or {}
      creds = { auth_url = swift.auth_url, user = swift.user, key = swift.key }
      source = "the local cluster's credentials (" .. path .. ")"
    end
  end
  local missing = {}
  if not creds.auth_url then missing[#missing + 1] = "the auth URL" end
  if not creds.user then missing[#missing + 1] = "the user" end
  if not creds.key then missing[#missing + 1] = "the key" end
  if #missing > 0 then
    sys.fail(string.format("no Swift credentials: %s missing; give -A URL -U USER -K KEY, a config "
      .. "file with [bench] auth/user/key, ST_AUTH/ST_USER/ST_KEY, or start a local cluster with "
      .. "`cephmark cluster up --rgw`", table.concat(missing, ", ")), sys.EXIT_USAGE)
  end
  return creds, source
end

-- s3_credentials{endpoint=, access_key=, secret_key=, region=, config=FILE} ->
--   {endpoint=, access_key=, secret_key=, region=}, source
function M.s3_credentials(opts)
  opts = opts or {}
  local file = {}
  if opts.config then file = M.read_ini(opts.config).s3 or {} end
  local creds = {
    endpoint = first(opts.endpoint, file.endpoint, env("AWS_ENDPOINT_URL_S3"), env("AWS_ENDPOINT_URL"),
      env("S3_ENDPOINT")),
    access_key = first(opts.access_key, file.access_key, env("AWS_ACCESS_KEY_ID")),
    secret_key = first(opts.secret_key, file.secret_key, env("AWS_SECRET_ACCESS_KEY")),
    region = first(opts.region, file.region, env("AWS_REGION"), env("AWS_DEFAULT_REGION")),
  }
  local source = opts.config and ("config file " .. opts.config) or "command line / environment"
  if not creds.endpoint and not creds.access_key and not creds.secret_key then
    local path = M.cluster_credentials_file()
    if path then
      local s3 = M.read_ini(path).s3 or {}
      creds = { endpoint = s3.endpoint, access_key = s3.access_key, secret_key = s3.secret_key,
        region = creds.region }
      source = "the local cluster's credentials (" .. path .. ")"
    end
  end
  local missing = {}
  if not creds.endpoint then missing[#missing + 1] = "the endpoint" end
  if not creds.access_key then missing[#missing + 1] = "the access key" end
  if not creds.secret_key then missing[#missing + 1] = "the secret key" end
  if #missing > 0 then
    sys.fail(string.format("no S3 credentials: %s missing; give them in a config file's [s3] section "
      .. "(endpoint, access_key, secret_key), as AWS_ENDPOINT_URL / AWS_ACCESS_KEY_ID / "
      .. "AWS_SECRET_ACCESS_KEY, or start a local cluster with `cephmark cluster up --rgw`",
      table.concat(missing, ", ")), sys.EXIT_USAGE)
  end
  return creds, source
end

-- swift_connect{...credential options..., timeout=, connect_timeout=, transport=} -> connection,
-- info. transport is what the connection's scripted workers' requests go over (docs/rgw.md).
-- Raises a one-line error when the gateway refuses or cannot be reached: nothing can go on
-- without it.
function M.swift_connect(opts)
  opts = opts or {}
  local creds, source = M.swift_credentials(opts)
  local swift = require "cephmark.swift"
  local conn, err = swift.connect { auth_url = creds.auth_url, user = creds.user, key = creds.key,
    storage_url = creds.storage_url, timeout = opts.timeout, connect_timeout = opts.connect_timeout,
    transport = opts.transport }
  if not conn then sys.fail(err) end
  return conn, { source = source, auth_url = creds.auth_url, user = creds.user }
end

-- s3_connect{...credential options..., timeout=, connect_timeout=, transport=} -> connection, info
function M.s3_connect(opts)
  opts = opts or {}
  local creds, source = M.s3_credentials(opts)
  local s3 = require "cephmark.s3"
  local conn, err = s3.connect { endpoint = creds.endpoint, access_key = creds.access_key,
    secret_key = creds.secret_key, region = creds.region, timeout = opts.timeout,
    connect_timeout = opts.connect_timeout, transport = opts.transport }
  if not conn then sys.fail(err) end
  return conn, { source = source, endpoint = creds.endpoint }
end

-- radosgw-admin ARGS... against the cluster this run uses (its conf and keyring, as the
-- rados module's defaults say) -> the decoded JSON it printed, or nil, a one-line message.
-- Needs a keyring allowed to read rgw's pools (the admin's, on the local cluster).
function M.admin(args)
  local json = require "cephmark.json"
  local defaults = require("cephmark.rados").defaults or {}
  local argv = { "radosgw-admin" }
  if defaults.conf then argv[#argv + 1] = "-c"; argv[#argv + 1] = defaults.conf end
  if defaults.keyring then argv[#argv + 1] = "--keyring"; argv[#argv + 1] = defaults.keyring end
  argv[#argv + 1] = "-n"
  argv[#argv + 1] = "client." .. (defaults.id or "admin")
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  local result, err = sys.run(argv, { timeout = 60 })
  if not result then return nil, "cannot run radosgw-admin: " .. tostring(err) end
  if result.status ~= 0 then
    local line = result.stderr:gsub("%s+$", ""):match("([^\n]*)$")
    return nil, string.format("radosgw-admin %s failed: %s", table.concat(args, " "), line)
  end
  local ok, decoded = pcall(json.decode, result.stdout ~= "" and result.stdout or "null")
  if not ok then return nil, "radosgw-admin " .. table.concat(args, " ") .. ": not JSON" end
  return decoded
end

-- index_shards(names) -> { [name] = shards, ... }, or nil and a message: the bucket index
-- shard count of each bucket (a Swift container is a bucket of the same name), from
-- `radosgw-admin bucket stats --bucket=NAME`'s num_shards (radosgw's bucket instance).
function M.index_shards(names)
  local shards = {}
  for _, name in ipairs(names) do
    local stats, err = M.admin { "bucket", "stats", "--bucket=" .. name }
    if not stats then return nil, err end
    if type(stats) ~= "table" or math.type(stats.num_shards) ~= "integer" then
      return nil, "radosgw-admin bucket stats --bucket=" .. name .. " gave no num_shards"
    end
    shards[name] = stats.num_shards
  end
  return shards
end

-- containers_of(s, names) -> the containers (S3 buckets) that phases naming `names` work
-- in: the names themselves, or with --agents each agent's own (agent_targets.own_container:
-- "bench" -> "bench-a1"), agent by agent. A scenario makes them itself when they need a
-- placement (a LocationConstraint or storage policy), since an agent makes a missing one of
-- its own in the default placement; it lists them for index shards and removes them.
function M.containers_of(s, names)
  local agents = s:agents()
  if not agents then return names end
  local own = require("cephmark.agent_targets").own_container
  local out = {}
  for _, agent in ipairs(agents) do
    for _, name in ipairs(names) do out[#out + 1] = own(name, agent.name) end
  end
  return out
end

-- remove_containers(conn, names) -> objects removed, first error | nil: removes the
-- containers (S3 buckets) a run made, with every object still in them, so that a run that
-- ended before its delete phase (an error, Ctrl-C) leaves nothing behind. Only for names the
-- caller made: every object in them is then the run's. A container that is gone already is
-- no error; one that cannot be emptied or removed is left, and the first message says why.
function M.remove_containers(conn, names)
  local s3 = conn.delete_bucket ~= nil
  local remove = s3 and conn.delete_bucket or conn.delete_container
  local removed, first_err = 0, nil
  local function note(err) first_err = first_err or tostring(err) end
  for _, name in ipairs(names) do
    local objects, err, code = conn:list(name)
    if objects then
      for _, object in ipairs(objects) do
        local ok, delete_err, delete_code = conn:delete(name, object)
        if ok or delete_code == 404 then removed = removed + (ok and 1 or 0) else note(delete_err) end
      end
      local ok, remove_err, remove_code = remove(conn, name)
      if not ok and remove_code ~= 404 then note(remove_err) end
    elseif code ~= 404 then
      note(err)
    end
  end
  return removed, first_err
end

-- "404 Not Found x3, 503 Service Unavailable x1" from a bench result's http_errors, plus
-- requests that got no answer; "" when there were none.
function M.error_summary(result)
  local parts = {}
  for _, e in ipairs(result.http_errors or {}) do
    parts[#parts + 1] = string.format("%d %s x%d", e.status, e.reason ~= "" and e.reason or "", e.count)
  end
  if (result.transport_errors or 0) > 0 then
    parts[#parts + 1] = string.format("no answer x%d", result.transport_errors)
  end
  return table.concat(parts, ", ")
end

return M
