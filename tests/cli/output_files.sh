#!/bin/bash
# Files cephmark writes where the operator points it, without a cluster: `run -o` onto
# something that is not a folder, onto a folder whose results.json is a FIFO, onto the
# folder holding the run's own --params file; disk.bench and scenarios/baseline.lua on an
# existing regular file (refused and unchanged, then overwritten when asked). Each refusal
# is one line and exit 2, before anything ran, and leaves the file as it was.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
# on a disk filesystem (O_DIRECT), in the build tree
work=$(mktemp -d "${CEPHMARK_BUILD_DIR:-/tmp}/test-output-files.XXXXXX")
# no cluster is configured; should a case wrongly reach for the local one, it is made here
# and stopped at the end
export CEPH_CONF= CEPHMARK_CLUSTER_DIR="$work/no-cluster"
trap '"$CEPHMARK" cluster down --dir "$work/no-cluster" >/dev/null 2>&1; rm -rf "$work" "$out_file" "$err_file"' EXIT

expect_same() { # expect_same WHAT EXPECTED GOT
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    failures=$((failures + 1))
    echo "FAIL: $1: expected '$2', got '$3'"
  fi
}
expect_no_run() { # the refusal came before the scenario ran
  checks=$((checks + 1))
  if grep -q '^\[1\]' "$out_file"; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command' ran a phase before refusing"
  fi
}

cat >"$work/sc.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "output-files",
  params = { threads = 2 },
  run = function(s, p)
    s:phase("null", require("cephmark.null"), { seconds = 0.1, threads = p.threads })
  end,
}
LUA

# run -o onto a regular file
printf 'not a folder\n' >"$work/a-file"
md5=$(md5sum <"$work/a-file")
run_cli 2 run "$work/sc.lua" -o "$work/a-file" -p progress=false
expect_stderr_line "cephmark: cannot write the results into $work/a-file (-o): it exists and is not a folder"
expect_stderr_lines 1
expect_no_run
expect_same "$work/a-file" "$md5" "$(md5sum <"$work/a-file")"

# run -o onto a folder where results.json is a FIFO: refused before the run, FIFO kept
mkdir "$work/fifo-dir"
mkfifo "$work/fifo-dir/results.json"
run_cli 2 run "$work/sc.lua" -o "$work/fifo-dir" -p progress=false
expect_stderr_line "cephmark: cannot write the results into $work/fifo-dir (-o): $work/fifo-dir/results.json: it is a FIFO, not a regular file"
expect_stderr_lines 1
expect_no_run
expect_same "$work/fifo-dir/results.json" "fifo" "$(stat -c %F "$work/fifo-dir/results.json")"

# the run's own --params file, in the -o folder where params.yaml would be written
mkdir "$work/again"
printf 'threads: 3\n' >"$work/again/params.yaml"
md5=$(md5sum <"$work/again/params.yaml")
run_cli 2 run "$work/sc.lua" --params "$work/again/params.yaml" -o "$work/again" -p progress=false
expect_stderr_line "cephmark: cannot write the results into $work/again (-o): $work/again/params.yaml: it is one of this command's inputs"
expect_stderr_lines 1
expect_no_run
expect_same "$work/again/params.yaml" "$md5" "$(md5sum <"$work/again/params.yaml")"
# ... also under another name (a hard link)
ln "$work/again/params.yaml" "$work/my-params.yaml"
run_cli 2 run "$work/sc.lua" --params "$work/my-params.yaml" -o "$work/again" -p progress=false
expect_stderr_line "cephmark: cannot write the results into $work/again (-o): $work/again/params.yaml: it is the same file as $work/my-params.yaml, one of this command's inputs"
expect_same "$work/again/params.yaml" "$md5" "$(md5sum <"$work/again/params.yaml")"
# a folder of regular files (a previous run's) is written as asked
run_cli 0 run "$work/sc.lua" -o "$work/fresh" -p progress=false
run_cli 0 run "$work/sc.lua" -o "$work/fresh" -p progress=false -p threads=3
expect_stdout "^results: $work/fresh$"
checks=$((checks + 1))
grep -q '"threads": 3' "$work/fresh/results.json" || { failures=$((failures + 1)); echo "FAIL: the second run did not replace $work/fresh/results.json"; }

# disk.bench on a file it did not create: refused and unchanged; written with overwrite
cat >"$work/disk.lua" <<'LUA'
local p = ...
local r = require("cephmark.disk").bench { path = p.path, io_type = "write", block_size = "4K", count = 4,
  overwrite = p.overwrite == "yes" }
print(string.format("ops=%d errors=%d", r.ops, r.errors))
LUA
head -c 65536 /dev/urandom >"$work/theirs.dat"
md5=$(md5sum <"$work/theirs.dat")
run_cli 2 run "$work/disk.lua" -p path="$work/theirs.dat"
expect_stderr_line "cephmark: disk.bench: refusing to write to $work/theirs.dat: it is an existing file this run did not create; say so explicitly with overwrite = true (its contents are replaced)"
expect_stderr_lines 1
expect_same "$work/theirs.dat (refused)" "$md5" "$(md5sum <"$work/theirs.dat")"
run_cli 0 run "$work/disk.lua" -p path="$work/theirs.dat" -p overwrite=yes
expect_stdout "^ops=4 errors=0$"
checks=$((checks + 1))
if [ "$(md5sum <"$work/theirs.dat")" = "$md5" ]; then
  failures=$((failures + 1)); echo "FAIL: overwrite = true did not write $work/theirs.dat"
fi

# scenarios/baseline.lua on a file: refused before any phase, unchanged; -p overwrite=true
# writes it (and leaves it: the run did not create it)
baseline="$CEPHMARK_SOURCE_DIR/scenarios/baseline.lua"
head -c 1048576 /dev/urandom >"$work/disk.img"
md5=$(md5sum <"$work/disk.img")
run_cli 2 run "$baseline" -p paths="$work/disk.img" -p rados=false -p drop_caches=false -p progress=false \
  -p block_size=64K -p disk_seconds=0.2 -o "$work/b1"
expect_stderr_line "cephmark: paths: $work/disk.img is an existing file: the disk phases would replace its contents; -p overwrite=true to let them, or give a folder (a test file is made in it and removed)"
expect_stderr_lines 1
expect_no_run
expect_same "$work/disk.img (refused)" "$md5" "$(md5sum <"$work/disk.img")"
run_cli 0 run "$baseline" -p paths="$work/disk.img" -p overwrite=true -p rados=false -p drop_caches=false \
  -p progress=false -p block_size=64K -p disk_seconds=0.2 -o "$work/b2"
expect_stdout "^\[1\] disk-write disk=$work/disk.img "
checks=$((checks + 1))
if [ ! -f "$work/disk.img" ] || [ "$(md5sum <"$work/disk.img")" = "$md5" ]; then
  failures=$((failures + 1)); echo "FAIL: -p overwrite=true did not write $work/disk.img, or removed it"
fi
# a folder gets a test file of the run's own, removed at the end; the folder's files stay
mkdir "$work/disk-dir"
printf 'keep me\n' >"$work/disk-dir/keep"
run_cli 0 run "$baseline" -p paths="$work/disk-dir" -p rados=false -p drop_caches=false -p progress=false \
  -p block_size=64K -p disk_size=1M -p disk_seconds=0.2 -o "$work/b3"
expect_same "the folder after the run" "keep" "$(ls "$work/disk-dir")"
finish
