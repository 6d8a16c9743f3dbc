-- omap: omap and xattr workloads, as rados bench's --write-omap and --write-xattr, with more
-- keys per op and longer names than rados bench can give. Each destination gets a write run
-- (keys set: keys_per_op keys of value_size bytes per op), a rand phase that gets the keys
-- back and verifies every value, and a cleanup.
--
--   cephmark run scenarios/omap.lua [-p seconds=30] [-p keys_per_op=16] [-p value_size=4K]

local cm = require "cephmark"

return cm.scenario {
  name = "omap",
  description = "omap key sets and gets, and xattr sets and gets, verified",
  params = {
    seconds = cm.duration("10s", "length of each set and get phase"),
    threads = cm.integer(16, "ops in flight", { min = 1, max = 65536 }),
    keys_per_op = cm.integer(8, "keys set and got per op", { min = 1, max = 1024 }),
    key_size = cm.size(0, "key name length (zero-padded); 0: rados bench's names", { max = 4096 }),
    value_size = cm.size("1K", "bytes per value", { min = 1, max = "1M" }),
    keys_per_object = cm.integer(64, "ops per object (each op sets keys_per_op keys)", { min = 1 }),
  },
  pools = { bench = { type = "replicated", size = 3 } },
  run = function(s, p)
    local pool = s:pool("bench")
    for _, to in ipairs { "omap", "xattr" } do
      local run = "omap_" .. to
      s:phase("set-" .. to, pool, { op = "write", seconds = p.seconds, threads = p.threads, write_to = to,
        keys_per_op = p.keys_per_op, key_size = p.key_size, block_size = p.value_size,
        object_size = p.value_size * p.keys_per_object, run_name = run })
      s:phase("get-" .. to, pool, { op = "rand", seconds = p.seconds, threads = p.threads, run_name = run })
      s:phase("cleanup-" .. to, pool, { op = "cleanup", run_name = run })
    end
  end,
}
