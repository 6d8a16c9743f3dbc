-- bench/encode-cost.lua: what writing a results document costs, without a cluster: decodes
-- a results.json (RESULTS, e.g. a run of bench/telemetry-cost.lua with 40 phases) and
-- encodes it ROUNDS times as JSON and as YAML, as a run writes its results.json and
-- results.yaml. Deterministic: run it under callgrind with two binaries to compare their
-- encoders (docs/performance.md, section 16). ONLY=json or ONLY=yaml encodes one form.
--   RESULTS=/tmp/out/results.json valgrind --tool=callgrind build/cephmark run bench/encode-cost.lua
local json = require "cephmark.json"
local yaml = require "cephmark.yaml"
local sys = require "cephmark.sys"
local path = assert(os.getenv("RESULTS"), "RESULTS: the results.json to encode")
local rounds = tonumber(os.getenv("ROUNDS") or "20")
local only = os.getenv("ONLY")
local document = assert(json.decode(assert(sys.read_file(path))))
local json_bytes, yaml_bytes = 0, 0
for _ = 1, rounds do
  if only ~= "yaml" then json_bytes = json_bytes + #json.encode(document, { indent = 2 }) end
  if only ~= "json" then yaml_bytes = yaml_bytes + #yaml.encode(document) end
end
print(string.format("%d rounds: %d bytes of JSON, %d of YAML each", rounds, json_bytes // math.max(rounds, 1), yaml_bytes // math.max(rounds, 1)))
