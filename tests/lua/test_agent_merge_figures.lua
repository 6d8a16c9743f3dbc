-- What a distributed phase's merged result says besides ops, bytes and errors
-- (distributed.lua): the target's own counts summed exactly over the agents (objects
-- written, requests re-authenticated, HTTP errors by status, a multipart put's parts), what
-- describes the phase kept only when every agent agrees, the lists of the distributed
-- result encoded as JSON arrays even when empty, and the per-endpoint breakdown with a
-- per-second series whose percentiles come from that endpoint's agents' histograms of each
-- second. Per-agent results written by hand, and null-target phases for the histograms; no
-- cluster needed.
local control = require "cephmark.control"
local distributed = require "cephmark.distributed"
local json = require "cephmark.json"
local null = require "cephmark.null"
local t = require "cephmark.test"

-- a Swift put as two agents report it
local function put(agent, fields)
  local r = { agent = agent, op = "put", api = "swift", method = "PUT", ops = 0, bytes = 0, errors = 0,
    elapsed = 1.0, lat = { count = 0 }, series = {} }
  for k, v in pairs(fields) do r[k] = v end
  return r
end
local a1 = put("a1", { ops = 100, objects = 100, objects_written = 97, errors = 3, transport = "native",
  reauths = 1, transport_errors = 1, size_min = 4096, size_max = 8192, containers = { "c0-a1", "c1-a1" },
  http_errors = { { status = 404, reason = "Not Found", count = 2 } },
  first_error = "PUT object 'c0-a1/x': 404 Not Found", verify_errors = { "one" },
  multipart = { part_size = 5242880, parts_in_flight = 2, parts = 10, uploads_aborted = 1, uploads_left = 0 } })
local a2 = put("a2", { ops = 200, objects = 200, objects_written = 200, transport = "curl", reauths = 2,
  transport_errors = 0, size_min = 1024, size_max = 4096, containers = { "c0-a2", "c1-a2" },
  http_errors = { { status = 404, reason = "Not Found", count = 5 }, { status = 503, reason = "Service Unavailable",
    count = 1 } },
  multipart = { part_size = 5242880, parts_in_flight = 2, parts = 20, uploads_aborted = 0, uploads_left = 1 } })

local merger = distributed.merger()
merger:add(a1)
merger:add(a2)
local m = merger:result()
t.eq(m.ops, 300, "ops summed")
t.eq(m.objects_written, 297, "objects written summed exactly")
t.eq(math.type(m.objects_written), "integer", "a count stays an integer")
t.eq(m.objects, 300, "each agent's own objects: summed")
t.eq(m.reauths, 3, "re-authentications summed")
t.eq(m.transport_errors, 1, "requests without an answer summed")
t.eq(#m.http_errors, 2, "HTTP errors by status")
t.eq(m.http_errors[1].status, 404, "sorted by status")
t.eq(m.http_errors[1].count, 7, "one status's counts summed over the agents")
t.eq(m.http_errors[2].count, 1, "a status only one agent saw")
t.eq(m.multipart.parts, 30, "multipart parts summed")
t.eq(m.multipart.uploads_aborted, 1, "aborted uploads summed")
t.eq(m.multipart.uploads_left, 1, "uploads left summed")
t.eq(m.multipart.part_size, 5242880, "the part size kept")
t.eq(m.api, "swift", "what every agent agrees on is kept")
t.eq(m.transport, nil, "what the agents differ on is left out (native and curl)")
t.eq(m.size_min, 1024, "the smallest size")
t.eq(m.size_max, 8192, "the largest size")
t.eq(table.concat(m.containers, ","), "c0-a1,c0-a2,c1-a1,c1-a2", "every agent's containers")
t.eq(m.first_error, "agent a1: PUT object 'c0-a1/x': 404 Not Found", "the first error, naming its agent")
t.eq(#m.verify_errors, 1, "the agents' verify messages")

-- a pool phase gains no gateway figures
local pool_merger = distributed.merger()
pool_merger:add { agent = "a1", op = "write", ops = 10, bytes = 40960, errors = 0, elapsed = 1, objects = 10,
  access = "uniform", series = {} }
pool_merger:add { agent = "a2", op = "write", ops = 12, bytes = 49152, errors = 0, elapsed = 1, objects = 12,
  access = "uniform", series = {} }
local pm = pool_merger:result()
t.eq(pm.objects, 22, "a pool write's objects summed")
t.eq(pm.access, "uniform", "the access pattern kept")
t.eq(pm.objects_written, nil, "no gateway count appears on a pool phase")
t.eq(pm.http_errors, nil, "nor HTTP errors")

-- the lists of a distributed result are JSON arrays, empty or not
t.eq(json.encode(distributed.slow_agents {}), "[]", "no slow agent: []")
local rows = distributed.per_host({}, { m1 = { host = "h9" } }, {})
t.eq(json.encode(rows.h9.agents), "[]", "a host row without agents: agents []")

-- per-endpoint: three agents on two endpoints, each second's percentiles from that
-- endpoint's agents' histograms of the second
local function agent(name, endpoint, options)
  local hists, seconds = {}, 0
  options.second_histograms = true
  options.on_second = function(second)
    seconds = seconds + 1
    hists[seconds] = second.hist
  end
  local r = null.bench(options)
  r.agent, r.endpoint = name, endpoint
  return r, control.histogram(r), distributed.pack_seconds(hists, seconds)
end
local e1, e2 = "http://127.0.0.1:8080", "http://localhost:8080"
local runs = {
  { agent("x1", e1, { threads = 4, ops = 400, delay = 0.002 }) },
  { agent("x2", e1, { threads = 1, ops = 6, delay = 0.3 }) },
  { agent("x3", e2, { threads = 2, ops = 100, delay = 0.001 }) },
}
local endpoints = distributed.endpoint_mergers()
local whole = distributed.merger()
for _, run in ipairs(runs) do
  endpoints:add(table.unpack(run))
  whole:add(table.unpack(run))
end
local by = endpoints:result()
t.eq(by[e1].ops, 406, "endpoint 1: its two agents' ops")
t.eq(by[e2].ops, 100, "endpoint 2: its agent's ops")
t.eq(table.concat(by[e1].agents, ","), "x1,x2", "endpoint 1's agents")
t.eq(json.encode(by[e2].agents), '["x3"]', "the agents are a JSON array")
t.eq(by[e1].series_p99, "merged", "the endpoint's seconds come from merged histograms")
local function series_sum(series, key)
  local total = 0
  for _, s in ipairs(series) do total = total + (s[key] or 0) end
  return total
end
t.eq(series_sum(by[e1].series, "ops"), 406, "endpoint 1's seconds hold all its ops")
t.eq(series_sum(by[e1].series, "lat_count"), 406, "and its seconds' histograms as many")
t.eq(series_sum(by[e2].series, "lat_count"), 100, "endpoint 2's seconds' histograms hold its ops")
t.ok(by[e1].p99 >= 0.3, "endpoint 1's p99 counts its slow agent: " .. tostring(by[e1].p99))
t.ok(by[e2].p99 < 0.3, "endpoint 2's does not: " .. tostring(by[e2].p99))
local merged = whole:result()
t.eq(by[e1].ops + by[e2].ops, merged.ops, "the endpoints' ops sum to the phase's")
-- the endpoint's p99 equals that of its agents' histograms merged whole
local exact = control.merge_histograms { runs[1][2], runs[2][2] }
t.eq(by[e1].p99, exact.p99, "endpoint 1's p99 from its agents' histograms merged")
t.eq(distributed.endpoint_mergers():result(), nil, "no agent named an endpoint: no breakdown")
