-- `cephmark report DIR... [-o FILE]`: one self-contained HTML report (inline SVG charts
-- and the tables behind them) of one or more results folders, side by side. Also used by
-- scenarios, which write report.html into their results folder at the end of a run.

local args = require "cephmark.args"
local results = require "cephmark.results"
local sys = require "cephmark.sys"
local html = require "cephmark.report.html"

local M = {}

local usage = [[
usage: cephmark report DIR... [-o FILE] [--title TEXT]

Writes one HTML file with charts and tables of the results folders given (folders that
`cephmark run`, `rados-bench -o` or `rbd-bench -o` wrote). Several folders are shown side
by side, with a section comparing the same phases across them (for example before and
after a tuning change). The file is self-contained: no scripts, no network fetches.

options:
  -o, --output FILE         where to write (default: report.html in the only folder given,
                            else ./report.html); - writes to stdout
  --title TEXT              the report's title

The report replaces FILE only if it is a regular file and none of the report's inputs:
a device, FIFO, socket, directory or symbolic link is refused (use -o - for a pipe or
/dev/null), and so is any file inside the results folders given, except their
report.html.]]

local spec = args.spec {
  ["-o"] = { key = "output", value = true }, ["--output"] = { key = "output", value = true },
  ["--title"] = { key = "title", value = true },
}

-- Every file in a results folder is an input of the report (sys.note_input), so -o can
-- never replace one, under any name; report.html, the report's own product, excepted.
local function note_inputs(dir, depth)
  for _, name in ipairs(sys.list_dir(dir) or {}) do
    local path = dir .. "/" .. name
    local st = sys.stat(path)
    if st and st.type == "dir" then
      if depth < 4 then note_inputs(path, depth + 1) end
    elseif not (depth == 0 and name == "report.html") then
      sys.note_input(path)
    end
  end
end

-- load(dir) -> run table, or nil and a one-line reason
function M.load(dir)
  local st = sys.stat(dir)
  if not st then return nil, string.format("'%s' does not exist", dir) end
  local path = st.type == "dir" and (dir .. "/results.json") or dir
  if st.type == "dir" and not sys.stat(path) then
    return nil, string.format("'%s' is not a results folder (no results.json in it)", dir)
  end
  -- a running (or killed) scenario's folder: the journal holds what finished
  local doc, err = results.read_document(path, st.type == "dir" and dir or (path:match("^(.*)/[^/]*$") or "."))
  if not doc then return nil, err end
  if type(doc) ~= "table" then return nil, string.format("%s does not hold a results document", path) end
  local run, why = html.normalize(doc, dir)
  if not run then return nil, string.format("%s is not a cephmark results document: %s", path, why) end
  return run
end

-- build(runs, options) -> the HTML text, or nil and a one-line reason. The documents were
-- checked on loading (html.normalize); a shape that still trips the report is the input's
-- fault, so it is reported as such rather than as a crash with a traceback.
function M.build(runs, options)
  local ok, text = pcall(html.build, runs, options)
  if ok then return text end
  local dirs = {}
  for i, run in ipairs(runs) do dirs[i] = tostring(run.dir) end
  return nil, string.format("cannot make a report of %s: a results document has a shape the report cannot read (%s)",
    table.concat(dirs, ", "), tostring((sys.error_info(text))))
end

-- write(runs, path, options) -> true, or nil and an error message. The file is written
-- atomically, so a reader never sees half a report.
function M.write(runs, path, options)
  local text, err = M.build(runs, options)
  if not text then return nil, err end
  return sys.write_file(path, text)
end

function M.main(argv)
  local command = "report"
  local opts, dirs = args.command(command, argv, spec, usage)
  if not opts then return sys.EXIT_OK end
  if #dirs == 0 then sys.fail(command .. ": give at least one results folder (see `cephmark report --help`)") end
  local runs = {}
  for _, dir in ipairs(dirs) do
    local run, err = M.load(dir)
    if not run then sys.fail(command .. ": " .. err) end
    runs[#runs + 1] = run
    local st = sys.stat(dir)
    if st.type == "dir" then note_inputs(dir, 0) else sys.note_input(dir) end
  end
  local output = opts.output
  if not output then
    local only = #dirs == 1 and sys.stat(dirs[1])
    output = (only and only.type == "dir") and (dirs[1] .. "/report.html") or "report.html"
  end
  if output ~= "-" then
    local allowed, why = sys.check_target(output)
    if not allowed then
      -- for a pipe, a device or a link, stdout is what the operator may have wanted
      local hint = why:find("inputs", 1, true) and "" or " (-o - writes to stdout)"
      sys.fail(string.format("%s: refusing to write the report to %s: %s%s", command, output, why, hint))
    end
  end
  local text, build_err = M.build(runs, { title = opts.title, version = sys.version })
  if not text then sys.fail(command .. ": " .. build_err) end
  if output == "-" then
    io.stdout:write(text)
    return sys.EXIT_OK
  end
  local ok, err = sys.write_file(output, text)
  if not ok then sys.fail(string.format("%s: cannot write %s: %s", command, output, err)) end
  print("report: " .. output)
  return sys.EXIT_OK
end

return M
