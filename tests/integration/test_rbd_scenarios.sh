# The RBD scenarios against the real cluster, briefly (-p seconds=1, small images): each
# prints fio's layout where it should, leaves a results folder with its phases, and leaves
# no pool or image behind. rbd-4k-randwrite also runs in an existing pool and image, which
# it must keep. rbd-replica-vs-ec needs EC overwrites, which memstore OSDs refuse: on the
# suite's cluster it must stop with one line saying so, and it then runs on a bluestore
# cluster this test starts itself (about 5 s) and tears down.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"
work=$(mktemp -d)
bluestore="$work/bluestore"
pool=cephmark-test-rbd-scenarios
cleanup() {
  [ -f "$bluestore/ceph.conf" ] && "$CEPHMARK" cluster down --dir "$bluestore" >/dev/null 2>&1
  ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT
scenarios="$CEPHMARK_SOURCE_DIR/scenarios"


# expect_files DIR: a scenario's results folder has its files
expect_files() {
  for f in results.json results.yaml params.yaml phases.csv series.csv; do
    checks=$((checks + 1))
    if [ ! -s "$1/$f" ]; then failures=$((failures + 1)); echo "FAIL: $1/$f is missing or empty"; fi
  done
}

# expect_no_pools [CONF]: no pool a scenario created is left
expect_no_pools() {
  checks=$((checks + 1))
  local left
  left=$(ceph ${1:+-c "$1"} osd pool ls 2>/dev/null | grep '^cephmark-rbd-' || true)
  if [ -n "$left" ]; then
    failures=$((failures + 1)); echo "FAIL: after '$last_command': pools left: $left"
    for p in $left; do ceph ${1:+-c "$1"} osd pool rm "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1; done
  fi
}

# fio's lines for one data direction, whatever the numbers
expect_fio_block() {
  local dir=$1
  expect_stdout "^  $dir: IOPS=[0-9.]+k?, BW=[0-9.]+[KMG]?i?B/s \([0-9.]+[kMG]?B/s\)\([0-9.]+[KMG]?i?B/[0-9]+msec\)"
  expect_stdout '^     lat \((nsec|usec|msec)\): min=[0-9.]+k?, max=[0-9.]+k?, avg= *[0-9.]+, stdev= *[0-9.]+$'
  expect_stdout '^    clat percentiles \((nsec|usec|msec)\):$'
  expect_stdout '^     \| *[0-9.]+th=\[ *[0-9]+\],'
  expect_stdout '^Run status group 0 \(all jobs\):$'
}

# --- rbd-4k-randwrite: the seed's fio job, time-bound --------------------------------------
run_cli 0 run "$scenarios/rbd-4k-randwrite.lua" -p size=32M -p seconds=1 -o "$work/randwrite"
expect_stdout '^rbd_iodepth32: \(g=0\): rw=randwrite, bs=\(R\) 4096B-4096B, \(W\) 4096B-4096B, \(T\) 4096B-4096B, ioengine=rbd, iodepth=32$'
expect_stdout '^rbd_iodepth32: \(groupid=0, jobs=1\): err= 0: pid=[0-9]+: [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [0-9]{4}$'
expect_fio_block write
expect_stdout '; 0 zone resets$'
expect_stdout '^   bw \(  KiB/s\): min= *[0-9]+, max= *[0-9]+, per=[0-9.]+%, avg= *[0-9.]+, stdev= *[0-9.]+, samples=[12]$'
expect_stdout '^     issued rwts: total=0,[0-9]+,0,0 short=0,0,0,0 dropped=0,0,0,0$'
expect_stdout '^  WRITE: bw=[0-9.]+[KMG]?i?B/s \([0-9.]+[kMG]?B/s\), '
expect_stdout '^image cephmark-rbd-4k-randwrite-rbd/cephmark-rbd-4k-randwrite: removed$'
expect_stdout "^results: $work/randwrite\$"
expect_files "$work/randwrite"
json_check "$work/randwrite" '#r.phases == 1 and r.phases[1].name == "randwrite" and r.phases[1].status == "ok"' "one randwrite phase"
json_check "$work/randwrite" 'r.phases[1].result.ops > 0 and r.phases[1].result.io_type == "write" and r.phases[1].result.pattern == "rand"' "4K random writes"
json_check "$work/randwrite" 'r.phases[1].options.threads == 32 and r.phases[1].result.elapsed < 3' "iodepth 32, time-bound"
json_check "$work/randwrite" 'r.complete and r.status == "ok" and r.pools[1].deleted' "complete, pool deleted"
expect_no_pools
# the issued writes are the result's ops
issued=$(sed -n 's/^     issued rwts: total=0,\([0-9]*\),.*/\1/p' "$out_file")
json_check "$work/randwrite" "r.phases[1].result.ops == ${issued:-0}" "fio's issued count is the result's ops"

# without seconds: the image's size, once over, as fio's job does
run_cli 0 run "$scenarios/rbd-4k-randwrite.lua" -p size=16M -p iodepth=16 -p job=small -o "$work/once"
expect_stdout '^small: \(g=0\): rw=randwrite, .*, iodepth=16$'
expect_stdout '^  write: IOPS=[0-9.]+k?, BW=[0-9.]+[KMG]?i?B/s \([0-9.]+[kMG]?B/s\)\(16\.0MiB/[0-9]+msec\); 0 zone resets$'
expect_stdout '^     issued rwts: total=0,4096,0,0 short=0,0,0,0 dropped=0,0,0,0$'
expect_stdout '^  WRITE: bw=.*, io=16\.0MiB \(16\.8MB\), run=[0-9]+-[0-9]+msec$'
json_check "$work/once" 'r.phases[1].result.ops == 4096 and r.phases[1].result.bytes == 16777216' "16M in 4K writes"
expect_no_pools

# fio's pool= and rbdname=: an existing pool and image are used and kept
ceph osd pool create "$pool" 8 >/dev/null 2>&1
rbd pool init "$pool"
rbd create --size 16M "$pool/image01"
run_cli 0 run "$scenarios/rbd-4k-randwrite.lua" -p pool="$pool" -p image=image01 -p seconds=1 -o "$work/existing"
expect_fio_block write
checks=$((checks + 1))
if ! rbd info "$pool/image01" >/dev/null 2>&1; then failures=$((failures + 1)); echo "FAIL: the existing image is gone"; fi
checks=$((checks + 1))
if [ "$(rbd ls "$pool")" != image01 ]; then failures=$((failures + 1)); echo "FAIL: images in $pool: $(rbd ls "$pool" | tr '\n' ' ')"; fi
json_check "$work/existing" 'r.pools[1].reused and not r.pools[1].deleted' "the existing pool is kept"
run_cli 2 run "$scenarios/rbd-4k-randwrite.lua" -p pool="$pool" -p image=nope -p seconds=1 -o "$work/nope"
expect_stderr_line "cephmark: image 'nope' does not exist in pool '$pool'"
expect_stderr_lines 1

# --- rbd-mixed-75-25: prepare, then 75/25 random reads and writes ---------------------------
run_cli 0 run "$scenarios/rbd-mixed-75-25.lua" -p size=16M -p seconds=1 -o "$work/mixed"
expect_stdout '^rbd_randrw: \(g=0\): rw=randrw, bs=\(R\) 4096B-4096B, \(W\) 4096B-4096B, \(T\) 4096B-4096B, ioengine=rbd, iodepth=64$'
expect_stdout '^\[1\] prepare  '
expect_stdout '^\[2\] randrw  '
# one block over both directions unless the result carries each one's latency
if grep -q '^  read: IOPS=' "$out_file"; then
  expect_fio_block read
  expect_fio_block write
else
  expect_fio_block mixed
  expect_stdout '^  MIXED: bw='
fi
expect_stdout '^     issued rwts: total=[0-9]+,[0-9]+,0,0 short=0,0,0,0 dropped=0,0,0,0$'
expect_stdout '^image cephmark-rbd-mixed-75-25-rbd/cephmark-rbd-mixed-75-25: removed$'
expect_files "$work/mixed"
json_check "$work/mixed" '#r.phases == 2 and r.phases[1].name == "prepare" and r.phases[2].name == "randrw"' "prepare and randrw"
json_check "$work/mixed" 'r.phases[1].result.ops == 4096' "prepare wrote the whole image once"
json_check "$work/mixed" 'r.phases[2].result.reads + r.phases[2].result.writes == r.phases[2].result.ops' "reads + writes = ops"
json_check "$work/mixed" 'r.phases[2].result.reads > 0.6 * r.phases[2].result.ops and r.phases[2].result.reads < 0.9 * r.phases[2].result.ops' "about 75% reads"
json_check "$work/mixed" 'r.phases[2].result.verify_failures == 0 and r.phases[2].result.errors == 0 and r.status == "ok"' "reads verified"
expect_no_pools

# --- rbd-replica-vs-ec: refused clearly on memstore, compared on bluestore ------------------
store=$(ceph osd metadata 0 -f json 2>/dev/null | sed -n 's/.*"osd_objectstore": *"\([a-z]*\)".*/\1/p')
if [ "$store" = memstore ]; then
  run_cli 2 run "$scenarios/rbd-replica-vs-ec.lua" -p size=16M -p seconds=1 -o "$work/ec-memstore"
  expect_stderr "^cephmark: pool 'cephmark-rbd-replica-vs-ec-ec': the monitors refuse allow_ec_overwrites \(pool must only be stored on bluestore for scrubbing to work: osd\.[0-9]+ uses memstore\); an RBD image can keep its data in an erasure-coded pool only on bluestore OSDs \(cephmark cluster up --bluestore\)$"
  expect_stderr_lines 1
  json_check "$work/ec-memstore" 'r.complete == false and r.status == "error" and #r.phases == 0' "nothing measured"
  expect_no_pools
fi

run_cli 0 cluster up --bluestore --dir "$bluestore" --quiet
bconf="$bluestore/ceph.conf"
run_cli 0 run "$scenarios/rbd-replica-vs-ec.lua" -c "$bconf" -p size=16M -p seconds=1 -o "$work/ec"
expect_stdout '^pool ec: allow_ec_overwrites = true$'
expect_stdout '^image ec: cephmark-rbd-replica-vs-ec-replica/cephmark-rbd-replica-vs-ec-ec, 16M, data in cephmark-rbd-replica-vs-ec-ec$'
expect_stdout '^comparison by image \(baseline replica, marked \*; one run each: the uncertainty of these changes is unknown, --repeats N measures it\)$'
expect_stdout '^phase +image +IOPS +MiB/s +p50 ms +p99 ms$'
expect_stdout '^randwrite +replica \* +[0-9]+ '
expect_stdout '^randwrite +ec +[0-9]+ \([+-][0-9.]+%\) '
expect_stdout '^randread +ec +[0-9]+ \([+-][0-9.]+%\) '
expect_stdout '^image cephmark-rbd-replica-vs-ec-replica/cephmark-rbd-replica-vs-ec-ec: removed$'
expect_files "$work/ec"
json_check "$work/ec" '#r.phases == 6 and r.phases[1].variant.image == "replica" and r.phases[4].variant.image == "ec"' "three phases per image, replica first"
json_check "$work/ec" 'r.phases[3].name == "randread" and r.phases[3].result.verify_failures == 0 and r.phases[6].result.verify_failures == 0' "reads verified on both"
json_check "$work/ec" 'r.status == "ok" and #r.comparisons == 1 and #r.comparisons[1].rows == 4' "the comparison"
json_check "$work/ec" 'r.pools[2].erasure_code_profile.k == "2" and r.pools[2].erasure_code_profile.m == "1"' "the EC profile"
expect_no_pools "$bconf"
run_cli 0 cluster down --dir "$bluestore"
finish
