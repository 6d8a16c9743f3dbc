-- rgw-mixed: the object-gateway mix users run at fixed ratios (elbencho#76: 30 % GET, 30 %
-- PUT, 30 % LIST, 5 % HEAD, 5 % DELETE) over a prefilled set of buckets. `buckets` buckets
-- are made (many, not one: one bucket's index slows small PUTs as it ages, ceph#55029),
-- filled with `objects` objects of `object_size`, then the mix runs for `seconds` with every
-- GET body and every listed name checked and no GET or HEAD of an object the phase deleted
-- (`misses`); the per-op table (get, put, list, head, delete) follows the phase. The bucket
-- index shard count (radosgw-admin bucket stats) is recorded in the mix's result. Objects
-- and buckets are removed at the end (also after an error or Ctrl-C).
--
--   cephmark run scenarios/rgw-mixed.lua [-p api=swift] [-p objects=5000] [-p seconds=30]
--   cephmark run scenarios/rgw-mixed.lua -p mix=60,20,10,5,5      # get,put,list,head,delete
--
-- Replicated against erasure-coded data pools: with the placement targets of
-- scenarios/rgw-replica-vs-ec.lua (its mode=prepare, then a radosgw restart), S3 only:
--   cephmark run scenarios/rgw-mixed.lua -p placements=cephmark-replica,cephmark-ec
-- runs the mix once per placement target and compares them.
--
-- The phases are phases on the connection, so the mix also runs on many client hosts with
-- `--agents N` (docs/distributed.md): each agent prefills and mixes in buckets of its own,
-- `objects` per agent, the counts summed. Placements too: the buckets of every agent are
-- made here, each in its variant's placement target, before the agents fill them.

local cm = require "cephmark"
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"

local KINDS = { "get", "put", "list", "head", "delete" }

-- The default zonegroup's name as S3's LocationConstraint wants it ("<api name>:<placement>").
local function zonegroup_name()
  local zonegroup, err = rgw.admin { "zonegroup", "get" }
  if not zonegroup then sys.fail("placements need radosgw-admin: " .. err) end
  return zonegroup.api_name ~= "" and zonegroup.api_name or zonegroup.name
end

return cm.scenario {
  name = "rgw-mixed",
  description = "radosgw GET/PUT/LIST/HEAD/DELETE at fixed ratios over prefilled buckets",
  params = {
    api = cm.enum({ "s3", "swift" }, "s3", "which gateway API"),
    buckets = cm.integer(16, "buckets (containers) the objects are spread over", { min = 1, max = 1024 }),
    objects = cm.integer(1000, "objects written before the mix", { min = 2 }),
    object_size = cm.size("4K", "bytes per object", { max = "64M" }),
    mix = cm.list(cm.integer(nil, "ratio", { min = 0 }), { 30, 30, 30, 5, 5 },
      "ratios of get, put, list, head, delete"),
    page_size = cm.integer(100, "names per listing page", { min = 1, max = 1000 }),
    threads = cm.integer(16, "connections", { min = 1, max = 4096 }),
    seconds = cm.duration("10s", "length of the mix"),
    placements = cm.list(cm.string(), {}, "S3 placement targets to compare (empty: the default one)",
      { min_count = 0 }),
  },
  run = function(s, p)
    if #p.mix ~= #KINDS then
      sys.fail(string.format("mix: give %d ratios (get, put, list, head, delete), got %d", #KINDS, #p.mix),
        sys.EXIT_USAGE)
    end
    local mix = {}
    for i, name in ipairs(KINDS) do mix[name] = p.mix[i] end
    if #p.placements > 0 and p.api ~= "s3" then
      sys.fail("placements are S3 placement targets: use -p api=s3", sys.EXIT_USAGE)
    end
    local conn <close>, where = (p.api == "s3" and rgw.s3_connect or rgw.swift_connect) {}
    s:say(p.api .. ": " .. (where.endpoint or where.auth_url) .. " (" .. where.source .. ")")
    local variants = #p.placements > 0 and p.placements or { "default" }
    local location = #p.placements > 0 and zonegroup_name() or nil
    -- every bucket made here goes however the run ends, with the objects still in it (the
    -- mix deletes and makes objects again, so the buckets are emptied by listing them).
    -- With --agents each agent works in buckets of its own (<name>-<agent>): they are made
    -- here too, so that each is in its variant's placement target (an agent would make a
    -- missing one in the default target), and removed here the same way
    local made = {}
    local guard <close> = setmetatable({}, { __close = function() rgw.remove_containers(conn, made) end })
    for v, placement in ipairs(variants) do
      local names = {}
      for i = 1, p.buckets do names[i] = string.format("cephmark-mixed-%d-%d-%d", sys.getpid(), v, i - 1) end
      local used = rgw.containers_of(s, names)
      for _, name in ipairs(used) do
        local ok, err
        if p.api == "s3" then
          ok, err = conn:create_bucket(name, location and { location = location .. ":" .. placement } or nil)
        else
          ok, err = conn:create_container(name)
        end
        if not ok then sys.fail("cannot create " .. name .. ": " .. err) end
        made[#made + 1] = name
      end
      local variant = { placement = placement }
      local put = s:phase("prefill", conn, { op = "put", containers = names, objects = p.objects,
        size = p.object_size, threads = p.threads, prefix = "mixed", variant = variant })
      if put.objects_written < put.objects then
        sys.fail(string.format("prefill wrote %d of %d objects: %s", put.objects_written, put.objects,
          put.first_error or "stopped"))
      end
      s:phase("mixed", conn, { from = put, mix = mix, seconds = p.seconds, threads = p.threads,
        page_size = p.page_size, variant = variant })
      -- the index shard count of the buckets the mix ran on (each agent's own with --agents)
      local record = s:phase_records()[#s:phase_records()]
      local shards, err = rgw.index_shards(used)
      if shards then
        local low, high
        for _, n in pairs(shards) do
          low, high = math.min(low or n, n), math.max(high or n, n)
        end
        record.result.index_shards = low == high and low or string.format("%d-%d", low, high)
      else
        record.result.index_shards_error = err
      end
      -- the mix deleted objects and made some again: the buckets are emptied by listing
      -- them when the run ends
    end
    if #variants > 1 then s:compare { by = "placement", phases = { "mixed" }, baseline = variants[1] } end
  end,
}
