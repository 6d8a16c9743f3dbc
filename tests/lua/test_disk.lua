-- cephmark.disk on a small file in the build tree (a disk filesystem): dd-style counts,
-- time bounds, random I/O through io_uring and the sync path, fsync per op and at the end,
-- the layout of a file read before it exists, and bad input. No cluster needed.
local disk = require "cephmark.disk"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local base = os.getenv("CEPHMARK_BUILD_DIR") or "."
local dir = string.format("%s/test-disk-%d", base, sys.getpid())
assert(sys.mkdir(dir))
local file = dir .. "/data"

-- dd's `bs=1M count=8 oflag=direct`, then reading it back
local w = disk.bench { path = file, io_type = "write", block_size = "1M", count = 8 }
t.eq(w.ops, 8, "count = 8 writes 8 blocks")
t.eq(w.bytes, 8 * 1048576, "bytes")
t.eq(w.dd.bytes, 8 * 1048576, "dd summary bytes")
t.ok(w.dd.seconds > 0 and w.dd.mb_s > 0, "dd summary seconds and MB/s")
t.eq(w.engine, "io_uring", "io_uring is used when the kernel has it")
t.eq(w.direct, true, "O_DIRECT by default")
t.eq(w.size, 8 * 1048576, "a new file's region is what count asks for")
t.eq(sys.stat(file).size, 8 * 1048576, "the file holds it")

local r = disk.bench { path = file, io_type = "read", block_size = "1M" }
t.eq(r.ops, 8, "with no bound, a read makes one pass over the file")
t.eq(r.errors, 0, "no errors")

-- random 4K reads, 8 in flight, time bound; percentiles and a per-second series
local seen = 0
local rr = disk.bench { path = file, io_type = "read", pattern = "rand", block_size = "4K", threads = 8,
  seconds = 1.2, on_second = function() seen = seen + 1 end }
t.ok(rr.ops > 0, "random reads ran: " .. rr.ops)
t.eq(rr.threads, 8, "8 in flight")
t.ok(rr.lat.p50 > 0 and rr.lat.p99 >= rr.lat.p50, "latency percentiles")
t.ok(seen >= 1, "on_second was called")
t.ok(#rr.series >= 1, "per-second series")

-- random offsets by an access distribution: the chooser the rados rand uses
t.eq(rr.access, "uniform", "random offsets are uniform by default")
local z = disk.bench { path = file, io_type = "read", pattern = "rand", block_size = "4K", threads = 4,
  ops = 300, access = "zipf:1.2", seed = 3 }
t.eq(z.ops, 300, "zipf offsets: every op ran")
t.eq(z.errors, 0, "zipf offsets: no errors")
t.eq(z.access, "zipf:1.2", "access in the result")
t.raises(function() disk.bench { path = file, io_type = "read", pattern = "rand", ops = 1, access = "zipf:0" } end,
  "disk.bench: access 'zipf:0': zipf θ must be above 0 and at most 10", "zipf θ out of range")
t.raises(function() disk.bench { path = file, io_type = "read", ops = 1, access = "hotspot:10/90" } end,
  "disk.bench: access applies to random offsets (pattern = \"rand\")", "access on sequential offsets")

-- the synchronous path
local s = disk.bench { path = file, io_type = "read", pattern = "rand", block_size = "4K", engine = "sync", ops = 200 }
t.eq(s.engine, "sync", "engine sync")
t.eq(s.ops, 200, "ops bound")
t.eq(s.threads, 1, "one op in flight")

-- fsync per op (linked to each write in io_uring) and fdatasync at the end; the file is
-- there now, so writing it again must say overwrite = true
local f = disk.bench { path = file, io_type = "write", pattern = "rand", block_size = "4K", threads = 4,
  ops = 64, sync = "fsync", sync_when = "op", overwrite = true }
t.eq(f.ops, 64, "writes with an fsync each")
t.eq(f.errors, 0, "no errors with fsync per op")
t.eq(f.sync_when, "op", "sync_when recorded")
local fe = disk.bench { path = file, io_type = "write", block_size = "64K", ops = 16, sync = "fdatasync",
  engine = "sync", overwrite = true }
t.ok(fe.sync_seconds >= 0 and fe.dd.seconds >= fe.elapsed, "the final fdatasync counts in dd's seconds")

-- buffered I/O is allowed, with sizes O_DIRECT would refuse
local b = disk.bench { path = file, io_type = "read", block_size = 1000, direct = false, ops = 10 }
t.eq(b.ops, 10, "unaligned sizes without O_DIRECT")

-- reading a file that is not there lays it out first (as fio does), and remove cleans up
local fresh = dir .. "/fresh"
local l = disk.bench { path = fresh, io_type = "read", block_size = "64K", size = "2M", remove = true }
t.eq(l.prepared_bytes, 2 * 1048576, "the missing file was laid out with 2M")
t.eq(l.ops, 32, "then read once")
t.eq(sys.stat(fresh), nil, "remove = true deletes a file the run created")

-- a file that was there before the run is the operator's: neither written nor laid out
-- (extended) without overwrite = true, and not a byte of it changes when refused
local theirs = dir .. "/theirs"
assert(io.open(theirs, "w")):write(string.rep("operator data\n", 1000)):close()
local before = sys.read_file(theirs)
t.raises(function() disk.bench { path = theirs, io_type = "write", block_size = "4K", count = 2 } end,
  "disk.bench: refusing to write to " .. theirs .. ": it is an existing file this run did not create; say so explicitly with overwrite = true (its contents are replaced)",
  "an existing file is not written without overwrite")
t.raises(function() disk.bench { path = theirs, io_type = "read", block_size = "4K", size = "1M" } end,
  "disk.bench: refusing to lay out " .. theirs .. " for reading: it is an existing file of 13.7 KiB, shorter than the region, that this run did not create; give a size of at most 13.7 KiB, or overwrite = true to extend it",
  "an existing file is not laid out (extended) without overwrite")
t.raises(function() disk.bench { path = theirs, io_type = "write", block_size = "4K", count = 2, remove = true } end,
  "refusing to write to " .. theirs, "remove = true does not make it the run's file")
t.eq(sys.read_file(theirs), before, "the refused file is unchanged")
local read_theirs = disk.bench { path = theirs, io_type = "read", block_size = "4K", direct = false }
t.eq(read_theirs.ops, 3, "reading an existing file needs no permission (3 whole blocks)")
t.eq(sys.read_file(theirs), before, "and leaves it unchanged")
local over = disk.bench { path = theirs, io_type = "write", block_size = "4K", count = 2, overwrite = true,
  remove = true }
t.eq(over.ops, 2, "overwrite = true writes it")
t.ok(sys.read_file(theirs) ~= before, "its contents were replaced, as asked")
t.ok(sys.stat(theirs) ~= nil, "remove = true leaves a file the run did not create")
os.remove(theirs)

-- dd's summary line
local dd = require "cephmark.report.disk"
t.eq(dd.dd_line { dd = { bytes = 1073741824, seconds = 14.1375 } },
  "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 14.1375 s, 75.9 MB/s", "dd's line for the seed's 1G run")
t.eq(dd.dd_line { dd = { bytes = 67108864, seconds = 0.0812 } },
  "67108864 bytes (67 MB, 64 MiB) copied, 0.0812 s, 826 MB/s", "dd's line for 64 MiB")
t.match(dd.dd_line(w), "^8388608 bytes %(8.4 MB, 8.0 MiB%) copied, [0-9.e-]+ s, [0-9.]+ [MG]B/s$", "a run's dd line")

-- buffers on transparent huge pages by default (whether the kernel gave them is reported),
-- on plain pages when asked
t.eq(type(w.huge_pages), "boolean", "huge_pages is reported")
local plain = disk.bench { path = file, io_type = "read", block_size = "1M", huge_pages = false }
t.eq(plain.huge_pages, false, "huge_pages = false: plain pages")
t.eq(plain.ops .. "/" .. plain.errors, "8/0", "and the run is the same")

-- bad input: one clear message each
t.raises(function() disk.bench { path = file, blocksize = "4K" } end,
  "disk.bench: unknown option 'blocksize' (expected one of access, allow_block_device, block_size,", "a misspelt option")
t.raises(function() disk.bench { path = file, block_size = 1000 } end,
  "block_size 1000 is not a multiple of 512 bytes, the alignment O_DIRECT needs on " .. file, "unaligned O_DIRECT")
t.raises(function() disk.bench { path = dir } end, dir .. " is a directory", "a directory")
t.raises(function() disk.bench { path = dir .. "/no/such/dir/x", io_type = "write", count = 1 } end,
  "cannot open " .. dir .. "/no/such/dir/x for writing: No such file or directory", "a path that cannot be created")
t.raises(function() disk.bench { path = file, engine = "sync", threads = 4 } end,
  "engine \"sync\" keeps one op in flight", "sync with threads > 1")
t.raises(function() disk.bench { path = file, io_type = "scribble" } end, "unknown io_type 'scribble'", "io_type")
t.raises(function() disk.bench { path = file, pattern = "zigzag" } end, "unknown pattern 'zigzag'", "pattern")
t.raises(function() disk.bench { path = file, sync = "sometimes" } end, "unknown sync 'sometimes'", "sync")
t.raises(function() disk.bench {} end, "path is required", "no path")
t.raises(function() disk.bench { path = file, block_size = "4X" } end, "size '4X' has an unknown suffix", "bad size")
t.raises(function() disk.bench { path = file, size = "1K", block_size = "4K" } end,
  "is smaller than block_size", "region smaller than a block")
t.raises(function() disk.bench { path = "/dev/null", io_type = "write", count = 1 } end,
  "/dev/null is neither a regular file nor a block device", "a character device")
-- block devices are written only when the scenario says so, and never when mounted
local root_device
for line in io.lines("/proc/self/mounts") do
  local device, point = line:match("^(/dev/%S+) (%S+) ")
  if device and point == "/" and sys.stat(device) then root_device = device end
end
if root_device then
  t.raises(function() disk.bench { path = root_device, io_type = "write", count = 1 } end,
    "refusing to write to the block device " .. root_device .. ": it destroys what the device holds",
    "a block device without allow_block_device")
end
-- (a mounted device is refused even with allow_block_device: tests/integration/test_disk_bad_input.sh,
-- on a loop device)

-- drop_caches: root only
local ok, message = disk.drop_caches()
if sys.geteuid() == 0 then
  t.eq(ok, true, "drop_caches as root")
else
  t.match(message, "drop_caches needs root", "drop_caches as another user")
end

os.remove(file)
sys.remove_tree(dir)
return t.done()
