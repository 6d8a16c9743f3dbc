-- `cephmark cleanup --leftovers`: the way back after a run was SIGKILLed (or its host was
-- lost). It finds, through cephmark's owner records only, what runs whose process is gone
-- left behind: pools a scenario created (and the EC profile it created with them), and
-- runs' objects and metadata in pools cephmark did not create. It lists them; --yes
-- removes them. Nothing whose holder still lives, and nothing without an owner record, is
-- ever listed.

local args = require "cephmark.args"
local connection = require "cephmark.connection"
local owner = require "cephmark.rados.owner"
local sys = require "cephmark.sys"

local M = {}

local usage = [[
usage: cephmark cleanup --leftovers [--yes] [-p POOL] [options]

Lists what cephmark runs that are gone (killed, crashed, their host lost) left in the
cluster, one line per item, and with --yes removes it:
  - pools a scenario created (each carries an owner record in its "cephmark" namespace and
    the application tag cephmark_owner), with the EC profile the run created for the pool;
  - benchmark runs (objects, metadata) in pools cephmark did not create: writes killed
    before they finished, and scenario writes that were to be removed at the run's end.
A run is gone when its process is: on this host, its pid no longer runs the process that
started at the recorded time; on another host, no watch on its owner record answers.
Anything whose holder lives, and anything without cephmark's owner record, is left alone.
Kept runs (rados-bench --no-cleanup) and kept pools (keep = true, -p keep_pools=true,
pools made through the Lua API's cluster:pool_create) are not leftovers.

options:
  --leftovers               find leftovers (required: the only mode so far)
  --yes                     remove what is listed (default: list only)
  -p, --pool POOL           look in this pool only
  -c, --conf CONF / --id NAME / -k, --keyring FILE / --timeout SECONDS
                            as for `cephmark run`]]

local spec = args.spec({
  ["--leftovers"] = { key = "leftovers" },
  ["--yes"] = { key = "yes" }, ["-y"] = { key = "yes" },
  ["-p"] = { key = "pool", value = true }, ["--pool"] = { key = "pool", value = true },
}, args.CONNECTION)

local command = "cleanup"

-- The leftovers in one pool: the pool itself when a gone run created it, else the runs
-- whose markers say a gone run wrote them. live counts what was skipped as alive.
local function scan_pool(cluster, info, items, live)
  local name = info.pool_name
  local pool = cluster:pool(name)
  if not pool then return end
  local record = owner.read_pool_owner(pool)
  if record and record.keep ~= "0" then
    -- kept on purpose (keep = true, keep_pools, the Lua API): the operator's now
    pool:close()
    return
  end
  if record then
    if owner.state(record, pool, owner.POOL_OBJECT, owner.NAMESPACE) ~= "gone" then
      live.pools = live.pools + 1
    else
      local profile = record.profile_created == "1" and record.profile ~= "" and record.profile or nil
      items[#items + 1] = { kind = "pool", pool = name, record = record, profile = profile }
    end
    pool:close()
    return
  end
  local markers = pool:objects(owner.RUN_PREFIX, owner.NAMESPACE) or {}
  table.sort(markers)
  for _, marker in ipairs(markers) do
    local run = owner.parse(pool:get(marker, owner.NAMESPACE))
    if run and run.run_name then
      if owner.state(run, pool, marker, owner.NAMESPACE) ~= "gone" then
        live.runs = live.runs + 1
      else
        items[#items + 1] = { kind = "run", pool = name, record = run, run_name = run.run_name,
          marker = marker, handle = pool }
      end
    end
  end
end

local function describe(item)
  if item.kind == "pool" then
    return string.format("pool %s%s: created by a cephmark run that is gone (%s)", item.pool,
      item.profile and (", with erasure-code profile " .. item.profile) or "", owner.describe(item.record))
  end
  return string.format("run '%s' in pool %s: objects %s_object*, its metadata and marker, written by a cephmark run that is gone (%s)",
    item.run_name, item.pool, item.record.prefix or "?", owner.describe(item.record))
end

local function remove(cluster, item, profiles_in_use)
  if item.kind == "pool" then
    -- the profile goes with the pool only when no other pool uses it
    local profile = item.profile
    if profile and (profiles_in_use[profile] or 0) > 1 then profile = nil end
    local ok, err = cluster:pool_delete(item.pool, { owner = item.record.run_id, profile = profile })
    if not ok then return nil, err end
    if item.profile then profiles_in_use[item.profile] = (profiles_in_use[item.profile] or 1) - 1 end
    return string.format("removed pool %s%s", item.pool, profile and (" and erasure-code profile " .. profile) or "")
  end
  local ok, result = pcall(item.handle.bench, item.handle, { op = "cleanup", run_name = item.run_name })
  if not ok then
    local message = tostring((sys.error_info(result))):gsub("^bench: ", "")
    if message:match("^no benchmark run") then
      -- the metadata went already: the marker is all that is left of the run
      local deleted, derr = item.handle:delete(item.marker, owner.NAMESPACE)
      if not deleted then return nil, derr end
      return string.format("removed the marker of run '%s' in pool %s (its metadata was gone)", item.run_name, item.pool)
    end
    return nil, message
  end
  if result.errors > 0 then
    return nil, string.format("%d removes failed; the first error: %s", result.errors, result.first_error or "?")
  end
  return string.format("removed run '%s' in pool %s (%d objects)", item.run_name, item.pool, result.ops)
end

function M.main(argv)
  local opts, positionals = args.command(command, argv, spec, usage)
  if not opts then return sys.EXIT_OK end
  if #positionals > 0 then
    sys.fail(string.format("%s: unexpected argument '%s' (see `cephmark cleanup --help`)", command, positionals[1]))
  end
  if not opts.leftovers then
    sys.fail(command .. ": say what to clean up: --leftovers (see `cephmark cleanup --help`)")
  end
  connection.configure(args.connection(command, opts))
  local cluster <close> = connection.connect()
  local pools, err = cluster:mon_command { prefix = "osd pool ls", detail = "detail" }
  if type(pools) ~= "table" then sys.fail(command .. ": cannot list pools: " .. tostring(err)) end
  table.sort(pools, function(a, b) return a.pool_name < b.pool_name end)

  local items, live, profiles_in_use = {}, { pools = 0, runs = 0 }, {}
  local found = false
  for _, info in ipairs(pools) do
    local used = info.erasure_code_profile
    if used and used ~= "" then profiles_in_use[used] = (profiles_in_use[used] or 0) + 1 end
    if not opts.pool or info.pool_name == opts.pool then
      found = true
      scan_pool(cluster, info, items, live)
    end
  end
  if opts.pool and not found then sys.fail(string.format("%s: pool '%s' does not exist", command, opts.pool)) end

  local failed = 0
  for _, item in ipairs(items) do
    if opts.yes then
      local line, rerr = remove(cluster, item, profiles_in_use)
      if line then
        print(line)
      else
        failed = failed + 1
        io.stderr:write(string.format("cephmark: cleanup: %s: %s\n", describe(item), tostring(rerr)))
      end
    else
      print(describe(item))
    end
  end
  local skipped = {}
  local function count(n, what) return string.format("%d %s%s", n, what, n == 1 and "" or "s") end
  if live.pools > 0 then skipped[#skipped + 1] = count(live.pools, "pool") end
  if live.runs > 0 then skipped[#skipped + 1] = count(live.runs, "run") end
  local note = #skipped > 0 and string.format(" (%s of live cephmark runs left alone)", table.concat(skipped, " and ")) or ""
  if #items == 0 then
    print("no leftovers of cephmark runs that are gone" .. note)
  elseif not opts.yes then
    print(string.format("%s%s; remove them with `cephmark cleanup --leftovers --yes`", count(#items, "leftover"), note))
  end
  if failed > 0 then return sys.EXIT_FAILED_OPS end
  return sys.EXIT_OK
end

return M
