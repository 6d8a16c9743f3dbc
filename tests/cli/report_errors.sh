#!/bin/bash
# CLI transcript tests of `cephmark report` without a cluster: no folder, a missing folder,
# a folder that holds no results, broken JSON, a JSON file that is not a results document,
# an output path that cannot be written, and a good folder (report written, path printed).
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

run_cli 2 report
expect_stderr_line "cephmark: report: give at least one results folder (see \`cephmark report --help\`)"
expect_stderr_lines 1

run_cli 2 report "$work/missing"
expect_stderr_line "cephmark: report: '$work/missing' does not exist"

mkdir "$work/empty"
run_cli 2 report "$work/empty"
expect_stderr_line "cephmark: report: '$work/empty' is not a results folder (no results.json in it)"

mkdir "$work/broken"
printf '{"phases": [' >"$work/broken/results.json"
run_cli 2 report "$work/broken"
expect_stderr "^cephmark: report: $work/broken/results.json is not valid JSON: "
expect_stderr_lines 1

mkdir "$work/other"
printf '{"name": "not a benchmark"}\n' >"$work/other/results.json"
run_cli 2 report "$work/other"
expect_stderr_line "cephmark: report: $work/other/results.json is not a cephmark results document: it holds neither phases nor a result"

run_cli 2 report --bogus "$work/other"
expect_stderr_line "cephmark: report: unknown option '--bogus' (see \`cephmark report --help\`)"

mkdir "$work/good"
cat >"$work/good/results.json" <<'JSON'
{"command": "rados-bench", "pool": "bench", "mode": "write",
 "result": {"op": "write", "ops": 3, "bytes": 12288, "elapsed": 1.0, "bandwidth_mib": 0.0117, "iops": 3,
            "lat": {"avg": 0.002, "percentiles": [{"p": 50, "value": 0.002}, {"p": 99, "value": 0.003}]},
            "series": [{"sec": 1, "cur_mib": 0.0117, "iops": 3, "avg_lat": 0.002, "p99": 0.003, "max_lat": 0.003}]}}
JSON
run_cli 2 report "$work/good" -o "$work/no/such/dir/report.html"
expect_stderr "^cephmark: report: cannot write $work/no/such/dir/report.html: "

run_cli 0 report "$work/good"
expect_stdout "^report: $work/good/report.html$"
checks=$((checks + 1))
if ! grep -q '<svg class="chart" data-kind="line" data-points="[1-9]' "$work/good/report.html"; then
  failures=$((failures + 1))
  echo "FAIL: $work/good/report.html has no chart with data points"
fi

# a results document whose series entries are numbers, not per-second tables
mkdir "$work/numbers"
sed 's/"series": \[.*\]}}$/"series": [1, 2, 3]}}/' "$work/good/results.json" >"$work/numbers/results.json"
run_cli 2 report "$work/numbers"
expect_stderr_line "cephmark: report: $work/numbers/results.json is not a cephmark results document: result.series[1] is a number, expected a table (one per second)"
expect_stderr_lines 1
mkdir "$work/phases"
printf '{"phases": [{"name": "write", "result": {"ops": 1, "lat": {"percentiles": [5]}}, "series": []}]}\n' \
  >"$work/phases/results.json"
run_cli 2 report "$work/phases"
expect_stderr_line "cephmark: report: $work/phases/results.json is not a cephmark results document: phases[1].result.lat.percentiles[1] is a number, expected a table {p, value}"
expect_stderr_lines 1

run_cli 0 report "$work/good" "$work/good" -o "$work/both.html" --title "before and after"
expect_stdout "^report: $work/both.html$"
checks=$((checks + 1))
if ! grep -q '<title>before and after</title>' "$work/both.html" || ! grep -q 'id="across"' "$work/both.html"; then
  failures=$((failures + 1))
  echo "FAIL: $work/both.html lacks its title or the across-runs section"
fi

finish
