-- Worker functions packed for agents (worker_code.lua) without a cluster: what travels
-- (plain values, tables of them, modules and their functions, other Lua functions, _ENV)
-- arrives equal and the function runs as it did, with upvalues shared with setup still
-- shared; what cannot travel is refused naming the upvalue; and distributed.split_rate's
-- shares add up to the rate asked for.
local worker_code = require "cephmark.worker_code"
local distributed = require "cephmark.distributed"
local json = require "cephmark.json"
local workers = require "cephmark.workers"
local t = require "cephmark.test"

local count, ratio, label, flag, missing = 7, 0.1, "obj\0\255name", true, nil
local settings = { sizes = { 4096, 8192 }, name = "bench", nested = { deep = { x = 1.5 } }, [3] = "three" }
local format = string.format
local function fn(w)
  local seen = missing
  return format("%s:%d:%s:%s:%s:%s:%s:%s:%s", w.agent, w.id, count, ratio == 0.1, label, flag,
    settings.sizes[2], settings.nested.deep.x, settings[3]) .. json.encode({ a = 1 }) .. tostring(seen) ..
    tostring(math.huge) .. type(print)
end

local text = assert(worker_code.pack(fn))
t.match(text, "^local F = {}\n", "packed as Lua text")
local pools = {}
local code = assert(worker_code.unpack(text, { pool = function(name) pools[#pools + 1] = name; return {} end }))
t.eq(code.setup, nil, "no setup")
local wrapped = worker_code.wrap(code.fn, "a7", nil)
local want = fn({ agent = "a7", id = 3 })
t.eq(wrapped({ id = 3 }), want, "the unpacked function returns what the original does")
t.eq(#pools, 0, "no pool opened")

-- _ENV on the agent is a fresh table over the globals: a worker's globals do not leak
local function sets_global() leaked_global_of_worker = 1 end -- luacheck: ignore
local env_code = assert(worker_code.unpack(assert(worker_code.pack(sets_global)), { pool = function() end }))
env_code.fn()
t.eq(rawget(_G, "leaked_global_of_worker"), nil, "globals set by the worker stay in its own environment")

-- setup travels too; its value reaches each worker as w.shared
local base = 100
local with_setup = assert(worker_code.unpack(assert(worker_code.pack(function(w) return w.shared + w.id end,
  function(agent) return base + agent.index end)), { pool = function() end }))
local shared = with_setup.setup { index = 2 }
t.eq(worker_code.wrap(with_setup.fn, "x", shared)({ id = 5 }), 107, "setup's value is w.shared")

-- in a phase: the unpacked function drives real workers
local phase_ops = workers.run { n = 3, ops = 30, fn = worker_code.wrap(assert(worker_code.unpack(
  assert(worker_code.pack(function(w) while true do w:op(4096) end end)), { pool = function() end })).fn, "a1") }
t.eq(phase_ops.ops, 30, "an unpacked worker function runs in workers.run")

-- other Lua functions travel too, once each (a recursive one included), and an upvalue
-- shared by several functions stays shared: what setup assigns, the workers see
local opened_by_setup
local function object_name(w, i) return string.format("%s.%d.%d", w.agent, w.id, i) end
local function depth(n) if n == 0 then return 0 end return 1 + depth(n - 1) end
local helpers = { name = object_name }
local shipped = assert(worker_code.unpack(assert(worker_code.pack(function(w)
  return helpers.name(w, depth(3)) .. "/" .. tostring(opened_by_setup)
end, function(agent) opened_by_setup = "image-of-" .. agent.name end)), { pool = function() end }))
shipped.setup { name = "a2" }
t.eq(worker_code.wrap(shipped.fn, "a2")({ id = 4 }), "a2.4.3/image-of-a2",
  "helper functions, recursion and an upvalue shared with setup")
t.eq(opened_by_setup, nil, "the coordinator's own upvalue is untouched")
local twice = assert(worker_code.pack(function() return object_name, helpers.name end))
local _, chunks = twice:gsub("= chunk%(", "")
t.eq(chunks, 2, "a function referred to twice is packed once")

-- refused: a coroutine, a file handle, an object with methods, a table that refers to itself,
-- and the same inside a helper function, named with it
local co = coroutine.create(function() end)
local _, err = worker_code.pack(function() return co end)
t.match(err, "^upvalue 'co' is a thread, which cannot be sent to the agents: open it inside the worker function",
  "a coroutine is refused by name")
local file = io.stderr
_, err = worker_code.pack(function() return file end)
t.match(err, "^upvalue 'file' is a FILE%*", "a file handle is refused, named by its type")
local Class = {}
Class.__index = Class
function Class.size() return 1 end
local object = setmetatable({}, Class)
_, err = worker_code.pack(function() return object:size() end)
t.match(err, "^upvalue 'object' is an object %(a table with methods%)", "an object is refused")
local holder = { inner = { handle = io.stdout } }
_, err = worker_code.pack(function() return holder end)
t.match(err, "^upvalue 'holder.inner.handle' is a FILE%*", "inside a table, with its path")
local loop = {}
loop.self = loop
_, err = worker_code.pack(function() return loop end)
t.match(err, "^upvalue 'loop.self' refers to itself", "a cycle is refused")
local function opens() return file end
_, err = worker_code.pack(function() return opens() end)
t.match(err, "^upvalue 'file' of function 'opens' is a FILE%*", "in a helper, named with it")
_, err = worker_code.pack(function() return 1 end, function() return co end)
t.match(err, "^upvalue 'co' is a thread", "setup's upvalues are checked too")
local guarded = setmetatable({ size = 4096 }, { __index = function(_, k) error("unknown param " .. k) end })
local plain_copy = assert(worker_code.unpack(assert(worker_code.pack(function() return guarded.size end)),
  { pool = function() end }))
t.eq(plain_copy.fn(), 4096, "a params-like table (an __index function) arrives as its values")

-- a pool is sent by name and opened by the agent; failing to open it is the agent's error
local fake_pool_text = "local F = {}\nF[1] = chunk(" .. string.format("%q", string.dump(function() return 1 end)) ..
  ")\nset(F[1], 1, pool(\"bench\"))\nreturn {fn = F[1]}"
local opened = {}
local unpacked = assert(worker_code.unpack(fake_pool_text, { pool = function(name) opened[#opened + 1] = name; return {} end }))
t.eq(opened[1], "bench", "a pool is opened by name on the agent")
t.ok(unpacked.fn, "and the function loads")
local none, why = worker_code.unpack(fake_pool_text, { pool = function() return nil, "No such file or directory" end })
t.eq(none, nil, "a pool that cannot be opened fails the unpack")
t.eq(why, "cannot open pool bench: No such file or directory", "naming the pool")
t.eq(select(2, worker_code.unpack("local F = {}\nF[1] = chunk('x')\nreturn {fn = F[1]}", { pool = function() end })),
  "cannot load the worker code: attempt to load a text chunk (mode is 'b')", "a text chunk is refused")

-- rate shares add up to the rate asked for
local function shares(rate, n)
  local sum, list = 0, {}
  for i = 1, n do
    list[i] = distributed.split_rate(rate, n, i)
    sum = sum + list[i]
  end
  return sum, list
end
local sum, list = shares(1000, 3)
t.eq(sum, 1000, "1000 ops/s over 3 agents: shares add up")
t.eq(table.concat(list, ","), "334,333,333", "as whole shares")
sum, list = shares(5, 8)
t.near(sum, 5, 1e-9, "5 ops/s over 8 agents add up")
t.eq(list[1], 5 / 8, "as equal fractional shares")
sum = shares(2500.5, 24)
t.near(sum, 2500.5, 1e-9, "a fractional rate over 24 agents adds up")
t.eq(distributed.split_rate(nil, 4, 1), nil, "no rate stays no rate")
t.eq(distributed.split_rate(300, 1, 1), 300, "one agent gets it all")
t.eq(distributed.split_rate("600", 2, 2), 300, "a rate given as text")
return t.done()
