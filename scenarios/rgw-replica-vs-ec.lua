-- rgw-replica-vs-ec: object-gateway PUT and GET with the bucket data pool replicated
-- against erasure-coded (the seed's 3x vs 4+2 COSBench comparison, on one host). Two rgw
-- placement targets, cephmark-replica and cephmark-ec, differ only in their data pool; a
-- bucket is made in each (S3 LocationConstraint "<zonegroup>:<placement>"), filled with
-- `objects` objects of `object_size`, read back at random for `seconds` (verified), and
-- emptied; the table compares the two.
--
--   cephmark run scenarios/rgw-replica-vs-ec.lua [-p object_size=512K] [-p k=2 -p m=1]
--
-- radosgw reads placement targets when it starts, so the first run on a cluster prepares
-- them and stops, saying so; restart radosgw, then run again. On the local cluster:
--   cephmark cluster up --rgw
--   cephmark run scenarios/rgw-replica-vs-ec.lua -p mode=prepare
--   cephmark cluster restart client.rgw.cephmark   # radosgw reads the placement targets
--   cephmark run scenarios/rgw-replica-vs-ec.lua
--   cephmark run scenarios/rgw-replica-vs-ec.lua -p mode=remove   # targets and pools go
-- The data pools are kept between runs (the placement targets point at them); mode=remove
-- deletes both. Needs the admin keyring (radosgw-admin) and S3 credentials (docs/rgw.md).
-- With --agents N (docs/distributed.md) each agent puts and gets in buckets of its own, one
-- per target, which the run makes in that target's placement before the phases and removes.

local cm = require "cephmark"
local params = require "cephmark.params"
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"

local TARGETS = {
  { label = "replica", placement = "cephmark-replica", pool = "cephmark-rgw-replica-data" },
  { label = "ec", placement = "cephmark-ec", pool = "cephmark-rgw-ec-data" },
}
-- rgw's own pools of the default zone, shared by both targets
local INDEX_POOL, EXTRA_POOL = "default.rgw.buckets.index", "default.rgw.buckets.non-ec"

-- radosgw-admin against the cluster this run uses; a failure to run it at all ends the run
local function admin(args)
  local value, err = rgw.admin(args)
  if value == nil and err and err:match("^cannot run") then sys.fail(err) end
  return value, err
end

local function must(value, err)
  if value == nil then sys.fail(err) end
  return value
end

local function ensure_pools(s, p)
  local cluster = s:cluster()
  for _, target in ipairs(TARGETS) do
    if not cluster:pool_exists(target.pool) then
      local spec = { name = target.pool, application = "rgw", pg_num = 8 }
      if target.label == "ec" then
        spec.type, spec.k, spec.m = "erasure", p.k, p.m
      else
        spec.size = p.replicas
      end
      must(cluster:pool_create(spec))
      s:say(string.format("pool %s created (%s)", target.pool,
        target.label == "ec" and string.format("erasure k=%d m=%d", p.k, p.m) or ("size " .. p.replicas)))
    end
  end
end

-- Adds the two placement targets to the default zonegroup and zone (once); returns the
-- zonegroup's api name, which the LocationConstraint names.
local function ensure_placement(s)
  local zonegroup = admin { "zonegroup", "get" }
  if not zonegroup then
    -- a cluster where radosgw never ran has no default zonegroup yet: any command that
    -- opens the store (a user listing) creates the defaults radosgw would
    must(admin { "user", "list" })
    zonegroup = must(admin { "zonegroup", "get" })
  end
  local have = {}
  for _, target in ipairs(zonegroup.placement_targets or {}) do have[target.name] = true end
  local zone = must(admin { "zone", "get" })
  local in_zone = {}
  for _, entry in ipairs(zone.placement_pools or {}) do in_zone[entry.key] = entry.val end
  for _, target in ipairs(TARGETS) do
    if not have[target.placement] then
      must(admin { "zonegroup", "placement", "add", "--rgw-zonegroup", zonegroup.name,
        "--placement-id", target.placement })
    end
    local current = in_zone[target.placement]
    local data = current and current.storage_classes and current.storage_classes.STANDARD
      and current.storage_classes.STANDARD.data_pool
    if data ~= target.pool then
      must(admin { "zone", "placement", "add", "--rgw-zone", zone.name, "--placement-id", target.placement,
        "--data-pool", target.pool, "--index-pool", INDEX_POOL, "--data-extra-pool", EXTRA_POOL })
      s:say(string.format("placement target %s: data pool %s", target.placement, target.pool))
    end
  end
  return zonegroup.api_name ~= "" and zonegroup.api_name or zonegroup.name
end

local function remove_all(s)
  local zonegroup = admin { "zonegroup", "get" }
  local zone = admin { "zone", "get" }
  for _, target in ipairs(TARGETS) do
    if zone then admin { "zone", "placement", "rm", "--rgw-zone", zone.name, "--placement-id", target.placement } end
    if zonegroup then
      admin { "zonegroup", "placement", "rm", "--rgw-zonegroup", zonegroup.name, "--placement-id", target.placement }
    end
    local cluster = s:cluster()
    if cluster:pool_exists(target.pool) then
      must(cluster:pool_delete(target.pool, target.label == "ec" and { profile = "cephmark_" .. target.pool } or nil))
    end
    s:say("removed placement target " .. target.placement .. " and pool " .. target.pool)
  end
end

return cm.scenario {
  name = "rgw-replica-vs-ec",
  description = "radosgw PUT/GET with the bucket data pool replicated vs erasure-coded, compared",
  params = {
    mode = cm.enum({ "run", "prepare", "remove" }, "run",
      "prepare: make the pools and placement targets only; remove: delete them"),
    object_size = cm.size("512K", "bytes per object", { max = "64M" }),
    objects = cm.integer(100, "objects written into each bucket", { min = 1 }),
    threads = cm.integer(16, "connections", { min = 1, max = 4096 }),
    seconds = cm.duration("10s", "length of each GET phase"),
    replicas = cm.integer(3, "copies in the replicated data pool", { min = 1 }),
    k = cm.integer(2, "data chunks of the erasure-coded data pool", { min = 2 }),
    m = cm.integer(1, "coding chunks of the erasure-coded data pool", { min = 1 }),
  },
  run = function(s, p)
    if p.mode == "remove" then return remove_all(s) end
    ensure_pools(s, p)
    local api_name = ensure_placement(s)
    if p.mode == "prepare" then
      s:say("placement targets ready; radosgw loads them when it (re)starts")
      return
    end
    local conn <close>, where = rgw.s3_connect {}
    s:say("s3: " .. where.endpoint .. " (" .. where.source .. ")")
    local buckets, names = {}, {}
    -- the buckets go however the run ends, with any object a put left in them (a delete
    -- phase that did not run: an error, Ctrl-C)
    local guard <close> = setmetatable({}, { __close = function() rgw.remove_containers(conn, names) end })
    -- the buckets of the phases (with --agents each agent's own) are made here, in their
    -- target's placement
    for _, target in ipairs(TARGETS) do
      local name = string.format("cephmark-%s-%d", target.label, sys.getpid())
      for _, used in ipairs(rgw.containers_of(s, { name })) do
        local ok, err, code = conn:create_bucket(used, { location = api_name .. ":" .. target.placement })
        if not ok and code == 400 then
          sys.fail(string.format("radosgw does not serve placement target %s yet (%s): it reads placement "
            .. "targets when it starts; restart radosgw and run again (see the top of %s)", target.placement,
            err, "scenarios/rgw-replica-vs-ec.lua"))
        end
        if not ok then sys.fail(err) end
        names[#names + 1] = used
      end
      buckets[#buckets + 1] = { name = name }
    end
    local size_label = params.format_size(p.object_size)
    for i, target in ipairs(TARGETS) do
      local bucket = buckets[i]
      local variant = { data_pool = target.label }
      local put = s:phase("put", conn, { bucket = bucket.name, objects = p.objects, size = p.object_size,
        threads = p.threads, variant = variant })
      -- the objects' data must be in this target's pool, or the comparison compares nothing
      local pool <close> = must(s:cluster():pool(target.pool))
      local stored = #must(pool:objects())
      s:say(string.format("pool %s holds %d RADOS objects (%d %s gateway objects written)", target.pool,
        stored, put.objects_written, size_label))
      if put.objects_written > 0 and stored == 0 then
        sys.fail(string.format("bucket %s wrote nothing into pool %s: its placement target is not the one "
          .. "asked for", bucket.name, target.pool))
      end
      s:phase("get", conn, { from = put, seconds = p.seconds, threads = p.threads, variant = variant })
      s:phase("delete", conn, { from = put, threads = p.threads, ignore_interrupt = true, variant = variant })
    end
    s:compare { by = "data_pool", phases = { "put", "get" }, baseline = "replica" }
  end,
}
