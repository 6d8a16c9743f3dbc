-- The hosts' side of each phase from Prometheus: per host (instance), the CPU busy time by
-- mode, each disk's utilisation and await, each network interface's bytes, and the ceph
-- daemons' CPU (from process-exporter or cAdvisor), over each phase's exact wall-clock
-- window, read through Prometheus's HTTP query API. The operators of cephadm and Rook
-- clusters already run Prometheus with node-exporter; this reads what it scraped, on the
-- cluster's own hosts. Kept as the phase's `cluster.prometheus` (docs/prometheus.md).
--
-- Prometheus's data lag one scrape behind: the phases are read once, at the end of the run,
-- after waiting (bounded) for a scrape later than the last phase's end. Reading never fails
-- a phase or a run: an unreachable server, an error answer or a timeout gives one warning
-- line and the phases are recorded without these figures.

local json = require "cephmark.json"
local sys = require "cephmark.sys"

local M = {}

M.TIMEOUT = 5 -- seconds one request may take
M.COARSE_INTERVALS = 2 -- windows shorter than this many scrape intervals give coarse figures
M.WAIT_MAX = 60 -- seconds the end of a run waits at most for Prometheus to catch up
M.MGR_KEY = "mgr/dashboard/PROMETHEUS_API_HOST"

-- Where the URL came from, as results record it.
M.FROM_CLI = "--prometheus"
M.FROM_SCENARIO = "scenario"
M.FROM_MGR_CONFIG = "ceph config " .. M.MGR_KEY
M.FROM_MGR_CONFIG_KEY = "ceph config-key " .. M.MGR_KEY

-- The ceph daemons' kinds as process-exporter groups and cAdvisor containers are named
-- after them: the word in a container's name (cephadm: ceph-FSID-osd-3 or ceph-FSID-osd.3;
-- Rook: container "osd" in pod rook-ceph-osd-3-...) and the process name it stands for.
M.DAEMON_WORDS = { { "osd", "ceph-osd" }, { "mon", "ceph-mon" }, { "mgr", "ceph-mgr" },
  { "mds", "ceph-mds" }, { "rgw", "radosgw" } }

-- The queries, one per figure, each evaluated at the phase's end over a range of the
-- phase's length (RANGE). Aggregated by Prometheus, so that an answer is one number per
-- host and device, whatever the number of CPUs or samples.
M.QUERIES = {
  { key = "cpu", expr = "sum by (instance, mode) (rate(node_cpu_seconds_total[RANGE]))" },
  { key = "disk_busy", expr = "sum by (instance, device) (rate(node_disk_io_time_seconds_total[RANGE]))" },
  { key = "disk_time", expr = "sum by (instance, device) (rate(node_disk_read_time_seconds_total[RANGE]) + " ..
    "rate(node_disk_write_time_seconds_total[RANGE]))" },
  { key = "disk_ops", expr = "sum by (instance, device) (rate(node_disk_reads_completed_total[RANGE]) + " ..
    "rate(node_disk_writes_completed_total[RANGE]))" },
  { key = "receive", expr = "sum by (instance, device) (rate(node_network_receive_bytes_total[RANGE]))" },
  { key = "transmit", expr = "sum by (instance, device) (rate(node_network_transmit_bytes_total[RANGE]))" },
  { key = "process", daemons = true, expr = "sum by (instance, groupname) (rate(namedprocess_namegroup_cpu_seconds_total" ..
    "{groupname=~\"ceph-.+|radosgw.*\"}[RANGE]))" },
  { key = "cadvisor", daemons = true, expr = "sum by (instance, name, container, pod) (" ..
    "rate(container_cpu_usage_seconds_total{name=~\"ceph-.+\"}[RANGE]) or " ..
    "rate(container_cpu_usage_seconds_total{pod=~\"rook-ceph-.+\",container!=\"\",container!=\"POD\"}[RANGE]))" },
}

M.PROCESS_EXPORTER = "process-exporter (namedprocess_namegroup_cpu_seconds_total)"
M.CADVISOR = "cAdvisor (container_cpu_usage_seconds_total)"
M.NO_DAEMON_SOURCE = "neither process-exporter's namedprocess_namegroup_cpu_seconds_total nor cAdvisor's " ..
  "container_cpu_usage_seconds_total had series for the ceph daemons"

-------------------------------------------------------------------------------------------
-- URLs

-- check_url(text) -> the base URL (without a trailing slash), or nil and why it is not one.
-- Prometheus's base URL: http(s)://HOST[:PORT][/PREFIX], no query, no user or password.
function M.check_url(text)
  if type(text) ~= "string" then return nil, "expected a string, got " .. type(text) end
  if text == "" then return nil, "it is empty" end
  if text:find("[%s%c]") then return nil, "it contains a space or a control character" end
  local scheme, rest = text:match("^(%a[%w+.-]*)://(.*)$")
  if not scheme then return nil, "it does not start with http:// or https://" end
  scheme = scheme:lower()
  if scheme ~= "http" and scheme ~= "https" then
    return nil, "its scheme is " .. scheme .. ", not http or https"
  end
  if rest:find("[?#]") then return nil, "it has a query or a fragment (give Prometheus's base URL)" end
  local authority, path = rest:match("^([^/]*)(.*)$")
  if authority:find("@", 1, true) then return nil, "a user or password in the URL is not supported" end
  local host, port
  if authority:sub(1, 1) == "[" then
    host, port = authority:match("^(%[[%x:.]+%])(.*)$")
  else
    host, port = authority:match("^([%w._-]+)(.*)$")
  end
  if not host then return nil, "it has no host" end
  if port ~= "" then
    local digits = port:match("^:(%d+)$")
    local number = digits and #digits <= 5 and tonumber(digits)
    if not number or number < 1 or number > 65535 then
      return nil, "its port is not a number from 1 to 65535"
    end
  end
  return scheme .. "://" .. authority .. path:gsub("/+$", "")
end

-- The refusal of a malformed URL, for the command line and the scenario alike.
function M.url_refusal(what, text)
  local _, why = M.check_url(text)
  return string.format("%s expects Prometheus's base URL (http://HOST:PORT), got '%s': %s", what,
    tostring(text), why)
end

-- from_cluster(cluster) -> url, where | nil: the Prometheus the dashboard module was given
-- (`ceph dashboard set-prometheus-api-host`, which cephadm runs when it deploys
-- Prometheus). Since Octopus it is a mgr module option, in the mon's config database as
-- mgr/dashboard/PROMETHEUS_API_HOST; `config get` refuses that name unless a mgr with the
-- dashboard module runs, so it is looked for in `config dump`. Older releases kept it in
-- the config-key store under the same name. Never raises: a cluster that answers neither
-- has none.
function M.from_cluster(cluster)
  local ok, dump = pcall(cluster.mon_command, cluster, { prefix = "config dump", format = "json" })
  if ok and type(dump) == "table" then
    for _, entry in ipairs(dump) do
      if type(entry) == "table" and entry.name == M.MGR_KEY and type(entry.value) == "string" and
        entry.value ~= "" and (entry.section == "mgr" or entry.section == "global") then
        return entry.value, M.FROM_MGR_CONFIG
      end
    end
  end
  local found, value = pcall(cluster.mon_command, cluster, { prefix = "config-key get", key = M.MGR_KEY })
  if found and type(value) == "string" and value ~= "" then return value, M.FROM_MGR_CONFIG_KEY end
  return nil
end

-------------------------------------------------------------------------------------------
-- The query API

-- Prometheus's durations: "15s", "1m30s", "500ms".
function M.parse_duration(text)
  if type(text) ~= "string" or text == "" then return nil end
  local units = { ms = 0.001, s = 1, m = 60, h = 3600, d = 86400, w = 604800, y = 31536000 }
  local total, rest = 0, text
  while rest ~= "" do
    local number, unit, after = rest:match("^(%d+)(%a+)(.*)$")
    if not number or not units[unit] then return nil end
    total = total + tonumber(number) * units[unit]
    rest = after
  end
  return total
end

-- A range for a query, in whole milliseconds (Prometheus accepts "2500ms").
function M.range(seconds)
  return string.format("%dms", math.max(1, math.floor(seconds * 1000 + 0.5)))
end

local Client = {}
Client.__index = Client

-- client(url, options) -> a client of one Prometheus; options.get replaces http.get
-- (same arguments and answers), options.timeout the seconds per request.
function M.client(url, options)
  options = options or {}
  return setmetatable({ url = url, timeout = options.timeout or M.TIMEOUT,
    get = options.get or require("cephmark.http").get, requests = 0 }, Client)
end

-- GET url..path with query parameters {{name, value}, ...} -> the answer's `data`, or nil
-- and a sentence: no answer, an HTTP error, or an answer that is not Prometheus's JSON.
function Client:api(path, parameters)
  local http = require "cephmark.http"
  local parts = {}
  for _, pair in ipairs(parameters or {}) do parts[#parts + 1] = pair[1] .. "=" .. http.escape(pair[2]) end
  local url = self.url .. path .. (#parts > 0 and ("?" .. table.concat(parts, "&")) or "")
  self.requests = self.requests + 1
  local body, status = self.get(url, { timeout = self.timeout })
  if not body then return nil, tostring(status) end
  local decoded, doc = pcall(json.decode, body)
  if not decoded or type(doc) ~= "table" then doc = nil end
  if status ~= 200 or not doc or doc.status ~= "success" then
    local detail = doc and type(doc.error) == "string" and doc.error or
      (not doc and body:find("%S") and ("not Prometheus's JSON: " .. body:sub(1, 80):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")) or nil)
    return nil, string.format("%s%s: HTTP %d%s", self.url, path, status, detail and (" (" .. detail .. ")") or "")
  end
  return doc.data
end

-- query(expr, time) -> the instant vector (a list of {metric = labels, value = {t, "v"}}),
-- or nil and a sentence.
function Client:query(expr, time)
  local data, err = self:api("/api/v1/query", { { "query", expr }, { "time", string.format("%.3f", time) } })
  if not data then return nil, err end
  if data.resultType ~= "vector" or type(data.result) ~= "table" then
    return nil, string.format("%s/api/v1/query: expected a vector for %s, got %s", self.url, expr,
      tostring(data.resultType))
  end
  return data.result
end

-- The shortest and the longest scrape interval of the active targets (/api/v1/targets,
-- scrapeInterval), else the global one of the configuration (/api/v1/status/config) twice
-- -> seconds, seconds, or nil and why. Jobs may differ: an exporter that is slow to
-- scrape (process-exporter reads all of /proc) is often scraped less often than
-- node-exporter.
function Client:scrape_intervals()
  local data, err = self:api("/api/v1/targets", { { "state", "active" } })
  if not data then return nil, err end
  local shortest, longest
  for _, target in ipairs(type(data.activeTargets) == "table" and data.activeTargets or {}) do
    local seconds = type(target) == "table" and M.parse_duration(target.scrapeInterval)
    if seconds and seconds > 0 then
      if not longest or seconds > longest then longest = seconds end
      if not shortest or seconds < shortest then shortest = seconds end
    end
  end
  if longest then return shortest, longest end
  local config, cerr = self:api("/api/v1/status/config")
  if not config then return nil, cerr end
  local text = type(config.yaml) == "string" and config.yaml or ""
  local seconds = M.parse_duration(text:match("scrape_interval:%s*(%w+)"))
  if not seconds or seconds <= 0 then
    return nil, self.url .. ": no scrape interval in its targets or configuration"
  end
  return seconds, seconds
end

-- The time of the oldest of the targets' latest scrapes (min(timestamp(up))), or nil.
function Client:latest_scrape(now)
  local result, err = self:query("min(timestamp(up))", now)
  if not result then return nil, err end
  local sample = result[1]
  return sample and type(sample.value) == "table" and tonumber(sample.value[2]) or nil
end

-------------------------------------------------------------------------------------------
-- Figures

-- "10.0.0.1:9100" -> "10.0.0.1", "[::1]:9100" -> "[::1]", "node1" -> "node1": node-exporter
-- and process-exporter answer on different ports of one host; their figures meet under
-- the host.
function M.host_of(instance)
  if type(instance) ~= "string" then return "?" end
  return instance:match("^(%[.*%]):%d+$") or instance:match("^([^:]+):%d+$") or instance
end

-- The daemon kind (ceph-osd, ...) of a cAdvisor series, or nil for a container that is
-- not a ceph daemon (a crash collector, an exporter).
function M.container_kind(labels)
  for _, label in ipairs { "container", "name", "pod" } do
    local name = labels[label]
    if type(name) == "string" and name ~= "" then
      local padded = "-" .. name .. "-"
      for _, pair in ipairs(M.DAEMON_WORDS) do
        if padded:find("[-.]" .. pair[1] .. "[-.]") then return pair[2] end
      end
    end
  end
  return nil
end

local function sample_value(sample)
  local value = type(sample) == "table" and type(sample.value) == "table" and tonumber(sample.value[2]) or nil
  if value == nil or value ~= value or value == math.huge or value == -math.huge then return nil end
  return value
end

-- figures(answers, seconds, interval) -> the phase's `prometheus` table from the queries'
-- answers ({[key] = vector}): rates over the phase times its length give amounts.
function M.figures(answers, seconds, interval)
  local hosts = {}
  local function host(labels)
    local instance = type(labels) == "table" and labels.instance or nil
    local key = M.host_of(instance)
    local entry = hosts[key]
    if not entry then
      entry = { instances = {} }
      hosts[key] = entry
    end
    if instance then entry.instances[instance] = true end
    return entry
  end
  local function each(key, fn)
    for _, sample in ipairs(answers[key] or {}) do
      local value = sample_value(sample)
      if value then fn(host(sample.metric), sample.metric or {}, value) end
    end
  end

  each("cpu", function(entry, labels, rate)
    entry.cpu = entry.cpu or { seconds = {}, rate = 0 }
    entry.cpu.seconds[labels.mode or "?"] = rate * seconds
    entry.cpu.rate = entry.cpu.rate + rate
  end)
  local function device(entry, field, labels)
    entry[field] = entry[field] or {}
    local name = labels.device or "?"
    entry[field][name] = entry[field][name] or {}
    return entry[field][name]
  end
  each("disk_busy", function(entry, labels, rate) device(entry, "disks", labels).utilisation = rate end)
  each("disk_time", function(entry, labels, rate) device(entry, "disks", labels).time_rate = rate end)
  each("disk_ops", function(entry, labels, rate) device(entry, "disks", labels).ops_rate = rate end)
  each("receive", function(entry, labels, rate) device(entry, "network", labels).receive_bytes = rate * seconds end)
  each("transmit", function(entry, labels, rate) device(entry, "network", labels).transmit_bytes = rate * seconds end)

  -- the daemons' CPU: process-exporter's groups when there are any, else cAdvisor's
  -- containers summed by kind
  local source
  if #(answers.process or {}) > 0 then
    source = M.PROCESS_EXPORTER
    each("process", function(entry, labels, rate)
      entry.ceph = entry.ceph or {}
      local group = labels.groupname or "?"
      entry.ceph[group] = { seconds = rate * seconds }
    end)
  elseif #(answers.cadvisor or {}) > 0 then
    each("cadvisor", function(entry, labels, rate)
      local kind = M.container_kind(labels)
      if kind then
        source = M.CADVISOR
        entry.ceph = entry.ceph or {}
        local figure = entry.ceph[kind] or { seconds = 0, containers = 0 }
        figure.seconds = figure.seconds + rate * seconds
        figure.containers = figure.containers + 1
        entry.ceph[kind] = figure
      end
    end)
  end

  local out = { hosts = {}, cpu_busy_seconds = 0, ceph_cpu = { source = source, kinds = {} } }
  if not source then out.ceph_cpu.none = M.NO_DAEMON_SOURCE end
  local names = {}
  for name in pairs(hosts) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local entry = hosts[name]
    local instances = json.array()
    for instance in pairs(entry.instances) do instances[#instances + 1] = instance end
    table.sort(instances)
    entry.instances = instances
    if entry.cpu then
      local cpu = entry.cpu
      local idle = (cpu.seconds.idle or 0) + (cpu.seconds.iowait or 0)
      local total = cpu.rate * seconds
      cpu.cpus = math.floor(cpu.rate + 0.5)
      cpu.busy_seconds = math.max(0, total - idle)
      cpu.busy_fraction = total > 0 and cpu.busy_seconds / total or nil
      cpu.rate = nil
      out.cpu_busy_seconds = out.cpu_busy_seconds + cpu.busy_seconds
    end
    for _, disk in pairs(entry.disks or {}) do
      if disk.ops_rate then disk.ops = disk.ops_rate * seconds end
      if disk.time_rate and disk.ops_rate and disk.ops_rate > 0 then disk.await = disk.time_rate / disk.ops_rate end
      disk.time_rate, disk.ops_rate = nil, nil
    end
    for kind, figure in pairs(entry.ceph or {}) do
      local total = out.ceph_cpu.kinds[kind] or { seconds = 0, hosts = 0 }
      total.seconds = total.seconds + figure.seconds
      total.hosts = total.hosts + 1
      out.ceph_cpu.kinds[kind] = total
    end
    out.hosts[name] = entry
  end
  local osd = out.ceph_cpu.kinds["ceph-osd"]
  out.osd_cpu_seconds = osd and osd.seconds or nil
  out.scrape_interval = interval
  out.coarse = seconds < M.COARSE_INTERVALS * interval
  return out
end

-------------------------------------------------------------------------------------------
-- A run's phases

-- A phase's wall-clock window (seconds since the epoch, CLOCK_REALTIME): results keep it
-- as the phase's `window`, and Prometheus is asked about exactly that time.
function M.window(start, stop)
  return { start = start, stop = stop, seconds = math.max(0, stop - start) }
end

-- Called by the phase runner after each phase: keeps its window, and remembers the phases
-- on a cluster (their hosts are the ones Prometheus watches) for the end of the run.
function M.note_phase(run, record, wall_start, on_cluster)
  record.window = M.window(wall_start, sys.realtime())
  if on_cluster then
    run.prometheus_phases = run.prometheus_phases or {}
    run.prometheus_phases[#run.prometheus_phases + 1] = record
  end
end

-- collect(options) -> how many phases got figures. options: url, source, phases (records
-- with a window), warn(line), say(line) (optional), wait (false: do not wait for the last
-- scrape, for an interrupted run), get (replaces http.get), timeout.
function M.collect(options)
  local client = M.client(options.url, { get = options.get, timeout = options.timeout })
  local phases = options.phases
  local done, coarse = 0, 0
  local interval, longest, lagging
  local ok, err = pcall(function()
    interval, longest = client:scrape_intervals()
    if not interval then error(longest, 0) end
    local last = 0
    for _, record in ipairs(phases) do last = math.max(last, record.window.stop) end
    if options.wait ~= false then
      -- a sample after the last phase's end means every sample inside it has been stored
      local deadline = sys.monotonic() + math.min(M.COARSE_INTERVALS * longest + 1, M.WAIT_MAX)
      while true do
        local latest, lerr = client:latest_scrape(sys.realtime())
        if not latest and lerr then error(lerr, 0) end
        if latest and latest >= last then break end
        if sys.monotonic() >= deadline then
          lagging = true
          break
        end
        sys.sleep(math.max(0.1, math.min(interval / 4, 0.5)))
      end
    end
    for _, record in ipairs(phases) do
      local window = record.window
      local range_seconds = math.max(window.seconds, M.COARSE_INTERVALS * interval)
      local range = M.range(range_seconds)
      local answers, daemons_range = {}, nil
      for _, query in ipairs(M.QUERIES) do
        local result, qerr = client:query((query.expr:gsub("RANGE", range)), window.stop)
        if not result then error(qerr, 0) end
        -- no series of the daemons over a range that holds too few samples of a job
        -- scraped less often than the shortest interval: asked again over two of its
        -- intervals
        local wide = math.max(window.seconds, M.COARSE_INTERVALS * longest)
        if query.daemons and #result == 0 and wide > range_seconds then
          result, qerr = client:query((query.expr:gsub("RANGE", M.range(wide))), window.stop)
          if not result then error(qerr, 0) end
          if #result > 0 then daemons_range = wide end
        end
        answers[query.key] = result
      end
      local figures = M.figures(answers, window.seconds, interval)
      if daemons_range and figures.ceph_cpu.source then
        figures.ceph_cpu.range = M.range(daemons_range)
        figures.ceph_cpu.coarse = true
      end
      if longest > interval then figures.longest_scrape_interval = longest end
      figures.url, figures.source = options.url, options.source
      figures.range, figures.evaluated_at = range, window.stop
      figures.lagging = lagging
      record.cluster = record.cluster or {}
      record.cluster.prometheus = figures
      done = done + 1
      if figures.coarse then coarse = coarse + 1 end
    end
  end)
  if not ok then
    options.warn(string.format("Prometheus at %s (%s) could not be read: %s; phases are recorded without its figures",
      options.url, options.source, tostring(err)))
    for _, record in ipairs(phases) do
      if not (record.cluster and record.cluster.prometheus) then
        record.cluster = record.cluster or {}
        record.cluster.prometheus = { url = options.url, source = options.source, missing = tostring(err) }
      end
    end
    return 0, client.requests
  end
  if options.say and done > 0 then
    local notes = {}
    if coarse > 0 then
      notes[#notes + 1] = string.format("%d phase%s shorter than %d scrape intervals: coarse figures", coarse,
        coarse == 1 and "" or "s", M.COARSE_INTERVALS)
    end
    if lagging then notes[#notes + 1] = "its last scrape was older than the last phase's end" end
    options.say(string.format("prometheus: figures for %d phase%s from %s (%s), scrape interval %s s%s%s", done,
      done == 1 and "" or "s", options.url, options.source, tostring(interval),
      longest > interval and string.format(" (up to %s s)", tostring(longest)) or "",
      #notes > 0 and ("; " .. table.concat(notes, "; ")) or ""))
  end
  return done, client.requests
end

-- Where a run's Prometheus is: the command line's (or the caller's context), the
-- scenario's `prometheus` field, else (when the scenario's telemetry is on and it did not
-- say prometheus = false) the dashboard's setting on the cluster -> url, source | nil.
function M.resolve(run)
  local context, scenario = run.context or {}, run.scenario
  if context.prometheus then return M.check_url(context.prometheus), M.FROM_CLI end
  if type(scenario.prometheus) == "string" then return M.check_url(scenario.prometheus), M.FROM_SCENARIO end
  if scenario.prometheus == false or not scenario.telemetry or context.telemetry == false then return nil end
  local ok, cluster = pcall(run.cluster, run)
  if not ok then return nil end
  local url, source = M.from_cluster(cluster)
  if not url then return nil end
  local checked, why = M.check_url(url)
  if not checked then
    run:warn(string.format("the dashboard's Prometheus address (%s) is '%s', not a URL (%s); phases are recorded without Prometheus figures",
      source, url, why))
    return nil
  end
  return checked, source
end

-- The end of a run: the figures of every phase on a cluster, from the run's Prometheus if
-- it has one. Never raises.
function M.read_run(run, interrupted)
  local phases = run.prometheus_phases
  if not phases or #phases == 0 or run.prometheus_read then return end
  run.prometheus_read = true
  local ok, err = pcall(function()
    local url, source = M.resolve(run)
    if not url then return end
    M.collect { url = url, source = source, phases = phases, wait = not interrupted,
      warn = function(line) run:warn(line) end, say = function(line) run:say(line) end }
  end)
  if not ok then run:warn("reading Prometheus: " .. tostring(err)) end
end

return M
