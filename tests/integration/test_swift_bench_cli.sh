# `cephmark swift-bench` against the local cluster's radosgw: the seed's command
# (-c 64 -s 4096 -n 1000 -g 100 CONF) prints swift-bench's summary lines and cephmark's
# percentiles, removes its objects and containers, and never prints the key; flags win over
# the [bench] file; objects of size 0; --format json and -o; and the bad input operators
# meet: a wrong key (one line, at once, one auth request), an unreachable or silent endpoint
# (one line within the timeout), -l above -s, auth version 2.0, a missing config file, no
# credentials at all.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
listener=
trap 'rm -rf "$work" "$out_file" "$err_file"; [ -n "$listener" ] && kill "$listener" 2>/dev/null' EXIT

check() {
  checks=$((checks + 1))
  if ! eval "$1"; then failures=$((failures + 1)); echo "FAIL: $2 ($1)"; fi
}

creds=$(dirname "$CEPH_CONF")/credentials.conf
field() { awk -F' = ' -v want="$1" '/^\[/{s=$0} s=="[swift]" && $1==want{print $2}' "$creds"; }
auth=$(field auth_url)
user=$(field user)
key=$(field key)
check '[ -n "$auth" ] && [ -n "$user" ] && [ -n "$key" ]' "the cluster's credentials file has the swift user"
# the seed's config file
cat >"$work/swift.conf" <<EOF
[bench]
auth = $auth
user = $user
key = $key
auth_version = 1.0
container_name = cmtest_$$
EOF

# ---- the seed's command ---------------------------------------------------------------------
run_cli 0 swift-bench -c 64 -s 4096 -n 1000 -g 100 "$work/swift.conf"
ts='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}'
expect_stdout "^swift-bench $ts INFO Auth version: 1\.0$"
expect_stdout "^swift-bench $ts INFO 1000 PUTS \*\*FINAL\*\* \[0 failures\], [0-9]+\.[0-9]/s$"
expect_stdout "^swift-bench $ts INFO 100 GETS \*\*FINAL\*\* \[0 failures\], [0-9]+\.[0-9]/s$"
expect_stdout "^swift-bench $ts INFO 1000 DEL \*\*FINAL\*\* \[0 failures\], [0-9]+\.[0-9]/s$"
expect_stdout "^  PUTS latency ms: avg [0-9.]+ p50 [0-9.]+ p90 [0-9.]+ p99 [0-9.]+ p99\.9 [0-9.]+ max [0-9.]+$"
expect_stdout "^  GETS first byte ms: avg [0-9.]+ p50 "
check '! grep -qF -- "$key" "$out_file" "$err_file"' "the key is never printed"
check '[ "$(grep -c "FINAL" "$out_file")" = 3 ]' "three FINAL lines"
# its containers are gone: a listing of the account has none of cmtest_$$_*
cat >"$work/list.lua" <<'EOF'
local conn <close> = require("cephmark.rgw").swift_connect {}
local prefix = ...
local n = 0
for _, name in ipairs(conn:list_containers()) do
  if name:sub(1, #prefix.prefix) == prefix.prefix then n = n + 1 end
end
print("left=" .. n)
EOF
"$CEPHMARK" run "$work/list.lua" -p prefix="cmtest_$$_" >"$work/left" 2>&1
check 'grep -qx "left=0" "$work/left"' "swift-bench removed its containers ($(cat "$work/left"))"

# ---- flags win over the file; -C containers; size 0; -x keeps nothing behind when told -------
run_cli 0 swift-bench -c 4 -s 0 -n 20 -g 10 -C 2 "$work/swift.conf"
expect_stdout "INFO 20 PUTS \*\*FINAL\*\* \[0 failures\]"
expect_stdout "INFO 10 GETS \*\*FINAL\*\* \[0 failures\]"

# ---- -n 0: nothing written, nothing read, at once
run_cli 0 swift-bench -c 4 -n 0 -g 10 "$work/swift.conf"
expect_stdout "INFO 0 PUTS \*\*FINAL\*\* \[0 failures\], 0\.0/s$"
check '! grep -q "GETS" "$out_file"' "-n 0 makes no GETs"

# ---- credentials from the environment (ST_*) and a size range ---------------------------------
ST_AUTH=$auth ST_USER=$user ST_KEY=$key run_cli 0 swift-bench -c 8 -l 1024 -s 8192 -n 40 -g 40
expect_stdout "INFO 40 GETS \*\*FINAL\*\* \[0 failures\]"

# ---- --format json and -o --------------------------------------------------------------------
run_cli 0 swift-bench -c 8 -s 4096 -n 30 -g 30 --format json -o "$work/results" "$work/swift.conf"
if command -v jq >/dev/null; then
  check '[ "$(jq -r ".PUTS.count" "$out_file")" = 30 ]' "json: PUTS count"
  check '[ "$(jq -r ".GETS.failures" "$out_file")" = 0 ]' "json: GETS failures"
  check 'jq -e ".GETS.latency.p99 > 0" "$out_file" >/dev/null' "json: GETS p99"
fi
check '[ -s "$work/results/results.json" ]' "-o writes results.json"
check '! grep -rqF -- "$key" "$work/results"' "the results hold no key"

# ---- --transport: libcurl's multi interface instead of the native HTTP/1.1 client --------------
run_cli 0 swift-bench -c 8 -s 4096 -n 30 -g 30 --transport curl --format json "$work/swift.conf"
if command -v jq >/dev/null; then
  check '[ "$(jq -r ".GETS.count" "$out_file")" = 30 ] && [ "$(jq -r ".GETS.failures" "$out_file")" = 0 ]' "curl: 30 GETs, no failures"
fi
run_cli 2 swift-bench --transport tcp "$work/swift.conf"
expect_stderr_lines 1
expect_stderr "^cephmark: swift-bench: --transport must be auto, native or curl, got 'tcp'$"

# ---- a wrong key: one line, at once, exit 2 ----------------------------------------------------
sed "s/^key = .*/key = wrong-key/" "$work/swift.conf" >"$work/wrong.conf"
start=$(date +%s.%N)
run_cli 2 swift-bench -c 64 -s 4096 -n 1000 -g 100 "$work/wrong.conf"
expect_faster_than 5 "$start"
expect_stderr_lines 1
expect_stderr "^cephmark: swift auth: .* refused user '$user': 401 Unauthorized \(wrong user or key\?\)$"
check '[ ! -s "$out_file" ]' "a wrong key starts no phase"

# ---- unreachable and silent endpoints: one line within the timeout -----------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start=$(date +%s.%N)
run_cli 2 swift-bench -A "http://127.0.0.1:$port/auth/v1.0" -U u -K k -n 1 -g 0 --timeout 2
expect_faster_than 4 "$start"
expect_stderr_lines 1
expect_stderr "^cephmark: swift auth: cannot reach http://127.0.0.1:$port/auth/v1.0: "
if command -v python3 >/dev/null; then
  # accepts connections (the kernel does, from the backlog) and never answers
  python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True); time.sleep(120)' >"$work/port" &
  listener=$!
  for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$work/port" ] && break; sleep 0.2; done
  silent=$(cat "$work/port")
  start=$(date +%s.%N)
  run_cli 2 swift-bench -A "http://127.0.0.1:$silent/auth/v1.0" -U u -K k -n 1 -g 0 --timeout 2
  expect_faster_than 6 "$start"
  expect_stderr_lines 1
  expect_stderr "^cephmark: swift auth: cannot reach http://127.0.0.1:$silent/auth/v1.0: "
fi

# ---- bad input: one line, exit 2 ---------------------------------------------------------------
run_cli 2 swift-bench -l 8192 -s 4096 -n 10 "$work/swift.conf"
expect_stderr_lines 1
expect_stderr "^cephmark: swift-bench: object size range 8192\.\.4096: the lower size is above the upper size"
run_cli 2 swift-bench -V 2.0 "$work/swift.conf"
expect_stderr_lines 1
expect_stderr "auth version 2\.0 is not supported"
run_cli 2 swift-bench "$work/no-such.conf"
expect_stderr_line "cephmark: swift-bench: No such conf file: $work/no-such.conf"
run_cli 2 swift-bench -c 0 "$work/swift.conf"
expect_stderr_lines 1
printf '[bench]\nuse_proxy = no\n' >"$work/proxy.conf"
run_cli 2 swift-bench "$work/proxy.conf"
expect_stderr "use_proxy = no .* is not supported"
printf 'auth = x\n' >"$work/nosection.conf"
run_cli 2 swift-bench "$work/nosection.conf"
expect_stderr "nosection.conf:1: 'auth' comes before any \[section\]"
# no credentials anywhere: the environment of a host without a local cluster
env -u CEPH_CONF -u CEPHMARK_CREDENTIALS -u ST_AUTH -u ST_USER -u ST_KEY CEPHMARK_CLUSTER_DIR="$work/none" \
  "$CEPHMARK" swift-bench -n 1 >"$out_file" 2>"$err_file"
status=$?
check '[ "$status" = 2 ]' "no credentials: exit 2"
expect_stderr "^cephmark: no Swift credentials: .*cephmark cluster up --rgw"

finish
