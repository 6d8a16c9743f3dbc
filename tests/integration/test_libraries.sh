# Team libraries: a scenario finds `require`d modules in its own folder, in -L folders,
# through LUA_PATH and in a luarocks tree. Uses the documented example in
# docs/examples/team-lib (one library, two scenarios).
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
lib="$CEPHMARK_SOURCE_DIR/docs/examples/team-lib"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

# 1. next to the scenario, for real on the cluster (both scenarios share the library)
run_cli 0 run "$lib/small-objects.lua" -p seconds=1 -p k=2 -p m=1 -o "$work/small"
expect_stdout '^comparison by pool \(baseline replica, marked \*; one run each: the uncertainty of these changes is unknown, --repeats N measures it\)$'
expect_stdout '^write  ec +[0-9.]+ \([-+][0-9.]+%\)'
checks=$((checks + 1))
[ -s "$work/small/results.json" ] || { failures=$((failures + 1)); echo "FAIL: no results.json"; }

# the other scenario, copied away from its library: not found without help...
cp "$lib/large-objects.lua" "$work/"
run_cli 2 run "$work/large-objects.lua" --help
expect_stderr "module 'ourteam.standard' not found"
# 2. ...found with -L
run_cli 0 run "$work/large-objects.lua" -L "$lib" --help
expect_stdout 'seconds'
# 3. found through LUA_PATH
LUA_PATH="$lib/?.lua;;" run_cli 0 run "$work/large-objects.lua" --help
expect_stdout 'threads'
# 4. found in a luarocks user tree (~/.luarocks/share/lua/5.4)
mkdir -p "$work/home/.luarocks/share/lua/5.4/ourteam"
cp "$lib/ourteam/standard.lua" "$work/home/.luarocks/share/lua/5.4/ourteam/"
HOME="$work/home" run_cli 0 run "$work/large-objects.lua" --help
expect_stdout 'threads'
finish
