# check_results and json_check for integration tests that read a run's results.json.
# Source it after assert.sh.
#
# check_results DIR PYTHON-EXPRESSIONS...: one check that each expression is true of the
# results document `d` in DIR/results.json, with its phases by name in `ph`. A test sets
# `results_names` to Python statements defining more names from `d` (e.g. one phase), and
# `results_dump` to Python statements that print what helps read a failure. Each false
# expression (or one that raises, with its exception) is printed as "  not true: ...",
# then the dump, and the check fails with "FAIL: DIR/results.json".
results_names=
results_dump=
check_results() {
  local dir=$1
  shift
  checks=$((checks + 1))
  if ! python3 - "$dir/results.json" "$results_names" "$results_dump" "$@" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
ph = {p["name"]: p for p in d.get("phases", [])}
exec(sys.argv[2])
bad = []
for e in sys.argv[4:]:
    try:
        if not eval(e):
            bad.append(e)
    except Exception as x:
        bad.append(e + " (" + repr(x) + ")")
for e in bad:
    print("  not true:", e)
if bad:
    exec(sys.argv[3])
sys.exit(1 if bad else 0)
PY
    fail "$dir/results.json"
  fi
}

# results_python FILE: runs the Python read from stdin against the results document FILE,
# with `doc`, its phases by index in `phases`, and check(cond, what), which prints `what`
# when cond is false; exits 1 when a check was false (or the Python raised), for the caller
# to say what failed: `results_python FILE <<'PY' || fail "..."`.
results_python() {
  {
    cat <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
phases = {p["index"]: p for p in doc["phases"]}
ok = True
def check(cond, what):
    global ok
    if not cond:
        ok = False
        print("  " + what)
PY
    cat
    echo 'sys.exit(0 if ok else 1)'
  } | python3 - "$1"
}

# json_check DIR LUA_CONDITION WHAT: one check that LUA_CONDITION holds for DIR/results.json,
# decoded by cephmark's own JSON decoder as `r` (so that its numbers are the ones a scenario
# sees). A test sets `json_check_prelude` to Lua lines defining more names from `r` (e.g.
# `space(i)`), and may define a shell function `json_check_dump DIR` that prints what helps
# read a failure. Needs $CEPHMARK and $work; counts in $checks and $failures.
json_check_prelude=
json_check() {
  checks=$((checks + 1))
  cat >"$work/check.lua" <<EOF
local sys = require "cephmark.sys"
local r = require("cephmark.json").decode(assert(sys.read_file([==[$1/results.json]==])))
$json_check_prelude
if not ($2) then return { failed_ops = 1 } end
EOF
  if ! "$CEPHMARK" run "$work/check.lua" >/dev/null 2>"$work/check.err"; then
    failures=$((failures + 1))
    echo "FAIL: $3: ($2) does not hold for $1/results.json"
    sed 's/^/  /' "$work/check.err" | head -5
    if declare -F json_check_dump >/dev/null; then json_check_dump "$1"; fi
  fi
}
