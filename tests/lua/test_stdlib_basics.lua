-- Stdlib basics without a cluster: size and duration parsing, the JSON module, the
-- command-line parser, and atomic file writes.
local sys = require "cephmark.sys"
local json = require "cephmark.json"
local t = require "cephmark.test"

t.eq(sys.parse_size("4K"), 4096, "4K")
t.eq(sys.parse_size("4M"), 4194304, "4M")
t.eq(sys.parse_size("64KiB"), 65536, "64KiB")
t.eq(sys.parse_size("1g"), 1073741824, "1g")
t.eq(sys.parse_size("0"), 0, "0")
t.eq(sys.parse_size(4096), 4096, "integers pass through")
for _, bad in ipairs { "4X", "-1", "", "K", "4 K B", "99999999999999999999", "16777216T" } do
  local value, err = sys.parse_size(bad)
  t.eq(value, nil, "size '" .. bad .. "' is refused")
  t.ok(type(err) == "string" and #err > 0, "with a message")
end
t.eq(select(2, sys.parse_size("4X")), "size '4X' has an unknown suffix 'X' (use K, M, G, T or P)", "message")
t.eq(select(2, sys.parse_size("-1")), "size '-1' is negative", "negative message")
t.eq(sys.parse_duration("500ms"), 0.5, "500ms")
t.eq(sys.parse_duration("2m"), 120, "2m")
t.eq(sys.parse_duration("10"), 10, "plain seconds")
t.eq(sys.parse_duration("1h"), 3600, "1h")
t.eq(sys.parse_duration("-3"), nil, "negative duration refused")
t.eq(select(2, sys.parse_duration("10 parsecs")), "duration '10 parsecs' has an unknown unit 'parsecs' (use s, ms, m or h)", "bad unit")
t.eq(sys.format_size(4194304), "4 MiB", "format 4 MiB")

local doc = json.decode('{"a": [1, 2.5, null, "x"], "b": {}}')
t.eq(doc.a[1], 1, "json int")
t.eq(doc.a[3], json.null, "json null kept")
t.eq(json.encode(doc), '{"a":[1,2.5,null,"x"],"b":{}}', "json round trip")

local args = require "cephmark.args"
local o, p = args.parse("x", { "-t", "4", "--run-name=r1", "--no-cleanup", "10", "write" }, {
  ["-t"] = { key = "threads", value = true }, ["--run-name"] = { key = "run_name", value = true },
  ["--no-cleanup"] = { key = "no_cleanup" } })
t.eq(o.threads, "4", "short option value")
t.eq(o.run_name, "r1", "--long=value")
t.eq(o.no_cleanup, true, "flag")
t.eq(p[1] .. " " .. p[2], "10 write", "positionals")
t.raises(function() args.parse("x", { "--bogus" }, {}) end, "x: unknown option '--bogus'", "unknown option")
t.raises(function() args.parse("x", { "-t" }, { ["-t"] = { key = "t", value = true } }) end, "option -t needs a value", "missing value")

local dir = os.tmpname()
os.remove(dir)
assert(sys.mkdir(dir .. "/a/b"))
assert(sys.write_file(dir .. "/a/b/f", "content"))
t.eq(sys.read_file(dir .. "/a/b/f"), "content", "atomic write then read")
t.eq(#sys.list_dir(dir .. "/a/b"), 1, "no temporary file left")
assert(sys.remove_tree(dir))
t.eq(sys.stat(dir), nil, "tree removed")
return t.done()
