-- Stdlib basics without a cluster: size, duration and number parsing, the JSON module, the
-- command-line parser, atomic file writes and what they refuse to replace, and how an
-- error that is not a string reads.
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
-- decimal only: what Lua's tonumber and strtod read besides (hex, inf, nan, overflow to
-- infinity) is refused, each saying why
t.eq(select(2, sys.parse_size("0x10")), "size '0x10' is hexadecimal: write it in decimal", "hex size")
t.eq(select(2, sys.parse_duration("0x10")), "duration '0x10' is hexadecimal: write it in decimal", "hex duration")
t.eq(select(2, sys.parse_duration("1e309")), "duration '1e309' is too long", "a duration that overflows")
t.eq(select(2, sys.parse_duration("inf")), "duration 'inf' is not a number with an optional s, ms, m or h suffix", "inf")
t.eq(sys.parse_duration("1.5e3ms"), 1.5, "an exponent is decimal")
t.eq(sys.parse_number(" -2.5e3 "), -2500.0, "a decimal number")
t.eq(sys.parse_number(".5"), 0.5, "no leading digit")
t.eq(sys.parse_number(7), 7, "numbers pass through")
for text, why in pairs { ["0x10"] = "hexadecimal: write it in decimal", ["-0X1p4"] = "hexadecimal: write it in decimal",
  ["1e309"] = "out of range", ["-1e309"] = "out of range", inf = "not a number", nan = "not a number",
  [""] = "not a number", ["1e"] = "not a number", ["5 5"] = "not a number", ["."] = "not a number" } do
  local value, err = sys.parse_number(text)
  t.eq(value, nil, "number '" .. text .. "' is refused")
  t.eq(err, why, "number '" .. text .. "': why")
end
t.eq(select(2, sys.parse_number(math.huge)), "out of range", "an infinite Lua number")

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
local listed = args.parse("x", { "--metric", "iops", "--metric=lat.p99" },
  { ["--metric"] = { key = "metrics", value = true, list = true } })
t.eq(table.concat(listed.metrics, " "), "iops lat.p99", "a repeatable option collects its values in order")
t.raises(function() args.parse("x", { "--bogus" }, {}) end, "x: unknown option '--bogus'", "unknown option")
t.raises(function() args.parse("x", { "-t" }, { ["-t"] = { key = "t", value = true } }) end, "option -t needs a value", "missing value")
t.eq(args.integer("x", "-t", "16", 1, 64), 16, "an integer")
t.eq(args.integer("x", "-t", "9007199254740993", 1), 9007199254740993, "exact beyond a double's 53 bits")
t.raises(function() args.integer("x", "-t", "0x10", 1, 64) end, "x: -t must be an integer, got '0x10' (hexadecimal: write it in decimal)", "hex integer")
t.raises(function() args.integer("x", "-t", "99999999999999999999", 1) end, "x: -t must be an integer, got '99999999999999999999' (out of range)", "too many digits")
t.raises(function() args.integer("x", "-t", "2.5", 1, 64) end, "x: -t must be an integer, got '2.5'", "a fraction")
t.eq(args.seconds("x", "--timeout", "1.5"), 1.5, "seconds")
t.eq(args.seconds("x", "--timeout", "500ms"), 0.5, "seconds with a unit")
for _, bad in ipairs { "0", "0s", "-1", "abc", "0x10", "1e309", "inf", "nan" } do
  t.raises(function() args.seconds("x", "--timeout", bad) end,
    "x: --timeout expects a positive number of seconds, got '" .. bad .. "'", "timeout " .. bad)
end
t.raises(function() args.positive_number("x", "--rate", "0", "ops/s") end,
  "x: --rate must be a positive number of ops/s, got '0'", "a rate of 0")

local dir = os.tmpname()
os.remove(dir)
assert(sys.mkdir(dir .. "/a/b"))
assert(sys.write_file(dir .. "/a/b/f", "content"))
t.eq(sys.read_file(dir .. "/a/b/f"), "content", "atomic write then read")
t.eq(#sys.list_dir(dir .. "/a/b"), 1, "no temporary file left")

-- what write_file replaces: a regular file, never anything else, never an input
local file = dir .. "/a/b/f"
assert(sys.mkdir(dir .. "/d"))
t.eq(sys.check_target(dir .. "/new"), true, "a new file")
t.eq(sys.check_target(file), true, "a regular file")
t.eq(select(2, sys.check_target(dir .. "/d")), "it is a directory, not a regular file", "a folder")
t.eq(select(2, sys.check_target("/dev/null")), "it is a character device, not a regular file", "a device (only looked at)")
os.execute(string.format("ln -s %s/a/b/f %s/link && ln %s/a/b/f %s/hard", dir, dir, dir, dir))
t.eq(select(2, sys.check_target(dir .. "/link")), "it is a symbolic link (to " .. file .. "); give the path of a regular file", "a symbolic link")
local ok, err, code = sys.write_file(dir .. "/link", "x")
t.eq(ok, nil, "write_file refuses a symbolic link")
t.eq(err, "refusing to replace " .. dir .. "/link: it is a symbolic link (to " .. file .. "); give the path of a regular file", "with why")
t.eq(code, -17, "and EEXIST")
t.eq(sys.read_file(file), "content", "the link's target is unchanged")
t.eq(sys.note_input(file), true, "an input")
t.eq(sys.note_input(dir .. "/none"), false, "no such input")
t.eq(select(2, sys.write_file(file, "x")), "refusing to replace " .. file .. ": it is one of this command's inputs", "an input is never replaced")
t.eq(select(2, sys.write_file(dir .. "/hard", "x")), "refusing to replace " .. dir .. "/hard: it is the same file as " .. file .. ", one of this command's inputs", "nor through a hard link")
t.eq(sys.read_file(file), "content", "the input is unchanged")
-- a stale temporary file of the same name (or a link planted there) is left alone
os.execute(string.format("ln -s %s/a/b/f %s/out.tmp.%d", dir, dir, sys.getpid()))
assert(sys.write_file(dir .. "/out", "fresh"))
t.eq(sys.read_file(dir .. "/out"), "fresh", "written beside a stale temporary name")
t.eq(sys.read_file(file), "content", "the link at the temporary name was not written through")
t.eq(select(2, sys.mkdir(file)), "mkdir " .. file .. ": Not a directory", "mkdir refuses a file of that name")
t.eq(select(2, sys.create_file(file)), "create " .. file .. ": File exists", "create_file never takes an existing file")
assert(sys.remove_tree(dir))
t.eq(sys.stat(dir), nil, "tree removed")

-- errors raised with a value that is not a string read as what they hold
t.eq(sys.error_info({ code = 5 }), "error {code = 5}", "a table's fields")
t.eq(sys.error_info({ b = { c = "x" }, a = 1, [2] = true }), 'error {[2] = true, a = 1, b = {c = "x"}}', "sorted, nested")
t.eq(sys.error_info(nil), "error nil", "nil")
t.eq(sys.error_info(false), "error false", "a boolean")
t.eq(sys.error_info(setmetatable({}, { __tostring = function() return "mine" end })), "mine", "__tostring wins")
t.eq(sys.error_info("text"), "text", "a string as it is")

-- rgw's connect helpers hand `transport` to the connection (a wrong one is refused there,
-- before any request: the endpoint below is never contacted)
local rgw = require "cephmark.rgw"
t.raises(function()
  rgw.s3_connect { endpoint = "http://127.0.0.1:9", access_key = "a", secret_key = "b", transport = "carrier-pigeon" }
end, "unknown transport 'carrier%-pigeon'", "rgw.s3_connect passes transport= on")
return t.done()
