-- What the HTML report's tests share (test_report_html.lua, test_report_cluster.lua):
-- the page of one results document, and how often a pattern occurs in a page or chart.
local html = require "cephmark.report.html"

local M = {}

-- the report page of one results document, normalised under `folder` as `cephmark report`
-- does; a document the report refuses stops the test with its reason
function M.page(doc, folder) return html.build({ assert(html.normalize(doc, folder)) }) end

-- how many times the Lua pattern matches in text
function M.count(text, pattern)
  local n = 0
  for _ in text:gmatch(pattern) do n = n + 1 end
  return n
end

return M
