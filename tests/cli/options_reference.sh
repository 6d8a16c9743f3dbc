#!/bin/bash
# `cephmark options`: the option reference comes from the targets' own tables. docs/options.md
# is exactly `cephmark options --markdown`, so it cannot drift from what the benches check;
# one target prints alone; an unknown target or argument is one line and exit 2.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
src=${CEPHMARK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

run_cli 0 options --markdown
checks=$((checks + 1))
if ! diff -u "$src/docs/options.md" "$out_file" >"$err_file.diff"; then
  failures=$((failures + 1))
  echo "FAIL: docs/options.md differs from \`cephmark options --markdown\` (regenerate it):"
  head -40 "$err_file.diff"
fi
rm -f "$err_file.diff"

run_cli 0 options rados
expect_stdout '^rados \(pool:bench\)$'
expect_stdout '^  block_size +size +4M '
expect_stdout '^  op +choice +write .*\[write, seq, rand, cleanup, overwrite, append, verify\]'
run_cli 0 options s3
expect_stdout '^swift, s3 \(conn:bench\)$'
run_cli 0 options engine
expect_stdout '^  threads +integer +16 .*\[1 to 65536\]'

run_cli 0 help options
expect_stdout '^usage: cephmark options \[TARGET\] \[--markdown\]$'

run_cli 2 options nosuch
expect_stderr_line "cephmark: options: unknown target 'nosuch' (expected rados, rbd, swift, s3, disk, socket, null or engine)"
expect_stderr_lines 1
run_cli 2 options rados extra
expect_stderr_line "cephmark: options: unexpected argument 'extra'"
run_cli 2 options --bogus
expect_stderr_lines 1

finish
