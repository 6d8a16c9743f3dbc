-- Phase figures from Prometheus (cephmark.prometheus) without a server: URL checks, the
-- durations and ranges of the queries, hosts from instances, daemon kinds from cAdvisor's
-- container labels, the figures computed from the query answers (CPU busy time by mode,
-- disk utilisation and await, network bytes, the daemons' CPU and its source), and the
-- failure path (one warning, phases recorded as missing). cephmark.http's GET against a
-- port with nothing listening. The real Prometheus is tested in
-- tests/integration/test_prometheus.sh.
local http = require "cephmark.http"
local json = require "cephmark.json"
local prometheus = require "cephmark.prometheus"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

-- URLs
t.eq(prometheus.check_url("http://10.0.0.5:9095"), "http://10.0.0.5:9095", "host and port")
t.eq(prometheus.check_url("http://prom.example.com:9090/"), "http://prom.example.com:9090", "trailing slash dropped")
t.eq(prometheus.check_url("HTTPS://prom/prefix/"), "https://prom/prefix", "a path prefix kept, scheme lowered")
t.eq(prometheus.check_url("http://[::1]:9090"), "http://[::1]:9090", "IPv6")
local refusals = {
  { "localhost:9090", "does not start with http:// or https://" },
  { "ftp://h:21", "its scheme is ftp, not http or https" },
  { "http://", "it has no host" },
  { "http://:9090", "it has no host" },
  { "http://h:0", "its port is not a number from 1 to 65535" },
  { "http://h:65536", "its port is not a number from 1 to 65535" },
  { "http://h:90x", "its port is not a number from 1 to 65535" },
  { "http://h:9090/?a=1", "it has a query or a fragment" },
  { "http://u:p@h:9090", "a user or password in the URL is not supported" },
  { "http://h :9090", "a space or a control character" },
  { "", "it is empty" },
}
for _, case in ipairs(refusals) do
  local url, why = prometheus.check_url(case[1])
  t.eq(url, nil, "refused: " .. case[1])
  t.match(why, case[2]:gsub("[%(%)%.%-%+%?%[%]]", "%%%0"), "why " .. case[1])
end
t.eq(prometheus.url_refusal("--prometheus", "h:1"),
  "--prometheus expects Prometheus's base URL (http://HOST:PORT), got 'h:1': it does not start with http:// or https://",
  "the refusal")

-- durations and ranges
t.eq(prometheus.parse_duration("15s"), 15, "15s")
t.eq(prometheus.parse_duration("1m30s"), 90, "1m30s")
t.near(prometheus.parse_duration("500ms"), 0.5, 1e-9, "500ms")
t.eq(prometheus.parse_duration("1x"), nil, "unknown unit")
t.eq(prometheus.parse_duration(nil), nil, "nothing")
t.eq(prometheus.range(3.2864), "3286ms", "a range in whole ms")

-- hosts and daemon kinds
t.eq(prometheus.host_of("10.0.0.1:9100"), "10.0.0.1", "port dropped")
t.eq(prometheus.host_of("[fe80::1]:9100"), "[fe80::1]", "IPv6 port dropped")
t.eq(prometheus.host_of("node-a"), "node-a", "cephadm's instance is the host name")
t.eq(prometheus.container_kind { name = "ceph-8d1c7e8a-4b2f-11ee-9e6b-525400a1b2c3-osd-3" }, "ceph-osd", "cephadm osd")
t.eq(prometheus.container_kind { name = "ceph-8d1c7e8a-4b2f-11ee-9e6b-525400a1b2c3-osd.3" }, "ceph-osd", "cephadm osd (older name)")
t.eq(prometheus.container_kind { name = "ceph-8d1c7e8a-4b2f-11ee-9e6b-525400a1b2c3-mon-node-a" }, "ceph-mon", "cephadm mon")
t.eq(prometheus.container_kind { name = "ceph-8d1c7e8a-4b2f-11ee-9e6b-525400a1b2c3-rgw-s3-node-a-xyz" }, "radosgw", "cephadm rgw")
t.eq(prometheus.container_kind { name = "ceph-8d1c7e8a-4b2f-11ee-9e6b-525400a1b2c3-crash-node-a" }, nil, "crash collector")
t.eq(prometheus.container_kind { container = "osd", pod = "rook-ceph-osd-2-5f6d8c9b7-abcde" }, "ceph-osd", "Rook osd")
t.eq(prometheus.container_kind { container = "mgr", pod = "rook-ceph-mgr-a-7c9d-xyz" }, "ceph-mgr", "Rook mgr")

-- figures from answers: rates over a 4 s phase on two hosts
local function sample(labels, value) return { metric = labels, value = { 1000, tostring(value) } } end
local answers = {
  cpu = {
    sample({ instance = "a:9100", mode = "user" }, 0.5), sample({ instance = "a:9100", mode = "system" }, 0.25),
    sample({ instance = "a:9100", mode = "idle" }, 1.0), sample({ instance = "a:9100", mode = "iowait" }, 0.25),
    sample({ instance = "b:9100", mode = "idle" }, 2.0), sample({ instance = "b:9100", mode = "user" }, "NaN"),
  },
  disk_busy = { sample({ instance = "a:9100", device = "sda" }, 0.5), sample({ instance = "a:9100", device = "sdb" }, 0) },
  disk_time = { sample({ instance = "a:9100", device = "sda" }, 0.1), sample({ instance = "a:9100", device = "sdb" }, 0) },
  disk_ops = { sample({ instance = "a:9100", device = "sda" }, 50), sample({ instance = "a:9100", device = "sdb" }, 0) },
  receive = { sample({ instance = "a:9100", device = "eth0" }, 1000) },
  transmit = { sample({ instance = "a:9100", device = "eth0" }, 250) },
  process = { sample({ instance = "a:9256", groupname = "ceph-osd" }, 0.75),
    sample({ instance = "b:9256", groupname = "ceph-osd" }, 0.25), sample({ instance = "b:9256", groupname = "ceph-mon" }, 0.1) },
  cadvisor = { sample({ instance = "a:8080", name = "ceph-f-osd-1" }, 9) },
}
local f = prometheus.figures(answers, 4, 1)
local a, b = f.hosts.a, f.hosts.b
t.ok(a and b, "two hosts, keyed by instance without port")
t.eq(json.encode(a.instances), '["a:9100","a:9256"]', "node-exporter's and process-exporter's instances meet under host a")
t.eq(a.cpu.cpus, 2, "CPUs: the modes' rates add up to 2")
t.near(a.cpu.busy_seconds, 3, 1e-9, "busy: (2 - idle 1 - iowait 0.25) * 4 s")
t.near(a.cpu.busy_fraction, 0.375, 1e-9, "busy fraction")
t.near(a.cpu.seconds.user, 2, 1e-9, "user seconds")
t.near(b.cpu.busy_seconds, 0, 1e-9, "a NaN rate is left out")
t.near(f.cpu_busy_seconds, 3, 1e-9, "busy seconds over the hosts")
t.near(a.disks.sda.utilisation, 0.5, 1e-9, "utilisation")
t.near(a.disks.sda.await, 0.002, 1e-9, "await: (read + write time) / (reads + writes)")
t.near(a.disks.sda.ops, 200, 1e-9, "ops over the phase")
t.eq(a.disks.sdb.await, nil, "no ops, no await")
t.near(a.network.eth0.receive_bytes, 4000, 1e-9, "bytes received")
t.near(a.network.eth0.transmit_bytes, 1000, 1e-9, "bytes sent")
t.near(a.ceph["ceph-osd"].seconds, 3, 1e-9, "the osd group's CPU")
t.eq(f.ceph_cpu.source, prometheus.PROCESS_EXPORTER, "process-exporter first")
t.near(f.ceph_cpu.kinds["ceph-osd"].seconds, 4, 1e-9, "osd CPU over the hosts")
t.eq(f.ceph_cpu.kinds["ceph-osd"].hosts, 2, "on two hosts")
t.near(f.osd_cpu_seconds, 4, 1e-9, "osd_cpu_seconds")
t.eq(f.coarse, false, "4 s at a 1 s interval is not coarse")
t.eq(prometheus.figures(answers, 1.5, 1).coarse, true, "1.5 s at a 1 s interval is coarse")

answers.process = {}
f = prometheus.figures(answers, 4, 1)
t.eq(f.ceph_cpu.source, prometheus.CADVISOR, "cAdvisor when process-exporter has nothing")
t.near(f.hosts.a.ceph["ceph-osd"].seconds, 36, 1e-9, "a container's CPU")
t.eq(f.hosts.a.ceph["ceph-osd"].containers, 1, "containers counted")
answers.cadvisor = {}
f = prometheus.figures(answers, 4, 1)
t.eq(f.ceph_cpu.source, nil, "no source")
t.eq(f.ceph_cpu.none, prometheus.NO_DAEMON_SOURCE, "and said so")
t.eq(f.osd_cpu_seconds, nil, "no osd CPU")

-- collect: a server that answers, then one that does not
local phases = { { window = prometheus.window(1000, 1003) }, { window = prometheus.window(1003, 1003.5) } }
local asked = {}
local function fake_get(url)
  asked[#asked + 1] = url
  if url:find("/api/v1/targets", 1, true) then
    return json.encode { status = "success", data = { activeTargets = { { scrapeInterval = "1s" }, { scrapeInterval = "2s" } } } }, 200
  end
  local query = url:match("query=([^&]*)")
  if query == http.escape("min(timestamp(up))") then
    return json.encode { status = "success", data = { resultType = "vector", result = { sample({}, 1004) } } }, 200
  end
  -- process-exporter's job is scraped every 2 s: over less than 4 s it has no series
  local result = {}
  if query:find("node_cpu", 1, true) then
    result = { sample({ instance = "h:9100", mode = "user" }, 1) }
  elseif query:find("namedprocess", 1, true) and query:find(http.escape("[4000ms]"), 1, true) then
    result = { sample({ instance = "h:9256", groupname = "ceph-osd" }, 0.5) }
  end
  return json.encode { status = "success", data = { resultType = "vector", result = result } }, 200
end
local warnings, said = {}, {}
local done = prometheus.collect { url = "http://p:9090", source = "--prometheus", phases = phases, get = fake_get,
  warn = function(line) warnings[#warnings + 1] = line end, say = function(line) said[#said + 1] = line end }
t.eq(done, 2, "both phases read")
t.eq(#warnings, 0, "no warning")
-- targets, the last scrape, then per phase each query once and the two daemon queries
-- again over a longer range (their answers were empty)
t.eq(#asked, 2 + 2 * (#prometheus.QUERIES + 2), "the requests")
t.match(asked[3], "^http://p:9090/api/v1/query%?query=.*&time=1003%.000$", "evaluated at the phase's end")
t.ok(asked[3]:find(http.escape("[3000ms]"), 1, true), "a range of the phase's 3 s")
local first, second = phases[1].cluster.prometheus, phases[2].cluster.prometheus
t.eq(first.source, "--prometheus", "source recorded")
t.eq(first.scrape_interval, 1, "the shortest scrape interval")
t.eq(first.longest_scrape_interval, 2, "and the longest")
t.eq(first.coarse, false, "3 s >= 2 intervals of 1 s")
t.eq(first.range, "3000ms", "the range")
t.near(first.hosts.h.cpu.seconds.user, 3, 1e-9, "rate times the phase's length")
t.eq(first.ceph_cpu.source, prometheus.PROCESS_EXPORTER, "the daemons, found over a longer range")
t.eq(first.ceph_cpu.range, "4000ms", "two of process-exporter's intervals")
t.eq(first.ceph_cpu.coarse, true, "and so coarse")
t.near(first.osd_cpu_seconds, 1.5, 1e-9, "the osd group's rate times the phase's length")
t.eq(second.coarse, true, "0.5 s < 2 intervals of 1 s")
t.eq(second.range, "2000ms", "over two intervals")
t.eq(said[1], "prometheus: figures for 2 phases from http://p:9090 (--prometheus), scrape interval 1 s (up to 2 s); " ..
  "1 phase shorter than 2 scrape intervals: coarse figures", "the line at the end")

local function refusing_get(url) return nil, url:gsub("%?.*", "") .. ": Couldn't connect to server", -111 end
phases = { { window = prometheus.window(1000, 1003) } }
warnings = {}
done = prometheus.collect { url = "http://p:9090", source = "--prometheus", phases = phases, get = refusing_get,
  warn = function(line) warnings[#warnings + 1] = line end }
t.eq(done, 0, "nothing read")
t.eq(#warnings, 1, "one warning")
t.eq(warnings[1], "Prometheus at http://p:9090 (--prometheus) could not be read: http://p:9090/api/v1/targets: " ..
  "Couldn't connect to server; phases are recorded without its figures", "the warning")
t.eq(phases[1].cluster.prometheus.missing, "http://p:9090/api/v1/targets: Couldn't connect to server", "recorded as missing")

local function erring_get()
  return json.encode { status = "error", errorType = "bad_data", error = "invalid parameter" }, 400
end
phases = { { window = prometheus.window(1000, 1003) } }
warnings = {}
prometheus.collect { url = "http://p:9090", source = "s", phases = phases, get = erring_get,
  warn = function(line) warnings[#warnings + 1] = line end }
t.eq(phases[1].cluster.prometheus.missing, "http://p:9090/api/v1/targets: HTTP 400 (invalid parameter)", "an error answer")

-- cephmark.http against a port with nothing listening: nil, a sentence, -ECONNREFUSED
local port = assert(sys.free_port())
local body, message, code = http.get("http://127.0.0.1:" .. port .. "/api/v1/query?query=up", { timeout = 2 })
t.eq(body, nil, "no answer")
t.match(message, "^http://127%.0%.0%.1:" .. port .. "/api/v1/query: ", "the URL without its query")
t.eq(code, -111, "ECONNREFUSED")
-- a server that accepts the connection and never answers: the request ends at its timeout,
-- and a run's reading of such a Prometheus gives one warning
local silent_port = assert(sys.free_port())
local python = sys.stat("/usr/bin/python3") and "/usr/bin/python3" or "python3"
local silent = assert(sys.spawn { python, "-c", string.format(
  "import socket, time\ns = socket.socket()\ns.bind(('127.0.0.1', %d))\ns.listen(8)\ntime.sleep(60)", silent_port) })
local listening = false
for _ = 1, 300 do
  listening = sys.port_open(silent_port)
  if listening then break end
  sys.sleep(0.1)
end
t.ok(listening, "the silent server listens")
local started = sys.monotonic()
body, message, code = http.get("http://127.0.0.1:" .. silent_port .. "/api/v1/targets", { timeout = 1 })
local took = sys.monotonic() - started
t.eq(body, nil, "no answer from the silent server")
t.eq(code, -110, "ETIMEDOUT")
t.ok(took >= 0.9 and took < 30, "ended by its timeout (1 s), took " .. took)
phases = { { window = prometheus.window(1000, 1003) } }
warnings = {}
prometheus.collect { url = "http://127.0.0.1:" .. silent_port, source = "--prometheus", phases = phases, timeout = 1,
  warn = function(line) warnings[#warnings + 1] = line end }
t.eq(#warnings, 1, "one warning for a Prometheus that does not answer in time")
t.match(phases[1].cluster.prometheus.missing, "timed out", "recorded as missing")
sys.kill(silent, "KILL")
sys.sleep(0.1)
sys.reap()
t.raises(function() http.get("file:///etc/passwd") end, "expected an http:// or https:// URL", "other schemes")
t.raises(function() http.get("http://h", { timeout = 0 }) end, "timeout must be a number of seconds above 0", "timeout 0")
t.raises(function() http.get("http://h", { retries = 1 }) end, "unknown option 'retries'", "unknown option")
t.eq(http.escape("a b/(c)[1s]"), "a%20b%2F%28c%29%5B1s%5D", "escape")

-- the scenario field and the run's context
local cm = require "cephmark"
t.raises(function() cm.scenario { name = "x", prometheus = "h:9090", run = function() end } end,
  "cm.scenario: prometheus expects Prometheus's base URL (http://HOST:PORT), got 'h:9090'", "a bad scenario URL")
local function null_phase(s) s:phase("write", require "cephmark.null", { ops = 20, threads = 2 }) end
for _, setting in ipairs { false, "http://127.0.0.1:" .. port } do
  local scenario = cm.scenario { name = "prom-null", prometheus = setting, run = null_phase }
  t.raises(function() scenario:run { prometheus = "h:9090" } end,
    "prometheus expects Prometheus's base URL (http://HOST:PORT), got 'h:9090'", "a bad URL in the context")
  local dir = os.tmpname()
  os.remove(dir)
  local result = scenario:run { output = dir, prometheus = setting and nil or ("http://127.0.0.1:" .. port) }
  sys.remove_tree(dir)
  local record = result.phases[1]
  t.ok(record.window and record.window.seconds > 0 and record.window.stop > record.window.start, "the phase's window")
  t.near(record.window.start, sys.realtime(), 60, "in seconds since the epoch")
  -- the null target is no cluster: Prometheus is not asked (nothing listens on the port,
  -- which would have given a warning)
  t.eq((record.cluster or {}).prometheus, nil, "no Prometheus figures for a phase on the null target")
  t.eq(result.status, "ok", "and the run is ok")
end

return t.done()
