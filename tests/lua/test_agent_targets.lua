-- What a multi-client run sends its agents, without a cluster (cephmark.agent_targets):
-- --attr parsing, the "{agent.KEY}" references a phase names and their resolution on an
-- agent, image name templates, the endpoint each agent takes from a list, a gateway URL
-- with its origin replaced, and the null, disk and socket targets an agent opens.
local targets = require "cephmark.agent_targets"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

-- --attr key=value
local key, value = targets.parse_attr("rgw=http://10.0.0.5:8080/x=y")
t.eq(key, "rgw", "attr key")
t.eq(value, "http://10.0.0.5:8080/x=y", "attr value keeps later '='")
t.match(select(2, targets.parse_attr("rgw")), "expects key=value", "no '='")
t.match(select(2, targets.parse_attr("1x=a")), "the key must be", "key starting with a digit")
t.match(select(2, targets.parse_attr("a-b=c")), "the key must be", "key with '-'")
t.match(select(2, targets.parse_attr("host=x")), "every agent's own", "builtin key")
t.match(select(2, targets.parse_attr("disk=")), "has no value", "empty value")

-- the attributes a phase names: nested tables, several per string, builtins left out
t.eq(table.concat(targets.needed({ path = "{agent.disk}/{agent.sub}/f", list = { "{agent.rgw}", "{agent}" },
  n = 3 }, "{agent.name}-{agent.host}", nil), ","), "disk,rgw,sub", "needed keys, sorted, without name/host")
t.eq(#targets.needed({ path = "/srv/f" }), 0, "no reference")

-- resolution on an agent
local attrs = targets.attributes("c1", { host = "node7", attrs = { disk = "/srv/a", rgw = "http://10.0.0.5:8080" } })
local resolved = targets.resolve({ path = "{agent.disk}/f-{agent}.dat", host = "{agent.host}", n = 4,
  nested = { "{agent.rgw}" } }, attrs)
t.eq(resolved.path, "/srv/a/f-c1.dat", "path resolved")
t.eq(resolved.host, "node7", "host resolved")
t.eq(resolved.n, 4, "numbers kept")
t.eq(resolved.nested[1], "http://10.0.0.5:8080", "nested resolved")
t.raises(function() targets.resolve("{agent.nvme}/x", attrs) end, "no attribute 'nvme'", "missing attribute")

-- images
t.eq(targets.image_template(nil, "vol"), "vol-{agent}", "own by default")
t.eq(targets.image_template("own", "vol"), "vol-{agent}", "own")
t.eq(targets.image_template("shared", "vol"), "vol", "shared")
t.eq(targets.image_template("b-{agent.volume}", "vol"), "b-{agent.volume}", "template")
t.eq(targets.check_per_agent("shared"), nil, "shared accepted")
t.eq(targets.check_per_agent("x-{agent}"), nil, "template accepted")
t.match(targets.check_per_agent("fixed"), "the same image for every agent", "template without {agent}")
t.match(targets.check_per_agent(3), "per_agent must be", "not a string")

-- endpoints spread over the agents, and URLs with their origin replaced
local description = { kind = "s3", endpoint = "http://rgw0:80", access_key = "a", secret_key = "s",
  endpoints = { "http://rgw1:8080", "http://rgw2:8080/" } }
t.eq(targets.endpoint_for(description, 1), "http://rgw1:8080", "agent 1")
t.eq(targets.endpoint_for(description, 2), "http://rgw2:8080/", "agent 2")
t.eq(targets.endpoint_for(description, 3), "http://rgw1:8080", "agent 3 wraps")
t.eq(targets.endpoint_for({ endpoints = "http://one:1" }, 5), "http://one:1", "one endpoint for all")
local s3 = targets.connect_options(description, "http://rgw2:8080/")
t.eq(s3.endpoint, "http://rgw2:8080", "s3 endpoint replaced")
t.eq(s3.endpoints, nil, "endpoints not passed to connect")
t.eq(s3.kind, nil, "kind not passed to connect")
local swift = targets.connect_options({ kind = "swift", auth_url = "http://127.0.0.1:7480/auth/v1.0", user = "u:s",
  key = "k", storage_url = "http://127.0.0.1:7480/swift/v1" }, "https://gw:443")
t.eq(swift.auth_url, "https://gw:443/auth/v1.0", "swift auth URL keeps its path")
t.eq(swift.storage_url, "https://gw:443/swift/v1", "swift storage URL keeps its path")
t.eq(targets.origin("http://h:1/a/b"), "http://h:1", "origin")

-- targets an agent opens without a cluster
local cache = {}
t.eq(targets.open(nil, { kind = "null" }, {}, cache), require "cephmark.null", "null")
local dir = os.tmpname()
os.remove(dir)
local missing, why = targets.open(nil, { kind = "disk" }, { path = dir .. "/sub/f.dat" }, cache)
t.eq(missing, nil, "disk folder missing")
t.match(why, "no folder", "disk folder missing: why")
t.eq(targets.open(nil, { kind = "disk" }, { path = "/tmp/f.dat" }, cache), require "cephmark.disk", "disk folder exists")
local port = sys.free_port()
local refused, refused_why = targets.open(nil, { kind = "socket" }, { host = "127.0.0.1", port = port }, cache)
t.eq(refused, nil, "socket refused")
t.match(refused_why, "cannot connect to 127.0.0.1:" .. port, "socket refused: why")
t.eq(select(2, targets.open(nil, { kind = "socket" }, {}, cache)), "a socket phase needs host =", "socket host")
t.match(select(2, targets.open(nil, { kind = "other" }, {}, cache)), "unknown target kind", "unknown kind")
-- a socket phase's peer list (peer =): the agent's peer replaces host and port
local options = { host = "10.9.9.9", port = 1 }
local peer_refused, peer_why = targets.open(nil, { kind = "socket", use_endpoint = "127.0.0.1:" .. port }, options,
  cache)
t.eq(peer_refused, nil, "socket to the agent's peer")
t.match(peer_why, "cannot connect to 127.0.0.1:" .. port, "the peer's host and port are used")
t.eq(options.host, "127.0.0.1", "host from the peer")
t.eq(options.port, port, "port from the peer")
local kept = { host = "x", port = 7 }
targets.open(nil, { kind = "socket", use_endpoint = "127.0.0.1" }, kept, cache)
t.eq(kept.port, 7, "a peer without a port keeps the phase's port")
t.eq(targets.describe("socket", nil, { peer = { "a:1", "b:2" } }).endpoints[2], "b:2", "socket description: peers")
t.eq(targets.describe("socket", nil, {}).endpoints, nil, "socket description without peers")

-- peers as HOST[:PORT], IPv6 in brackets
t.eq(select(2, targets.parse_peer("10.0.0.1:5301")), 5301, "peer port")
t.eq(targets.parse_peer("10.0.0.1"), "10.0.0.1", "peer without port")
t.eq(select(2, targets.parse_peer("10.0.0.1")), nil, "no port")
t.eq(targets.parse_peer("[fe80::1]:9"), "fe80::1", "v6 host")
t.eq(select(2, targets.parse_peer("[fe80::1]:9")), 9, "v6 port")

-- "{agent.KEY#N}": the N-th of a comma-separated attribute, in turn when there are fewer
t.eq(table.concat(targets.values(" /a, /b ,,/c "), "|"), "/a|/b|/c", "values: blanks and empties dropped")
local disks = targets.attributes("c2", { host = "n", attrs = { disk = "/srv/a,/srv/b" } })
t.eq(targets.resolve("{agent.disk#1}/f", disks), "/srv/a/f", "#1")
t.eq(targets.resolve("{agent.disk#2}/f", disks), "/srv/b/f", "#2")
t.eq(targets.resolve("{agent.disk#3}/f", disks), "/srv/a/f", "#3 takes the first again")
t.eq(targets.resolve("{agent.disk}", disks), "/srv/a,/srv/b", "without # the whole value")
t.eq(table.concat(targets.needed({ path = "{agent.disk#2}/f" }), ","), "disk", "needed: #N names its key")
t.raises(function() targets.resolve("{agent.nvme#1}", disks) end, "no attribute 'nvme'", "missing with #N")
t.done()
