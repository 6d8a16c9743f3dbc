#!/bin/bash
# CLI transcript tests of `cephmark cluster` where no Ceph daemon is needed: bad flags, no
# cluster in the folder, a folder of someone else's files, Ceph programs missing from
# PATH. Exact messages and exit codes; every failed check says what it expected.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

# check CONDITION_TEXT COMMAND...: a check that is not about cephmark's output
check() {
  local what=$1
  shift
  checks=$((checks + 1))
  if ! "$@"; then
    failures=$((failures + 1))
    echo "FAIL: $what"
  fi
}
is_empty_dir() { [ -d "$1" ] && [ -z "$(ls -A "$1")" ]; }

empty=$work/empty
mkdir "$empty"

# --- usage errors: one line, exit 2 -------------------------------------------------------
run_cli 2 cluster up --bogus
expect_stderr_line "cephmark: cluster up: unknown option '--bogus' (see \`cephmark cluster up --help\`)"
expect_stderr_lines 1
run_cli 2 cluster status --osds 3
expect_stderr_line "cephmark: cluster status: unknown option '--osds' (see \`cephmark cluster status --help\`)"
run_cli 2 cluster up --dir
expect_stderr_line "cephmark: cluster up: option --dir needs a value (see \`cephmark cluster up --help\`)"
run_cli 2 cluster down --dir="$empty" --json
expect_stderr_line "cephmark: cluster down: unknown option '--json' (see \`cephmark cluster down --help\`)"
run_cli 2 cluster up --dir "$empty" --osds many
expect_stderr_line "cephmark: cluster up: --osds expects a number from 1 to 32, got 'many' (see \`cephmark cluster up --help\`)"
run_cli 2 cluster up --dir "$empty" --memstore-size 12X
expect_stderr_line "cephmark: cluster up: --memstore-size expects a size of at least 256M such as 512M or 4G, got '12X' (see \`cephmark cluster up --help\`)"
run_cli 2 cluster up --dir "$empty" --rgw=yes
expect_stderr_line "cephmark: cluster up: option --rgw takes no value (see \`cephmark cluster up --help\`)"
run_cli 2 cluster start
expect_stderr_line "cephmark: cluster: unknown command 'start' (expected up, down, status, env, kill or restart) (see \`cephmark cluster --help\`)"
run_cli 2 cluster
expect_stderr '^usage: cephmark cluster <command>'
check "bad flags left files in $empty" is_empty_dir "$empty"

# --- help ---------------------------------------------------------------------------------
run_cli 0 cluster --help
expect_stdout '^  env      shell lines exporting CEPH_CONF'
run_cli 0 help cluster
expect_stdout '^usage: cephmark cluster <command>'
run_cli 0 cluster up --help
expect_stdout '^  --memstore-size SIZE  memstore cap per OSD'
run_cli 0 cluster status -h
expect_stdout '^usage: cephmark cluster status \[--dir DIR\] \[--json\]$'

# --- no cluster in the folder --------------------------------------------------------------
run_cli 2 cluster status --dir "$empty"
expect_stderr_line "cephmark: no cluster in $empty (start one with \`cephmark cluster up --dir '$empty'\`)"
expect_stderr_lines 1
run_cli 2 cluster status --dir "$empty" --json
expect_stdout '^  "exists": false,?$'
run_cli 2 cluster env --dir "$empty"
expect_stderr_line "cephmark: no cluster in $empty (start one with \`cephmark cluster up --dir '$empty'\`)"
check "env printed shell lines for a missing cluster" test ! -s "$out_file"
CEPHMARK_CLUSTER_DIR=$work/never-made run_cli 2 cluster status
expect_stderr_line "cephmark: no cluster in $work/never-made (start one with \`cephmark cluster up --dir '$work/never-made'\`)"
run_cli 0 cluster down --dir "$empty"
expect_stdout "^no cluster in $empty\$"
check "down removed a folder that held no cluster" test -d "$empty"
run_cli 0 cluster down --dir "$work/never-made"
expect_stdout "^no cluster in $work/never-made\$"

# --- someone else's folder: never written to, never deleted --------------------------------
foreign=$work/foreign
mkdir "$foreign"
echo keep >"$foreign/notes.txt"
run_cli 2 cluster up --dir "$foreign"
expect_stderr_line "cephmark: $foreign is not empty and holds no cephmark cluster; choose another --dir or empty it"
run_cli 0 cluster down --dir "$foreign"
expect_stdout "^no cluster in $foreign \\(it holds other files; left as it is\\)\$"
check "up or down touched the files of $foreign" test "$(ls -A "$foreign")" = notes.txt

# --- Ceph not installed: one line naming the programs and the apt-get command ---------------
printf '#!/bin/sh\nPATH=/nonexistent exec "%s" "$@"\n' "$CEPHMARK" >"$work/cephmark-without-ceph"
chmod +x "$work/cephmark-without-ceph"
missing=$(mktemp -d)
CEPHMARK=$work/cephmark-without-ceph run_cli 2 cluster up --dir "$missing"
expect_stderr_line "cephmark: cannot start a local cluster: ceph-mon, ceph-osd, ceph-authtool, monmaptool not found in PATH; install them with \`apt-get install ceph-mon ceph-osd ceph-common ceph-base\`"
expect_stderr_lines 1
check "up without Ceph left files in $missing" is_empty_dir "$missing"
CEPHMARK=$work/cephmark-without-ceph run_cli 2 cluster up --dir "$missing" --rgw --mgr
expect_stderr 'ceph-mgr, radosgw, radosgw-admin not found in PATH; install them with `apt-get install .*ceph-mgr radosgw`$'
rm -rf "$missing"

finish
