-- `cephmark swift-bench`: a drop-in for OpenStack's swift-bench (1.2.0) on cephmark's
-- engine: same flags, same [bench] config file, same phases (create containers, PUT -n
-- objects, GET -g random objects, DELETE them, delete the containers) and summary lines,
-- plus latency percentiles, time to first byte and failures by HTTP status. Credentials
-- come from the flags, the config file, ST_AUTH/ST_USER/ST_KEY, or the local cluster
-- (`cephmark cluster up --rgw`); they are never printed.

local args = require "cephmark.args"
local report = require "cephmark.report.swift_bench"
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"

local M = {}

local command = "swift-bench"

local usage = [[
usage: cephmark swift-bench [OPTIONS] [CONF_FILE]

A drop-in for swift-bench: PUTs -n objects of -s bytes with -c connections, GETs -g random
ones, then DELETEs them; prints swift-bench's "N PUTS **FINAL** [F failures], R/s" lines,
then latency percentiles, time to first byte and failures by HTTP status.

Time to first byte counts from a GET's start to the status line of its answer, for the
same GETs as the latency. A first byte at a few ms and an end 40 ms later on small
objects is the gateway's doing: radosgw's beast frontend without tcp_nodelay=1 holds the
body until the client acknowledges the headers (docs/rgw.md, "Time to first byte").

CONF_FILE is swift-bench's config file; its [bench] section may set auth, user, key,
auth_version, concurrency, put_concurrency, get_concurrency, del_concurrency, object_size,
lower_object_size, upper_object_size, num_objects, num_gets, delete, container_name,
num_containers, url, timeout, delay and policy_name. Flags win over the file.

options:
  -A, --auth URL              auth v1.0 URL (default: $ST_AUTH, else the local cluster's)
  -U, --user USER             user, e.g. benchmark:swift (default: $ST_USER)
  -K, --key KEY               key (default: $ST_KEY)
  -V, --auth_version VERSION  only 1.0 (radosgw's Swift auth)
  -u, --url URL               storage URL, instead of the one auth returns
  -c, --concurrency N         connections for every phase (default 10)
  --put-concurrency N, --get-concurrency N, --delete-concurrency N
  -s, --object-size SIZE      bytes per object (default 1; 4K, 1M accepted)
  -l, --lower-object-size SIZE  random sizes from this up to --object-size
  -n, --num-objects N         objects to PUT (default 1000)
  -g, --num-gets N            GETs of random objects (default 10000)
  -C, --num-containers N      containers to spread objects over (default 20)
  -x, --no-delete             keep the objects and containers
  -d, --delay SECONDS         wait before the DELETEs
  -P, --policy-name NAME      storage policy of the containers (X-Storage-Policy)
  --timeout SECONDS           connect timeout, and how long a request may make no progress
                              (default 10)
  --give-up SECONDS           stop a phase as failed when no request succeeded for this
                              long while requests kept failing (a gateway that stays
                              down); later phases and the deletes are then skipped
                              (default 30s; 0: never)
  --no-verify                 do not verify what GETs return
  --transport auto|native|curl  HTTP client for the phases (default auto: cephmark's own
                              HTTP/1.1 client for http:// storage URLs, libcurl otherwise)
  --format json               print one JSON document instead of the log lines
  -o, --output DIR            also write results.json and results.yaml into DIR

swift-bench logs to stderr; cephmark prints to stdout.]]

local spec = args.spec {
  ["-A"] = { key = "auth", value = true }, ["--auth"] = { key = "auth", value = true },
  ["-U"] = { key = "user", value = true }, ["--user"] = { key = "user", value = true },
  ["-K"] = { key = "key", value = true }, ["--key"] = { key = "key", value = true },
  ["-V"] = { key = "auth_version", value = true }, ["--auth_version"] = { key = "auth_version", value = true },
  ["--auth-version"] = { key = "auth_version", value = true },
  ["-u"] = { key = "url", value = true }, ["--url"] = { key = "url", value = true },
  ["-c"] = { key = "concurrency", value = true }, ["--concurrency"] = { key = "concurrency", value = true },
  ["--put-concurrency"] = { key = "put_concurrency", value = true },
  ["--get-concurrency"] = { key = "get_concurrency", value = true },
  ["--delete-concurrency"] = { key = "del_concurrency", value = true },
  ["-s"] = { key = "object_size", value = true }, ["--object-size"] = { key = "object_size", value = true },
  ["-l"] = { key = "lower_object_size", value = true },
  ["--lower-object-size"] = { key = "lower_object_size", value = true },
  ["-n"] = { key = "num_objects", value = true }, ["--num-objects"] = { key = "num_objects", value = true },
  ["-g"] = { key = "num_gets", value = true }, ["--num-gets"] = { key = "num_gets", value = true },
  ["-C"] = { key = "num_containers", value = true }, ["--num-containers"] = { key = "num_containers", value = true },
  ["-x"] = { key = "no_delete" }, ["--no-delete"] = { key = "no_delete" },
  ["-d"] = { key = "delay", value = true }, ["--delay"] = { key = "delay", value = true },
  ["-P"] = { key = "policy_name", value = true }, ["--policy-name"] = { key = "policy_name", value = true },
  ["--timeout"] = { key = "timeout", value = true },
  ["--no-verify"] = { key = "no_verify" },
  ["--give-up"] = { key = "give_up", value = true },
  ["--transport"] = { key = "transport", value = true },
  ["--format"] = { key = "format", value = true }, ["-f"] = { key = "format", value = true },
  ["-o"] = { key = "output", value = true }, ["--output"] = { key = "output", value = true },
}

-- swift-bench's defaults (CONF_DEFAULTS of swiftbench/cli)
local defaults = {
  auth_version = "1.0", put_concurrency = "10", get_concurrency = "10", del_concurrency = "10",
  lower_object_size = "10", upper_object_size = "10", object_size = "1", num_objects = "1000",
  num_gets = "10000", delete = "yes", num_containers = "20", timeout = "10", delay = "0",
}

-- [bench] keys swift-bench knows but cephmark cannot honour: refused rather than ignored
local unsupported = {
  use_proxy = "use_proxy = no talks to object servers directly, which radosgw does not have",
  object_sources = "object_sources (PUT bodies from files): cephmark writes verifiable payloads",
  bench_clients = "bench_clients: run one cephmark per client host instead",
}
local known_conf = {
  auth = true, user = true, key = true, auth_version = true, concurrency = true,
  put_concurrency = true, get_concurrency = true, del_concurrency = true, object_size = true,
  lower_object_size = true, upper_object_size = true, num_objects = true, num_gets = true,
  delete = true, container_name = true, num_containers = true, url = true, timeout = true,
  delay = true, policy_name = true, log_level = true, devices = true, account = true,
  use_proxy = true, object_sources = true,
}

local function fail(message, code) sys.fail(command .. ": " .. message, code) end

local function yes(text)
  local t = tostring(text):lower()
  return t == "yes" or t == "true" or t == "1" or t == "on" or t == "t" or t == "y"
end

local function size_value(name, text)
  local bytes, err = sys.parse_size(tostring(text))
  if not bytes then fail(name .. ": " .. err) end
  return bytes
end

local function parse(argv)
  local opts, positionals = args.command(command, argv, spec, usage)
  if not opts then return nil end
  if #positionals > 1 then
    fail(string.format("expected at most one config file, got %d arguments ('%s')", #positionals,
      table.concat(positionals, "', '")))
  end
  local conf = {}
  for k, v in pairs(defaults) do conf[k] = v end
  local conf_file = positionals[1]
  if conf_file then
    if not sys.stat(conf_file) then fail("No such conf file: " .. conf_file) end
    sys.note_input(conf_file)
    local bench = rgw.read_ini(conf_file).bench
    if not bench then fail(conf_file .. " has no [bench] section") end
    for key, value in pairs(bench) do
      if unsupported[key] and not (key == "use_proxy" and yes(value)) then
        fail(string.format("%s: %s is not supported", conf_file, unsupported[key]))
      end
      if not known_conf[key] then
        io.stderr:write(string.format("cephmark: swift-bench: %s: ignoring unknown key '%s'\n", conf_file, key))
      end
      conf[key] = value
    end
  end
  -- flags win over the file; -c sets all three concurrencies, as in swift-bench
  for key, value in pairs(opts) do conf[key] = value end
  local concurrency = conf.concurrency
  if concurrency and concurrency ~= "" then
    conf.put_concurrency, conf.get_concurrency, conf.del_concurrency = concurrency, concurrency, concurrency
  end
  if tostring(conf.auth_version) ~= "1.0" and tostring(conf.auth_version) ~= "1" then
    fail(string.format("auth version %s is not supported: radosgw's Swift API authenticates with "
      .. "v1.0 (auth_version = 1.0)", tostring(conf.auth_version)))
  end

  local o = {
    put_concurrency = args.integer(command, "put concurrency", tostring(conf.put_concurrency), 1, 65536),
    get_concurrency = args.integer(command, "get concurrency", tostring(conf.get_concurrency), 1, 65536),
    del_concurrency = args.integer(command, "delete concurrency", tostring(conf.del_concurrency), 1, 65536),
    num_objects = args.integer(command, "-n (num_objects)", tostring(conf.num_objects), 0, 1 << 40),
    num_gets = args.integer(command, "-g (num_gets)", tostring(conf.num_gets), 0, 1 << 40),
    num_containers = args.integer(command, "-C (num_containers)", tostring(conf.num_containers), 1, 1024),
    delete = not opts.no_delete and yes(conf.delete),
    policy = conf.policy_name,
    verify = not opts.no_verify,
    transport = opts.transport or "auto",
    json = false,
    output = opts.output,
    auth = conf.auth, user = conf.user, key = conf.key, url = conf.url,
  }
  o.timeout = args.seconds(command, "timeout", conf.timeout)
  if o.transport ~= "auto" and o.transport ~= "native" and o.transport ~= "curl" then
    fail("--transport must be auto, native or curl, got '" .. o.transport .. "'")
  end
  if opts.give_up then
    local seconds, err = sys.parse_duration(opts.give_up)
    if not seconds then fail("--give-up: " .. err) end
    o.give_up = seconds
  end
  local delay = sys.parse_duration(tostring(conf.delay))
  if not delay then fail("delay must be a number of seconds, got '" .. tostring(conf.delay) .. "'") end
  o.delay = delay

  -- sizes: swift-bench uses lower..upper when they differ, else object_size; -l LOW makes
  -- -s the upper end
  local low, high
  if opts.lower_object_size then
    low = size_value("-l (lower_object_size)", opts.lower_object_size)
    high = size_value("-s (object_size)", conf.object_size)
  else
    low = size_value("lower_object_size", conf.lower_object_size)
    high = size_value("upper_object_size", conf.upper_object_size)
    if low == high then
      low = size_value("-s (object_size)", conf.object_size)
      high = low
    end
  end
  if low > high then
    fail(string.format("object size range %d..%d: the lower size is above the upper size "
      .. "(-l must be below -s)", low, high))
  end
  o.size_min, o.size_max = low, high

  if opts.format and opts.format ~= "json" and opts.format ~= "plain" then
    fail(string.format("unknown format '%s' (expected json or plain)", opts.format))
  end
  o.json = opts.format == "json"
  local name = conf.container_name
  if not name or name == "" then
    local id = (sys.read_file("/proc/sys/kernel/random/uuid") or tostring(sys.getpid())):gsub("[^%x]", "")
    name = id
  end
  o.containers = {}
  for i = 0, o.num_containers - 1 do o.containers[#o.containers + 1] = string.format("%s_%d", name, i) end
  return o
end

function M.main(argv)
  local o = parse(argv)
  if not o then return sys.EXIT_OK end
  if o.output then require("cephmark.results").check_dir(o.output, "-o", command) end
  local conn <close>, where = rgw.swift_connect { auth = o.auth, user = o.user, key = o.key,
    storage_url = o.url ~= "" and o.url or nil, timeout = o.timeout }
  local out = o.json and function() end or print
  local function log(message) out(report.prefix("INFO") .. message) end

  -- containers first, as swift-bench does; a failure here is the gateway's, said once
  for _, container in ipairs(o.containers) do
    local ok, err = conn:create_container(container, o.policy and { policy = o.policy } or nil)
    if not ok then fail("cannot create the benchmark containers: " .. err, sys.EXIT_FAILED_OPS) end
  end

  local results, order = {}, {}
  local failed, interrupted, gave_up = false, false, false
  local function phase(op, title, bench)
    log("Auth version: 1.0")
    local started = sys.monotonic()
    local next_report = 2 -- swift-bench reports the first time after about 2 s, then every 15 s
    local errors = 0
    bench.on_second = function(second)
      errors = errors + second.errors
      local elapsed = sys.monotonic() - started
      if elapsed >= next_report then
        next_report = next_report + 15
        log(report.status_line(title, second.finished - errors, errors, elapsed, false))
      end
    end
    bench.transport = o.transport
    bench.give_up = o.give_up
    local result = conn:bench(bench)
    results[op] = result
    order[#order + 1] = op
    log(report.status_line(title, result.ops, result.errors, result.elapsed, true))
    for _, line in ipairs(report.detail_lines(title, result)) do out(line) end
    if result.errors > 0 or result.verify_failures > 0 then failed = true end
    if result.interrupted then interrupted = true end
    if result.gave_up then
      gave_up = true
      io.stdout:flush()
      io.stderr:write("cephmark: swift-bench: ", result.gave_up, "\n")
    end
    return result
  end

  local put
  if o.num_objects > 0 then
    put = phase("put", "PUTS", { op = "put", containers = o.containers, objects = o.num_objects,
      size = { o.size_min, o.size_max }, threads = o.put_concurrency,
      prefix = "cephmark_" .. string.format("%d", sys.getpid()) })
  else
    -- -n 0: nothing to write, read or delete (a bench with no object bound would run on)
    log("Auth version: 1.0")
    log(report.status_line("PUTS", 0, 0, 0, true))
    put = { objects = 0, objects_written = 0 }
  end
  if o.num_gets > 0 and not interrupted and not gave_up and (put.objects_written or 0) > 0 then
    phase("get", "GETS", { op = "get", from = put, ops = o.num_gets, threads = o.get_concurrency,
      random = true, verify = o.verify })
  end
  if o.delete and gave_up then
    -- every request would wait out the bound again: the operator removes them later
    out(report.prefix("WARNING") .. string.format("the gateway stayed down: %d containers (%s_*) and their objects are left",
      #o.containers, ((o.containers[1] or ""):gsub("_0$", ""))))
  elseif o.delete then
    if o.delay > 0 and not interrupted then
      log(string.format("Delay before DELETE request %g sec", o.delay))
      sys.sleep(o.delay)
    end
    if put.objects > 0 then
      phase("delete", "DEL", { op = "delete", from = put, threads = o.del_concurrency, ignore_interrupt = true })
    end
    for _, container in ipairs(o.containers) do
      local ok, err, code = conn:delete_container(container)
      if not ok and code ~= 409 then
        out(report.prefix("WARNING") .. string.format("Unable to delete container '%s': %s", container, err))
      end
    end
  end

  if o.json then
    local document = { auth = where.auth_url, user = where.user, containers = #o.containers,
      object_size = { min = o.size_min, max = o.size_max } }
    for _, op in ipairs(order) do document[report.titles[op]] = report.json_phase(results[op]) end
    print(require("cephmark.json").encode(document))
  end
  if o.output then
    require("cephmark.results").write_dir(o.output, {
      command = command, auth_url = where.auth_url, user = where.user, containers = o.containers,
      size_min = o.size_min, size_max = o.size_max, num_objects = o.num_objects, num_gets = o.num_gets,
      concurrency = { put = o.put_concurrency, get = o.get_concurrency, delete = o.del_concurrency },
      phases = results,
    })
  end
  if interrupted then return sys.EXIT_INTERRUPTED end
  if failed then return sys.EXIT_FAILED_OPS end
  return sys.EXIT_OK
end

return M
