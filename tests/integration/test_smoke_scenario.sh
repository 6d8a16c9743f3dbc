# The end-to-end scenario against the real local cluster: objects written to a
# replicated pool and to an erasure-coded pool are read back and compared byte for byte.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"

run_cli 0 run "$CEPHMARK_SOURCE_DIR/scenarios/smoke-rados.lua" -p objects=16 -p size=65536
expect_stdout '^cluster [0-9a-f-]+: 3 OSDs up$'
expect_stdout '^cephmark-smoke-replicated +16 +1048576 +[0-9.]+ +[0-9.]+ +0$'
expect_stdout '^cephmark-smoke-ec +16 +1048576 +[0-9.]+ +[0-9.]+ +0$'
# the pools it created are gone again
pools=$(ceph osd pool ls 2>/dev/null)
checks=$((checks + 1))
if echo "$pools" | grep -q cephmark-smoke; then
  failures=$((failures + 1)); echo "FAIL: smoke pools left behind: $pools"
fi
finish
