#!/bin/bash
# The HTML report of real runs on the local cluster, loaded in headless Chromium: a
# replicated-vs-EC comparison and a small threads x block-size sweep, each written by
# `cephmark run` as report.html, and both side by side through `cephmark report`. Every
# chart must render with data marks, with no console errors and no network fetches;
# screenshots are kept in the build tree (test-artifacts/).
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT
artifacts=${CEPHMARK_BUILD_DIR:-$work}/test-artifacts
mkdir -p "$artifacts"
# the browser's profile and Chromium's own scratch folders go into a temp dir of the test's,
# which must be empty again after every check: nothing of the browser is left behind
check_browser() {
  checks=$((checks + 2))
  mkdir -p "$work/browser-tmp"
  if ! TMPDIR="$work/browser-tmp" python3 "$CEPHMARK_SOURCE_DIR/tests/lib/browser_check.py" "$@"; then
    failures=$((failures + 1))
    echo "FAIL: browser check of $1"
  fi
  local left
  left=$(ls -A "$work/browser-tmp")
  [ -z "$left" ] || { failures=$((failures + 1)); echo "FAIL: the browser check left behind: $left"; }
}

run_cli 0 run "$CEPHMARK_SOURCE_DIR/scenarios/ec-vs-replica.lua" -p seconds=2 -p block_size=64K \
  -p progress=false -o "$work/ec"
expect_stdout "^report: $work/ec/report.html$"
for file in report.html results.json phases.csv series.csv percentiles.csv comparison.csv params.csv pools.csv; do
  checks=$((checks + 1))
  [ -s "$work/ec/$file" ] || { failures=$((failures + 1)); echo "FAIL: $work/ec/$file missing or empty"; }
done
# 2 pools x (write, seq, rand): 4 comparison bar charts, 3 percentile charts, 6 x 2 timelines,
# and the cluster's side: 6 "where the time goes" charts (one per phase and pool) and 3 of
# CPU per op (one per phase name)
check_browser "$work/ec/report.html" "$artifacts/report-ec-vs-replica.png" 28
expect_count() {
  checks=$((checks + 1))
  local got
  got=$(grep -c -- "$2" "$3")
  [ "$got" = "$1" ] || { failures=$((failures + 1)); echo "FAIL: $3: $got lines match '$2', expected $1"; }
}
expect_count 6 'data-kind="hbar"' "$work/ec/report.html"
expect_count 3 'aria-label="[a-z]*: CPU per op by variant"' "$work/ec/report.html"

run_cli 0 run "$CEPHMARK_SOURCE_DIR/scenarios/sweep-t-b.lua" -p threads=1,8 -p block_sizes=4K,64K \
  -p seconds=1 -p progress=false -o "$work/sweep"
expect_stdout "^report: $work/sweep/report.html$"
# 2 dimensions x 3 metrics sweep charts, 4 comparison bars, 1 percentile chart, 4 x 2 timelines,
# 4 "where the time goes" charts (one per point) and 1 of CPU per op
check_browser "$work/sweep/report.html" "$artifacts/report-sweep-t-b.png" 24

run_cli 0 report "$work/ec" "$work/ec" "$work/sweep" -o "$work/all.html" --title "three runs"
expect_stdout "^report: $work/all.html$"
check_browser "$work/all.html" "$artifacts/report-three-runs.png" 68

finish
