-- cephmark.cluster: a throwaway single-host Ceph cluster (1 mon, N OSDs on memstore or
-- bluestore, optional mgr and radosgw) that lives in one state folder, listens on loopback
-- and runs its daemons as plain processes of the invoking user. `cephmark cluster` and
-- `cephmark run` (when no cluster is configured) are built on it; docs/local-cluster.md
-- describes the layout and the decisions behind it.

local sys = require "cephmark.sys"
local json = require "cephmark.json"

local M = {}

local STATE_FILE = "cluster.json"
local LOCK_NAME = ".lock"
local STATE_VERSION = 1
local MON_ID = "a"
local MGR_ID = "x"
local RGW_ENTITY = "client.rgw.cephmark"
local RGW_USER = "cephmark"
local SWIFT_USER = "cephmark:swift"
local DEFAULT_OSDS = 3
local MAX_OSDS = 32
local DEFAULT_TIMEOUT = 120
local DEFAULT_MEMSTORE_BYTES = 2 << 30
local MIN_MEMSTORE_BYTES = 256 << 20
-- bluestore's block file is sparse: disk is used as data arrives, up to this size
local BLUESTORE_BLOCK_BYTES = 10 << 30
-- sun_path holds 108 bytes with the terminating NUL
local SOCKET_PATH_MAX = 107
local LONGEST_SOCKET_NAME = RGW_ENTITY .. ".asok"
-- how long `down` lets daemons exit after TERM, and after KILL
local STOP_GRACE_SECONDS = 10
local KILL_GRACE_SECONDS = 5

-- Which Debian package installs each program, for the "install them with" hint.
local PACKAGE_OF = {
  ["ceph-mon"] = "ceph-mon",
  ["ceph-osd"] = "ceph-osd",
  ["ceph-mgr"] = "ceph-mgr",
  ["ceph-authtool"] = "ceph-common",
  ["monmaptool"] = "ceph-base",
  ["radosgw"] = "radosgw",
  ["radosgw-admin"] = "ceph-common",
}

-- Health checks a freshly made cluster may raise that do not make it unusable. MGR_DOWN
-- only counts when no mgr was asked for: the mon raises it mon_mgr_mkfs_grace (120 s)
-- after creation. MON_DISK_LOW is the host's disk, not the cluster: reported, tolerated.
local function tolerated_check(state, code)
  if code == "MGR_DOWN" then return not state.mgr end
  return code == "MON_DISK_LOW"
end

------------------------------------------------------------------------------------------
-- small helpers

local function log(opts, fmt, ...)
  if not opts.quiet then
    io.stderr:write("cephmark cluster: ", string.format(fmt, ...), "\n")
    io.stderr:flush()
  end
end

local function join(...)
  return table.concat({ ... }, "/")
end

local function exists(path)
  return sys.stat(path) ~= nil
end

local function seconds_since(start)
  return sys.monotonic() - start
end

-- Sleeps while the operator has not pressed Ctrl-C. Cleanup after an interrupt must still
-- wait for daemons to exit, but sys.sleep raises at once once SIGINT has arrived, so the
-- cleanup path polls the clock instead (bounded by its callers' deadlines).
local function pause(seconds)
  if not sys.interrupted() then
    sys.sleep(seconds)
    return
  end
  local until_time = sys.monotonic() + seconds
  while sys.monotonic() < until_time do end
end

-- FNV-1a, 64 bits, as 16 hex digits: a stable short name for a long state folder.
local function short_hash(text)
  local hash = -3750763034362895579 -- 0xcbf29ce484222325 as a signed 64-bit integer
  for i = 1, #text do
    hash = hash ~ text:byte(i)
    hash = hash * 1099511628211
  end
  return string.format("%016x", hash)
end

local function uuid()
  local text = assert(sys.read_file("/proc/sys/kernel/random/uuid"))
  return (text:gsub("%s+$", ""))
end

-- The value of a recorded field, or nil when the JSON said null.
local function value(v)
  if v == json.null then return nil end
  return v
end

------------------------------------------------------------------------------------------
-- the state folder

-- ceph.conf has no quoting: a value runs to the end of the line, '#' and ';' start a
-- comment, '$' a metavariable, and `mon cluster log file` is a list of channel=path
-- pairs split at spaces. A folder path holding any of those cannot be written into it.
local function check_dir_name(dir)
  if dir:match("[%s#;$=\"'\\]") then
    sys.fail(string.format("cannot use '%s' as a cluster folder: ceph.conf cannot hold paths "
      .. "with spaces or any of # ; $ = \" ' \\", dir))
  end
end

-- Absolute, without "." parts or trailing slashes: the folder's path is written into
-- ceph.conf and compared against daemons' command lines.
local function absolute_dir(dir)
  if type(dir) ~= "string" or dir == "" then
    error("cluster: dir must be a non-empty string, got " .. tostring(dir), 3)
  end
  if dir:sub(1, 1) ~= "/" then
    local cwd = assert(sys.realpath("."))
    dir = cwd .. "/" .. dir
  end
  local parts = {}
  for part in dir:gmatch("[^/]+") do
    if part ~= "." then parts[#parts + 1] = part end
  end
  dir = "/" .. table.concat(parts, "/")
  check_dir_name(dir)
  return dir
end

function M.default_dir()
  local dir = os.getenv("CEPHMARK_CLUSTER_DIR")
  if dir and dir ~= "" then return dir end
  local state_home = os.getenv("XDG_STATE_HOME")
  if not state_home or state_home == "" then
    local home = os.getenv("HOME")
    if not home or home == "" then
      sys.fail("cannot choose a cluster folder: neither CEPHMARK_CLUSTER_DIR, XDG_STATE_HOME "
        .. "nor HOME is set (use --dir)")
    end
    state_home = home .. "/.local/state"
  end
  return state_home .. "/cephmark/cluster"
end

-- Admin sockets live in <dir>/run when their paths fit in a unix socket address, else in
-- /tmp/cephmark-<hash of dir>, which `down` removes with the folder.
local function choose_socket_dir(dir)
  local inside = join(dir, "run")
  if #join(inside, LONGEST_SOCKET_NAME) <= SOCKET_PATH_MAX then return inside end
  return "/tmp/cephmark-" .. short_hash(dir)
end

local function read_state(dir)
  local text = sys.read_file(join(dir, STATE_FILE))
  if not text then return nil end
  local state = json.decode(text)
  -- only a file this module wrote counts: `down` deletes the folder on its word
  if type(state) ~= "table" or state.tool ~= "cephmark" or state.dir ~= dir then return nil end
  return state
end

local function write_state(state)
  local ok, err = sys.write_file(join(state.dir, STATE_FILE),
    json.encode(state, { indent = 2 }) .. "\n", 384)
  if not ok then sys.fail("cannot record the cluster state: " .. err) end
end

local function conf_path(dir) return join(dir, "ceph.conf") end
local function log_path(dir, name) return join(dir, "log", name .. ".log") end

------------------------------------------------------------------------------------------
-- processes

-- The recorded pid still runs `program` of this cluster: its argv[0] names the program
-- and its arguments hold our ceph.conf. A pid recycled by an unrelated process, or a
-- daemon of another cluster, fails this and is never signalled.
local function process_matches(pid, program, conf)
  if type(pid) ~= "number" or not sys.alive(pid) then return false end
  local cmdline = sys.read_file("/proc/" .. pid .. "/cmdline")
  if not cmdline or cmdline == "" then return false end
  local args = {}
  for arg in cmdline:gmatch("([^%z]*)%z") do args[#args + 1] = arg end
  local argv0 = (args[1] or ""):match("([^/]*)$")
  if argv0 ~= program then return false end
  for i = 2, #args do
    if args[i] == conf then return true end
  end
  return false
end

local function daemon_alive(state, daemon)
  return process_matches(value(daemon.pid), daemon.program, conf_path(state.dir))
end

local function find_daemon(state, name)
  for _, daemon in ipairs(state.daemons) do
    if daemon.name == name then return daemon end
  end
end

-- Waits for a just-forked child to become `program`: until it has called exec, its
-- /proc entry still shows cephmark, which must not read as "the daemon died".
local function wait_exec(pid, program)
  local deadline = sys.monotonic() + 5
  while sys.monotonic() < deadline do
    local cmdline = sys.read_file("/proc/" .. pid .. "/cmdline") or ""
    local argv0 = cmdline:match("^([^%z]*)") or ""
    if argv0:match("([^/]*)$") == program or not sys.alive(pid) then return end
    pause(0.01)
  end
end

-- Starts a daemon in the foreground (-f: no fork, so the pid we get is the daemon's),
-- logging to <dir>/log/<name>.log, with its stdout/stderr in <name>.out; records the pid
-- at once so that `down` can stop it even if this process dies next.
local function spawn_daemon(state, name, program, args)
  local argv = { program, "-f", "-c", conf_path(state.dir) }
  for _, arg in ipairs(args) do argv[#argv + 1] = arg end
  local out = join(state.dir, "log", name .. ".out")
  local pid, err = sys.spawn(argv, { stdout = out, stderr = out })
  if not pid then sys.fail(string.format("cannot start %s (%s): %s", name, program, err)) end
  local daemon = find_daemon(state, name)
  if not daemon then
    daemon = { name = name }
    state.daemons[#state.daemons + 1] = daemon
  end
  daemon.program, daemon.pid, daemon.log = program, pid, log_path(state.dir, name)
  write_state(state)
  wait_exec(pid, program)
  return daemon
end

-- The last non-empty line a failed daemon wrote to its stdout/stderr, which is where a
-- Ceph daemon reports why it could not start.
local function last_output_line(state, name)
  local text = sys.read_file(join(state.dir, "log", name .. ".out")) or ""
  local last
  for line in text:gmatch("[^\n]+") do
    if line:match("%S") then last = line end
  end
  return last
end

local function daemon_died(state, daemon)
  local line = last_output_line(state, daemon.name)
  sys.fail(string.format("%s (%s) exited while the cluster was starting%s; read %s",
    daemon.name, daemon.program, line and (": " .. line) or "", daemon.log))
end

-- Stops daemons by their recorded pids: TERM to each that still is what we started, wait,
-- KILL what is left, wait again. Returns how many were running, and the names of those
-- that would not die.
local function stop_daemons(state, daemons)
  local conf = conf_path(state.dir)
  local pending = {}
  for _, daemon in ipairs(daemons) do
    local pid = value(daemon.pid)
    if process_matches(pid, daemon.program, conf) then
      sys.kill(pid, "TERM")
      pending[#pending + 1] = daemon
    end
  end
  local signalled = #pending
  local function wait(seconds)
    local deadline = sys.monotonic() + seconds
    while #pending > 0 and sys.monotonic() < deadline do
      pause(0.05)
      sys.reap()
      local still = {}
      for _, daemon in ipairs(pending) do
        if process_matches(daemon.pid, daemon.program, conf) then still[#still + 1] = daemon end
      end
      pending = still
    end
  end
  wait(STOP_GRACE_SECONDS)
  for _, daemon in ipairs(pending) do
    if process_matches(daemon.pid, daemon.program, conf) then sys.kill(daemon.pid, "KILL") end
  end
  wait(KILL_GRACE_SECONDS)
  local stuck = {}
  for _, daemon in ipairs(pending) do
    stuck[#stuck + 1] = daemon.name .. " (pid " .. daemon.pid .. ")"
  end
  return signalled, stuck
end

-- Stops the whole cluster in dependency order: the OSDs' clients (rgw, mgr) first, since
-- radosgw hangs in its shutdown when the OSDs are gone; then the OSDs; the mon last.
local STOP_ORDER = { "radosgw", "ceph-mgr", "ceph-osd", "ceph-mon" }

local function stop_cluster(state)
  local stopped, stuck = 0, {}
  for _, program in ipairs(STOP_ORDER) do
    local group = {}
    for _, daemon in ipairs(state.daemons) do
      if daemon.program == program then group[#group + 1] = daemon end
    end
    local count, group_stuck = stop_daemons(state, group)
    stopped = stopped + count
    for _, name in ipairs(group_stuck) do stuck[#stuck + 1] = name end
  end
  return stopped, stuck
end

-- Runs a short-lived Ceph tool to completion; raises with its stderr on failure. Its
-- stdout is returned but never shown, since radosgw-admin prints keys there.
local function run_tool(argv, what, timeout)
  local result, err = sys.run(argv, { timeout = timeout or 60 })
  if not result then sys.fail(string.format("cannot run %s: %s", argv[1], err)) end
  if result.timed_out then
    sys.fail(string.format("%s timed out after %g s (%s)", argv[1], timeout or 60, what))
  end
  if result.status ~= 0 then
    local message = result.stderr:gsub("%s+$", ""):match("([^\n]*)$")
    if result.status == 127 and message == "" then message = "program not found" end
    return nil, string.format("%s failed (%s, exit %d): %s", argv[1], what, result.status, message),
      result.status
  end
  return result.stdout
end

local function must(out, err)
  if not out then sys.fail(err) end
  return out
end

local function missing_programs(names)
  local missing, packages, seen = {}, {}, {}
  for _, program in ipairs(names) do
    if not sys.which(program) then
      missing[#missing + 1] = program
      local package = PACKAGE_OF[program]
      if not seen[package] then
        seen[package] = true
        packages[#packages + 1] = package
      end
    end
  end
  return missing, packages
end

local function require_programs(want_mgr, want_rgw)
  local names = { "ceph-mon", "ceph-osd", "ceph-authtool", "monmaptool" }
  if want_mgr then names[#names + 1] = "ceph-mgr" end
  if want_rgw then
    names[#names + 1] = "radosgw"
    names[#names + 1] = "radosgw-admin"
  end
  local missing, packages = missing_programs(names)
  if #missing > 0 then
    sys.fail(string.format("cannot start a local cluster: %s not found in PATH; install them "
      .. "with `apt-get install %s`", table.concat(missing, ", "), table.concat(packages, " ")))
  end
end

------------------------------------------------------------------------------------------
-- configuration and keys

local function gen_key()
  local out = must(run_tool({ "ceph-authtool", "--gen-print-key" }, "generate a cephx key", 30))
  return (out:gsub("%s+$", ""))
end

local function keyring_text(entries)
  local lines = {}
  for _, entry in ipairs(entries) do
    lines[#lines + 1] = "[" .. entry.name .. "]"
    lines[#lines + 1] = "\tkey = " .. entry.key
    for _, cap in ipairs(entry.caps or {}) do
      lines[#lines + 1] = string.format("\tcaps %s = \"%s\"", cap[1], cap[2])
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

local function write_private(path, text)
  local ok, err = sys.write_file(path, text, 384) -- 0600
  if not ok then sys.fail(err) end
end

local function conf_text(state)
  local dir, sockets = state.dir, state.socket_dir
  local function daemon_paths(lines)
    lines[#lines + 1] = "log file = " .. join(dir, "log", "$name.log")
    lines[#lines + 1] = "admin socket = " .. join(sockets, "$name.asok")
    lines[#lines + 1] = "pid file = " .. join(dir, "run", "$name.pid")
    return lines
  end
  local global = {
    "# Written by `cephmark cluster up` for the throwaway cluster in this folder;",
    "# rewritten when the cluster changes, so do not edit it.",
    "[global]",
    "fsid = " .. state.fsid,
    "mon host = " .. state.mon,
    "auth cluster required = cephx",
    "auth service required = cephx",
    "auth client required = cephx",
    "auth allow insecure global id reclaim = false",
    "ms bind ipv4 = true",
    "ms bind ipv6 = false",
    "run dir = " .. join(dir, "run"),
    "crash dir = " .. join(dir, "crash"),
    -- one host holds every OSD: replicas and EC chunks spread over OSDs, not hosts
    "osd crush chooseleaf type = 0",
    "osd pool default size = " .. state.pool_size,
    "osd pool default pg num = 8",
    "osd pool default pgp num = 8",
    "osd pool default pg autoscale mode = off",
    "mon allow pool delete = true",
    "mon max pg per osd = 1000",
  }
  if state.pool_size < 2 then
    global[#global + 1] = "mon warn on pool no redundancy = false"
  end
  local sections = { table.concat(global, "\n") }

  sections[#sections + 1] = table.concat({
    "[client]",
    "keyring = " .. join(dir, "keyring"),
  }, "\n")

  sections[#sections + 1] = table.concat(daemon_paths({
    "[mon]",
    "mon data = " .. join(dir, "mon"),
    "mon cluster log file = default=" .. join(dir, "log", "cluster.$channel.log")
      .. " cluster=" .. join(dir, "log", "cluster.log"),
    -- commit mon changes (osd new, boots, pool creation) every 0.1 s instead of every
    -- second: creation issues a few dozen of them in a row
    "paxos propose interval = 0.1",
  }), "\n")

  local osd = daemon_paths({
    "[osd]",
    "osd data = " .. join(dir, "osd", "$id"),
    -- its own key; the [client] keyring (client.admin) would fail with handle_auth_bad_method
    "keyring = " .. join(dir, "osd", "$id", "keyring"),
    "public addr = " .. state.addr,
    "cluster addr = " .. state.addr,
    "osd objectstore = " .. state.objectstore,
    -- two cores and a few GiB host everything: keep caches small
    "osd memory target = 1073741824",
  })
  if state.objectstore == "memstore" then
    -- a cap, not an allocation: RAM is used as data arrives
    osd[#osd + 1] = "memstore device bytes = " .. state.memstore_bytes
  else
    -- with no block path, bluestore creates the file <osd data>/block itself
    osd[#osd + 1] = "bluestore block create = true"
    osd[#osd + 1] = "bluestore block size = " .. BLUESTORE_BLOCK_BYTES
  end
  sections[#sections + 1] = table.concat(osd, "\n")

  sections[#sections + 1] = table.concat(daemon_paths({
    "[mgr]",
    "mgr data = " .. join(dir, "mgr"),
    "keyring = " .. join(dir, "mgr", "keyring"),
    "public addr = " .. state.addr,
    -- no restful/nfs: they need certificates or orchestrators a throwaway cluster lacks
    "mgr initial modules = iostat",
  }), "\n")

  sections[#sections + 1] = table.concat(daemon_paths({
    "[" .. RGW_ENTITY .. "]",
    "keyring = " .. join(dir, "rgw", "keyring"),
    "rgw data = " .. join(dir, "rgw"),
    "rgw frontends = beast endpoint=" .. state.addr .. ":" .. state.rgw_port,
    -- no bucket lifecycle processing: its threads sleep in 5 s steps and hold up
    -- radosgw's shutdown by as much (garbage collection stays on)
    "rgw enable lc threads = false",
  }), "\n")
  return table.concat(sections, "\n\n") .. "\n"
end

local function write_conf(state)
  local ok, err = sys.write_file(conf_path(state.dir), conf_text(state), 420) -- 0644
  if not ok then sys.fail(err) end
end

------------------------------------------------------------------------------------------
-- talking to the cluster

-- The timeout is rounded up to whole seconds: librados rejects a fraction in
-- client_mount_timeout ("Invalid argument").
local function connect(state, timeout)
  local rados = require "cephmark.rados"
  return rados.connect {
    conf = conf_path(state.dir), id = "admin", keyring = join(state.dir, "keyring"),
    timeout = math.ceil(timeout),
  }
end

local function mon_status(handle)
  return handle:mon_command({ prefix = "status" })
end

local function osdmap_of(status)
  local osdmap = status.osdmap or {}
  return osdmap.osdmap or osdmap -- nested one level deeper before pacific
end

-- How many PGs the pools have: with a mgr, `up` waits until the mgr reports them all
-- active+clean, since its health checks lag behind pool creation (rgw makes ~6 pools).
local function expected_pgs(handle)
  local pools, err = handle:mon_command({ prefix = "osd pool ls", detail = "detail" })
  if type(pools) ~= "table" then return nil, err end
  local total = 0
  for _, pool in ipairs(pools) do total = total + (tonumber(pool.pg_num) or 0) end
  return total
end

-- What keeps a cluster from being usable, as a list of short sentences; empty when ready.
-- `status` is the mon's `status` answer, `level` how much is asked:
--   "osds"     the mon in quorum and every OSD up and in (the first stage of `up`);
--   "running"  also the mgr active when there is one: a cluster in use may carry
--              warnings its user caused (a full OSD, a pool without application), so
--              reusing it reports them as notes instead of waiting for them to clear;
--   "settled"  also, with a mgr, every PG active+clean (`pgs` is expected_pgs()): what
--              a running cluster must reach after a daemon was added to it;
--   "healthy"  also no health check but the tolerated ones: what a new cluster must reach.
local function assess(state, status, level, pgs)
  local problems, notes = {}, {}
  local in_quorum = false
  for _, name in ipairs(status.quorum_names or {}) do
    if name == MON_ID then in_quorum = true end
  end
  if not in_quorum then problems[#problems + 1] = "mon." .. MON_ID .. " is not in quorum" end
  local osdmap = osdmap_of(status)
  local total, up, inside = osdmap.num_osds or 0, osdmap.num_up_osds or 0, osdmap.num_in_osds or 0
  if total < state.osds or up < state.osds or inside < state.osds then
    problems[#problems + 1] = string.format("%d of %d OSDs up, %d in", up, state.osds, inside)
  end
  if level == "osds" then return problems, notes end
  if state.mgr and not (status.mgrmap and status.mgrmap.available == true) then
    problems[#problems + 1] = "mgr." .. MGR_ID .. " is not active"
  elseif state.mgr and pgs and level ~= "running" then
    local pgmap = status.pgmap or {}
    local clean = 0
    for _, entry in ipairs(pgmap.pgs_by_state or {}) do
      if entry.state_name == "active+clean" then clean = clean + (entry.count or 0) end
    end
    if (pgmap.num_pgs or 0) < pgs or clean < pgs then
      problems[#problems + 1] = string.format("%d of %d PGs active+clean", clean, pgs)
    end
  end
  local checks = (status.health or {}).checks or {}
  local codes = {}
  for code in pairs(checks) do codes[#codes + 1] = code end
  table.sort(codes)
  for _, code in ipairs(codes) do
    local summary = (checks[code].summary or {}).message or ""
    local text = code .. ": " .. summary
    if level == "healthy" and not tolerated_check(state, code) then
      problems[#problems + 1] = text
    else
      notes[#notes + 1] = text
    end
  end
  return problems, notes
end

-- The log an operator should read when `problems` will not clear.
local function log_to_read(state, problems)
  for _, problem in ipairs(problems) do
    if problem:match("OSDs up") then
      for _, daemon in ipairs(state.daemons) do
        if daemon.program == "ceph-osd" then return join(state.dir, "log", "osd.*.log") end
      end
    elseif problem:match("^mgr") then
      return log_path(state.dir, "mgr." .. MGR_ID)
    end
  end
  return log_path(state.dir, "mon." .. MON_ID)
end

local function check_daemons_alive(state)
  sys.reap()
  for _, daemon in ipairs(state.daemons) do
    if not daemon_alive(state, daemon) then daemon_died(state, daemon) end
  end
end

-- Polls the mon until the cluster is usable, failing early when a daemon dies and after
-- the deadline with what is still missing and the log to read.
local function wait_ready(state, handle, deadline, opts, level)
  local problems, notes = { "no answer from the mon yet" }, {}
  while true do
    check_daemons_alive(state)
    local status, err = mon_status(handle)
    local pgs
    local need_pgs = state.mgr and (level == "settled" or level == "healthy")
    if status and need_pgs then pgs, err = expected_pgs(handle) end
    if status and (pgs or not need_pgs) then
      problems, notes = assess(state, status, level, pgs)
      if #problems == 0 then
        for _, note in ipairs(notes) do
          -- a mgr-less cluster's MGR_DOWN is expected, not news
          if state.mgr or not note:match("^MGR_DOWN:") then log(opts, "note: %s", note) end
        end
        return status
      end
    else
      problems = { "status: " .. tostring(err) }
    end
    if sys.monotonic() > deadline then
      sys.fail(string.format("the cluster in %s is not ready after %g s: %s; read %s", state.dir,
        state.timeout, table.concat(problems, "; "), log_to_read(state, problems)))
    end
    pause(0.2)
  end
end

------------------------------------------------------------------------------------------
-- creating the daemons

local function wait_for_mon(state, deadline)
  local mon = find_daemon(state, "mon." .. MON_ID)
  while not sys.port_open(state.mon_port, state.addr or "127.0.0.1") do
    sys.reap()
    if not daemon_alive(state, mon) then daemon_died(state, mon) end
    if sys.monotonic() > deadline then
      sys.fail(string.format("mon.%s did not listen on port %d within %g s; read %s", MON_ID,
        state.mon_port, state.timeout, mon.log))
    end
    pause(0.05)
  end
  local left = math.max(1, deadline - sys.monotonic())
  local handle, err = connect(state, left)
  if not handle then
    sys.fail(string.format("%s; read %s", err, mon.log))
  end
  return handle
end

local function create_mon(state)
  local dir = state.dir
  local keys = {
    mon = gen_key(), admin = gen_key(), mgr = gen_key(), rgw = gen_key(),
  }
  local admin = {
    name = "client.admin", key = keys.admin,
    caps = {
      { "mon", "allow *" }, { "osd", "allow *" }, { "mgr", "allow *" }, { "mds", "allow *" },
    },
  }
  local mgr = {
    name = "mgr." .. MGR_ID, key = keys.mgr,
    caps = { { "mon", "allow profile mgr" }, { "osd", "allow *" }, { "mds", "allow *" } },
  }
  local rgw = {
    name = RGW_ENTITY, key = keys.rgw,
    caps = { { "mon", "allow rw" }, { "osd", "allow rwx" }, { "mgr", "allow rw" } },
  }
  write_private(join(dir, "keyring"), keyring_text({ admin }))
  write_private(join(dir, "mgr", "keyring"), keyring_text({ mgr }))
  write_private(join(dir, "rgw", "keyring"), keyring_text({ rgw }))
  -- every entity but the OSDs goes into the mon's auth database at mkfs, which saves a
  -- round of auth commands now and when a mgr or rgw is added later
  local bootstrap = join(dir, "bootstrap.keyring")
  write_private(bootstrap, keyring_text({
    { name = "mon.", key = keys.mon, caps = { { "mon", "allow *" } } }, admin, mgr, rgw,
  }))
  local monmap = join(dir, "monmap")
  must(run_tool({ "monmaptool", "--create", "--clobber", "--enable-all-features",
    "--fsid", state.fsid, "--addv", MON_ID, "[" .. state.mon .. "]", monmap }, "create the monmap"))
  must(run_tool({ "ceph-mon", "-c", conf_path(dir), "--mkfs", "-i", MON_ID,
    "--monmap", monmap, "--keyring", bootstrap }, "create mon." .. MON_ID .. "; read "
    .. log_path(dir, "mon." .. MON_ID)))
  os.remove(bootstrap)
  os.remove(monmap)
  spawn_daemon(state, "mon." .. MON_ID, "ceph-mon", { "-i", MON_ID })
end

-- Registers each OSD with the mon (`osd new` with a key we made), then creates their
-- stores in parallel and starts each daemon as soon as its store is ready.
local function create_osds(state, handle, deadline)
  local dir = state.dir
  local mkfs = {}
  for id = 0, state.osds - 1 do
    local osd_dir = join(dir, "osd", tostring(id))
    must(sys.mkdir(osd_dir, 448)) -- 0700
    local osd_uuid, key = uuid(), gen_key()
    write_private(join(osd_dir, "keyring"), keyring_text({ { name = "osd." .. id, key = key } }))
    local result, err, code = handle:mon_command({ prefix = "osd new", uuid = osd_uuid, id = id },
      json.encode({ cephx_secret = key }))
    if result == nil and code then
      sys.fail(string.format("cannot register osd.%d with the mon: %s", id, err))
    end
    local name = "osd." .. id
    local out = join(dir, "log", name .. ".mkfs.out")
    local pid, spawn_err = sys.spawn({ "ceph-osd", "-c", conf_path(dir), "-i", tostring(id),
      "--mkfs", "--osd-uuid", osd_uuid }, { stdout = out, stderr = out })
    if not pid then
      sys.fail(string.format("cannot run ceph-osd --mkfs for %s: %s", name, spawn_err))
    end
    mkfs[#mkfs + 1] = { id = id, name = name, pid = pid, out = out, ready = join(osd_dir, "ready") }
  end
  while #mkfs > 0 do
    sys.reap()
    local pending = {}
    for _, job in ipairs(mkfs) do
      if sys.alive(job.pid) then
        pending[#pending + 1] = job
      elseif exists(job.ready) then
        spawn_daemon(state, job.name, "ceph-osd", { "-i", tostring(job.id) })
      else
        sys.fail(string.format("ceph-osd --mkfs failed for %s; read %s and %s", job.name, job.out,
          log_path(dir, job.name)))
      end
    end
    mkfs = pending
    if #mkfs > 0 then
      if sys.monotonic() > deadline then
        sys.fail(string.format("ceph-osd --mkfs for %s did not finish within %g s; read %s",
          mkfs[1].name, state.timeout, log_path(dir, mkfs[1].name)))
      end
      pause(0.05)
    end
  end
end

local function start_mgr(state)
  must(sys.mkdir(join(state.dir, "mgr"), 448))
  spawn_daemon(state, "mgr." .. MGR_ID, "ceph-mgr", { "-i", MGR_ID })
end

local function credentials_path(dir) return join(dir, "credentials.conf") end

local function rgw_admin(state, args, what)
  local argv = { "radosgw-admin", "-c", conf_path(state.dir), "-n", "client.admin",
    "--log-file", log_path(state.dir, "radosgw-admin") }
  for _, arg in ipairs(args) do argv[#argv + 1] = arg end
  return run_tool(argv, what, 60)
end

-- The S3 and Swift keys of the rgw user, made by radosgw-admin (so they never appear on
-- a command line) and read back from its JSON answer.
local function create_rgw_user(state)
  local out, err, code = rgw_admin(state, { "user", "create", "--uid", RGW_USER,
    "--display-name", "cephmark local cluster" }, "create the rgw user " .. RGW_USER)
  if not out and code == 17 then -- EEXIST: a previous attempt got this far
    out, err = rgw_admin(state, { "user", "info", "--uid", RGW_USER }, "read the rgw user")
  end
  local function decode(text, what)
    local answer = json.decode(text)
    if type(answer) ~= "table" then sys.fail("radosgw-admin " .. what .. " did not answer JSON") end
    return answer
  end
  local user = decode(must(out, err), "user create")
  local swift_keys = value(user.swift_keys) or {}
  if #swift_keys == 0 then
    out = must(rgw_admin(state, { "subuser", "create", "--uid", RGW_USER, "--subuser", SWIFT_USER,
      "--access", "full", "--key-type", "swift", "--gen-secret" },
      "create the swift subuser " .. SWIFT_USER))
    user = decode(out, "subuser create")
    swift_keys = value(user.swift_keys) or {}
  end
  local swift_key, s3
  for _, key in ipairs(swift_keys) do
    if key.user == SWIFT_USER then swift_key = key.secret_key end
  end
  for _, key in ipairs(value(user.keys) or {}) do
    if key.user == RGW_USER then s3 = key end
  end
  if not swift_key or not s3 then
    sys.fail("radosgw-admin did not return the swift and S3 keys of user " .. RGW_USER)
  end
  return { swift_key = swift_key, access_key = s3.access_key, secret_key = s3.secret_key }
end

local function rgw_url(state) return "http://" .. (state.addr or "127.0.0.1") .. ":" .. state.rgw_port end

local function write_credentials(state, keys)
  local url = rgw_url(state)
  write_private(credentials_path(state.dir), table.concat({
    "# Credentials of the cephmark local cluster's radosgw (" .. state.dir .. ").",
    "# Secrets: this file is mode 0600 and cephmark never prints its content.",
    "[swift]",
    "auth_url = " .. url .. "/auth/v1.0",
    "user = " .. SWIFT_USER,
    "key = " .. keys.swift_key,
    "",
    "[s3]",
    "endpoint = " .. url,
    "access_key = " .. keys.access_key,
    "secret_key = " .. keys.secret_key,
  }, "\n") .. "\n")
end

-- radosgw creates its pools when it starts, so it needs the OSDs up; it opens its port
-- only once that is done.
local function start_rgw(state, deadline)
  must(sys.mkdir(join(state.dir, "rgw"), 448))
  -- the port is chosen now, not at creation, so it is as likely as can be to stay free
  repeat state.rgw_port = must(sys.free_port()) until state.rgw_port ~= state.mon_port
  write_conf(state)
  local daemon = spawn_daemon(state, RGW_ENTITY, "radosgw", { "-n", RGW_ENTITY })
  while not sys.port_open(state.rgw_port, state.addr or "127.0.0.1") do
    sys.reap()
    if not daemon_alive(state, daemon) then daemon_died(state, daemon) end
    if sys.monotonic() > deadline then
      sys.fail(string.format("radosgw did not listen on port %d within %g s; read %s",
        state.rgw_port, state.timeout, daemon.log))
    end
    pause(0.1)
  end
  write_credentials(state, create_rgw_user(state))
end

------------------------------------------------------------------------------------------
-- info

local function info_of(state)
  local info = {
    dir = state.dir,
    conf = conf_path(state.dir),
    keyring = join(state.dir, "keyring"),
    fsid = state.fsid,
    mon = state.mon,
    osds = state.osds,
    objectstore = state.objectstore,
    mgr = state.mgr,
  }
  if state.rgw then
    local url = rgw_url(state)
    info.rgw = {
      url = url,
      swift_auth = url .. "/auth/v1.0",
      swift_user = SWIFT_USER,
      s3_endpoint = url,
      credentials = credentials_path(state.dir),
    }
  end
  return info
end

function M.info(opts)
  opts = opts or {}
  local dir = absolute_dir(opts.dir or M.default_dir())
  local state = read_state(dir)
  if not state or state.phase ~= "ready" then return nil end
  return info_of(state)
end

------------------------------------------------------------------------------------------
-- up

local function check_up_options(opts)
  local osds = opts.osds
  if osds ~= nil and (math.type(osds) ~= "integer" or osds < 1 or osds > MAX_OSDS) then
    error(string.format("cluster.up: osds must be an integer from 1 to %d, got %s", MAX_OSDS,
      tostring(osds)), 3)
  end
  local store = opts.objectstore
  if store ~= nil and store ~= "memstore" and store ~= "bluestore" then
    error("cluster.up: objectstore must be \"memstore\" or \"bluestore\", got "
      .. tostring(store), 3)
  end
  local bytes = opts.memstore_bytes
  if bytes ~= nil and (math.type(bytes) ~= "integer" or bytes < MIN_MEMSTORE_BYTES) then
    error(string.format("cluster.up: memstore_bytes must be an integer of at least %d, got %s",
      MIN_MEMSTORE_BYTES, tostring(bytes)), 3)
  end
  local timeout = opts.timeout
  if timeout ~= nil and (type(timeout) ~= "number" or timeout <= 0) then
    error("cluster.up: timeout must be a positive number of seconds, got " .. tostring(timeout), 3)
  end
end

-- A cluster that runs already is reused only if it is what the caller asked for; options
-- left out (nil) accept whatever is there.
local function check_same_shape(state, opts)
  local function differs(what, asked, have)
    sys.fail(string.format("the cluster in %s has %s %s, not %s; run "
      .. "`cephmark cluster down --dir %s` first to make a different one", state.dir, what,
      tostring(have), tostring(asked), state.dir))
  end
  if opts.osds and opts.osds ~= state.osds then differs("OSD count", opts.osds, state.osds) end
  if opts.objectstore and opts.objectstore ~= state.objectstore then
    differs("objectstore", opts.objectstore, state.objectstore)
  end
  if opts.memstore_bytes and state.objectstore == "memstore"
      and opts.memstore_bytes ~= state.memstore_bytes then
    differs("memstore size", opts.memstore_bytes, state.memstore_bytes)
  end
end

-- Why a recorded cluster cannot be used as it is, or nil when every daemon runs and the
-- mon answers. Returns the open connection for the caller to reuse.
local function running_problem(state)
  if state.phase ~= "ready" then return "its creation did not finish" end
  for _, daemon in ipairs(state.daemons) do
    if not daemon_alive(state, daemon) then return daemon.name .. " is not running" end
  end
  local handle, err = connect(state, 10)
  if not handle then return err end
  return nil, handle
end

-- Entries of the state folder that are not the cluster: the lock and its candidates.
local function is_lock_entry(name)
  return name:sub(1, #LOCK_NAME) == LOCK_NAME
end

-- One `up` or `down` at a time per folder (two `cephmark run` may start the default
-- cluster together). rename() of a folder onto an existing non-empty folder fails, which
-- makes it a test-and-set: each contender renames its own <dir>/.lock.<pid> (holding its
-- pid) to <dir>/.lock. A lock whose owner died is removed.
local function acquire_lock(dir, timeout)
  must(sys.mkdir(dir))
  local lock = join(dir, LOCK_NAME)
  local candidate = join(dir, LOCK_NAME .. "." .. sys.getpid())
  must(sys.mkdir(candidate, 448))
  must(sys.write_file(join(candidate, "pid"), tostring(sys.getpid())))
  local deadline = sys.monotonic() + timeout
  while not os.rename(candidate, lock) do
    local owner = tonumber(sys.read_file(join(lock, "pid")) or "")
    if owner and not sys.alive(owner) then
      sys.remove_tree(lock)
    elseif sys.monotonic() > deadline then
      sys.remove_tree(candidate)
      sys.fail(string.format("another cephmark (pid %s) is still working on the cluster in %s",
        tostring(owner), dir))
    else
      pause(0.1)
    end
  end
  return lock
end

local function release_lock(lock)
  if lock and exists(lock) then sys.remove_tree(lock) end
end

-- Runs fn() holding the folder's lock, releasing it however fn ends.
local function with_lock(dir, timeout, fn)
  local lock = acquire_lock(dir, timeout)
  local results = table.pack(pcall(fn))
  release_lock(lock)
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

local function empty_dir(dir)
  local entries = sys.list_dir(dir)
  if not entries then return end
  for _, name in ipairs(entries) do
    if not is_lock_entry(name) then must(sys.remove_tree(join(dir, name))) end
  end
end

-- A folder with files but no cluster state is someone else's: never write into it.
local function refuse_foreign_dir(dir)
  for _, name in ipairs(sys.list_dir(dir) or {}) do
    if not is_lock_entry(name) then
      sys.fail(string.format("%s is not empty and holds no cephmark cluster; choose another --dir "
        .. "or empty it", dir))
    end
  end
end

local function remove_socket_dir(state)
  local sockets = value(state.socket_dir)
  if sockets and sockets:match("^/tmp/cephmark%-%x+$") then sys.remove_tree(sockets) end
end

local function create(state, opts, deadline)
  local dir = state.dir
  for _, sub in ipairs({ "log", "run", "crash", "mon", "osd", "mgr", "rgw" }) do
    must(sys.mkdir(join(dir, sub), 448))
  end
  must(sys.mkdir(state.socket_dir, 448))
  write_state(state)
  write_conf(state)

  local step = sys.monotonic()
  create_mon(state)
  local handle = wait_for_mon(state, deadline)
  log(opts, "mon.%s up on %s (%.1f s)", MON_ID, state.mon, seconds_since(step))

  step = sys.monotonic()
  if state.mgr then start_mgr(state) end
  create_osds(state, handle, deadline)
  -- the mgr and the health checks are awaited last, after rgw had time to start
  wait_ready(state, handle, deadline, opts, "osds")
  log(opts, "%d OSDs (%s) up and in (%.1f s)", state.osds, state.objectstore, seconds_since(step))

  if state.rgw then
    step = sys.monotonic()
    start_rgw(state, deadline)
    log(opts, "radosgw answering on %s (%.1f s)", rgw_url(state), seconds_since(step))
  end
  return handle
end

-- Adds the optional daemons asked for that a running cluster lacks; returns their names.
local function add_missing_daemons(state, opts, handle, deadline)
  local added = {}
  if opts.mgr and not state.mgr then
    require_programs(true, false)
    start_mgr(state)
    state.mgr = true
    added[#added + 1] = "mgr"
  end
  if opts.rgw and not state.rgw then
    require_programs(false, true)
    state.rgw = true
    write_state(state)
    local step = sys.monotonic()
    start_rgw(state, deadline)
    log(opts, "radosgw answering on %s (%.1f s)", rgw_url(state), seconds_since(step))
    added[#added + 1] = "rgw"
  end
  if #added > 0 then write_state(state) end
  return added
end

local function new_state(dir, opts)
  local osds = opts.osds or DEFAULT_OSDS
  local mon_port = must(sys.free_port())
  return {
    tool = "cephmark",
    version = STATE_VERSION,
    phase = "creating",
    dir = dir,
    socket_dir = choose_socket_dir(dir),
    fsid = uuid(),
    mon_port = mon_port,
    addr = opts.addr or "127.0.0.1",
    mon = "v2:" .. (opts.addr or "127.0.0.1") .. ":" .. mon_port,
    rgw_port = 0, -- chosen when radosgw starts
    osds = osds,
    pool_size = math.min(3, osds),
    objectstore = opts.objectstore or "memstore",
    memstore_bytes = opts.memstore_bytes or DEFAULT_MEMSTORE_BYTES,
    mgr = opts.mgr and true or false,
    rgw = opts.rgw and true or false,
    timeout = opts.timeout or DEFAULT_TIMEOUT,
    daemons = json.array(),
  }
end

-- Reuses the running cluster described by `state`: adds what is missing, checks that
-- it still runs. Returns nil (and the reason) when it cannot be used as it is. A daemon
-- added here that fails is stopped and forgotten, leaving the cluster as it was.
local function reuse(state, opts, deadline)
  local problem, handle = running_problem(state)
  if problem then return nil, problem end
  check_same_shape(state, opts)
  local before = { mgr = state.mgr, rgw = state.rgw, daemons = #state.daemons }
  local added
  local ok, err = pcall(function()
    added = add_missing_daemons(state, opts, handle, deadline)
    wait_ready(state, handle, deadline, opts, #added > 0 and "settled" or "running")
  end)
  handle:close()
  if not ok then
    local new_daemons = table.move(state.daemons, before.daemons + 1, #state.daemons, 1, {})
    stop_daemons(state, new_daemons)
    for i = #state.daemons, before.daemons + 1, -1 do state.daemons[i] = nil end
    state.mgr, state.rgw = before.mgr, before.rgw
    pcall(write_state, state)
    error(err, 0)
  end
  return added
end

-- Makes a new cluster in `dir` (empty but for the lock). On failure no daemon is left
-- running, but the folder stays: its logs say what went wrong.
local function create_new(dir, opts, deadline)
  local state = new_state(dir, opts)
  log(opts, "creating a cluster in %s: 1 mon, %d OSDs (%s)%s%s", dir, state.osds,
    state.objectstore, state.mgr and ", mgr" or "", state.rgw and ", rgw" or "")
  local handle
  local ok, err = pcall(function()
    handle = create(state, opts, deadline)
    wait_ready(state, handle, deadline, opts, "healthy")
  end)
  if handle then handle:close() end
  if not ok then
    state.phase = "failed"
    stop_cluster(state)
    pcall(write_state, state)
    error(err, 0)
  end
  state.phase = "ready"
  write_state(state)
  return state
end

-- cluster.up{dir=, osds=3, objectstore="memstore", memstore_bytes=2 GiB, mgr=false,
--   rgw=false, quiet=false, timeout=120}
--   -> info, {created=bool, added={"mgr", "rgw"}, seconds=N}
-- Returns once the cluster is usable: a new one healthy (mon in quorum, every OSD up and
-- in, the mgr active with all PGs active+clean, rgw answering, no health warning but the
-- tolerated ones). A cluster already running in `dir` is returned at once (a missing mgr
-- or rgw is added); a folder left by a dead or half-made cluster is wiped and a cluster
-- of the same shape made again, since memstore OSDs cannot come back after their
-- process died.
function M.up(opts)
  opts = opts or {}
  check_up_options(opts)
  local started = sys.monotonic()
  local dir = absolute_dir(opts.dir or M.default_dir())
  local timeout = opts.timeout or DEFAULT_TIMEOUT
  local deadline = started + timeout
  if not read_state(dir) then refuse_foreign_dir(dir) end

  return with_lock(dir, timeout, function()
    local state = read_state(dir)
    if state then
      state.timeout = timeout
      local added, problem = reuse(state, opts, deadline)
      if added then
        return info_of(state), { created = false, added = added, seconds = seconds_since(started) }
      end
      log(opts, "the cluster in %s is not usable (%s): making a new one", dir, problem)
      -- the new cluster has the old one's shape, except for what the caller asks now
      opts = {
        osds = opts.osds or value(state.osds),
        objectstore = opts.objectstore or value(state.objectstore),
        memstore_bytes = opts.memstore_bytes or value(state.memstore_bytes),
        mgr = opts.mgr or value(state.mgr), rgw = opts.rgw or value(state.rgw),
        quiet = opts.quiet, timeout = opts.timeout,
      }
      check_up_options(opts)
      require_programs(opts.mgr, opts.rgw)
      local _, stuck = stop_cluster(state)
      if #stuck > 0 then
        sys.fail(string.format("cannot stop %s of the old cluster in %s",
          table.concat(stuck, ", "), dir))
      end
      remove_socket_dir(state)
      empty_dir(dir)
    else
      refuse_foreign_dir(dir)
      require_programs(opts.mgr, opts.rgw)
    end
    state = create_new(dir, opts, deadline)
    return info_of(state), { created = true, added = {}, seconds = seconds_since(started) }
  end)
end

------------------------------------------------------------------------------------------
-- down

-- cluster.down{dir=} -> true, message: stops the daemons this module started (by their
-- recorded pids, each checked to still be that daemon) and removes the state folder.
-- Nothing there is not an error.
function M.down(opts)
  opts = opts or {}
  local dir = absolute_dir(opts.dir or M.default_dir())
  if not read_state(dir) then
    local entries = sys.list_dir(dir) or {}
    if #entries > 0 then
      return true, string.format("no cluster in %s (it holds other files; left as it is)", dir)
    end
    return true, "no cluster in " .. dir
  end
  return with_lock(dir, STOP_GRACE_SECONDS + KILL_GRACE_SECONDS + 30, function()
    local state = read_state(dir)
    if not state then return true, "no cluster in " .. dir end
    local stopped, stuck = stop_cluster(state)
    if #stuck > 0 then
      sys.fail(string.format("cannot stop %s; the folder %s was kept",
        table.concat(stuck, ", "), dir))
    end
    remove_socket_dir(state)
    -- the lock goes with the folder
    local ok, err = sys.remove_tree(dir)
    if not ok then sys.fail("the daemons are stopped but " .. err) end
    return true, string.format("stopped %d daemon%s and removed %s", stopped,
      stopped == 1 and "" or "s", dir)
  end)
end

------------------------------------------------------------------------------------------
-- status

local DISPLAY_RANK = { ["ceph-mon"] = 1, ["ceph-mgr"] = 2, ["ceph-osd"] = 3, ["radosgw"] = 4 }

-- The daemons in a stable order for people: mon, mgr, OSDs by id, rgw (the state file has
-- them in the order they started, which varies).
local function sorted_daemons(state)
  local list = table.move(state.daemons, 1, #state.daemons, 1, {})
  local function key(daemon)
    return DISPLAY_RANK[daemon.program] or 9, tonumber(daemon.name:match("%d+$")) or 0
  end
  table.sort(list, function(a, b)
    local rank_a, id_a = key(a)
    local rank_b, id_b = key(b)
    if rank_a ~= rank_b then return rank_a < rank_b end
    return id_a < id_b
  end)
  return list
end

-- cluster.status{dir=, timeout=5} -> table:
--   {dir=, exists=false} when no cluster is recorded there, else
--   {dir=, exists=true, phase=, fsid=, conf=, mon=, rgw=, osds={expected=, total=, up=, in=},
--    health=, checks={CODE=message}, quorum={names}, mgr={requested=, available=},
--    daemons={{name=, program=, pid=, alive=}}, problems={...}, notes={...}, healthy=bool}
function M.status(opts)
  opts = opts or {}
  local dir = absolute_dir(opts.dir or M.default_dir())
  local state = read_state(dir)
  if not state then return { dir = dir, exists = false } end
  local info = info_of(state)
  local result = {
    dir = dir, exists = true, phase = state.phase, fsid = state.fsid, conf = info.conf,
    mon = state.mon, rgw = info.rgw and info.rgw.url or nil,
    objectstore = state.objectstore,
    osds = { expected = state.osds },
    mgr = { requested = state.mgr },
    daemons = json.array(), problems = json.array(), notes = json.array(), checks = {},
  }
  sys.reap()
  local mon_alive = false
  for _, daemon in ipairs(sorted_daemons(state)) do
    local alive = daemon_alive(state, daemon)
    if daemon.program == "ceph-mon" then mon_alive = alive end
    result.daemons[#result.daemons + 1] = {
      name = daemon.name, program = daemon.program, pid = value(daemon.pid), alive = alive,
    }
    if not alive then result.problems[#result.problems + 1] = daemon.name .. " is not running" end
  end
  if state.phase ~= "ready" then
    table.insert(result.problems, 1, "its creation did not finish (" .. state.phase .. ")")
  end
  if mon_alive then
    local handle, err = connect(state, opts.timeout or 5)
    local status, pgs
    if handle then
      status, err = mon_status(handle)
      if status and state.mgr then pgs = expected_pgs(handle) end
      handle:close()
    end
    if status then
      local health = status.health or {}
      result.health = health.status
      for code, check in pairs(health.checks or {}) do
        result.checks[code] = (check.summary or {}).message
      end
      result.quorum = status.quorum_names
      local osdmap = osdmap_of(status)
      result.osds.total, result.osds.up, result.osds["in"] =
        osdmap.num_osds, osdmap.num_up_osds, osdmap.num_in_osds
      result.mgr.available = status.mgrmap and status.mgrmap.available == true
      local problems, notes = assess(state, status, "healthy", pgs)
      for _, p in ipairs(problems) do result.problems[#result.problems + 1] = p end
      for _, n in ipairs(notes) do result.notes[#result.notes + 1] = n end
    else
      result.problems[#result.problems + 1] = "the mon does not answer: " .. tostring(err)
    end
  end
  if state.rgw and not sys.port_open(state.rgw_port, state.addr or "127.0.0.1") then
    result.problems[#result.problems + 1] = "radosgw does not answer on " .. info.rgw.url
  end
  result.healthy = #result.problems == 0
  return result
end

------------------------------------------------------------------------------------------
-- faults: one daemon killed or restarted, for fault tests and for operators trying what a
-- scenario does when a daemon dies

-- The arguments a daemon was started with, after `-f -c ceph.conf` (as create/start did).
local function daemon_args(daemon)
  if daemon.program == "ceph-osd" then return { "-i", daemon.name:match("^osd%.(%d+)$") } end
  if daemon.program == "ceph-mon" then return { "-i", MON_ID } end
  if daemon.program == "ceph-mgr" then return { "-i", MGR_ID } end
  return { "-n", RGW_ENTITY }
end

local function fault_target(opts)
  local dir = absolute_dir(opts.dir or M.default_dir())
  local state = read_state(dir)
  if not state or state.phase ~= "ready" then
    sys.fail(string.format("no running cluster in %s", dir), sys.EXIT_USAGE)
  end
  local daemon = find_daemon(state, opts.name)
  if not daemon then
    local names = {}
    for _, d in ipairs(sorted_daemons(state)) do names[#names + 1] = d.name end
    sys.fail(string.format("no daemon '%s' in the cluster in %s (daemons: %s)", tostring(opts.name), dir,
      table.concat(names, ", ")), sys.EXIT_USAGE)
  end
  return state, daemon
end

-- Sends `signal` (KILL by default) to a recorded daemon, if it still is that daemon, and
-- waits until it is gone. cluster.kill{dir=, name="osd.1", signal="KILL"} -> pid or nil
function M.kill(opts)
  local state, daemon = fault_target(opts)
  local signal = opts.signal or "KILL"
  if signal ~= "KILL" and signal ~= "TERM" then
    error("cluster.kill: signal must be \"KILL\" or \"TERM\", got " .. tostring(signal), 2)
  end
  local pid = value(daemon.pid)
  if not daemon_alive(state, daemon) then return nil end
  sys.kill(pid, signal)
  local deadline = sys.monotonic() + STOP_GRACE_SECONDS + KILL_GRACE_SECONDS
  while daemon_alive(state, daemon) do
    if sys.monotonic() > deadline then sys.fail(string.format("%s (pid %d) did not exit", daemon.name, pid)) end
    pause(0.02)
    sys.reap()
  end
  return pid
end

-- Starts a recorded daemon again with the command line it was started with (stopping it
-- first, TERM then KILL, if it still runs) and records the new pid. An OSD is waited for
-- until the mon reports it up (opts.timeout, default 60 s). memstore OSDs keep their
-- store only across a clean stop (TERM): one that was KILLed cannot start again.
-- cluster.restart{dir=, name="osd.1", timeout=60} -> new pid
function M.restart(opts)
  local state, daemon = fault_target(opts)
  if daemon_alive(state, daemon) then
    local _, stuck = stop_daemons(state, { daemon })
    if #stuck > 0 then sys.fail("cannot stop " .. stuck[1]) end
  end
  sys.reap()
  local id = daemon.program == "ceph-osd" and tonumber(daemon.name:match("%d+$"))
  if not id then return spawn_daemon(state, daemon.name, daemon.program, daemon_args(daemon)).pid end
  local deadline = sys.monotonic() + (opts.timeout or 60)
  local handle = connect(state, math.max(1, deadline - sys.monotonic()))
  local closer <close> = setmetatable({}, { __close = function() handle:close() end })
  -- the mon may still show the killed instance up: wait for a boot after this epoch
  local before = handle:mon_command({ prefix = "osd dump" })
  local epoch = type(before) == "table" and before.epoch or 0
  daemon = spawn_daemon(state, daemon.name, daemon.program, daemon_args(daemon))
  while true do
    if not daemon_alive(state, daemon) then daemon_died(state, daemon) end
    local dump = handle:mon_command({ prefix = "osd dump" })
    for _, osd in ipairs(type(dump) == "table" and dump.osds or {}) do
      if osd.osd == id and osd.up == 1 and (osd.up_from or 0) > epoch then return daemon.pid end
    end
    if sys.monotonic() > deadline then
      sys.fail(string.format("%s restarted (pid %d) but not up within %g s; read %s", daemon.name,
        daemon.pid, opts.timeout or 60, daemon.log))
    end
    pause(0.2)
  end
end

return M
