#!/bin/bash
# CLI transcript tests of `cephmark agent` and `run --agents` / `run --monitors` that need
# no cluster: bad agent names, unknown options, --control-pool without --agents or
# --monitors, --agents without a value, bad monitor lists, a plain script with either.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT
printf 'return 1\n' >"$work/plain.lua"

run_cli 2 agent --name 'two words'
expect_stderr_line "cephmark: agent: --name must be letters, digits, '.', '_' or '-' (at most 64), got 'two words'"
expect_stderr_lines 1
run_cli 2 agent --bogus
expect_stderr_line "cephmark: agent: unknown option '--bogus' (see \`cephmark agent --help\`)"
run_cli 2 agent extra
expect_stderr_line "cephmark: agent: unexpected argument 'extra'"
run_cli 0 agent --help
expect_stdout "^usage: cephmark agent "
run_cli 2 run "$work/plain.lua" --control-pool ctl
expect_stderr_line "cephmark: --control-pool goes with --agents or --monitors"
run_cli 0 agent --help
expect_stdout "^  --monitor  +be a host monitor, not a load agent"
run_cli 2 agent --monitor --name 'two words'
expect_stderr_line "cephmark: agent: --name must be letters, digits, '.', '_' or '-' (at most 64), got 'two words'"
for list in 'a b' 'a,,b' ',a' 'a,' '-a' ''; do
  run_cli 2 run "$work/plain.lua" --monitors "$list"
  expect_stderr_line "cephmark: --monitors expects 'all' or monitor names separated by commas (each letters, digits, '.', '_' or '-', at most 64), got '$list'"
  expect_stderr_lines 1
done
run_cli 2 run "$work/plain.lua" --monitors
expect_stderr_line "cephmark: option --monitors needs a value (see \`cephmark help run\`)"
CEPH_CONF= run_cli 2 run "$work/plain.lua" --monitors all
expect_stderr_line "cephmark: --monitors reads the hosts around the phases of a scenario (cm.scenario); $work/plain.lua is a plain script"
run_cli 2 run "$work/plain.lua" --agents
expect_stderr_line "cephmark: option --agents needs a value (see \`cephmark help run\`)"
CEPH_CONF= run_cli 2 run "$work/plain.lua" --agents 2
expect_stderr_line "cephmark: --agents runs the phases of a scenario (cm.scenario); $work/plain.lua is a plain script"
finish
