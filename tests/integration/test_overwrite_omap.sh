# Overwrites, appends, omap and xattr workloads from the command line, against the local
# cluster: scenarios/ec-overwrite.lua and scenarios/omap.lua run briefly and verify; an EC
# pool without allow_ec_overwrites is refused with one line, the command that enables it
# and exit 2; rados-bench's --write-omap / --write-xattr write rados bench's keys and read
# them back verified (and a value changed behind its back is found); and an operator's
# object in the same pool (data, omap, xattr) keeps its checksums through every op.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"
work=$(mktemp -d)
pool=cephmark-ow-operator
ec=cephmark-ow-ec
cleanup() {
  ceph config rm mon mon_debug_no_require_bluestore_for_ec_overwrites >/dev/null 2>&1
  for p in "$pool" "$ec"; do ceph osd pool rm "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1; done
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT
scenarios="$CEPHMARK_SOURCE_DIR/scenarios"

# --- scenarios, briefly ------------------------------------------------------------------
# memstore OSDs: the mon allows allow_ec_overwrites only with its developer option
ceph config set mon mon_debug_no_require_bluestore_for_ec_overwrites true >/dev/null
run_cli 0 run "$scenarios/ec-overwrite.lua" -p seconds=1 -p objects=4 -p object_size=128K -p threads=8 -o "$work/ecow"
expect_stdout '^overwrite-4K +ec '
expect_stdout '^overwrite-64K +ec '
json_check "$work/ecow" '#r.phases == 16 and r.complete == true' "ec-overwrite: 16 phases, complete"
json_check "$work/ecow" 'r.phases[2].name == "overwrite-4K" and r.phases[2].result.ops > 0 and r.phases[2].result.errors == 0' "4K overwrites ran"
json_check "$work/ecow" 'r.phases[14].name == "overwrite-64K" and r.phases[14].variant.pool == "ec" and r.phases[14].result.errors == 0' "64K overwrites on EC ran"
json_check "$work/ecow" 'r.phases[15].name == "verify-64K" and r.phases[15].result.ops == 4 and r.phases[15].result.verify_failures == 0 and r.phases[3].result.verify_failures == 0' "verify after overwrites on both pools"
ceph config rm mon mon_debug_no_require_bluestore_for_ec_overwrites >/dev/null 2>&1
# without the option, memstore refuses and the refusal says how to go on
run_cli 2 run "$scenarios/ec-overwrite.lua" -p seconds=1 -p objects=4 -p object_size=128K
expect_stderr "allow_ec_overwrites .*bluestore.*cephmark cluster up --bluestore"
expect_stderr_lines 1

run_cli 0 run "$scenarios/omap.lua" -p seconds=1 -p threads=8 -o "$work/omap"
json_check "$work/omap" '#r.phases == 6 and r.complete == true' "omap: 6 phases"
json_check "$work/omap" 'r.phases[2].name == "get-omap" and r.phases[2].result.ops > 0 and r.phases[2].result.verify_failures == 0 and r.phases[2].result.errors == 0' "omap gets verified"
json_check "$work/omap" 'r.phases[5].name == "get-xattr" and r.phases[5].result.ops > 0 and r.phases[5].result.verify_failures == 0' "xattr gets verified"
json_check "$work/omap" 'r.phases[1].result.keys_per_op == 8 and r.phases[1].result.write_to == "omap"' "omap: the settings are in the result"

# --- an EC pool without allow_ec_overwrites: refused up front ------------------------------
ceph osd erasure-code-profile set cephmark-ow-profile k=2 m=1 crush-failure-domain=osd >/dev/null 2>&1
ceph osd pool create "$ec" 8 8 erasure cephmark-ow-profile >/dev/null 2>&1
cat >"$work/ec.lua" <<LUA
local rados = require "cephmark.rados"
local cluster <close> = assert(rados.connect())
local pool <close> = assert(cluster:pool("$ec"))
pool:bench { op = "write", ops = 4, threads = 2, block_size = "8K", run_name = "e", prefix = "e" }
local ok, err = pcall(pool.bench, pool, { op = "append", ops = 1, block_size = "4K", run_name = "e" })
pool:bench { op = "cleanup", run_name = "e" }
error(err, 0)
LUA
run_cli 2 run "$work/ec.lua"
expect_stderr_line "cephmark: bench: pool '$ec' is erasure-coded without allow_ec_overwrites: append refused; enable it with \`ceph osd pool set $ec allow_ec_overwrites true\` (bluestore OSDs)"
expect_stderr_lines 1
check [ -z "$(rados -p "$ec" ls 2>/dev/null)" ] || fail "objects left in $ec"

# --- the operator's object beside the runs --------------------------------------------------
ceph osd pool create "$pool" 8 >/dev/null 2>&1
ceph osd pool application enable "$pool" operator >/dev/null 2>&1
head -c 20000 /dev/urandom >"$work/own"
rados -p "$pool" put own "$work/own"
rados -p "$pool" setomapval own bench-omap-key-0 operator-value
rados -p "$pool" setxattr own bench-xattr-key-0 operator-attr
fingerprint() {
  { rados -p "$pool" get own - | md5sum; rados -p "$pool" listomapvals own; rados -p "$pool" getxattr own bench-xattr-key-0; rados -p "$pool" stat own | sed 's/.* size/size/'; } 2>&1 | md5sum
}
before=$(fingerprint)

# rados bench's flags: its keys, no object data, read back verified
run_cli 0 rados-bench -p "$pool" 1 write -b 4K -t 4 --max-objects 20 --write-omap --write-xattr --no-cleanup --run-name om
expect_stdout '^Total writes made: +20$'
object=$(rados -p "$pool" ls | grep '_object3$')
check [ "$(rados -p "$pool" listomapkeys "$object")" = "bench-omap-key-0" ] || fail "omap key of $object: $(rados -p "$pool" listomapkeys "$object")"
check [ "$(rados -p "$pool" listxattr "$object")" = "bench-xattr-key-0" ] || fail "xattr of $object: $(rados -p "$pool" listxattr "$object")"
check [ "$(rados -p "$pool" stat "$object" | sed 's/.*size //')" = 0 ] || fail "$object holds data"
run_cli 0 rados-bench -p "$pool" 1 seq -t 4 --run-name om
expect_stdout '^Total reads made: +20$'
expect_stdout '^Verify failures: +0$'
# a value changed behind cephmark's back is found
rados -p "$pool" setomapval "$object" bench-omap-key-0 changed
run_cli 1 rados-bench -p "$pool" 1 seq -t 4 --run-name om
expect_stdout '^Verify failures: +1$'
expect_stderr "verify failed: object .*_object3 offset 0"

run_cli 2 rados-bench -p "$pool" 1 seq -t 4 --run-name om --write-omap
expect_stderr_line "cephmark: rados-bench: --write-object, --write-omap and --write-xattr are for write (seq and rand read what the write run wrote)"
run_cli 0 rados-cleanup -p "$pool" --run-name om

# overwrites, appends and verify in the same pool
cat >"$work/passes.lua" <<LUA
local rados = require "cephmark.rados"
local cluster <close> = assert(rados.connect())
local pool <close> = assert(cluster:pool("$pool"))
local function check(result, what)
  if result.errors ~= 0 or result.verify_failures ~= 0 then error(what .. " failed", 0) end
end
check(pool:bench { op = "write", ops = 32, threads = 4, block_size = "8K", object_size = "32K", run_name = "p", prefix = "own" }, "write")
check(pool:bench { op = "overwrite", ops = 200, threads = 4, block_size = "1K", run_name = "p" }, "overwrite")
check(pool:bench { op = "append", ops = 30, threads = 4, block_size = "2K", run_name = "p" }, "append")
check(pool:bench { op = "verify", run_name = "p" }, "verify")
check(pool:bench { op = "write", ops = 16, threads = 4, block_size = "1K", write_to = "object,omap,xattr", keys_per_op = 4, run_name = "q", prefix = "own" }, "omap write")
check(pool:bench { op = "rand", ops = 50, threads = 4, run_name = "q" }, "omap rand")
print("passes ok")
LUA
run_cli 0 run "$work/passes.lua"
expect_stdout '^passes ok$'
check [ "$(fingerprint)" = "$before" ] || fail "the operator's object changed under the runs"
run_cli 0 rados-cleanup -p "$pool" --run-name p
run_cli 0 rados-cleanup -p "$pool" --run-name q
check [ "$(rados -p "$pool" ls)" = "own" ] || fail "objects besides the operator's left: $(rados -p "$pool" ls | tr '\n' ' ')"
check [ "$(fingerprint)" = "$before" ] || fail "the operator's object changed under the cleanups"
finish
