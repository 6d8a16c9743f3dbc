#!/usr/bin/env bash
# The sanitizer and fuzzing step of CI (.ci/run, after quickstart.sh test): a clang build
# with ASan+UBSan and libFuzzer instrumentation (CEPHMARK_FUZZ=ON) in build-sanitize, where
# the unit and Lua tests run under the sanitizers and each fuzz target runs for
# CEPHMARK_FUZZ_SECONDS (default 30), as many at once as there are cores (the tests assert
# nothing that load changes, and a fuzz target is one thread). Needs clang and
# libclang-rt-14-dev (quickstart.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${CEPHMARK_SANITIZE_BUILD:-build-sanitize}
seconds=${CEPHMARK_FUZZ_SECONDS:-30}
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCEPHMARK_WERROR=ON \
  -DCEPHMARK_FUZZ=ON -DCEPHMARK_FUZZ_SECONDS="$seconds" >/dev/null
make -C "$build" -j"$(nproc)" --no-print-directory
root=$PWD
cd "$build"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp"
exec ctest --output-on-failure -j"$(nproc)" -L 'unit|lua|fuzz'
