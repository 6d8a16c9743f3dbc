#!/bin/bash
# Scripted workers on agents: with --agents, s:workers runs the worker function on every
# chosen agent (two agent processes here, with a control pool of the test's own). Checks:
# the aggregate op count is the sum of the agents' and the merged histogram's count; each
# agent wrote its own objects (names from w.agent and w.id, made by a helper function that
# travels with the worker function) into the pool the scenario created; setup runs once per
# agent and its value reaches the workers as w.shared; a rate is split so the agents' rates
# add up to it; and a worker function whose upvalue cannot travel (a cluster connection)
# is refused on the coordinator with one line and exit 2 before any agent hears of the
# phase.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/agents.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/results.sh"
work=$(mktemp -d)
control=cephmark-control-workers-$$
agents=(wa$$ wb$$)
declare -A agent_pid
cleanup() {
  for a in "${agents[@]}"; do
    [ -n "${agent_pid[$a]:-}" ] && kill -INT "${agent_pid[$a]}" 2>/dev/null && wait "${agent_pid[$a]}" 2>/dev/null
  done
  ceph osd pool delete "$control" "$control" --yes-i-really-really-mean-it >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap_cleanup

for a in "${agents[@]}"; do
  "$CEPHMARK" agent --control-pool "$control" --name "$a" >"$work/$a.log" 2>&1 &
  agent_pid[$a]=$!
done

cat >"$work/workers.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "agents-workers",
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s, p)
    local pool = s:pool("bench")
    local data = string.rep("w", 4096)
    local per_worker = 5
    local function object_name(w, i) return string.format("%s.%d.%d.of%d", w.agent, w.id, i, w.shared.of) end
    s:workers { name = "put", pool = pool, n = 3,
      setup = function(agent) return { agent = agent.name, index = agent.index, of = agent.agents } end,
      fn = function(w)
        for i = 1, per_worker do assert(pool:write_full(object_name(w, i), data)) end
      end }
    s:workers { name = "paced", pool = pool, n = 2, seconds = 2, rate = 41, fn = function(w)
      while true do assert(pool:stat(string.format("%s.%d.1.of2", w.agent, w.id))) end
    end }
    -- counted here, in the run function: a function phase would run on the agents, which
    -- is refused with --agents
    local by_agent = {}
    for _, name in ipairs(pool:objects()) do
      local agent = name:match("^(.-)%.%d+%.%d+%.of2$")
      if agent then by_agent[agent] = (by_agent[agent] or 0) + 1 end
    end
    local names = {}
    for agent in pairs(by_agent) do names[#names + 1] = agent end
    table.sort(names)
    for _, agent in ipairs(names) do print(string.format("objects of %s: %d", agent, by_agent[agent])) end
  end,
}
LUA

run_cli 0 run "$work/workers.lua" --agents "${agents[0]},${agents[1]}" --control-pool "$control" -o "$work/run1"
for a in "${agents[@]}"; do
  expect_stdout "^objects of $a: 15$"
done
results_names='put = ph["put"]["result"]; paced = ph["paced"]["result"]'
results_dump='print(json.dumps({k: v for k, v in put.items() if k != "series"}, indent=1)[:3000])'
check_results "$work/run1" \
  "sorted(put['agents']) == sorted(['${agents[0]}', '${agents[1]}'])" \
  "put['ops'] == 30" \
  "put['ops'] == sum(a['ops'] for a in put['agents'].values())" \
  "all(a['ops'] == 15 for a in put['agents'].values())" \
  "put['lat']['count'] == put['ops']" \
  "put['errors'] == 0 and not put['excluded']" \
  "not put.get('incomplete')" \
  "put['op'] == 'workers'" \
  "sorted(a['rate'] for a in paced['agents'].values()) == [20, 21]" \
  "paced['ops'] == sum(a['ops'] for a in paced['agents'].values())" \
  "paced['lat']['count'] == paced['ops'] and paced['ops'] > 0" \
  "paced['rate'] == 41 and sum(paced['rate_shares'].values()) == 41" \
  "paced['start_skew'] >= 0 and paced['go_round_trip'] > 0"
for a in "${agents[@]}"; do
  check grep -q "phase 1: workers (3 each)" "$work/$a.log" || fail "$a did not run the workers phase: $(cat "$work/$a.log")"
done

# a worker function with an upvalue that cannot travel: refused before any agent hears of it
cat >"$work/refused.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "agents-workers-refused",
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s, p)
    local cluster = s:cluster()
    local function object_name(w, i) return string.format("%s.%d.%d", w.agent, w.id, i) end
    s:workers { n = 2, ops = 10, fn = function(w)
      local pool = cluster:pool("cephmark-agents-workers-refused-bench")
      for i = 1, 5 do pool:write_full(object_name(w, i), "x") end
    end }
  end,
}
LUA
# fn that is not a function: refused the same way, before any agent hears of the phase
cat >"$work/no-fn.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "agents-workers-no-fn",
  run = function(s, p)
    s:workers { n = 2, ops = 10, fn = "write" }
  end,
}
LUA
run_cli 2 run "$work/no-fn.lua" --agents "${agents[0]},${agents[1]}" --control-pool "$control" -o "$work/run-no-fn"
expect_stderr "^cephmark: .*no-fn.lua:5: s:workers: fn must be a function\(w\), got 'write'$"
phase_lines() { cat "$work/${agents[0]}.log" "$work/${agents[1]}.log" | grep -c " phase "; }
before=$(phase_lines)
run_cli 2 run "$work/refused.lua" --agents "${agents[0]},${agents[1]}" --control-pool "$control" -o "$work/run2"
expect_stderr "^cephmark: .*refused.lua:8: s:workers with --agents: upvalue 'cluster' is a cephmark.rados.cluster, which cannot be sent to the agents: open it inside the worker function, or in setup = function\(agent\) \.\.\. end"
check [ "$(grep -c "upvalue 'cluster'" "$err_file")" = 1 ] || fail "the refusal is not one line"
check [ "$(phase_lines)" = "$before" ] || fail "an agent started a phase of the refused run"

# a worker that raises on every agent fails the phase as in a single-client run: exit 2,
# the worker's own error and line named
cat >"$work/raises.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "agents-workers-raises",
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s, p)
    s:workers { n = 2, ops = 10, fn = function(w)
      if w.id == 2 then error("no such thing") end
      while true do w:op() end
    end }
  end,
}
LUA
run_cli 2 run "$work/raises.lua" --agents "${agents[0]},${agents[1]}" --control-pool "$control" -o "$work/run3"
expect_stderr "^cephmark: s:workers: the phase failed on every agent; (${agents[0]}|${agents[1]}): failed: worker 2: .*raises.lua:7: no such thing$"
finish
