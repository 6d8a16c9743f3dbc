# Safety: cephmark never deletes or modifies a pool or config option it did not create or
# change in this run, and never shows a secret.
# - A pool that already exists under a scenario pool's name is refused (exit 2, one line),
#   and it and its objects are untouched.
# - With reuse = true the run goes ahead in it; at the end (finished or interrupted) the pool
#   is still there, its own objects unchanged, and no benchmark object is left.
# - Config: an option the operator set and the run did not touch keeps its value; an option
#   the run changed gets the operator's value back.
# - Secrets: the client.admin key and the Swift key appear in no output, no results file and
#   no command line of the process list.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
pool=cephmark-safety-data
cleanup() {
  ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1
  ceph config rm osd osd_max_backfills >/dev/null 2>&1
  ceph config rm osd osd_recovery_sleep >/dev/null 2>&1
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

cat >"$work/safety.lua" <<'LUA'
local cm = require "cephmark"
return cm.scenario {
  name = "safety",
  params = {
    reuse = cm.bool(false, "run in an existing pool"),
    seconds = cm.duration("2s", "phase length"),
  },
  pools = function(p) return { data = { type = "replicated", size = 3, reuse = p.reuse } } end,
  run = function(s, p)
    s:set_config("osd", "osd_max_backfills", 7)
    local pool = s:pool("data")
    s:phase("write", pool, { seconds = p.seconds, threads = 8, block_size = "4K" })
    s:phase("rand", pool, { seconds = p.seconds, threads = 8 })
    -- no cleanup phase: the end of the run removes what it wrote in a pool it did not create
  end,
}
LUA

# the operator's pool, with objects of its own, and options of its own
ceph osd pool create "$pool" 8 >/dev/null 2>&1
ceph osd pool application enable "$pool" operator >/dev/null 2>&1
for i in 1 2 3 4 5; do
  head -c 10000 /dev/urandom >"$work/own-$i"
  rados -p "$pool" put "own-$i" "$work/own-$i"
done
ceph config set osd osd_recovery_sleep 0.25 >/dev/null
ceph config set osd osd_max_backfills 2 >/dev/null

pool_intact() {
  local what=$1 listed i
  checks=$((checks + 1))
  if ! ceph osd pool ls 2>/dev/null | grep -qxF "$pool"; then
    failures=$((failures + 1))
    echo "FAIL: $what: the pool $pool is gone"
    return
  fi
  listed=$(rados -p "$pool" ls 2>/dev/null | sort | tr '\n' ' ')
  checks=$((checks + 1))
  [ "$listed" = "own-1 own-2 own-3 own-4 own-5 " ] ||
    { failures=$((failures + 1)); echo "FAIL: $what: the pool holds '$listed', expected only its own 5 objects"; }
  for i in 1 2 3 4 5; do
    rados -p "$pool" get "own-$i" "$work/back-$i" 2>/dev/null
    checks=$((checks + 1))
    cmp -s "$work/own-$i" "$work/back-$i" ||
      { failures=$((failures + 1)); echo "FAIL: $what: object own-$i changed"; }
  done
  checks=$((checks + 1))
  [ "$(ceph osd pool application get "$pool" 2>/dev/null | grep -c operator)" -ge 1 ] ||
    { failures=$((failures + 1)); echo "FAIL: $what: the pool's application was changed"; }
}

config_intact() {
  local what=$1 sleep_value backfills
  sleep_value=$(ceph config get osd osd_recovery_sleep 2>/dev/null)
  backfills=$(ceph config get osd osd_max_backfills 2>/dev/null)
  checks=$((checks + 1))
  [ "$sleep_value" = 0.250000 ] || [ "$sleep_value" = 0.25 ] ||
    { failures=$((failures + 1)); echo "FAIL: $what: osd_recovery_sleep is $sleep_value, the operator set 0.25"; }
  checks=$((checks + 1))
  [ "$backfills" = 2 ] ||
    { failures=$((failures + 1)); echo "FAIL: $what: osd_max_backfills is $backfills, the operator set 2"; }
}

# 1. refused without reuse
run_cli 2 run "$work/safety.lua" -o "$work/refused"
expect_stderr "^cephmark: .*safety.lua:[0-9]+: pool '$pool' \\(data\\) already exists and this run did not create it; set reuse = true in its pool spec to run in it \\(it is then never deleted\\), or give the pool another name$"
expect_stderr_lines 1
pool_intact "refused run"
config_intact "refused run"
checks=$((checks + 1))
[ ! -e "$work/refused" ] || { failures=$((failures + 1)); echo "FAIL: a refused run left its results folder"; }

# 2. reused: the run goes ahead, the pool and its objects survive, benchmark objects removed
run_cli 0 run "$work/safety.lua" -o "$work/reused" -p reuse=true
expect_stdout "^pool data: using the existing pool $pool$"
expect_stdout "^pool data: removed [0-9]+ benchmark objects left by this run$"
pool_intact "reused run"
config_intact "reused run"

# 3. reused and interrupted in the middle of the write
last_command="run safety.lua -p reuse=true (SIGINT in write)"
"$CEPHMARK" run "$work/safety.lua" -o "$work/interrupted" -p reuse=true -p seconds=30 >"$out_file" 2>"$err_file" &
pid=$!
for _ in $(seq 100); do grep -q '^\[1\] write' "$out_file" && break; sleep 0.1; done
sleep 1
# 4. meanwhile, no secret in the process list
key=$(awk '$1 == "key" {print $3; exit}' "$(awk -F' = ' '/^keyring = /{print $2; exit}' "$CEPH_CONF")")
checks=$((checks + 1))
if [ -z "$key" ]; then
  failures=$((failures + 1)); echo "FAIL: cannot read the client.admin key to look for it"
elif printf '%s\n' "$key" >"$work/key" && ps -eo args >"$work/ps" && grep -qF -f "$work/key" "$work/ps"; then
  failures=$((failures + 1)); echo "FAIL: the client.admin key is in the process list"
fi
kill -INT "$pid"
wait "$pid"
last_status=$?
checks=$((checks + 1))
[ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: $last_command exited $last_status, expected 130"; }
expect_stdout "^pool data: removed [0-9]+ benchmark objects left by this run$"
pool_intact "interrupted reused run"
config_intact "interrupted reused run"

# secrets: nothing cephmark wrote holds the client.admin key
checks=$((checks + 1))
if grep -rqF -f "$work/key" "$work/reused" "$work/interrupted" "$out_file" "$err_file"; then
  failures=$((failures + 1)); echo "FAIL: the client.admin key is in the output or results"
fi

# the Swift key, read from the local cluster's credentials file, in swift-bench's run
if [ -n "${CEPHMARK_CLUSTER_DIR:-}" ] && [ -r "$CEPHMARK_CLUSTER_DIR/credentials.conf" ]; then
  swift_key=$(awk '/^\[/{s=$0} s=="[swift]" && $1=="key"{print $3}' "$CEPHMARK_CLUSTER_DIR/credentials.conf")
  "$CEPHMARK" swift-bench -c 4 -s 4096 -n 200 -g 200 -o "$work/swift" >"$out_file" 2>"$err_file" &
  pid=$!
  sleep 1
  checks=$((checks + 1))
  printf '%s\n' "$swift_key" >"$work/swift-key"
  ps -eo args >"$work/ps"
  if grep -qF -f "$work/swift-key" "$work/ps"; then
    failures=$((failures + 1)); echo "FAIL: the Swift key is in the process list"
  fi
  wait "$pid"
  # a key given with -K is wiped from the command line as soon as cephmark has read it
  swift_auth=$(awk '/^\[/{s=$0} s=="[swift]" && $1=="auth_url"{print $3}' "$CEPHMARK_CLUSTER_DIR/credentials.conf")
  swift_user=$(awk '/^\[/{s=$0} s=="[swift]" && $1=="user"{print $3}' "$CEPHMARK_CLUSTER_DIR/credentials.conf")
  "$CEPHMARK" swift-bench -A "$swift_auth" -U "$swift_user" -K "$swift_key" -c 4 -s 4096 -n 300 -g 300 \
    >>"$out_file" 2>>"$err_file" &
  pid=$!
  sleep 1
  checks=$((checks + 1))
  ps -eo args >"$work/ps"
  if grep -qF -f "$work/swift-key" "$work/ps"; then
    failures=$((failures + 1)); echo "FAIL: the Swift key given with -K is in the process list"
  elif ! grep -q "swift-bench -A $swift_auth -U $swift_user -K " "$work/ps"; then
    failures=$((failures + 1)); echo "FAIL: swift-bench -K was not running when the process list was read"
  fi
  wait "$pid"
  checks=$((checks + 1))
  if grep -rqF -f "$work/swift-key" "$out_file" "$err_file" "$work/swift" "$CEPHMARK_CLUSTER_DIR/log" 2>/dev/null; then
    failures=$((failures + 1)); echo "FAIL: the Swift key is in swift-bench's output, results or the cluster's logs"
  fi
fi
finish
