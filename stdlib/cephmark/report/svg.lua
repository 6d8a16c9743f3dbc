-- Inline SVG charts for the HTML report: line charts (time series, percentile curves,
-- sweep curves) and grouped bar charts with whiskers (variant comparisons: 95 % intervals,
-- or a per-second stddev) and marks for the best variant, those as good within noise and
-- those not told apart from the baseline, and horizontal bars of figures read against each
-- other (where a phase's time goes). Each chart is one <svg> string with its axes,
-- ticks, grid, legend and data marks; data marks carry the classes "series", "point" and
-- "bar" and each chart a data-points count, so a browser test can check that data was
-- drawn. No scripts, no external references.

local scale_module = require "cephmark.report.scale"

local M = {}

M.palette = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
  "#17becf", "#7f7f7f", "#bcbd22" }

local entities = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

-- (most texts, numbers above all, have nothing to escape: found without building a copy)
function M.escape(text)
  text = tostring(text)
  if not text:find("[&<>\"']") then return text end
  return (text:gsub("[&<>\"']", entities))
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

-- A five-pointed star around (cx, cy): the mark of the best variant (filled) and of those
-- as good within noise (hollow), told apart by shape and fill, not by colour.
local function star(cx, cy, radius)
  local points = {}
  for i = 0, 9 do
    local r = i % 2 == 0 and radius or radius * 0.45
    local angle = -math.pi / 2 + i * math.pi / 5
    points[#points + 1] = fmt(cx + r * math.cos(angle)) .. "," .. fmt(cy + r * math.sin(angle))
  end
  return table.concat(points, " ")
end

local mark_shapes = {
  best = { class = "mark mark-best", fill = "#1d2430", text = "best" },
  ["as good"] = { class = "mark mark-as-good", fill = "#fff", text = "as good as the best, within noise" },
}

local function hatch_attributes(id)
  return string.format('fill="url(#%s)" stroke="#1d2430" stroke-width="1" stroke-dasharray="3 2"', id)
end

-- The key of the marks a bar chart uses, below the legend, wrapped to the plot's width;
-- returns the rows it takes when out is nil.
local function mark_key(out, entries, area, bottom_y)
  local rows, x, row = 1, area.left, 0
  local placed = {}
  for _, entry in ipairs(entries) do
    local w = 18 + (utf8.len(entry.text) or #entry.text) * 6.2 + 16
    if x + w > area.right + 40 and x > area.left then
      rows, row, x = rows + 1, row + 1, area.left
    end
    placed[#placed + 1] = { entry = entry, x = x, row = row }
    x = x + w
  end
  if out then
    for _, p in ipairs(placed) do
      local y = bottom_y - (rows - 1 - p.row) * 16
      if p.entry.kind == "hatch" then
        out[#out + 1] = string.format('<rect class="key-hatch" x="%s" y="%s" width="12" height="10" %s/>',
          fmt(p.x), fmt(y - 9), hatch_attributes(p.entry.id))
      else
        local shape = mark_shapes[p.entry.kind]
        out[#out + 1] = string.format('<polygon class="key-%s" points="%s" fill="%s" stroke="#1d2430" stroke-width="1"/>',
          shape.class:match("mark%-(%S+)$"), star(p.x + 6, y - 4, 6), shape.fill)
      end
      out[#out + 1] = string.format('<text class="legend" x="%s" y="%s">%s</text>', fmt(p.x + 16), fmt(y),
        escape(p.entry.text))
    end
  end
  return rows
end

-- line{title, x = {scale, title}, y = {scale, title}, series = {{name, points = {{x, y}}}},
-- note = text}: points may carry interval = {low, high} (a whisker: a 95 % interval) and
-- mark = "best" | "as good" (a star, as on bars, with its key below the legend).
-- Points outside a log scale's domain (zero, negative) are left out of the line.
function M.line(options)
  local series = options.series or {}
  local names = {}
  for i, s in ipairs(series) do names[i] = s.name or ("series " .. i) end
  local used = {}
  for _, s in ipairs(series) do
    for _, p in ipairs(s.points) do
      if p.mark then used[p.mark] = true end
    end
  end
  local key = {}
  if used.best then key[#key + 1] = { kind = "best", text = mark_shapes.best.text } end
  if used["as good"] then key[#key + 1] = { kind = "as good", text = mark_shapes["as good"].text } end
  local width = options.width or 600
  local key_rows = #key > 0 and mark_key(nil, key, { left = 64, right = width - 16 }) or 0
  local notes = type(options.note) == "table" and options.note or { options.note }
  local height = options.height or (300 + 16 * key_rows + 14 * #notes)
  local _, _, area = frame({ width = width, height = height }, legend_rows(names, width) + key_rows)
  area.top = area.top + 14 * #notes
  local out, total = {}, 0
  for _, s in ipairs(series) do total = total + #s.points end
  open_svg(out, "line", options.title or "", width, height, total)
  for i, line in ipairs(notes) do
    out[#out + 1] = string.format('<text class="chart-note" x="64" y="%d">%s</text>', 20 + 14 * i, escape(line))
  end
  axes(out, area, options.x, options.y)
  local plot_w, plot_h = area.right - area.left, area.bottom - area.top
  local function y_of(y) return area.bottom - options.y.scale:fraction(y) * plot_h end
  local function text_of(axis, v) return escape(axis.format and axis.format(v) or v) end
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
        local py = y_of(y)
        coords[#coords + 1] = fmt(px) .. "," .. fmt(py)
        local top_y = py
        if p.interval then
          local top, bottom = y_of(p.interval[2]), y_of(p.interval[1])
          top_y = math.min(top_y, top)
          marks[#marks + 1] = string.format('<path class="error-bar interval" data-low="%.17g" data-high="%.17g" d="M%s %sV%sM%s %sH%sM%s %sH%s"/>',
            p.interval[1], p.interval[2], fmt(px), fmt(top), fmt(bottom), fmt(px - 4), fmt(top), fmt(px + 4),
            fmt(px - 4), fmt(bottom), fmt(px + 4))
        end
        if #s.points <= (options.max_markers or 120) then
          local spread = p.interval and string.format(" [%s, %s] (95 %% interval)", text_of(options.y, p.interval[1]),
            text_of(options.y, p.interval[2])) or ""
          marks[#marks + 1] = string.format('<circle class="point" cx="%s" cy="%s" r="2.5" fill="%s"><title>%s: %s, %s%s%s</title></circle>',
            fmt(px), fmt(py), color, escape(s.name or ""), text_of(options.x, x), text_of(options.y, y), spread,
            p.mark and ("; " .. escape(mark_shapes[p.mark].text)) or "")
        end
        if p.mark then
          local shape = mark_shapes[p.mark]
          marks[#marks + 1] = string.format('<polygon class="%s" points="%s" fill="%s" stroke="#1d2430" stroke-width="1"><title>%s: %s</title></polygon>',
            shape.class, star(px, top_y - 9, 6), shape.fill, escape(s.name or ""), escape(shape.text))
        end
      end
    end
    out[#out + 1] = string.format('<polyline class="series" fill="none" stroke="%s" stroke-width="1.8" points="%s"/>',
      color, table.concat(coords, " "))
    for _, m in ipairs(marks) do out[#out + 1] = m end
  end
  if #series > 1 then legend(out, area, names, height - 16 * key_rows) end
  if #key > 0 then mark_key(out, key, area, height - 8) end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

local bar_counter = 0

-- bars{title, categories = {"write", "seq"}, groups = {{name, values = {}, errors = {},
-- intervals = {}, marks = {}, hatched = {}}}, y = {title, format}, note = text, id = text,
-- mark_texts = {best = text}}:
-- one cluster of bars per category, one bar per group. errors[c] is drawn as a +/- whisker;
-- intervals[c] = {low, high} as a whisker from low to high (a 95 % interval around the bar's
-- median). marks[c] = "best" or "as good" puts a filled or hollow star above the bar;
-- hatched[c] hatches it (no difference detectable against the baseline); the marks used
-- get a key below the legend. note is a line (or a list of lines) under the title: what the
-- whiskers are. The y scale is linear from 0 and covers every whisker (and the marks above
-- them). value_labels = true writes each bar's value above it (when the bars are wide enough).
function M.bars(options)
  local categories, groups = options.categories or {}, options.groups or {}
  bar_counter = bar_counter + 1
  local id = options.id or ("bars-" .. bar_counter)
  local high, used = 0, {}
  for _, g in ipairs(groups) do
    for i = 1, #categories do
      local v = (g.values[i] or 0) + ((g.errors or {})[i] or 0)
      local interval = (g.intervals or {})[i]
      if interval and interval[2] > v then v = interval[2] end
      if v > high then high = v end
      if g.values[i] and (g.marks or {})[i] then used[g.marks[i]] = true end
      if g.values[i] and (g.hatched or {})[i] then used.hatch = true end
    end
  end
  local texts = options.mark_texts or {}
  local key = {}
  if used.best then key[#key + 1] = { kind = "best", text = texts.best or mark_shapes.best.text } end
  if used["as good"] then
    key[#key + 1] = { kind = "as good", text = texts["as good"] or mark_shapes["as good"].text }
  end
  if used.hatch then
    key[#key + 1] = { kind = "hatch", id = id .. "-hatch", text = "no difference detectable against the baseline" }
  end
  -- room above the highest whisker for a mark, and for a value written above it
  if used.best or used["as good"] then high = high * 1.1 end
  if options.value_labels then high = high * 1.08 end
  local y_scale = scale_module.linear(0, high, { format = options.y.format })
  local names = {}
  for i, g in ipairs(groups) do names[i] = g.name end
  local width = options.width or 600
  local name_rows = legend_rows(names, width)
  local probe = { left = 64, right = width - 16 }
  local key_rows = #key > 0 and mark_key(nil, key, probe) or 0
  local notes = type(options.note) == "table" and options.note or { options.note }
  local note_rows = #notes
  local height = options.height or (300 + 16 * key_rows + 14 * note_rows)
  local _, _, area = frame({ width = width, height = height }, name_rows + key_rows)
  area.top = area.top + 14 * note_rows
  local out, total = {}, 0
  for _, g in ipairs(groups) do
    for i = 1, #categories do
      if g.values[i] then total = total + 1 end
    end
  end
  open_svg(out, "bar", options.title or "", width, height, total)
  for i, line in ipairs(notes) do
    out[#out + 1] = string.format('<text class="chart-note" x="64" y="%d">%s</text>', 20 + 14 * i, escape(line))
  end
  if used.hatch then
    out[#out + 1] = string.format(
      '<defs><pattern id="%s-hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="none"/><line x1="0" y1="0" x2="0" y2="6" stroke="#1d2430" stroke-width="1.6"/></pattern></defs>',
      id)
  end
  -- category axis: an index scale whose ticks are the category names
  local x_axis = { title = options.x_title, scale = {
    ticks = function() return {} end, fraction = function() return 0 end } }
  axes(out, area, x_axis, { scale = y_scale, title = options.y.title })
  local plot_w, plot_h = area.right - area.left, area.bottom - area.top
  local slot = plot_w / math.max(1, #categories)
  local bar_w = math.min(48, slot * 0.8 / math.max(1, #groups))
  local function y_of(value) return area.bottom - y_scale:fraction(value) * plot_h end
  local function text_of(value) return options.y.format and options.y.format(value) or tostring(value) end
  -- values written above the bars when asked and when the bars are wide enough for them
  local labelled = options.value_labels and bar_w >= 30
  for c, category in ipairs(categories) do
    local cluster_left = area.left + (c - 1) * slot + (slot - bar_w * #groups) / 2
    out[#out + 1] = string.format('<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>',
      fmt(area.left + (c - 0.5) * slot), fmt(area.bottom + 16), escape(category))
    for g, group in ipairs(groups) do
      local value = group.values[c]
      if value then
        local color = M.palette[(g - 1) % #M.palette + 1]
        local x = cluster_left + (g - 1) * bar_w
        local y = y_of(value)
        local err = (group.errors or {})[c]
        local interval = (group.intervals or {})[c]
        local mark = (group.marks or {})[c]
        local hatched = (group.hatched or {})[c]
        local spread = ""
        if interval then
          spread = string.format(" [%s, %s] (95 %% interval)", text_of(interval[1]), text_of(interval[2]))
        elseif err and err > 0 then
          spread = " ± " .. text_of(err) .. " (per-second stddev)"
        end
        local notes = {}
        if mark then notes[#notes + 1] = texts[mark] or mark_shapes[mark].text end
        if hatched then notes[#notes + 1] = "no difference detectable against the baseline" end
        out[#out + 1] = string.format('<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s" data-value="%.17g"><title>%s %s: %s%s%s</title></rect>',
          fmt(x + 1), fmt(y), fmt(bar_w - 2), fmt(area.bottom - y), color, value, escape(group.name), escape(category),
          escape(text_of(value)), escape(spread), #notes > 0 and escape("; " .. table.concat(notes, "; ")) or "")
        if hatched then
          out[#out + 1] = string.format('<rect class="hatch" x="%s" y="%s" width="%s" height="%s" %s/>',
            fmt(x + 1), fmt(y), fmt(bar_w - 2), fmt(area.bottom - y), hatch_attributes(id .. "-hatch"))
        end
        local cx = x + bar_w / 2
        local top_y = y
        if interval then
          local top, bottom = y_of(interval[2]), y_of(math.max(0, interval[1]))
          top_y = math.min(top_y, top)
          out[#out + 1] = string.format('<path class="error-bar interval" data-low="%.17g" data-high="%.17g" d="M%s %sV%sM%s %sH%sM%s %sH%s"/>',
            interval[1], interval[2], fmt(cx), fmt(top), fmt(bottom), fmt(cx - 4), fmt(top), fmt(cx + 4), fmt(cx - 4),
            fmt(bottom), fmt(cx + 4))
        elseif err and err > 0 then
          local top = y_of(value + err)
          local bottom = y_of(math.max(0, value - err))
          top_y = math.min(top_y, top)
          out[#out + 1] = string.format('<path class="error-bar" d="M%s %sV%sM%s %sH%sM%s %sH%s"/>',
            fmt(cx), fmt(top), fmt(bottom), fmt(cx - 4), fmt(top), fmt(cx + 4), fmt(cx - 4), fmt(bottom), fmt(cx + 4))
        end
        if labelled then
          out[#out + 1] = string.format('<text class="value" x="%s" y="%s" text-anchor="middle">%s</text>', fmt(cx),
            fmt(top_y - (mark and 20 or 4)), escape(text_of(value)))
        end
        if mark then
          local shape = mark_shapes[mark]
          out[#out + 1] = string.format('<polygon class="%s" points="%s" fill="%s" stroke="#1d2430" stroke-width="1"><title>%s %s: %s</title></polygon>',
            shape.class, star(cx, top_y - 9, 6), shape.fill, escape(group.name), escape(category),
            escape(texts[mark] or shape.text))
        end
      end
    end
  end
  local key_bottom = height - 8
  if #groups > 1 then legend(out, area, names, height - 16 * key_rows) end
  if #key > 0 then mark_key(out, key, area, key_bottom) end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end


-- hbars{title, rows = {{label, value, color = palette index, title = tooltip}}, x = {title,
-- format, high}, note = text or lines, id = text}: horizontal bars from 0 on one linear axis,
-- one row each, labelled on the left with the row's name and at the bar's end with its
-- value, for figures that share a unit and are read against each other (a client's latency
-- against the OSDs'). x.high fixes the axis' end, so that several charts share one axis.
function M.hbars(options)
  local rows = options.rows or {}
  local format = options.x.format or tostring
  local high = options.x.high or 0
  local longest = 0
  for _, row in ipairs(rows) do
    if row.value > high then high = row.value end
    longest = math.max(longest, utf8.len(row.label) or #row.label)
  end
  local x_scale = scale_module.linear(0, high, { format = format })
  local notes = type(options.note) == "table" and options.note or { options.note }
  local width = options.width or 600
  local row_height, bar_height = 22, 14
  -- room on the left for the row labels, on the right for the value after the longest bar
  local area = { left = math.min(math.floor(width * 0.45), 16 + longest * 6.2), right = width - 64,
    top = 30 + 14 * #notes }
  area.bottom = area.top + row_height * #rows + 6
  local height = area.bottom + 44
  local out = {}
  open_svg(out, "hbar", options.title or "", width, height, #rows)
  for i, line in ipairs(notes) do
    out[#out + 1] = string.format('<text class="chart-note" x="%s" y="%d">%s</text>', fmt(area.left), 20 + 14 * i,
      escape(line))
  end
  local plot_w = area.right - area.left
  for _, tick in ipairs(x_scale:ticks()) do
    local px = area.left + x_scale:fraction(tick.value) * plot_w
    out[#out + 1] = string.format('<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>', fmt(px), fmt(area.top),
      fmt(px), fmt(area.bottom))
    out[#out + 1] = string.format('<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>', fmt(px),
      fmt(area.bottom + 16), escape(tick.label))
  end
  out[#out + 1] = string.format('<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>', fmt(area.left),
    fmt(area.bottom), fmt(area.right), fmt(area.bottom))
  out[#out + 1] = string.format('<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>', fmt(area.left),
    fmt(area.top), fmt(area.left), fmt(area.bottom))
  if options.x.title then
    out[#out + 1] = string.format('<text class="axis-title" x="%s" y="%s" text-anchor="middle">%s</text>',
      fmt((area.left + area.right) / 2), fmt(area.bottom + 32), escape(options.x.title))
  end
  for i, row in ipairs(rows) do
    local y = area.top + 6 + (i - 1) * row_height
    local length = x_scale:fraction(row.value) * plot_w
    local text = format(row.value)
    out[#out + 1] = string.format('<text class="row-label" x="%s" y="%s" text-anchor="end">%s</text>',
      fmt(area.left - 6), fmt(y + bar_height - 3), escape(row.label))
    out[#out + 1] = string.format('<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s" data-value="%.17g"><title>%s: %s</title></rect>',
      fmt(area.left), fmt(y), fmt(length), fmt(bar_height), M.palette[((row.color or 1) - 1) % #M.palette + 1],
      row.value, escape(row.title or row.label), escape(text))
    out[#out + 1] = string.format('<text class="value" x="%s" y="%s">%s</text>', fmt(area.left + length + 4),
      fmt(y + bar_height - 3), escape(text))
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

return M
