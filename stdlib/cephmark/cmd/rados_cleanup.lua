-- `cephmark rados-cleanup`: like `rados -p POOL cleanup`: removes a benchmark run's
-- objects (found through its metadata object), many removes in flight; when the metadata
-- is missing (an interrupted run), removes by object-name prefix.

local args = require "cephmark.args"
local connection = require "cephmark.connection"
local sys = require "cephmark.sys"

local M = {}

local usage = [[
usage: cephmark rados-cleanup -p POOL [--run-name NAME] [--prefix PREFIX] [options]

Removes the objects of a benchmark run. The run is found through its metadata object
(--run-name, default cephmark_bench_last_metadata); without metadata, every object whose
name starts with --prefix (default benchmark_data_) is removed.

options:
  -p, --pool POOL           the pool
  --run-name NAME           the run's metadata object
  --prefix PREFIX           object-name prefix, used when the metadata is missing
  -t, --concurrent-ios N    removes in flight (default 256)
  -c, --conf CONF / --id NAME / -k, --keyring FILE / --timeout SECONDS
                            as for `cephmark run`]]

local spec = {
  ["-p"] = { key = "pool", value = true }, ["--pool"] = { key = "pool", value = true },
  ["--run-name"] = { key = "run_name", value = true },
  ["--prefix"] = { key = "prefix", value = true },
  ["-t"] = { key = "threads", value = true }, ["--concurrent-ios"] = { key = "threads", value = true },
  ["-c"] = { key = "conf", value = true }, ["--conf"] = { key = "conf", value = true },
  ["--id"] = { key = "id", value = true },
  ["-k"] = { key = "keyring", value = true }, ["--keyring"] = { key = "keyring", value = true },
  ["--timeout"] = { key = "timeout", value = true },
  ["-h"] = { key = "help" }, ["--help"] = { key = "help" },
}

function M.main(argv)
  local command = "rados-cleanup"
  local opts, positionals = args.parse(command, argv, spec)
  if opts.help then
    print(usage)
    return sys.EXIT_OK
  end
  if not opts.pool then sys.fail(command .. ": a pool is required (-p POOL)") end
  if #positionals > 0 then
    sys.fail(string.format("%s: unexpected argument '%s'", command, positionals[1]))
  end
  local threads = args.integer(command, "-t", opts.threads or "256", 1, 65536)
  connection.configure { conf = opts.conf, id = opts.id, keyring = opts.keyring,
    timeout = opts.timeout and args.seconds(command, "--timeout", opts.timeout) }
  local cluster <close> = connection.connect()
  local pool <close>, err = cluster:pool(opts.pool)
  if not pool then sys.fail(command .. ": " .. err) end
  local ok, result = pcall(pool.bench, pool, { op = "cleanup", run_name = opts.run_name,
    prefix = opts.prefix, threads = threads })
  if not ok then sys.fail(command .. ": " .. tostring((sys.error_info(result)))) end
  print(string.format("Removed %d objects", result.ops))
  if result.interrupted then return sys.EXIT_INTERRUPTED end
  if result.errors > 0 then
    io.stderr:write(string.format("%d removes failed; the first error: %s\n", result.errors,
      result.first_error or "?"))
    return sys.EXIT_FAILED_OPS
  end
  return sys.EXIT_OK
end

return M
