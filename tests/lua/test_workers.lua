-- Scripted workers on the engine without a cluster: coroutines driven through w:op(),
-- bounds, retiring workers, per-second callbacks, and errors with the worker's traceback.
local workers = require "cephmark.workers"
local t = require "cephmark.test"

local calls = 0
local r = workers.run { n = 8, seconds = 1, fn = function(w)
  while true do
    calls = calls + 1
    w:op(4096)
  end
end }
t.ok(r.ops > 0, "workers ran ops")
t.eq(r.ops, calls, "one op per w:op() call")
t.eq(r.bytes, r.ops * 4096, "bytes counted per op")
t.eq(r.errors, 0, "no errors")
t.eq(r.op, "workers", "op name")
t.ok(#r.series >= 1, "per-second series")

-- each worker returns after its own number of ops; the run ends when all have
local per_worker = {}
local done = workers.run { n = 4, fn = function(w)
  for i = 1, w.id * 10 do w:op() end
  per_worker[w.id] = true
end }
t.eq(done.ops, 10 + 20 + 30 + 40, "every worker's ops counted")
t.eq(#per_worker, 4, "every worker finished")

-- op bound
local bounded = workers.run { n = 3, ops = 1000, fn = function(w) while true do w:op() end end }
t.eq(bounded.ops, 1000, "op-count bound")

-- an error in one worker stops the phase and names that worker, with its traceback
local ok, err = pcall(workers.run, { n = 4, seconds = 5, fn = function(w)
  if w.id == 3 then
    local function deep() error("worker failure") end
    deep()
  end
  while true do w:op() end
end })
t.eq(ok, false, "a worker error fails the phase")
t.match(err, "^worker 3: .*test_workers.lua:%d+: worker failure", "the error names worker 3")
t.match(err, "in local 'deep'", "with the worker's own traceback")

-- misuse
t.raises(function() workers.run { fn = function() end } end, "n (the number of workers) is required", "n required")
t.raises(function() workers.run { n = 2 } end, "fn must be a function(w), got a nil", "fn required")
local yielded_ok, yielded_err = pcall(workers.run, { n = 1, fn = function() coroutine.yield() end })
t.eq(yielded_ok, false, "a bare coroutine.yield is refused")
t.match(yielded_err, "yielded without an op", "with a clear message")
-- a phase started from inside another coroutine works the same
local nested
coroutine.wrap(function()
  nested = workers.run { n = 2, ops = 100, fn = function(w) while true do w:op() end end }
end)()
t.eq(nested.ops, 100, "workers.run inside a coroutine")
return t.done()
