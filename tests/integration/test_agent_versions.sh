#!/bin/bash
# Agents and coordinators of different cephmark releases do not mix. A coordinator refuses
# an agent registered with another release before anything is created, in one line naming
# both versions (exit 2); an agent refuses a scenario published by a coordinator of another
# release, naming both, and accepts one of its own release. A patch release mixes with its
# release (distributed.compatible). Runs in a control pool of its own, removed at the end.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
work=$(mktemp -d)
control=cephmark-versions-test-$$
agent_pid=
cleanup() {
  [ -n "$agent_pid" ] && kill -KILL "$agent_pid" 2>/dev/null
  for p in "$control" cephmark-versions-test-data-$$; do
    ceph osd pool rm "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1
  done
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT
version=$("$CEPHMARK" --version | awk '{ print $2 }')
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
other="$major.$((minor + 1)).0"
patch="$major.$minor.99"

# a real agent of this release in the test's control pool
"$CEPHMARK" agent --control-pool "$control" --name v-real >"$work/agent.log" 2>&1 &
agent_pid=$!
wait_until 20 0.1 grep -q "registered in pool" "$work/agent.log" ||
  { echo "FAIL: the agent did not register: $(cat "$work/agent.log")"; exit 1; }

cat >"$work/sc.lua" <<LUA
local cm = require "cephmark"
return cm.scenario {
  name = "versions",
  pools = { data = { name = "cephmark-versions-test-data-$$", type = "replicated", size = 1 } },
  run = function(s) s:phase("write", s:pool("data"), { ops = 8, threads = 2, block_size = "4K" }) end,
}
LUA

# the coordinator side: an agent registered with another release is refused up front
register() { # register NAME VERSION: a registration as an agent of that release writes it
  rados -p "$control" setomapval agents "$1" \
    "{\"host\":\"elsewhere\",\"pid\":1,\"version\":\"$2\",\"heartbeat\":$(date +%s.%N),\"started\":0,\"state\":\"idle\"}"
}
register v-old "$other"
run_cli 2 run "$work/sc.lua" --agents v-old --control-pool "$control"
expect_stderr_line "cephmark: cephmark versions differ: agent v-old runs $other, the coordinator $version (results of different releases are not merged; install the same release on every host)"
expect_stderr_lines 1
check [ -z "$(ceph osd pool ls | grep -x "cephmark-versions-test-data-$$")" ] || fail "the scenario's pool was created before the refusal"
rados -p "$control" rmomapkey agents v-old

# the agent side: hello from a coordinator of another release, then of a patch release
cat >"$work/hello.lua" <<'LUA'
local distributed = require "cephmark.distributed"
local json = require "cephmark.json"
local rados = require "cephmark.rados"
local t = require "cephmark.test"
local p = ...
local cluster <close> = assert(rados.connect())
local pool <close> = distributed.open_pool(cluster, p.control)
local function hello(run, version)
  local object = distributed.scenario_object(run)
  assert(pool:write_full(object, json.encode { script = "x.lua", script_text = "", params = {},
    coordinator = { host = "test", pid = 1, version = version } }))
  local replies = distributed.notify(pool, { type = "hello", run = run, agents = { "v-real" }, scenario = object }, 15)
  distributed.notify(pool, { type = "done", run = run }, 15)
  pool:remove(object)
  return replies["v-real"] or {}
end
local refused = hello("vtest1", p.other)
t.eq(refused.ok, false, "an agent refuses a coordinator of release " .. p.other)
t.eq(refused.error, string.format("cephmark versions differ: agent v-real runs %s, the coordinator %s (results of "
  .. "different releases are not merged; install the same release on every host)", p.version, p.other), "naming both")
t.eq(hello("vtest2", p.patch).ok, true, "and accepts a patch release of its own, " .. p.patch)
t.eq(hello("vtest3", p.version).ok, true, "and its own version")
t.eq(distributed.compatible("1.4.0", "1.4.7"), true, "patch releases mix")
t.eq(distributed.compatible("1.4.0", "1.5.0"), false, "minor releases do not")
t.eq(distributed.compatible("2.0.0", "1.0.0"), false, "major releases do not")
t.eq(distributed.compatible(nil, "1.0.0"), nil, "an agent that gave no version is not compatible")
return t.done()
LUA
"$CEPHMARK" run "$work/hello.lua" -p control="$control" -p version="$version" -p other="$other" -p patch="$patch" \
  >"$work/hello.out" 2>&1
status=$?
check [ "$status" = 0 ] || fail "agent-side version checks: $(cat "$work/hello.out")"
check grep -q "run vtest1 refused: cephmark versions differ" "$work/agent.log" || fail "the agent did not log the refusal"

# the agent, still serving, stops cleanly
kill -TERM "$agent_pid"
wait_until 30 0.2 sh -c "! kill -0 $agent_pid 2>/dev/null" || fail "the agent did not stop on SIGTERM"
agent_pid=
finish
