# Runs tests/valgrind/scenario.lua under valgrind (memcheck): any invalid read or write,
# use of uninitialised memory in a branch, or definite leak fails the test (exit 1), with
# tests/valgrind/cephmark.supp for the libraries' own reports. Arguments go to the scenario
# (-p cluster=true for the rados and Swift phases).
set -u
: "${CEPHMARK:?}" "${CEPHMARK_SOURCE_DIR:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
  --show-leak-kinds=definite --track-origins=yes --num-callers=30 \
  --suppressions="$CEPHMARK_SOURCE_DIR/tests/valgrind/cephmark.supp" \
  "$CEPHMARK" run "$CEPHMARK_SOURCE_DIR/tests/valgrind/scenario.lua" -o "$work/results" "$@" \
  >"$work/out" 2>"$work/err"
status=$?
cat "$work/out"
if [ $status = 99 ]; then
  echo "FAIL: valgrind found errors:"
  cat "$work/err"
  exit 1
fi
if [ $status != 0 ]; then
  echo "FAIL: the scenario exited $status under valgrind:"
  cat "$work/err"
  exit 1
fi
grep -q '^results: ' "$work/out" || { echo "FAIL: the scenario wrote no results"; exit 1; }
echo "valgrind: clean"
