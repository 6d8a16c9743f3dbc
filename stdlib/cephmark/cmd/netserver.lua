-- `cephmark netserver`: the server side of the network baseline (cephmark.socket): it
-- accepts the TCP streams of `socket.bench` (bandwidth in either direction, request/response
-- latency) and reports what it received. It runs until Ctrl-C, or for one test with --once.
-- The serving itself is C (threads, one per connection); this file is its command line.

local args = require "cephmark.args"
local socket = require "cephmark.socket"
local sys = require "cephmark.sys"

local M = {}

local usage = string.format([[
usage: cephmark netserver [--port PORT] [--bind ADDRESS] [--once] [--quiet]

Serves cephmark's network baseline (like `iperf3 -s`): run it on one host, then a scenario's
socket phase (or scenarios/baseline.lua with -p peers=HOST) on another.

options:
  -p, --port PORT           TCP port to listen on (default %d; 0 picks a free one)
  -B, --bind ADDRESS        address to listen on (default: every IPv4 address)
  -1, --once                exit after serving one test
  -q, --quiet               no line per test
  -h, --help                show this help]], socket.DEFAULT_PORT)

local spec = {
  ["-p"] = { key = "port", value = true }, ["--port"] = { key = "port", value = true },
  ["-B"] = { key = "bind", value = true }, ["--bind"] = { key = "bind", value = true },
  ["-1"] = { key = "once" }, ["--once"] = { key = "once" },
  ["-q"] = { key = "quiet" }, ["--quiet"] = { key = "quiet" },
  ["-h"] = { key = "help" }, ["--help"] = { key = "help" },
}

function M.main(argv)
  local command = "netserver"
  local opts, positionals = args.parse(command, argv, spec)
  if opts.help then
    print(usage)
    return sys.EXIT_OK
  end
  if #positionals > 0 then
    sys.fail(string.format("%s: unexpected argument '%s'", command, positionals[1]))
  end
  local port = args.integer(command, "--port", opts.port or tostring(socket.DEFAULT_PORT), 0, 65535)
  socket.serve { port = port, bind = opts.bind, once = opts.once or false, quiet = opts.quiet or false,
    on_listen = function(bound)
      print(string.format("netserver: listening on %s:%d", opts.bind or "0.0.0.0", bound))
      io.stdout:flush()
    end }
  return sys.EXIT_OK
end

return M
