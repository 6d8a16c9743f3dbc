#!/bin/bash
# The Debian package, built from this tree and installed into a clean root: CPack writes
# cephmark_<version>_<arch>.deb; its Depends name the distro libraries cephmark links and
# opens (each an installed Debian package here, so apt resolves them); dpkg installs it into
# an empty root with its own dpkg database; the installed binary prints its version and runs
# the shipped client-ceiling scenario on the null target; the man page holds every
# command's help; bash completion completes commands and a command's flags; the systemd
# units pass systemd-analyze verify; the defaults file is a conffile; the container files
# agree with the package (entrypoint, mounts, Debian release). Builds nothing from the
# internet.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
build=${CEPHMARK_BUILD_DIR:?}
src=${CEPHMARK_SOURCE_DIR:?}
work=$(mktemp -d "$build/test-package.XXXXXX")
trap 'rm -rf "$work" "$out_file" "$err_file"' EXIT
export CEPH_CONF= CEPHMARK_CLUSTER_DIR="$work/no-cluster"
for tool in cpack dpkg dpkg-deb help2man systemd-analyze; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (quickstart.sh installs it)"; exit 1; }
done
[ -r /usr/share/bash-completion/bash_completion ] || { echo "FAIL: bash-completion missing"; exit 1; }

# the build's man page is current, then the package
cmake --build "$build" --target manpage >/dev/null || fail "the manpage target failed"
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack failed"; finish; exit 1; }
version=$("$CEPHMARK" --version | awk '{ print $2 }')
deb=$(ls "$work"/out/cephmark_"$version"_*.deb 2>/dev/null)
check [ -f "$deb" ] || { fail "no cephmark_${version}_*.deb in $(ls "$work/out")"; finish; exit 1; }

# Depends: the linked libraries (from dpkg-shlibdeps) and the two opened at run time
depends=$(dpkg-deb -f "$deb" Depends)
for library in liblua5.4-0 libyaml-0-2 librados2 libssl3 liburing2 librbd1 libcurl4; do
  check grep -qE "(^|, )$library( |,|$)" <<<"$depends" || fail "Depends lacks $library: $depends"
done
for package in $(sed -E 's/ *\([^)]*\)//g; s/,/ /g; s/\|/ /g' <<<"$depends"); do
  state=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)
  check [ "$state" = "install ok installed" ] || fail "Depends names $package, which is not an installed Debian package here"
done

# a clean root with an empty dpkg database
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
: >"$root/var/lib/dpkg/status"
: >"$root/var/lib/dpkg/available"
# --force-depends: the root has none of the libraries; the binary runs with this host's
dpkg --root="$root" --force-depends --force-script-chrootless -i "$deb" >"$work/dpkg.log" 2>&1 ||
  { cat "$work/dpkg.log"; fail "dpkg -i into a clean root failed"; finish; exit 1; }
status_text=$(dpkg --root="$root" -s cephmark 2>/dev/null)
check grep -q "^Status: install ok installed" <<<"$status_text" || fail "dpkg does not list cephmark as installed in the root"
check grep -q "^ /etc/default/cephmark-agent " <<<"$status_text" || fail "/etc/default/cephmark-agent is not a conffile"
for path in usr/bin/cephmark usr/share/man/man1/cephmark.1.gz usr/share/bash-completion/completions/cephmark \
  usr/lib/systemd/system/cephmark-agent.service usr/lib/systemd/system/cephmark-monitor.service \
  etc/default/cephmark-agent usr/share/cephmark/scenarios/client-ceiling.lua usr/share/doc/cephmark/copyright \
  usr/share/doc/cephmark/examples/Containerfile usr/share/doc/cephmark/examples/cephmark-agent.yaml; do
  check [ -f "$root/$path" ] || fail "the package does not install /$path"
done

# the installed binary: its version, and a null-target scenario from the installed files
installed=$root/usr/bin/cephmark
check [ "$("$installed" --version | awk '{ print $1, $2 }')" = "cephmark $version" ] ||
  fail "installed --version: $("$installed" --version)"
check cmp -s "$installed" "$CEPHMARK" || fail "the installed binary differs from the build's"
(cd "$work" && "$installed" run "$root/usr/share/cephmark/scenarios/client-ceiling.lua" -p seconds=1 \
  -p threads=1,4 -o "$work/ceiling" >"$work/ceiling.out" 2>&1)
status=$?
check [ "$status" = 0 ] || { cat "$work/ceiling.out"; fail "client-ceiling from the package exited $status"; }
check [ "$(grep -c '^  = null threads=' "$work/ceiling.out")" = 2 ] || fail "client-ceiling ran $(grep -c '^  = null' "$work/ceiling.out") phases, not 2"
check grep -q "of CPU per op" "$work/ceiling.out" || fail "client-ceiling printed no CPU per op"
check [ -s "$work/ceiling/results.json" ] || fail "client-ceiling wrote no results.json"
check [ ! -e "$work/no-cluster" ] || fail "a null-target scenario reached for a local cluster"

# the man page: the main help and every command's, as roff that man can format
page=$(zcat "$root/usr/share/man/man1/cephmark.1.gz")
for command in run cluster rados-bench rados-cleanup cleanup rbd-bench swift-bench report compare agent netserver options; do
  check grep -qx "\.SS $command" <<<"$page" || fail "the man page has no section for $command"
done
check grep -q "^\.TH CEPHMARK \"1\"" <<<"$page" || fail "the man page has no .TH CEPHMARK 1 header"
if command -v groff >/dev/null; then
  warnings=$(zcat "$root/usr/share/man/man1/cephmark.1.gz" | groff -man -Tutf8 -ww -z 2>&1 | head -3)
  check [ -z "$warnings" ] || fail "groff warns about the man page: $warnings"
fi

# bash completion: commands, a command's flags from its own help, cluster actions
complete_words() { # complete_words WORD... : what completing the last word offers
  bash -c 'source /usr/share/bash-completion/bash_completion; source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    _cephmark; printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$root/usr/share/bash-completion/completions/cephmark" "$@"
}
export PATH="$root/usr/bin:$PATH"
check [ "$(complete_words cephmark cl | tr '\n' ' ')" = "cleanup cluster " ] || fail "cephmark cl<TAB>: $(complete_words cephmark cl | tr '\n' ' ')"
check grep -qx -- "--repeats" <<<"$(complete_words cephmark run --rep)" || fail "cephmark run --rep<TAB> does not offer --repeats"
check grep -qx -- "--bluestore" <<<"$(complete_words cephmark cluster up --blue)" || fail "cephmark cluster up --blue<TAB> does not offer --bluestore"
check [ "$(complete_words cephmark cluster st | tr '\n' ' ')" = "status " ] || fail "cephmark cluster st<TAB>: $(complete_words cephmark cluster st)"
check grep -qx rados <<<"$(complete_words cephmark options r)" || fail "cephmark options r<TAB> does not offer rados"

# systemd units: valid, running the installed binary with the defaults file's arguments.
# systemd-analyze verifies against a root holding this host's own unit files (the targets
# the units name), the package's units and its binary; the man page is checked above.
units=$work/units-root
mkdir -p "$units/usr/lib/systemd/system" "$units/usr/bin"
find /usr/lib/systemd/system -maxdepth 1 -type f -exec cp {} "$units/usr/lib/systemd/system/" \;
cp "$root"/usr/lib/systemd/system/cephmark-*.service "$units/usr/lib/systemd/system/"
cp "$installed" "$units/usr/bin/"
for unit in cephmark-agent.service cephmark-monitor.service; do
  verify=$(systemd-analyze verify --man=no --root="$units" "/usr/lib/systemd/system/$unit" 2>&1)
  check [ -z "$verify" ] || fail "systemd-analyze verify $unit: $verify"
  check grep -q '^ExecStart=/usr/bin/cephmark agent .*\$CEPHMARK_AGENT_ARGS' "$root/usr/lib/systemd/system/$unit" ||
    fail "$unit does not start /usr/bin/cephmark agent with \$CEPHMARK_AGENT_ARGS"
  check grep -q '^EnvironmentFile=-/etc/default/cephmark-agent$' "$root/usr/lib/systemd/system/$unit" ||
    fail "$unit does not read /etc/default/cephmark-agent"
done
# the defaults file's arguments are ones `cephmark agent` takes
args=$(. "$root/etc/default/cephmark-agent" && echo "$CEPHMARK_AGENT_ARGS")
agent_help=$("$installed" help agent)
for flag in $(grep -oE -- '(^| )-{1,2}[a-z-]+' <<<"$args"); do
  check grep -qE -- "(^|[ ,/])$flag( |,|$)" <<<"$agent_help" || fail "the defaults file passes $flag, which agent does not take"
done

# container files: the Containerfile installs this package on the Debian release it was
# built for and starts the installed agent; the manifest parses and mounts what it needs
containerfile=$root/usr/share/doc/cephmark/examples/Containerfile
. /etc/os-release
check grep -q "^FROM docker.io/library/debian:$VERSION_ID\$" "$containerfile" || fail "Containerfile is not FROM debian:$VERSION_ID"
check grep -q '^ENTRYPOINT \["/usr/bin/cephmark", "agent"' "$containerfile" || fail "Containerfile does not start /usr/bin/cephmark agent"
check grep -q '^COPY \${DEB} ' "$containerfile" || fail "Containerfile does not install the package given as DEB"
check grep -q '/etc/ceph' "$containerfile" || fail "Containerfile mounts no /etc/ceph"
cat >"$work/manifest.lua" <<'LUA'
local yaml = require "cephmark.yaml"
local p = ...
local path, version = p.path, p.version
local doc = assert(yaml.decode(assert(io.open(path)):read("a"), path))
local t = require "cephmark.test"
t.eq(doc.kind, "Deployment", "kind")
local pod = doc.spec.template.spec
local c = pod.containers[1]
t.eq(c.image, "cephmark:" .. version, "the image is this version's")
local mounts, volumes = {}, {}
for _, m in ipairs(c.volumeMounts) do mounts[m.name] = m.mountPath end
for _, v in ipairs(pod.volumes) do volumes[v.name] = v end
t.eq(mounts["ceph-conf"], "/etc/ceph", "ceph.conf is mounted where the entrypoint reads it")
t.ok(volumes["ceph-conf"] and volumes["ceph-conf"].configMap, "from a ConfigMap")
local keyring
for i, a in ipairs(c.args) do if a == "-k" then keyring = c.args[i + 1] end end
t.ok(keyring and mounts.keyring and keyring:sub(1, #mounts.keyring) == mounts.keyring, "the keyring argument is inside the keyring mount")
t.ok(volumes.keyring and volumes.keyring.secret, "the keyring comes from a Secret")
t.ok(pod.terminationGracePeriodSeconds >= 60, "the pod waits for the phase in progress to end")
return t.done()
LUA
"$installed" run "$work/manifest.lua" -p path="$root/usr/share/doc/cephmark/examples/cephmark-agent.yaml" -p version="$version" >"$work/manifest.out" 2>&1
status=$?
check [ "$status" = 0 ] || { cat "$work/manifest.out"; fail "the Kubernetes manifest check failed"; }
finish
