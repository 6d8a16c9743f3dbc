-- A mix of op kinds on the null target (kinds with no object behind them): the per-kind
-- results in result.by_op add up to the total, a seed repeats the same counts, a one-kind
-- phase has no by_op, bad mixes get one line, and a scenario's results folder gets
-- operations.csv and the console a line per kind. Counts only, never speeds.
local cm = require "cephmark"
local null = require "cephmark.null"
local results = require "cephmark.results"
local sys = require "cephmark.sys"
local json = require "cephmark.json"
local t = require "cephmark.test"

local mix = { read = 60, write = 30, stat = 5, remove = 5 }
local r = null.bench { threads = 8, ops = 4000, delay = "50us", block_size = "4K", mix = mix, seed = 9 }
t.eq(r.ops, 4000, "the op bound")
local sum, names = 0, {}
for name, op in pairs(r.by_op) do
  sum = sum + op.ops
  names[#names + 1] = name
  t.eq(op.latency.count, op.ops, name .. ": every op in its histogram")
  t.eq(op.errors, 0, name .. ": no errors")
  t.ok(op.iops > 0, name .. ": a rate")
end
table.sort(names)
t.eq(table.concat(names, " "), "read remove stat write", "the four kinds drawn")
t.eq(sum, r.ops, "per-kind ops sum to the total")
t.eq(r.by_op.read.bytes, r.by_op.read.ops * 4096, "reads move a block")
t.eq(r.by_op.write.bytes, r.by_op.write.ops * 4096, "writes too")
t.eq(r.by_op.stat.bytes + r.by_op.remove.bytes, 0, "stat and remove move nothing")
t.eq(r.bytes, (r.by_op.read.ops + r.by_op.write.ops) * 4096, "the total's bytes are theirs")
t.eq(r.reads, r.by_op.read.ops, "result.reads agrees")
t.ok(r.lat_read ~= nil and r.lat_write ~= nil, "and lat_read / lat_write are there for a read/write mix")
t.ok(r.by_op.read.ops > r.by_op.stat.ops, "60 % reads outnumber 5 % stats")

local again = null.bench { threads = 3, ops = 4000, block_size = "4K", mix = mix, seed = 9 }
for name, op in pairs(r.by_op) do
  t.eq(again.by_op[name].ops, op.ops, name .. ": the same seed draws the same counts, whatever the depth")
end
local other = null.bench { threads = 8, ops = 4000, mix = mix, seed = 10 }
t.ok(other.by_op.read.ops ~= r.by_op.read.ops or other.by_op.write.ops ~= r.by_op.write.ops,
  "another seed draws another sequence")
local only = null.bench { threads = 2, ops = 100, mix = { write = 1 } }
t.eq(only.by_op, nil, "a mix of one kind keeps the one-op result (no by_op)")
t.eq(only.writes, 100, "all writes")
t.eq(null.bench { threads = 2, ops = 100 }.by_op, nil, "a plain phase has no by_op")

t.raises(function() null.bench { ops = 1, mix = { read = 1, fetch = 2 } } end,
  "null.bench: mix: unknown operation 'fetch' %(expected one of read, write, remove, stat%)", "unknown name")
t.raises(function() null.bench { ops = 1, mix = { read = -1, write = 2 } } end,
  "null.bench: mix: the ratio of read must be an integer >= 0, got %-1", "negative ratio")
t.raises(function() null.bench { ops = 1, mix = { read = 1.5 } } end,
  "the ratio of read must be an integer >= 0, got 1.5", "fractional ratio")
t.raises(function() null.bench { ops = 1, mix = { read = 0, write = 0 } } end,
  "null.bench: mix: the ratios sum to 0", "ratios summing to 0")
t.raises(function() null.bench { ops = 1, mix = {} } end, "the ratios sum to 0", "an empty mix")
t.raises(function() null.bench { ops = 1, mix = "read" } end, "mix must be a table of ratios", "not a table")

-- a scenario: by_op in results.json, operations.csv, a console line per kind
local base = os.tmpname()
os.remove(base)
assert(sys.mkdir(base))
local printed = {}
local scenario = cm.scenario {
  name = "null-mix",
  run = function(s)
    s:phase("mixed", null, { threads = 4, ops = 1000, mix = mix, seed = 3 })
    s:phase("plain", null, { threads = 4, ops = 100 })
  end,
}
local saved = io.stdout
io.stdout = { write = function(self, ...)
  for _, text in ipairs { ... } do printed[#printed + 1] = tostring(text) end
  return self
end, flush = function() end }
local ok, err = pcall(function() return scenario:run { output = base .. "/run" } end)
io.stdout = saved
t.eq(ok, true, "the scenario ran: " .. tostring(err))
local document = json.decode(sys.read_file(base .. "/run/results.json"))
local by_op = document.phases[1].result.by_op
t.eq(by_op.read.ops + by_op.write.ops + by_op.stat.ops + by_op.remove.ops, 1000, "results.json: by_op")
t.eq(document.phases[2].result.by_op, nil, "the plain phase has none")
local csv = sys.read_file(base .. "/run/operations.csv")
t.match(csv, "^phase_index,phase,label,op,ops,bytes,errors,iops,bandwidth_mib_s,lat_avg,", "operations.csv header")
local _, lines = csv:gsub("\n", "")
t.eq(lines, 5, "a header and one row per kind of the mixed phase")
t.match(csv, "\n1,mixed,[^,]*,read," .. by_op.read.ops .. ",", "the read row with its count")
local text = table.concat(printed)
t.match(text, "\n    read +" .. by_op.read.ops .. " ops", "the console's read line")
t.match(text, "\n    remove +" .. by_op.remove.ops .. " ops", "and its remove line")
t.eq(#results.operations_rows(document.phases), 4, "operations_rows of the document")
sys.remove_tree(base)
t.done()
