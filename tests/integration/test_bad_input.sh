# Bad input against the real local cluster: each case gives one clear line and a non-zero
# exit, never a hang or a crash. An unreachable mon must fail within the timeout.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

# a conf pointing at a port nobody listens on: connect fails within --timeout
printf 'print(require("cephmark.sys").free_port())\n' >"$work/port.lua"
port=$("$CEPHMARK" run "$work/port.lua")
sed "s/^mon host = .*/mon host = v2:127.0.0.1:$port/" "$CEPH_CONF" >"$work/wrong-port.conf"
printf 'local rados = require "cephmark.rados"\nassert(rados.connect())\n' >"$work/connect.lua"
printf 'local c = require("cephmark.connection")\nc.connect()\n' >"$work/connect_clean.lua"
start=$(date +%s.%N)
run_cli 2 run "$work/connect_clean.lua" -c "$work/wrong-port.conf" --timeout 3
expect_stderr_line "cephmark: cannot connect to the cluster as client.admin using $work/wrong-port.conf: no answer from the monitors within 3 s"
expect_stderr_lines 1
expect_faster_than 8 "$start"

# unknown pool, through the drop-in
run_cli 2 rados-bench -p cephmark-no-such-pool 1 write
expect_stderr_line "cephmark: rados-bench: pool 'cephmark-no-such-pool' does not exist"
expect_stderr_lines 1

# rados bench's own bad inputs
ceph osd pool create cephmark-bad-input 8 >/dev/null 2>&1
run_cli 2 rados-bench -p cephmark-bad-input 1 write -t 0
expect_stderr_line "cephmark: rados-bench: -t must be between 1 and 65536, got 0"
run_cli 2 rados-bench -p cephmark-bad-input 1 write -b 8M -O 4M
expect_stderr_line "cephmark: rados-bench: -b (8388608) is larger than -O (4194304)"
run_cli 2 rados-bench -p cephmark-bad-input 1 write -b 200M
expect_stderr_line "cephmark: rados-bench: object_size 209715200 is above the cluster's osd_max_object_size (128 MiB)"
expect_stderr_lines 1
run_cli 2 rados-bench -p cephmark-bad-input 1 write -b 4X
expect_stderr_line "cephmark: rados-bench: -b: size '4X' has an unknown suffix 'X' (use K, M, G, T or P)"
run_cli 2 rados-bench -p cephmark-bad-input 1 seq
expect_stderr_line "cephmark: rados-bench: no benchmark run 'cephmark_bench_last_metadata' in this pool: run a write phase first (and keep its objects: no cleanup)"
expect_stderr_lines 1
run_cli 2 rados-bench -p cephmark-bad-input 1 rand --run-name nothing-here
expect_stderr_line "cephmark: rados-bench: no benchmark run 'nothing-here' in this pool: run a write phase first (and keep its objects: no cleanup)"
run_cli 2 rados-bench -p cephmark-bad-input 1 write --rate 0
expect_stderr_line "cephmark: rados-bench: --rate must be a positive number of ops/s, got '0'"
run_cli 2 rados-bench -p cephmark-bad-input 1 scribble
expect_stderr_line "cephmark: rados-bench: unknown mode 'scribble' (expected write, seq or rand)"
run_cli 2 rados-bench -p cephmark-bad-input write
expect_stderr_line "cephmark: rados-bench: expected SECONDS and a mode (write, seq or rand), e.g. \`-p POOL 10 write\`"
run_cli 2 rados-bench 1 write
expect_stderr_line "cephmark: rados-bench: a pool is required (-p POOL)"
run_cli 2 rados-bench -p cephmark-bad-input 1 write --frobnicate
expect_stderr_line "cephmark: rados-bench: unknown option '--frobnicate' (see \`cephmark rados-bench --help\`)"

# the Lua API's misuse messages
printf 'local p = require("cephmark.connection").connect():pool("cephmark-bad-input")\np:bench{op="scribble"}\n' >"$work/op.lua"
run_cli 2 run "$work/op.lua"
expect_stderr "bench: unknown op 'scribble' \\(expected write, seq, rand, cleanup, overwrite, append or verify\\)"
printf 'local p = require("cephmark.connection").connect():pool("cephmark-bad-input")\np:bench{op="write", rate=0}\n' >"$work/rate.lua"
run_cli 2 run "$work/rate.lua"
expect_stderr "bench: rate must be a positive number of ops/s, got 0"
printf 'local p = require("cephmark.connection").connect():pool("cephmark-bad-input")\np:bench{op="write", threads=0}\n' >"$work/threads.lua"
run_cli 2 run "$work/threads.lua"
expect_stderr "bench: threads must be between 1 and 65536, got 0"

ceph osd pool rm cephmark-bad-input cephmark-bad-input --yes-i-really-really-mean-it >/dev/null 2>&1
finish
