# Repetitions through `cephmark run` on the null target: --repeats runs the run function N
# times (announced, phase headers numbered), --order fixed keeps the declared order,
# --order-seed reproduces the orders a run recorded, and SIGINT in the third of five
# repetitions exits 130 saying how many complete repetitions were kept, with those
# repetitions' phases and comparison in results.json. Needs no cluster.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work" "$out_file" "$err_file"' EXIT

cat >"$work/points.lua" <<'LUA'
local cm = require "cephmark"
local null = require "cephmark.null"
return cm.scenario {
  name = "repeats-cli",
  params = { points = cm.list(cm.string(), { "a", "b" }, "point labels"), seconds = cm.duration("0s") },
  run = function(s, p)
    local delays = {}
    for i = 1, #p.points do delays[i] = i .. "ms" end
    for point in s:sweep(cm.zip({ delay = delays }, { labels = p.points })) do
      if p.seconds > 0 then
        s:phase("write", null, { threads = 2, seconds = p.seconds, delay = point.delay })
      else
        s:phase("write", null, { threads = 2, ops = 10, delay = point.delay })
      end
    end
    s:compare { by = "point", metrics = { "iops", "lat.p50" } }
  end,
}
LUA

# orders_of DIR: each repetition's order of the sweep's points, as "1:a,b 2:b,a ..."
cat >"$work/orders.lua" <<'LUA'
local p = ...
local json = require "cephmark.json"
local sys = require "cephmark.sys"
local doc = json.decode(assert(sys.read_file(p.dir .. "/results.json")))
local out = {}
for _, entry in ipairs(doc.orders) do out[#out + 1] = entry.repetition .. ":" .. table.concat(entry.order, ",") end
print("seed " .. string.format("%d", doc.order_seed))
print("orders " .. table.concat(out, " "))
local phases = {}
for _, phase in ipairs(doc.phases) do phases[#phases + 1] = phase.repetition .. ":" .. phase.label end
print("phases " .. table.concat(phases, " "))
print(string.format("repeats %d completed %d status %s comparisons %d", doc.repeats, doc.repetitions_completed,
  doc.status, #doc.comparisons))
if doc.comparisons[1] then print("compared over " .. doc.comparisons[1].repetitions) end
LUA
orders_of() { "$CEPHMARK" run "$work/orders.lua" -p dir="$1"; }

run_cli 0 help run
expect_stdout '^  --repeats N +run the scenario'"'"'s run function N times'
expect_stdout '^  --order interleaved\|fixed '
expect_stdout '^  --order-seed N '
run_cli 0 run "$work/points.lua" --help
expect_stdout '^repetitions: 1, order interleaved \(--repeats N runs the scenario N times'

# --repeats 3: the repetitions announced, the phases numbered, ABBA, one comparison at the end
run_cli 0 run "$work/points.lua" --repeats 3 -o "$work/three"
expect_stdout '^-- repetition 1/3$'
expect_stdout '^-- repetition 3/3$'
expect_stdout '^\[3\] write b \(repetition 2/3\)  ops=10 threads=2 delay='
expect_stdout '^comparison by point \(baseline a, marked \*\): medians of 3 repetitions$'
checks=$((checks + 1))
tables=$(grep -c '^comparison by point' "$out_file")
[ "$tables" = 1 ] || { failures=$((failures + 1)); echo "FAIL: $tables comparison tables printed, expected 1"; }
orders_of "$work/three" >"$work/three.txt"
checks=$((checks + 1))
grep -qx 'orders 1:a,b 2:b,a 3:a,b' "$work/three.txt" || { failures=$((failures + 1)); echo "FAIL: two points do not alternate"; cat "$work/three.txt"; }
checks=$((checks + 1))
grep -qx 'phases 1:a 1:b 2:b 2:a 3:a 3:b' "$work/three.txt" || { failures=$((failures + 1)); echo "FAIL: the phases did not run in the recorded order"; cat "$work/three.txt"; }
checks=$((checks + 1))
grep -qx 'repeats 3 completed 3 status ok comparisons 1' "$work/three.txt" || { failures=$((failures + 1)); echo "FAIL: results.json of three repetitions"; cat "$work/three.txt"; }

# --order fixed: every repetition in the declared order
run_cli 0 run "$work/points.lua" --repeats 3 --order fixed -p points=a,b,c -o "$work/fixed"
orders_of "$work/fixed" >"$work/fixed.txt"
checks=$((checks + 1))
grep -qx 'orders 1:a,b,c 2:a,b,c 3:a,b,c' "$work/fixed.txt" || { failures=$((failures + 1)); echo "FAIL: --order fixed"; cat "$work/fixed.txt"; }

# four points, eight repetitions: a seeded design; rerun with the seed the first run
# recorded, the same orders
run_cli 0 run "$work/points.lua" --repeats 8 -p points=a,b,c,d -p progress=false -o "$work/seeded"
orders_of "$work/seeded" >"$work/seeded.txt"
seed=$(sed -n 's/^seed //p' "$work/seeded.txt")
run_cli 0 run "$work/points.lua" --repeats 8 -p points=a,b,c,d -p progress=false --order-seed "$seed" -o "$work/again"
orders_of "$work/again" >"$work/again.txt"
checks=$((checks + 1))
if [ "$(grep '^orders' "$work/seeded.txt")" != "$(grep '^orders' "$work/again.txt")" ]; then
  failures=$((failures + 1)); echo "FAIL: --order-seed $seed did not reproduce the orders"; cat "$work/seeded.txt" "$work/again.txt"
fi
# every point first twice and last twice over the 8 repetitions (two blocks of 4)
checks=$((checks + 1))
counts=$(grep '^orders' "$work/seeded.txt" | tr ' ' '\n' | sed -n 's/^[0-9]*://p' |
  awk -F, '{ first[$1]++; last[$NF]++ } END { for (p in first) printf "%s%d%d ", p, first[p], last[p] }' | tr ' ' '\n' | sort | tr -d '\n')
[ "$counts" = "a22b22c22d22" ] || { failures=$((failures + 1)); echo "FAIL: first/last counts per point: $counts"; cat "$work/seeded.txt"; }
checks=$((checks + 1))
grep -q '^orders 1:a,b,c,d ' "$work/seeded.txt" || { failures=$((failures + 1)); echo "FAIL: the first repetition is not in the declared order"; }

# SIGINT in the third of five repetitions (1 s phases): exit 130 within 15 s, the two
# complete repetitions kept and said so, their comparison kept
"$CEPHMARK" run "$work/points.lua" --repeats 5 -p seconds=1 -p progress=false -o "$work/interrupted" \
  >"$work/bg.out" 2>"$work/bg.err" </dev/null &
pid=$!
checks=$((checks + 1))
for _ in $(seq 150); do grep -q '^-- repetition 3/5' "$work/bg.out" && break; sleep 0.1; done
if grep -q '^-- repetition 3/5' "$work/bg.out"; then
  start=$(date +%s.%N)
  kill -INT "$pid"
  wait "$pid"
  last_status=$? last_command="run points.lua --repeats 5 (SIGINT in repetition 3)"
  pid=
  [ "$last_status" = 130 ] || { failures=$((failures + 1)); echo "FAIL: $last_command exited $last_status"; cat "$work/bg.err"; }
  expect_faster_than 15 "$start"
  cp "$work/bg.out" "$out_file"
  expect_stdout '^interrupted in repetition 3 of 5: 2 complete repetitions kept$'
  expect_stdout '^comparison by point \(baseline a, marked \*\): medians of 2 repetitions$'
  expect_stdout "^results: $work/interrupted\$"
  orders_of "$work/interrupted" >"$work/interrupted.txt"
  checks=$((checks + 1))
  grep -qx 'repeats 5 completed 2 status interrupted comparisons 1' "$work/interrupted.txt" ||
    { failures=$((failures + 1)); echo "FAIL: results.json of the interrupted run"; cat "$work/interrupted.txt"; }
  checks=$((checks + 1))
  grep -qx 'compared over 2' "$work/interrupted.txt" || { failures=$((failures + 1)); echo "FAIL: the comparison kept is not over the 2 complete repetitions"; }
  checks=$((checks + 1))
  grep -qE '^phases 1:a 1:b 2:b 2:a 3:a( 3:b)?$' "$work/interrupted.txt" ||
    { failures=$((failures + 1)); echo "FAIL: the phases of the complete repetitions and the interrupted one"; cat "$work/interrupted.txt"; }
else
  failures=$((failures + 1)); echo "FAIL: the run did not reach repetition 3 within 15 s"; cat "$work/bg.out" "$work/bg.err"
fi
finish
