-- The benches' declarative option tables (runtime/bench_lua.h): each module's published
-- bench_options is the table's names plus the engine's; an unknown option names every one;
-- a result carries each "in result" option with the value used, defaults included; and the
-- caller's options table is only read, on success and on failure (workers.run's too). No cluster needed: the
-- null, disk and socket benches show what every bench shares through the one driver.
local disk = require "cephmark.disk"
local null = require "cephmark.null"
local options = require "cephmark.options"
local socket = require "cephmark.socket"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local tables = {}
for _, target in ipairs(options.list()) do tables[target.name] = target end
t.ok(tables.engine and tables.rados and tables.rbd and tables["swift, s3"] and tables.disk and tables.socket
  and tables.null, "every target's table, and the engine's, are listed")

-- bench_options == sorted(own names + engine names)
local function expected_names(name)
  local names = {}
  for _, o in ipairs(tables[name].options) do names[#names + 1] = o.name end
  for _, o in ipairs(tables.engine.options) do names[#names + 1] = o.name end
  table.sort(names)
  return table.concat(names, ",")
end
t.eq(table.concat(null.bench_options, ","), expected_names("null"), "null.bench_options comes from its table")
t.eq(table.concat(disk.bench_options, ","), expected_names("disk"), "disk.bench_options likewise")
t.eq(table.concat(socket.bench_options, ","), expected_names("socket"), "socket.bench_options likewise")

-- every option has a type, a meaning, and a default that is one of its choices
for _, target in ipairs(options.list()) do
  for _, o in ipairs(target.options) do
    t.ok(o.type ~= nil and o.help ~= "", string.format("%s.%s has a type and a meaning", target.name, o.name))
    if o.choices and o.default then
      local found = false
      for _, c in ipairs(o.choices) do found = found or c == o.default end
      t.ok(found, string.format("%s.%s: its default %s is a choice", target.name, o.name, o.default))
    end
  end
end

-- an unknown name: one message naming the bench's own options, then the engine's
local ok, err = pcall(null.bench, { thread = 2 })
t.ok(not ok, "a misspelt option is refused")
local listed = {}
for _, o in ipairs(tables.null.options) do listed[#listed + 1] = o.name end
for _, o in ipairs(tables.engine.options) do listed[#listed + 1] = o.name end
t.eq(tostring(err):match("null%.bench: .*"),
  "null.bench: unknown option 'thread' (expected one of " .. table.concat(listed, ", ") .. ")",
  "the message names every option, from the table")

-- defaults in results
local r = null.bench { ops = 20, threads = 2 }
t.eq(r.block_size, 4096, "null: block_size's default is in the result")
t.eq(r.delay, nil, "an option marked not in result is not")

local function snapshot(tbl)
  local keys = {}
  for k, v in pairs(tbl) do keys[#keys + 1] = tostring(k) .. "=" .. tostring(v) end
  table.sort(keys)
  return table.concat(keys, ";")
end

local base = os.getenv("CEPHMARK_BUILD_DIR") or "."
local dir = string.format("%s/test-bench-options-%d", base, sys.getpid())
assert(sys.mkdir(dir))
local path = dir .. "/data"
local opts = { path = path, io_type = "write", count = 8, block_size = "4K", direct = false, remove = true }
local before = snapshot(opts)
local d = disk.bench(opts)
t.eq(snapshot(opts), before, "disk.bench writes nothing into the caller's table (count, threads)")
t.eq(d.ops, 8, "count bounds the run as ops")
t.eq(d.threads, 1, "disk's own default of one op in flight")
t.eq(d.io_type, "write", "choices in the result by name")
t.eq(d.pattern, "seq", "the pattern's default in the result")
t.eq(d.sync, "none", "sync's default in the result")
t.eq(d.overwrite, false, "overwrite's default in the result")
t.eq(d.remove, true, "a given option in the result")
t.eq(d.count, nil, "count (an input) is not")
t.ok(io.open(path) == nil, "remove = true removed the file this run made")
os.remove(dir)

local sopts = { host = "127.0.0.1", port = 1, streams = 2, seconds = 1, connect_timeout = 1 }
before = snapshot(sopts)
ok, err = pcall(socket.bench, sopts)
t.ok(not ok, "nothing listens on port 1")
t.eq(snapshot(sopts), before, "socket.bench writes nothing into the caller's table (threads), even when it fails")
local bad = { host = "127.0.0.1", streams = 2, threads = 2 }
ok, err = pcall(socket.bench, bad)
t.ok(not ok and tostring(err):find("give streams or threads, not both", 1, true), "streams and threads conflict")

local workers = require "cephmark.workers"
local wopts = { n = 2, fn = function() end, seconds = 1 }
before = snapshot(wopts)
local wr = workers.run(wopts)
t.eq(snapshot(wopts), before, "workers.run writes nothing into the caller's table (threads)")
t.eq(wr.threads, 2, "one slot per worker")

t.done()
