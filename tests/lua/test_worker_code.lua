-- Worker functions packed for agents (worker_code.lua) without a cluster: what travels
-- (plain values, tables of them, modules and their functions, _ENV) arrives equal and the
-- function runs as it did; what cannot travel is refused naming the upvalue; and
-- distributed.split_rate's shares add up to the rate asked for.
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
t.match(text, "^return {fn = ", "packed as Lua text")
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

-- refused: a Lua function, a coroutine, a table holding a function, a table that refers to itself
local function helper() return 1 end
local _, err = worker_code.pack(function() return helper() end)
t.match(err, "^upvalue 'helper' is a function, which cannot be sent to the agents: open it inside the worker function",
  "a Lua function upvalue is refused by name")
local co = coroutine.create(function() end)
_, err = worker_code.pack(function() return co end)
t.match(err, "^upvalue 'co' is a thread", "a coroutine is refused")
local holder = { callback = function() end }
_, err = worker_code.pack(function() return holder end)
t.match(err, "^upvalue 'holder.callback' is a function", "a function inside a table is refused with its path")
local loop = {}
loop.self = loop
_, err = worker_code.pack(function() return loop end)
t.match(err, "refers to itself", "a cycle is refused")
local file = io.stderr
_, err = worker_code.pack(function() return file end)
t.match(err, "^upvalue 'file' is a FILE%*", "a file handle is refused, named by its type")
_, err = worker_code.pack(function() return 1 end, function() return helper() end)
t.match(err, "^upvalue 'helper' is a function", "setup's upvalues are checked too")

-- a pool is sent by name and opened by the agent; failing to open it is the agent's error
local fake_pool_text = 'return {fn = {chunk = ' .. string.format("%q", string.dump(function() return 1 end)) ..
  ', n = 1, upvalues = {[1] = pool("bench")}}}'
local opened = {}
local unpacked = assert(worker_code.unpack(fake_pool_text, { pool = function(name) opened[#opened + 1] = name; return {} end }))
t.eq(opened[1], "bench", "a pool is opened by name on the agent")
t.ok(unpacked.fn, "and the function loads")
local none, why = worker_code.unpack(fake_pool_text, { pool = function() return nil, "No such file or directory" end })
t.eq(none, nil, "a pool that cannot be opened fails the unpack")
t.eq(why, "cannot open pool bench: No such file or directory", "naming the pool")
t.eq(select(2, worker_code.unpack("return {fn = {chunk = 'x', n = 0, upvalues = {}}}", { pool = function() end })),
  "cannot load the fn function: attempt to load a text chunk (mode is 'b')", "a broken chunk is refused")

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
