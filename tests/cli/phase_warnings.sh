# A phase whose ops the target never answered says so: with drain_timeout reached, the
# ops abandoned in flight are counted in a warning line on stderr (the summary line counts
# only completed ops), and the run still ends with its results. The null target stands in
# for a cluster that stopped answering (a full one, say): delays up to 5 s against a
# drain_timeout of 0.2 s. Needs no cluster.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

cat >"$work/drain.lua" <<'LUA'
local cm = require "cephmark"
local null = require "cephmark.null"
return cm.scenario { name = "drain", params = { drain = cm.duration("0.2s") }, run = function(s, p)
  s:phase("write", null, { threads = 4, seconds = 0.3, delay = "4s", drain_timeout = p.drain })
end }
LUA

run_cli 0 run "$work/drain.lua" -o "$work/out"
expect_stderr '^cephmark: warning: write: 4 ops still in flight when the phase ended were abandoned unanswered \(drain_timeout\); the figures count only the ops that completed$'
expect_stdout '^  = write: 0 ops in '
checks=$((checks + 1))
grep -q '"drained": *false' "$work/out/results.json" || { failures=$((failures + 1)); echo "FAIL: results.json does not say drained: false"; }

# drained in time: no warning
run_cli 0 run "$work/drain.lua" -p drain=10s -o "$work/out2"
checks=$((checks + 1))
if grep -q 'abandoned' "$err_file"; then failures=$((failures + 1)); echo "FAIL: a warning although every op completed"; fi

finish phase_warnings.sh
