-- smoke-rados: proves the stack end to end on any cluster. It creates a replicated pool
-- (size 3) and an erasure-coded pool (k=2, m=1), writes objects to each, reads them back,
-- compares every byte, prints what it measured, and deletes the pools it created.
--
--   cephmark run scenarios/smoke-rados.lua [-p objects=32] [-p size=65536]

local rados = require "cephmark.rados"
local sys = require "cephmark.sys"

local params = ...
local objects = math.tointeger(tonumber(params.objects or "32"))
local size = math.tointeger(tonumber(params.size or "65536"))
if not objects or objects < 1 then sys.fail("objects must be a positive integer, got " .. tostring(params.objects)) end
if not size or size < 1 then sys.fail("size must be a positive integer, got " .. tostring(params.size)) end

local cluster <close> = assert(rados.connect())
local up = cluster:osd_count()
print(string.format("cluster %s: %d OSDs up", cluster:fsid(), up))

-- deterministic, non-repeating content per object, so a misplaced read shows up
local function content(name)
  local seed = 0
  for i = 1, #name do seed = (seed * 31 + name:byte(i)) % 2147483647 end
  local chunk = {}
  for i = 1, 256 do
    seed = (seed * 1103515245 + 12345) % 2147483648
    chunk[i] = string.char(seed % 256)
  end
  local block = table.concat(chunk)
  return (block:rep(size // #block + 1)):sub(1, size)
end

local pools = {
  { name = "cephmark-smoke-replicated", type = "replicated", size = 3 },
  { name = "cephmark-smoke-ec", type = "erasure", k = 2, m = 1 },
}

local failed = 0
print(string.format("%-28s %8s %10s %12s %12s %10s", "pool", "objects", "bytes", "write MiB/s",
  "read MiB/s", "mismatch"))
for _, spec in ipairs(pools) do
  local created, err = cluster:pool_create(spec)
  if not created then sys.fail(err) end
  local ok, run_err = pcall(function()
    local pool <close> = assert(cluster:pool(spec.name))
    local start = sys.monotonic()
    for i = 1, objects do
      local name = string.format("smoke.%d", i)
      assert(pool:write_full(name, content(name)))
    end
    local write_seconds = sys.monotonic() - start
    local mismatches = 0
    start = sys.monotonic()
    for i = 1, objects do
      local name = string.format("smoke.%d", i)
      local data, read_err = pool:read(name)
      if data ~= content(name) then
        mismatches = mismatches + 1
        io.stderr:write(string.format("mismatch: %s/%s %s\n", spec.name, name, read_err or ""))
      end
    end
    local read_seconds = sys.monotonic() - start
    local mib = objects * size / 1048576
    print(string.format("%-28s %8d %10d %12.2f %12.2f %10d", spec.name, objects, objects * size,
      mib / write_seconds, mib / read_seconds, mismatches))
    failed = failed + mismatches
  end)
  assert(cluster:pool_delete(spec.name, { profile = created.profile }))
  if not ok then error(run_err, 0) end
end
return { failed_ops = failed }
