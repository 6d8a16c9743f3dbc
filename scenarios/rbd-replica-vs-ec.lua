-- rbd-replica-vs-ec: an RBD image on a replicated pool against an image whose data lives in
-- an erasure-coded pool (rbd create --data-pool; its header and metadata stay in the
-- replicated pool, as RBD requires). Each image is written once over (prepare), then gets
-- random writes and random reads (verified); the table compares them against the replicated
-- image.
--
--   cephmark run scenarios/rbd-replica-vs-ec.lua [-p seconds=30] [-p k=4 -p m=2] [-p io_size=64K]
--
-- RBD writes into objects in place, so the EC pool needs allow_ec_overwrites, which the
-- monitors grant only when every OSD under the pool runs bluestore: on memstore OSDs (the
-- default `cephmark cluster up`) the run stops with one line saying so; use
-- `cephmark cluster up --bluestore`.

local cm = require "cephmark"
local params = require "cephmark.params"
local sys = require "cephmark.sys"

-- the EC pool must take partial overwrites before an image can keep its data there
local function allow_ec_overwrites(s, label)
  local name = s:pool_name(label)
  -- a refusal comes back as nil, the monitor's reason and an error code; success may
  -- have no output at all, so only the code tells them apart
  local _, err, code = s:cluster():mon_command { prefix = "osd pool set", pool = name,
    var = "allow_ec_overwrites", val = "true" }
  if code then
    sys.fail(string.format("pool '%s': the monitors refuse allow_ec_overwrites (%s); an RBD image can keep its data in an erasure-coded pool only on bluestore OSDs (cephmark cluster up --bluestore)",
      name, err))
  end
  -- read back, so the line printed is what the monitors hold
  local got = s:cluster():mon_command { prefix = "osd pool get", pool = name, var = "allow_ec_overwrites" }
  local value = type(got) == "table" and got.allow_ec_overwrites
  if value ~= true then
    sys.fail(string.format("pool '%s': allow_ec_overwrites is %s after setting it to true", name, tostring(value)))
  end
  s:say(string.format("pool %s: allow_ec_overwrites = true", label))
end

return cm.scenario {
  name = "rbd-replica-vs-ec",
  description = "RBD image on a replicated pool vs one with an erasure-coded data pool: random writes and reads, compared",
  params = {
    size = cm.size("1G", "each image's size (written once over before measuring)", { min = 512 }),
    io_size = cm.size("4K", "bytes per read or write", { min = 512, max = "1G" }),
    threads = cm.integer(16, "I/Os in flight", { min = 1, max = 65536 }),
    seconds = cm.duration("10s", "length of each random write and random read phase"),
    replicas = cm.integer(3, "copies in the replicated pool", { min = 1 }),
    k = cm.integer(2, "data chunks in the erasure-coded pool", { min = 2 }),
    m = cm.integer(1, "coding chunks in the erasure-coded pool", { min = 1 }),
  },
  pools = function(p)
    return {
      { label = "replica", type = "replicated", size = p.replicas, application = "rbd" },
      { label = "ec", type = "erasure", k = p.k, m = p.m, application = "rbd" },
    }
  end,
  run = function(s, p)
    local has_rbd, rbd = pcall(require, "cephmark.rbd")
    if not has_rbd then sys.fail("this cephmark was built without RBD support (the cephmark.rbd module)") end
    if p.io_size > p.size then
      sys.fail(string.format("io_size (%s) is larger than the images (%s)", params.format_size(p.io_size),
        params.format_size(p.size)))
    end
    allow_ec_overwrites(s, "ec")

    -- both images live in the replicated pool; the EC one keeps only its data in the EC pool
    local pool, pool_name = s:pool("replica"), s:pool_name("replica")
    local images = {
      { label = "replica", name = "cephmark-rbd-replica-vs-ec-replica" },
      { label = "ec", name = "cephmark-rbd-replica-vs-ec-ec", data_pool = s:pool_name("ec") },
    }
    -- every image made is closed and removed whenever run ends, also on an error or SIGINT
    local guard <close> = setmetatable({}, { __close = function()
      for i = #images, 1, -1 do
        local image = images[i]
        if image.handle then image.handle:close() end
        if image.created then
          local ok, err = rbd.remove(pool, image.name)
          if ok then
            s:say(string.format("image %s/%s: removed", pool_name, image.name))
          else
            s:warn(string.format("cannot remove image '%s' from pool '%s': %s", image.name, pool_name, err))
          end
        end
      end
    end })
    for _, image in ipairs(images) do
      local ok, err = rbd.create(pool, image.name, { size = p.size, data_pool = image.data_pool })
      if not ok then
        sys.fail(string.format("cannot create image '%s' in pool '%s'%s: %s", image.name, pool_name,
          image.data_pool and (" with data pool '" .. image.data_pool .. "'") or "", err))
      end
      image.created = true
      local handle, open_err = rbd.open(pool, image.name)
      if not handle then sys.fail(string.format("cannot open image '%s': %s", image.name, open_err)) end
      image.handle = handle
      -- what librbd reports, so a data pool that did not take is visible
      local info = handle:info()
      s:say(string.format("image %s: %s/%s, %s%s", image.label, pool_name, image.name, params.format_size(info.size),
        info.data_pool and (", data in " .. info.data_pool) or ""))
    end

    local io_size = params.format_size(p.io_size)
    -- each image is its phases' target; randwrite and randread are fio's words
    for _, image in ipairs(images) do
      local variant = { image = image.label }
      s:phase("prepare", image.handle, { io_type = "write", pattern = "seq", io_size = io_size, threads = p.threads,
        bytes = p.size, variant = variant })
      s:phase("randwrite", image.handle, { io_size = io_size, threads = p.threads, seconds = p.seconds,
        variant = variant })
      s:phase("randread", image.handle, { io_size = io_size, threads = p.threads, seconds = p.seconds,
        verify = true, variant = variant })
    end
    s:compare { by = "image", baseline = "replica", phases = { "randwrite", "randread" },
      metrics = { "iops", "bandwidth_mib", "lat.p50", "lat.p99" } }
  end,
}
