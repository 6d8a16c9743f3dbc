-- baseline: the method every Ceph benchmarking guide starts with, as one run. First measure
-- what the hardware can do -- each disk (dd's sequential write and read, plus random reads
-- like rados bench's) and the network to each peer (iperf's bandwidth both ways, and a
-- round trip) -- then the cluster (rados bench write, seq, rand), and print the cluster's
-- results as a fraction of those ceilings, with the reasons a cluster falls short of them.
--
--   cephmark netserver --bind 0.0.0.0 --token-file /etc/cephmark/net.token   # on each peer
--   cephmark run scenarios/baseline.lua -p paths=/var/lib/ceph/osd/a,/var/lib/ceph/osd/b \
--       -p peers=10.0.0.11,10.0.0.12:5301 -p net_token_file=/etc/cephmark/net.token
--   cephmark run scenarios/baseline.lua -p rados=false -p paths=/mnt/disk1   # no cluster
--
-- A folder in `paths` gets a test file of disk_size, removed afterwards; an existing file is
-- refused unless -p overwrite=true (then its contents are replaced); a block device is only
-- read unless -p allow_block_device=true (never when mounted).
--
-- Every host in one run, with agents (docs/baselines.md, "On every host"):
--
--   cephmark agent --attr disk=/srv/osd-a,/srv/osd-b            # on each host, its own folders
--   cephmark run scenarios/baseline.lua --agents 8 -p peers=10.0.0.11,10.0.0.12 \
--       -p net_token_file=/etc/cephmark/net.token
--
-- Each agent measures the folders of its own disk attribute (one disk phase after another,
-- each agent's k-th folder in phase k) and its network to each peer (one round per peer,
-- each agent on a different peer in each round), and the tables have one row per (host,
-- disk) and per (agent -> peer).

local cm = require "cephmark"
local agent_targets = require "cephmark.agent_targets"
local disk = require "cephmark.disk"
local dd = require "cephmark.report.disk"
local socket = require "cephmark.socket"
local sys = require "cephmark.sys"

local MIB = 1048576

-- The seed's caveats: why a cluster reaches only part of what its disks and network can do.
local CAVEATS = {
  { "replication", "a pool of size N stores every byte N times and acknowledges a write when all N copies are written: the write ceiling is the disks' sum divided by N" },
  { "journal", "full data journal writes (filestore's journal, bluestore's WAL for small writes) write data twice: about 0.5 of the write ceiling is what that costs" },
  { "fsync", "OSDs make each write durable (fsync/flush) before acknowledging it; the disk baseline syncs once at the end (-p disk_sync=op syncs every write instead)" },
  { "metadata", "every RADOS object carries metadata (object info, PG log, omap): the smaller the blocks, the larger its share" },
  { "latency", "network and OSD processing add to every op; with few ops in flight latency bounds throughput, so readahead and queue depth matter" },
}

local function format_mib(value)
  if value == nil then return "-" end
  return string.format("%.1f", value)
end

local function format_fraction(value)
  if value == nil then return "-" end
  return string.format("%.2f", value)
end

local function format_ms(seconds)
  if seconds == nil then return "-" end
  return string.format("%.3g", seconds * 1000)
end

-- "host" or "host:port" (IPv6 as "[addr]:port") -> host, port
local function parse_peer(peer)
  local host, port = agent_targets.parse_peer(peer)
  return host, port or socket.DEFAULT_PORT
end

-- A peer as HOST:PORT ([v6]:PORT), its port given or the netserver's default.
local function peer_key(peer)
  local host, port = parse_peer(peer)
  return string.format(host:find(":", 1, true) and "[%s]:%d" or "%s:%d", host, port)
end

local function sum(values)
  local total, any = 0, false
  for _, v in ipairs(values) do total, any = total + v, true end
  return any and total or nil
end

local function minimum(values)
  local low
  for _, v in ipairs(values) do low = (low == nil or v < low) and v or low end
  return low
end

local function lowest(...)
  local low
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if v ~= nil and (low == nil or v < low) then low = v end
  end
  return low
end

-- The ceiling of a link figure over hosts: each host is bounded by its slowest peer, and
-- the hosts' links add up (one host: its slowest peer, as iperf to each peer says).
local function per_host_minimum_sum(rows, key)
  local by_host, order = {}, {}
  for _, row in ipairs(rows) do
    local value = row[key]
    if value ~= nil then
      local host = tostring(row.host)
      if by_host[host] == nil then order[#order + 1] = host end
      by_host[host] = by_host[host] == nil and value or math.min(by_host[host], value)
    end
  end
  local values = {}
  for _, host in ipairs(order) do values[#values + 1] = by_host[host] end
  return sum(values)
end

local function receiver_bits(r) return r.receiver_bits_per_second or r.bits_per_second end

-- A disk phase: the options in `common` and `extra`, with its kind of io.
local function disk_phase(s, name, common, io_type, pattern, extra)
  local options = {}
  for key, v in pairs(common) do options[key] = v end
  for key, v in pairs(extra or {}) do options[key] = v end
  options.io_type, options.pattern = io_type, pattern
  return s:phase(name, disk, options)
end

-- What a write phase adds for -p disk_sync (nil: none).
local function sync_options(p)
  return p.disk_sync ~= "none" and { sync = "fdatasync", sync_when = p.disk_sync } or nil
end

-- The three network phases on `common` (a peer's host and port, or peer = a list):
-- -> send, recv and round-trip results.
local function net_phases(s, common)
  local send, recv, rr = {}, {}, {}
  for key, v in pairs(common) do send[key], recv[key], rr[key] = v, v, v end
  send.direction, recv.direction = "send", "recv"
  rr.mode, rr.streams = "rr", 1
  return s:phase("net-send", socket, send), s:phase("net-recv", socket, recv), s:phase("net-rr", socket, rr)
end

------------------------------------------------------------------------------------------
-- Without --agents: this host's disks (-p paths) and its network to each peer.

local function local_disks(s, p, paths, drop)
  local rows = {}
  for _, path in ipairs(paths) do
    local info = sys.stat(path)
    if info == nil then
      sys.fail(string.format("paths: %s does not exist (give a folder, a file or a block device)", path))
    end
    if info.type == "file" and not p.overwrite then
      sys.fail(string.format("paths: %s is an existing file: the disk phases would replace its contents; "
        .. "-p overwrite=true to let them, or give a folder (a test file is made in it and removed)", path))
    end
  end
  for _, path in ipairs(paths) do
    local info = sys.stat(path)
    local target, created = path, false
    if info.type == "dir" then
      -- made here, exclusively, so the file written and removed is known to be this run's
      target = string.format("%s/cephmark-baseline-%d.dat", path:gsub("/+$", ""), sys.getpid())
      local made, err = sys.create_file(target)
      if not made then sys.fail(string.format("paths: cannot make the test file in %s: %s", path, err)) end
      created = true
    end
    local block_device = info.type == "other" -- a device node; disk.bench refuses any but block devices
    local write_ok = not block_device or p.allow_block_device
    local common = { path = target, block_size = p.block_size, seconds = p.disk_seconds,
      size = created and p.disk_size or nil, variant = { disk = path },
      allow_block_device = (block_device and p.allow_block_device) or nil,
      overwrite = (not block_device and (created or p.overwrite)) or nil }
    local entry = { path = path }
    local closer <close> = setmetatable({}, { __close = function()
      if created then os.remove(target) end
    end })
    if write_ok then
      entry.write = disk_phase(s, "disk-write", common, "write", "seq", sync_options(p))
      s:say("  dd: " .. dd.dd_line(entry.write))
    else
      s:say(string.format("  %s is a block device: read phases only (-p allow_block_device=true to write it)", path))
    end
    drop()
    entry.read = disk_phase(s, "disk-read", common, "read", "seq")
    s:say("  dd: " .. dd.dd_line(entry.read))
    entry.rand = disk_phase(s, "disk-rand", common, "read", "rand", { threads = p.threads })
    rows[#rows + 1] = { host = sys.hostname(), disk = path, write_mib = entry.write and entry.write.bandwidth_mib,
      read_mib = entry.read.bandwidth_mib, rand_mib = entry.rand.bandwidth_mib, rand_p50 = entry.rand.lat.p50 }
  end
  return rows
end

local function local_network(s, p)
  local rows = {}
  for _, peer in ipairs(p.peers or {}) do
    local host, port = parse_peer(peer)
    local sent, received, round_trip = net_phases(s, { host = host, port = port, seconds = p.net_seconds,
      streams = p.streams, token_file = p.net_token_file, variant = { peer = peer } })
    s:say(string.format("  %s: %.2f Gbit/s out, %.2f Gbit/s in, round trip p50 %s ms, %d retransmits",
      peer, receiver_bits(sent) / 1e9, received.bits_per_second / 1e9, format_ms(round_trip.lat.p50),
      sent.retransmits + received.retransmits))
    rows[#rows + 1] = { host = sys.hostname(), peer = peer, send_bits_per_second = receiver_bits(sent),
      recv_bits_per_second = received.bits_per_second, rtt_p50 = round_trip.lat.p50,
      retransmits = sent.retransmits + received.retransmits, sharing = 1 }
  end
  return rows
end

------------------------------------------------------------------------------------------
-- With --agents: each agent's own disks (its --attr disk=FOLDER[,FOLDER...]) and its
-- network to each peer. What cannot be done on agents is refused before any phase.

local function agent_disk_lists(p, agents)
  if p.paths ~= nil then
    sys.fail("paths: with --agents each agent measures its own disks, the folders of its `--attr disk=FOLDER[,FOLDER...]`; "
      .. "leave out -p paths")
  end
  if p.allow_block_device or p.overwrite then
    sys.fail(string.format("%s: with --agents each disk is a folder, in which each phase makes its own test file "
      .. "and removes it; block devices and existing files are measured without --agents",
      p.allow_block_device and "allow_block_device" or "overwrite"))
  end
  local lists, with, without = {}, nil, nil
  for _, agent in ipairs(agents) do
    lists[agent.name] = agent.attrs.disk and agent_targets.values(agent.attrs.disk) or {}
    if #lists[agent.name] > 0 then with = with or agent.name else without = without or agent.name end
  end
  if with and without then
    sys.fail(string.format("agent %s has no attribute 'disk', which the baseline needs since agent %s has one; "
      .. "start it with `cephmark agent --attr disk=FOLDER[,FOLDER...]`", without, with))
  end
  local owners = {}
  for _, agent in ipairs(agents) do
    for _, folder in ipairs(lists[agent.name]) do
      local key = tostring(agent.host) .. "\0" .. folder:gsub("/+$", "")
      if owners[key] then
        sys.fail(string.format("agents %s and %s both name the disk %s on host %s; give each folder to one agent",
          owners[key], agent.name, folder, tostring(agent.host)))
      end
      owners[key] = agent.name
    end
  end
  return lists, with ~= nil
end

-- Phase k measures each agent's k-th disk ({agent.disk#k}); an agent with fewer disks
-- measures its first ones again in turn, so that every agent runs every phase, and only
-- each disk's own phase fills its row.
local function agent_disks(s, p, agents)
  local lists, any = agent_disk_lists(p, agents)
  if not any then return {} end
  local count = 0
  for _, list in pairs(lists) do count = math.max(count, #list) end
  local rows, row_of = {}, {}
  for _, agent in ipairs(agents) do
    for k, folder in ipairs(lists[agent.name]) do
      local row = { host = agent.host, agent = agent.name, disk = folder }
      rows[#rows + 1] = row
      row_of[agent.name .. "\0" .. k] = row
    end
  end
  local file = string.format("cephmark-baseline-%s-%d.dat", sys.hostname():gsub("[^%w.-]", "-"), sys.getpid())
  for k = 1, count do
    local common = { path = "{agent.disk#" .. k .. "}/" .. file, block_size = p.block_size, seconds = p.disk_seconds,
      size = p.disk_size, remove = true, variant = { disk_index = k } }
    local results = { write = disk_phase(s, "disk-write", common, "write", "seq", sync_options(p)),
      read = disk_phase(s, "disk-read", common, "read", "seq"),
      rand = disk_phase(s, "disk-rand", common, "read", "rand", { threads = p.threads }) }
    for _, agent in ipairs(agents) do
      local row = row_of[agent.name .. "\0" .. k]
      local function of(which) return row and (results[which].agents or {})[agent.name] end
      local write, read, rand = of("write"), of("read"), of("rand")
      if row then
        row.write_mib, row.read_mib = write and write.bandwidth_mib, read and read.bandwidth_mib
        row.rand_mib, row.rand_p50 = rand and rand.bandwidth_mib, rand and rand.p50
        if write and write.dd then s:say(string.format("  %s %s write dd: %s", agent.name, row.disk, dd.dd_line(write))) end
        if read and read.dd then s:say(string.format("  %s %s read dd: %s", agent.name, row.disk, dd.dd_line(read))) end
      end
    end
  end
  return rows
end

-- Round k sends agent i to peer (i + k) modulo the peers (peer = a list spread over the
-- agents), so that over the rounds every agent reaches every peer once, and each round
-- spreads the agents over the peers rather than sending all of them to one.
local function agent_network(s, p, agents)
  local peers = {}
  for _, peer in ipairs(p.peers or {}) do peers[#peers + 1] = peer_key(peer) end
  local rows = {}
  for k = 0, #peers - 1 do
    local rotated = {}
    for i = 1, #peers do rotated[i] = peers[(k + i - 1) % #peers + 1] end
    local sent_phase, recv_phase, rr_phase = net_phases(s, { peer = rotated, seconds = p.net_seconds,
      streams = p.streams, token_file = p.net_token_file, variant = { round = k + 1 } })
    local sent, received, round_trip = sent_phase.agents or {}, recv_phase.agents or {}, rr_phase.agents or {}
    -- each agent's peer is the one it reports (its place in the phase's agent list); the
    -- place in the run's list stands in for an agent that reported nothing
    local planned, sharing = {}, {}
    for index, agent in ipairs(agents) do
      local any = sent[agent.name] or received[agent.name] or round_trip[agent.name]
      planned[agent.name] = any and any.endpoint or rotated[(index - 1) % #rotated + 1]
      sharing[planned[agent.name]] = (sharing[planned[agent.name]] or 0) + 1
    end
    for peer, group in pairs(sent_phase.by_endpoint or {}) do sharing[peer] = #group.agents end
    for _, agent in ipairs(agents) do
      local peer = planned[agent.name]
      local out, back, rtt = sent[agent.name], received[agent.name], round_trip[agent.name]
      rows[#rows + 1] = { host = agent.host, agent = agent.name, peer = peer, sharing = sharing[peer],
        send_bits_per_second = out and receiver_bits(out), recv_bits_per_second = back and back.bits_per_second,
        rtt_p50 = rtt and rtt.p50,
        retransmits = (out or back) and ((out and out.retransmits or 0) + (back and back.retransmits or 0)) or nil }
    end
  end
  table.sort(rows, function(a, b)
    if a.agent ~= b.agent then return a.agent < b.agent end
    return a.peer < b.peer
  end)
  return rows
end

local function format_gbit(bits)
  if bits == nil then return "-" end
  return string.format("%.2f", bits / 1e9)
end

-- Prints a table whose columns are as wide as their widest cell: the first `left` columns
-- left-aligned (names), the rest right-aligned (figures).
local function say_table(s, left, header, rows)
  local widths = {}
  for _, row in ipairs({ header, table.unpack(rows) }) do
    for i, cell in ipairs(row) do widths[i] = math.max(widths[i] or 0, #tostring(cell)) end
  end
  for _, row in ipairs({ header, table.unpack(rows) }) do
    local cells = {}
    for i, cell in ipairs(row) do
      cells[i] = string.format("%" .. (i <= left and "-" or "") .. widths[i] .. "s", tostring(cell))
    end
    s:say((table.concat(cells, "  "):gsub("%s+$", "")))
  end
end

-- The per-host tables of a run on agents: one row per (host, disk) and per (agent -> peer).
local function say_host_tables(s, disk_rows, net_rows)
  if #disk_rows > 0 then
    local lines = {}
    for i, row in ipairs(disk_rows) do
      lines[i] = { tostring(row.host), row.agent, row.disk, format_mib(row.write_mib), format_mib(row.read_mib),
        format_mib(row.rand_mib), format_ms(row.rand_p50) }
    end
    s:say("")
    s:say("disks, one row per host and disk (MiB/s; rand p50 in ms)")
    say_table(s, 3, { "host", "agent", "disk", "write", "read", "rand", "rand p50" }, lines)
  end
  if #net_rows > 0 then
    local lines = {}
    for i, row in ipairs(net_rows) do
      lines[i] = { tostring(row.host), row.agent, row.peer, format_gbit(row.send_bits_per_second),
        format_gbit(row.recv_bits_per_second), format_ms(row.rtt_p50), row.retransmits or "-", row.sharing }
    end
    s:say("")
    s:say("network, one row per agent and peer (Gbit/s; round trip p50 in ms; sharing: agents on that peer at once)")
    say_table(s, 3, { "host", "agent", "peer", "out", "in", "rtt p50", "retransmits", "sharing" }, lines)
  end
end

return cm.scenario {
  name = "baseline",
  description = "disk and network baselines, then rados write/seq/rand, and the cluster as a fraction of them",
  params = {
    paths = cm.list(cm.string(), nil, "a folder, file or block device on each disk to measure (comma-separated; "
      .. "default: the current folder; with --agents each agent's --attr disk= instead)", { optional = true }),
    peers = cm.list(cm.string(), nil, "hosts running `cephmark netserver`, HOST or HOST:PORT (none: no network baseline)",
      { optional = true }),
    rados = cm.bool(true, "measure the cluster (rados write, seq, rand in a new pool) after the baselines"),
    seconds = cm.duration("10s", "length of each rados phase"),
    threads = cm.integer(16, "ops in flight, for rados and the disks' random reads", { min = 1, max = 65536 }),
    block_size = cm.size("4M", "bytes per op, for rados and the disks (dd's bs)", { min = 1, max = "1G" }),
    size = cm.integer(3, "copies in the replicated pool", { min = 1 }),
    disk_seconds = cm.duration("5s", "length of each disk phase"),
    disk_size = cm.size("256M", "the test file made in each folder (its region for the disk phases)", { min = 1 }),
    disk_sync = cm.enum({ "end", "op", "none" }, "end", "fdatasync once at the end (dd conv=fdatasync), after every write, or never"),
    allow_block_device = cm.bool(false, "write to block devices given in paths (destroys their contents)"),
    overwrite = cm.bool(false, "write to existing files given in paths (replaces their contents)"),
    net_seconds = cm.duration("5s", "length of each network phase"),
    net_token_file = cm.string(nil, "file holding the netservers' token (their --token-file); else $CEPHMARK_NET_TOKEN",
      { optional = true }),
    streams = cm.integer(1, "TCP streams per network phase (iperf -P)", { min = 1, max = 256 }),
    drop_caches = cm.bool(true, "drop the page cache before read phases (root only)"),
  },
  pools = function(p)
    if not p.rados then return {} end
    return { bench = { type = "replicated", size = p.size } }
  end,
  run = function(s, p)
    local agents = s:agents()
    local warned = false
    local function drop()
      -- (on agents the disk phases read with O_DIRECT and the rados reads come from the
      -- cluster: this host's page cache is no part of them)
      if not p.drop_caches or agents then return end
      local ok, err = disk.drop_caches()
      if not ok and not warned then
        warned = true
        s:say("  (caches not dropped: " .. tostring(err) .. ")")
      end
    end

    -- 1. each disk, 2. the network to each peer: this host's, or each agent's
    local disk_rows, net_rows
    if agents then
      disk_rows = agent_disks(s, p, agents)
      net_rows = agent_network(s, p, agents)
    else
      disk_rows = local_disks(s, p, p.paths or { "." }, drop)
      net_rows = local_network(s, p)
    end

    -- 3. the cluster
    local cluster = {}
    local objectstores = {}
    if p.rados then
      local pool = s:pool("bench")
      drop()
      cluster.write = s:phase("write", pool, { seconds = p.seconds, threads = p.threads, block_size = p.block_size })
      drop()
      cluster.seq = s:phase("seq", pool, { seconds = p.seconds, threads = p.threads })
      drop()
      cluster.rand = s:phase("rand", pool, { seconds = p.seconds, threads = p.threads })
      s:phase("cleanup", pool)
      local ok, metadata = pcall(function() return s:cluster():mon_command { prefix = "osd metadata" } end)
      if ok and type(metadata) == "table" then
        for _, osd in ipairs(metadata) do
          if osd.osd_objectstore then objectstores[osd.osd_objectstore] = true end
        end
      end
    end

    -- 4. the cluster as a fraction of the baselines
    local function column(rows, key)
      local values = {}
      for _, row in ipairs(rows) do
        if row[key] ~= nil then values[#values + 1] = row[key] end
      end
      return values
    end
    local function bits_mib(bits) return bits and bits / 8 / MIB end
    local disk_write = sum(column(disk_rows, "write_mib"))
    local ceilings = {
      write = { disk = disk_write and disk_write / p.size,
        net = bits_mib(per_host_minimum_sum(net_rows, "send_bits_per_second")),
        caveats = "replication, journal, fsync, metadata, latency",
        disk_note = disk_write and string.format("%s/%d", format_mib(disk_write), p.size) },
      seq = { disk = sum(column(disk_rows, "read_mib")),
        net = bits_mib(per_host_minimum_sum(net_rows, "recv_bits_per_second")),
        caveats = "metadata, latency" },
      rand = { disk = sum(column(disk_rows, "rand_mib")),
        net = bits_mib(per_host_minimum_sum(net_rows, "recv_bits_per_second")),
        caveats = "metadata, latency" },
    }
    local function compare(phase)
      local rows = {}
      for _, name in ipairs { "write", "seq", "rand" } do
        local c = ceilings[name]
        local got = cluster[name] and cluster[name].bandwidth_mib
        local ceiling = lowest(c.disk, c.net)
        rows[#rows + 1] = {
          phase = name, cluster_mib = got, disk_ceiling_mib = c.disk, net_ceiling_mib = c.net,
          of_disk = got and c.disk and c.disk > 0 and got / c.disk or nil,
          of_net = got and c.net and c.net > 0 and got / c.net or nil,
          fraction = got and ceiling and ceiling > 0 and got / ceiling or nil,
          bound = ceiling and (ceiling == c.disk and "disk" or "network") or nil,
          caveats = c.caveats, disk_note = c.disk_note,
        }
      end
      local latency = {
        cluster_p50 = cluster.rand and cluster.rand.lat.p50,
        disk_p50 = minimum(column(disk_rows, "rand_p50")),
        net_rtt_p50 = minimum(column(net_rows, "rtt_p50")),
      }
      if agents then say_host_tables(s, disk_rows, net_rows) end
      local header = string.format("%-6s %13s %20s %8s %16s %7s %9s  %s", "phase", "cluster MiB/s",
        "disk ceiling MiB/s", "of disk", "net ceiling MiB/s", "of net", "fraction", "caveats")
      s:say("")
      s:say("cluster as a fraction of the baselines (ceiling = the lower of disk and network)")
      s:say(header)
      for _, row in ipairs(rows) do
        local disk_text = format_mib(row.disk_ceiling_mib) .. (row.disk_note and (" (" .. row.disk_note .. ")") or "")
        s:say(string.format("%-6s %13s %20s %8s %16s %7s %9s  %s", row.phase, format_mib(row.cluster_mib), disk_text,
          format_fraction(row.of_disk), format_mib(row.net_ceiling_mib), format_fraction(row.of_net),
          format_fraction(row.fraction), row.caveats))
      end
      s:say(string.format("latency p50 (ms): cluster rand %s; disk rand %s; network round trip %s",
        format_ms(latency.cluster_p50), format_ms(latency.disk_p50), format_ms(latency.net_rtt_p50)))
      local notes = {}
      if #disk_rows == 0 then
        notes[#notes + 1] = agents and "no disk baseline (start the agents with --attr disk=FOLDER[,FOLDER...])" or
          "no disk baseline (-p paths=...)"
      end
      if #net_rows == 0 then notes[#notes + 1] = "no network baseline (-p peers=HOST, each running `cephmark netserver`)" end
      if agents and #disk_rows + #net_rows > 0 then
        notes[#notes + 1] = "on agents: the disk ceiling adds up every host's disks, the network ceiling every host's "
          .. "slowest peer"
      end
      if not p.rados then notes[#notes + 1] = "no cluster phases (-p rados=false)" end
      if objectstores.memstore then
        notes[#notes + 1] = "the OSDs use memstore (data in RAM): the disk baseline does not bound this cluster"
      end
      for _, note in ipairs(notes) do s:say("note: " .. note) end
      s:say("caveats (why a cluster stays below its ceilings):")
      for _, caveat in ipairs(CAVEATS) do s:say(string.format("  %-11s %s", caveat[1], caveat[2])) end
      return { rows = rows, latency = latency, notes = notes, pool_size = p.size, disks = disk_rows,
        networks = net_rows,
        caveats = (function()
          local out = {}
          for i, caveat in ipairs(CAVEATS) do out[i] = { name = caveat[1], text = caveat[2] } end
          return out
        end)() }
    end
    s:phase("baseline-comparison", compare, { coordinator = true })
  end,
}
