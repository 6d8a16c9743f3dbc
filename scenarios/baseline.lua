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

local cm = require "cephmark"
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
  local host, port = peer:match("^%[(.+)%]:(%d+)$")
  if not host then host, port = peer:match("^([^:]+):(%d+)$") end
  if not host then host = peer:match("^%[(.+)%]$") or peer end
  return host, tonumber(port) or socket.DEFAULT_PORT
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

return cm.scenario {
  name = "baseline",
  description = "disk and network baselines, then rados write/seq/rand, and the cluster as a fraction of them",
  params = {
    paths = cm.list(cm.string(), { "." }, "a folder, file or block device on each disk to measure (comma-separated)"),
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
    local warned = false
    local function drop()
      if not p.drop_caches then return end
      local ok, err = disk.drop_caches()
      if not ok and not warned then
        warned = true
        s:say("  (caches not dropped: " .. tostring(err) .. ")")
      end
    end

    -- 1. each disk; every path is checked before the first phase runs
    for _, path in ipairs(p.paths) do
      local info = sys.stat(path)
      if info == nil then
        sys.fail(string.format("paths: %s does not exist (give a folder, a file or a block device)", path))
      end
      if info.type == "file" and not p.overwrite then
        sys.fail(string.format("paths: %s is an existing file: the disk phases would replace its contents; "
          .. "-p overwrite=true to let them, or give a folder (a test file is made in it and removed)", path))
      end
    end
    local disks = {}
    for _, path in ipairs(p.paths) do
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
        local options = {}
        for k, v in pairs(common) do options[k] = v end
        options.io_type, options.pattern = "write", "seq"
        if p.disk_sync ~= "none" then
          options.sync, options.sync_when = "fdatasync", p.disk_sync
        end
        entry.write = s:phase("disk-write", disk, options)
        s:say("  dd: " .. dd.dd_line(entry.write))
      else
        s:say(string.format("  %s is a block device: read phases only (-p allow_block_device=true to write it)", path))
      end
      drop()
      local seq = {}
      for k, v in pairs(common) do seq[k] = v end
      seq.io_type, seq.pattern = "read", "seq"
      entry.read = s:phase("disk-read", disk, seq)
      s:say("  dd: " .. dd.dd_line(entry.read))
      local rand = {}
      for k, v in pairs(common) do rand[k] = v end
      rand.io_type, rand.pattern, rand.threads = "read", "rand", p.threads
      entry.rand = s:phase("disk-rand", disk, rand)
      disks[#disks + 1] = entry
    end

    -- 2. the network to each peer
    local nets = {}
    for _, peer in ipairs(p.peers or {}) do
      local host, port = parse_peer(peer)
      local common = { host = host, port = port, seconds = p.net_seconds, streams = p.streams,
        token_file = p.net_token_file, variant = { peer = peer } }
      local entry = { peer = peer }
      local send, recv, rr = {}, {}, {}
      for k, v in pairs(common) do send[k], recv[k], rr[k] = v, v, v end
      send.direction, recv.direction = "send", "recv"
      rr.mode, rr.streams = "rr", 1
      entry.send = s:phase("net-send", socket, send)
      entry.recv = s:phase("net-recv", socket, recv)
      entry.rr = s:phase("net-rr", socket, rr)
      s:say(string.format("  %s: %.2f Gbit/s out, %.2f Gbit/s in, round trip p50 %s ms, %d retransmits",
        peer, (entry.send.receiver_bits_per_second or entry.send.bits_per_second) / 1e9,
        entry.recv.bits_per_second / 1e9, format_ms(entry.rr.lat.p50), entry.send.retransmits + entry.recv.retransmits))
      nets[#nets + 1] = entry
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
    local function field(entries, key, fn)
      local values = {}
      for _, e in ipairs(entries) do
        if e[key] then values[#values + 1] = fn(e[key]) end
      end
      return values
    end
    local function mib(r) return r.bandwidth_mib end
    local function bits_mib(bits) return bits / 8 / MIB end
    local disk_write = sum(field(disks, "write", mib))
    local ceilings = {
      write = { disk = disk_write and disk_write / p.size,
        net = minimum(field(nets, "send", function(r) return bits_mib(r.receiver_bits_per_second or r.bits_per_second) end)),
        caveats = "replication, journal, fsync, metadata, latency",
        disk_note = disk_write and string.format("%s/%d", format_mib(disk_write), p.size) },
      seq = { disk = sum(field(disks, "read", mib)),
        net = minimum(field(nets, "recv", function(r) return bits_mib(r.bits_per_second) end)),
        caveats = "metadata, latency" },
      rand = { disk = sum(field(disks, "rand", mib)),
        net = minimum(field(nets, "recv", function(r) return bits_mib(r.bits_per_second) end)),
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
        disk_p50 = minimum(field(disks, "rand", function(r) return r.lat.p50 end)),
        net_rtt_p50 = minimum(field(nets, "rr", function(r) return r.lat.p50 end)),
      }
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
      if #disks == 0 then notes[#notes + 1] = "no disk baseline (-p paths=...)" end
      if #nets == 0 then notes[#notes + 1] = "no network baseline (-p peers=HOST, each running `cephmark netserver`)" end
      if not p.rados then notes[#notes + 1] = "no cluster phases (-p rados=false)" end
      if objectstores.memstore then
        notes[#notes + 1] = "the OSDs use memstore (data in RAM): the disk baseline does not bound this cluster"
      end
      for _, note in ipairs(notes) do s:say("note: " .. note) end
      s:say("caveats (why a cluster stays below its ceilings):")
      for _, caveat in ipairs(CAVEATS) do s:say(string.format("  %-11s %s", caveat[1], caveat[2])) end
      return { rows = rows, latency = latency, notes = notes, pool_size = p.size,
        caveats = (function()
          local out = {}
          for i, caveat in ipairs(CAVEATS) do out[i] = { name = caveat[1], text = caveat[2] } end
          return out
        end)() }
    end
    s:phase("baseline-comparison", compare)
  end,
}
