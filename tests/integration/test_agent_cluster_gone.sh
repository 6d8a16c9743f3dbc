#!/bin/bash
# An agent whose cluster goes away still stops on a signal. Two agents register on a
# cluster of the test's own (no radosgw, no mgr); the cluster is taken down under them;
# once their heartbeats fail (each call to the cluster is bounded), SIGINT ends one and
# SIGTERM the other within a bound, each saying why its heartbeats failed. Before the
# control channel's calls were bounded, an agent blocked forever in its heartbeat's omap
# write and no signal ended it.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/agents.sh"
work=$(mktemp -d)
control=cephmark-gone-test-$$
cluster=$work/cluster
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  wait 2>/dev/null
  "$CEPHMARK" cluster down --dir "$cluster" >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap_cleanup

run_cli 0 cluster up --dir "$cluster" --quiet
export CEPH_CONF=$cluster/ceph.conf
start_agent gone-int
start_agent gone-term
wait_registered gone-int gone-term

run_cli 0 cluster down --dir "$cluster"
for name in gone-int gone-term; do
  poll 90 grep -q "heartbeat failed" "$work/$name.log" || tail -5 "$work/$name.log"
done

gone() { ! kill -0 "$1" 2>/dev/null; }
kill -INT "${pids[0]}"
kill -TERM "${pids[1]}"
poll 60 gone "${pids[0]}" || echo "  (SIGINT did not end the agent whose cluster is gone)"
poll 60 gone "${pids[1]}" || echo "  (SIGTERM did not end the agent whose cluster is gone)"
for name in gone-int gone-term; do
  tail -3 "$work/$name.log" | sed "s/^/  $name: /"
done
finish
