-- Inline SVG charts for the HTML report: line charts (time series, percentile curves,
-- sweep curves) and grouped bar charts with error bars (variant comparisons). Each chart is
-- one <svg> string with its axes, ticks, grid, legend and data marks; data marks carry the
-- classes "series", "point" and "bar" and each chart a data-points count, so a browser test
-- can check that data was drawn. No scripts, no external references.

local scale_module = require "cephmark.report.scale"

local M = {}

M.palette = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
  "#17becf", "#7f7f7f", "#bcbd22" }

function M.escape(text)
  return (tostring(text):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;", ["'"] = "&#39;" }))
end
local escape = M.escape

local function fmt(v) return string.format("%.1f", v) end

-- Plot area inside the chart, leaving room for tick labels, titles and the legend.
local function frame(options, legend_rows)
  local width, height = options.width or 600, options.height or 300
  local area = { left = 64, right = width - 16, top = 30, bottom = height - 44 - legend_rows * 16 }
  return width, height, area
end

local function axes(out, area, x, y)
  local width = area.right - area.left
  local height = area.bottom - area.top
  for _, tick in ipairs(y.scale:ticks()) do
    local f = y.scale:fraction(tick.value)
    if f >= -1e-9 and f <= 1 + 1e-9 then
      local py = area.bottom - f * height
      out[#out + 1] = string.format('<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>',
        fmt(area.left), fmt(py), fmt(area.right), fmt(py))
      out[#out + 1] = string.format('<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>',
        fmt(area.left - 6), fmt(py + 4), escape(tick.label))
    end
  end
  for _, tick in ipairs(x.scale:ticks()) do
    local f = x.scale:fraction(tick.value)
    if f >= -1e-9 and f <= 1 + 1e-9 then
      local px = area.left + f * width
      out[#out + 1] = string.format('<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>',
        fmt(px), fmt(area.top), fmt(px), fmt(area.bottom))
      out[#out + 1] = string.format('<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>',
        fmt(px), fmt(area.bottom + 16), escape(tick.label))
    end
  end
  out[#out + 1] = string.format('<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>',
    fmt(area.left), fmt(area.bottom), fmt(area.right), fmt(area.bottom))
  out[#out + 1] = string.format('<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>',
    fmt(area.left), fmt(area.top), fmt(area.left), fmt(area.bottom))
  if x.title then
    out[#out + 1] = string.format('<text class="axis-title" x="%s" y="%s" text-anchor="middle">%s</text>',
      fmt((area.left + area.right) / 2), fmt(area.bottom + 32), escape(x.title))
  end
  if y.title then
    out[#out + 1] = string.format(
      '<text class="axis-title" x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">%s</text>',
      fmt(14), fmt((area.top + area.bottom) / 2), fmt(14), fmt((area.top + area.bottom) / 2), escape(y.title))
  end
end

-- Legend entries per row: as many as fit the longest name (about 6.5 px per character).
local function legend_columns(names, width)
  local longest = 0
  for _, name in ipairs(names) do longest = math.max(longest, utf8.len(name) or #name) end
  return math.max(1, math.min(4, math.floor((width - 80) / (longest * 6.5 + 24))))
end

local function legend_rows(names, width)
  if #names < 2 then return 0 end
  return math.ceil(#names / legend_columns(names, width))
end

local function legend(out, area, names, height)
  local columns = legend_columns(names, area.right - area.left + 80)
  local x, y = area.left, height - 8 - (math.ceil(#names / columns) - 1) * 16
  for i, name in ipairs(names) do
    local column = (i - 1) % columns
    local row = (i - 1) // columns
    local px = x + column * ((area.right - area.left) / columns)
    local py = y + row * 16
    out[#out + 1] = string.format('<rect class="swatch" x="%s" y="%s" width="10" height="10" fill="%s"/>',
      fmt(px), fmt(py - 9), M.palette[(i - 1) % #M.palette + 1])
    out[#out + 1] = string.format('<text class="legend" x="%s" y="%s">%s</text>', fmt(px + 14), fmt(py),
      escape(name))
  end
end

local function open_svg(out, kind, title, width, height, points)
  out[#out + 1] = string.format(
    '<svg class="chart" data-kind="%s" data-points="%d" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">',
    kind, points, width, height, width, height, escape(title))
  out[#out + 1] = string.format('<text class="chart-title" x="%d" y="18">%s</text>', 64, escape(title))
end

-- line{title, x = {scale, title}, y = {scale, title}, series = {{name, points = {{x, y}}}}}
-- Points outside a log scale's domain (zero, negative) are left out of the line.
function M.line(options)
  local series = options.series or {}
  local names = {}
  for i, s in ipairs(series) do names[i] = s.name or ("series " .. i) end
  local width, height, area = frame(options, legend_rows(names, options.width or 600))
  local out, total = {}, 0
  for _, s in ipairs(series) do total = total + #s.points end
  open_svg(out, "line", options.title or "", width, height, total)
  axes(out, area, options.x, options.y)
  local plot_w, plot_h = area.right - area.left, area.bottom - area.top
  for i, s in ipairs(series) do
    local color = M.palette[(i - 1) % #M.palette + 1]
    local coords = {}
    local marks = {}
    for _, p in ipairs(s.points) do
      local x, y = p[1], p[2]
      local drawable = type(x) == "number" and type(y) == "number" and
        not ((options.x.scale.kind ~= "linear") and x <= 0 and options.x.scale.kind ~= "nines") and
        not (options.y.scale.kind ~= "linear" and y <= 0)
      if drawable then
        local px = area.left + options.x.scale:fraction(x) * plot_w
        local py = area.bottom - options.y.scale:fraction(y) * plot_h
        coords[#coords + 1] = fmt(px) .. "," .. fmt(py)
        if #s.points <= (options.max_markers or 120) then
          marks[#marks + 1] = string.format('<circle class="point" cx="%s" cy="%s" r="2.5" fill="%s"><title>%s: %s, %s</title></circle>',
            fmt(px), fmt(py), color, escape(s.name or ""), escape(options.x.format and options.x.format(x) or x),
            escape(options.y.format and options.y.format(y) or y))
        end
      end
    end
    out[#out + 1] = string.format('<polyline class="series" fill="none" stroke="%s" stroke-width="1.8" points="%s"/>',
      color, table.concat(coords, " "))
    for _, m in ipairs(marks) do out[#out + 1] = m end
  end
  if #series > 1 then legend(out, area, names, height) end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

-- bars{title, categories = {"write", "seq"}, groups = {{name, values = {}, errors = {}}},
-- y = {title, format}}: one cluster of bars per category, one bar per group; errors are
-- drawn as +/- whiskers. The y scale is linear from 0 and covers value + error.
function M.bars(options)
  local categories, groups = options.categories or {}, options.groups or {}
  local high = 0
  for _, g in ipairs(groups) do
    for i = 1, #categories do
      local v = (g.values[i] or 0) + ((g.errors or {})[i] or 0)
      if v > high then high = v end
    end
  end
  local y_scale = scale_module.linear(0, high, { format = options.y.format })
  local names = {}
  for i, g in ipairs(groups) do names[i] = g.name end
  local width, height, area = frame(options, legend_rows(names, options.width or 600))
  local out, total = {}, 0
  for _, g in ipairs(groups) do
    for i = 1, #categories do
      if g.values[i] then total = total + 1 end
    end
  end
  open_svg(out, "bar", options.title or "", width, height, total)
  -- category axis: an index scale whose ticks are the category names
  local x_axis = { title = options.x_title, scale = {
    ticks = function() return {} end, fraction = function() return 0 end } }
  axes(out, area, x_axis, { scale = y_scale, title = options.y.title })
  local plot_w, plot_h = area.right - area.left, area.bottom - area.top
  local slot = plot_w / math.max(1, #categories)
  local bar_w = math.min(48, slot * 0.8 / math.max(1, #groups))
  for c, category in ipairs(categories) do
    local cluster_left = area.left + (c - 1) * slot + (slot - bar_w * #groups) / 2
    out[#out + 1] = string.format('<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>',
      fmt(area.left + (c - 0.5) * slot), fmt(area.bottom + 16), escape(category))
    for g, group in ipairs(groups) do
      local value = group.values[c]
      if value then
        local color = M.palette[(g - 1) % #M.palette + 1]
        local x = cluster_left + (g - 1) * bar_w
        local y = area.bottom - y_scale:fraction(value) * plot_h
        local label = options.y.format and options.y.format(value) or tostring(value)
        local err = (group.errors or {})[c]
        out[#out + 1] = string.format('<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s %s: %s%s</title></rect>',
          fmt(x + 1), fmt(y), fmt(bar_w - 2), fmt(area.bottom - y), color, escape(group.name), escape(category),
          escape(label), err and err > 0 and (" ± " .. escape(options.y.format and options.y.format(err) or err)) or "")
        if err and err > 0 then
          local cx = x + bar_w / 2
          local top = area.bottom - y_scale:fraction(value + err) * plot_h
          local bottom = area.bottom - y_scale:fraction(math.max(0, value - err)) * plot_h
          out[#out + 1] = string.format('<path class="error-bar" d="M%s %sV%sM%s %sH%sM%s %sH%s"/>',
            fmt(cx), fmt(top), fmt(bottom), fmt(cx - 4), fmt(top), fmt(cx + 4), fmt(cx - 4), fmt(bottom), fmt(cx + 4))
        end
      end
    end
  end
  if #groups > 1 then legend(out, area, names, height) end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

return M
