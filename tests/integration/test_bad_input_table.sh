# Bad input against the real local cluster, as one table (bad_input_cluster_table.txt):
# pools, images and containers that do not exist, sizes and thread counts out of range,
# k+m and size beyond the cluster, a size-1 pool the mon does not allow, objects above
# osd_max_object_size, a 0 s phase, a results folder that is a file, a missing keyring and
# an unreadable one (as an unprivileged user: root reads any file), an unreachable gateway.
# The cluster's config is the same afterwards (cephmark never allows size 1 itself).
# Each gives its exact one-line message and exit code (tests/lib/bad_input_table.sh).
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/bad_input_table.sh"
W=$(mktemp -d)
chmod 755 "$W"
pool=cephmark-bad-input-table
trap 'ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1; rm -rf "$W" "$out_file" "$err_file"' EXIT
ceph osd pool create "$pool" 8 >/dev/null 2>&1

scenario='return require("cephmark").scenario'
printf '%s{name="bi-ec", pools={a={type="erasure", k=8, m=4}}, run=function(s) end}\n' "$scenario" >"$W/ec.lua"
printf '%s{name="bi-size", pools={a={type="replicated", size=5}}, run=function(s) end}\n' "$scenario" >"$W/size.lua"
printf '%s{name="bi-size1", pools={a={type="replicated", size=1}}, run=function(s) end}\n' "$scenario" >"$W/size1.lua"
printf 'local c = require("cephmark.connection").connect()\nlocal p = assert(c:pool("%s"))\np:bench{op="write", seconds=0}\n' "$pool" >"$W/zero.lua"
printf 'an operator file\n' >"$W/afile"
config_before=$(ceph config dump 2>/dev/null | md5sum)
printf 'local c = require("cephmark.connection").connect()\nlocal p = assert(c:pool("%s"))\np:bench{op="write", seconds=1, block_size="200M"}\n' "$pool" >"$W/big.lua"
# object size distributions and access distributions refused before anything is written
bench_in_pool='local c = require("cephmark.connection").connect()\nlocal p = assert(c:pool("%s"))\np:bench{op="%s", ops=1, %s}\n'
printf "$bench_in_pool" "$pool" write 'object_size={{"4K"}, {"64K", 30}}' >"$W/sz1.lua"
printf "$bench_in_pool" "$pool" write 'object_size={{"4K", 0}, {"64K", 0}}' >"$W/sz2.lua"
printf "$bench_in_pool" "$pool" write 'object_size={"64K", "4K"}' >"$W/sz3.lua"
printf "$bench_in_pool" "$pool" write 'object_size={"4K", "64K"}, block_size="4K"' >"$W/sz4.lua"
printf "$bench_in_pool" "$pool" rand 'access="zipf:0"' >"$W/ac1.lua"
printf "$bench_in_pool" "$pool" rand 'access="gauss"' >"$W/ac2.lua"
printf "$bench_in_pool" "$pool" write 'access="zipf:1.1"' >"$W/ac3.lua"
printf 'local c = require("cephmark.connection").connect()\nlocal p = assert(c:pool("cephmark-no-such-pool"))\n' >"$W/nopool.lua"
printf 'require("cephmark.connection").connect()\n' >"$W/connect.lua"
printf 'local rgw = require "cephmark.rgw"\nlocal conn = rgw.swift_connect {}\nassert(conn:list("cephmark-no-such-container"))\n' >"$W/container.lua"
# parts below radosgw's minimum: its own EntityTooSmall, the upload aborted, the bucket removed
cat >"$W/mpsmall.lua" <<'LUA'
local c = require("cephmark.rgw").s3_connect {}
assert(c:create_bucket("cephmark-bi-mp"))
local guard <close> = setmetatable({}, { __close = function() assert(#c:list_uploads("cephmark-bi-mp") == 0); c:delete_bucket("cephmark-bi-mp") end })
c:bench { op = "put", bucket = "cephmark-bi-mp", objects = 1, size = "3M", threads = 1, prefix = "small", multipart = { part_size = "1M", parts_in_flight = 3 } }
LUA
bench_script() { # NAME OPTIONS: a script that runs one pool:bench in the empty pool
  printf 'local c = require("cephmark.connection").connect()\nlocal p = assert(c:pool("%s"))\np:bench{%s}\n' "$pool" "$2" >"$W/$1.lua"
}
bench_script kpo 'op="write", ops=1, write_to="omap", keys_per_op=0'
bench_script wto 'op="write", ops=1, write_to="omap,disk"'
bench_script kbig 'op="write", ops=1, write_to="omap", keys_per_op=1024, block_size="1M"'
bench_script ksize 'op="write", ops=1, write_to="omap", key_size="8K"'
bench_script ow 'op="overwrite", ops=1, run_name="nothing"'
bench_script seed 'op="overwrite", ops=1, seed=-1'
bench_script mx1 'op="mixed", ops=1, mix={read=60, fetch=40}'
bench_script mx2 'op="mixed", ops=1, mix={read=-1, stat=2}'
bench_script mx3 'op="mixed", ops=1, mix={read=0}'
bench_script mx4 'op="rand", ops=1, mix={read=1}'
bench_script mx5 'op="mixed", ops=1, mix={read=1}, run_name="nothing"'
printf '%s{name="bi-ecow", pools={a={type="replicated", ec_overwrites=true}}, run=function(s) end}\n' "$scenario" >"$W/ecow.lua"
sed "s#^keyring = .*#keyring = $W/no-keyring#" "$CEPH_CONF" >"$W/nokeyring.conf"

# POOL stands for the existing empty pool (a word the table runner leaves alone)
sed "s/POOL/$pool/g" "$CEPHMARK_SOURCE_DIR/tests/integration/bad_input_cluster_table.txt" >"$W/table.txt"
run_table "$W/table.txt"

# An unreadable keyring: only an unprivileged user can be refused a file.
if id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
  cp "$(awk -F' = ' '/^keyring = /{print $2; exit}' "$CEPH_CONF")" "$W/keyring"
  chmod 600 "$W/keyring"
  sed "s#^keyring = .*#keyring = $W/keyring#" "$CEPH_CONF" >"$W/unreadable.conf"
  chmod 644 "$W/unreadable.conf" "$W/connect.lua"
  runuser -u nobody -- "$CEPHMARK" run "$W/connect.lua" -c "$W/unreadable.conf" >"$out_file" 2>"$err_file"
  last_status=$? last_command="cephmark run connect.lua (as nobody, keyring mode 0600 of root)"
  checks=$((checks + 1))
  [ "$last_status" = 2 ] || { failures=$((failures + 1)); echo "FAIL: $last_command exited $last_status, expected 2"; }
  expect_stderr_line "cephmark: cannot connect to the cluster as client.admin using $W/unreadable.conf: Permission denied"
  expect_stderr_lines 1
  cases=$((cases + 1))
fi
# nothing changed the cluster's config (size 1 stays refused), and W/afile is as it was
checks=$((checks + 1))
if [ "$(ceph config dump 2>/dev/null | md5sum)" != "$config_before" ]; then
  failures=$((failures + 1)); echo "FAIL: the cluster's config changed"; ceph config dump | sed 's/^/  /'
fi
checks=$((checks + 1))
[ "$(cat "$W/afile")" = "an operator file" ] || { failures=$((failures + 1)); echo "FAIL: $W/afile changed"; }
checks=$((checks + 1))
if ceph osd pool ls | grep -q '^cephmark-bi-'; then
  failures=$((failures + 1)); echo "FAIL: a refused pool was left behind"
fi
echo "test_bad_input_table.sh: $cases cases"
finish
