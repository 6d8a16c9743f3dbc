-- bench/engine-hour.lua: one long null-target phase at a moderate open-loop rate, recorded
-- like any scenario phase (results.json, series.csv), for bench/engine-hour.sh: the client's
-- resident memory over the phase and the results' size per second of series.
--   cephmark run bench/engine-hour.lua -o DIR [-p seconds=3600] [-p rate=2000] [-p threads=64]
--     [-p delay=0.001]
local cm = require "cephmark"

return cm.scenario {
  name = "engine-hour",
  params = { seconds = 3600, rate = 2000, threads = 64, delay = 0.001 },
  run = function(s, p)
    s:phase("write", require "cephmark.null", {
      seconds = p.seconds, rate = p.rate, threads = p.threads, delay = p.delay,
    })
  end,
}
