-- `cephmark rados-cleanup`: like `rados -p POOL cleanup`: removes a benchmark run's
-- objects (found through its metadata object), many removes in flight. Without metadata it
-- removes only by a prefix the operator names; unlike rados, it never falls back to a
-- default prefix: it says which benchmark objects it sees and the command to remove them.

local args = require "cephmark.args"
local connection = require "cephmark.connection"
local sys = require "cephmark.sys"

local M = {}

local usage = [[
usage: cephmark rados-cleanup -p POOL [--run-name NAME] [--prefix PREFIX] [options]

Removes the objects of a benchmark run. The run is found through its metadata object
(--run-name, default cephmark_bench_last_metadata). Without metadata, only --prefix
selects objects: those named PREFIX..._object<N> (benchmark objects; other objects under
the prefix are kept). With neither, nothing is removed: the command lists the benchmark
object prefixes it sees in the pool, with counts, and the command that removes each. An
empty prefix is refused. A run still being written by a live process is refused.

options:
  -p, --pool POOL           the pool
  --run-name NAME           the run's metadata object
  --prefix PREFIX           object-name prefix, used when the metadata is missing
  -t, --concurrent-ios N    removes in flight (default 256)
  -c, --conf CONF / --id NAME / -k, --keyring FILE / --timeout SECONDS
                            as for `cephmark run`]]

local spec = args.spec({
  ["-p"] = { key = "pool", value = true }, ["--pool"] = { key = "pool", value = true },
  ["--run-name"] = { key = "run_name", value = true },
  ["--prefix"] = { key = "prefix", value = true },
  ["-t"] = { key = "threads", value = true }, ["--concurrent-ios"] = { key = "threads", value = true },
}, args.CONNECTION)

function M.main(argv)
  local command = "rados-cleanup"
  local opts, positionals = args.command(command, argv, spec, usage)
  if not opts then return sys.EXIT_OK end
  if not opts.pool then sys.fail(command .. ": a pool is required (-p POOL)") end
  args.at_most(command, positionals, 0)
  if opts.prefix == "" then
    sys.fail(command .. ": --prefix is empty (an unset variable?): an empty prefix names every object in the pool; refused")
  end
  local threads = args.integer(command, "-t", opts.threads or "256", 1, 65536)
  connection.configure(args.connection(command, opts))
  local cluster <close> = connection.connect()
  local pool <close>, err = cluster:pool(opts.pool)
  if not pool then sys.fail(command .. ": " .. err) end
  local run_name = opts.run_name or "cephmark_bench_last_metadata"
  if not opts.prefix then
    local text, get_err, code = pool:get(run_name)
    if not text and code == -2 then M.refuse_without_run(pool, opts.pool, run_name) end
    if not text then sys.fail(command .. ": " .. tostring(get_err)) end
  end
  local ok, result = pcall(pool.bench, pool, { op = "cleanup", run_name = opts.run_name,
    prefix = opts.prefix, threads = threads })
  if not ok then
    local message, code = sys.error_info(result)
    sys.fail(command .. ": " .. tostring(message):gsub("^bench: ", ""), code)
  end
  print(string.format("Removed %d objects", result.ops))
  if result.interrupted then return sys.EXIT_INTERRUPTED end
  if result.errors > 0 then
    io.stderr:write(string.format("%d removes failed; the first error: %s\n", result.errors,
      result.first_error or "?"))
    return sys.EXIT_FAILED_OPS
  end
  return sys.EXIT_OK
end

-- No metadata and no prefix: what rados' own cleanup would guess at (benchmark_data), said
-- instead, with the counts and the exact command for each set of benchmark objects.
function M.refuse_without_run(pool, pool_name, run_name)
  local names, err = pool:objects()
  if not names then sys.fail("rados-cleanup: " .. tostring(err)) end
  local counts, prefixes = {}, {}
  for _, name in ipairs(names) do
    local prefix = name:match("^(.+)_object%d+$")
    if prefix then
      if not counts[prefix] then prefixes[#prefixes + 1] = prefix end
      counts[prefix] = (counts[prefix] or 0) + 1
    end
  end
  table.sort(prefixes)
  local head = string.format("rados-cleanup: no run metadata '%s' in pool %s and no --prefix: nothing removed", run_name, pool_name)
  if #prefixes == 0 then
    sys.fail(head .. "; the pool holds no benchmark objects (<prefix>_object<N>)")
  end
  local parts = {}
  for _, prefix in ipairs(prefixes) do parts[#parts + 1] = string.format("%s (%d objects)", prefix, counts[prefix]) end
  sys.fail(string.format("%s; benchmark objects in the pool: %s; remove a set with `cephmark rados-cleanup -p %s --prefix %s`",
    head, table.concat(parts, ", "), pool_name, prefixes[1]))
end

return M
