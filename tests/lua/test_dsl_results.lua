-- A scenario's results folder and its endings without a cluster: every file written (and
-- only those: writes are atomic renames), JSON and YAML that parse, CSV rows per phase and
-- per second, failed ops counted for exit code 1, a run that fails midway marked
-- incomplete with its error, and Ceph config options restored on every path -- set back
-- when they had an explicit setting, removed when they had none -- against a monitor
-- stand-in that keeps a config database the way `ceph config` does.
local cm = require "cephmark"
local null = require "cephmark.null"
local results = require "cephmark.results"
local sys = require "cephmark.sys"
local json = require "cephmark.json"
local yaml = require "cephmark.yaml"
local t = require "cephmark.test"

local function quietly(fn)
  local saved = io.stdout
  io.stdout = { write = function(self) return self end, flush = function() end }
  local ok, err = pcall(fn)
  io.stdout = saved
  return ok, err
end

-- The monitor's config commands as the scenario uses them: config get/set/rm/dump, with
-- sections, a global fallback and daemon defaults.
local function fake_cluster(initial)
  local defaults = { debug_ms = "0/0", debug_osd = "1/5", osd_op_queue = "wpq" }
  local db = {}
  for k, v in pairs(initial or {}) do db[k] = v end
  local commands = {}
  local cluster = {}
  function cluster.mon_command(_, cmd)
    commands[#commands + 1] = cmd.prefix
    local name = cmd.key or cmd.name
    if cmd.prefix ~= "config dump" and name and not defaults[name] then
      return nil, string.format("unrecognized config option '%s'", name), -22
    end
    if cmd.prefix == "config get" then
      return (db[cmd.who .. "/" .. name] or db["global/" .. name] or defaults[name]) .. "\n", ""
    elseif cmd.prefix == "config set" then
      db[cmd.who .. "/" .. name] = cmd.value
      return nil, ""
    elseif cmd.prefix == "config rm" then
      db[cmd.who .. "/" .. name] = nil
      return nil, ""
    elseif cmd.prefix == "config dump" then
      local dump = {}
      for key, value in pairs(db) do
        local section, option = key:match("^(.-)/(.*)$")
        dump[#dump + 1] = { section = section, name = option, value = value, mask = "", level = "advanced" }
      end
      return dump, ""
    end
    return nil, "unsupported command " .. cmd.prefix, -22
  end
  function cluster.fsid() return "00000000-fake-fsid" end
  function cluster.osd_count() return 3, 3 end
  return cluster, db, commands
end

local base = os.tmpname()
os.remove(base)
assert(sys.mkdir(base))

-- a complete run: every file, parsable, with what ran
local cluster, db = fake_cluster { ["osd/debug_osd"] = "2/5" }
local scenario = cm.scenario {
  name = "results-test",
  params = { seconds = cm.duration("1100ms", "phase length"), threads = 4 },
  run = function(s, p)
    s:set_config("osd", "debug_osd", "0/0")
    s:set_config("osd", "debug_ms", "0/5")
    s:phase("write", null, { threads = p.threads, seconds = p.seconds, delay = "1ms", block_size = "4K" })
    s:phase("read", null, { threads = 2, ops = 100, delay = "1ms" })
    s:compare { metrics = { "iops" } }
  end,
}
local dir = base .. "/complete"
local ok, run = quietly(function() return scenario:run { output = dir, cluster = cluster, params = { threads = "8" } } end)
t.eq(ok, true, "the run completed: " .. tostring(run))
local files = sys.list_dir(dir)
table.sort(files)
t.eq(table.concat(files, " "), "comparison.csv params.csv params.yaml percentiles.csv phases.csv pools.csv report.html results.json results.yaml series.csv",
  "exactly the results files, no temporary ones")
local document = json.decode(sys.read_file(dir .. "/results.json"))
t.eq(document.complete, true, "complete")
t.eq(document.status, "ok", "status ok")
t.eq(document.scenario.name, "results-test", "the scenario's name")
t.eq(document.params.threads, 8, "the params used")
t.eq(document.params_source.threads, "-p", "and where they came from")
t.eq(document.params_text.seconds, "1100ms", "params as text")
t.eq(document.cluster.fsid, "00000000-fake-fsid", "cluster facts")
t.eq(document.cluster.osds_up, 3, "OSD count")
t.eq(#document.phases, 2, "two phases")
t.eq(document.phases[1].result.threads, 8, "the phase's summary")
t.ok(#document.phases[1].series >= 2, "and its per-second series")
t.eq(#document.comparisons, 1, "the comparison")
t.ok(document.finished_at ~= nil, "finished_at on a finished run")
local from_yaml = yaml.decode(sys.read_file(dir .. "/results.yaml"))
t.eq(#from_yaml.phases, 2, "results.yaml has the same phases")
t.eq(from_yaml.phases[1].result.ops, document.phases[1].result.ops, "and the same numbers")
local phases_csv = sys.read_file(dir .. "/phases.csv")
local _, phase_lines = phases_csv:gsub("\n", "")
t.eq(phase_lines, 3, "phases.csv: a header and one row per phase")
t.match(phases_csv, "^index,name,op,label,status,pool,point,started_at,elapsed,", "phases.csv columns")
local series_csv = sys.read_file(dir .. "/series.csv")
local _, series_lines = series_csv:gsub("\n", "")
t.eq(series_lines, 1 + #document.phases[1].series + #document.phases[2].series, "series.csv: one row per second per phase")
t.match(series_csv, "\n1,write,run,1,", "series rows name their phase")
-- config: both options back as they were, in the config database too
t.eq(db["osd/debug_osd"], "2/5", "an explicit setting is set back")
t.eq(db["osd/debug_ms"], nil, "an option that had no setting has it removed")
t.eq(document.config[1].name, "debug_osd", "config changes are recorded")
t.eq(document.config[1].explicit, true, "with whether they were set explicitly")
t.eq(document.config[1].restored, true, "and restored")
t.eq(document.config[2].values[1].set, "0/5", "and what they were set to")

-- failed ops: the run completes, counts them (exit code 1 in cephmark run)
local failing = cm.scenario {
  name = "failing-ops",
  run = function(s)
    s:phase("write", function()
      local r = null.bench { threads = 1, ops = 10 }
      r.errors, r.verify_failures = 3, 1
      return r
    end)
  end,
}
ok, run = quietly(function() return failing:run { output = base .. "/failed" } end)
t.eq(ok, true, "a run with failed ops still completes")
t.eq(run.failed_ops, 4, "errors and verify failures counted")
t.eq(run.status, "failed_ops", "status failed_ops")
document = json.decode(sys.read_file(base .. "/failed/results.json"))
t.eq(document.phases[1].status, "failed", "the phase is marked failed")
t.eq(document.complete, true, "complete all the same")

-- an error midway: config restored, results written, marked incomplete, error re-raised
cluster, db = fake_cluster()
local error_line
local broken = cm.scenario {
  name = "broken",
  run = function(s)
    s:set_config("osd", "debug_osd", "0/0")
    s:phase("write", null, { threads = 2, ops = 20 })
    error_line = debug.getinfo(1, "l").currentline + 1
    local x = nil; return x.field
  end,
}
local err
ok, err = quietly(function() return broken:run { output = base .. "/broken", cluster = cluster } end)
t.eq(ok, false, "the error is raised after the finally path")
local message, code = sys.error_info(err)
t.eq(code, 2, "exit code 2")
t.match(message, "test_dsl_results.lua:" .. error_line .. ": attempt to index a nil value", "the script's own error, with its line")
t.match(message, "\nstack traceback:\n", "and a traceback")
t.eq(db["osd/debug_osd"], nil, "config restored after the error")
document = json.decode(sys.read_file(base .. "/broken/results.json"))
t.eq(document.complete, false, "marked incomplete")
t.eq(document.status, "error", "status error")
t.match(document.error, "attempt to index a nil value", "the error is recorded")
t.eq(#document.phases, 1, "the phase that finished is kept")

-- an error inside a phase: that phase is recorded with its error
ok, err = quietly(function()
  return cm.scenario { name = "bad-phase", run = function(s)
    s:phase("write", null, { threads = 0 })
  end }:run { output = base .. "/bad-phase" }
end)
t.eq(ok, false, "a bench misuse fails the run")
document = json.decode(sys.read_file(base .. "/bad-phase/results.json"))
t.eq(document.phases[1].status, "error", "the failing phase is recorded")
t.match(document.phases[1].error, "threads must be between 1 and 65536, got 0", "with the engine's message")

-- setting an option the cluster does not know fails with its name
cluster, db = fake_cluster()
ok, err = quietly(function()
  return cm.scenario { name = "bad-option", run = function(s)
    s:set_config("osd", "debug_osd", "0/0")
    s:set_config("osd", "no_such_option", "1")
  end }:run { output = base .. "/bad-option", cluster = cluster }
end)
t.eq(tostring((sys.error_info(err))), "config osd/no_such_option: unrecognized config option 'no_such_option'", "an unknown option")
t.eq(db["osd/debug_osd"], nil, "what was set before is restored")

-- a config sweep: each point sets its options, the end of the loop restores them, also
-- when the loop is left with break
cluster, db = fake_cluster { ["global/debug_ms"] = "1/1" }
local seen = {}
ok, err = quietly(function()
  return cm.scenario { name = "config-sweep", run = function(s)
    for point in s:sweep(cm.zip({ ["osd/debug_ms"] = { cm.DEFAULT, "0/0", "5/5" } }, { labels = { "default", "quiet", "loud" } })) do
      seen[#seen + 1] = point.label .. "=" .. s:get_config("osd", "debug_ms")
      if point.index == 2 then
        seen[#seen + 1] = "db=" .. tostring(db["osd/debug_ms"])
        break
      end
    end
    seen[#seen + 1] = "after=" .. tostring(db["osd/debug_ms"])
    s:with_config({ ["osd/osd_op_queue"] = "mclock_scheduler" }, function()
      seen[#seen + 1] = "with=" .. s:get_config("osd", "osd_op_queue")
    end)
    seen[#seen + 1] = "without=" .. s:get_config("osd", "osd_op_queue")
  end }:run { output = base .. "/config-sweep", cluster = cluster }
end)
t.eq(ok, true, "the config sweep ran: " .. tostring(err))
t.eq(table.concat(seen, " "), "default=1/1 quiet=0/0 db=0/0 after=nil with=mclock_scheduler without=wpq",
  "cm.DEFAULT falls back to the global value; break restores; with_config restores")

-- folder names: results/<scenario>-<UTC timestamp>, never reusing one
local first = results.default_dir("name", base .. "/runs")
t.match(first, "/runs/name%-%d%d%d%d%d%d%d%dT%d%d%d%d%d%dZ$", "default folder name")
assert(sys.mkdir(first))
local second = results.default_dir("name", base .. "/runs")
t.ok(second == first .. "-2" or second ~= first, "a second run in the same second gets another folder")

-- CSV quoting
t.eq(results.csv({ "a", "b", "c" }, { { a = "x,y", b = 'say "hi"', c = 0.1 } }), 'a,b,c\n"x,y","say ""hi""",0.1\n', "CSV quoting")
t.eq(results.csv({ "n" }, { { n = 1 / 3 } }), "n\n0.3333333333333333\n", "floats: the shortest text that reads back the same")

sys.remove_tree(base)
return t.done()
