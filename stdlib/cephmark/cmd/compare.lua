-- `cephmark compare BASE_DIR NEW_DIR`: two results folders of one scenario, phase by phase
-- and variant by variant: each folder's median and 95 % interval, the change from BASE to
-- NEW with its interval (unpaired: the repetitions of two runs share nothing), a verdict
-- and the smallest detectable change; and a regression gate for CI: exit 1 when a metric
-- is significantly worse by more than a threshold (docs/statistics.md).

local args = require "cephmark.args"
local compare = require "cephmark.compare"
local params = require "cephmark.params"
local results = require "cephmark.results"
local stats = require "cephmark.stats"
local sys = require "cephmark.sys"

local M = {}

local command = "compare"

M.DEFAULT_THRESHOLD = 5

local usage = [[
usage: cephmark compare BASE_DIR NEW_DIR [--metric M]... [--threshold PCT] [--strict]

Compares two results folders of the same scenario (written by `cephmark run -o DIR`,
best with --repeats N), and exits 1 when NEW_DIR is significantly worse than BASE_DIR by
more than PCT %: the gate for a Ceph upgrade or a configuration change in CI.

Phases are matched by name and variant label (the k-th phase of a name in a repetition
with the k-th); every variant both folders ran is compared, those in only one are listed
on one line. For each phase, variant and metric it prints each folder's median with its
95 % interval, the change from BASE to NEW with its 95 % interval (Welch's t on log
values: the repetitions of two runs do not pair), the verdict and the smallest change
the repetitions detect (docs/statistics.md).

options:
  --metric M        a metric to compare; repeatable, or M1,M2 (default: bandwidth_mib,
                    iops, lat.p50, lat.p99); any of a phase's summary fields, e.g.
                    iops, lat.p99_9, errors
  --threshold PCT   how much worse fails the gate, in percent, 0 <= PCT < 100 (default 5)
  --strict          a metric the gate cannot judge (one run on a side) fails it too

The gate: a bandwidth or IOPS metric fails it when the whole 95 % interval of its change
lies below -PCT % (its upper end < -PCT), a latency when the whole interval lies above
+PCT % (its lower end > +PCT). A change that may still be within the threshold passes,
even when it is significantly worse (the verdict says `slower`). Other metrics (ops,
errors, elapsed) are shown, never judged. With one run on a side there is no interval:
the gate cannot judge that metric, says so, and passes unless --strict. A folder written
before repetitions existed is refused (exit 2): it has none to compare.

exit codes: 0 the gate passed; 1 a metric is significantly worse by more than PCT %
(with --strict: or could not be judged); 2 bad input (a folder that is not a results
folder, a folder from before repetitions, two scenarios, no variant in common, an
unknown metric, a bad threshold)]]

local spec = args.spec {
  ["--metric"] = { key = "metrics", value = true, list = true },
  ["--threshold"] = { key = "threshold", value = true },
  ["--strict"] = { key = "strict" },
}

local function fail(message)
  sys.fail(command .. ": " .. message)
end

-- A percentage as an operator writes it: decimal digits with at most one point and an
-- optional "%"; no sign, exponent or hex (the project's numbers are decimal), and at
-- least 0 and below 100: a rate cannot fall by 100 % or more.
function M.parse_threshold(text)
  local digits = tostring(text):gsub("%%$", "")
  local value
  if digits:match("^%d+%.?%d*$") or digits:match("^%.%d+$") then value = tonumber(digits) end
  if value == nil or not (value >= 0 and value < 100) then
    local why = ""
    if digits:match("^[+-]?0[xX]") then
      why = " (hexadecimal: write it in decimal)"
    elseif digits:match("^[+-]?[%d.]+[eE]") then
      why = " (an exponent: write it in plain decimal)"
    end
    fail(string.format("--threshold must be a percentage from 0 to below 100, in decimal (e.g. 5 or 2.5), got '%s'%s",
      tostring(text), why))
  end
  return value
end

-- The number as written back: 5, 2.5, 0.25.
local function percent_text(value)
  return (string.format("%.6f", value):gsub("0+$", ""):gsub("%.$", ""))
end

-- load(dir) -> the results document of a scenario's folder, or a one-line refusal (exit 2).
function M.load(dir)
  local st = sys.stat(dir)
  if not st then fail(string.format("'%s' does not exist", dir)) end
  if st.type ~= "dir" then
    fail(string.format("'%s' is not a folder: give the results folder of a `cephmark run` (its -o DIR)", dir))
  end
  local path = dir .. "/results.json"
  if not sys.stat(path) then fail(string.format("'%s' is not a results folder (no results.json in it)", dir)) end
  local document, why = results.read_document(path, dir)
  if not document then fail(why) end
  if type(document) ~= "table" then fail(string.format("%s does not hold a results document", path)) end
  if document.phases == nil and document.command ~= nil then
    fail(string.format("%s holds a result of `cephmark %s`, not of a scenario: compare compares the folders of " ..
      "two `cephmark run` runs", path, tostring(document.command)))
  end
  if type(document.scenario) ~= "table" or type(document.scenario.name) ~= "string" or
    type(document.phases) ~= "table" then
    fail(string.format("%s is not the results document of a scenario run (no scenario name or no phases)", path))
  end
  if document.repeats == nil then
    -- written before repetitions existed: its phases carry no repetition, its comparisons no
    -- intervals, and one run of each phase cannot pass or fail a gate
    fail(string.format("%s was written by an older cephmark, before repetitions: it has no repetitions to " ..
      "compare; run the scenario again with this cephmark (--repeats N) and compare that folder", path))
  end
  return document
end

-- cells(document, dir) -> the measured phases grouped by (phase, variant label): a list
-- of cells in order of first appearance, each {phase, variant, key, records by repetition}
-- (compare.row_stats' cell), and how many phases that did not finish were left out. The
-- k-th phase of a name and label in a repetition is shown as name#k when k > 1, so a
-- scenario that runs a phase twice per variant still matches phase for phase.
function M.cells(document, dir)
  local list, by_key, occurrences, unfinished = {}, {}, {}, 0
  for index, phase in ipairs(document.phases) do
    if type(phase) ~= "table" then
      fail(string.format("%s/results.json: phase %d is a %s, expected a table", dir, index, type(phase)))
    end
    local measured = type(phase.result) == "table" and phase.result.ops ~= nil and phase.name ~= "cleanup"
    if measured and phase.status ~= nil and phase.status ~= "ok" then
      measured = false
      unfinished = unfinished + 1
    end
    if measured then
      local repetition = 1
      if phase.repetition ~= nil then
        repetition = math.tointeger(phase.repetition)
        if repetition == nil or repetition < 1 then
          fail(string.format("%s/results.json: phase %d has repetition %s, expected a whole number from 1", dir, index,
            tostring(phase.repetition)))
        end
      end
      local name, label = tostring(phase.name), tostring(phase.label or "")
      local occurrence_key = repetition .. "\0" .. name .. "\0" .. label
      local occurrence = (occurrences[occurrence_key] or 0) + 1
      occurrences[occurrence_key] = occurrence
      local shown = occurrence > 1 and string.format("%s#%d", name, occurrence) or name
      local key = shown .. "\0" .. label
      local cell = by_key[key]
      if not cell then
        cell = { phase = shown, variant = label, key = key }
        by_key[key] = cell
        list[#list + 1] = cell
      end
      cell[#cell + 1] = { result = phase.result, cluster = phase.cluster, repetition = repetition }
    end
  end
  return list, by_key, unfinished
end

-- The metrics asked for, each known to compare or present in some phase of either folder
-- (a custom phase's own figures); an unknown one is refused with the nearest known name.
local function check_metrics(asked, cell_lists)
  local metrics = {}
  for _, item in ipairs(asked) do
    for metric in tostring(item):gmatch("[^,]+") do metrics[#metrics + 1] = metric end
  end
  if #asked > 0 and #metrics == 0 then fail("--metric needs a metric name, e.g. --metric iops") end
  local known = {}
  for _, name in ipairs(compare.known_metrics) do known[name] = true end
  for _, metric in ipairs(metrics) do
    local found = known[metric]
    for _, list in ipairs(cell_lists) do
      for _, cell in ipairs(list) do
        if not found and compare.record_value(cell[1], metric) ~= nil then found = true end
      end
    end
    if not found then
      fail(string.format("unknown metric '%s'%s; metrics: %s", metric, params.suggest(metric, compare.known_metrics),
        table.concat(compare.known_metrics, ", ")))
    end
  end
  if #metrics == 0 then
    for i, metric in ipairs(compare.default_metrics) do metrics[i] = metric end
  end
  return metrics
end

-- The most repetitions a folder's cells have, for the title.
local function repetitions_of(list)
  local most = 0
  for _, cell in ipairs(list) do most = math.max(most, #cell) end
  return most
end

-- gate(metric, entry, threshold) -> "regression", "pass", "unjudged" or nil (a metric with
-- no better direction, or no figures on either side): the rule of docs/statistics.md.
function M.gate(metric, entry, threshold)
  local kind = stats.kind_of(metric)
  if kind == nil then return nil end
  if entry.change_ci_low == nil or entry.change_ci_high == nil then
    if (entry.base_n or 0) == 0 and (entry.n or 0) == 0 then return nil end
    return "unjudged"
  end
  if kind == "rate" and entry.change_ci_high < -threshold then return "regression" end
  if kind == "latency" and entry.change_ci_low > threshold then return "regression" end
  return "pass"
end

-- Why the gate could not judge a metric, from the figures each side has.
function M.unjudged_reason(entry, base_dir, new_dir)
  local base_n, new_n = entry.base_n or 0, entry.n or 0
  if base_n == 0 then return "no figures in " .. base_dir end
  if new_n == 0 then return "no figures in " .. new_dir end
  if base_n < 2 and new_n < 2 then return "one run on each side" end
  if base_n < 2 then return "one run in " .. base_dir end
  if new_n < 2 then return "one run in " .. new_dir end
  return "figures of 0 or less: no ratio"
end

-- Variants and phases only one folder ran, as "ec" (a whole variant) or "seq of 3x".
local function only_in(list, other_by_key, other_labels)
  local items, seen = {}, {}
  for _, cell in ipairs(list) do
    if not other_by_key[cell.key] then
      local item = other_labels[cell.variant] and string.format("%s of %s", cell.phase, cell.variant) or cell.variant
      if not seen[item] then
        seen[item] = true
        items[#items + 1] = item
      end
    end
  end
  return items
end

local function labels_of(list)
  local labels = {}
  for _, cell in ipairs(list) do labels[cell.variant] = true end
  return labels
end

local function variants_text(list)
  local names, seen = {}, {}
  for _, cell in ipairs(list) do
    if not seen[cell.variant] then
      seen[cell.variant] = true
      names[#names + 1] = cell.variant == "" and "(no label)" or cell.variant
    end
  end
  return table.concat(names, ", ")
end

-- run(base_dir, new_dir, options) -> exit code, after printing the table and the gate's
-- lines. options: metrics (list), threshold (percent), strict.
function M.run(base_dir, new_dir, options)
  local threshold = options.threshold or M.DEFAULT_THRESHOLD
  local base_doc, new_doc = M.load(base_dir), M.load(new_dir)
  if base_doc.scenario.name ~= new_doc.scenario.name then
    fail(string.format("%s is a run of scenario '%s', %s of '%s': compare two runs of the same scenario", base_dir,
      base_doc.scenario.name, new_dir, new_doc.scenario.name))
  end
  local base_list, base_by_key, base_unfinished = M.cells(base_doc, base_dir)
  local new_list, new_by_key, new_unfinished = M.cells(new_doc, new_dir)
  for _, side in ipairs { { base_dir, base_list }, { new_dir, new_list } } do
    if #side[2] == 0 then fail(string.format("%s has no measured phase to compare", side[1])) end
  end
  local metrics = check_metrics(options.metrics or {}, { base_list, new_list })
  local common = {}
  for _, cell in ipairs(base_list) do
    if new_by_key[cell.key] then common[#common + 1] = cell end
  end
  if #common == 0 then
    fail(string.format("%s and %s have no variant in common (phases matched by name and variant label; %s: %s; %s: %s)",
      base_dir, new_dir, base_dir, variants_text(base_list), new_dir, variants_text(new_list)))
  end

  local notes = {}
  for _, side in ipairs { { base_dir, base_doc, base_unfinished }, { new_dir, new_doc, new_unfinished } } do
    local dir, document, unfinished = side[1], side[2], side[3]
    if document.status ~= nil and document.status ~= "ok" then
      local completed = math.tointeger(document.repetitions_completed)
      notes[#notes + 1] = string.format("note: %s is from a run that did not finish (status %s)%s", dir,
        tostring(document.status), completed and document.repeats and
        string.format(": %d of %s repetitions completed, compared on what they measured", completed,
          tostring(document.repeats)) or "")
    end
    if unfinished > 0 then
      notes[#notes + 1] = string.format("note: %s: %d phase%s that did not finish (interrupted or failed) left out",
        dir, unfinished, unfinished == 1 and "" or "s")
    end
  end

  local spec_columns = { { "phase" }, { "variant" }, { "metric" }, { "base [95 % interval]", right = true },
    { "new [95 % interval]", right = true }, { "change [95 % interval]" }, { "verdict" },
    { "detectable", right = true } }
  local rows, regressions, unjudged, judged, unjudged_reasons = {}, {}, 0, 0, {}
  local threshold_text = percent_text(threshold)
  local previous_phase, previous_variant
  for _, base_cell in ipairs(common) do
    local new_cell = new_by_key[base_cell.key]
    for _, metric in ipairs(metrics) do
      local base_entry = compare.row_stats(base_cell, metric)
      local entry = compare.row_stats(new_cell, metric, base_cell, false)
      entry.base_n = base_entry.n
      local verdict = entry.verdict or ""
      local outcome = M.gate(metric, entry, threshold)
      if outcome == "regression" then
        local bad_side = stats.kind_of(metric) == "rate" and "-" or "+"
        verdict = string.format("%s, beyond %s%s %%", verdict, bad_side, threshold_text)
        regressions[#regressions + 1] = string.format("regression: %s %s %s %s beyond %s%s %%", base_cell.phase,
          base_cell.variant, compare.header(metric), entry.formatted, bad_side, threshold_text)
      end
      if outcome == "unjudged" then
        unjudged = unjudged + 1
        unjudged_reasons[M.unjudged_reason(entry, base_dir, new_dir)] = true
      elseif outcome ~= nil then
        judged = judged + 1
      end
      local new_phase = base_cell.phase ~= previous_phase
      local new_variant = new_phase or base_cell.variant ~= previous_variant
      rows[#rows + 1] = { new_phase and base_cell.phase or "", new_variant and base_cell.variant or "",
        compare.header(metric), compare.format_interval(metric, base_entry), compare.format_interval(metric, entry),
        entry.formatted or "", verdict, compare.format_detectable(entry.mde) }
      previous_phase, previous_variant = base_cell.phase, base_cell.variant
    end
  end

  for _, note in ipairs(notes) do print(note) end
  print(string.format("compare %s: base %s (%d repetition%s), new %s (%d repetition%s)", base_doc.scenario.name,
    base_dir, repetitions_of(base_list), repetitions_of(base_list) == 1 and "" or "s", new_dir,
    repetitions_of(new_list), repetitions_of(new_list) == 1 and "" or "s"))
  for _, line in ipairs(compare.aligned_lines(spec_columns, rows)) do print(line) end
  print("[ ]: 95 % intervals; change: new against base, unpaired (Welch: the repetitions of two runs do not pair); " ..
    "detectable: the smallest change these repetitions detect 80 % of the time at the spread seen")
  -- phases that started while the cluster was not quiet (their verdicts say so too)
  local unquiet, compared, unquiet_where = 0, 0, {}
  for _, base_cell in ipairs(common) do
    for _, side in ipairs { { base_dir, base_cell }, { new_dir, new_by_key[base_cell.key] } } do
      local count = 0
      for _, record in ipairs(side[2]) do
        compared = compared + 1
        if compare.is_unquiet(record) then count = count + 1 end
      end
      if count > 0 then
        unquiet = unquiet + count
        unquiet_where[#unquiet_where + 1] = string.format("%s %s in %s (%d of %d)", base_cell.phase, base_cell.variant,
          side[1], count, #side[2])
      end
    end
  end
  if unquiet > 0 then
    print(string.format("unquiet: %d of %d phases compared started while the cluster was not quiet: %s; their " ..
      "figures may not compare (docs/cluster-state.md)", unquiet, compared, table.concat(unquiet_where, ", ")))
  end
  local base_only = only_in(base_list, new_by_key, labels_of(new_list))
  local new_only = only_in(new_list, base_by_key, labels_of(base_list))
  if #base_only > 0 or #new_only > 0 then
    local parts = {}
    if #base_only > 0 then parts[#parts + 1] = "only in " .. base_dir .. ": " .. table.concat(base_only, ", ") end
    if #new_only > 0 then parts[#parts + 1] = "only in " .. new_dir .. ": " .. table.concat(new_only, ", ") end
    print("not compared: " .. table.concat(parts, "; "))
  end

  for _, line in ipairs(regressions) do print(line) end
  local reasons = {}
  for reason in pairs(unjudged_reasons) do reasons[#reasons + 1] = reason end
  table.sort(reasons)
  local total = judged + unjudged
  local why = table.concat(reasons, "; ")
  if #regressions > 0 then
    print(string.format("gate: failed: %d of %d metrics significantly worse by more than %s %%%s", #regressions,
      total, threshold_text, unjudged > 0 and string.format(" (%d not judged: %s)", unjudged, why) or ""))
    return sys.EXIT_FAILED_OPS
  end
  if unjudged > 0 and options.strict then
    print(string.format("gate: failed (--strict): %d of %d metrics could not be judged (%s)", unjudged, total, why))
    return sys.EXIT_FAILED_OPS
  end
  if unjudged > 0 and judged == 0 then
    print(string.format("gate: could not judge: none of the %d metrics has an interval (%s); passed, as nothing " ..
      "shows a regression (--strict fails it)", total, why))
    return sys.EXIT_OK
  end
  print(string.format("gate: passed: no metric significantly worse by more than %s %% (%d judged%s)", threshold_text,
    judged, unjudged > 0 and string.format("; %d could not be judged: %s; --strict fails them", unjudged, why) or ""))
  return sys.EXIT_OK
end

function M.main(argv)
  local options, dirs = args.command(command, argv, spec, usage)
  if not options then return sys.EXIT_OK end
  if #dirs ~= 2 then
    fail(string.format("give two results folders, BASE_DIR and NEW_DIR, got %d (see `cephmark compare --help`)", #dirs))
  end
  local threshold = options.threshold ~= nil and M.parse_threshold(options.threshold) or nil
  -- a document that passed the checks but still trips the statistics is the input's fault:
  -- one line, not a traceback
  local ok, code = pcall(M.run, dirs[1], dirs[2], { metrics = options.metrics, threshold = threshold,
    strict = options.strict })
  if ok then return code end
  local message, _, operator = sys.error_info(code)
  if operator then error(code, 0) end
  fail(string.format("cannot compare %s and %s: a results document has a shape compare cannot read (%s)", dirs[1],
    dirs[2], tostring(message)))
end

return M
