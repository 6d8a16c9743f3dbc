# Verdicts end to end on the null target, through the real engine and `cephmark run`:
# delays of 1.0 ms against 1.5 ms with --repeats 5 report `higher` latency with a change
# near +50 % (a wide band: the engine's own time, and the wake-up delays of a busy machine,
# add to both sides and shrink the ratio), and IOPS that are
# `slower` or, on a machine busy enough to hide the difference in its noise, not detectably different
# (never `faster`: the IOPS of a busy machine spread by ±15 % from phase to phase, so a
# strict `slower` would test the machine's load, not cephmark);
# two identical variants report `no difference detectable`; results.json and
# comparison.csv carry each row's n, median, interval, change, its interval, verdict and
# per-repetition values. Needs no cluster.
#
# The A/A check: an honest 95 % interval excludes 0 in about 5 % of experiments where
# nothing differs, so one A/A run may rightly say "slower". The check allows three
# attempts and passes when one says "no difference detectable" (a false failure once in
# 8000); a verdict that always claimed a difference would fail all three.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

cat >"$work/delays.lua" <<'LUA'
local cm = require "cephmark"
local null = require "cephmark.null"
return cm.scenario {
  name = "verdicts",
  repeats = 5,
  params = { slow = cm.duration("1.5ms", "the second variant's delay") },
  run = function(s, p)
    for point in s:sweep(cm.zip({ delay = { 0.001, p.slow } }, { labels = { "base", "new" } })) do
      s:phase("write", null, { threads = 4, ops = 600, delay = point.delay })
    end
    s:compare { by = "point", baseline = "base", metrics = { "iops", "lat.p50" } }
  end,
}
LUA

# row_of DIR METRIC: the second row's figures for METRIC, one line
cat >"$work/row.lua" <<'LUA'
local p = ...
local json = require "cephmark.json"
local sys = require "cephmark.sys"
local doc = json.decode(assert(sys.read_file(p.dir .. "/results.json")))
local row = doc.comparisons[1].rows[2]
local s = row.stats[p.metric]
local values = {}
for i, v in ipairs(s.values) do values[i] = type(v) == "number" and "x" or "-" end
local function f(x) return type(x) == "number" and string.format("%.3f", x) or "nil" end
print(string.format("n=%d median=%s ci=%s change=%s low=%s high=%s verdict=%s values=%s mde=%s",
  s.n, type(s.median), type(s.ci_low) == "number" and type(s.ci_high) == "number" and "yes" or "no",
  f(s.change), f(s.change_ci_low), f(s.change_ci_high), s.verdict, table.concat(values), type(s.mde)))
LUA
row_of() { "$CEPHMARK" run "$work/row.lua" -p dir="$1" -p metric="$2"; }

# check NAME CONDITION: one counted check
check() {
  checks=$((checks + 1))
  if ! eval "$2"; then
    failures=$((failures + 1))
    echo "FAIL: $1"
  fi
}

# in_band VALUE LOW HIGH: LOW <= VALUE <= HIGH, decimals allowed
in_band() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }

# 1.0 ms against 1.5 ms: higher latency, slower IOPS, about +50 %
run_cli 0 run "$work/delays.lua" -o "$work/ab"
expect_stdout '^comparison by point \(baseline base, marked \*\): medians of 5 repetitions$'
expect_stdout '^write  p50 ms  base \*'
expect_stdout '^ +new +[0-9.]+ \[[0-9.]+, [0-9.]+\] +([0-9.]+ +)?\+[0-9.]+ % \[\+[0-9.]+, \+[0-9.]+\] +higher +[0-9.]+ %$'
expect_stdout '^ +new +[0-9]+ \[[0-9]+, [0-9]+\] +[-+][0-9.]+ % \[-[0-9.]+, [-+][0-9.]+\] +(slower|no difference detectable \(±[0-9.]+ %\)) +[0-9.]+ %$'
p50=$(row_of "$work/ab" lat.p50)
iops=$(row_of "$work/ab" iops)
check "p50: n, median, interval, per-repetition values ($p50)" \
  '[[ "$p50" == "n=5 median=number ci=yes "*" verdict=higher values=xxxxx mde=number" ]]'
check "iops: slower, or within the noise of a busy machine ($iops)" \
  '[[ "$iops" == *" verdict=slower values=xxxxx mde=number" || "$iops" == *" verdict=no difference detectable "*" values=xxxxx mde=number" ]]'
change=$(sed -n 's/.* change=\([-0-9.]*\) .*/\1/p' <<<"$p50")
check "p50 change near +50 % ($change)" 'in_band "$change" 15 60'
low=$(sed -n 's/.* low=\([-0-9.]*\) .*/\1/p' <<<"$iops")
check "iops: the interval of the change reaches below 0 ($low)" 'in_band "$low" -100 0'
check "comparison.csv carries the verdict" \
  'grep -q "^1,point,base,write,new,false,lat.p50,.*,5,.*,higher,.*,[0-9.e+-]*;[0-9.e+-]*;[0-9.e+-]*;[0-9.e+-]*;[0-9.e+-]*$" "$work/ab/comparison.csv"'

# two identical variants: no difference detectable (up to three attempts, see above)
aa_ok=0
for attempt in 1 2 3; do
  "$CEPHMARK" run "$work/delays.lua" -p slow=1ms -o "$work/aa$attempt" >"$work/aa$attempt.txt" 2>&1 || break
  if grep -Eq '^ +new .* no difference detectable \(±[0-9.]+ %\)' "$work/aa$attempt.txt" &&
    [[ "$(row_of "$work/aa$attempt" lat.p50)" == *"verdict=no difference detectable"* ]]; then
    aa_ok=1
    break
  fi
done
check "A/A: no difference detectable in one of three attempts" '[ "$aa_ok" = 1 ]'

# one run each: said plainly, changes in whole percent
run_cli 0 run "$work/delays.lua" --repeats 1 -o "$work/one"
expect_stdout '^comparison by point \(baseline base, marked \*; one run each: the uncertainty of these changes is unknown, --repeats N measures it\)$'
expect_stdout '^write  new  +[0-9]+ \([-+][0-9]+%\) +[0-9.]+ \(\+[0-9]+%\)$'
check "one run: the row's verdict says the uncertainty is unknown" \
  '[[ "$(row_of "$work/one" lat.p50)" == "n=1 median=number ci=no change="*" low=nil high=nil verdict=one run each: uncertainty unknown values=x mde=nil" ]]'

finish verdicts.sh
