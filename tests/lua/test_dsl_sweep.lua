-- Sweeps without a cluster: the cartesian product and zip, their order and labels, typing
-- of dimensions by the scenario's params, config dimensions, the messages for empty and
-- mismatched sweeps (with the file and line), and s:sweep running phases per point with
-- each result kept with its coordinates.
local cm = require "cephmark"
local null = require "cephmark.null"
local sweep = require "cephmark.sweep"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local here = debug.getinfo(1, "S").source:sub(2)
local function line() return debug.getinfo(2, "l").currentline end
local message_of = t.message_of
local function labels(points)
  local out = {}
  for i, point in ipairs(points) do out[i] = point.label end
  return table.concat(out, " | ")
end

-- product: every combination, the first dimension (alphabetical by default) slowest
local product = cm.sweep { threads = { 1, 4, 16 }, block_size = { "4K", "64K" } }
local points = sweep.points(product)
t.eq(#points, 6, "3 x 2 points")
t.eq(labels(points), "block_size=4K threads=1 | block_size=4K threads=4 | block_size=4K threads=16 | " ..
  "block_size=64K threads=1 | block_size=64K threads=4 | block_size=64K threads=16", "product order")
t.eq(points[5].coordinates.threads, 4, "coordinates")
t.eq(points[5].coordinates.block_size, "64K", "untyped values stay as given")
local ordered = sweep.points(cm.sweep({ threads = { 1, 4 }, block_size = { "4K", "64K" } },
  { order = { "threads", "block_size" } }))
t.eq(labels(ordered), "threads=1 block_size=4K | threads=1 block_size=64K | threads=4 block_size=4K | threads=4 block_size=64K",
  "order= puts threads outermost")

-- zip: the i-th values together
local zipped = sweep.points(cm.zip { threads = { 1, 8, 64 }, block_size = { "4M", "1M", "4K" } })
t.eq(labels(zipped), "block_size=4M threads=1 | block_size=1M threads=8 | block_size=4K threads=64", "zip pairs values")
local named = sweep.points(cm.zip({ ["osd/debug_ms"] = { cm.DEFAULT, "0/0" } }, { labels = { "defaults", "quiet" } }))
t.eq(labels(named), "defaults | quiet", "labels name the points")
t.eq(named[1].config[1].who, "osd", "a WHO/OPTION dimension is a config option")
t.eq(named[1].config[1].name, "debug_ms", "its option")
t.eq(named[1].config[1].value, cm.DEFAULT, "cm.DEFAULT as a value")
t.eq(named[2].config[1].value, "0/0", "a value")
t.eq(named[1].labels["osd/debug_ms"], "default", "cm.DEFAULT shows as default")
t.eq(#sweep.points(cm.sweep { threads = 8 }), 1, "a single value is one point")

-- typed dimensions: parsed and shown by a param's type
local typed = sweep.points(product, function(name)
  if name == "block_size" then return cm.size() end
end)
t.eq(typed[4].coordinates.block_size, 65536, "a typed dimension is parsed")
t.eq(typed[4].labels.block_size, "64K", "and shown in its unit")

-- bad sweeps: file and line of the sweep
local l = line(); local empty = message_of(function() local s = cm.sweep { threads = {} }; return s end)
t.eq(empty, string.format("%s:%d: sweep: 'threads' has no values", here, l), "an empty dimension")
l = line(); local none = message_of(function() local s = cm.sweep {}; return s end)
t.eq(none, string.format("%s:%d: sweep: no dimensions; give at least one, e.g. cm.sweep { threads = {1, 4, 16} }", here, l),
  "no dimensions")
l = line(); local mismatch = message_of(function() local s = cm.zip { threads = { 1, 4 }, block_size = { "4K" } }; return s end)
t.eq(mismatch, string.format("%s:%d: zip: 'block_size' has 1 values but 'threads' has 2; zipped dimensions need as many values each", here, l),
  "zip lengths differ")
l = line(); local bad_order = message_of(function() local s = cm.sweep({ a = { 1 }, b = { 2 } }, { order = { "a" } }); return s end)
t.eq(bad_order, string.format("%s:%d: sweep: order must list every dimension once: a, b", here, l), "order misses one")
l = line(); local bad_labels = message_of(function() local s = cm.zip({ a = { 1, 2 } }, { labels = { "x" } }); return s end)
t.eq(bad_labels, string.format("%s:%d: zip: labels must name every point: 1 labels for 2 points", here, l), "labels count")
l = line(); local bad_option = message_of(function() local s = cm.sweep({ a = { 1 } }, { mode = "zip", bogus = 1 }); return s end)
t.eq(bad_option, string.format("%s:%d: zip: unknown option 'bogus' (options: mode, order, labels)", here, l), "unknown option")
l = line(); local default_param = cm.sweep { threads = { cm.DEFAULT } }
t.eq(message_of(function() sweep.points(default_param) end),
  string.format("%s:%d: sweep: 'threads': cm.DEFAULT only applies to Ceph config options (WHO/OPTION)", here, l),
  "cm.DEFAULT for a param")

-- s:sweep in a scenario on the null target: params type the dimensions (threads from the
-- list param threads, block_size from block_sizes), each point's phase carries its
-- coordinates, and the point table is the params with the point in place
local out = os.tmpname()
os.remove(out)
local visited, bad_line = {}, nil
local scenario = cm.scenario {
  name = "sweep-test",
  params = {
    threads = cm.list(cm.integer(), { 1, 2 }, "ops in flight"),
    block_sizes = cm.list(cm.size(), { "4K", "8K" }, "sizes"),
    ops = 50,
  },
  run = function(s, p)
    for point in s:sweep(cm.sweep { threads = p.threads, block_size = p.block_sizes }) do
      visited[#visited + 1] = { label = point.label, index = point.index, threads = point.threads,
        block_size = point.block_size, ops = point.ops }
      s:phase("write", null, { threads = point.threads, block_size = point.block_size, ops = point.ops })
    end
    -- the callback form, with a break-free early error: the point stack is emptied
    s:sweep(cm.zip { threads = { 3 } }, function(point)
      s:phase("write", null, { threads = point.threads, ops = 10 })
    end)
    s:phase("write", null, { ops = 10 })
    bad_line = line(); s:sweep(cm.sweep { threads = { "many" } }, function() end)
  end,
}
local saved = io.stdout
io.stdout = { write = function(self) return self end, flush = function() end }
local ok, err = pcall(scenario.run, scenario, { params = { block_sizes = "4K,16K" }, output = out })
io.stdout = saved
t.eq(ok, false, "a sweep value of the wrong type stops the run")
t.eq(tostring((sys.error_info(err))), string.format("%s:%d: sweep: 'threads' value 1: expected an integer, got 'many'", here, bad_line),
  "with the sweep's line")
t.eq(#visited, 4, "every point visited")
t.eq(visited[3].label, "block_size=16K threads=1", "block sizes typed by block_sizes: 16K")
t.eq(visited[3].block_size, 16384, "point.block_size in bytes")
t.eq(visited[4].threads, 2, "point.threads")
t.eq(visited[4].ops, 50, "other params are in the point too")
t.eq(visited[2].index, 2, "point.index")

local json = require "cephmark.json"
local document = json.decode(sys.read_file(out .. "/results.json"))
t.eq(#document.phases, 6, "six phases recorded")
t.eq(document.phases[3].variant.block_size, "16K", "a phase keeps its point's coordinates")
t.eq(document.phases[3].variant.threads, "1", "both of them")
t.eq(document.phases[3].point, "block_size=16K threads=1", "and the point's label")
t.eq(document.phases[3].result.block_size, 16384, "the phase ran with the point's block size")
t.eq(document.phases[4].result.threads, 2, "and its threads")
t.eq(document.phases[5].label, "threads=3", "the callback form's point")
t.eq(document.phases[6].label, "run", "after the sweeps, no point is left on the phases")
t.eq(document.phases[6].variant, nil, "no variant")
t.eq(#document.sweeps, 2, "each sweep that ran is described in results")
t.eq(document.sweeps[1].points[4].label, "block_size=16K threads=2", "with its points")
t.eq(document.complete, false, "the failed run is marked incomplete")
sys.remove_tree(out)

-- A dimension's values keep the type of the list param they come from, whatever that param
-- is called (p.sizes swept as block_size prints 512K, not 524288); s:compare's where reads a
-- value however it is written, and a where that matches nothing says so, with the values
-- there are. Free dimension names and a misspelt WHO need no monitor: the run is given a
-- cluster that fails the test if anything asks it.
local asked = {}
local untouchable = setmetatable({}, { __index = function(_, key)
  asked[#asked + 1] = key
  error("the cluster was asked for " .. tostring(key))
end })
local sized = {}
local sizes_scenario = cm.scenario {
  name = "sweep-sizes",
  params = { sizes = cm.list(cm.size(), { "512K", "4M" }, "sizes"), case = "where" },
  run = function(s, p)
    if p.case == "who" then
      sized.who_line = line(); for _ in s:sweep(cm.zip { ["osdd/debug_ms"] = { "0/0" } }) do end
    end
    for point in s:sweep(cm.sweep { block_size = p.sizes, host = { "a" } }) do
      sized[#sized + 1] = point.label
      s:phase("write", null, { ops = 5, block_size = point.block_size })
    end
    sized.text = s:compare { where = { block_size = "512K" } }
    sized.bytes = s:compare { where = { block_size = 524288 } }
    sized.iec = s:compare { where = { block_size = "4MiB" } }
    sized.none_line = line(); sized.none = message_of(function() s:compare { where = { block_size = "1M" } } end)
    sized.typo_line = line(); sized.typo = message_of(function() s:compare { where = { blocksize = "512K" } } end)
  end,
}
io.stdout = { write = function(self) return self end, flush = function() end }
ok, err = pcall(sizes_scenario.run, sizes_scenario, { output = out, cluster = untouchable })
io.stdout = saved
t.eq(ok, true, "the sized sweep ran: " .. tostring(err and (sys.error_info(err))))
t.eq(table.concat(sized, " | "), "block_size=512K host=a | block_size=4M host=a", "sizes from p.sizes print as sizes")
t.eq(sized.text and sized.text.rows[1].variant, "block_size=512K host=a", "where = {block_size = \"512K\"} finds its phase")
t.eq(sized.text and #sized.text.rows, 1, "and only that one")
t.eq(sized.bytes and sized.bytes.rows[1].variant, "block_size=512K host=a", "where in bytes finds the same phase")
t.eq(sized.iec and sized.iec.rows[1].variant, "block_size=4M host=a", "where = 4MiB finds the 4M phase")
t.eq(sized.none, string.format("%s:%d: compare: no phase matches where = {block_size = '1M'} (block_size: 512K, 4M)",
  here, sized.none_line), "a where that matches nothing names the values there are")
t.eq(sized.typo, string.format("%s:%d: compare: no phase matches where = {blocksize = '512K'} (no phase has a blocksize; dimensions: block_size, host, point, run)",
  here, sized.typo_line), "a misspelt dimension names the dimensions there are")
t.eq(table.concat(asked, ", "), "", "free dimension names need no monitor")
sys.remove_tree(out)

io.stdout = { write = function(self) return self end, flush = function() end }
ok, err = pcall(sizes_scenario.run, sizes_scenario, { output = out, cluster = untouchable, params = { case = "who" } })
io.stdout = saved
t.eq(ok, false, "a config dimension for no section is refused")
t.eq(tostring((sys.error_info(err))), string.format(
  "%s:%d: zip: 'osdd/debug_ms': 'osdd' is not a config section (global, mon, mgr, osd, mds, client, or one daemon such as osd.0) (did you mean 'osd/debug_ms'?)",
  here, sized.who_line), "at the sweep's line, with the section meant")
t.eq(table.concat(asked, ", "), "", "before the monitors are asked")
t.eq(sys.stat(out), nil, "refused before any phase: no results folder")
return t.done()
