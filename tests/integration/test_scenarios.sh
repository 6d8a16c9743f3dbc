# The scenario language against the real local cluster: each shipped scenario runs briefly
# and leaves a results folder with the expected phases and comparison and no pools behind;
# tuning-debug-log restores the OSDs' config; SIGINT in the middle of a phase writes what
# finished (complete: false), exits 130, deletes the pool and restores the config; failed
# verification exits 1; and bad input gets one line naming the file and line.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT
scenarios="$CEPHMARK_SOURCE_DIR/scenarios"


# expect_files DIR: a scenario's results folder has all its files
expect_files() {
  for f in results.json results.yaml params.yaml phases.csv series.csv comparison.csv; do
    checks=$((checks + 1))
    if [ ! -s "$1/$f" ]; then failures=$((failures + 1)); echo "FAIL: $1/$f is missing or empty"; fi
  done
}

# expect_no_pools: no pool a scenario created is left
expect_no_pools() {
  checks=$((checks + 1))
  local left
  left=$(ceph osd pool ls 2>/dev/null | grep '^cephmark-' || true)
  if [ -n "$left" ]; then
    failures=$((failures + 1)); echo "FAIL: after '$last_command': pools left: $left"
    for pool in $left; do ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1; done
  fi
}

# line_of FILE PATTERN: the first line number of FILE matching PATTERN (fixed string)
line_of() { grep -nF -- "$2" "$1" | head -1 | cut -d: -f1; }

# --- rados-bench: write (kept), seq, rand, cleanup, in rados bench's layout -------------------
run_cli 0 run "$scenarios/rados-bench.lua" -p seconds=1 -p block_size=64K -o "$work/rados-bench"
expect_stdout '^Maintaining 16 concurrent writes of 65536 bytes to objects of size 65536 for up to 1 seconds or 0 objects$'
expect_stdout '^Total writes made: +[0-9]+$'
expect_stdout '^Total reads made: +[0-9]+$'
expect_stdout '^Verify failures: +0$'
expect_stdout '^Removed [0-9]+ objects$'
expect_stdout "^results: $work/rados-bench\$"
expect_files "$work/rados-bench"
json_check "$work/rados-bench" '#r.phases == 4 and r.phases[1].name == "write" and r.phases[2].name == "seq" and r.phases[3].name == "rand" and r.phases[4].name == "cleanup"' "rados-bench phases"
json_check "$work/rados-bench" 'r.complete == true and r.status == "ok"' "rados-bench complete"
json_check "$work/rados-bench" 'r.phases[2].result.ops == r.phases[1].result.ops and r.phases[4].result.ops == r.phases[1].result.ops' "seq read and cleanup removed every object written"
json_check "$work/rados-bench" 'r.cluster.osds_up == 3 and r.cluster.fsid ~= nil and r.cluster.version:match("^ceph version")' "cluster facts"
json_check "$work/rados-bench" 'r.pools[1].created and r.pools[1].deleted and r.pools[1].info.size == 3' "the pool's settings and its deletion"
expect_no_pools

# --- ec-vs-replica: the README's main command, with -p knobs shaping the pools --------------
run_cli 0 run "$scenarios/ec-vs-replica.lua" -p seconds=1 -p block_size=64K -p size=2 -o "$work/ec"
expect_stdout '^comparison by pool \(baseline replica, marked \*; one run each: the uncertainty of these changes is unknown, --repeats N measures it\)$'
expect_stdout '^phase +pool +MiB/s +IOPS +p50 ms +p99 ms$'
expect_stdout '^write +replica \* +[0-9.]+ +[0-9]+ +[0-9.]+ +[0-9.]+$'
expect_stdout '^write +ec +[0-9.]+ \([+-][0-9.]+%\) +[0-9]+ \([+-][0-9.]+%\) +[0-9.]+ \([+-][0-9.]+%\) +[0-9.]+ \([+-][0-9.]+%\)$'
expect_stdout '^rand +ec +[0-9.]+ \([+-][0-9.]+%\)'
expect_files "$work/ec"
json_check "$work/ec" '#r.phases == 8 and r.phases[1].variant.pool == "replica" and r.phases[5].variant.pool == "ec"' "ec-vs-replica phases, replica first"
json_check "$work/ec" '#r.comparisons == 1 and r.comparisons[1].baseline == "replica" and #r.comparisons[1].rows == 6' "the comparison: write, seq, rand for two pools"
json_check "$work/ec" 'r.comparisons[1].rows[2].relative.bandwidth_mib ~= nil' "relative differences"
json_check "$work/ec" 'r.pools[1].info.size == 2 and r.params.size == 2 and r.params_source.size == "-p"' "-p size=2 shaped the replicated pool"
json_check "$work/ec" 'r.pools[2].erasure_code_profile.k == "2" and r.pools[2].erasure_code_profile.m == "1"' "the EC profile"
checks=$((checks + 1))
rows=$(grep -c '^1,pool,replica,' "$work/ec/comparison.csv")
[ "$rows" = 24 ] || { failures=$((failures + 1)); echo "FAIL: comparison.csv has $rows rows, expected 24"; }
expect_no_pools

# a pool the cluster cannot place: refused, and the pool already created is deleted
run_cli 2 run "$scenarios/ec-vs-replica.lua" -p seconds=1 -p k=4 -p m=2 -o "$work/ec-too-wide"
expect_stderr_line "cephmark: cannot create pool 'cephmark-ec-vs-replica-ec': EC k=4 m=2 needs 6 failure domains of type 'osd', the cluster has 3 up"
expect_stderr_lines 1
expect_stdout '^pool replica: deleted cephmark-ec-vs-replica-replica$'
checks=$((checks + 1))
[ ! -e "$work/ec-too-wide" ] || { failures=$((failures + 1)); echo "FAIL: a run refused at pool creation left a results folder"; }
expect_no_pools

# --- sweep-t-b: threads x block sizes, overridden as lists ---------------------------------
run_cli 0 run "$scenarios/sweep-t-b.lua" -p seconds=1 -p threads=1,4 -p block_sizes=4K,64K -p progress=false -o "$work/sweep"
expect_stdout '^-- point 4/4: block_size=64K threads=4$'
expect_stdout '^write +block_size=4K threads=1 \* +[0-9.]+ +[0-9]+ +[0-9.]+ +[0-9.]+$'
expect_stdout '^write +block_size=64K threads=4 +[0-9.]+ \([+-][0-9.]+%\)'
expect_files "$work/sweep"
json_check "$work/sweep" '#r.phases == 8 and #r.sweeps == 1 and #r.sweeps[1].points == 4' "one write and one cleanup per point"
json_check "$work/sweep" 'r.phases[7].variant.block_size == "64K" and r.phases[7].variant.threads == "4" and r.phases[7].result.block_size == 65536 and r.phases[7].result.threads == 4' "each point's results with its coordinates"
json_check "$work/sweep" '#r.comparisons[1].rows == 4 and r.comparisons[1].by == "point"' "a table by point"
expect_no_pools

# --- tuning-debug-log: config set through the mon, and restored -----------------------------
ceph config set osd debug_osd 2/5 >/dev/null 2>&1
debug_ms_before=$(ceph config get osd debug_ms 2>/dev/null)
run_cli 0 run "$scenarios/tuning-debug-log.lua" -p seconds=1 -o "$work/tuning"
expect_stdout '^  config osd/debug_osd = 0/0 \(was 1/5, set in the config database\)$|^  config osd/debug_osd = 0/0 \(was 2/5, set in the config database\)$'
expect_stdout '^  config osd/debug_osd restored to 2/5$'
expect_stdout '^write +0/0 +[0-9.]+ \([+-][0-9.]+%\)'
expect_files "$work/tuning"
json_check "$work/tuning" '#r.phases == 4 and r.phases[1].variant["osd/debug_ms"] == "default" and r.phases[3].variant["osd/debug_osd"] == "0/0"' "the phases carry the config point"
json_check "$work/tuning" '#r.comparisons[1].rows == 2 and r.comparisons[1].baseline == "defaults"' "defaults vs 0/0"
json_check "$work/tuning" 'r.config[1].restored and r.config[2].restored' "config recorded as restored"
checks=$((checks + 1))
debug_ms_after=$(ceph config get osd debug_ms 2>/dev/null)
[ "$debug_ms_after" = "$debug_ms_before" ] || { failures=$((failures + 1)); echo "FAIL: osd debug_ms is '$debug_ms_after' after the run, was '$debug_ms_before'"; }
checks=$((checks + 1))
debug_osd_after=$(ceph config get osd debug_osd 2>/dev/null)
[ "$debug_osd_after" = "2/5" ] || { failures=$((failures + 1)); echo "FAIL: osd debug_osd is '$debug_osd_after' after the run, was 2/5"; }
checks=$((checks + 1))
if ceph config dump 2>/dev/null | grep -qE '^ *osd +.*debug_ms'; then
  failures=$((failures + 1)); echo "FAIL: debug_ms has a setting in the config database after the run"
fi
ceph config rm osd debug_osd >/dev/null 2>&1
expect_no_pools

# --- pools the run keeps, and pools it did not create ---------------------------------------
run_cli 0 run "$scenarios/rados-bench.lua" -p seconds=1 -p block_size=4K -p keep_pools=true -o "$work/kept"
expect_stdout '^pool bench: kept cephmark-rados-bench-bench \(-p keep_pools=true\)$'
json_check "$work/kept" 'r.pools[1].kept == true and r.pools[1].deleted == false' "recorded as kept"
checks=$((checks + 1))
ceph osd pool ls 2>/dev/null | grep -qx cephmark-rados-bench-bench || { failures=$((failures + 1)); echo "FAIL: -p keep_pools=true did not keep the pool"; }
ceph osd pool rm cephmark-rados-bench-bench cephmark-rados-bench-bench --yes-i-really-really-mean-it >/dev/null 2>&1
cat >"$work/reuse.lua" <<'EOF'
local cm = require "cephmark"
return cm.scenario {
  name = "reuse",
  pools = { mine = { name = "cephmark-test-reused", reuse = true } },
  run = function(s)
    s:phase("write", s:pool("mine"), { seconds = 1, threads = 4, block_size = "4K" })
  end,
}
EOF
ceph osd pool create cephmark-test-reused 8 >/dev/null 2>&1
printf 'precious' >"$work/precious"
rados -p cephmark-test-reused put precious "$work/precious"
run_cli 0 run "$work/reuse.lua" -o "$work/reuse"
expect_stdout '^pool mine: using the existing pool cephmark-test-reused$'
expect_stdout '^pool mine: removed [0-9]+ benchmark objects left by this run$'
json_check "$work/reuse" 'r.pools[1].created == false and r.pools[1].reused == true and r.pools[1].deleted == false' "recorded as reused"
checks=$((checks + 1))
left=$(rados -p cephmark-test-reused ls 2>/dev/null | sort | tr '\n' ' ')
[ "$left" = "precious " ] || { failures=$((failures + 1)); echo "FAIL: the reused pool holds '$left', expected only its own object"; }
ceph osd pool rm cephmark-test-reused cephmark-test-reused --yes-i-really-really-mean-it >/dev/null 2>&1

# --- SIGINT in the middle of a phase ----------------------------------------------------------
cat >"$work/interrupt-me.lua" <<'EOF'
local cm = require "cephmark"
return cm.scenario {
  name = "interrupt-me",
  params = { seconds = cm.duration("60s") },
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s, p)
    for _ in s:sweep(cm.zip { ["osd/debug_ms"] = { "0/3" } }) do
      s:phase("write", s:pool("bench"), { seconds = p.seconds, threads = 8, block_size = "4K" })
      s:phase("cleanup", s:pool("bench"))
    end
  end,
}
EOF
debug_ms_before=$(ceph config get osd debug_ms 2>/dev/null)
last_command="run interrupt-me.lua (SIGINT mid-phase)"
start=$(date +%s.%N)
"$CEPHMARK" run "$work/interrupt-me.lua" -o "$work/interrupted" >"$out_file" 2>"$err_file" &
pid=$!
for _ in $(seq 100); do grep -q '^\[1\] write' "$out_file" && break; sleep 0.2; done
sleep 2
kill -INT "$pid"
wait "$pid"
last_status=$?
checks=$((checks + 1))
[ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: SIGINT mid-phase exited $last_status, expected 130"; sed 's/^/  /' "$err_file"; }
expect_faster_than 60 "$start"
expect_stderr_line "cephmark: interrupted"
expect_stdout "^results: $work/interrupted\$"
expect_stdout '^  config osd/debug_ms restored to '
expect_files "$work/interrupted"
json_check "$work/interrupted" 'r.complete == false and r.status == "interrupted"' "marked incomplete"
json_check "$work/interrupted" '#r.phases == 1 and r.phases[1].status == "interrupted" and r.phases[1].result.interrupted and r.phases[1].result.ops > 0' "the interrupted phase's partial result"
json_check "$work/interrupted" 'r.config[1].restored == true and r.pools[1].deleted == true' "config restored and pool deleted, as recorded"
checks=$((checks + 1))
debug_ms_after=$(ceph config get osd debug_ms 2>/dev/null)
[ "$debug_ms_after" = "$debug_ms_before" ] || { failures=$((failures + 1)); echo "FAIL: osd debug_ms is '$debug_ms_after' after SIGINT, was '$debug_ms_before'"; }
expect_no_pools

# --- failed verification: exit code 1 ---------------------------------------------------------
cat >"$work/corrupt.lua" <<'EOF'
local cm = require "cephmark"
return cm.scenario {
  name = "corrupt",
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s)
    local pool = s:pool("bench")
    local written = s:phase("write", pool, { ops = 20, threads = 4, block_size = "8K" })
    -- damage one block's body behind the benchmark's back: its crc no longer matches
    assert(pool:write(written.prefix .. "_object0", string.rep("x", 64), 1000))
    s:phase("seq", pool, { threads = 4 })
    s:phase("cleanup", pool)
  end,
}
EOF
run_cli 1 run "$work/corrupt.lua" -o "$work/corrupt"
json_check "$work/corrupt" 'r.status == "failed_ops" and r.phases[2].status == "failed" and r.phases[2].result.verify_failures == 1' "a verify failure is a failed phase"
expect_no_pools

# --- bad input: one line with the file and line -----------------------------------------------
sweep_file="$scenarios/sweep-t-b.lua"
run_cli 2 run "$sweep_file" -p thread=4
expect_stderr_line "cephmark: $sweep_file:$(line_of "$sweep_file" "return cm.scenario {"): -p thread=4: unknown param 'thread' (did you mean 'threads'?); valid params: block_sizes, keep_pools, progress, seconds, threads"
expect_stderr_lines 1
run_cli 2 run "$sweep_file" -p threads=1,x
expect_stderr_line "cephmark: $sweep_file:$(line_of "$sweep_file" "threads = cm.list"): -p threads=1,x: value 2: expected an integer, got 'x'"
ec_file="$scenarios/ec-vs-replica.lua"
run_cli 2 run "$ec_file" -p block_size=4X
expect_stderr_line "cephmark: $ec_file:$(line_of "$ec_file" "block_size = cm.size"): -p block_size=4X: size '4X' has an unknown suffix 'X' (use K, M, G, T or P)"
expect_stderr_lines 1
run_cli 2 run "$ec_file" -p threads=many
expect_stderr_line "cephmark: $ec_file:$(line_of "$ec_file" "threads = cm.integer"): -p threads=many: expected an integer, got 'many'"
printf 'thread: 4\n' >"$work/params.yaml"
run_cli 2 run "$ec_file" --params "$work/params.yaml"
expect_stderr_line "cephmark: $work/params.yaml:1: unknown param 'thread' (did you mean 'threads'?); valid params: block_size, k, keep_pools, m, progress, seconds, size, threads"
printf 'seconds: 1s\nblock_size: 4X\n' >"$work/params.yaml"
run_cli 2 run "$ec_file" --params "$work/params.yaml"
expect_stderr_line "cephmark: $work/params.yaml:2: block_size: size '4X' has an unknown suffix 'X' (use K, M, G, T or P)"

printf 'local cm = require "cephmark"\nreturn cm.scenario {\n  name = "empty-sweep",\n  run = function(s)\n    for _ in s:sweep(cm.sweep { threads = {} }) do end\n  end,\n}\n' >"$work/empty-sweep.lua"
run_cli 2 run "$work/empty-sweep.lua" -o "$work/empty-sweep"
expect_stderr_line "cephmark: $work/empty-sweep.lua:5: sweep: 'threads' has no values"
expect_stderr_lines 1
printf 'local cm = require "cephmark"\n\nreturn cm.scenario {\n  name = "no-m",\n  pools = { ec = { type = "erasure", k = 2 } },\n  run = function(s) end,\n}\n' >"$work/no-m.lua"
run_cli 2 run "$work/no-m.lua"
expect_stderr_line "cephmark: $work/no-m.lua:3: pool 'ec': an erasure-coded pool needs k and m; m is missing"
expect_stderr_lines 1
printf 'local cm = require "cephmark"\n\ncm.scenario {\n  name = "forgotten",\n  run = function(s) end,\n}\n' >"$work/no-return.lua"
run_cli 2 run "$work/no-return.lua"
expect_stderr_line "cephmark: $work/no-return.lua:3: scenario 'forgotten' is defined here but the script does not return it; end the script with \`return cm.scenario { ... }\`"
printf 'local cm = require "cephmark"\nlocal s = cm.scenario {\n  name = "wrong",\n  run = function(s) end,\n}\nreturn { s }\n' >"$work/wrong-return.lua"
run_cli 2 run "$work/wrong-return.lua"
expect_stderr_line "cephmark: $work/wrong-return.lua:2: scenario 'wrong' is defined here but the script returns a table that is not a scenario instead; end the script with \`return cm.scenario { ... }\`"
printf 'local cm = require "cephmark"\nreturn cm.scenario {\n  name = "exists",\n  pools = { mine = { name = "cephmark-test-existing" } },\n  run = function(s) end,\n}\n' >"$work/exists.lua"
ceph osd pool create cephmark-test-existing 8 >/dev/null 2>&1
run_cli 2 run "$work/exists.lua"
expect_stderr_line "cephmark: $work/exists.lua:2: pool 'cephmark-test-existing' (mine) already exists and this run did not create it; set reuse = true in its pool spec to run in it (it is then never deleted), or give the pool another name"
checks=$((checks + 1))
ceph osd pool ls 2>/dev/null | grep -qx cephmark-test-existing || { failures=$((failures + 1)); echo "FAIL: a pool the scenario did not create was deleted"; }
ceph osd pool rm cephmark-test-existing cephmark-test-existing --yes-i-really-really-mean-it >/dev/null 2>&1

# --help lists the params and never connects: a conf whose mon nobody answers would fail
printf 'print(require("cephmark.sys").free_port())\n' >"$work/port.lua"
port=$("$CEPHMARK" run "$work/port.lua")
sed "s/^mon host = .*/mon host = v2:127.0.0.1:$port/" "$CEPH_CONF" >"$work/wrong-port.conf"
start=$(date +%s.%N)
run_cli 0 run "$ec_file" --help -c "$work/wrong-port.conf" --timeout 5
expect_stdout '^ec-vs-replica: replicated vs erasure-coded pool: write, seq and rand on each, compared$'
expect_stdout '^  k +integer >= 2 +2 +data chunks in the erasure-coded pool$'
expect_stdout '^  block_size +size 1..1G +4M +bytes per write'
expect_stdout '^  ec +erasure k=2 m=1 +\(cephmark-ec-vs-replica-ec\)$'
expect_stderr_lines 0
expect_faster_than 3 "$start"
expect_no_pools
finish
