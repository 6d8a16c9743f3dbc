# Ownership: cephmark removes or overwrites only what it created, or what the operator
# named explicitly and unambiguously. In a pool that holds the operator's own objects, the
# operator's `rados bench --no-cleanup` run and the operator's kept cephmark run:
# - rados-cleanup with --prefix "" (or an unset variable) is refused;
# - rados-cleanup with neither metadata nor --prefix is refused, naming what it sees;
# - a write under the name of the kept run is refused, naming it;
# - a scenario reusing the pool writes under a run name of its own, and a cleanup phase
#   with a misspelt run name is refused (no fallback to a prefix);
# - format 1 metadata (earlier cephmark versions) is still read;
# and after each step the pool's listing and the md5 of every object are unchanged, and
# `rados-bench seq` still reads the kept run.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
pool=cephmark-own-operator
cleanup() {
  ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  checks=$((checks + 1))
  "$@" || { failures=$((failures + 1)); echo "FAIL: $what"; }
}

# the pool's listing, and each object's md5
snapshot() {
  rados -p "$pool" ls | sort >"$work/$1.ls"
  while read -r object; do
    printf '%s %s\n' "$object" "$(rados -p "$pool" get "$object" - | md5sum | cut -d' ' -f1)"
  done <"$work/$1.ls" >"$work/$1.sums"
}
# The operator's pool: its own objects, its own rados bench run (kept), and its kept
# cephmark run. Made again after a step that changed it, so that each step is judged alone.
make_pool() {
  ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
  ceph osd pool create "$pool" 8 >/dev/null 2>&1
  ceph osd pool application enable "$pool" operator >/dev/null 2>&1
  for i in 1 2 3 4 5; do
    head -c 10000 /dev/urandom >"$work/own-$i"
    rados -p "$pool" put "own-$i" "$work/own-$i"
  done
  rados -p "$pool" bench 1 write -b 4K -t 4 --max-objects 40 --no-cleanup >/dev/null 2>&1
  "$CEPHMARK" rados-bench -p "$pool" 1 write -b 4K -t 4 --max-objects 30 --no-cleanup >/dev/null 2>&1
  snapshot before
}
make_pool
check "the operator's rados bench run is there" grep -q '^benchmark_last_metadata$' "$work/before.ls"
check "the operator's kept cephmark run is there" grep -q '^cephmark_bench_last_metadata$' "$work/before.ls"
unchanged() {
  snapshot after
  local before_count after_count
  before_count=$(wc -l <"$work/before.ls")
  after_count=$(wc -l <"$work/after.ls")
  check "$1: the pool's listing is unchanged ($before_count objects before, $after_count after)" \
    cmp -s "$work/before.ls" "$work/after.ls"
  check "$1: every object's md5 is unchanged" cmp -s "$work/before.sums" "$work/after.sums"
  cmp -s "$work/before.sums" "$work/after.sums" || make_pool
}

# 1. an empty prefix, given or from an unset variable
run_cli 2 rados-cleanup -p "$pool" --prefix ""
expect_stderr_line "cephmark: rados-cleanup: --prefix is empty (an unset variable?): an empty prefix names every object in the pool; refused"
unset PREFIX
run_cli 2 rados-cleanup -p "$pool" --prefix "${PREFIX:-}"
expect_stderr_lines 1
unchanged "rados-cleanup --prefix ''"

# 2. neither metadata nor prefix: what rados' own cleanup would guess at is said instead
run_cli 2 rados-cleanup -p "$pool" --run-name misspelt
expect_stderr "^cephmark: rados-cleanup: no run metadata 'misspelt' in pool $pool and no --prefix: nothing removed; benchmark objects in the pool: benchmark_data_[^ ]+ \(40 objects\), benchmark_data_[^ ]+ \(30 objects\)|benchmark_data_[^ ]+ \(30 objects\), benchmark_data_[^ ]+ \(40 objects\); remove a set with \`cephmark rados-cleanup -p $pool --prefix benchmark_data_"
expect_stderr_lines 1
unchanged "rados-cleanup without metadata"

# 3. a write under the kept run's name
run_cli 2 rados-bench -p "$pool" 1 write -b 4K
expect_stderr "^cephmark: rados-bench: pool '$pool' already holds a kept run 'cephmark_bench_last_metadata' \(host $(hostname), pid [0-9]+, started [0-9-]+ [0-9:]+ UTC, 30 objects\): remove it with \`cephmark rados-cleanup -p $pool --run-name cephmark_bench_last_metadata\`, or write under another run name"
expect_stderr_lines 1
unchanged "a write under the kept run's name"

# 4. a scenario in the reused pool: write/seq/rand under its own names, then a cleanup
# phase with a misspelt run name
cat >"$work/reuse.lua" <<LUA
local cm = require "cephmark"
return cm.scenario {
  name = "reuse-own",
  pools = { data = { name = "$pool", reuse = true } },
  run = function(s, p)
    local pool = s:pool("data")
    s:phase("write", pool, { seconds = 1, threads = 4, block_size = "4K" })
    s:phase("seq", pool, { threads = 4 })
    s:phase("write", pool, { seconds = 1, threads = 4, block_size = "4K", run_name = "mine" })
    s:phase("rand", pool, { seconds = 1, threads = 4, run_name = "mine" })
    s:phase("cleanup", pool, { run_name = "mien" })
  end,
}
LUA
run_cli 2 run "$work/reuse.lua" -o "$work/reuse"
expect_stderr "s:phase\('cleanup'\): no benchmark run 'mien' in pool $pool \(this run wrote 'cephmark_reuse-own_[0-9a-f]{16}', 'mine' there\); nothing was removed$"
expect_stdout "removed [0-9]+ benchmark objects left by this run"
unchanged "a scenario with a misspelt cleanup run name"

# 5. the kept run still reads back
run_cli 0 rados-bench -p "$pool" 1 seq -t 4
expect_stdout '^Verify failures: +0$'
unchanged "rados-bench seq on the kept run"

# 6. metadata of format 1 (written by earlier versions) is read: a copy of the kept run's
# metadata in that format, under a name of the test's own
rados -p "$pool" get cephmark_bench_last_metadata "$work/meta"
{
  echo "cephmark-run-metadata 1"
  grep -E '^(prefix|object_size|block_size|blocks|objects|run_id|host|pid) ' "$work/meta"
} >"$work/meta1"
rados -p "$pool" put format1 "$work/meta1"
run_cli 0 rados-bench -p "$pool" 1 seq -t 4 --run-name format1
expect_stdout '^Verify failures: +0$'
run_cli 2 rados-bench -p "$pool" 1 write -b 4K --run-name format1
expect_stderr "already holds a kept run 'format1' \(written by an earlier cephmark, 30 objects\)"
rados -p "$pool" rm format1
unchanged "format 1 metadata"

finish
