# CLI transcript tests for `cephmark run`, help and version: exact messages and exit
# codes for bad input, script errors and interrupts. Needs no cluster.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

run_cli 0 --version
expect_stdout '^cephmark [0-9]+\.[0-9]+\.[0-9]+ \(Lua 5\.4\.[0-9]+, librados [0-9]+\.[0-9]+\.[0-9]+\)$'
run_cli 0 --help
expect_stdout '^  run SCRIPT \[options\]'
run_cli 0 help run
expect_stdout '^usage: cephmark run SCRIPT'
run_cli 2 frobnicate
expect_stderr_line "cephmark: unknown command 'frobnicate' (see \`cephmark --help\`)"

run_cli 2 run
expect_stderr_line 'cephmark: run needs a SCRIPT (see `cephmark help run`)'
run_cli 2 run "$work/missing.lua"
expect_stderr_line "cephmark: cannot open script '$work/missing.lua': no such file"
expect_stderr_lines 1
run_cli 2 run "$work" 
expect_stderr_line "cephmark: cannot open script '$work': not a regular file"
run_cli 2 run x.lua -p threads
expect_stderr_line "cephmark: -p expects KEY=VALUE, got 'threads' (see \`cephmark help run\`)"
run_cli 2 run x.lua -p =4
expect_stderr_line "cephmark: -p expects KEY=VALUE, got '=4' (see \`cephmark help run\`)"
run_cli 2 run x.lua --bogus
expect_stderr_line "cephmark: unknown option '--bogus' (see \`cephmark help run\`)"
run_cli 2 run x.lua -c
expect_stderr_line "cephmark: option -c needs a value (see \`cephmark help run\`)"
run_cli 2 run x.lua --timeout 0
expect_stderr_line "cephmark: --timeout expects a positive number of seconds, got '0' (see \`cephmark help run\`)"

printf 'local x = = 1\n' >"$work/syntax.lua"
run_cli 2 run "$work/syntax.lua"
expect_stderr_line "cephmark: $work/syntax.lua:1: unexpected symbol near '='"
expect_stderr_lines 1

printf 'local function inner()\n  error("boom")\nend\ninner()\n' >"$work/error.lua"
run_cli 2 run "$work/error.lua"
expect_stderr_line "cephmark: $work/error.lua:2: boom"
expect_stderr '^stack traceback:$'
expect_stderr "$work/error.lua:4: in "

printf 'return { failed_ops = 3 }\n' >"$work/failed.lua"
run_cli 1 run "$work/failed.lua"
printf 'local p = ...\nprint(p.size, p.name)\n' >"$work/params.lua"
run_cli 0 run "$work/params.lua" -p size=4K --param name=a=b
expect_stdout $'^4K\ta=b$'

run_cli 2 run "$work/params.lua" -c "$work/nope.conf"
printf 'assert(require("cephmark.rados").connect())\n' >"$work/connect.lua"
run_cli 2 run "$work/connect.lua" -c "$work/nope.conf"
expect_stderr_line "cephmark: the cluster configuration $work/nope.conf (from -c) does not exist"

# SIGINT: a busy Lua loop and a sleep both stop at once with exit 130. The signal is sent
# once, to cephmark alone (timeout(1) would also signal the process group: a second SIGINT).
interrupt_after() {
  "$CEPHMARK" run "$2" >"$out_file" 2>"$err_file" &
  local pid=$!
  sleep "$1"
  kill -INT "$pid"
  wait "$pid"
}
printf 'while true do end\n' >"$work/loop.lua"
start=$(date +%s.%N)
interrupt_after 1 "$work/loop.lua"
last_status=$? last_command="run loop.lua (SIGINT)"
checks=$((checks + 1)); [ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: SIGINT exit $last_status"; }
expect_stderr_line 'cephmark: interrupted'
expect_faster_than 3 "$start"
printf 'require("cephmark.sys").sleep(60)\n' >"$work/sleep.lua"
start=$(date +%s.%N)
interrupt_after 1 "$work/sleep.lua"
last_status=$? last_command="run sleep.lua (SIGINT)"
checks=$((checks + 1)); [ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: SIGINT exit $last_status"; }
expect_stderr_line 'cephmark: interrupted'
expect_faster_than 3 "$start"

finish
