-- cephmark.disk file handles, blocking and inside scripted workers, on files this test
-- creates in the build tree: reads and writes in workers go through the disk target's
-- per-request submit (io_uring or the sync path, O_DIRECT or not), are counted like a native
-- phase's ops (kinds, bytes, one latency entry per op) and read back what was written; the
-- safety rules of disk.bench apply to disk.open; bad input gets a clear message.
local disk = require "cephmark.disk"
local sys = require "cephmark.sys"
local workers = require "cephmark.workers"
local t = require "cephmark.test"

local base = os.getenv("CEPHMARK_BUILD_DIR") or "."
local dir = string.format("%s/test-workers-disk-%d", base, sys.getpid())
assert(sys.mkdir(dir))

local N, PER, BLOCK = 4, 8, 4096

local function block_of(id, i)
  return string.rep(string.char(64 + id), BLOCK - 8) .. string.format("%08d", i)
end

for _, case in ipairs {
  { name = "io_uring", options = {} },
  { name = "io_uring direct", options = { direct = true } },
  { name = "sync", options = { engine = "sync" } },
} do
  local path = string.format("%s/%s", dir, case.name:gsub(" ", "_"))
  local options = { write = true }
  for k, v in pairs(case.options) do options[k] = v end
  local file = assert(disk.open(path, options))
  local mismatches = 0
  local r = workers.run { n = N, fn = function(w)
    for i = 0, PER - 1 do
      assert(file:write(((w.id - 1) * PER + i) * BLOCK, block_of(w.id, i)))
    end
    for i = 0, PER - 1 do
      if file:read(((w.id - 1) * PER + i) * BLOCK, BLOCK) ~= block_of(w.id, i) then
        mismatches = mismatches + 1
      end
    end
  end }
  t.eq(r.errors, 0, case.name .. ": no failed ops")
  t.eq(r.ops, 2 * N * PER, case.name .. ": every call was one op")
  t.eq(r.writes, N * PER, case.name .. ": writes counted as writes")
  t.eq(r.reads, N * PER, case.name .. ": reads counted as reads")
  t.eq(r.bytes, 2 * N * PER * BLOCK, case.name .. ": bytes of every read and write")
  t.eq(r.lat.count, 2 * N * PER, case.name .. ": one latency per op")
  t.eq(r.lat_read.count, N * PER, case.name .. ": one read latency per read")
  t.eq(mismatches, 0, case.name .. ": reads in workers return what workers wrote")
  t.eq(file:size(), N * PER * BLOCK, case.name .. ": the file holds exactly that")
  t.eq(file:read(BLOCK, BLOCK), block_of(1, 1), case.name .. ": a blocking read sees it")
  file:close()
end

-- short reads at the end of the file, in a worker and outside
local path = dir .. "/io_uring"
local file = assert(disk.open(path))
t.eq(#file:read(N * PER * BLOCK - 10, 100), 10, "a blocking read stops at the end of the file")
local seen
local short = workers.run { n = 1, fn = function()
  seen = { file:read(N * PER * BLOCK - 10, 100), file:read(N * PER * BLOCK + 100, 10) }
end }
t.eq(#seen[1], 10, "a worker read stops at the end of the file")
t.eq(seen[2], "", "and past it reads nothing")
t.eq(short.bytes, 10, "only the bytes read are counted")
t.raises(function() file:write(0, "x") end, "is open for reading only", "a read-only handle refuses writes")
file:close()
t.raises(function() file:read(0, 1) end, "file handle is closed", "a closed handle says so")

-- O_DIRECT alignment in a worker: a failure, counted, with the rule said
local direct = assert(disk.open(dir .. "/io_uring_direct", { direct = true }))
local failed
local f = workers.run { n = 1, fn = function() failed = { direct:read(1, 4096) } end }
t.eq(failed[1], nil, "an unaligned direct read fails")
t.match(failed[2], "must be multiples of", "saying why")
t.eq(f.errors, 1, "and is counted as a failed op")
direct:close()

-- the safety rules: an existing file is only written with overwrite = true
local ok, message, code = disk.open(path, { write = true })
t.eq(ok, nil, "an existing file is not opened for writing")
t.match(message, "overwrite = true", "saying how to ask for it")
t.ok(code < 0, "with an errno")
local before = assert(disk.open(path)):read(0, BLOCK)
local again = assert(disk.open(path, { write = true, overwrite = true }))
again:close()
t.eq(assert(disk.open(path)):read(0, BLOCK), before, "opening with overwrite changes nothing by itself")
t.eq(disk.open(dir .. "/missing"), nil, "a missing file is not created for reading")
t.eq(sys.stat(dir .. "/missing"), nil, "and was not created")
local temp = assert(disk.open(dir .. "/temp", { write = true, remove = true }))
assert(temp:write(0, "abc"))
temp:close()
t.eq(sys.stat(dir .. "/temp"), nil, "remove = true removes a file the handle created")
t.raises(function() disk.open(path, { writ = true }) end, "writ", "unknown options are named")
t.raises(function() disk.open("") end, "path must not be empty", "an empty path is refused")

for _, name in ipairs { "io_uring", "io_uring_direct", "sync" } do os.remove(dir .. "/" .. name) end
assert(os.remove(dir))
return t.done()
