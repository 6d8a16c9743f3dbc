# The rbd-bench drop-in against the real cluster: for the same flags, its output has the
# real `rbd bench`'s lines in the same order and shape (numbers masked), with cephmark's
# latency, errors and verify lines after them; table rows are rbd bench's fixed-width
# columns; --format json and -o results parse; reads verify what cephmark wrote and fail
# (exit 1) on data it did not; bad input gets one line and exit 2.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
pool=cephmark-test-rbd-bench
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"; ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1' EXIT
ceph osd pool create "$pool" 8 >/dev/null 2>&1
rbd pool init "$pool"
rbd create --size 32M "$pool/img"  # cephmark's own: its reads verify
rbd create --size 32M "$pool/peer" # rbd bench and cephmark side by side

# check CONDITION WHAT: a shell condition, counted like the assert.sh checks
check() {
  checks=$((checks + 1))
  if ! eval "$1"; then failures=$((failures + 1)); echo "FAIL: $2 ($1)"; fi
}

# shape FILE: the layout with every number masked as N, units of rates as U, spaces
# squeezed, and the per-second rows left out (how many there are depends on timing)
shape() {
  sed -E -e 's/[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?/N/g' -e 's#N (B|KiB|MiB|GiB|TiB)/s#N U/s#g' \
    -e 's/ +/ /g' -e 's/^ //' "$1" | grep -vx 'N N N N U/s'
}

# rows_ok FILE WHAT: every table row is rbd bench's "%5d%10d%10s%10s/s", 37 characters
rows_ok() {
  local bad
  bad=$(grep -E '^ *[0-9]+ +-?[0-9]+ +[0-9.e+]+ +[0-9.]+ (B|KiB|MiB|GiB)/s$' "$1" | awk 'length($0) != 37' | head -3)
  check '[ -z "$bad" ]' "$2: rows not 37 characters wide: $bad"
}

# --- the same flags through rbd bench and cephmark rbd-bench: the same lines ---------------
extra_write='latency(s) avg: N stddev: N min: N max: N
latency(s) pN: N pN: N pN: N pN: N pN: N pN: N
errors: N'
extra_read='latency(s) avg: N stddev: N min: N max: N
latency(s) pN: N pN: N pN: N pN: N pN: N pN: N
errors: N verify_failures: N'
n=0
for flags in "--io-type write --io-size 4K --io-threads 8 --io-total 8M --io-pattern rand" \
  "--io-type readwrite --rw-mix-read 75 --io-size 4K --io-threads 8 --io-total 8M --io-pattern rand" \
  "--io-type rw --io-size 64K --io-threads 4 --io-total 8M" \
  "--io-type read --io-size 64K --io-threads 4 --io-total 8M"; do
  n=$((n + 1))
  # shellcheck disable=SC2086 # the flags are words on purpose
  rbd bench $flags "$pool/peer" >"$work/rbd.$n" 2>"$work/rbd.$n.err"
  rc=$?
  check '[ "$rc" = 0 ]' "rbd bench $flags failed: $(head -3 "$work/rbd.$n.err")"
  # the peer image holds rbd bench's data, which cephmark cannot verify
  # shellcheck disable=SC2086
  run_cli 0 rbd-bench $flags --no-verify "$pool/peer"
  cp "$out_file" "$work/ours.$n"
  shape "$work/rbd.$n" >"$work/rbd.$n.shape"
  shape "$work/ours.$n" >"$work/ours.$n.shape"
  lines=$(wc -l <"$work/rbd.$n.shape")
  check '[ "$lines" -ge 3 ]' "rbd bench printed its header, table header and elapsed line"
  check 'head -n "$lines" "$work/ours.$n.shape" | cmp -s - "$work/rbd.$n.shape"' \
    "$flags: rbd bench's lines, in its order and shape: $(diff <(head -n "$lines" "$work/ours.$n.shape") "$work/rbd.$n.shape" | head -6 | tr '\n' '|')"
  case "$flags" in *"io-type write"*) want=$extra_write ;; *) want=$extra_read ;; esac
  check '[ "$(tail -n +$((lines + 1)) "$work/ours.$n.shape")" = "$want" ]' \
    "$flags: cephmark's lines after rbd bench's: $(tail -n +$((lines + 1)) "$work/ours.$n.shape" | tr '\n' '|')"
  rows_ok "$work/rbd.$n" "rbd bench $flags"
  rows_ok "$work/ours.$n" "rbd-bench $flags"
  # the byte bound is exact, as in rbd bench: 8M of 4K or 64K
  case "$flags" in *"io-size 4K"*) ops=2048 ;; *) ops=128 ;; esac
  check 'grep -qE "^elapsed: [0-9]+   ops: $ops   ops/sec: [0-9.e+]+   bytes/sec: [0-9.]+ (B|KiB|MiB|GiB)/s\$" "$work/ours.$n"' \
    "$flags: $ops ops in the elapsed line"
  check 'grep -qE "^elapsed: [0-9]+   ops: $ops   " "$work/rbd.$n"' "rbd bench itself did $ops ops"
done
# use_output FILE: the expect_* checks look at FILE
use_output() { cp "$1" "$out_file"; }
use_output "$work/ours.2"
expect_stdout '^bench  type readwrite read:write=75:25 io_size 4096 io_threads 8 bytes 8388608 pattern random$'
reads=$(sed -n 's/^read_ops: \([0-9]*\)   .*/\1/p' "$work/ours.2")
writes=$(sed -n 's/^write_ops: \([0-9]*\)   .*/\1/p' "$work/ours.2")
check '[ $((reads + writes)) = 2048 ]' "read_ops ($reads) + write_ops ($writes) = ops"
check '[ "$reads" -gt 1228 ] && [ "$reads" -lt 1843 ]' "about 75% reads: $reads of 2048"
use_output "$work/ours.3"
expect_stdout '^bench  type readwrite read:write=50:50 io_size 65536 io_threads 4 bytes 8388608 pattern sequential$'

# --- cephmark's own image: written, then read back and verified ----------------------------
run_cli 0 rbd-bench --io-type write --io-size 4K --io-threads 16 --io-total 32M "$pool/img" -o "$work/fill"
expect_stdout '^bench  type write io_size 4096 io_threads 16 bytes 33554432 pattern sequential$'
expect_stdout '^  SEC       OPS   OPS/SEC   BYTES/SEC$'
expect_stdout '^elapsed: [0-9]+   ops: 8192   '
expect_stdout '^latency\(s\) avg: [0-9.e-]+   stddev: [0-9.e-]+   min: [0-9.e-]+   max: [0-9.e-]+$'
expect_stdout '^latency\(s\) p50: [0-9.e-]+   p90: [0-9.e-]+   p95: [0-9.e-]+   p99: [0-9.e-]+   p99.9: [0-9.e-]+   p99.99: [0-9.e-]+$'
expect_stdout '^errors: 0$'
cat >"$work/results.lua" <<'LUA'
local p = ...
local sys, json, yaml = require "cephmark.sys", require "cephmark.json", require "cephmark.yaml"
local j = assert(json.decode(assert(sys.read_file(p.dir .. "/results.json"))))
local y = assert(yaml.decode(assert(sys.read_file(p.dir .. "/results.yaml")), "results.yaml"))
assert(j.command == "rbd-bench" and j.image == "img", "what ran")
assert(j.result.ops == 8192 and y.result.ops == 8192, "ops in both forms")
assert(j.rbd_bench.ops == 8192 and j.rbd_bench.bench.type == "write", "the rbd bench document")
assert(j.image_info.size == 33554432, "the image's size")
assert(j.result.lat.p99 > 0 and #j.result.series >= 1, "latency and series")
print("results ok")
LUA
run_cli 0 run "$work/results.lua" -p dir="$work/fill"
expect_stdout '^results ok$'

# reads of what cephmark wrote verify; the pool and image as options, with rbd's -p
run_cli 0 rbd-bench --io-type read --io-size 4K --io-threads 16 --io-total 32M --io-pattern rand -p "$pool" --image img
expect_stdout '^bench  type read io_size 4096 io_threads 16 bytes 33554432 pattern random$'
expect_stdout '^errors: 0   verify_failures: 0$'
run_cli 0 rbd-bench --io-type=readwrite --io-size=4K --io-total=8M --io-pattern=random --pool "$pool" --image img
expect_stdout '^errors: 0   verify_failures: 0$'

# a time bound instead of a byte bound: rows every second, in rbd bench's columns
run_cli 0 rbd-bench --io-type write --io-pattern rand --io-total 0 --seconds 2 --cache off "$pool/img" --format json
cp "$out_file" "$work/timed.json"
cat >"$work/json.lua" <<'LUA'
local p = ...
local doc = assert(require("cephmark.json").decode(assert(require("cephmark.sys").read_file(p.file))))
assert(doc.bench.type == "write" and doc.bench.pattern == "random" and doc.bench.bytes == 0, "bench")
assert(#doc.datas >= 1 and doc.datas[1].sec == 1 and doc.datas[1].ops_per_sec > 0, "per-second rows")
assert(doc.elapsed >= 2 and doc.elapsed < 4, "time bound: " .. doc.elapsed)
assert(doc.ops > 0 and doc.latency.p99 > 0 and doc.errors == 0, "summary")
print("json ok")
LUA
run_cli 0 run "$work/json.lua" -p file="$work/timed.json"
expect_stdout '^json ok$'
run_cli 0 rbd-bench --io-type write --io-pattern rand --io-total 0 --seconds 2 "$pool/img"
expect_stdout '^    1 +[0-9]+ +[0-9.e+]+ +[0-9.]+ (B|KiB|MiB|GiB)/s$'
expect_stdout '^elapsed: 2   '
rows_ok "$out_file" "rbd-bench --seconds 2"

# one block overwritten behind cephmark's back does not verify: exit 1, the block named
cat >"$work/scribble.lua" <<'LUA'
local p = ...
local pool = require("cephmark.connection").connect():pool(p.pool)
local image <close> = assert(require("cephmark.rbd").open(pool, "img"))
assert(image:write(8192, string.rep("x", 4096)))
LUA
run_cli 0 run "$work/scribble.lua" -p pool="$pool"
run_cli 1 rbd-bench --io-type read --io-size 4K --io-total 32M "$pool/img"
expect_stdout '^errors: 0   verify_failures: 1$'
expect_stderr "^verify failed: image 'img' offset 8192"

# --- bad input: one line, exit 2 ------------------------------------------------------------
bad() {
  local want=$1
  shift
  run_cli 2 rbd-bench "$@"
  expect_stderr_line "$want"
  expect_stderr_lines 1
}
bad "cephmark: rbd-bench: image 'nope' does not exist in pool '$pool'" --io-type write "$pool/nope"
bad "cephmark: rbd-bench: pool 'cephmark-no-such-pool' does not exist" --io-type write cephmark-no-such-pool/img
bad "cephmark: rbd-bench: pool 'rbd' does not exist" --io-type write img
bad "cephmark: rbd-bench: --io-size must be greater than zero" --io-type write --io-size 0 "$pool/img"
bad "cephmark: rbd-bench: --io-size must be a multiple of 512 bytes, got 1000" --io-type write --io-size 1000 "$pool/img"
bad "cephmark: rbd-bench: --io-size (64 MiB) is larger than the image 'img' (32 MiB)" --io-type write --io-size 64M "$pool/img"
bad "cephmark: rbd-bench: --io-size: size '4X' has an unknown suffix 'X' (use K, M, G, T or P)" --io-type write --io-size 4X "$pool/img"
bad "cephmark: rbd-bench: unknown io type 'scribble' (expected read, write or readwrite)" --io-type scribble "$pool/img"
bad "cephmark: rbd-bench: --io-type is required (read, write or readwrite)" "$pool/img"
bad "cephmark: rbd-bench: unknown io pattern 'zigzag' (expected seq or rand)" --io-type write --io-pattern zigzag "$pool/img"
bad "cephmark: rbd-bench: --rw-mix-read must be between 0 and 100, got 101" --io-type rw --rw-mix-read 101 "$pool/img"
bad "cephmark: rbd-bench: --io-threads must be between 1 and 65536, got 0" --io-type write --io-threads 0 "$pool/img"
bad "cephmark: rbd-bench: an image is required: POOL/IMAGE, or --pool POOL --image IMAGE" --io-type write
bad "cephmark: rbd-bench: namespaces are not supported: image spec '$pool/ns/img' (expected [POOL/]IMAGE)" --io-type write "$pool/ns/img"
bad "cephmark: rbd-bench: --io-total 0 needs --seconds: a run needs a bound" --io-type write --io-total 0 "$pool/img"
bad "cephmark: rbd-bench: unknown option '--frobnicate' (see \`cephmark rbd-bench --help\`)" --io-type write --frobnicate "$pool/img"

run_cli 0 rbd-bench --help
expect_stdout '^usage: cephmark rbd-bench \[POOL/\]IMAGE --io-type read\|write\|readwrite \[options\]$'
finish
