-- libcurl and librbd are loaded when cephmark.swift / cephmark.s3 / cephmark.rbd are first
-- required, not at start (runtime/lazylib.h): a run that never touches them does not pay
-- for mapping them and their ~35 dependencies. No cluster needed.
local t = require "cephmark.test"

local function mapped(name)
  local f = assert(io.open("/proc/self/maps"))
  local maps = f:read("a")
  f:close()
  return maps:find(name, 1, true) ~= nil
end

require "cephmark.rados"
require "cephmark.null"
t.ok(not mapped("libcurl.so"), "libcurl is not mapped at start")
t.ok(not mapped("librbd.so"), "librbd is not mapped at start")

local swift = require "cephmark.swift"
t.ok(mapped("libcurl.so"), "requiring cephmark.swift loads libcurl")
t.ok(swift.curl_version:match("^%d+%.%d+%.%d+") ~= nil, "and reports its version")
local s3 = require "cephmark.s3"
t.eq(s3.curl_version, swift.curl_version, "cephmark.s3 shares the same libcurl")
t.ok(not mapped("librbd.so"), "librbd is still not mapped")

local rbd = require "cephmark.rbd"
t.ok(mapped("librbd.so"), "requiring cephmark.rbd loads librbd")
t.ok(rbd.version:match("^%d+%.%d+%.%d+$") ~= nil, "and reports its version")
return t.done()
