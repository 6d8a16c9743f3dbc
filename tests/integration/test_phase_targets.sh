# Phase targets other than pools, and phase checks, against the real cluster: one scenario
# runs phases on an rbd image (fio's rw words), a Swift container and an S3 bucket
# (put/get/head/delete, the later ones reading the put before them), a disk file and a socket
# (a netserver on loopback), small data each, and leaves nothing behind. Wrong phase names,
# options and values on a pool, an image and a connection are refused in one line at the
# scenario's line. A bad -p of a shipped scenario is refused before any pool is made: the
# pool listing and the osdmap epoch are the same afterwards.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  for p in $(ceph osd pool ls 2>/dev/null | grep '^cephmark-pt-'); do
    ceph osd pool rm "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1
  done
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

osdmap_epoch() { ceph osd dump 2>/dev/null | awk '/^epoch /{ print $2; exit }'; }

# 1. the shipped scenario's bounds: refused before any pool is created
for case in "threads=0|14|must be at least 1, got 0" "block_size=0|15|must be at least 1, got 0" \
  "block_size=99999T|15|must be at most 1G, got 99999T"; do
  IFS='|' read -r param line reason <<<"$case"
  pools_before=$(ceph osd pool ls | sort | md5sum)
  epoch_before=$(osdmap_epoch)
  run_cli 2 run "$CEPHMARK_SOURCE_DIR/scenarios/ec-vs-replica.lua" -p "$param" -p seconds=1 -o "$work/ec-$param"
  expect_stderr_line "cephmark: $CEPHMARK_SOURCE_DIR/scenarios/ec-vs-replica.lua:$line: -p $param: $reason"
  expect_stderr_lines 1
  checks=$((checks + 1))
  if [ "$(ceph osd pool ls | sort | md5sum)" != "$pools_before" ] || [ "$(osdmap_epoch)" != "$epoch_before" ]; then
    failures=$((failures + 1)); echo "FAIL: -p $param: the pools changed (osdmap epoch $epoch_before -> $(osdmap_epoch))"
  fi
  checks=$((checks + 1))
  [ ! -e "$work/ec-$param" ] || { failures=$((failures + 1)); echo "FAIL: -p $param: a results folder was left"; }
done

# 2. one scenario, a phase on every kind of target
printf 'print(require("cephmark.sys").free_port())\n' >"$work/port.lua"
port=$("$CEPHMARK" run "$work/port.lua")
"$CEPHMARK" netserver --port "$port" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q listening "$work/server.log" && break; sleep 0.05; done

cat >"$work/targets.lua" <<'EOF'
local cm = require "cephmark"
local rgw = require "cephmark.rgw"
local sys = require "cephmark.sys"
return cm.scenario {
  name = "pt-targets",
  params = { work = cm.string(), port = cm.integer() },
  pools = { rbd = { application = "rbd" } },
  run = function(s, p)
    local rbd = require "cephmark.rbd"
    local pool = s:pool("rbd")
    assert(rbd.create(pool, "img", { size = "8M" }))
    local image = assert(rbd.open(pool, "img"))
    local image_guard <close> = setmetatable({}, { __close = function()
      image:close()
      rbd.remove(pool, "img")
    end })
    s:phase("write", image, { io_size = "64K", threads = 4, bytes = "8M" })
    s:phase("randread", image, { io_size = "4K", threads = 4, ops = 500 })
    s:phase("randrw", image, { io_size = "4K", threads = 4, ops = 400, rw_mix_read = 75 })
    s:phase("fill", image, { io_type = "write", io_size = "1M", threads = 2, bytes = "8M" })

    local swift <close> = rgw.swift_connect {}
    local container = "cephmark-pt-container"
    assert(swift:create_container(container))
    local container_guard <close> = setmetatable({}, { __close = function() swift:delete_container(container) end })
    s:phase("put", swift, { container = container, objects = 40, size = "4K", threads = 4 })
    s:phase("get", swift, { container = container, ops = 60, threads = 4 })
    s:phase("delete", swift, { threads = 4 })

    local s3 <close> = rgw.s3_connect {}
    local bucket = "cephmark-pt-bucket"
    assert(s3:create_bucket(bucket))
    local bucket_guard <close> = setmetatable({}, { __close = function() s3:delete_bucket(bucket) end })
    s:phase("put", s3, { bucket = bucket, objects = 20, size = "8K", threads = 4 })
    s:phase("head", s3, { bucket = bucket, ops = 20, threads = 4 })
    s:phase("delete", s3, { bucket = bucket, threads = 4 })

    local disk = require "cephmark.disk"
    local file = p.work .. "/disk.dat"
    local file_guard <close> = setmetatable({}, { __close = function() os.remove(file) end })
    s:phase("write", disk, { path = file, block_size = "64K", bytes = "4M", direct = false })
    s:phase("randread", disk, { path = file, block_size = "4K", ops = 256, direct = false })

    local socket = require "cephmark.socket"
    s:phase("send", socket, { host = "127.0.0.1", port = p.port, bytes = "8M" })
    s:phase("recv", socket, { host = "127.0.0.1", port = p.port, bytes = "8M" })
    s:phase("rr", socket, { host = "127.0.0.1", port = p.port, ops = 200 })
  end,
}
EOF
run_cli 0 run "$work/targets.lua" -p work="$work" -p port="$port" -p progress=false -o "$work/targets"
expect_stdout "^\[1\] write  rbd image 'cephmark-pt-targets-rbd/img'  bytes=8M threads=4 io_size=64K$"
cat >"$work/check.lua" <<EOF
local t = require "cephmark.test"
local sys = require "cephmark.sys"
local r = require("cephmark.json").decode(assert(sys.read_file("$work/targets/results.json")))
local want = { "write", "randread", "randrw", "fill", "put", "get", "delete", "put", "head", "delete",
  "write", "randread", "send", "recv", "rr" }
t.eq(#r.phases, #want, "every phase ran")
for i, name in ipairs(want) do
  local phase = r.phases[i] or {}
  t.eq(phase.name, name, "phase " .. i)
  t.eq(phase.status, "ok", "phase " .. i .. " " .. name .. " status")
  t.eq(phase.result and phase.result.errors, 0, "phase " .. i .. " " .. name .. " errors")
end
local function field(i, key) return r.phases[i] and r.phases[i].result and r.phases[i].result[key] end
-- the image: the phase's name says what it does
t.eq(r.phases[1].target, "rbd image 'cephmark-pt-targets-rbd/img'", "the image phase names its image")
t.eq(field(1, "op"), "rbd", "an image phase is an rbd bench")
t.eq(field(1, "io_type"), "write", "write writes")
t.eq(field(1, "pattern"), "seq", "write is sequential")
t.eq(field(1, "ops"), 128, "8M in 64K writes")
t.eq(field(2, "io_type"), "read", "randread reads")
t.eq(field(2, "pattern"), "rand", "at random")
t.eq(field(2, "ops"), 500, "500 reads")
t.eq(field(3, "io_type"), "readwrite", "randrw mixes")
t.eq(field(3, "rw_mix_read"), 75, "75 % reads")
t.eq(field(3, "reads") + field(3, "writes"), 400, "400 I/Os")
t.eq(field(4, "io_type"), "write", "another name says what it does with io_type")
t.eq(field(4, "ops"), 8, "8M in 1M writes")
-- Swift and S3: get, head and delete work on the put before them
t.eq(field(5, "ops"), 40, "40 Swift PUTs")
t.eq(field(6, "ops"), 60, "60 Swift GETs of what was put")
t.eq(field(6, "verify_failures"), 0, "every GET verified")
t.eq(field(7, "ops"), 40, "the Swift delete removes what was put")
t.eq(field(8, "ops"), 20, "20 S3 PUTs")
t.eq(field(9, "ops"), 20, "20 S3 HEADs of what was put")
t.eq(field(10, "ops"), 20, "the S3 delete removes what was put")
-- the disk and the socket
t.eq(field(11, "io_type"), "write", "disk write writes")
t.eq(field(11, "ops"), 64, "4M in 64K writes")
t.eq(field(12, "pattern"), "rand", "disk randread reads at random")
t.eq(field(12, "ops"), 256, "256 reads")
t.eq(field(13, "direction"), "send", "send sends")
t.eq(field(13, "bytes"), 8 * 1048576, "8M sent")
t.eq(field(14, "direction"), "recv", "recv receives")
t.eq(field(15, "mode"), "rr", "rr is request/response")
t.eq(field(15, "ops"), 200, "200 round trips")
-- nothing is left: containers and buckets removed, the file removed
local rgw = require "cephmark.rgw"
local swift = rgw.swift_connect {}
for _, name in ipairs(assert(swift:list_containers())) do t.ok(name ~= "cephmark-pt-container", "container removed") end
local s3 = rgw.s3_connect {}
for _, name in ipairs(assert(s3:list_buckets())) do t.ok(name ~= "cephmark-pt-bucket", "bucket removed") end
t.eq(sys.stat("$work/disk.dat"), nil, "the disk file removed")
return t.done()
EOF
run_cli 0 run "$work/check.lua"
checks=$((checks + 1))
if ceph osd pool ls | grep -q '^cephmark-pt-'; then failures=$((failures + 1)); echo "FAIL: a pool was left"; fi

# 3. wrong names, options and values on a pool, an image and a connection: one line at the
# scenario's line, exit 2
cat >"$work/pool-name.lua" <<'EOF'
return require("cephmark").scenario { name = "pt-pool-name", pools = { a = {} }, run = function(s)
  s:phase("wirte", s:pool("a"), { seconds = 1 })
end }
EOF
run_cli 2 run "$work/pool-name.lua" -o "$work/r-pool-name"
expect_stderr_line "cephmark: $work/pool-name.lua:2: s:phase('wirte', pool): a pool phase is write, seq, rand, cleanup, overwrite, append, verify or mixed, or says which with op = \"write\" (did you mean 'write'?)"
expect_stderr_lines 1

cat >"$work/pool-option.lua" <<'EOF'
return require("cephmark").scenario { name = "pt-pool-option", pools = { a = {} }, run = function(s)
  s:phase("write", s:pool("a"), { seconds = 1, thread = 32 })
end }
EOF
run_cli 2 run "$work/pool-option.lua" -o "$work/r-pool-option"
expect_stderr_line "cephmark: $work/pool-option.lua:2: s:phase('write'): unknown option 'thread' (did you mean 'threads'?); a pool phase takes access, arrivals, arrivals_seed, block_size, bytes, drain_timeout, hints, ignore_interrupt, key_size, keys_per_op, label, mix, object_size, on_second, op, ops, prefix, rate, report, run_name, second_histograms, seconds, seed, start_at, temporary, think, threads, variant, verify, warmup, write_to"
expect_stderr_lines 1

# an image: rbd.create/open in the run, removed by a guard whatever happens
cat >"$work/image.lua" <<'EOF'
local cm = require "cephmark"
return cm.scenario { name = "pt-image", params = { io_size = "4K", case = "name" }, pools = { a = { application = "rbd" } },
  run = function(s, p)
    local rbd = require "cephmark.rbd"
    local pool = s:pool("a")
    assert(rbd.create(pool, "img", { size = "4M" }))
    local image = assert(rbd.open(pool, "img"))
    local guard <close> = setmetatable({}, { __close = function() image:close(); rbd.remove(pool, "img") end })
    if p.case == "name" then
      s:phase("seq", image, { seconds = 1 })
    elseif p.case == "option" then
      s:phase("randwrite", image, { iosize = "4K", seconds = 1 })
    else
      s:phase("randwrite", image, { io_size = p.io_size, seconds = 1 })
    end
  end }
EOF
run_cli 2 run "$work/image.lua" -o "$work/r-image-name"
expect_stderr_line "cephmark: $work/image.lua:10: s:phase('seq', image): an image phase is read, write, randread, randwrite, readwrite or randrw (fio's rw=), or says which with io_type = \"write\" (and pattern = \"rand\")"
expect_stderr_lines 1
run_cli 2 run "$work/image.lua" -p case=option -o "$work/r-image-option"
expect_stderr_line "cephmark: $work/image.lua:12: s:phase('randwrite'): unknown option 'iosize' (did you mean 'io_size'?); an image phase takes access, arrivals, arrivals_seed, bytes, drain_timeout, ignore_interrupt, io_size, io_type, label, on_second, ops, pattern, per_agent, rate, report, rw_mix_read, second_histograms, seconds, start_at, think, threads, variant, verify, warmup"
expect_stderr_lines 1
run_cli 2 run "$work/image.lua" -p case=value -p io_size=1000 -o "$work/r-image-value"
expect_stderr_line "cephmark: $work/image.lua:14: s:phase('randwrite'): bench: io_size must be a positive multiple of 512 bytes, got 1000 (from -p io_size=1000)"
expect_stderr_lines 1

cat >"$work/objects.lua" <<'EOF'
local rgw = require "cephmark.rgw"
return require("cephmark").scenario { name = "pt-objects", params = { case = "get" }, run = function(s, p)
  if p.case == "get" then
    local swift <close> = rgw.swift_connect {}
    s:phase("get", swift, { container = "cephmark-pt-none", seconds = 1 })
  else
    local s3 <close> = rgw.s3_connect {}
    s:phase("upload", s3, { bucket = "cephmark-pt-none", objects = 1 })
  end
end }
EOF
run_cli 2 run "$work/objects.lua" -o "$work/r-objects-get"
expect_stderr_line "cephmark: $work/objects.lua:5: s:phase('get'): no put phase before it on this connection (into cephmark-pt-none): a get phase works on the objects a put phase wrote; run one first, or give from = (a put phase's result)"
expect_stderr_lines 1
run_cli 2 run "$work/objects.lua" -p case=upload -o "$work/r-objects-upload"
expect_stderr_line "cephmark: $work/objects.lua:8: s:phase('upload', s3): an S3 phase is put, get, head, delete, list or mixed, or says which with op = \"put\""
expect_stderr_lines 1

checks=$((checks + 1))
if ceph osd pool ls | grep -q '^cephmark-pt-'; then failures=$((failures + 1)); echo "FAIL: a refused run left a pool"; fi
finish
