# Ceph option names in sweeps, s:with_config and s:set_config, checked against the real
# monitors at the line that names them, before any phase under them runs:
# - a dimension named like a Ceph option but without WHO/ (it would set nothing, and its
#   points would differ only in their labels) is refused, with the WHO/OPTION meant;
# - an option the cluster does not have is refused with "did you mean", also a debug_
#   level (which `config ls` leaves out) and in with_config and set_config;
# - a param of the scenario named like an option stays the scenario's own;
# - an option the daemons read only at start is run, with a warning.
# Each refusal runs no phase under it and leaves no results folder when no phase ran; the
# cluster's config database and pools are the same afterwards.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT

config_before=$(ceph config dump 2>/dev/null | md5sum)
pools_before=$(ceph osd pool ls 2>/dev/null | sort | md5sum)

cat >"$work/config.lua" <<'LUA'
local cm = require "cephmark"
local built_outside = cm.sweep { osd_op_num_shards = { 4, 8 } } -- @top
return cm.scenario {
  name = "config-sweep",
  params = {
    case = cm.string("free", "which call to make"),
    host = cm.string("a", "a param named like a Ceph option"),
  },
  pools = { bench = { type = "replicated", size = 2 } },
  run = function(s, p)
    local pool = s:pool("bench")
    local function write() s:phase("write", pool, { ops = 20, threads = 2, block_size = "4K" }) end
    if p.case == "free" then
      for _ in s:sweep(cm.sweep { osd_op_num_shards = { 4, 8 } }) do write() end -- @free
    elseif p.case == "top" then
      for _ in s:sweep(built_outside) do write() end
    elseif p.case == "misspelt" then
      write()
      local shards = cm.sweep { ["osd/osd_op_num_shardz"] = { 4, 8 } } -- @misspelt
      for _ in s:sweep(shards) do write() end
    elseif p.case == "debug" then
      for _ in s:sweep(cm.zip { ["osd/debug_osdd"] = { "0/0" } }) do write() end -- @debug
    elseif p.case == "with" then
      s:with_config({ ["osd/debug_ms"] = "0/0", ["osd/osd_op_num_shardz"] = 4 }, write) -- @with
    elseif p.case == "set" then
      s:set_config("osd", "debug_mss", "0/0") -- @set
    elseif p.case == "own" then
      for _ in s:sweep(cm.sweep { host = { "a", "b" }, threads = { 1, 2 } }) do write() end
    elseif p.case == "startup" then
      for _ in s:sweep(cm.zip { ["osd/osd_op_num_shards"] = { 4 } }) do write() end -- @startup
    end
  end,
}
LUA
script="$work/config.lua"
at() { echo "$script:$(grep -n -- "-- @$1\$" "$script" | cut -d: -f1)"; }
no_phase() {
  checks=$((checks + 1))
  if grep -q '^\[1\]' "$out_file"; then failures=$((failures + 1)); echo "FAIL: $last_command: a phase ran before the refusal"; fi
}
no_folder() {
  checks=$((checks + 1))
  [ ! -e "$1" ] || { failures=$((failures + 1)); echo "FAIL: $last_command: the refused run left $1"; }
}

# a Ceph option as a free dimension name: refused, with the WHO/OPTION meant
run_cli 2 run "$script" -p case=free -o "$work/free"
expect_stderr_line "cephmark: $(at free): sweep: 'osd_op_num_shards' is a Ceph option: a dimension sets it in the cluster only when named WHO/OPTION (did you mean 'osd/osd_op_num_shards'?); to sweep a value the scenario reads itself under this name, declare it in params"
expect_stderr_lines 1
no_phase
no_folder "$work/free"

# a sweep built outside the run is checked when s:sweep gets it, at the line that built it
run_cli 2 run "$script" -p case=top -o "$work/top"
expect_stderr_line "cephmark: $(at top): sweep: 'osd_op_num_shards' is a Ceph option: a dimension sets it in the cluster only when named WHO/OPTION (did you mean 'osd/osd_op_num_shards'?); to sweep a value the scenario reads itself under this name, declare it in params"
no_phase
no_folder "$work/top"

# a misspelt option, in a sweep built after a phase: refused at cm.sweep's line, before
# the sweep starts
run_cli 2 run "$script" -p case=misspelt -o "$work/misspelt"
expect_stderr_line "cephmark: $(at misspelt): sweep: 'osd/osd_op_num_shardz': the cluster has no config option 'osd_op_num_shardz' (did you mean 'osd/osd_op_num_shards'?)"
expect_stderr_lines 1
expect_stdout '^\[1\] write'
checks=$((checks + 1))
if grep -qE '^\[2\]|^-- point|^sweep:' "$out_file"; then failures=$((failures + 1)); echo "FAIL: $last_command: the sweep started"; fi

# a misspelt debug level: `config ls` does not list them, the suggestion still comes
run_cli 2 run "$script" -p case=debug -o "$work/debug"
expect_stderr_line "cephmark: $(at debug): zip: 'osd/debug_osdd': the cluster has no config option 'debug_osdd' (did you mean 'osd/debug_osd'?)"
no_phase

# with_config: every option checked before the first is set and before its function runs
run_cli 2 run "$script" -p case=with -o "$work/with"
expect_stderr_line "cephmark: $(at with): s:with_config: 'osd/osd_op_num_shardz': the cluster has no config option 'osd_op_num_shardz' (did you mean 'osd/osd_op_num_shards'?)"
expect_stderr_lines 1
no_phase
checks=$((checks + 1))
if grep -q 'config osd/debug_ms = ' "$out_file"; then failures=$((failures + 1)); echo "FAIL: $last_command: osd/debug_ms was set"; fi
no_folder "$work/with"

run_cli 2 run "$script" -p case=set -o "$work/set"
expect_stderr_line "cephmark: $(at set): s:set_config: 'osd/debug_mss': the cluster has no config option 'debug_mss' (did you mean 'osd/debug_ms'?)"
expect_stderr_lines 1

# a param named like a Ceph option is the scenario's own; threads is no option
run_cli 0 run "$script" -p case=own -o "$work/own"
expect_stdout '^-- point 4/4: host=b threads=2$'
checks=$((checks + 1))
[ -s "$err_file" ] && { failures=$((failures + 1)); echo "FAIL: $last_command: stderr not empty"; sed 's/^/  stderr: /' "$err_file"; }

# an option the daemons read only when they start: run as asked, with a warning
run_cli 0 run "$script" -p case=startup -o "$work/startup"
expect_stderr_line "cephmark: warning: $(at startup): zip: 'osd/osd_op_num_shards' cannot change at runtime (the daemons read it when they start, and cephmark does not restart them): every point runs with the value the daemons started with"
expect_stderr_lines 1
expect_stdout '^  config osd/osd_op_num_shards restored to '

# the cluster as it was
checks=$((checks + 1))
[ "$(ceph config dump 2>/dev/null | md5sum)" = "$config_before" ] || { failures=$((failures + 1)); echo "FAIL: the config database changed"; ceph config dump; }
checks=$((checks + 1))
[ "$(ceph osd pool ls 2>/dev/null | sort | md5sum)" = "$pools_before" ] || { failures=$((failures + 1)); echo "FAIL: the pools changed"; ceph osd pool ls; }
finish
