#!/bin/bash
# CLI transcript tests of `cephmark report` without a cluster: no folder, a missing folder,
# a folder that holds no results, broken JSON, a JSON file that is not a results document
# or has the wrong shape, an output path that cannot be written, and a good folder (report
# written, path printed). Then what -o may replace: device nodes (made here with mknod,
# with /dev/null's and /dev/full's numbers; the real ones are only looked at), a FIFO, a
# folder, a symbolic link, the report's own inputs (also through a hard link): each refused
# with one line and exit 2, left as it was; -o - writes to stdout.
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

# -o: what the report may replace
node_type() { stat -c '%F %t:%T %a' "$1"; }
real_null=$(node_type /dev/null)
real_full=$(node_type /dev/full)
results_md5=$(md5sum <"$work/good/results.json")
refused() { # refused TARGET WHY: one line, exit 2, nothing written
  run_cli 2 report "$work/good" -o "$1"
  expect_stderr_line "cephmark: report: refusing to write the report to $1: $2"
  expect_stderr_lines 1
  expect_stdout_empty
}
expect_stdout_empty() {
  checks=$((checks + 1))
  if [ -s "$out_file" ]; then
    failures=$((failures + 1))
    echo "FAIL: '$last_command': stdout is not empty"
    sed 's/^/  stdout: /' "$out_file" | head -5
  fi
}
expect_same() { # expect_same WHAT EXPECTED GOT
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    failures=$((failures + 1))
    echo "FAIL: $1 changed: was '$2', now '$3'"
  fi
}
if [ "$(id -u)" = 0 ]; then
  # device nodes of our own, with the numbers of /dev/null and /dev/full: a cephmark that
  # renames over them shows it here, and the real ones are never at risk
  mknod -m 666 "$work/null" c 1 3
  mknod -m 666 "$work/full" c 1 7
  refused "$work/null" "it is a character device, not a regular file (-o - writes to stdout)"
  expect_same "$work/null (a node like /dev/null)" "character special file 1:3 666" "$(node_type "$work/null")"
  refused "$work/full" "it is a character device, not a regular file (-o - writes to stdout)"
  expect_same "$work/full (a node like /dev/full)" "character special file 1:7 666" "$(node_type "$work/full")"
  # a symbolic link is refused, not followed and not replaced
  ln -s "$work/null" "$work/link-to-null.html"
  refused "$work/link-to-null.html" "it is a symbolic link (to $work/null); give the path of a regular file (-o - writes to stdout)"
  expect_same "the link" "$work/null" "$(readlink "$work/link-to-null.html")"
  expect_same "$work/null behind the link" "character special file 1:3 666" "$(node_type "$work/null")"
else
  echo "not root: mknod is not allowed, the device-node cases are skipped"
fi
printf 'the operator'"'"'s page\n' >"$work/page.html"
page_md5=$(md5sum <"$work/page.html")
ln -s "$work/page.html" "$work/link.html"
refused "$work/link.html" "it is a symbolic link (to $work/page.html); give the path of a regular file (-o - writes to stdout)"
expect_same "the link" "$work/page.html" "$(readlink "$work/link.html")"
expect_same "the file behind the link" "$page_md5" "$(md5sum <"$work/page.html")"
mkfifo "$work/fifo"
refused "$work/fifo" "it is a FIFO, not a regular file (-o - writes to stdout)"
expect_same "the FIFO" "fifo" "$(stat -c %F "$work/fifo")"
refused "$work/empty" "it is a directory, not a regular file (-o - writes to stdout)"
# the report's own inputs: its results.json, any file in the folder, the same file under
# another name
refused "$work/good/results.json" "it is one of this command's inputs"
expect_same "$work/good/results.json" "$results_md5" "$(md5sum <"$work/good/results.json")"
ln "$work/good/results.json" "$work/hard-link.json"
refused "$work/hard-link.json" "it is the same file as $work/good/results.json, one of this command's inputs"
expect_same "$work/good/results.json" "$results_md5" "$(md5sum <"$work/good/results.json")"
run_cli 2 report "$work/good" -o "$work/good/../good/results.json"
expect_stderr_line "cephmark: report: refusing to write the report to $work/good/../good/results.json: it is the same file as $work/good/results.json, one of this command's inputs"
expect_same "$work/good/results.json" "$results_md5" "$(md5sum <"$work/good/results.json")"
# the folder's own report.html is the report's to replace; a regular file elsewhere too
run_cli 0 report "$work/good" -o "$work/good/report.html"
expect_stdout "^report: $work/good/report.html$"
run_cli 0 report "$work/good" -o "$work/page.html"
expect_stdout "^report: $work/page.html$"
checks=$((checks + 1))
grep -q '<!DOCTYPE html>' "$work/page.html" || { failures=$((failures + 1)); echo "FAIL: $work/page.html was not replaced"; }
# stdout, for pipes and /dev/null: the page and nothing else
run_cli 0 report "$work/good" -o -
checks=$((checks + 1))
if [ "$(head -1 "$out_file")" != "<!DOCTYPE html>" ] || grep -q '^report: ' "$out_file"; then
  failures=$((failures + 1))
  echo "FAIL: -o - did not write the page alone to stdout"
fi
expect_stderr_lines 0
# the real nodes were only looked at
expect_same "/dev/null" "$real_null" "$(node_type /dev/null)"
expect_same "/dev/full" "$real_full" "$(node_type /dev/full)"

finish
