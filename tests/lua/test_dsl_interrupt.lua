-- SIGINT in the middle of a scenario's phase, without a cluster: the test sends SIGINT to
-- its own process from the phase's per-second callback. The phase stops and its partial
-- result is recorded as interrupted, no later phase runs, the Ceph config option the run
-- changed is restored (a monitor stand-in keeps the config database), the results folder
-- is written and marked incomplete, and the error carries exit code 130. This file must
-- stay on its own: after SIGINT, every later bench in the process refuses to start.
local cm = require "cephmark"
local null = require "cephmark.null"
local sys = require "cephmark.sys"
local json = require "cephmark.json"
local t = require "cephmark.test"

local db = { ["osd/debug_osd"] = "3/3" }
local cluster = {}
function cluster.mon_command(_, cmd)
  local name = cmd.key or cmd.name
  if cmd.prefix == "config get" then return (db[cmd.who .. "/" .. name] or "1/5") .. "\n", "" end
  if cmd.prefix == "config set" then db[cmd.who .. "/" .. name] = cmd.value; return nil, "" end
  if cmd.prefix == "config rm" then db[cmd.who .. "/" .. name] = nil; return nil, "" end
  if cmd.prefix == "config dump" then
    local dump = {}
    for key, value in pairs(db) do
      local section, option = key:match("^(.-)/(.*)$")
      dump[#dump + 1] = { section = section, name = option, value = value, mask = "" }
    end
    return dump, ""
  end
  return nil, "unsupported", -22
end

local out = os.tmpname()
os.remove(out)
local reached = {}
local scenario = cm.scenario {
  name = "interrupt-test",
  run = function(s)
    s:set_config("osd", "debug_osd", "0/0")
    s:set_config("osd", "debug_ms", "0/0")
    s:phase("write", null, { threads = 2, ops = 100, delay = "1ms" })
    reached.long = true
    s:phase("long", null, { threads = 4, seconds = 60, delay = "1ms", on_second = function(second)
      if second.sec == 1 then assert(sys.kill(sys.getpid(), "INT")) end
    end })
    reached.after = true
    s:phase("never", null, { threads = 1, ops = 10 })
  end,
}
local saved, printed = io.stdout, {}
io.stdout = { write = function(self, ...) for _, v in ipairs { ... } do printed[#printed + 1] = v end return self end,
  flush = function() end }
local started = sys.monotonic()
local ok, err = pcall(scenario.run, scenario, { output = out, cluster = cluster })
io.stdout = saved
local elapsed = sys.monotonic() - started

t.eq(ok, false, "the run ends with an error")
local message, code = sys.error_info(err)
t.eq(message, "interrupted", "the interrupted error")
t.eq(code, 130, "exit code 130")
t.ok(elapsed < 10, "the 60 s phase stopped at once (took " .. elapsed .. " s)")
t.eq(reached.long, true, "the long phase started")
t.eq(reached.after, nil, "nothing after the interrupted phase ran")
t.eq(db["osd/debug_osd"], "3/3", "the explicit setting is back")
t.eq(db["osd/debug_ms"], nil, "the option without a setting has none again")

local document = json.decode(sys.read_file(out .. "/results.json"))
t.eq(document.complete, false, "results marked incomplete")
t.eq(document.status, "interrupted", "status interrupted")
t.eq(#document.phases, 2, "the finished phase and the interrupted one")
t.eq(document.phases[1].status, "ok", "the first phase finished")
t.eq(document.phases[2].status, "interrupted", "the second was interrupted")
t.eq(document.phases[2].result.interrupted, true, "its partial result says so")
t.ok(document.phases[2].result.ops > 0, "and keeps what it measured")
t.eq(document.config[1].restored, true, "config recorded as restored")
t.match(table.concat(printed), "\nresults: " .. out:gsub("%p", "%%%0") .. "\n", "the folder is printed")
sys.remove_tree(out)
return t.done()
