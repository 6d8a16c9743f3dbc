-- `cephmark rbd-bench`: a drop-in for `rbd bench` that takes its flags and prints its
-- layout (the "bench  type ..." line, the SEC/OPS/OPS/SEC/BYTES/SEC table, the elapsed
-- line and, for readwrite, the read_ops/write_ops lines), then latency percentiles,
-- errors and verify failures. `--format json` prints one document instead, and -o DIR
-- writes the full result. The I/O runs on cephmark's engine through cephmark.rbd.

local args = require "cephmark.args"
local connection = require "cephmark.connection"
local report = require "cephmark.report.rbd_bench"
local sys = require "cephmark.sys"

local M = {}

local usage = [[
usage: cephmark rbd-bench [POOL/]IMAGE --io-type read|write|readwrite [options]

A drop-in for `rbd bench`: same flags, same output layout, plus latency percentiles, errors
and verify failures after rbd bench's own lines. The image must exist (rbd create).

options:
  --io-type TYPE            read, write or readwrite (also rw); required
  --io-size SIZE            bytes per I/O, a multiple of 512, e.g. 4K, 64K (default 4K)
  --io-threads N            I/Os in flight (default 16)
  --io-total SIZE           stop after this many bytes (default 1G); 0 with --seconds: no
                            byte bound
  --io-pattern PATTERN      seq or rand (also sequential, random; default seq)
  --rw-mix-read PERCENT     readwrite: the share of reads, 0 to 100 (default 50)
  -p, --pool POOL           the image's pool (default rbd), when IMAGE has no POOL/
  --image IMAGE             the image, instead of the positional IMAGE
  --seconds DURATION        also stop after this long, e.g. 30, 30s, 2m (rbd bench has no
                            time bound; the run ends at whichever bound comes first)
  --cache on|off            librbd's cache for this run (default: the cluster's rbd_cache)
  --no-verify               do not verify what reads return
  --format json             print one JSON document instead of the text layout
  -o, --output DIR          also write results.json and results.yaml into DIR
  -c, --conf CONF           ceph.conf (default: $CEPH_CONF, /etc/ceph/ceph.conf, else the
                            local cluster)
  --id NAME                 client id (default admin)
  -k, --keyring FILE        keyring
  --timeout SECONDS         connect and mon command timeout (default 10)

Rates are in binary units (MiB = 2^20 bytes), as rbd bench prints them.]]

local spec = args.spec({
  ["--io-type"] = { key = "io_type", value = true },
  ["--io-size"] = { key = "io_size", value = true },
  ["--io-threads"] = { key = "io_threads", value = true },
  ["--io-total"] = { key = "io_total", value = true },
  ["--io-pattern"] = { key = "io_pattern", value = true },
  ["--rw-mix-read"] = { key = "rw_mix_read", value = true },
  ["-p"] = { key = "pool", value = true }, ["--pool"] = { key = "pool", value = true },
  ["--image"] = { key = "image", value = true },
  ["--namespace"] = { key = "namespace", value = true },
  ["--seconds"] = { key = "seconds", value = true },
  ["--cache"] = { key = "cache", value = true },
  ["--no-verify"] = { key = "no_verify" },
  ["--format"] = { key = "format", value = true }, ["-f"] = { key = "format", value = true },
  ["-o"] = { key = "output", value = true }, ["--output"] = { key = "output", value = true },
}, args.CONNECTION)

local command = "rbd-bench"

-- rbd's rbd_default_pool: an image spec without a pool means this one
local DEFAULT_POOL = "rbd"
local SECTOR = 512

local function fail(message) sys.fail(command .. ": " .. message) end

local io_types = { read = "read", write = "write", readwrite = "readwrite", rw = "readwrite" }
local io_patterns = { seq = "seq", sequential = "seq", rand = "rand", random = "rand" }

-- rbd's image spec is [pool/[namespace/]]image[@snap]; cephmark.rbd opens images by pool
-- and name, so namespaces and snapshots are refused rather than silently ignored.
local function parse_image_spec(text)
  if text:find("@", 1, true) then
    fail(string.format("snapshots are not supported: image spec '%s' (expected [POOL/]IMAGE)", text))
  end
  local parts = {}
  for part in (text .. "/"):gmatch("([^/]*)/") do parts[#parts + 1] = part end
  if #parts > 2 then
    fail(string.format("namespaces are not supported: image spec '%s' (expected [POOL/]IMAGE)", text))
  end
  for _, part in ipairs(parts) do
    if part == "" then fail(string.format("bad image spec '%s' (expected [POOL/]IMAGE)", text)) end
  end
  if #parts == 2 then return parts[1], parts[2] end
  return nil, parts[1]
end

local function size_option(flag, text, default)
  if text == nil then return default end
  local bytes, err = sys.parse_size(text)
  if not bytes then fail(flag .. ": " .. err) end
  return bytes
end

-- Everything that can be checked without the cluster, in the order rbd bench checks it.
local function parse(argv)
  local opts, positionals = args.command(command, argv, spec, usage)
  if not opts then return nil end
  if #positionals > 1 then
    fail(string.format("expected one image spec [POOL/]IMAGE, got %d arguments ('%s')", #positionals,
      table.concat(positionals, "', '")))
  end
  if opts.namespace then fail("namespaces are not supported (--namespace)") end
  local pool, image
  if positionals[1] then
    if opts.image then fail("give the image once: as [POOL/]IMAGE or with --image, not both") end
    pool, image = parse_image_spec(positionals[1])
  else
    image = opts.image
  end
  if not image then fail("an image is required: POOL/IMAGE, or --pool POOL --image IMAGE") end
  pool = pool or opts.pool or DEFAULT_POOL

  if not opts.io_type then fail("--io-type is required (read, write or readwrite)") end
  local io_type = io_types[opts.io_type]
  if not io_type then
    fail(string.format("unknown io type '%s' (expected read, write or readwrite)", opts.io_type))
  end
  local io_size = size_option("--io-size", opts.io_size, 4096)
  if io_size == 0 then fail("--io-size must be greater than zero") end
  -- a block device is addressed in 512-byte sectors; rbd bench would accept 1000 and
  -- split it into partial sectors, which no real block I/O does
  if io_size % SECTOR ~= 0 then
    fail(string.format("--io-size must be a multiple of %d bytes, got %d", SECTOR, io_size))
  end
  if io_size >= 1 << 32 then fail("--io-size must be less than 4 GiB") end
  local threads = args.integer(command, "--io-threads", opts.io_threads or "16", 1, 65536)
  local io_total = size_option("--io-total", opts.io_total, 1 << 30)
  local pattern = "seq"
  if opts.io_pattern then
    pattern = io_patterns[opts.io_pattern]
    if opts.io_pattern == "full-seq" then
      fail("io pattern 'full-seq' is not supported (expected seq or rand)")
    end
    if not pattern then
      fail(string.format("unknown io pattern '%s' (expected seq or rand)", opts.io_pattern))
    end
  end
  local rw_mix_read = args.integer(command, "--rw-mix-read", opts.rw_mix_read or "50", 0, 100)
  local seconds
  if opts.seconds then
    local value, err = sys.parse_duration(opts.seconds)
    if not value then fail("--seconds: " .. err) end
    if value <= 0 then fail("--seconds must be more than 0, got '" .. opts.seconds .. "'") end
    seconds = value
  end
  if io_total == 0 and not seconds then
    fail("--io-total 0 needs --seconds: a run needs a bound")
  end
  local cache
  if opts.cache then
    local choices = { on = true, off = false, ["true"] = true, ["false"] = false }
    cache = choices[opts.cache]
    if cache == nil then fail(string.format("--cache must be on or off, got '%s'", opts.cache)) end
  end
  if opts.format and opts.format ~= "json" and opts.format ~= "plain" then
    fail(string.format("unknown format '%s' (expected json or plain)", opts.format))
  end
  return {
    pool = pool, image = image, io_type = io_type, io_size = io_size, threads = threads,
    bytes = io_total, pattern = pattern, rw_mix_read = io_type == "readwrite" and rw_mix_read or nil,
    seconds = seconds, cache = cache, verify = not opts.no_verify, json = opts.format == "json",
    output = opts.output, connection = args.connection(command, opts),
  }
end

-- Opens pool/image, or fails with the operator's one line: a missing image says which
-- pool was searched, since the default pool (rbd) is easy to forget.
local function open_image(rbd, pool, o)
  local image, err, code = rbd.open(pool, o.image, { cache = o.cache })
  if image then return image end
  if code == -2 then fail(string.format("image '%s' does not exist in pool '%s'", o.image, o.pool)) end
  fail(tostring(err))
end

function M.main(argv)
  local o = parse(argv)
  if not o then return sys.EXIT_OK end
  local has_rbd, rbd = pcall(require, "cephmark.rbd")
  if not has_rbd then fail("this cephmark was built without RBD support (the cephmark.rbd module)") end

  connection.configure(o.connection)
  if o.output then require("cephmark.results").check_dir(o.output, "-o", command) end
  local cluster <close> = connection.connect()
  local pool, err = cluster:pool(o.pool)
  if not pool then fail(err) end
  -- closed before the cluster (to-be-closed variables close in reverse): librbd cannot
  -- close an image once its cluster connection has shut down
  local image <close> = open_image(rbd, pool, o)
  local info = image:info()
  if o.io_size > info.size then
    fail(string.format("--io-size (%s) is larger than the image '%s' (%s)", report.byte_u(o.io_size),
      o.image, report.byte_u(info.size)))
  end

  local printer = report.new { json = o.json, io_type = o.io_type, io_size = o.io_size,
    threads = o.threads, bytes = o.bytes, pattern = o.pattern, rw_mix_read = o.rw_mix_read }
  printer:start()
  local ok, result = pcall(image.bench, image, {
    io_type = o.io_type, io_size = o.io_size, threads = o.threads, pattern = o.pattern,
    rw_mix_read = o.rw_mix_read, bytes = o.bytes > 0 and o.bytes or nil, seconds = o.seconds,
    verify = o.verify, on_second = function(second) printer:second(second) end,
  })
  if not ok then
    local message = sys.error_info(result)
    fail((tostring(message):gsub("^bench: ", "")))
  end
  printer:summary(result)

  if o.output then
    require("cephmark.results").write_dir(o.output, {
      command = command, pool = o.pool, image = o.image, io_type = o.io_type, io_size = o.io_size,
      threads = o.threads, io_total = o.bytes, pattern = o.pattern, rw_mix_read = o.rw_mix_read,
      seconds = o.seconds, cache = o.cache, verify = o.verify, image_info = info, result = result,
      rbd_bench = report.json_document(result, printer.options, printer.rows),
    })
  end
  image:close()
  pool:close()
  if result.interrupted then return sys.EXIT_INTERRUPTED end
  if (result.errors or 0) > 0 or (result.verify_failures or 0) > 0 then return sys.EXIT_FAILED_OPS end
  return sys.EXIT_OK
end

return M
