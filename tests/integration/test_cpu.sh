# CPU per op against the real local cluster: a 4K write phase on a size-3 pool records the
# client's CPU per op and the CPU of this cluster's daemons on this host (3 ceph-osd, the
# mon, radosgw; other clusters' daemons on the same host are left out), prints a cpu/op
# line, fills phases.csv's cpu columns, and s:compare and `cephmark compare` take
# cpu.osd_per_op and cpu.client_per_op as metrics; a null phase keeps the client's figure
# only, without a line. With `telemetry = false` none of it is there.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
. "$CEPHMARK_SOURCE_DIR/tests/lib/results.sh"
work=$(mktemp -d)
trap 'for p in $(ceph osd pool ls 2>/dev/null | grep "^cephmark-cpu-"); do ceph osd pool rm "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1; done; rm -rf "$work" "$out_file" "$err_file"' EXIT

json_check_prelude='local function cpu(i) return ((r.phases[i] or {}).cluster or {}).cpu or {} end'

for telemetry in true false; do
  cat >"$work/cpu-$telemetry.lua" <<EOF
local cm = require "cephmark"
return cm.scenario {
  name = "cpu-$telemetry",
  telemetry = $telemetry,
  pools = { r = { type = "replicated", size = 3, pg_num = 8 } },
  run = function(s, p)
    for _, label in ipairs { "a", "b" } do
      s:phase("write", s:pool("r"), { seconds = 2, threads = 8, block_size = "4K", label = label,
        run_name = "cpu-" .. label })
    end
    s:phase("write", require "cephmark.null", { seconds = 1, threads = 4, delay = "1ms", label = "null" })
    s:compare { by = "variant", phases = { "write" }, where = {}, metrics = { "iops", "cpu.osd_per_op", "cpu.client_per_op" } }
    for _, label in ipairs { "a", "b" } do
      s:phase("cleanup", s:pool("r"), { run_name = "cpu-" .. label, label = label })
    end
  end,
}
EOF
done

# 1. telemetry on (the default)
run_cli 0 run "$work/cpu-true.lua" -o "$work/on"
expect_stdout '(^    | · )cpu/op: client [0-9.]+ (µs|ms), osds [0-9.]+ (µs|ms) \(3 ceph-osd\), mon [0-9.]+ (µs|ms)'
n=$(grep -cE '(^    | · )cpu/op:' "$out_file")
checks=$((checks + 1))
[ "$n" = 4 ] || { failures=$((failures + 1)); echo "FAIL: $n cpu/op lines, expected 4 (two writes, two cleanups; none for the null phase)"; }
json_check "$work/on" 'cpu(1).osd_per_op > 0 and cpu(2).osd_per_op > 0' "the OSDs' CPU per op of each write is > 0"
json_check "$work/on" 'cpu(1).osds == 3 and cpu(1).kinds["ceph-osd"].count == 3' "3 ceph-osd found (this cluster's only)"
json_check "$work/on" 'cpu(1).daemons["osd.0"] and cpu(1).daemons["osd.1"] and cpu(1).daemons["osd.2"] and cpu(1).daemons["mon.a"]' "named osd.0-2 and mon.a"
# the very processes of this cluster: their pids are the ones in its pid files
run_dir=$(dirname "$CEPH_CONF")/run
for daemon in osd.0 osd.1 osd.2 mon.a; do
  json_check "$work/on" "cpu(1).daemons[\"$daemon\"].pid == $(cat "$run_dir/$daemon.pid" 2>/dev/null || echo 0)" "$daemon is the process of $run_dir/$daemon.pid"
done
json_check "$work/on" 'cpu(1).kinds["radosgw"] and cpu(1).kinds["radosgw"].count == 1' "this cluster's radosgw"
json_check "$work/on" 'cpu(1).client_per_op > 0 and cpu(1).client.ops >= r.phases[1].result.ops' "the client's CPU per op, over every op of the phase"
json_check "$work/on" 'cpu(1).scope == "daemons on this host"' "the scope is said"
json_check "$work/on" 'cpu(1).mib_per_osd_cpu_second > 0' "MiB per OSD CPU-second"
# to as many significant digits as the OSDs' ticks (1/100 s) have, at most 6 (docs/cpu.md)
json_check "$work/on" '(function(c) local d = math.min(6, #tostring(math.floor(c.osd_seconds * 100 + 0.5))); return c.osd_per_op == tonumber(string.format("%.".. d .. "g", c.osd_seconds / c.client.ops)) end)(cpu(1))' "osd_per_op = OSD seconds / ops, to the digits measured"
json_check "$work/on" 'cpu(3).client_per_op > 0 and cpu(3).daemons == nil and cpu(3).osd_per_op == nil' "the null phase: the client only"
json_check "$work/on" 'r.phases[1].result.client_cpu == nil' "the client's CPU is in cluster.cpu, not in result"
json_check "$work/on" 'r.comparisons[1].rows[1].stats["cpu.osd_per_op"].median > 0' "s:compare takes cpu.osd_per_op"
header=$(head -1 "$work/on/phases.csv")
row=$(sed -n 2p "$work/on/phases.csv")
col=$(tr ',' '\n' <<<"$header" | grep -nx cpu_osd_per_op | cut -d: -f1)
value=$(cut -d, -f"${col:-1}" <<<"$row")
checks=$((checks + 1))
[ -n "$col" ] && [ -n "$value" ] || { failures=$((failures + 1)); echo "FAIL: phases.csv: cpu_osd_per_op '$value' (column ${col:-missing})"; }
run_cli 0 compare "$work/on" "$work/on" --metric cpu.osd_per_op,cpu.client_per_op
expect_stdout 'cpu.osd_per_op µs +[0-9]'
# the report draws the comparison's CPU per op by variant, in µs
for text in 'cpu.osd_per_op (CPU seconds per op) by variant' 'median (µs)'; do
  checks=$((checks + 1))
  grep -qF "$text" "$work/on/report.html" || { failures=$((failures + 1)); echo "FAIL: report.html lacks '$text'"; }
done

# 2. telemetry = false: no line, no cluster.cpu, empty columns
run_cli 0 run "$work/cpu-false.lua" -o "$work/off"
checks=$((checks + 1))
if grep -q 'cpu/op' "$out_file"; then failures=$((failures + 1)); echo "FAIL: telemetry = false printed a cpu/op line"; fi
json_check "$work/off" 'r.phases[1].cluster == nil and r.phases[3].cluster == nil' "telemetry = false: no cluster.cpu"
value=$(sed -n 2p "$work/off/phases.csv" | cut -d, -f"${col:-1}")
checks=$((checks + 1))
[ -z "$value" ] || { failures=$((failures + 1)); echo "FAIL: telemetry = false: cpu_osd_per_op is '$value'"; }
finish
