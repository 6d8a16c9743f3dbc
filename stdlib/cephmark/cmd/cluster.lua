-- `cephmark cluster up|down|status|env`: the command line of the throwaway local cluster
-- (stdlib/cephmark/cluster.lua). Called by runtime/main.c as M.main(argv) with the
-- arguments after "cluster"; returns the exit code (0 ok, 1 status: not healthy,
-- 2 bad usage, no cluster, or a failure to start one).

local sys = require "cephmark.sys"
local cluster = require "cephmark.cluster"

local M = {}

-- `status` on a cluster that exists but is not healthy (0 healthy, 2 no cluster)
local EXIT_UNHEALTHY = 1

local USAGE = [[
usage: cephmark cluster <command> [options]

A throwaway single-host Ceph cluster (1 mon, N OSDs, optional mgr and radosgw)
listening on 127.0.0.1, kept in one state folder (default: $CEPHMARK_CLUSTER_DIR,
else ${XDG_STATE_HOME:-$HOME/.local/state}/cephmark/cluster).

commands:
  up       create the cluster (or reuse the one running there) and wait until healthy
  down     stop the cluster's daemons and remove its folder
  status   health, OSDs up/in, endpoints and daemon pids
  env      shell lines exporting CEPH_CONF and the endpoints: eval "$(cephmark cluster env)"
  kill     kill one daemon (fault tests): cephmark cluster kill osd.1
  restart  start one daemon again with its command line: cephmark cluster restart osd.1

Run `cephmark cluster <command> --help` for the options of each.
]]

local HELP = {
  up = [[
usage: cephmark cluster up [--dir DIR] [--osds N] [--bluestore] [--memstore-size SIZE]
                           [--mgr] [--rgw] [--addr IP] [--timeout SECONDS] [--quiet]

Creates a cluster in DIR and returns once it is healthy: mon in quorum, all OSDs up and
in, the mgr active and radosgw answering when asked for. A cluster already running there
is reused at once (a missing mgr or rgw is added); a folder left by a dead cluster is
wiped and a cluster of the same shape made again. Prints how long it took.

options:
  --dir DIR             state folder (default: $CEPHMARK_CLUSTER_DIR, else
                        ${XDG_STATE_HOME:-$HOME/.local/state}/cephmark/cluster)
  --osds N              number of OSDs, 1 to 32 (default: 3)
  --bluestore           OSDs on bluestore over a sparse 10 GiB file each, instead of memstore
  --memstore-size SIZE  memstore cap per OSD, e.g. 512M, 4G (default: 2G); RAM is used
                        only as data arrives
  --mgr                 also run a ceph-mgr (PG statistics in `ceph -s`); without one,
                        mgr commands such as `ceph config show` wait for ever: use
                        `ceph tell osd.N config get NAME` (docs/local-cluster.md)
  --rgw                 also run radosgw with a Swift subuser and S3 keys
  --addr IP             the IPv4 address every daemon binds (default: 127.0.0.1); use an
                        address on a bridge to reach the cluster from network namespaces;
                        fixed when the cluster is made (a running one keeps its own)
  --timeout SECONDS     how long to wait for the cluster to become healthy (default: 120)
  --quiet               print nothing but errors
  -h, --help            show this help
]],
  down = [[
usage: cephmark cluster down [--dir DIR]

Stops the daemons `cluster up` started (by their recorded pids, each checked to still be
that daemon) and removes the state folder. Nothing there is not an error.

options:
  --dir DIR             state folder (default: as for `up`)
  -h, --help            show this help
]],
  status = [[
usage: cephmark cluster status [--dir DIR] [--json]

Shows the cluster's health, OSDs up/in, the mon and rgw endpoints and whether each daemon
still runs. Exit status: 0 healthy, 1 not healthy, 2 no cluster in DIR.

options:
  --dir DIR             state folder (default: as for `up`)
  --json                machine-readable output
  -h, --help            show this help
]],
  env = [[
usage: cephmark cluster env [--dir DIR]

Prints shell lines that point Ceph tools and cephmark at the cluster:
  export CEPH_CONF=...  export CEPHMARK_CLUSTER_DIR=...
and with radosgw: CEPHMARK_RGW_URL, CEPHMARK_SWIFT_AUTH_URL and CEPHMARK_CREDENTIALS (the
path of the mode-0600 file holding the Swift and S3 keys). Use: eval "$(cephmark cluster env)"

options:
  --dir DIR             state folder (default: as for `up`)
  -h, --help            show this help
]],
  kill = [[
usage: cephmark cluster kill NAME [--dir DIR] [--signal KILL|TERM]

Sends SIGKILL (or SIGTERM) to one daemon of the cluster (mon.a, osd.N, mgr.x,
client.rgw.cephmark), if its recorded pid still is that daemon, and waits until it exits.
For fault tests: the cluster is then not healthy until `restart`. A memstore OSD loses its
store when KILLed; use --bluestore clusters, or --signal TERM, to restart it.

options:
  --dir DIR             state folder (default: as for `up`)
  --signal SIG          KILL (default) or TERM
  -h, --help            show this help
]],
  restart = [[
usage: cephmark cluster restart NAME [--dir DIR] [--timeout SECONDS]

Starts one daemon again with the command line it was first started with (stopping it first
if it still runs) and records its new pid; for an OSD, waits until the mon reports it up.

options:
  --dir DIR             state folder (default: as for `up`)
  --timeout SECONDS     how long to wait for an OSD to be up (default: 60)
  -h, --help            show this help
]],
}

-- Which options each command takes; true means the option needs a value.
local OPTIONS = {
  up = { dir = true, osds = true, bluestore = false, ["memstore-size"] = true, mgr = false,
         rgw = false, quiet = false, timeout = true, addr = true },
  down = { dir = true },
  status = { dir = true, json = false },
  env = { dir = true },
  kill = { dir = true, signal = true },
  restart = { dir = true, timeout = true },
}

local function usage_error(command, fmt, ...)
  local where = command and ("cluster " .. command) or "cluster"
  local help = "cephmark " .. where .. " --help"
  sys.fail(string.format("%s: %s (see `%s`)", where, string.format(fmt, ...), help),
    sys.EXIT_USAGE)
end

-- Parses "--name VALUE", "--name=VALUE" and "--flag" into a table keyed by name.
local function parse_options(command, argv)
  local spec = OPTIONS[command]
  local options = {}
  local i = 1
  while i <= #argv do
    local arg = argv[i]
    if arg == "-h" or arg == "--help" then
      options.help = true
    elseif arg:sub(1, 2) == "--" then
      local name, inline = arg:match("^%-%-([^=]+)=(.*)$")
      name = name or arg:sub(3)
      local takes_value = spec[name]
      if takes_value == nil then usage_error(command, "unknown option '%s'", arg) end
      if takes_value then
        local v = inline
        if v == nil then
          i = i + 1
          v = argv[i]
          if v == nil then usage_error(command, "option --%s needs a value", name) end
        end
        options[name] = v
      elseif inline ~= nil then
        usage_error(command, "option --%s takes no value", name)
      else
        options[name] = true
      end
    elseif arg:sub(1, 1) == "-" and #arg > 1 then
      usage_error(command, "unknown option '%s'", arg)
    else
      usage_error(command, "unexpected argument '%s'", arg)
    end
    i = i + 1
  end
  return options
end

local SIZE_UNITS = { [""] = 1, K = 1 << 10, M = 1 << 20, G = 1 << 30, T = 1 << 40 }

-- "512M", "2G", "2GiB", "1.5G" or plain bytes; binary units, as Ceph's own sizes.
local function parse_size(text)
  local number, unit = text:upper():match("^(%d+%.?%d*)([KMGT]?)I?B?$")
  if not number or (unit == "" and text:upper():match("B$")) then return nil end
  local bytes = tonumber(number) * SIZE_UNITS[unit]
  if bytes ~= math.floor(bytes) then return nil end
  return math.tointeger(bytes)
end

local function format_seconds(seconds)
  return string.format("%.1f s", seconds)
end

local function shell_quote(text)
  return "'" .. text:gsub("'", "'\\''") .. "'"
end

local function command_up(options)
  local osds
  if options.osds then
    osds = math.tointeger(tonumber(options.osds))
    if not osds or not options.osds:match("^%d+$") or osds < 1 or osds > 32 then
      usage_error("up", "--osds expects a number from 1 to 32, got '%s'", options.osds)
    end
  end
  local memstore_bytes
  if options["memstore-size"] then
    if options.bluestore then
      usage_error("up", "--memstore-size does not apply with --bluestore")
    end
    memstore_bytes = parse_size(options["memstore-size"])
    if not memstore_bytes or memstore_bytes < (256 << 20) then
      usage_error("up", "--memstore-size expects a size of at least 256M such as 512M or 4G, "
        .. "got '%s'", options["memstore-size"])
    end
  end
  local timeout
  if options.timeout then
    timeout = sys.parse_duration(options.timeout)
    if not timeout or timeout <= 0 then
      usage_error("up", "--timeout expects a positive number of seconds, got '%s'", options.timeout)
    end
  end
  if options.addr then
    local octets = { options.addr:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$") }
    local valid = #octets == 4
    for _, octet in ipairs(octets) do
      if tonumber(octet) > 255 then valid = false end
    end
    if not valid then usage_error("up", "--addr expects an IPv4 address such as 10.0.0.1, got '%s'", options.addr) end
  end
  local info, how = cluster.up {
    addr = options.addr,
    dir = options.dir, osds = osds, objectstore = options.bluestore and "bluestore" or nil,
    memstore_bytes = memstore_bytes, mgr = options.mgr, rgw = options.rgw, quiet = options.quiet,
    timeout = timeout,
  }
  if not options.quiet then
    local shape = string.format("1 mon, %d OSDs (%s)%s%s in %s", info.osds, info.objectstore,
      info.mgr and ", mgr" or "", info.rgw and ", rgw" or "", info.dir)
    if how.created then
      print(string.format("cluster up in %s: %s", format_seconds(how.seconds), shape))
    elseif #how.added > 0 then
      print(string.format("cluster already up; added %s in %s: %s",
        table.concat(how.added, " and "), format_seconds(how.seconds), shape))
    else
      print(string.format("cluster already up (checked in %s): %s", format_seconds(how.seconds),
        shape))
    end
    print("mon     " .. info.mon)
    if info.rgw then
      print(string.format("rgw     %s  (swift auth %s)", info.rgw.url, info.rgw.swift_auth))
    end
    print("conf    " .. info.conf)
    print(string.format("use it: eval \"$(cephmark cluster env --dir %s)\"", shell_quote(info.dir)))
  end
  return sys.EXIT_OK
end

local function command_down(options)
  local _, message = cluster.down { dir = options.dir }
  print(message)
  return sys.EXIT_OK
end

local function no_cluster(dir)
  sys.fail(string.format("no cluster in %s (start one with `cephmark cluster up --dir %s`)", dir,
    shell_quote(dir)), sys.EXIT_USAGE)
end

local function running_text(alive) return alive and "running" or "NOT RUNNING" end

local function print_status(st)
  local osds = st.osds
  print(string.format("cluster  %s (fsid %s)", st.dir, st.fsid))
  print(string.format("health   %s", st.health or "unknown"))
  -- the tolerated checks (MGR_DOWN without a mgr asked for, MON_DISK_LOW) come back as
  -- notes "CODE: message"; mark them instead of printing them twice
  local tolerated = {}
  for _, note in ipairs(st.notes) do
    local code = note:match("^([%u%d_]+): ")
    if code then tolerated[code] = true end
  end
  local codes = {}
  for code in pairs(st.checks) do codes[#codes + 1] = code end
  table.sort(codes)
  for _, code in ipairs(codes) do
    print(string.format("         %s: %s%s", code, st.checks[code],
      tolerated[code] and " (tolerated)" or ""))
  end
  if osds.up then
    print(string.format("osds     %d up, %d in (of %d, %s)", osds.up, osds["in"], osds.expected,
      st.objectstore))
  else
    print(string.format("osds     unknown (of %d, %s)", osds.expected, st.objectstore))
  end
  print(string.format("mon      %s", st.mon))
  if st.mgr.requested then
    print(string.format("mgr      %s", st.mgr.available and "active" or "not active"))
  end
  if st.rgw then print(string.format("rgw      %s", st.rgw)) end
  print(string.format("conf     %s", st.conf))
  local daemons = {}
  for _, d in ipairs(st.daemons) do
    daemons[#daemons + 1] = string.format("%s pid %s %s", d.name, tostring(d.pid),
      running_text(d.alive))
  end
  print("daemons  " .. table.concat(daemons, ", "))
  if st.healthy then
    print("state    healthy")
  else
    print("state    NOT HEALTHY: " .. table.concat(st.problems, "; "))
  end
end

local function command_status(options)
  local st = cluster.status { dir = options.dir }
  if not st.exists then
    if options.json then
      print(require("cephmark.json").encode(st, { indent = 2 }))
      return sys.EXIT_USAGE
    end
    no_cluster(st.dir)
  end
  if options.json then
    print(require("cephmark.json").encode(st, { indent = 2 }))
  else
    print_status(st)
  end
  return st.healthy and sys.EXIT_OK or EXIT_UNHEALTHY
end

local function command_env(options)
  local dir = options.dir or cluster.default_dir()
  local info = cluster.info { dir = dir }
  if not info then
    local st = cluster.status { dir = dir }
    if st.exists then
      sys.fail(string.format("the cluster in %s is not ready (%s); run `cephmark cluster up` again",
        st.dir, st.phase))
    end
    no_cluster(st.dir)
  end
  local lines = {
    "export CEPH_CONF=" .. shell_quote(info.conf),
    "export CEPHMARK_CLUSTER_DIR=" .. shell_quote(info.dir),
  }
  if info.rgw then
    lines[#lines + 1] = "export CEPHMARK_RGW_URL=" .. shell_quote(info.rgw.url)
    lines[#lines + 1] = "export CEPHMARK_SWIFT_AUTH_URL=" .. shell_quote(info.rgw.swift_auth)
    lines[#lines + 1] = "export CEPHMARK_CREDENTIALS=" .. shell_quote(info.rgw.credentials)
  end
  print(table.concat(lines, "\n"))
  return sys.EXIT_OK
end

local function command_kill(options)
  local signal = (options.signal or "KILL"):upper():gsub("^SIG", "")
  if signal ~= "KILL" and signal ~= "TERM" then
    usage_error("kill", "--signal must be KILL or TERM, got '%s'", options.signal)
  end
  local pid = cluster.kill { dir = options.dir, name = options.name, signal = signal }
  print(pid and string.format("%s: pid %d killed (SIG%s)", options.name, pid, signal)
    or string.format("%s: not running", options.name))
  return sys.EXIT_OK
end

local function command_restart(options)
  local timeout = options.timeout and sys.parse_duration(options.timeout)
  if options.timeout and (not timeout or timeout <= 0) then
    usage_error("restart", "--timeout expects a positive number of seconds, got '%s'", options.timeout)
  end
  local pid = cluster.restart { dir = options.dir, name = options.name, timeout = timeout }
  print(string.format("%s: running again, pid %d", options.name, pid))
  return sys.EXIT_OK
end

local COMMANDS = {
  up = command_up, down = command_down, status = command_status, env = command_env,
  kill = command_kill, restart = command_restart,
}

function M.main(argv)
  local command = argv[1]
  if command == nil then
    io.stderr:write(USAGE)
    return sys.EXIT_USAGE
  end
  if command == "-h" or command == "--help" or command == "help" then
    io.write(USAGE)
    return sys.EXIT_OK
  end
  local run = COMMANDS[command]
  if not run and command:sub(1, 1) == "-" then
    usage_error(nil, "unknown option '%s'", command)
  elseif not run then
    usage_error(nil, "unknown command '%s' (expected up, down, status, env, kill or restart)", command)
  end
  local rest = table.move(argv, 2, #argv, 1, {})
  local name
  if (command == "kill" or command == "restart") and rest[1] and rest[1]:sub(1, 1) ~= "-" then
    name = table.remove(rest, 1)
  end
  local options = parse_options(command, rest)
  if options.help then
    io.write(HELP[command])
    return sys.EXIT_OK
  end
  if command == "kill" or command == "restart" then
    if not name then usage_error(command, "which daemon? e.g. `cephmark cluster %s osd.1`", command) end
    options.name = name
  end
  return run(options)
end

return M
