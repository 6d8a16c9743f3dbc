-- `cephmark netserver`: the server side of the network baseline (cephmark.socket): it
-- accepts the TCP streams of `socket.bench` (bandwidth in either direction, request/response
-- latency) and reports what it received. It runs until Ctrl-C, or for one test with --once.
-- The serving itself is C (threads, one per connection); this file is its command line.

local args = require "cephmark.args"
local socket = require "cephmark.socket"
local sys = require "cephmark.sys"

local M = {}

local usage = string.format([[
usage: cephmark netserver [--port PORT] [--bind ADDRESS] [--token-file FILE] [--max-memory SIZE]
                          [--once] [--quiet]

Serves cephmark's network baseline (like `iperf3 -s`): run it on one host, then a scenario's
socket phase (or scenarios/baseline.lua with -p peers=HOST) on another.

It listens on loopback unless told otherwise: to serve other hosts, give --bind 0.0.0.0
(every IPv4 address) or one address, and a token. With a token, a client that does not send
it is refused before the server allocates anything for it; clients give it with
token_file= (socket.bench; -p net_token_file=FILE in scenarios/baseline.lua) or
$CEPHMARK_NET_TOKEN. The token travels in clear: it keeps out other users and scanners,
not someone who can read the traffic. Each connection's buffer is at most 256K whatever a
client asks for, and all of them together at most --max-memory; a connection beyond that
is refused.

options:
  -p, --port PORT           TCP port to listen on (default %d; 0 picks a free one)
  -B, --bind ADDRESS        address to listen on (default 127.0.0.1: this host only)
  --token-file FILE         refuse clients that do not send the token FILE holds (default:
                            $CEPHMARK_NET_TOKEN when set; trailing newlines are not part of it)
  --max-memory SIZE         buffer memory for all connections together (default 64M)
  -1, --once                exit after serving one test
  -q, --quiet               no line per test
  -h, --help                show this help]], socket.DEFAULT_PORT)

local spec = args.spec {
  ["-p"] = { key = "port", value = true }, ["--port"] = { key = "port", value = true },
  ["-B"] = { key = "bind", value = true }, ["--bind"] = { key = "bind", value = true },
  ["--token-file"] = { key = "token_file", value = true },
  ["--max-memory"] = { key = "max_memory", value = true },
  ["-1"] = { key = "once" }, ["--once"] = { key = "once" },
  ["-q"] = { key = "quiet" }, ["--quiet"] = { key = "quiet" },
}

local function loopback(address)
  return address == "localhost" or address:match("^127%.") ~= nil or address == "::1"
end

function M.main(argv)
  local command = "netserver"
  local opts, positionals = args.command(command, argv, spec, usage)
  if not opts then return sys.EXIT_OK end
  args.at_most(command, positionals, 0)
  local port = args.integer(command, "--port", opts.port or tostring(socket.DEFAULT_PORT), 0, 65535)
  local max_memory
  if opts.max_memory then
    local bytes, err = sys.parse_size(opts.max_memory)
    if not bytes then sys.fail(string.format("%s: --max-memory: %s", command, err)) end
    max_memory = bytes
  end
  local bind = opts.bind or "127.0.0.1"
  local token = opts.token_file ~= nil or (os.getenv("CEPHMARK_NET_TOKEN") or "") ~= ""
  socket.serve { port = port, bind = bind, token_file = opts.token_file, max_memory = max_memory,
    once = opts.once or false, quiet = opts.quiet or false,
    on_listen = function(bound)
      print(string.format("netserver: listening on %s:%d%s", bind, bound, token and " (token required)" or ""))
      if not token and not loopback(bind) then
        print(string.format("netserver: no token: anyone who can reach %s:%d may use this server (see --token-file)",
          bind, bound))
      end
      io.stdout:flush()
    end }
  return sys.EXIT_OK
end

return M
