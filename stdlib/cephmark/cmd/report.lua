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
                            else ./report.html)
  --title TEXT              the report's title]]

local spec = {
  ["-o"] = { key = "output", value = true }, ["--output"] = { key = "output", value = true },
  ["--title"] = { key = "title", value = true },
  ["-h"] = { key = "help" }, ["--help"] = { key = "help" },
}

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

-- write(runs, path, options) -> true, or nil and an error message. The file is written
-- atomically, so a reader never sees half a report.
function M.write(runs, path, options)
  local text = html.build(runs, options)
  return sys.write_file(path, text)
end

function M.main(argv)
  local command = "report"
  local opts, dirs = args.parse(command, argv, spec)
  if opts.help then
    print(usage)
    return sys.EXIT_OK
  end
  if #dirs == 0 then sys.fail(command .. ": give at least one results folder (see `cephmark report --help`)") end
  local runs = {}
  for _, dir in ipairs(dirs) do
    local run, err = M.load(dir)
    if not run then sys.fail(command .. ": " .. err) end
    runs[#runs + 1] = run
  end
  local output = opts.output
  if not output then
    local only = #dirs == 1 and sys.stat(dirs[1])
    output = (only and only.type == "dir") and (dirs[1] .. "/report.html") or "report.html"
  end
  local ok, err = M.write(runs, output, { title = opts.title, version = sys.version })
  if not ok then sys.fail(string.format("%s: cannot write %s: %s", command, output, err)) end
  print("report: " .. output)
  return sys.EXIT_OK
end

return M
