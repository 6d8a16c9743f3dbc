-- rbd-4k-randwrite: the classic fio job for RBD -- ioengine=rbd, rw=randwrite, bs=4k,
-- iodepth=32 on pool/image -- on cephmark's engine, reported the way fio prints it: the
-- write line (IOPS, BW), lat min/max/avg/stdev, the "clat percentiles (usec):" block, the
-- bw and iops sample lines and the run status line. By default it makes a pool and a 1G
-- image, writes the image's size once over in random 4K writes (what fio's job does), and
-- removes both.
--
--   cephmark run scenarios/rbd-4k-randwrite.lua [-p size=1G] [-p iodepth=32] [-p bs=4K]
--   cephmark run scenarios/rbd-4k-randwrite.lua -p seconds=60        (fio's runtime=60 time_based)
--   cephmark run scenarios/rbd-4k-randwrite.lua -p pool=rbdbench -p image=image01
--
-- The fio job it stands for (pool=, rbdname= are -p pool=, -p image=):
--   [global]
--   ioengine=rbd
--   clientname=admin
--   pool=rbdbench
--   rbdname=image01
--   rw=randwrite
--   bs=4k
--   [rbd_iodepth32]
--   iodepth=32

local cm = require "cephmark"
local fio = require "cephmark.report.fio"
local params = require "cephmark.params"
local sys = require "cephmark.sys"

local IMAGE = "cephmark-rbd-4k-randwrite"

-- The image for the run: an existing one when -p image= names it (never removed), else a
-- new one. Either way it is closed, and a new one removed, when run ends -- also on an
-- error or SIGINT, since a reused pool outlives the run.
local function use_image(s, rbd, pool, p)
  local pool_name = s:pool_name("rbd")
  local name = p.image or IMAGE
  if not p.image then
    local ok, err = rbd.create(pool, name, { size = p.size })
    if not ok then sys.fail(string.format("cannot create image '%s' in pool '%s': %s", name, pool_name, err)) end
    s:say(string.format("image %s/%s: created, %s", pool_name, name, params.format_size(p.size)))
  end
  local image, err, code = rbd.open(pool, name)
  if not image then
    if not p.image then rbd.remove(pool, name) end
    if code == -2 then sys.fail(string.format("image '%s' does not exist in pool '%s'", name, pool_name)) end
    sys.fail(string.format("cannot open image '%s' in pool '%s': %s", name, pool_name, err))
  end
  local guard = setmetatable({}, { __close = function()
    image:close()
    if p.image then return end
    local ok, remove_err = rbd.remove(pool, name)
    if ok then
      s:say(string.format("image %s/%s: removed", pool_name, name))
    else
      s:warn(string.format("cannot remove image '%s' from pool '%s': %s", name, pool_name, remove_err))
    end
  end })
  return image, name, guard
end

return cm.scenario {
  name = "rbd-4k-randwrite",
  description = "4K random writes into an RBD image at iodepth 32 (fio's rbd job), in fio's layout",
  params = {
    size = cm.size("1G", "the image's size; without seconds, the job writes this much (fio's default size)",
      { min = 512 }),
    bs = cm.size("4K", "bytes per write (fio bs=)", { min = 512, max = "1G" }),
    iodepth = cm.integer(32, "writes in flight (fio iodepth=)", { min = 1, max = 65536 }),
    seconds = cm.duration { description = "write for this long instead (fio runtime= with time_based)",
      optional = true },
    pool = cm.string { description = "run in this pool (fio pool=); it is kept; default: a new pool",
      optional = true },
    image = cm.string { description = "use this existing image (fio rbdname=); its data is overwritten, as fio's job does; default: a new image",
      optional = true },
    replicas = cm.integer(3, "copies in the new pool", { min = 1 }),
    job = cm.string("rbd_iodepth32", "the job's name in fio's report"),
  },
  pools = function(p)
    if p.pool then return { rbd = { name = p.pool, reuse = true, application = "rbd" } } end
    return { rbd = { type = "replicated", size = p.replicas, application = "rbd" } }
  end,
  run = function(s, p)
    local has_rbd, rbd = pcall(require, "cephmark.rbd")
    if not has_rbd then sys.fail("this cephmark was built without RBD support (the cephmark.rbd module)") end
    local pool = s:pool("rbd")
    local image, name, guard <close> = use_image(s, rbd, pool, p)
    local info = image:info()
    if p.bs > info.size then
      sys.fail(string.format("bs (%s) is larger than the image '%s' (%s)", params.format_size(p.bs), name,
        params.format_size(info.size)))
    end

    -- the image is the phase's target, and "randwrite" (fio's word) says what it does there
    local bench = { io_size = params.format_size(p.bs), threads = p.iodepth }
    if p.seconds then bench.seconds = p.seconds else bench.bytes = info.size end
    s:say(fio.description_line { name = p.job, io_type = "write", pattern = "rand", io_size = p.bs,
      iodepth = p.iodepth })
    local result = s:phase("randwrite", image, bench)
    for _, line in ipairs(fio.lines(result, { name = p.job, pid = sys.getpid(), io_size = p.bs })) do
      s:say(line)
    end
  end,
}
