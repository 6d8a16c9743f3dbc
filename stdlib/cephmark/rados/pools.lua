-- Pool management for cephmark.rados cluster handles: create and delete replicated and
-- erasure-coded pools, with the placement checks a benchmark needs before it writes.
-- Installed on the cluster type by modules/rados.c; every failure of the cluster comes
-- back as nil, message, code.

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

local function pool_set(cluster, name, var, value)
  return command(cluster, { prefix = "osd pool set", pool = name, var = var, val = tostring(value) })
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
  --   k=, m=, crush_failure_domain="osd"|"host"|..., application="cephmark"}
  -- Refuses, before touching the cluster, a pool its OSDs could never place.
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
    local profile
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
      local ok, cerr, ccode = command(self, create)
      if not ok then return nil, cerr, ccode end
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
      local ok, perr, pcode = command(self, {
        prefix = "osd erasure-code-profile set", name = profile,
        profile = { "k=" .. k, "m=" .. m, "crush-failure-domain=" .. domain },
      })
      if not ok then return nil, perr, pcode end
      create.pool_type = "erasure"
      create.erasure_code_profile = profile
      ok, perr, pcode = command(self, create)
      if not ok then
        command(self, { prefix = "osd erasure-code-profile rm", name = profile })
        return nil, perr, pcode
      end
    else
      error(string.format("pool_create: type must be 'replicated' or 'erasure', got '%s'",
        tostring(kind)), 2)
    end
    command(self, { prefix = "osd pool application enable", pool = name,
      app = spec.application or "cephmark", yes_i_really_mean_it = true })
    self:wait_for_latest_osdmap()
    return { name = name, type = kind, profile = profile }
  end

  -- cluster:pool_delete(name [, {profile=NAME}]) deletes the pool (and the EC profile
  -- cephmark created for it). The mon must allow pool deletion.
  function methods:pool_delete(name, options)
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
