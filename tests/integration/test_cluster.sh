#!/bin/bash
# Integration test of `cephmark cluster` against the suite's local cluster (started with
# --rgw by the integration.cluster_up fixture; CEPHMARK_CLUSTER_DIR points at it): status
# wording and exit codes, `up` idempotent and fast, `env` lines, I/O through the conf, what
# the ceph CLI does without a mgr, and radosgw's Swift auth answering with the keys of the
# credentials file. The secrets are read from that file but never printed.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
DIR=${CEPHMARK_CLUSTER_DIR:?set CEPHMARK_CLUSTER_DIR to a running cluster (cephmark cluster up --rgw)}
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

# check WHAT COMMAND...: a check that is not about cephmark's output
check() {
  local what=$1
  shift
  checks=$((checks + 1))
  if ! "$@"; then
    failures=$((failures + 1))
    echo "FAIL: $what"
  fi
}
outputs=$work/outputs # everything cephmark printed, searched for secrets at the end
keep_output() { cat "$out_file" "$err_file" >>"$outputs"; }

# --- status ---------------------------------------------------------------------------------
run_cli 0 cluster status
keep_output
# the fixture runs no mgr, so two minutes after creation the mon warns MGR_DOWN: tolerated,
# so the health line reads HEALTH_OK or HEALTH_WARN but the verdict must be healthy
expect_stdout '^health   HEALTH_(OK|WARN)$'
expect_stdout '^osds     3 up, 3 in \(of 3, memstore\)$'
expect_stdout '^mon      v2:127\.0\.0\.1:[0-9]+$'
expect_stdout '^rgw      http://127\.0\.0\.1:[0-9]+$'
expect_stdout "^conf     $DIR/ceph.conf\$"
expect_stdout '^daemons  mon\.a pid [0-9]+ running, osd\.0 pid [0-9]+ running, osd\.1 pid [0-9]+ running, osd\.2 pid [0-9]+ running, client\.rgw\.cephmark pid [0-9]+ running$'
expect_stdout '^state    healthy$'
run_cli 0 cluster status --json
keep_output
expect_stdout '^  "healthy": true,$'
expect_stdout '^    "up": 3$'

# --- up again: the same cluster, at once ----------------------------------------------------
fsid_before=$(sed -n 's/^fsid = //p' "$DIR/ceph.conf")
start=$(date +%s.%N)
run_cli 0 cluster up --rgw
expect_faster_than 3 "$start"
keep_output
expect_stdout "^cluster already up \\(checked in [0-9.]+ s\\): 1 mon, 3 OSDs \\(memstore\\), rgw in $DIR\$"
check "the second up changed the cluster's fsid" test "$(sed -n 's/^fsid = //p' "$DIR/ceph.conf")" = "$fsid_before"
run_cli 0 cluster up --quiet
check "up --quiet printed something" test ! -s "$out_file" -a ! -s "$err_file"
run_cli 2 cluster up --osds 2
expect_stderr_line "cephmark: the cluster in $DIR has OSD count 3, not 2; run \`cephmark cluster down --dir $DIR\` first to make a different one"

# --- env ------------------------------------------------------------------------------------
run_cli 0 cluster env
keep_output
expect_stdout "^export CEPH_CONF='$DIR/ceph.conf'\$"
expect_stdout "^export CEPHMARK_CLUSTER_DIR='$DIR'\$"
expect_stdout "^export CEPHMARK_RGW_URL='http://127\\.0\\.0\\.1:[0-9]+'\$"
expect_stdout "^export CEPHMARK_SWIFT_AUTH_URL='http://127\\.0\\.0\\.1:[0-9]+/auth/v1\\.0'\$"
expect_stdout "^export CEPHMARK_CREDENTIALS='$DIR/credentials.conf'\$"
eval "$(cat "$out_file")"
credentials=${CEPHMARK_CREDENTIALS:-}
check "the credentials file is not mode 600" test "$(stat -c %a "$credentials" 2>/dev/null)" = 600
check "CEPHMARK_SWIFT_AUTH_URL is not under CEPHMARK_RGW_URL" \
  test "${CEPHMARK_SWIFT_AUTH_URL:-}" = "${CEPHMARK_RGW_URL:-}/auth/v1.0"

# --- I/O through the conf: a size-3 pool goes active and serves a write and a read ----------
cat >"$work/io.lua" <<'EOF'
local rados = require "cephmark.rados"
local cluster = assert(rados.connect { conf = os.getenv("CEPH_CONF"), timeout = 20 })
local up, inside = cluster:osd_count()
assert(up == 3 and inside == 3, string.format("osd_count: %s up, %s in", up, inside))
local pool = "cephmark-test-cluster"
if cluster:pool_exists(pool) then assert(cluster:pool_delete(pool)) end
assert(cluster:pool_create { name = pool, type = "replicated", size = 3, pg_num = 8 })
local handle = assert(cluster:pool(pool))
assert(handle:write_full("probe", "hello"))
assert(handle:read("probe") == "hello", "read back differs")
handle:close()
assert(cluster:pool_delete(pool))
cluster:close()
print("io ok")
EOF
run_cli 0 run "$work/io.lua"
expect_stdout '^io ok$'

# --- without a mgr (the fixture runs none; the daemons line above says so): `ceph config
# show` waits for one and never answers, `ceph tell osd.N config get` answers, as
# docs/local-cluster.md ("Without a mgr") says ----------------------------------------------
has_ceph() { command -v ceph >/dev/null; }
check "the ceph CLI is not installed (apt-get install ceph-common)" has_ceph
if has_ceph; then
  timeout 60 ceph tell osd.0 config get osd_op_num_shards >"$work/tell" 2>&1
  check "ceph tell osd.0 config get did not answer: $(head -c 300 "$work/tell")" \
    grep -q '"osd_op_num_shards": "[0-9]*"' "$work/tell"
  timeout 5 ceph config show osd.0 osd_op_num_shards >/dev/null 2>&1
  status=$?
  check "ceph config show without a mgr exited $status, expected 124 (no answer within 5 s)" test "$status" = 124
fi

# --- radosgw: Swift auth with the keys of the credentials file ------------------------------
# ini SECTION KEY: a value of the INI-like credentials file, for variables, never echoed
ini() {
  awk -v section="[$1]" -v key="$2" '
    /^\[/ { in_section = ($0 == section); next }
    in_section && $1 == key && $2 == "=" { sub(/^[^=]*= */, ""); print; exit }
  ' "$credentials"
}
# swift_auth USER KEY: the status line of the auth answer; headers in $work/headers. The
# headers go through stdin, so the key is on no command line.
swift_auth() {
  printf 'X-Auth-User: %s\nX-Auth-Key: %s\n' "$1" "$2" |
    curl -s -o /dev/null -D "$work/headers" --max-time 20 -H @- "${CEPHMARK_SWIFT_AUTH_URL:-}"
  head -n 1 "$work/headers" | tr -d '\r'
}
has_curl() { command -v curl >/dev/null; }
check "curl is not installed (apt-get install curl)" has_curl
if command -v curl >/dev/null && [ -f "$credentials" ]; then
  user=$(ini swift user)
  key=$(ini swift key)
  check "the credentials file names swift user '$user'" test "$user" = cephmark:swift
  check "the credentials file has no swift key" test -n "$key"
  check "the credentials file has another auth_url" test "$(ini swift auth_url)" = "${CEPHMARK_SWIFT_AUTH_URL:-}"
  check "the credentials file lacks the S3 keys" test -n "$(ini s3 access_key)" -a -n "$(ini s3 secret_key)"
  answer=$(swift_auth "$user" "$key")
  check "Swift auth answered '$answer', expected 204 or 200" grep -qE '^HTTP/[0-9.]+ (204|200)' <<<"$answer"
  storage_url=$(sed -n 's/^[Xx]-[Ss]torage-[Uu]rl: *//p' "$work/headers" | tr -d '\r')
  check "Swift auth gave X-Storage-Url '$storage_url'" test "$storage_url" = "${CEPHMARK_RGW_URL:-}/swift/v1"
  # a wrong key must be refused, or the check above proves nothing
  answer=$(swift_auth "$user" not-the-key)
  check "Swift auth answered '$answer' to a wrong key, expected 401 or 403" grep -qE '^HTTP/[0-9.]+ (401|403)' <<<"$answer"
  for secret in "$key" "$(ini s3 secret_key)"; do
    check "a secret of the credentials file appears in cephmark's output" \
      test -z "$secret" -o "$(grep -cF -- "$secret" "$outputs")" = 0
  done
fi

finish
