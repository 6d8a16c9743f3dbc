-- s:phase's checks without a cluster: a misspelt option refused at the call (before the
-- phase's header or hooks) with "did you mean", a value the bench refuses reported as one
-- operator line at the phase's line naming the -p or --params value it came from, errors of
-- the script's own per-second code kept as script errors, phase names checked on the disk
-- and socket targets, s:workers' option names, and a custom phase's phase.options holding
-- only what a bench takes (its variant, label and report stay with the scenario); s:agents()
-- and coordinator = true without --agents.
local cm = require "cephmark"
local disk = require "cephmark.disk"
local null = require "cephmark.null"
local socket = require "cephmark.socket"
local json = require "cephmark.json"
local sys = require "cephmark.sys"
local t = require "cephmark.test"

local here = debug.getinfo(1, "S").source:sub(2)
local function line() return debug.getinfo(2, "l").currentline end
local capture = t.capture
local base = os.getenv("CEPHMARK_BUILD_DIR") or "."
local work = string.format("%s/test-phase-checks-%d", base, sys.getpid())
assert(sys.mkdir(work))
local runs = 0

-- runs a scenario; returns its stdout, the first line of its error, whether the error is
-- one line for the operator (a script's error carries its traceback), and the results
local function run(body, context, params)
  runs = runs + 1
  local scenario = cm.scenario { name = "checks", params = params or { depth = 4 }, run = body }
  context = context or {}
  context.output = string.format("%s/run%d", work, runs)
  local text, ok, err = capture(function() return scenario:run(context) end)
  local message, one_line
  if not ok then
    local whole = tostring((sys.error_info(err)))
    message = whole:match("^[^\n]*")
    one_line = whole == message
  end
  local document = sys.read_file(context.output .. "/results.json")
  return text, message, one_line, document and json.decode(document)
end

-- a misspelt option: at the caller's line, with the nearest name and every name taken,
-- before the phase's header and hooks
local l
local text, message, operator = run(function(s)
  l = line(); s:phase("write", null, { thread = 32, seconds = 1 })
end)
t.eq(message, string.format("%s:%d: s:phase('write'): unknown option 'thread' (did you mean 'threads'?); a null phase takes access, arrivals, arrivals_seed, block_size, bytes, delay, delay_max, drain_timeout, ignore_interrupt, label, mix, objects, on_second, ops, rate, report, second_histograms, seconds, seed, start_at, think, threads, variant, warmup, work",
  here, l), "an unknown option, at the phase's line")
t.eq(operator, true, "one line, no traceback")
t.eq(text:find("[1]", 1, true), nil, "refused before the phase's header")
_, message = run(function(s)
  l = line(); s:phase("write", null, { 32, seconds = 1 })
end)
t.eq(message, string.format("%s:%d: s:phase('write'): options are name = value pairs, got a value at [1]", here, l),
  "a value without a name")

-- a value the bench refuses: one line at the phase's line, and the phase recorded as an error
local document
_, message, operator, document = run(function(s)
  l = line(); s:phase("write", null, { threads = 0, seconds = 1 })
end)
t.eq(message, string.format("%s:%d: s:phase('write'): null.bench: threads must be between 1 and 65536, got 0", here, l),
  "a refused value, at the phase's line")
t.eq(operator, true, "a refused value is the operator's input: no traceback")
t.eq(document and document.status, "error", "the run ends as an error")
t.eq(document and document.phases[1] and document.phases[1].status, "error", "the phase is recorded as an error")
_, message = run(function(s)
  l = line(); s:phase("write", null, { seconds = "4X" })
end)
t.eq(message, string.format("%s:%d: s:phase('write'): null.bench: seconds: duration '4X' has an unknown unit 'X' (use s, ms, m or h)",
  here, l), "a bad duration")

-- ... naming the -p that set it, also under another name, and the --params file
local function from_param(s, p)
  l = line(); s:phase("write", null, { threads = p.depth, seconds = 1 })
end
_, message = run(from_param, { params = { depth = "0" } })
t.eq(message, string.format("%s:%d: s:phase('write'): null.bench: threads must be between 1 and 65536, got 0 (from -p depth=0)",
  here, l), "the -p that set the refused value")
local params_file = work .. "/params.yaml"
assert(sys.write_file(params_file, "depth: 100000\n"))
_, message = run(from_param, { params_file = params_file })
t.eq(message, string.format("%s:%d: s:phase('write'): null.bench: threads must be between 1 and 65536, got 100000 (from depth in %s)",
  here, l, params_file), "the --params file that set it")
_, message = run(function(s, p)
  l = line(); s:phase("write", null, { threads = p.depths[2], seconds = 1 })
end, { params = { depths = "4,0" } }, { depths = cm.list(cm.integer(), { 1, 2 }, "depths") })
t.eq(message, string.format("%s:%d: s:phase('write'): null.bench: threads must be between 1 and 65536, got 0 (from -p depths=4,0)",
  here, l), "an element of a list set by -p")

-- an error of the script's own code inside the bench stays a script error (with its
-- traceback), and the bench's result of a phase stopped by on_second is kept
local on_second_line
_, message, operator = run(function(s)
  s:phase("write", null, { threads = 2, seconds = 3, delay = "1ms", on_second = function()
    on_second_line = line(); error("boom")
  end })
end)
t.eq(message, string.format("%s:%d: boom", here, on_second_line), "an on_second error is the script's")
t.eq(operator, false, "and keeps its traceback")
local hook_scenario = cm.scenario { name = "hooked", hooks = { on_second = function() error("hook boom", 0) end },
  run = function(s) s:phase("write", null, { threads = 2, seconds = 3, delay = "1ms" }) end }
local _, ok_hook, err_hook = capture(function() return hook_scenario:run { output = work .. "/hooked" } end)
t.eq(ok_hook, false, "a hook that raises ends the run")
t.match(tostring((sys.error_info(err_hook))), "^hook boom\nstack traceback:\n", "with the hook's error, as a script error")
local stopped
text, message = run(function(s)
  stopped = s:phase("write", null, { threads = 2, seconds = 30, delay = "1ms", on_second = function() return false end })
end)
t.eq(message, nil, "on_second returning false stops the phase without an error")
t.ok(stopped and stopped.elapsed < 10, "the phase stopped at its first second")

-- a custom phase gets only the options meant for its bench: forwarding phase.options to a
-- bench works with a variant, a label and a report given to the phase
local forwarded, record
_, message, _, document = run(function(s)
  local result = s:phase("mixed", function(phase)
    forwarded = phase.options
    local options = {}
    for key, value in pairs(phase.options) do options[key] = value end
    options.on_second = phase.on_second
    return null.bench(options)
  end, { threads = 2, ops = 20, delay = "1ms", variant = { image = "replica" }, report = "none" })
  record = result
end)
t.eq(message, nil, "phase.options forwarded to a bench: no unknown option 'variant'")
t.eq(record and record.ops, 20, "the bench ran")
t.eq(forwarded and forwarded.variant, nil, "variant is the scenario's, not in phase.options")
t.eq(forwarded and forwarded.report, nil, "report neither")
t.eq(forwarded and forwarded.threads, 2, "the bench's options are")
t.eq(document and document.phases[1].variant.image, "replica", "the variant still applies")

-- phase names on the disk and socket targets: fio's rw words, send/recv/rr, or options
-- that say what the phase does; anything else is refused at the call
_, message = run(function(s)
  l = line(); s:phase("raed", disk, { path = work .. "/never-made", block_size = "4K", ops = 1 })
end)
t.eq(message, string.format("%s:%d: s:phase('raed', disk): a disk phase is read, write, randread or randwrite (fio's rw=), or says which with io_type = \"write\" (and pattern = \"rand\") (did you mean 'read'?)",
  here, l), "a misspelt disk phase name")
t.eq(sys.stat(work .. "/never-made"), nil, "nothing was made")
_, message = run(function(s)
  l = line(); s:phase("sned", socket, { host = "127.0.0.1", port = 1, seconds = 1 })
end)
t.eq(message, string.format("%s:%d: s:phase('sned', socket): a socket phase is send, recv or rr, or says which with mode = \"rr\" or direction = \"recv\" (did you mean 'send'?)",
  here, l), "a misspelt socket phase name")
_, message = run(function(s)
  l = line(); s:phase("write", disk, { path = work .. "/f", blocksize = "4K", ops = 1 })
end)
t.match(message, string.format("^%s:%d: s:phase%%('write'%%): unknown option 'blocksize' %%(did you mean 'block_size'%%?%%); a disk phase takes access, allow_block_device, arrivals, arrivals_seed, block_size, ",
  here:gsub("%p", "%%%0"), l), "a misspelt disk option")
local file = work .. "/data"
local written, random
_, message, _, document = run(function(s)
  written = s:phase("write", disk, { path = file, block_size = "4K", ops = 64, direct = false })
  random = s:phase("randread", disk, { path = file, block_size = "4K", ops = 64, direct = false })
  s:phase("disk-read", disk, { path = file, io_type = "read", block_size = "4K", ops = 8, direct = false })
end)
t.eq(message, nil, "disk phases named by fio's words")
t.eq(written and written.io_type, "write", "write writes")
t.eq(written and written.pattern, "seq", "in sequence")
t.eq(random and random.io_type, "read", "randread reads")
t.eq(random and random.pattern, "rand", "at random")
t.eq(document and document.phases[3].result.io_type, "read", "another name says what it does with io_type")

-- s:workers checks its option names the same way
_, message = run(function(s)
  l = line(); s:workers { n = 2, ops = 10, fn = function(w) while true do w:op() end end, thread = 2 }
end)
t.match(message, string.format("^%s:%d: s:workers: unknown option 'thread' %%(did you mean 'threads'%%?%%); s:workers takes ",
  here:gsub("%p", "%%%0"), l), "a misspelt s:workers option")

-- setup runs once before the workers; what it returns is every worker's w.shared, and w.agent
-- is nil without --agents
local setups, seen_shared, seen_agent = 0, {}, {}
local setup_result
_, message = run(function(s)
  setup_result = s:workers { n = 3, ops = 30, setup = function(agent)
    setups = setups + 1
    return { n = agent.n, index = agent.index, agents = agent.agents }
  end, fn = function(w)
    seen_shared[w.id], seen_agent[w.id] = w.shared, w.agent
    while true do w:op() end
  end }
end)
t.eq(message, nil, "s:workers with setup runs")
t.eq(setups, 1, "setup ran once")
t.eq(setup_result and setup_result.ops, 30, "the phase ran its ops")
t.ok(seen_shared[1] and seen_shared[1] == seen_shared[3], "every worker got setup's value")
t.eq(seen_shared[1] and seen_shared[1].n, 3, "setup saw n")
t.eq(seen_shared[1] and string.format("%s/%s", seen_shared[1].index, seen_shared[1].agents), "1/1",
  "one agent's worth: index 1 of 1")
t.eq(next(seen_agent), nil, "w.agent is nil without --agents")
_, message = run(function(s)
  l = line(); s:workers { n = 1, ops = 1, setup = 5, fn = function(w) w:op() end }
end)
t.match(message, string.format("^%s:%d: s:workers: setup must be a function%%(agent%%) run once before the workers, got 5$",
  here:gsub("%p", "%%%0"), l), "a setup that is not a function")

-- what is refused at the call leaves no phase behind it: the run stops there
_, message, _, document = run(function(s)
  s:phase("first", null, { threads = 1, ops = 5 })
  s:phase("second", null, { treads = 1, ops = 5 })
  s:phase("third", null, { threads = 1, ops = 5 })
end)
t.ok(message and message:find("unknown option 'treads'", 1, true) ~= nil, "the second phase is refused")
t.eq(document and #document.phases, 1, "only the first phase ran")

-- without --agents: s:agents() is nil, and a custom phase with coordinator = true runs as
-- any custom phase does, its function given no `coordinator` in phase.options
local seen_agents, seen_options = false, nil
_, message, _, document = run(function(s)
  seen_agents = s:agents()
  s:phase("sum", function(phase)
    seen_options = phase.options
    return { total = 3 }
  end, { coordinator = true, extra = 1 })
end)
t.eq(message, nil, "coordinator = true runs without --agents")
t.eq(seen_agents, nil, "s:agents() without --agents")
t.eq(seen_options.coordinator, nil, "coordinator stays with the scenario")
t.eq(seen_options.extra, 1, "the other options reach the function")
t.eq(document.phases[1].value.total, 3, "its value recorded")

sys.remove_tree(work)
return t.done()
