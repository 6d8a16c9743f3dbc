-- dd's summary line for a cephmark.disk result, so a disk baseline reads like the dd runs
-- it replaces: "67108864 bytes (67 MB, 64 MiB) copied, 0.0812 s, 826 MB/s".

local M = {}

-- dd's human sizes: powers of 1000 with one significant decimal below 10 ("1.1 GB"), and
-- the same in powers of 1024 ("1.0 GiB").
local function human(bytes, base, units)
  local value, unit = bytes, nil
  for _, u in ipairs(units) do
    if value < base then break end
    value, unit = value / base, u
  end
  if not unit then return string.format("%d B", bytes) end
  if value < 10 then return string.format("%.1f %s", value, unit) end
  return string.format("%.0f %s", value, unit)
end

local function rate(bytes_per_second)
  local units = { "kB/s", "MB/s", "GB/s", "TB/s" }
  local value, unit = bytes_per_second, "B/s"
  for _, u in ipairs(units) do
    if value < 1000 then break end
    value, unit = value / 1000, u
  end
  return string.format("%.3g %s", value, unit)
end

-- dd_line(result) -> "N bytes (x MB, y MiB) copied, S s, R MB/s"
function M.dd_line(result)
  local dd = result.dd
  local bytes, seconds = dd.bytes, dd.seconds
  local sizes = ""
  if bytes >= 1000 then
    sizes = string.format(" (%s, %s)", human(bytes, 1000, { "kB", "MB", "GB", "TB" }),
      human(bytes, 1024, { "KiB", "MiB", "GiB", "TiB" }))
  end
  return string.format("%d bytes%s copied, %.6g s, %s", bytes, sizes, seconds,
    rate(seconds > 0 and bytes / seconds or 0))
end

return M
