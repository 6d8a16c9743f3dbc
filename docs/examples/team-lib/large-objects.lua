-- large-objects: the team's standard cycle with 4M objects on both standard pools.
local cm = require "cephmark"
local team = require "ourteam.standard"

return cm.scenario {
  name = "team-large-objects",
  params = team.params { k = cm.integer(4, "EC data chunks"), m = cm.integer(2, "EC coding chunks") },
  pools = team.pools,
  run = function(s, p)
    for _, pool in s:each_pool() do team.cycle(s, pool, p, "4M") end
    team.compare(s)
  end,
}
