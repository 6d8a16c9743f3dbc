-- A tiny assertion library for cephmark's Lua tests: each check counts, a failure prints
-- where it happened and what differed, and done() returns the result for the runner
-- (failed checks give exit code 1).

local M = { checks = 0, failures = 0 }

local function where()
  local info = debug.getinfo(3, "Sl")
  return string.format("%s:%d", info.short_src, info.currentline)
end

local function record(ok, message)
  M.checks = M.checks + 1
  if not ok then
    M.failures = M.failures + 1
    io.stderr:write(string.format("FAIL %s: %s\n", where(), message))
  end
  return ok
end

function M.ok(value, what)
  return record(value and true or false, what or "expected a true value")
end

function M.eq(got, want, what)
  return record(got == want, string.format("%s: got %s, want %s", what or "value",
    tostring(got), tostring(want)))
end

function M.near(got, want, tolerance, what)
  return record(type(got) == "number" and math.abs(got - want) <= tolerance,
    string.format("%s: got %s, want %s within %s", what or "value", tostring(got),
      tostring(want), tostring(tolerance)))
end

function M.match(got, pattern, what)
  return record(type(got) == "string" and got:find(pattern) ~= nil,
    string.format("%s: %s does not match %q", what or "value", tostring(got), pattern))
end

-- raises(fn, pattern, what): fn must raise an error whose message matches pattern
function M.raises(fn, pattern, what)
  local ok, err = pcall(fn)
  if ok then return record(false, (what or "call") .. ": expected an error, none raised") end
  local message = tostring((require("cephmark.sys").error_info(err)))
  return record(message:find(pattern, 1, true) ~= nil or message:find(pattern) ~= nil,
    string.format("%s: error %q does not match %q", what or "call", message, pattern))
end

-- message_of(fn) -> the message of the error fn raises (as an operator would read it), or nil
function M.message_of(fn)
  local ok, err = pcall(fn)
  if ok then return nil end
  return tostring((require("cephmark.sys").error_info(err)))
end

-- capture(fn) -> the text fn wrote to io.stdout while it ran, and pcall's ok, err
function M.capture(fn)
  local saved, chunks = io.stdout, {}
  io.stdout = { write = function(self, ...) for _, s in ipairs { ... } do chunks[#chunks + 1] = s end return self end,
    flush = function() end }
  local ok, err = pcall(fn)
  io.stdout = saved
  return table.concat(chunks), ok, err
end

-- done() -> a result table for `cephmark run`: failed checks make the exit code 1
function M.done()
  local context = package.loaded["cephmark.context"]
  local name = context and context.script and context.script:match("([^/]+)$") or "lua test"
  print(string.format("%s: %d checks, %d failed", name, M.checks, M.failures))
  return { failed_ops = M.failures }
end

return M
