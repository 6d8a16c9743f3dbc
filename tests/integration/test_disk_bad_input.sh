# cephmark.disk's refusals that need root to set up: a filesystem that refuses O_DIRECT
# (ramfs), a folder the user may not write, drop_caches as another user, and block devices
# (a loop device: refused without allow_block_device, refused while mounted, written once
# unmounted). Each is one line and exit code 2; nothing is left behind. Needs no cluster.
set -u
. "$CEPHMARK_SOURCE_DIR/tests/lib/assert.sh"
work=$(mktemp -d "$CEPHMARK_BUILD_DIR/test-disk-bad.XXXXXX")
ramfs=$work/ramfs
mnt=$work/mnt
loop=""
cleanup() {
  mountpoint -q "$ramfs" 2>/dev/null && umount "$ramfs"
  mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  rm -rf "$work" "$out_file" "$err_file"
}
trap cleanup EXIT

# disk.lua PATH [key=value ...]: one disk.bench call with those options
cat >"$work/disk.lua" <<'EOF'
local p = ...
local options = { path = p.path, io_type = p.io_type or "write", count = tonumber(p.count or "4"),
  block_size = p.block_size or "4K", allow_block_device = p.allow == "yes" }
local r = require("cephmark.disk").bench(options)
print(string.format("ops=%d errors=%d", r.ops, r.errors))
EOF
printf 'local ok, msg = require("cephmark.disk").drop_caches()\nif not ok then require("cephmark.sys").fail(msg) end\n' >"$work/drop.lua"
chmod 0755 "$work"
chmod 0644 "$work/disk.lua" "$work/drop.lua"

if [ "$(id -u)" != 0 ]; then
  echo "$(basename "$0"): needs root (mounts, loop devices, another user); skipped"
  exit 0
fi

# O_DIRECT refused by the filesystem
mkdir "$ramfs"
mount -t ramfs ramfs "$ramfs"
run_cli 2 run "$work/disk.lua" -p path="$ramfs/data"
expect_stderr_line "cephmark: disk.bench: the filesystem of $ramfs/data refuses O_DIRECT (open: Invalid argument); use direct = false, or a path on a disk filesystem"
expect_stderr_lines 1
checks=$((checks + 1))
if [ -e "$ramfs/data" ]; then failures=$((failures + 1)); echo "FAIL: a refused run left $ramfs/data behind"; fi
umount "$ramfs"

# a folder this user may not write into
mkdir -m 0755 "$work/locked"
last_command="disk.bench as nobody into $work/locked"
setpriv --reuid=65534 --regid=65534 --clear-groups "$CEPHMARK" run "$work/disk.lua" -p path="$work/locked/data" \
  >"$out_file" 2>"$err_file" </dev/null
last_status=$?
checks=$((checks + 1))
[ "$last_status" = 2 ] || { failures=$((failures + 1)); echo "FAIL: not writable: exit $last_status, expected 2"; }
expect_stderr_line "cephmark: disk.bench: cannot open $work/locked/data for writing: Permission denied"
expect_stderr_lines 1

# drop_caches as another user
setpriv --reuid=65534 --regid=65534 --clear-groups "$CEPHMARK" run "$work/drop.lua" >"$out_file" 2>"$err_file" </dev/null
last_status=$?
checks=$((checks + 1))
[ "$last_status" = 2 ] || { failures=$((failures + 1)); echo "FAIL: drop_caches as nobody: exit $last_status, expected 2"; }
expect_stderr_line "cephmark: drop_caches needs root (it writes /proc/sys/vm/drop_caches); run as root, or leave it out and expect cached reads"

# a loop device: refused without allow_block_device, refused while mounted, written when not
if command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null; then
  truncate -s 16M "$work/disk.img"
  loop=$(losetup -f --show "$work/disk.img" 2>/dev/null)
fi
if [ -n "$loop" ]; then
  run_cli 2 run "$work/disk.lua" -p path="$loop"
  expect_stderr_line "cephmark: disk.bench: refusing to write to the block device $loop: it destroys what the device holds; say so explicitly with allow_block_device = true"
  mkfs.ext4 -q -F "$loop" >/dev/null 2>&1
  mkdir "$mnt"
  mount "$loop" "$mnt"
  run_cli 2 run "$work/disk.lua" -p path="$loop" -p allow=yes
  expect_stderr_line "cephmark: disk.bench: refusing to write to the block device $loop: it (or a partition of it) is mounted on $mnt"
  checks=$((checks + 1))
  mountpoint -q "$mnt" && [ -d "$mnt/lost+found" ] || { failures=$((failures + 1)); echo "FAIL: the mounted filesystem was touched"; }
  umount "$mnt"
  run_cli 0 run "$work/disk.lua" -p path="$loop" -p allow=yes -p count=8
  expect_stdout "^ops=8 errors=0$"
  run_cli 0 run "$work/disk.lua" -p path="$loop" -p io_type=read -p count=8
  expect_stdout "^ops=8 errors=0$"
else
  echo "no loop device available: the block-device checks are covered by tests/lua/test_disk.lua only"
fi
finish
