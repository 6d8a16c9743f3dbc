-- The rbd bench and fio layouts from hand-made results, no cluster: every expected line
-- below was printed by the real `rbd bench` (Ceph 16.2.15) or fio 3.33 with its rbd
-- engine, and the results are built so cephmark's formatting must reproduce it exactly.
local fio = require "cephmark.report.fio"
local json = require "cephmark.json"
local rbd_bench = require "cephmark.report.rbd_bench"
local t = require "cephmark.test"

-- collect(fn) -> the lines fn printed through `out`
local function printer_lines(options)
  local lines = {}
  options.out = function(line) lines[#lines + 1] = line end
  return rbd_bench.new(options), lines
end

-- lines_eq(got, want, what): same lines, and the first difference named
local function lines_eq(got, want, what)
  for i = 1, math.max(#got, #want) do
    if got[i] ~= want[i] then
      return t.eq(got[i], want[i], string.format("%s, line %d", what, i))
    end
  end
  return t.ok(true)
end

---------------------------------------------------------------------------------------------
-- rbd bench: byte_u_t, exactly as Ceph prints rates

t.eq(rbd_bench.byte_u(3740590), "3.6 MiB", "913.23 ops/s * 4K (rbd bench: write_bytes/sec: 3.6 MiB/s)")
t.eq(rbd_bench.byte_u(4166670), "4.0 MiB", "4166.67 ops/s * 1000 B (rbd bench: 4.0 MiB/s)")
t.eq(rbd_bench.byte_u(28784435), "27 MiB", "7027.45 * 4K: two decimals do not fit in 7 characters")
t.eq(rbd_bench.byte_u(116391936), "111 MiB", "111.111 ops/s * 1M")
t.eq(rbd_bench.byte_u(1023), "1023 B", "below 1 KiB: bytes")
t.eq(rbd_bench.byte_u(4096), "4 KiB", "an exact multiple has no decimals")
t.eq(rbd_bench.byte_u(1536.9), "1.5 KiB", "truncated to whole bytes; \"1.50 KiB\" is 8 characters, so one decimal")
t.eq(rbd_bench.byte_u(3 * 2 ^ 30 + 2 ^ 29), "3.5 GiB", "GiB")
t.eq(rbd_bench.byte_u(0), "0 B", "nothing moved")
t.eq(rbd_bench.byte_u(1 / 0), "0 B", "an infinite rate (no elapsed time) is not printed as garbage")
t.eq(rbd_bench.ostream_double(3616.0), "3616", "C++ prints a whole double without decimals")
t.eq(rbd_bench.ostream_double(622.549019), "622.549", "six significant digits")

-- the header line, for each io type (captured)
t.eq(rbd_bench.header_line { io_type = "write", io_size = 4096, threads = 16, bytes = 67108864, pattern = "rand" },
  "bench  type write io_size 4096 io_threads 16 bytes 67108864 pattern random", "write header")
t.eq(rbd_bench.header_line { io_type = "read", io_size = 4096, threads = 16, bytes = 33554432, pattern = "seq" },
  "bench  type read io_size 4096 io_threads 16 bytes 33554432 pattern sequential", "read header")
t.eq(rbd_bench.header_line { io_type = "readwrite", rw_mix_read = 75, io_size = 4096, threads = 16,
  bytes = 33554432, pattern = "rand" },
  "bench  type readwrite read:write=75:25 io_size 4096 io_threads 16 bytes 33554432 pattern random",
  "readwrite header with its mix")
t.eq(rbd_bench.header_line { io_type = "write", io_size = 4096, threads = 16, bytes = 1073741824, pattern = "seq" },
  "bench  type write io_size 4096 io_threads 16 bytes 1073741824 pattern sequential",
  "the seed's bench-write header (defaults: 4K, 16 threads, 1G, sequential)")

-- a whole write run: header, rows (rolling 5-second window), summary, cephmark's lines
do
  local options = { io_type = "write", io_size = 4096, threads = 16, bytes = 67108864, pattern = "rand" }
  local printer, lines = printer_lines(options)
  printer:start()
  local per_second = { 7000, 5000, 6000, 6000, 6000, 3000, 8000 }
  local started = 16
  for sec, ops in ipairs(per_second) do
    started = started + ops
    printer:second { sec = sec, ops = ops, bytes = ops * 4096, started = started, finished = started - 16 }
  end
  printer:second { sec = 8, ops = 10, bytes = 40960, started = started, partial = true }
  local elapsed = 16384 / 5634.11
  printer:summary { elapsed = elapsed, ops = 16384, bytes = 16384 * 4096, errors = 0, verify_failures = 0,
    lat = { avg = 0.0042258, stddev = 0.0274845, min = 1.0412e-05, max = 0.580482, p50 = 0.000334,
      p90 = 0.001696, p95 = 0.010814, p99 = 0.089654, p99_9 = 0.467665, p99_99 = 0.467665 } }
  lines_eq(lines, {
    "bench  type write io_size 4096 io_threads 16 bytes 67108864 pattern random",
    "  SEC       OPS   OPS/SEC   BYTES/SEC",
    "    1      7000      7000    27 MiB/s",
    "    2     12000      6000    23 MiB/s",
    "    3     18000      6000    23 MiB/s",
    "    4     24000      6000    23 MiB/s",
    "    5     30000      6000    23 MiB/s",
    -- the window holds 5 seconds: the first second (7000) has left it
    "    6     33000      5200    20 MiB/s",
    "    7     41000      5800    23 MiB/s",
    -- captured from rbd bench (elapsed 2.908 s for 16384 ops)
    "elapsed: 2   ops: 16384   ops/sec: 5634.11   bytes/sec: 22 MiB/s",
    "latency(s) avg: 0.0042258   stddev: 0.0274845   min: 1.0412e-05   max: 0.580482",
    "latency(s) p50: 0.000334   p90: 0.001696   p95: 0.010814   p99: 0.089654   p99.9: 0.467665   p99.99: 0.467665",
    "errors: 0",
  }, "rbd bench write layout")
end

-- readwrite: rbd bench prints no per-direction columns, but a line per direction at the
-- end (captured: 8192 ops, 6066 reads, 2126 writes in 2.328 s)
do
  local options = { io_type = "readwrite", rw_mix_read = 75, io_size = 4096, threads = 16,
    bytes = 33554432, pattern = "rand" }
  local result = { elapsed = 8192 / 3518.9, ops = 8192, bytes = 8192 * 4096, reads = 6066, writes = 2126,
    errors = 0, verify_failures = 2, lat = {} }
  local lines = rbd_bench.summary_lines(result, options)
  lines_eq(lines, {
    "elapsed: 2   ops: 8192   ops/sec: 3518.9   bytes/sec: 14 MiB/s",
    "read_ops: 6066   read_ops/sec: 2605.67   read_bytes/sec: 10 MiB/s",
    "write_ops: 2126   write_ops/sec: 913.23   write_bytes/sec: 3.6 MiB/s",
  }, "rbd bench readwrite summary")
  local extra = rbd_bench.extra_lines(result, options)
  t.eq(extra[3], "errors: 0   verify_failures: 2", "reads: verify failures shown")
  result.verify_skipped = 7
  t.eq(rbd_bench.extra_lines(result, options)[3], "errors: 0   verify_failures: 2   verify_skipped: 7",
    "reads that could not be checked are counted, not passed as verified")
  t.eq(extra[1], "latency(s) avg: 0   stddev: 0   min: 0   max: 0", "no latency: zeros, not nil errors")

  -- the captured runs shorter than a second: elapsed 0, and rates over the exact time
  local short = rbd_bench.summary_lines({ elapsed = 0.204, ops = 256, bytes = 256 * 65536,
    reads = 127, writes = 129 }, { io_type = "readwrite", io_size = 65536 })
  lines_eq(short, {
    "elapsed: 0   ops: 256   ops/sec: 1254.9   bytes/sec: 78 MiB/s",
    "read_ops: 127   read_ops/sec: 622.549   read_bytes/sec: 39 MiB/s",
    "write_ops: 129   write_ops/sec: 632.353   write_bytes/sec: 40 MiB/s",
  }, "rbd bench rw 64K summary")
  t.eq(rbd_bench.summary_lines({ elapsed = 8 / 111.111, ops = 8, bytes = 8 * 1048576 }, { io_type = "write" })[1],
    "elapsed: 0   ops: 8   ops/sec: 111.111   bytes/sec: 111 MiB/s", "1M writes")
  t.eq(rbd_bench.summary_lines({ elapsed = 0, ops = 0, bytes = 0 }, { io_type = "write" })[1],
    "elapsed: 0   ops: 0   ops/sec: 0   bytes/sec: 0 B/s", "an empty run")
end

-- --format json: one document, the table's rows as datas, numbers as numbers
do
  local options = { io_type = "readwrite", rw_mix_read = 75, io_size = 4096, threads = 4,
    bytes = 1048576, pattern = "seq", json = true }
  local printer, lines = printer_lines(options)
  printer:start()
  printer:second { sec = 1, ops = 100, bytes = 409600, started = 104 }
  printer:second { sec = 2, ops = 50, bytes = 204800, started = 150, partial = true }
  printer:summary { elapsed = 1.5, ops = 150, bytes = 614400, reads = 110, writes = 40, errors = 0,
    verify_failures = 0, lat = { avg = 0.001, p99 = 0.004 } }
  t.eq(#lines, 1, "json: one line, nothing else on stdout")
  local doc = json.decode(lines[1])
  t.eq(doc.bench.type, "readwrite", "bench.type")
  t.eq(doc.bench.read_write, "75:25", "bench.read_write")
  t.eq(doc.bench.pattern, "sequential", "bench.pattern as rbd bench names it")
  t.eq(#doc.datas, 1, "the partial second is not a row")
  t.eq(doc.datas[1].ops, 100, "row ops: started minus io_threads")
  t.eq(doc.datas[1].ops_per_sec, 100, "row rate")
  t.eq(doc.ops_per_sec, 100, "ops per second of the exact elapsed time")
  t.eq(doc.read_ops, 110, "read_ops")
  t.near(doc.write_bytes_per_sec, 40 * 4096 / 1.5, 1e-6, "write_bytes_per_sec")
  t.eq(doc.latency.p99, 0.004, "latency in seconds")
  t.eq(doc.latency.p50, 0, "a missing percentile is 0")
end

---------------------------------------------------------------------------------------------
-- fio: num2str, captured values

t.eq(fio.num2str(35800, 4, 1, false, "none"), "35.8k", "the seed's IOPS=35.8k")
t.eq(fio.num2str(7557, 4, 1, false, "none"), "7557", "IOPS=7557")
t.eq(fio.num2str(30954273, 4, 1, true, "bytepersec"), "29.5MiB/s", "BW=29.5MiB/s")
t.eq(fio.num2str(30954273, 4, 1, false, "bytepersec"), "31.0MB/s", "(31.0MB/s): a carry into the integer part")
t.eq(fio.num2str(67108864, 4, 1, true, "byte"), "64.0MiB", "io=64.0MiB")
t.eq(fio.num2str(67108864, 4, 1, false, "byte"), "67.1MB", "(67.1MB)")
t.eq(fio.num2str(8531968, 4, 1, true, "byte"), "8332KiB", "io=8332KiB: no room for decimals")
t.eq(fio.num2str(8531968, 4, 1, false, "byte"), "8532kB", "(8532kB)")
t.eq(fio.num2str(4096, 4, 1, true, "byte"), "4096B", "bs=4096B")
t.eq(fio.num2str(65536, 4, 1, true, "byte"), "64.0KiB", "bs=64.0KiB")
t.eq(fio.num2str(4340506, 6, 1, false, "none"), "4340.5k", "slat max=4340.5k")
t.eq(fio.num2str(580482, 6, 1, false, "none"), "580482", "six digits fit")

-- the job's lines (captured from `fio rbd.fio`, the seed's template)
t.eq(fio.description_line { name = "rbd_iodepth32", io_type = "write", pattern = "rand", io_size = 4096, iodepth = 32 },
  "rbd_iodepth32: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=rbd, iodepth=32",
  "fio's job description line")
t.eq(fio.description_line { name = "test", io_type = "readwrite", pattern = "rand", io_size = 4096, iodepth = 64 },
  "test: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=rbd, iodepth=64",
  "randrw")
t.eq(fio.rw_name("read", "seq"), "read", "sequential reads")
t.eq(fio.rw_name("readwrite", "seq"), "rw", "sequential mix")

t.eq(fio.lat_line(" lat", { min = 22.4e-6, max = 0.5805104, avg = 0.00423275, stddev = 0.02748551 }),
  "     lat (usec): min=22, max=580510, avg=4232.75, stdev=27485.51", "lat line in usec")
t.eq(fio.lat_line("clat", { min = 681e-9, max = 27.864e-3, avg = 921924.86e-9, stddev = 3244627.23e-9 }),
  "    clat (nsec): min=681, max=27864k, avg=921924.86, stdev=3244627.23",
  "a minimum under 2 us keeps nsec, with k for thousands")
t.eq(fio.lat_line(" lat", { min = 2.5e-3, max = 0.75, avg = 0.1, stddev = 0.05 }),
  "     lat (msec): min=2, max=750, avg=100.00, stdev=50.00", "msec")

-- the clat percentiles block, from a full percentile list (lat.percentiles)
local function percentiles_of(values, scale)
  local list = {}
  for i, p in ipairs(fio.default_percentiles) do list[i] = { p = p, value = values[i] * scale } end
  return list
end
do
  local usec = { 73, 126, 161, 204, 260, 293, 334, 420, 519, 685, 1696, 10814, 89654, 147850, 467665, 467665, 467665 }
  local entries = fio.percentile_values({ percentiles = percentiles_of(usec, 1e-6) })
  t.eq(#entries, 17, "fio's default list, all 17")
  lines_eq(fio.percentile_lines("clat", entries), {
    "    clat percentiles (usec):",
    "     |  1.00th=[    73],  5.00th=[   126], 10.00th=[   161], 20.00th=[   204],",
    "     | 30.00th=[   260], 40.00th=[   293], 50.00th=[   334], 60.00th=[   420],",
    "     | 70.00th=[   519], 80.00th=[   685], 90.00th=[  1696], 95.00th=[ 10814],",
    "     | 99.00th=[ 89654], 99.50th=[147850], 99.90th=[467665], 99.95th=[467665],",
    "     | 99.99th=[467665]",
  }, "captured percentile block (usec, width 6)")

  local seed = { 200, 249, 285, 347, 412, 486, 562, 668, 807, 1012, 1483, 2212, 5014, 6783, 31589, 58983, 74974 }
  lines_eq(fio.percentile_lines("clat", fio.percentile_values({ percentiles = percentiles_of(seed, 1e-6) })), {
    "    clat percentiles (usec):",
    "     |  1.00th=[  200],  5.00th=[  249], 10.00th=[  285], 20.00th=[  347],",
    "     | 30.00th=[  412], 40.00th=[  486], 50.00th=[  562], 60.00th=[  668],",
    "     | 70.00th=[  807], 80.00th=[ 1012], 90.00th=[ 1483], 95.00th=[ 2212],",
    "     | 99.00th=[ 5014], 99.50th=[ 6783], 99.90th=[31589], 99.95th=[58983],",
    "     | 99.99th=[74974]",
  }, "the seed's percentile block (width 5)")

  local nsec = { 884, 12992, 28288, 61184, 98816, 154624, 222208, 309248, 481280, 659456, 1187840, 2146304,
    25296896, 27656192, 27918336, 27918336, 27918336 }
  lines_eq(fio.percentile_lines("clat", fio.percentile_values({ percentiles = percentiles_of(nsec, 1e-9) })), {
    "    clat percentiles (nsec):",
    "     |  1.00th=[     884],  5.00th=[   12992], 10.00th=[   28288],",
    "     | 20.00th=[   61184], 30.00th=[   98816], 40.00th=[  154624],",
    "     | 50.00th=[  222208], 60.00th=[  309248], 70.00th=[  481280],",
    "     | 80.00th=[  659456], 90.00th=[ 1187840], 95.00th=[ 2146304],",
    "     | 99.00th=[25296896], 99.50th=[27656192], 99.90th=[27918336],",
    "     | 99.95th=[27918336], 99.99th=[27918336]",
  }, "captured nsec block: 3 per line")

  -- the map form of lat.percentiles works too, and a missing entry is left out
  local map = { [1] = 73e-6, ["99.5"] = 147850e-6, [99.99] = 467665e-6 }
  local picked = fio.percentile_values({ percentiles = map })
  t.eq(#picked, 3, "map form: the three given")
  t.eq(picked[2].p, 99.5, "in fio's order")
end

-- without lat.percentiles: the six every result has
do
  local lat = { p50 = 334e-6, p90 = 1696e-6, p95 = 10814e-6, p99 = 89654e-6, p99_9 = 467665e-6, p99_99 = 467665e-6 }
  lines_eq(fio.percentile_lines("clat", fio.percentile_values(lat)), {
    "    clat percentiles (usec):",
    "     | 50.00th=[   334], 90.00th=[  1696], 95.00th=[ 10814], 99.00th=[ 89654],",
    "     | 99.90th=[467665], 99.99th=[467665]",
  }, "the result's own percentiles")
  t.eq(#fio.percentile_lines("clat", {}), 0, "no samples: no block")
end

-- sample lines
t.eq(fio.bw_line({ 1000, 3000 }, 2048000),
  "   bw (  KiB/s): min= 1000, max= 3000, per=100.00%, avg=2000.00, stdev=1414.21, samples=2",
  "bw line; per= is capped at 100%")
-- mean 28544.67; deviations -1544.67, 1455.33, 89.33; squares sum 4511970.7 / (3 - 1) = 2255985.3,
-- whose square root is 1501.99; per= is 28544.67 KiB/s against 30954273 B/s = 30228.78 KiB/s
t.eq(fio.bw_line({ 27000, 30000, 28634 }, 30954273),
  "   bw (  KiB/s): min=27000, max=30000, per=94.43%, avg=28544.67, stdev=1501.99, samples=3",
  "per= is the samples' mean against the aggregate bandwidth")
t.eq(fio.bw_line({ 2 * 1048576, 2 * 1048576 }, 2 * 2 ^ 30),
  "   bw (  MiB/s): min= 2048, max= 2048, per=100.00%, avg=2048.00, stdev= 0.00, samples=2",
  "above 1 GiB/s: MiB/s")
-- mean 6804, both 5380 away: sqrt(2 * 5380^2 / 1) = 7608.47
t.eq(fio.iops_line({ 1424, 12184 }),
  "   iops        : min= 1424, max=12184, avg=6804.00, stdev=7608.47, samples=2", "iops line")
t.eq(fio.bw_line({}, 100), nil, "no full second: no bw line")

-- the whole write report, captured numbers (16384 writes in 2168 ms)
do
  local series = {}
  for sec, kib in ipairs { 27000, 30000, 28634 } do
    series[sec] = { sec = sec, ops = kib // 4, bytes = kib * 1024 }
  end
  series[4] = { sec = 4, ops = 5, bytes = 20480, partial = true }
  local result = { io_type = "write", pattern = "rand", io_size = 4096, elapsed = 2.1685, ops = 16384,
    bytes = 67108864, series = series,
    lat = { count = 16384, min = 22.4e-6, max = 0.5805104, avg = 0.00423275, stddev = 0.02748551,
      p50 = 334e-6, p90 = 1696e-6, p95 = 10814e-6, p99 = 89654e-6, p99_9 = 467665e-6, p99_99 = 467665e-6 } }
  local lines = fio.lines(result, { name = "rbd_iodepth32", pid = 7899, time = os.time { year = 2026, month = 11,
    day = 3, hour = 6, min = 25, sec = 1 } })
  lines_eq(lines, {
    "rbd_iodepth32: (groupid=0, jobs=1): err= 0: pid=7899: Tue Nov  3 06:25:01 2026",
    "  write: IOPS=7557, BW=29.5MiB/s (31.0MB/s)(64.0MiB/2168msec); 0 zone resets",
    "     lat (usec): min=22, max=580510, avg=4232.75, stdev=27485.51",
    "    clat percentiles (usec):",
    "     | 50.00th=[   334], 90.00th=[  1696], 95.00th=[ 10814], 99.00th=[ 89654],",
    "     | 99.90th=[467665], 99.99th=[467665]",
    "   bw (  KiB/s): min=27000, max=30000, per=94.43%, avg=28544.67, stdev=1501.99, samples=3",
    "   iops        : min= 6750, max= 7500, avg=7136.00, stdev=375.48, samples=3",
    "     issued rwts: total=0,16384,0,0 short=0,0,0,0 dropped=0,0,0,0",
    "",
    "Run status group 0 (all jobs):",
    "  WRITE: bw=29.5MiB/s (31.0MB/s), 29.5MiB/s-29.5MiB/s (31.0MB/s-31.0MB/s), io=64.0MiB (67.1MB), run=2168-2168msec",
  }, "fio write report")
end

-- readwrite with only combined latency: fio's unified_rw_reporting=mixed layout
do
  local result = { io_type = "readwrite", pattern = "rand", io_size = 4096, elapsed = 1.8145, ops = 8192,
    bytes = 33554432, reads = 6109, writes = 2083, series = {},
    lat = { count = 8192, min = 8e-6, max = 0.214715, avg = 0.01416381, stddev = 0.02158079 } }
  local lines = fio.lines(result, { name = "test", pid = 9979, time = 0 })
  t.eq(lines[2], "  mixed: IOPS=4515, BW=17.6MiB/s (18.5MB/s)(32.0MiB/1814msec)", "captured mixed line")
  t.eq(lines[3], "     lat (usec): min=8, max=214715, avg=14163.81, stdev=21580.79", "captured mixed lat line")
  -- fio's mixed report folds every I/O into the read count (total=8192,0); the real split
  -- is more use, so cephmark prints it
  t.eq(lines[4], "     issued rwts: total=6109,2083,0,0 short=0,0,0,0 dropped=0,0,0,0", "the split of the mix")
  t.eq(lines[#lines],
    "  MIXED: bw=17.6MiB/s (18.5MB/s), 17.6MiB/s-17.6MiB/s (18.5MB/s-18.5MB/s), io=32.0MiB (33.6MB), run=1814-1814msec",
    "captured MIXED group line")
end

-- readwrite with each direction's latency: a read and a write block, as fio prints them
do
  local result = { io_type = "readwrite", pattern = "rand", io_size = 4096, elapsed = 0.8049, ops = 8192,
    bytes = 33554432, reads = 6109, writes = 2083,
    series = { { sec = 1, ops = 10, bytes = 40960, read_ops = 8, read_bytes = 32768, write_ops = 2,
      write_bytes = 8192, partial = true } },
    lat = { count = 8192, min = 8e-6, max = 0.1, avg = 0.006, stddev = 0.008 },
    lat_read = { count = 6109, min = 80e-6, max = 0.100228, avg = 0.00808594, stddev = 0.00944293 },
    lat_write = { count = 2083, min = 8e-6, max = 0.027864, avg = 0.00093354, stddev = 0.0032613 } }
  local lines = fio.lines(result, { name = "test", pid = 9956, time = 0 })
  t.eq(lines[2], "  read: IOPS=7598, BW=29.7MiB/s (31.1MB/s)(23.9MiB/804msec)", "captured read line")
  t.eq(lines[3], "     lat (usec): min=80, max=100228, avg=8085.94, stdev=9442.93", "captured read lat line")
  t.eq(lines[4], "  write: IOPS=2590, BW=10.1MiB/s (10.6MB/s)(8332KiB/804msec); 0 zone resets", "captured write line")
  t.eq(lines[5], "     lat (usec): min=8, max=27864, avg=933.54, stdev=3261.30", "captured write lat line")
  t.eq(lines[6], "     issued rwts: total=6109,2083,0,0 short=0,0,0,0 dropped=0,0,0,0", "captured issued line")
  t.eq(lines[9], "   READ: bw=29.7MiB/s (31.1MB/s), 29.7MiB/s-29.7MiB/s (31.1MB/s-31.1MB/s), io=23.9MiB (25.0MB), run=804-804msec",
    "captured READ group line")
  t.eq(lines[10], "  WRITE: bw=10.1MiB/s (10.6MB/s), 10.1MiB/s-10.1MiB/s (10.6MB/s-10.6MB/s), io=8332KiB (8532kB), run=804-804msec",
    "captured WRITE group line")
end

return t.done()
