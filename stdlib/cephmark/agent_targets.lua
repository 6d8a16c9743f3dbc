-- What a phase runs on, carried to the agents of a multi-client run: the coordinator turns
-- a phase's target (a pool, an rbd image, a Swift or S3 connection, the disk, socket or
-- null module) into a plain description that travels in the prepare message; each agent
-- turns it back into a target of its own (opens the pool or the image, connects to the
-- gateway, checks the file's folder or the peer's port) at the prepare barrier, so that a
-- target an agent cannot open is reported, per agent, before the phase starts. Also the
-- per-host attributes (`cephmark agent --attr key=value`): the "{agent.KEY}" strings a
-- scenario writes in a phase's options, resolved on each agent, and the checks the
-- coordinator makes with them before a phase. docs/distributed.md describes all of it.

local sys = require "cephmark.sys"

local M = {}

-- The kinds of target the agents can open.
M.KINDS = { pool = true, image = true, swift = true, s3 = true, disk = true, socket = true, null = true }

-- Attribute names: what `--attr key=value` accepts, and what "{agent.KEY}" names.
M.KEY_PATTERN = "^[%a_][%w_]*$"

-- The attributes every agent has without --attr.
local builtin = { name = true, host = true }

-- parse_attr("rgw=http://10.0.0.5:8080") -> key, value | nil, message
function M.parse_attr(text)
  local key, value = tostring(text):match("^([^=]*)=(.*)$")
  if not key then return nil, string.format("--attr expects key=value, got '%s'", tostring(text)) end
  if not key:match(M.KEY_PATTERN) or #key > 64 then
    return nil, string.format(
      "--attr: the key must be a letter or '_' then letters, digits or '_' (at most 64), got '%s'", key)
  end
  if builtin[key] then
    return nil, string.format("--attr: '%s' is every agent's own (its name and host); choose another key", key)
  end
  if value == "" then return nil, string.format("--attr %s= has no value", key) end
  return key, value
end

-- "{agent.KEY}", and "{agent.KEY#N}": the N-th of KEY's comma-separated values (an agent
-- with fewer values takes them in turn: with two, #3 is the first again).
local REFERENCE = "{agent%.([%w_]+)#?(%d*)}"

-- The values of an attribute given as a comma-separated list (blanks around them dropped).
function M.values(text)
  local list = {}
  for item in (tostring(text) .. ","):gmatch("([^,]*),") do
    item = item:match("^%s*(.-)%s*$")
    if item ~= "" then list[#list + 1] = item end
  end
  return list
end

-- The "{agent.KEY}" and "{agent}" an option value (a string or a table of them) names.
local function each_reference(value, fn, seen)
  if type(value) == "string" then
    for key in value:gmatch(REFERENCE) do fn(key) end
    if value:find("{agent}", 1, true) then fn("name") end
  elseif type(value) == "table" then
    seen = seen or {}
    if seen[value] then return end
    seen[value] = true
    for _, v in pairs(value) do each_reference(v, fn, seen) end
  end
end

-- needed(value, ...) -> sorted list of the attribute keys the values name (without name
-- and host, which every agent has)
function M.needed(...)
  local set, list = {}, {}
  for i = 1, select("#", ...) do
    each_reference(select(i, ...), function(key)
      if not builtin[key] and not set[key] then
        set[key] = true
        list[#list + 1] = key
      end
    end)
  end
  table.sort(list)
  return list
end

-- The attributes of a registration (or of the agent itself): its --attr ones plus name
-- and host.
function M.attributes(name, registration)
  local attrs = {}
  for k, v in pairs(type(registration.attrs) == "table" and registration.attrs or {}) do attrs[k] = v end
  attrs.name, attrs.host = name, registration.host
  return attrs
end

-- resolve(value, attrs) -> the value with each "{agent.KEY}" and "{agent}" replaced from
-- attrs (tables copied); raises naming the first attribute missing.
function M.resolve(value, attrs)
  if type(value) == "string" then
    local missing
    local out = value:gsub(REFERENCE, function(key, index)
      if attrs[key] == nil then missing = missing or key; return nil end
      if index == "" then return tostring(attrs[key]) end
      local list = M.values(attrs[key])
      if #list == 0 then missing = missing or key; return nil end
      return list[(tonumber(index) - 1) % #list + 1]
    end)
    out = out:gsub("{agent}", function() return tostring(attrs.name) end)
    if missing then
      error(string.format("no attribute '%s' (start the agent with --attr %s=VALUE)", missing, missing), 0)
    end
    return out
  elseif type(value) == "table" then
    local out = {}
    for k, v in pairs(value) do out[k] = M.resolve(v, attrs) end
    return setmetatable(out, getmetatable(value))
  end
  return value
end

-- The name each agent's image gets: per_agent is "own" (the default: "<image>-{agent}"), a
-- template with "{agent}" or "{agent.KEY}", or "shared" (the scenario's image itself).
function M.image_template(per_agent, image)
  if per_agent == nil or per_agent == "own" then return image .. "-{agent}" end
  if per_agent == "shared" then return image end
  return per_agent
end

-- check_per_agent(value) -> nil | message: what s:phase refuses in per_agent =
function M.check_per_agent(value)
  if value == nil or value == "own" or value == "shared" then return nil end
  if type(value) ~= "string" then
    return "per_agent must be \"own\", \"shared\" or an image name template with {agent}, got a " .. type(value)
  end
  if #M.needed(value) == 0 and not value:find("{agent}", 1, true) and not value:find("{agent.name}", 1, true) and
    not value:find("{agent.host}", 1, true) then
    return string.format("per_agent = '%s' names the same image for every agent: give a template with {agent} "
      .. "(or {agent.KEY}), or per_agent = \"shared\"", value)
  end
  return nil
end

-- The name of an agent's own container or bucket, from the one a phase names: the name,
-- then the agent's name in the letters an S3 bucket name allows ("bench" -> "bench-a1").
function M.own_container(name, agent)
  return name .. "-" .. (tostring(agent):lower():gsub("[^a-z0-9.-]", "-"))
end

-- The origin (scheme://host[:port]) of a URL, and the URL with its origin replaced.
local function origin(url) return tostring(url):match("^(%a[%w+.-]*://[^/]+)") end
M.origin = origin
local function with_origin(url, new_origin)
  local old = origin(url)
  if not old then return url end
  return new_origin:gsub("/+$", "") .. url:sub(#old + 1)
end

-- describe(kind, target, extra) -> a plain description of the target, or nil, why not.
-- extra: per_agent (images), endpoint (Swift/S3: a URL or a list spread over the agents),
-- peer (socket: a netserver's HOST[:PORT] or a list spread over the agents).
function M.describe(kind, target, extra)
  extra = extra or {}
  if kind == "pool" then return { kind = "pool", pool = target:name() } end
  if kind == "image" then
    local info, err = target:info()
    if not info then return nil, "cannot read the image's info: " .. tostring(err) end
    return { kind = "image", pool = info.pool, image = M.image_template(extra.per_agent, info.name),
      shared = extra.per_agent == "shared" }
  end
  if kind == "swift" or kind == "s3" then
    local description = target:connect_options()
    description.kind = kind
    description.api = nil
    if extra.endpoint ~= nil then description.endpoints = extra.endpoint end
    return description
  end
  if kind == "socket" then return { kind = kind, endpoints = extra.peer } end
  if kind == "disk" or kind == "null" then return { kind = kind } end
  return nil, "its target cannot be sent to agents"
end

-- The endpoint (an origin) agent number `index` (1-based, in the run's order) uses, from a
-- description's `endpoints` (one URL, or a list spread round-robin); nil: the connection's.
function M.endpoint_for(description, index)
  local endpoints = description.endpoints
  if type(endpoints) == "table" then
    if #endpoints == 0 then return nil end
    return endpoints[(index - 1) % #endpoints + 1]
  end
  return endpoints
end

-- The connect options of a Swift/S3 description for one agent, its endpoint applied.
function M.connect_options(description, endpoint)
  local options = {}
  for k, v in pairs(description) do
    if k ~= "kind" and k ~= "endpoints" and k ~= "use_endpoint" then options[k] = v end
  end
  if endpoint then
    if description.kind == "swift" then
      options.auth_url = with_origin(options.auth_url, endpoint)
      if options.storage_url then options.storage_url = with_origin(options.storage_url, endpoint) end
    else
      options.endpoint = with_origin(options.endpoint, endpoint)
    end
  end
  return options
end

-- "host", "host:port" or "[v6 address]:port" -> host, port (nil when not given)
function M.parse_peer(peer)
  local host, port = peer:match("^%[(.+)%]:(%d+)$")
  if not host then host, port = peer:match("^([^:]+):(%d+)$") end
  if not host then host = peer:match("^%[(.+)%]$") or peer end
  return host, tonumber(port)
end

-- The directory of a path ("." for a bare name).
local function folder(path) return path:match("^(.*)/[^/]*$") or "." end

-- open(cluster, description, options, cache) -> target | nil, message: the agent's side.
-- cache holds what earlier phases of the run opened (pools, images, connections), keyed by
-- what they are, so that a run opens each once; the agent closes them when the run ends.
function M.open(cluster, description, options, cache)
  local kind = description.kind
  local function cached(key, make)
    if cache[key] then return cache[key].handle end
    local handle, err = make()
    if not handle then return nil, err end
    cache[key] = { handle = handle, kind = key:match("^(%a+)") }
    return handle
  end
  -- A pool is looked up by name in this client's osdmap, which an idle agent may hold from
  -- before the coordinator deleted the pool and made it again under the same name (a
  -- scenario run twice): the name would resolve to the deleted pool, and the phase's first
  -- op fail with ENOENT. So the map is brought up to date before a pool is first opened.
  local function open_pool(name)
    return cached("pool:" .. name, function()
      cluster:wait_for_latest_osdmap()
      return cluster:pool(name)
    end)
  end
  if kind == "pool" then
    return open_pool(description.pool)
  elseif kind == "image" then
    local pool, err = open_pool(description.pool)
    if not pool then return nil, err end
    return cached("image:" .. description.pool .. "/" .. description.image, function()
      local image, open_err = require("cephmark.rbd").open(pool, description.image)
      if not image then return nil, string.format("cannot open image %s/%s: %s", description.pool, description.image,
        tostring(open_err)) end
      return image
    end)
  elseif kind == "swift" or kind == "s3" then
    local connect = M.connect_options(description, description.use_endpoint)
    local key = kind .. ":" .. tostring(connect.auth_url or connect.endpoint) .. ":" .. tostring(connect.user or
      connect.access_key)
    return cached(key, function()
      local conn, err = require("cephmark." .. kind).connect(connect)
      if not conn then
        return nil, string.format("cannot connect to %s: %s", tostring(connect.auth_url or connect.endpoint),
          tostring(err))
      end
      return conn
    end)
  elseif kind == "disk" then
    local path = options.path
    if type(path) ~= "string" or path == "" then return nil, "a disk phase needs path =" end
    local dir = sys.stat(folder(path))
    if not dir or dir.type ~= "dir" then
      return nil, string.format("no folder %s on this host for %s", folder(path), path)
    end
    return require "cephmark.disk"
  elseif kind == "socket" then
    if description.use_endpoint then
      -- this agent's peer of the phase's list (peer =): its host and port replace the options'
      local peer_host, peer_port = M.parse_peer(description.use_endpoint)
      options.host, options.port = peer_host, peer_port or options.port
    end
    local host, port = options.host, tonumber(options.port) or 5301
    if type(host) ~= "string" or host == "" then return nil, "a socket phase needs host =" end
    -- (an address only: a host name is left to the bench's own connect, which says why)
    local checked, open = pcall(sys.port_open, port, host)
    if checked and not open then
      return nil, string.format("cannot connect to %s:%d (is `cephmark netserver` running there?)", host, port)
    end
    return require "cephmark.socket"
  elseif kind == "null" then
    return require "cephmark.null"
  end
  return nil, "unknown target kind " .. tostring(kind)
end

-- Closes the image "pool/name" if open cached it.
function M.close_image(cache, image)
  local entry = cache["image:" .. tostring(image)]
  if entry then
    pcall(entry.handle.close, entry.handle)
    cache["image:" .. image] = nil
  end
end

-- Closes what open cached, images before their pools.
function M.close_all(cache)
  for _, order in ipairs { "image", "swift", "s3", "pool" } do
    for key, entry in pairs(cache) do
      if entry.kind == order then
        pcall(entry.handle.close, entry.handle)
        cache[key] = nil
      end
    end
  end
end

return M
