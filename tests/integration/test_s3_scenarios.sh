# The object-gateway scenarios against radosgw: s3-put-get on the suite's cluster (phases,
# comparison, results without secrets), and rgw-replica-vs-ec: on the suite's cluster, whose
# radosgw started before the placement targets existed, it prepares them and stops with the
# one-line restart message; after `cephmark cluster restart client.rgw.cephmark` (the
# documented order) it writes each bucket's data into its own pool and compares them;
# rgw-mixed compares the two placement targets under its mix; both run on two agents too,
# each agent's buckets made in each target (its objects land in that target's pool) and
# every bucket gone afterwards; mode=remove cleans up.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/agents.sh"
work=$(mktemp -d)
control=cephmark-s3-scenarios-test-$$
pids=()
cleanup() {
  stop_agents
  rm -rf "$work" "$out_file" "$err_file"
}
trap_cleanup
scenarios=$CEPHMARK_SOURCE_DIR/scenarios

check() {
  checks=$((checks + 1))
  if ! eval "$1"; then failures=$((failures + 1)); echo "FAIL: $2 ($1)"; fi
}

secret=$(s3_setting secret_key)

# ---- s3-put-get ------------------------------------------------------------------------------
run_cli 0 run "$scenarios/s3-put-get.lua" -p sizes=4K,64K -p objects=40 -p seconds=1 -p threads=8 \
  -p progress=false -o "$work/s3"
expect_stdout "^\[1\] put size=4K"
expect_stdout "^  = get size=64K: [0-9]+ ops in .* 0 errors$"
expect_stdout "^comparison by size \(baseline 4K, marked \*; one run each: the uncertainty of these changes is unknown, --repeats N measures it\)$"
expect_stdout "^get +64K +[0-9.]+ \([-+][0-9.]+%\)"
check '[ -s "$work/s3/results.json" ]' "s3-put-get writes results"
check '! grep -rqF -- "$secret" "$work/s3" "$out_file" "$err_file"' "no secret in output or results"

# ---- rgw-replica-vs-ec on a radosgw that started before its placement targets ------------------
run_cli 2 run "$scenarios/rgw-replica-vs-ec.lua" -p objects=4 -p seconds=1 -o "$work/ec1"
expect_stderr "^cephmark: radosgw does not serve placement target cephmark-replica yet .* restart radosgw and run again"
# ---- the documented order: restart radosgw, run again -------------------------------------------
run_cli 0 cluster restart client.rgw.cephmark --dir "$CEPHMARK_CLUSTER_DIR"
run_cli 0 run "$scenarios/rgw-replica-vs-ec.lua" -p objects=20 -p object_size=16K -p seconds=1 \
  -p threads=8 -p progress=false -o "$work/ec4"
expect_stdout "^pool cephmark-rgw-replica-data holds 20 RADOS objects"
expect_stdout "^pool cephmark-rgw-ec-data holds 20 RADOS objects"
expect_stdout "^comparison by data_pool \(baseline replica, marked \*; one run each: the uncertainty of these changes is unknown, --repeats N measures it\)$"
expect_stdout "^get +ec +[0-9.]+ \([-+][0-9.]+%\)"
# ---- rgw-mixed on the same placement targets: the mix replicated against erasure-coded -------
run_cli 0 run "$scenarios/rgw-mixed.lua" -p placements=cephmark-replica,cephmark-ec -p buckets=2 \
  -p objects=40 -p seconds=1 -p threads=4 -p progress=false -o "$work/mixed"
expect_stdout "^\[3\] prefill placement=cephmark-ec"
expect_stdout "^comparison by placement \(baseline cephmark-replica"
expect_stdout "^mixed +cephmark-ec +[0-9.]+ \([-+][0-9.]+%\)"
# ---- both on two agents: each agent's buckets in each placement target ----------------------
start_agent p1
start_agent p2
wait_registered p1 p2
buckets() { # the run's buckets left: cephmark-replica-*, cephmark-ec-*, cephmark-mixed-*
  radosgw-admin -c "$CEPH_CONF" bucket list 2>/dev/null |
    python3 -c 'import json, sys; print(" ".join(sorted(b for b in json.load(sys.stdin) if b.startswith(("cephmark-replica-", "cephmark-ec-", "cephmark-mixed-")))) or "none")'
}
run_cli 0 run "$scenarios/rgw-replica-vs-ec.lua" -p objects=10 -p object_size=16K -p seconds=1 \
  -p threads=4 -p progress=false --agents p1,p2 --control-pool "$control" -o "$work/ec-agents"
expect_stdout "^pool cephmark-rgw-replica-data holds [1-9][0-9]* RADOS objects \(20 16K gateway objects written\)"
expect_stdout "^pool cephmark-rgw-ec-data holds [1-9][0-9]* RADOS objects \(20 16K gateway objects written\)"
expect_stdout "^comparison by data_pool \(baseline replica"
check '[ "$(buckets)" = none ]' "rgw-replica-vs-ec on agents removed its buckets"
run_cli 0 run "$scenarios/rgw-mixed.lua" -p placements=cephmark-replica,cephmark-ec -p buckets=1 \
  -p objects=10 -p seconds=1 -p threads=2 -p progress=false --agents p1,p2 --control-pool "$control" \
  -o "$work/mixed-agents"
expect_stdout "^comparison by placement \(baseline cephmark-replica"
check '[ "$(buckets)" = none ]' "rgw-mixed on agents removed its buckets"
run_cli 0 run "$scenarios/rgw-replica-vs-ec.lua" -p mode=remove -o "$work/ec5"
expect_stdout "removed placement target cephmark-ec and pool cephmark-rgw-ec-data"

finish
