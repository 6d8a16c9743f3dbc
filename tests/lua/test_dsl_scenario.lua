-- cm.scenario without a cluster: definition checks with the file and line (also for the
-- usual tail call `return cm.scenario {...}`), pool specs, hooks in order, native phases
-- on the null target, custom phases (recorded like native ones when they return a bench
-- result), variants, scripted workers, and the help listing of pools.
local cm = require "cephmark"
local null = require "cephmark.null"
local sys = require "cephmark.sys"
local json = require "cephmark.json"
local t = require "cephmark.test"

local here = debug.getinfo(1, "S").source:sub(2)
local function line() return debug.getinfo(2, "l").currentline end
local function message_of(fn)
  local ok, err = pcall(fn)
  if ok then return nil end
  return tostring((sys.error_info(err)))
end
local function capture(fn)
  local saved, chunks = io.stdout, {}
  io.stdout = { write = function(self, ...) for _, s in ipairs { ... } do chunks[#chunks + 1] = s end return self end,
    flush = function() end }
  local ok, err = pcall(fn)
  io.stdout = saved
  return table.concat(chunks), ok, err
end
local out = os.tmpname()
os.remove(out)

-- definition errors, at the line of cm.scenario; `return cm.scenario {` is a tail call, so
-- its line is found from the definition itself
local function tail_called()
  return cm.scenario {
    name = "tail",
    pools = { ec = { type = "erasure", k = 2 } },
    run = function() end,
  }
end
local tail_line = line() - 6
t.eq(message_of(tail_called), string.format("%s:%d: pool 'ec': an erasure-coded pool needs k and m; m is missing", here, tail_line),
  "a pool missing m, located through a tail call")
local l = line(); local missing_run = message_of(function() local s = cm.scenario { name = "x" }; return s end)
t.eq(missing_run, string.format("%s:%d: scenario 'x' needs run = function(s, p) ... end, got nothing", here, l), "no run function")
l = line(); local unknown = message_of(function() local s = cm.scenario { name = "x", run = print, phases = {} }; return s end)
t.eq(unknown, string.format("%s:%d: cm.scenario: unknown field 'phases' (fields: description, hooks, name, order, params, pools, prometheus, quiesce, repeats, run, telemetry, wait_clean)", here, l),
  "an unknown field")
l = line(); local bad_name = message_of(function() local s = cm.scenario { name = "two words", run = print }; return s end)
t.eq(bad_name, string.format("%s:%d: cm.scenario: name must be a word of letters, digits, '.', '_' or '-' (it names pools and the results folder), got 'two words'", here, l),
  "a name that cannot name a folder")
l = line(); local both = message_of(function() local s = cm.scenario { name = "x", run = print, pools = { ec = { type = "erasure" } } }; return s end)
t.eq(both, string.format("%s:%d: pool 'ec': an erasure-coded pool needs k and m; k and m are missing", here, l), "k and m missing")
l = line(); local km = message_of(function() local s = cm.scenario { name = "x", run = print, pools = { r = { size = 3, k = 2 } } }; return s end)
t.eq(km, string.format("%s:%d: pool 'r': k and m are for erasure-coded pools (type = \"erasure\")", here, l), "k on a replicated pool")
l = line(); local kind = message_of(function() local s = cm.scenario { name = "x", run = print, pools = { r = { type = "ec" } } }; return s end)
t.eq(kind, string.format("%s:%d: pool 'r': type must be \"replicated\" or \"erasure\", got 'ec'", here, l), "a bad pool type")
l = line(); local field = message_of(function() local s = cm.scenario { name = "x", run = print, pools = { r = { sise = 3 } } }; return s end)
t.eq(field, string.format("%s:%d: pool 'r': unknown field 'sise' (fields: application, crush_failure_domain, ec_overwrites, k, keep, label, m, min_size, name, pg_num, reuse, size, type)", here, l),
  "a misspelt pool field")
l = line(); local hook = message_of(function() local s = cm.scenario { name = "x", run = print, hooks = { before_phases = print } }; return s end)
t.eq(hook, string.format("%s:%d: unknown hook 'before_phases' (hooks: after_phase, after_run, before_phase, before_run, on_second)", here, l),
  "an unknown hook")

-- pools given as a function of the params are checked with the params' values, at the
-- function's line
local pools_line
local ec_scenario = cm.scenario {
  name = "ec-knobs",
  params = { k = 2, m = 1 },
  pools = function(p)
    pools_line = pools_line or debug.getinfo(1, "S").linedefined
    return { ec = { type = "erasure", k = p.k, m = p.m >= 1 and p.m or nil } }
  end,
  run = function() end,
}
local help = capture(function() ec_scenario:run { help = true } end)
t.match(help, "\npools %(with the default params%):\n  ec  erasure k=2 m=1  %(cephmark%-ec%-knobs%-ec%)\n", "help lists the pools")
local _, ok_m0, err_m0 = capture(function() ec_scenario:run { params = { m = "0" }, output = out } end)
t.eq(ok_m0, false, "m=0 leaves m out")
t.eq(tostring((sys.error_info(err_m0))), string.format("%s:%d: pool 'ec': an erasure-coded pool needs k and m; m is missing", here, pools_line),
  "the pools function's line")
t.eq(sys.stat(out), nil, "a run refused before it starts leaves no results folder")

-- hooks, in order; native and custom phases; variants; workers
local events = {}
local function log(event) events[#events + 1] = event end
local scenario = cm.scenario {
  name = "machinery",
  params = { ops = 40 },
  hooks = {
    [cm.BEFORE_RUN] = function(s, p) log("before_run " .. p.ops) end,
    [cm.BEFORE_PHASE] = function(s, phase) log("before_phase " .. phase.index .. " " .. phase.name) end,
    [cm.ON_SECOND] = function(s, phase, second) if not second.partial then log("second " .. phase.index) end end,
    [cm.AFTER_PHASE] = function(s, phase) log("after_phase " .. phase.index .. " " .. phase.status) end,
    [cm.AFTER_RUN] = function() log("after_run") end,
  },
  run = function(s, p)
    s:phase("write", null, { threads = 4, ops = p.ops, delay = "1ms" })
    s:phase("prefill", function(phase)
      return null.bench { threads = 2, seconds = 1.2, delay = "1ms", on_second = phase.on_second }
    end)
    s:phase("prepare", function() return { objects = 3, note = "plain value" } end)
    s:variant("slow", function()
      s:phase("write", null, { threads = 2, ops = 50, delay = "2ms" })
    end)
    s:phase("write", null, { threads = 1, ops = 10, variant = { depth = 1 } })
    s:workers { name = "scripted", n = 3, ops = 90, fn = function(w) while true do w:op(512) end end }
  end,
}
local text, ok, err = capture(function() return scenario:run { output = out } end)
t.eq(ok, true, "the scenario ran: " .. tostring(err))
-- where an event happened first (how many seconds a phase sees depends on the machine)
local function position(event)
  for i, e in ipairs(events) do
    if e == event then return i end
  end
  return math.huge
end
t.eq(events[1], "before_run 40", "before_run first, with the params")
t.eq(events[2], "before_phase 1 write", "before_phase")
t.ok(position("after_phase 1 ok") < position("before_phase 2 prefill"), "after_phase before the next phase")
t.ok(position("before_phase 2 prefill") < position("second 2"), "the custom phase's hooks")
t.ok(position("second 2") < position("after_phase 2 ok"), "on_second in a custom phase that passes phase.on_second")
t.eq(events[#events], "after_run", "after_run last")
t.match(text, "\n%[2%] prefill\n", "a header per phase")
t.match(text, "\n     1s +[%d.]+ MiB/s +%d+ IOPS  p99 [%d.]+ ms +avg [%d.]+ ms\n", "a line per second")
t.match(text, "\n  = prefill: %d+ ops in %d+%.%d%d s, [%d.]+ MiB/s, %d+ IOPS, lat avg [%d.]+ ms p50 [%d.]+ ms p99 [%d.]+ ms max [%d.]+ ms, 0 errors\n",
  "a summary line per phase")
t.match(text, "\n  = prepare: done in %d%.%d%d s\n", "a custom phase without a bench result")
local document = json.decode(sys.read_file(out .. "/results.json"))
local phases = document.phases
t.eq(#phases, 6, "six phases")
t.eq(phases[2].name, "prefill", "the custom phase")
t.eq(phases[2].result.op, "null", "its bench result recorded like a native phase's")
t.ok(#phases[2].series >= 2, "with its series")
t.eq(phases[3].value.objects, 3, "a custom phase's plain value is kept")
t.eq(phases[3].result, nil, "and it has no bench result")
t.eq(phases[4].label, "slow", "s:variant labels phases")
t.eq(phases[4].variant.variant, "slow", "as the variant dimension")
t.eq(phases[5].variant.depth, "1", "a variant given as dimensions")
t.eq(phases[5].label, "depth=1", "labelled by them")
t.eq(phases[6].name, "scripted", "scripted workers as a phase")
t.eq(phases[6].op, "workers", "op workers")
t.eq(phases[6].result.ops, 90, "with the workers' result")
t.eq(phases[6].result.bytes, 90 * 512, "bytes of w:op(512)")
t.eq(phases[1].options.delay, "1ms", "a phase's options are recorded")

-- s:workers without the module: a clear message at the caller's line
local saved_loaded, saved_preload = package.loaded["cephmark.workers"], package.preload["cephmark.workers"]
package.loaded["cephmark.workers"], package.preload["cephmark.workers"] = nil, nil
local workers_line
local no_workers = cm.scenario { name = "no-workers", run = function(s)
  workers_line = line(); s:workers { n = 1, fn = print }
end }
local _, ok_w, err_w = capture(function() no_workers:run { output = out .. "-w" } end)
package.loaded["cephmark.workers"], package.preload["cephmark.workers"] = saved_loaded, saved_preload
t.eq(ok_w, false, "no workers module")
t.eq(tostring((sys.error_info(err_w))), string.format("%s:%d: s:workers needs scripted workers (the cephmark.workers module), which this cephmark does not have",
  here, workers_line), "says so")

-- misuse of s:phase
local misuse_line
local misuse = cm.scenario { name = "misuse", run = function(s)
  misuse_line = line(); s:phase("write", "a pool name")
end }
local _, ok_p, err_p = capture(function() misuse:run { output = out .. "-m" } end)
t.eq(ok_p, false, "a string is no pool")
t.eq(tostring((sys.error_info(err_p))), string.format("%s:%d: s:phase('write'): the second argument is what the phase runs on (a pool from s:pool(label), an rbd image, a Swift or S3 connection, require \"cephmark.disk\" or \"cephmark.socket\") or a function, got 'a pool name'",
  here, misuse_line), "the message says what a phase takes")

sys.remove_tree(out)
sys.remove_tree(out .. "-w")
sys.remove_tree(out .. "-m")
return t.done()
