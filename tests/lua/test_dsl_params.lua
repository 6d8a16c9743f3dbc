-- The scenario language's params without a cluster: each type's parsing and formatting,
-- shorthand inference, -p precedence over defaults, and the exact messages for bad input,
-- each naming the scenario file and the line that declares the param or the scenario.
local cm = require "cephmark"
local params = require "cephmark.params"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local here = debug.getinfo(1, "S").source:sub(2)
local function line() return debug.getinfo(2, "l").currentline end

local message_of = t.message_of

-- runs fn with stdout captured; returns the text (an error in fn goes on up)
local function capture(fn)
  local text, ok, err = t.capture(fn)
  if not ok then error(err, 0) end
  return text
end

local out = os.tmpname()
os.remove(out)

-- each type parses strings (from -p) and values (from YAML or Lua) the same way
local integer = cm.integer(16, "ops", { min = 1, max = 65536 })
t.eq(integer:parse("32"), 32, "integer from text")
t.eq(math.type(integer:parse("32")), "integer", "an integer, not a float")
t.eq(integer:parse(8), 8, "integer from a number")
t.eq(select(2, integer:parse("abc")), "expected an integer, got 'abc'", "integer refuses text")
t.eq(select(2, integer:parse(2.5)), "expected an integer, got 2.5", "integer refuses a fraction")
t.eq(select(2, integer:parse("0")), "must be at least 1, got 0", "integer min")
t.eq(select(2, integer:parse(70000)), "must be at most 65536, got 70000", "integer max")
local size = cm.size("4M")
t.eq(size:parse("64K"), 65536, "size with K")
t.eq(size:parse("1G"), 1073741824, "size with G")
t.eq(size:parse(4096), 4096, "size in bytes")
t.eq(select(2, size:parse("4X")), "size '4X' has an unknown suffix 'X' (use K, M, G, T or P)", "size 4X")
t.eq(size:format(4194304), "4M", "size formats in its largest exact unit")
t.eq(size:format(1000), "1000", "a size that is no multiple of 1K stays in bytes")
local duration = cm.duration("10s")
t.eq(duration:parse("500ms"), 0.5, "duration in ms")
t.eq(duration:parse("2m"), 120, "duration in minutes")
t.eq(duration:parse(3), 3, "duration in seconds")
t.eq(duration:format(0.5), "500ms", "duration formats ms")
t.eq(duration:format(120), "2m", "duration formats minutes")
t.eq(select(2, duration:parse("10 parsecs")), "duration '10 parsecs' has an unknown unit 'parsecs' (use s, ms, m or h)", "bad duration")
local bool = cm.bool(true)
t.eq(bool:parse("false"), false, "bool false")
t.eq(bool:parse("yes"), true, "bool yes")
t.eq(bool:parse("0"), false, "bool 0")
t.eq(select(2, bool:parse("maybe")), "expected true or false, got 'maybe'", "bad bool")
local enum = cm.enum({ "replicated", "erasure" }, "replicated")
t.eq(enum:parse("erasure"), "erasure", "enum choice")
t.eq(select(2, enum:parse("ec")), "expected one of replicated, erasure, got 'ec'", "bad enum")
t.eq(enum:type_name(), "replicated|erasure", "enum type name")
local list = cm.list(cm.size(), { "4K", "64K" })
local sizes = list:parse("4K, 1M,4M")
t.eq(#sizes, 3, "list from comma-separated text")
t.eq(sizes[2], 1048576, "list elements parsed by the element type")
t.eq(list:parse({ "4K" })[1], 4096, "list from a sequence")
t.eq(list:parse(8192)[1], 8192, "a scalar is a list of one")
t.eq(select(2, list:parse("4K,4X")), "value 2: size '4X' has an unknown suffix 'X' (use K, M, G, T or P)", "bad element")
t.eq(select(2, list:parse("")), "expected at least one value, got an empty list", "empty list")
t.eq(list:format({ 4096, 65536 }), "4K,64K", "list formats as -p takes it")
t.eq(cm.number(0.5):parse("1.25"), 1.25, "number")
t.eq(cm.string("x"):parse(12), "12", "string from a YAML number")

-- shorthand: a plain value declares a param of its type
local function kind_of(value) return params.infer(value, { file = "f", line = 1 }).kind end
t.eq(kind_of(16), "integer", "16 is an integer")
t.eq(kind_of(0.5), "number", "0.5 is a number")
t.eq(kind_of(true), "bool", "true is a bool")
t.eq(kind_of("4M"), "size", "4M is a size")
t.eq(kind_of("64KiB"), "size", "64KiB is a size")
t.eq(kind_of("10s"), "duration", "10s is a duration")
t.eq(kind_of("2m"), "duration", "lower-case m is minutes")
t.eq(kind_of("fast"), "string", "other text is a string")
t.eq(params.infer({ 1, 4 }, { file = "f", line = 1 }).element.kind, "integer", "a list of integers")

-- precedence: defaults, then -p; values typed, origins recorded
local seen
local scenario_line = line() + 1
local scenario = cm.scenario {
  name = "params-test",
  params = {
    threads = cm.integer(16, "ops in flight", { min = 1 }),
    block_size = cm.size("4M", "bytes per op"),
    seconds = "10s",
    verify = true,
  },
  run = function(s, p) seen = { p = p, origins = s.origins } end,
}
capture(function()
  scenario:run { params = { threads = "32", seconds = "500ms" }, output = out }
end)
t.eq(seen.p.threads, 32, "-p threads=32 wins over the default")
t.eq(seen.p.block_size, 4194304, "the default size, in bytes")
t.eq(seen.p.seconds, 0.5, "shorthand duration from -p")
t.eq(seen.p.verify, true, "shorthand bool default")
t.eq(seen.origins.threads, "-p", "origin of threads")
t.eq(seen.origins.block_size, "default", "origin of block_size")
local typo_line = line(); local typo = message_of(function() local value = seen.p.thread; return value end)
t.eq(typo, here .. ":" .. typo_line .. ": unknown param 'thread' (did you mean 'threads'?); params: block_size, keep_pools, progress, seconds, threads, verify",
  "a typo in the scenario's own code fails at once")

-- bad input: the message names the scenario file and line
local threads_line = scenario_line + 3 -- the line of cm.integer(16, ...) above
local function run_with(cli) return message_of(function() capture(function() scenario:run { params = cli, output = out } end) end) end
t.eq(run_with { thread = "4" },
  string.format("%s:%d: -p thread=4: unknown param 'thread' (did you mean 'threads'?); valid params: block_size, keep_pools, progress, seconds, threads, verify",
    here, scenario_line), "unknown param, at the scenario's line")
t.eq(run_with { threads = "abc" },
  string.format("%s:%d: -p threads=abc: expected an integer, got 'abc'", here, threads_line),
  "a param of the wrong type, at the param's line")
t.eq(run_with { block_size = "4X" },
  string.format("%s:%d: -p block_size=4X: size '4X' has an unknown suffix 'X' (use K, M, G, T or P)", here, threads_line + 1),
  "a size like 4X")
t.eq(run_with { threads = "0" },
  string.format("%s:%d: -p threads=0: must be at least 1, got 0", here, threads_line), "below the minimum")
t.eq(run_with { verify = "perhaps" },
  string.format("%s:%d: -p verify=perhaps: expected true or false, got 'perhaps'", here, scenario_line),
  "a shorthand param is located at the scenario's line")

-- a required param (no default)
local required_line = line() + 1
local needs_pool = cm.scenario { name = "needs", params = { pool = cm.string(nil, "pool to use") },
  run = function() end }
t.eq(message_of(function() capture(function() needs_pool:run { params = {}, output = out } end) end),
  string.format("%s:%d: param 'pool' is required: pass -p pool=VALUE or set it in a --params file", here, required_line),
  "a required param")

-- definition errors: at the declaring line
local bad_default_line = line(); local bad_default = message_of(function() return cm.scenario { name = "x", params = { threads = cm.integer("abc") }, run = function() end } end)
t.eq(bad_default, string.format("%s:%d: param 'threads': default 'abc': expected an integer, got 'abc'", here, bad_default_line),
  "a bad default fails where it is declared")
local bad_size_line = line(); local bad_size = message_of(function() return cm.scenario { name = "x", params = { block_size = cm.size("4X") }, run = function() end } end)
t.eq(bad_size, string.format("%s:%d: param 'block_size': default '4X': size '4X' has an unknown suffix 'X' (use K, M, G, T or P)", here, bad_size_line),
  "a bad size default")
local builtin_line = line(); local builtin = message_of(function() return cm.scenario { name = "x", params = { keep_pools = true }, run = function() end } end)
t.eq(builtin, string.format("%s:%d: param 'keep_pools' is built in (every scenario has it); choose another name", here, builtin_line),
  "a built-in name")
local bad_value_line = line(); local bad_value = message_of(function() return cm.scenario { name = "x", params = { f = print }, run = function() end } end)
t.eq(bad_value, string.format("%s:%d: param 'f': a param is a plain value (16, \"4M\", \"10s\", true, {1, 4}) or a cm.<type>(...) declaration, got a function", here, bad_value_line),
  "a value that is no param")
local enum_line = line(); local bad_enum = message_of(function() local e = cm.enum("a", "a"); return e end)
t.eq(bad_enum, string.format("%s:%d: enum param: expected a list of choices, e.g. cm.enum({\"read\", \"write\"}, \"read\")", here, enum_line), "enum misuse")

-- bounds on a list bound every element, in the element's units, together with the
-- element's own bounds (the tighter wins); --help shows them; a default outside them fails
-- where it is declared; bounds on a type without an order are refused
local list_line = line() + 2
local bounded = cm.scenario { name = "list-bounds", params = {
  threads = cm.list(cm.integer(), { 1, 4, 16 }, "ops in flight", { min = 1 }),
  sizes = cm.list(cm.size(nil, nil, { max = "4M" }), { "4K" }, "sizes", { min = "4K", max = "16M" }),
  waits = cm.list(cm.duration(), { "1s" }, "pauses", { min = 0 }),
}, run = function(s, p) seen = p end }
local bounded_help = capture(function() bounded:run { help = true } end)
t.match(bounded_help, "\n  threads     list of integer >= 1    1,4,16  ops in flight\n", "help shows a list's bounds")
t.match(bounded_help, "\n  sizes       list of size 4K..4M     4K      sizes\n", "the element's own bound is kept when tighter")
capture(function() bounded:run { params = { threads = "2,8", waits = "0s,2s" }, output = out } end)
t.eq(table.concat(seen.threads, ","), "2,8", "values within the bounds")
t.eq(seen.waits[1], 0, "min = 0 on a list of durations lets 0 in")
local function run_bounded(cli) return message_of(function() capture(function() bounded:run { params = cli, output = out } end) end) end
t.eq(run_bounded { threads = "0,4" }, string.format("%s:%d: -p threads=0,4: value 1: must be at least 1, got 0", here, list_line),
  "an element below the list's min")
t.eq(run_bounded { sizes = "1K" }, string.format("%s:%d: -p sizes=1K: must be at least 4K, got 1K", here, list_line + 1),
  "a list's min in the element's units")
t.eq(run_bounded { sizes = "4K,8M" }, string.format("%s:%d: -p sizes=4K,8M: value 2: must be at most 4M, got 8M", here, list_line + 1),
  "the element's tighter max")
local list_default_line = line(); local list_default = message_of(function() return cm.scenario { name = "x", params = { t = cm.list(cm.integer(), { 0, 4 }, "t", { min = 1 }) }, run = function() end } end)
t.eq(list_default, string.format("%s:%d: param 't': default a list: value 1: must be at least 1, got 0", here, list_default_line),
  "a list default outside the bounds")
local list_bound_line = line(); local list_bound = message_of(function() local l = cm.list(cm.integer(), { 1 }, "t", { min = "x" }); return l end)
t.eq(list_bound, string.format("%s:%d: list param: min: expected an integer, got 'x'", here, list_bound_line), "a bad bound on a list")
local unordered_line = line(); local unordered = message_of(function() local l = cm.list(cm.bool(), { true }, "b", { max = 1 }); return l end)
t.eq(unordered, string.format("%s:%d: list of bool param: max applies to integers, numbers, sizes and durations (and lists of them), not to a bool", here, unordered_line),
  "bounds on a list of bools")
local string_line = line(); local string_bound = message_of(function() local l = cm.string("x", "label", { min = 1 }); return l end)
t.eq(string_bound, string.format("%s:%d: string param: min applies to integers, numbers, sizes and durations (and lists of them), not to a string", here, string_line),
  "bounds on a string, which would be ignored")

-- the help listing: types, defaults and descriptions, and it needs no params
local help = capture(function() scenario:run { help = true, params = { threads = "not even parsed" } } end)
t.match(help, "\n  threads     integer >= 1  16     ops in flight\n", "help lists threads with its type, default and description")
t.match(help, "\n  block_size  size          4M     bytes per op\n", "help shows sizes in units")
t.match(help, "\n  seconds     duration      10s\n", "a shorthand param in the help")
t.match(help, "params of every scenario:\n  keep_pools", "the built-in params are listed apart")

-- the params file form written into results reads back as the same values
local yaml = require "cephmark.yaml"
local as_file = scenario.params:as_params_file { threads = 32, block_size = 65536, seconds = 0.5, verify = false,
  keep_pools = false, progress = true }
t.eq(yaml.encode(as_file), "block_size: 64K\nkeep_pools: false\nprogress: true\nseconds: 500ms\nthreads: 32\nverify: false\n",
  "params.yaml keeps units")

sys.remove_tree(out)
return t.done()
