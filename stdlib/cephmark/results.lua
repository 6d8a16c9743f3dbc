-- Results on disk: a folder with results.json and results.yaml, each written atomically
-- (a temporary file renamed into place), so a reader never sees half a file.

local json = require "cephmark.json"
local sys = require "cephmark.sys"

local M = {}

local function write(path, text)
  local ok, err = sys.write_file(path, text)
  if not ok then sys.fail("cannot write results: " .. err) end
end

-- write_dir(dir, document): creates dir if needed and writes the document in both forms.
function M.write_dir(dir, document)
  local ok, err = sys.mkdir(dir)
  if not ok then sys.fail("cannot create the results folder: " .. err) end
  write(dir .. "/results.json", json.encode(document, { indent = 2 }) .. "\n")
  local has_yaml, yaml = pcall(require, "cephmark.yaml")
  if has_yaml then write(dir .. "/results.yaml", yaml.encode(document)) end
  return dir
end

return M
