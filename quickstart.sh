#!/usr/bin/env bash
# cephmark's quick start, for a fresh Debian 12 machine as root:
#   bash quickstart.sh        installs what is missing, builds, starts a throwaway local Ceph
#                             cluster (with a mgr, for PG states and space), runs the main
#                             scenario on it, and stops the cluster
#   bash quickstart.sh test   installs what is missing, builds, and runs the whole test suite
#                             (which starts and stops its own local cluster)
set -euo pipefail
cd "$(dirname "$0")"

mode=${1:-demo}
case "$mode" in
demo | test) ;;
*)
  echo "usage: bash quickstart.sh [test]" >&2
  exit 2
  ;;
esac
if [ "$(id -u)" != 0 ]; then
  echo "quickstart.sh: run as root (it installs Debian packages and starts Ceph daemons)" >&2
  exit 2
fi

# Build tools and -dev libraries, the Ceph daemons for the local cluster, the linters CI runs
# (cppcheck, clang-tidy: tests/lint/run.sh), and the tools the tests and benchmarks drive side
# by side (Prometheus and its exporters: the tests start their own, on free loopback ports).
packages=(
  build-essential cmake pkg-config git ca-certificates
  liblua5.4-dev libyaml-dev libcurl4-openssl-dev libssl-dev librados-dev libradospp-dev librbd-dev liburing-dev
  ceph-mon ceph-osd ceph-mgr ceph-common radosgw
  curl procps iproute2 fio time wrk iperf3 python3 chromium chromium-driver
  clang libclang-rt-14-dev valgrind cppcheck clang-tidy
  prometheus prometheus-node-exporter prometheus-process-exporter
)
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "quickstart: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build=build
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCEPHMARK_WERROR=ON >/dev/null
make -C "$build" -j"$(nproc)" --no-print-directory

if [ "$mode" = test ]; then
  cd "$build"
  exec ctest --output-on-failure --timeout 900
fi

cluster="$PWD/$build/demo-cluster"
cephmark="$PWD/$build/cephmark"
trap '"$cephmark" cluster down --dir "$cluster"' EXIT
"$cephmark" cluster up --dir "$cluster" --mgr
"$cephmark" run scenarios/ec-vs-replica.lua -c "$cluster/ceph.conf" -p seconds=5
