-- --params FILE.yaml without a cluster: the file's values override the defaults and -p
-- overrides the file; every error names the file, the line and the key; the params.yaml a
-- run writes reads back with --params to the same values.
local cm = require "cephmark"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local message_of = t.message_of

local function quietly(fn)
  local saved = io.stdout
  io.stdout = { write = function(self) return self end, flush = function() end }
  local ok, err = pcall(fn)
  io.stdout = saved
  if not ok then error(err, 0) end
end

local dir = os.tmpname()
os.remove(dir)
assert(sys.mkdir(dir))
local function file(name, text)
  local path = dir .. "/" .. name
  assert(sys.write_file(path, text))
  return path
end

local seen
local scenario = cm.scenario {
  name = "params-file-test",
  params = {
    threads = cm.list(cm.integer(), { 1, 4 }, "ops in flight to try"),
    block_size = cm.size("4M", "bytes per op"),
    seconds = cm.duration("10s", "phase length"),
    mode = cm.enum({ "read", "write" }, "write", "what to do"),
    verify = cm.bool(true, "verify reads"),
  },
  run = function(s, p) seen = { p = p, origins = s.origins } end,
}
local function run(context)
  context.output = context.output or (dir .. "/results")
  quietly(function() scenario:run(context) end)
end

-- precedence: defaults < file < -p
local good = file("good.yaml", "# a comment\nthreads: [2, 8, 32]\nblock_size: 64K\nseconds: 2\nmode: read\nverify: no\n")
run { params_file = good, params = { seconds = "500ms" } }
t.eq(#seen.p.threads, 3, "a YAML sequence for a list param")
t.eq(seen.p.threads[3], 32, "its values typed")
t.eq(seen.p.block_size, 65536, "a size from the file")
t.eq(seen.p.mode, "read", "an enum from the file")
t.eq(seen.p.verify, false, "'no' is false")
t.eq(seen.p.seconds, 0.5, "-p wins over the file")
t.eq(seen.origins.block_size, "file", "origin: file")
t.eq(seen.origins.seconds, "-p", "origin: -p")
run { params_file = file("empty.yaml", "# nothing set\n") }
t.eq(seen.p.block_size, 4194304, "an empty file sets nothing")

-- the params a run writes into its results folder read back as the same values
run { params_file = good, params = { seconds = "500ms" } }
local written = dir .. "/results/params.yaml"
t.ok(sys.stat(written) ~= nil, "params.yaml written")
local first = seen.p
-- into the same folder, the run would replace its own --params file: refused before it runs
seen = nil
t.eq(message_of(function() run { params_file = written } end),
  "cannot write the results into " .. dir .. "/results (-o): " .. written .. ": it is one of this command's inputs",
  "a run's --params file is never replaced by the params.yaml it writes")
t.eq(seen, nil, "the refused run did not start")
run { params_file = written, output = dir .. "/results-again" }
for _, name in ipairs { "block_size", "seconds", "mode", "verify" } do
  t.eq(seen.p[name], first[name], "params.yaml round trip: " .. name)
end
t.eq(table.concat(seen.p.threads, ","), "2,8,32", "params.yaml round trip: threads")

-- errors name the file, the line and the key
local function error_for(name, text)
  local path = file(name, text)
  return message_of(function() run { params_file = path } end), path
end
local message, path = error_for("unknown.yaml", "seconds: 1s\n\nthread: 4\n")
t.eq(message, path .. ":3: unknown param 'thread' (did you mean 'threads'?); valid params: block_size, keep_pools, mode, progress, seconds, threads, verify",
  "an unknown key, at its line")
message, path = error_for("type.yaml", "seconds: 1s\nblock_size: 4X\n")
t.eq(message, path .. ":2: block_size: size '4X' has an unknown suffix 'X' (use K, M, G, T or P)", "a bad size")
message, path = error_for("element.yaml", "threads:\n  - 1\n  - many\n")
t.eq(message, path .. ":1: threads: value 2: expected an integer, got 'many'", "a bad list element, at its key")
message, path = error_for("enum.yaml", "'mode': sideways\n")
t.eq(message, path .. ":1: mode: expected one of read, write, got 'sideways'", "a quoted key")
message, path = error_for("null.yaml", "verify:\n")
t.eq(message, path .. ":1: verify: expected true or false, got null", "a key with no value")
message, path = error_for("mapping.yaml", "threads: {a: 1}\n")
t.eq(message, path .. ":1: threads: expected a list (a YAML sequence or comma-separated values), got a mapping", "a mapping for a list")
message, path = error_for("syntax.yaml", "threads: [1, 2\nseconds: 1s\n")
t.match(message, "^" .. path:gsub("%p", "%%%0") .. ":%d+:%d+: ", "a YAML syntax error has the file, line and column")
message, path = error_for("list.yaml", "- threads\n- seconds\n")
t.eq(message, path .. ":1: expected a mapping of param names to values (threads: 16), got a list", "not a mapping")
t.eq(message_of(function() run { params_file = dir .. "/missing.yaml" } end),
  "cannot read the --params file " .. dir .. "/missing.yaml: No such file or directory", "a missing file")

sys.remove_tree(dir)
return t.done()
