# Bounded memory for read buffers: a seq run over a 2-object 64M write run with -t 65536 is
# refused before anything is allocated, with the figure (the process's peak RSS stays small),
# and a seq run with more slots than blocks reads with one slot per block. The same check
# refuses disk and HTTP runs whose buffers would not fit.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
pool=cephmark-test-memory-bounds
work=$(mktemp -d)
trap 'rados -p "$pool" ls >/dev/null 2>&1 && ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1; rm -rf "$work" "$out_file" "$err_file"' EXIT
ceph osd pool create "$pool" 8 >/dev/null 2>&1

# run_measured EXPECTED_EXIT ARGS...: run_cli, with the peak RSS of cephmark in $peak_kib
run_measured() {
  local expected=$1
  shift
  last_command="cephmark $*"
  peak_kib=$(python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as out, open(sys.argv[2], "w") as err:
    status = subprocess.call(sys.argv[4:], stdout=out, stderr=err, stdin=subprocess.DEVNULL)
with open(sys.argv[3], "w") as f:
    f.write(str(status))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$out_file" "$err_file" "$work/status" "$CEPHMARK" "$@")
  last_status=$(cat "$work/status")
  checks=$((checks + 1))
  if [ "$last_status" != "$expected" ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' exited $last_status, expected $expected"
    sed 's/^/  stdout: /' "$out_file" | head -20
    sed 's/^/  stderr: /' "$err_file" | head -20
  fi
  echo "'$last_command': peak RSS $((peak_kib / 1024)) MiB"
}

# expect_peak_below MIB
expect_peak_below() {
  checks=$((checks + 1))
  if [ "$peak_kib" -ge $(($1 * 1024)) ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command': peak RSS $((peak_kib / 1024)) MiB, limit $1 MiB"
  fi
}

run_cli 0 rados-bench -p "$pool" 10 write -b 64M -O 64M -t 2 --max-objects 2 --no-cleanup
expect_stdout '^Total writes made:      2$'

# 65536 slots x 64 MiB: refused with the figure, before any buffer exists
run_measured 2 rados-bench -p "$pool" 10 seq -t 65536
expect_stderr '^cephmark: rados-bench: 65536 slots x 64 MiB = 4 TiB of read buffers \(8 TiB with the library.s own\), more than the [0-9.]+ [GT]iB this machine has available; lower -t or -b \(threads, block_size\)$'
expect_stderr_lines 1
expect_peak_below 200

# 16 slots over 2 blocks: 2 slots read (the result says threads 2), and only their buffers
# exist: 2 x 64 MiB, librados's 2 receive buffers and the 64 MiB pattern, not 16 x 64 MiB
run_measured 0 rados-bench -p "$pool" 10 seq -t 16 -o "$work/seq"
expect_stdout '^Total reads made:     2$'
expect_stdout '^Verify failures:      0$'
expect_peak_below 600
checks=$((checks + 1))
threads=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["threads"])' "$work/seq/results.json")
[ "$threads" = 2 ] || { failures=$((failures + 1)); echo "FAIL: seq -t 16 over 2 blocks ran with $threads slots, expected 2"; }

# the same check guards the other targets whose slots hold buffers (no cluster needed)
cat >"$work/disk.lua" <<LUA
require("cephmark.disk").bench { path = "$work/disk.dat", block_size = "1G", threads = 65536, ops = 1 }
LUA
run_measured 2 run "$work/disk.lua"
expect_stderr '^cephmark: disk.bench: 65536 slots x 1 GiB = 64 TiB of I/O buffers, more than the [0-9.]+ [GT]iB this machine has available; lower threads or block_size$'
expect_peak_below 200
checks=$((checks + 1))
[ ! -e "$work/disk.dat" ] || { failures=$((failures + 1)); echo "FAIL: the refused disk run created its file"; }

# and HTTP: 16 PUT bodies of 5 GiB, refused before the container sees a request
cat >"$work/http.lua" <<'LUA'
local conn = require("cephmark.rgw").swift_connect {}
local container = "cephmark-memory-bounds-" .. require("cephmark.sys").getpid()
local ok, err = pcall(conn.bench, conn, { op = "put", container = container, size = "5G", threads = 16, objects = 16 })
assert(not ok)
print(tostring(err))
assert(not conn:list(container), "the container was never made")
LUA
run_measured 0 run "$work/http.lua"
expect_stdout '^bench: 16 slots x 5 GiB = 80 GiB of PUT bodies, more than the [0-9.]+ [GT]iB this machine has available; lower threads \(concurrency\) or the object size$'
expect_peak_below 200

run_cli 0 rados-cleanup -p "$pool"
finish
