-- rbd-mixed-75-25: the "10k mixed IOPS" test -- 4K random I/O, 75% reads and 25% writes,
-- 64 in flight (fio --rw=randrw --rwmixread=75 --bs=4k --iodepth=64) -- against an RBD
-- image through librbd, reported in fio's layout. The image is written once over first
-- (prepare), so the reads hit data rather than unallocated extents that librbd answers
-- with zeros without asking an OSD; reads verify what was written.
--
--   cephmark run scenarios/rbd-mixed-75-25.lua [-p size=1G] [-p iodepth=64] [-p rw_mix_read=75]
--   cephmark run scenarios/rbd-mixed-75-25.lua -p seconds=60 -p fill=false
--
-- The fio job it stands for, on the rbd engine:
--   fio --name=test --ioengine=rbd --pool=POOL --rbdname=IMAGE --bs=4k --iodepth=64 \
--       --rw=randrw --rwmixread=75

local cm = require "cephmark"
local fio = require "cephmark.report.fio"
local params = require "cephmark.params"
local sys = require "cephmark.sys"

local IMAGE = "cephmark-rbd-mixed-75-25"

return cm.scenario {
  name = "rbd-mixed-75-25",
  description = "4K random reads and writes, 75/25, iodepth 64, on an RBD image, in fio's layout",
  params = {
    size = cm.size("1G", "the image's size; without seconds, the mixed phase moves this much (fio's default size)",
      { min = 512 }),
    bs = cm.size("4K", "bytes per read or write (fio bs=)", { min = 512, max = "1G" }),
    iodepth = cm.integer(64, "I/Os in flight (fio iodepth=)", { min = 1, max = 65536 }),
    rw_mix_read = cm.integer(75, "percent of the I/Os that are reads (fio rwmixread=)", { min = 0, max = 100 }),
    seconds = cm.duration { description = "run the mixed phase this long instead (fio runtime= with time_based)",
      optional = true },
    fill = cm.bool(true, "write the whole image once before measuring"),
    verify = cm.bool(true, "verify what reads return"),
    replicas = cm.integer(3, "copies in the pool", { min = 1 }),
    job = cm.string("rbd_randrw", "the job's name in fio's report"),
  },
  pools = function(p)
    return { rbd = { type = "replicated", size = p.replicas, application = "rbd" } }
  end,
  run = function(s, p)
    local has_rbd, rbd = pcall(require, "cephmark.rbd")
    if not has_rbd then sys.fail("this cephmark was built without RBD support (the cephmark.rbd module)") end
    local pool, pool_name = s:pool("rbd"), s:pool_name("rbd")
    if p.bs > p.size then
      sys.fail(string.format("bs (%s) is larger than the image (%s)", params.format_size(p.bs),
        params.format_size(p.size)))
    end
    local ok, err = rbd.create(pool, IMAGE, { size = p.size })
    if not ok then sys.fail(string.format("cannot create image '%s' in pool '%s': %s", IMAGE, pool_name, err)) end
    s:say(string.format("image %s/%s: created, %s", pool_name, IMAGE, params.format_size(p.size)))
    local image, open_err = rbd.open(pool, IMAGE)
    if not image then
      rbd.remove(pool, IMAGE)
      sys.fail(string.format("cannot open image '%s' in pool '%s': %s", IMAGE, pool_name, open_err))
    end
    -- closed and removed whenever run ends, also on an error or SIGINT
    local guard <close> = setmetatable({}, { __close = function()
      image:close()
      local removed, remove_err = rbd.remove(pool, IMAGE)
      if removed then
        s:say(string.format("image %s/%s: removed", pool_name, IMAGE))
      else
        s:warn(string.format("cannot remove image '%s' from pool '%s': %s", IMAGE, pool_name, remove_err))
      end
    end })

    -- the image is the phases' target: "randrw" is fio's word for random reads and writes
    local io_size = params.format_size(p.bs)
    if p.fill then
      s:phase("prepare", image, { io_type = "write", pattern = "seq", io_size = io_size,
        threads = p.iodepth, bytes = p.size })
    end
    local mixed = { rw_mix_read = p.rw_mix_read, io_size = io_size, threads = p.iodepth, verify = p.verify }
    if p.seconds then mixed.seconds = p.seconds else mixed.bytes = p.size end
    s:say(fio.description_line { name = p.job, io_type = "readwrite", pattern = "rand", io_size = p.bs,
      iodepth = p.iodepth })
    local result = s:phase("randrw", image, mixed)
    for _, line in ipairs(fio.lines(result, { name = p.job, pid = sys.getpid(), io_size = p.bs })) do
      s:say(line)
    end
  end,
}
