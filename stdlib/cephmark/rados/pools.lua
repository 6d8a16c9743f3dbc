-- Pool management for cephmark.rados cluster handles: create and delete replicated and
-- erasure-coded pools, with the placement checks a benchmark needs before it writes.
-- Installed on the cluster type by modules/rados/rados.c; every failure of the cluster comes
-- back as nil, message, code. A pool created here is claimed at once with an owner record
-- (cephmark.rados.owner): of two runs that create the same pool together, exactly one
-- owns it, and the other is told by whom.

local owner = require "cephmark.rados.owner"

-- The handle that keeps the watch on each claimed pool's owner record, per connection, so
-- that the watch lives as long as the connection (or until pool_delete).
local owner_handles = setmetatable({}, { __mode = "k" })

local function command(cluster, cmd)
  local result, status_or_err, code = cluster:mon_command(cmd)
  if result == nil and code then
    return nil, status_or_err, code
  end
  return result == nil and true or result, status_or_err
end

local function positive_integer(value, what)
  if math.type(value) ~= "integer" or value < 1 then
    error(string.format("pool_create: %s must be a positive integer, got %s", what,
      tostring(value)), 3)
  end
  return value
end

-- How many distinct failure domains of a CRUSH bucket type (osd, host, rack, ...) have
-- at least one OSD up; a pool that needs more copies than this can never go active.
local function count_failure_domains(cluster, domain)
  local tree, err, code = command(cluster, { prefix = "osd tree" })
  if not tree then return nil, err, code end
  local up = {}
  for _, node in ipairs(tree.nodes or {}) do
    if node.type == "osd" and node.status == "up" then up[node.id] = true end
  end
  if domain == "osd" then
    local n = 0
    for _ in pairs(up) do n = n + 1 end
    return n
  end
  local n = 0
  for _, node in ipairs(tree.nodes or {}) do
    if node.type == domain then
      local has_up = false
      local function walk(children)
        for _, id in ipairs(children or {}) do
          if up[id] then has_up = true end
          for _, child in ipairs(tree.nodes) do
            if child.id == id and child.children then walk(child.children) end
          end
        end
      end
      walk(node.children)
      if has_up then n = n + 1 end
    end
  end
  return n
end

-- Claims a pool just created (or found): the owner record is created exclusively, so
-- of two runs that both created the pool (the mon's create is idempotent and says
-- "created" to both) only one succeeds. The loser gets the holder's record.
local function claim(cluster, name, record_fields)
  cluster:wait_for_latest_osdmap()
  local pool, err, code = cluster:pool(name)
  if not pool then return nil, err, code end
  local text = owner.format("pool", record_fields)
  -- full_try: a full cluster must not stop the record that lets this pool be removed
  local ok, cerr, ccode = pool:create_exclusive(owner.POOL_OBJECT, text, owner.NAMESPACE, true)
  if not ok then
    local holder
    if ccode == -17 then holder = owner.read_pool_owner(pool) end
    pool:close()
    return nil, cerr, ccode, holder
  end
  -- this process answers other hosts' liveness probes while the connection lives
  pool:watch(owner.POOL_OBJECT, owner.NAMESPACE)
  owner_handles[cluster] = owner_handles[cluster] or {}
  owner_handles[cluster][name] = pool
  return pool
end

local function pool_set(cluster, name, var, value)
  return command(cluster, { prefix = "osd pool set", pool = name, var = var, val = tostring(value) })
end

-- `osd pool create` with the PG autoscaler off from the start: an autoscaler changing
-- pg_num in the middle of a comparison makes it meaningless. Monitors older than the
-- create's autoscale_mode argument refuse it as invalid; they get the create without it
-- (pool_create then sets the mode).
local function create_pool(cluster, create)
  create.autoscale_mode = "off"
  local ok, err, code = command(cluster, create)
  if not ok and code == -22 and not cluster:pool_exists(create.pool) then
    create.autoscale_mode = nil
    ok, err, code = command(cluster, create)
  end
  return ok, err, code
end

-- Size 1 keeps a single copy. The mon refuses it unless the operator has set
-- mon_allow_pool_size_one (cephmark never sets it: that is the operator's decision), and then
-- still wants yes_i_really_mean_it, which a pool spec saying size = 1 does mean.
local function set_size_one(cluster, name)
  local ok, err, code = command(cluster, { prefix = "osd pool set", pool = name, var = "size", val = "1",
    yes_i_really_mean_it = true })
  if not ok and code == -1 then
    return nil, string.format("pool '%s': size 1 is refused by the cluster: it allows one-copy pools only "
      .. "with mon_allow_pool_size_one = true (`ceph config set global mon_allow_pool_size_one true`), "
      .. "which cephmark does not set; use size 2 or more, or set it yourself (Ceph said: %s)", name,
      tostring(err)), code
  end
  return ok, err, code
end

-- Partial overwrites on an erasure-coded pool need allow_ec_overwrites. Pacific's mon
-- allows it only when every OSD of the pool is bluestore, unless the (developer) option
-- mon_debug_no_require_bluestore_for_ec_overwrites is set: the refusal says both.
local function enable_ec_overwrites(cluster, name)
  local ok, err, code = pool_set(cluster, name, "allow_ec_overwrites", "true")
  if ok then return ok end
  return nil, string.format("pool '%s': the cluster refused allow_ec_overwrites (%s); it needs bluestore "
    .. "OSDs (`cephmark cluster up --bluestore` for a local cluster), or on a test cluster "
    .. "`ceph config set mon mon_debug_no_require_bluestore_for_ec_overwrites true`", name, tostring(err)), code
end

return function(methods)
  -- cluster:osd_count() -> number of OSDs up, number in
  function methods:osd_count()
    local stat, err, code = command(self, { prefix = "osd stat" })
    if not stat then return nil, err, code end
    local osdmap = stat.osdmap or stat -- the layout changed across releases
    return osdmap.num_up_osds, osdmap.num_in_osds
  end

  -- cluster:pool_info(name) -> the pool's entry of `osd pool ls detail`, or nil
  function methods:pool_info(name)
    local pools, err, code = command(self, { prefix = "osd pool ls", detail = "detail" })
    if not pools then return nil, err, code end
    for _, pool in ipairs(pools) do
      if pool.pool_name == name then return pool end
    end
    return nil, string.format("pool '%s' does not exist", name), -2
  end

  -- cluster:pool_create{name=, type="replicated"|"erasure", size=, min_size=, pg_num=,
  --   k=, m=, crush_failure_domain="osd"|"host"|..., ec_overwrites=, application="cephmark", owner=}
  --   -> {name=, type=, profile=, profile_created=, owner=, pg_autoscale_mode = "off"}
  --   | nil, message, code [, holder]
  -- The PG autoscaler is off for the pool from its creation.
  -- Refuses, before touching the cluster, a pool its OSDs could never place. The pool is
  -- claimed with an owner record (owner: the record's fields, default this process, with
  -- keep = 1 unless owner says keep = 0: only a pool its creator means to delete becomes a
  -- leftover when the creator dies); a pool another run claimed first gives nil, message,
  -- -16 and that run's record.
  function methods:pool_create(spec)
    if type(spec) ~= "table" then
      error("pool_create: expected a table {name=..., type=...}, got " .. type(spec), 2)
    end
    local name = spec.name
    if type(name) ~= "string" or name == "" then
      error("pool_create: name must be a non-empty string", 2)
    end
    local kind = spec.type or "replicated"
    local pg_num = positive_integer(spec.pg_num or 8, "pg_num")
    -- by default, spread copies the way the cluster's own default rule does
    local domain = spec.crush_failure_domain
    if domain == nil then
      domain = (self:conf_get("osd_crush_chooseleaf_type") == "0") and "osd" or "host"
    end
    if self:pool_exists(name) then
      return nil, string.format("pool '%s' already exists", name), -17
    end
    local domains, err, code = count_failure_domains(self, domain)
    if not domains then return nil, err, code end

    local create = { prefix = "osd pool create", pool = name, pg_num = pg_num, pgp_num = pg_num }
    local fields = {}
    for key, value in pairs(spec.owner or owner.self()) do fields[key] = value end
    fields.pool = name
    -- a pool made through this API is the script's to delete, and never a leftover; a
    -- scenario's owner says keep 0 for the pools it deletes at its end
    if fields.keep == nil then fields.keep = 1 end
    local profile, profile_created
    -- after a successful create, nothing is touched before the claim says the pool is ours
    local function claim_created()
      local handle, cerr, ccode, holder = claim(self, name, fields)
      if handle then return handle end
      if holder then
        return nil, string.format("pool '%s' is being created by another cephmark run (%s)", name,
          owner.describe(holder)), -16, holder
      end
      return nil, string.format("pool '%s': cannot write its owner record: %s", name, tostring(cerr)), ccode
    end
    local handle
    if kind == "replicated" then
      local size = positive_integer(spec.size or 3, "size")
      local min_size = positive_integer(spec.min_size or math.max(1, size - size // 2), "min_size")
      if min_size > size then
        return nil, string.format("pool '%s': min_size %d is larger than size %d", name,
          min_size, size), -22
      end
      if size > domains then
        return nil, string.format(
          "pool '%s': size %d needs %d failure domains of type '%s', the cluster has %d up",
          name, size, size, domain, domains), -22
      end
      create.pool_type = "replicated"
      -- size 1 is set after the create, where the refusal gets its own message
      if size > 1 then create.size = size end
      local ok, cerr, ccode = create_pool(self, create)
      if not ok then return nil, cerr, ccode end
      local holder
      handle, cerr, ccode, holder = claim_created()
      if not handle then return nil, cerr, ccode, holder end
      if size == 1 then
        ok, cerr, ccode = set_size_one(self, name)
      else
        ok, cerr, ccode = pool_set(self, name, "size", size)
      end
      if ok then ok, cerr, ccode = pool_set(self, name, "min_size", min_size) end
      if not ok then
        self:pool_delete(name)
        return nil, cerr, ccode
      end
    elseif kind == "erasure" then
      if spec.k == nil or spec.m == nil then
        error(string.format("pool_create: erasure-coded pool '%s' needs k and m", name), 2)
      end
      local k = positive_integer(spec.k, "k")
      local m = positive_integer(spec.m, "m")
      if k < 2 then
        return nil, string.format("pool '%s': erasure coding needs k >= 2, got %d", name, k), -22
      end
      if k + m > domains then
        return nil, string.format(
          "pool '%s': EC k=%d m=%d needs %d failure domains of type '%s', the cluster has %d up",
          name, k, m, k + m, domain, domains), -22
      end
      profile = spec.profile or ("cephmark_" .. name)
      -- a profile that exists already (the operator's, or another run's) is used as it is
      -- and never removed by this run
      local existing = command(self, { prefix = "osd erasure-code-profile get", name = profile })
      local ok, perr, pcode = true, nil, nil
      if not existing then
        ok, perr, pcode = command(self, {
          prefix = "osd erasure-code-profile set", name = profile,
          profile = { "k=" .. k, "m=" .. m, "crush-failure-domain=" .. domain },
        })
        if not ok then return nil, perr, pcode end
      end
      create.pool_type = "erasure"
      create.erasure_code_profile = profile
      ok, perr, pcode = create_pool(self, create)
      if not ok then
        -- another run may have created the pool with this profile meanwhile: only a
        -- profile nothing uses is removed
        if not existing and not self:pool_exists(name) then
          command(self, { prefix = "osd erasure-code-profile rm", name = profile })
        end
        return nil, perr, pcode
      end
      fields.profile = profile
      fields.profile_created = existing and 0 or 1
      local holder
      handle, perr, pcode, holder = claim_created()
      if not handle then return nil, perr, pcode, holder end
      profile_created = not existing
      if spec.ec_overwrites then
        local set, serr, scode = enable_ec_overwrites(self, name)
        if not set then
          self:pool_delete(name)
          return nil, serr, scode
        end
      end
    else
      error(string.format("pool_create: type must be 'replicated' or 'erasure', got '%s'",
        tostring(kind)), 2)
    end
    local app = spec.application or "cephmark"
    command(self, { prefix = "osd pool application enable", pool = name,
      app = app, yes_i_really_mean_it = true })
    -- the tag finds the pool without reading objects (`cephmark cleanup --leftovers`)
    command(self, { prefix = "osd pool application set", pool = name, app = app,
      key = owner.TAG, value = tostring(fields.run_id) })
    -- set again, for monitors that took the create without it; a cluster without the
    -- autoscaler (before Nautilus) has none to turn off
    local autoscale_off = pool_set(self, name, "pg_autoscale_mode", "off")
    self:wait_for_latest_osdmap()
    return { name = name, type = kind, profile = profile, profile_created = profile_created,
      owner = fields, pg_autoscale_mode = autoscale_off and "off" or nil }
  end

  -- cluster:pool_owner(name) -> the owner record of a pool cephmark created (a table of
  -- strings), or nil, message, code (-2: no record, the pool is not cephmark's)
  function methods:pool_owner(name)
    local pool, err, code = self:pool(name)
    if not pool then return nil, err, code end
    local record, rerr, rcode = owner.read_pool_owner(pool)
    pool:close()
    return record, rerr, rcode
  end

  -- cluster:write_blocked_reason(pool_name) -> why writes to the pool cannot go through,
  -- from the osdmap's flags (OSDs full, the pool's quota, paused writes), or nil
  function methods:write_blocked_reason(pool_name)
    local dump = command(self, { prefix = "osd dump" })
    if type(dump) ~= "table" then return nil end
    local full, nearfull, backfillfull = {}, {}, {}
    for _, osd in ipairs(dump.osds or {}) do
      for _, state in ipairs(osd.state or {}) do
        local name = "osd." .. tostring(osd.osd)
        if state == "full" then full[#full + 1] = name end
        if state == "nearfull" then nearfull[#nearfull + 1] = name end
        if state == "backfillfull" then backfillfull[#backfillfull + 1] = name end
      end
    end
    local flags = "," .. tostring(dump.flags or "") .. ","
    if flags:find(",pausewr,", 1, true) then
      return "writes are paused on the cluster (osdmap flag pausewr)"
    end
    if #full > 0 or flags:find(",full,", 1, true) then
      return string.format("cluster is full (OSD full flag): %s at or above the full ratio %g",
        #full > 0 and table.concat(full, ", ") or "the cluster", tonumber(dump.full_ratio) or 0)
    end
    for _, pool in ipairs(dump.pools or {}) do
      if pool.pool_name == pool_name then
        local pool_flags = "," .. tostring(pool.flags_names or "") .. ","
        if pool_flags:find(",full_quota,", 1, true) or
          (pool_flags:find(",full,", 1, true) and ((pool.quota_max_objects or 0) > 0 or (pool.quota_max_bytes or 0) > 0)) then
          local limits = {}
          if (pool.quota_max_objects or 0) > 0 then limits[#limits + 1] = "max_objects " .. pool.quota_max_objects end
          if (pool.quota_max_bytes or 0) > 0 then limits[#limits + 1] = "max_bytes " .. pool.quota_max_bytes end
          return string.format("pool '%s' is full (pool quota flag: %s)", pool_name, table.concat(limits, ", "))
        end
        if pool_flags:find(",full,", 1, true) then
          return string.format("pool '%s' is full (pool full flag)", pool_name)
        end
      end
    end
    if #backfillfull > 0 or #nearfull > 0 then
      return string.format("cluster is nearly full (OSD %s flag: %s)", #backfillfull > 0 and "backfillfull" or "nearfull",
        table.concat(#backfillfull > 0 and backfillfull or nearfull, ", "))
    end
    return nil
  end

  -- cluster:pool_delete(name [, {profile=NAME, owner=RUN_ID}]) deletes the pool (and the
  -- EC profile cephmark created for it). With owner, the pool's owner record must name that
  -- run, else nothing is deleted. The mon must allow pool deletion.
  function methods:pool_delete(name, options)
    if options and options.owner then
      local record, rerr, rcode = self:pool_owner(name)
      if not record then
        return nil, string.format("pool '%s' has no owner record of this run (%s): not deleted", name, tostring(rerr)), rcode
      end
      if tostring(record.run_id) ~= tostring(options.owner) then
        return nil, string.format("pool '%s' belongs to another cephmark run (%s): not deleted", name,
          owner.describe(record)), -16
      end
    end
    local handles = owner_handles[self]
    if handles and handles[name] then
      pcall(handles[name].close, handles[name])
      handles[name] = nil
    end
    local ok, err, code = command(self, { prefix = "osd pool delete", pool = name, pool2 = name,
      yes_i_really_really_mean_it = true })
    if not ok then return nil, err, code end
    if options and options.profile then
      command(self, { prefix = "osd erasure-code-profile rm", name = options.profile })
    end
    self:wait_for_latest_osdmap()
    return true
  end
end
