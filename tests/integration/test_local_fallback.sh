# With no cluster configured (no -c, no CEPH_CONF, no /etc/ceph/ceph.conf), `cephmark run`
# says so on one line and uses the local cluster, starting it when the script connects.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
if [ -e /etc/ceph/ceph.conf ]; then
  echo "skipped: /etc/ceph/ceph.conf exists on this machine, so a cluster is configured"
  exit 0
fi
dir=$(mktemp -d /tmp/cephmark-fallback.XXXXXX)
work=$(mktemp -d)
trap '"$CEPHMARK" cluster down --dir "$dir" >/dev/null 2>&1; rm -rf "$work" "$out_file" "$err_file"' EXIT
printf 'local c = require("cephmark.connection").connect()\nprint("osds up", (c:osd_count()))\n' >"$work/connect.lua"
unset CEPH_CONF
export CEPHMARK_CLUSTER_DIR="$dir"
run_cli 0 run "$work/connect.lua"
expect_stderr_line "cephmark: no cluster configured (no -c, CEPH_CONF or /etc/ceph/ceph.conf); using the local cluster in $dir"
expect_stdout '^osds up	3$'
# a script that never connects starts nothing
"$CEPHMARK" cluster down --dir "$dir" >/dev/null 2>&1
printf 'print("no cluster needed")\n' >"$work/plain.lua"
run_cli 0 run "$work/plain.lua"
expect_stdout '^no cluster needed$'
checks=$((checks + 1))
if [ -e "$dir/ceph.conf" ]; then failures=$((failures + 1)); echo "FAIL: a cluster was started for a script that never connects"; fi
finish
