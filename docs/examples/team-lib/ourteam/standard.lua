-- ourteam.standard: a team's shared scenario pieces. Every scenario of the team uses the
-- same two pools (the production replica layout and the EC layout under evaluation) and
-- the same write/seq/rand/cleanup cycle, so results stay comparable across scenarios.
local cm = require "cephmark"

local M = {}

-- The params every team scenario takes, merged into each scenario's own.
function M.params(extra)
  local params = {
    seconds = cm.duration("10s", "length of each phase"),
    threads = cm.integer(16, "ops in flight"),
  }
  for name, spec in pairs(extra or {}) do params[name] = spec end
  return params
end

-- The team's standard pools: size-3 replica as in production, EC 4+2 being evaluated
-- (k and m are params, so a small test cluster can run k=2 m=1).
function M.pools(p)
  return {
    { label = "replica", type = "replicated", size = 3 },
    { label = "ec", type = "erasure", k = p.k or 4, m = p.m or 2 },
  }
end

-- One standard cycle on a pool: write (kept), seq, rand, cleanup.
function M.cycle(s, pool, p, block_size)
  s:phase("write", pool, { seconds = p.seconds, threads = p.threads, block_size = block_size })
  s:phase("seq", pool, { seconds = p.seconds, threads = p.threads })
  s:phase("rand", pool, { seconds = p.seconds, threads = p.threads })
  s:phase("cleanup", pool)
end

-- The team's standard table.
function M.compare(s)
  s:compare { by = "pool", baseline = "replica", metrics = { "bandwidth_mib", "iops", "lat.p50", "lat.p99" } }
end

return M
