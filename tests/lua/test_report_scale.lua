-- Axis and unit computations of the HTML report (stdlib/cephmark/report/scale.lua): nice
-- linear ticks, log10 decades, log2 size axes labelled 4K/64K/4M, the percentile "nines"
-- axis, and the formatting of MiB/s, IOPS, latency and sizes.
local scale = require "cephmark.report.scale"
local t = require "cephmark.test"

local function labels(s)
  local out = {}
  for _, tick in ipairs(s:ticks()) do out[#out + 1] = tick.label end
  return table.concat(out, " ")
end

-- units
t.eq(scale.size(4096), "4K", "4K")
t.eq(scale.size(65536), "64K", "64K")
t.eq(scale.size(4194304), "4M", "4M")
t.eq(scale.size(512), "512", "512 bytes")
t.eq(scale.size(1536 * 1024 * 1024), "1.5G", "1.5G")
t.eq(scale.mib_s(138.09328), "138 MiB/s", "MiB/s to 3 figures")
t.eq(scale.mib_s(3.3412), "3.34 MiB/s", "small MiB/s")
t.eq(scale.mib_s(1755.7), "1756 MiB/s", "large MiB/s keeps integer digits")
t.eq(scale.latency(0.000250), "250 µs", "microseconds")
t.eq(scale.latency(0.0012345), "1.23 ms", "milliseconds")
t.eq(scale.latency(0.4663), "466 ms", "hundreds of ms")
t.eq(scale.latency(2.5), "2.5 s", "seconds")
t.eq(scale.count(950), "950", "count")
t.eq(scale.count(12345), "12.3k", "count k")
t.eq(scale.count(14906403), "14.9M", "count M")
t.eq(scale.number(0.00125), "0.00125", "small number")
t.eq(scale.number(2.5), "2.5", "no trailing zeros")
t.eq(scale.percentile(99.99), "99.99", "percentile label")

-- nice steps: 1, 2 or 5 x 10^k
t.eq(scale.nice_step(100, 5), 20, "100 / 5 -> 20")
t.eq(scale.nice_step(7, 5), 2, "7 / 5 -> 2")
t.eq(scale.nice_step(1755, 5), 500, "1755 / 5 -> 500")
t.eq(scale.nice_step(0.9, 5), 0.2, "0.9 / 5 -> 0.2")

-- linear: starts at 0 for non-negative data, ends on a tick at or above the maximum
local bandwidth = scale.linear(108, 1755.7, { format = scale.number })
t.eq(labels(bandwidth), "0 500 1000 1500 2000", "MiB/s axis")
t.eq(bandwidth:fraction(0), 0, "0 at the bottom")
t.eq(bandwidth:fraction(2000), 1, "top tick at the top")
t.near(bandwidth:fraction(1000), 0.5, 1e-12, "linear middle")
t.eq(labels(scale.linear(3, 9, { zero = false })), "2 4 6 8 10", "without zero")
t.eq(labels(scale.linear(0, 0)), "0 0.2 0.4 0.6 0.8 1", "empty data still gives an axis")
t.eq(labels(scale.linear(0, 0.9)), "0 0.2 0.4 0.6 0.8 1", "fractional steps print cleanly")

-- log10: whole decades, 2 and 5 ticks when the data spans two decades or less
local latency = scale.log10(0.0004, 0.03, { format = scale.latency })
t.eq(labels(latency), "100 µs 200 µs 500 µs 1 ms 2 ms 5 ms 10 ms 20 ms 50 ms 100 ms",
  "latency axis over three decades")
t.near(latency:fraction(0.0001), 0, 1e-12, "log bottom")
t.near(latency:fraction(0.1), 1, 1e-12, "log top")
t.near(latency:fraction(0.001), 1 / 3, 1e-12, "one decade of three")
local wide = scale.log10(0.000005, 2.5, { format = scale.latency })
t.eq(labels(wide), "1 µs 10 µs 100 µs 1 ms 10 ms 100 ms 1 s 10 s", "decades only when wider")
t.eq(labels(scale.log10(1, 1)), "1 2 5 10", "a single value gets a decade")
t.raises(function() scale.log10(0, 1) end, "a log scale needs positive values", "log of 0 refused")

-- log2: sizes swept by doubling, each value a tick, evenly spaced by powers of two
local sizes = scale.log2({ 4194304, 4096, 65536, 4096 }, { format = scale.size })
t.eq(labels(sizes), "4K 64K 4M", "sorted, unique, as sizes")
t.eq(sizes:fraction(4096), 0, "4K at the left")
t.eq(sizes:fraction(4194304), 1, "4M at the right")
t.near(sizes:fraction(65536), 0.4, 1e-12, "64K is 4 doublings of 10")
local threads = scale.log2({ 1, 4, 16, 64 })
t.eq(labels(threads), "1 4 16 64", "thread counts")
t.near(threads:fraction(16), 2 / 3, 1e-12, "16 of 1..64")
t.raises(function() scale.log2({ 0, 4 }) end, "a log2 scale needs positive values", "0 refused")

-- percentiles: 90 -> one nine, 99 -> two, 99.9 -> three
local nines = scale.percentiles(99.99)
t.eq(labels(nines), "0 50 90 99 99.9 99.99", "nines ticks")
t.eq(nines:fraction(0), 0, "p0 at the left")
t.near(nines:fraction(90), 0.25, 1e-12, "p90 a quarter along four nines")
t.near(nines:fraction(99.9), 0.75, 1e-12, "p99.9")
t.near(nines:fraction(99.99), 1, 1e-12, "p99.99 at the right")
t.eq(labels(scale.percentiles(95)), "0 50 90 99", "at least two nines")

return t.done()
