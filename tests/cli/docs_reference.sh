#!/bin/bash
# The reference docs cover what an operator meets: every option the bench functions take
# (docs/rados.md), every flag of `cephmark cluster` (docs/local-cluster.md), every helper
# function and `s:` method the shipped scenarios call, the fields fio.description_line and
# rgw.swift_connect's second value carry, the unit of a comparison's `relative`, what the
# ceph CLI does on the local cluster without a mgr; and the README's example output names
# no folder of the machine it was run on. Each failure names what is missing and where.
set -u
. "${CEPHMARK_SOURCE_DIR:-$(dirname "$0")/../..}/tests/lib/assert.sh"
src=${CEPHMARK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
docs=$src/docs

# documented WHAT FILE... : some FILE holds the text WHAT
documented() {
  local what=$1
  shift
  checks=$((checks + 1))
  if ! grep -qF -- "$what" "$@"; then
    failures=$((failures + 1))
    echo "FAIL: no doc mentions $what (looked in ${*#"$src/"})"
  fi
}
# section FILE HEADING : the lines of FILE's section HEADING, up to the next heading of its level
section() {
  awk -v heading="$2" '
    $0 == heading { inside = 1; level = index($0, " "); print; next }
    inside && /^#+ / && index($0, " ") <= level { exit }
    inside { print }
  ' "$1"
}
# in_section FILE HEADING WHAT : the section holds WHAT
in_section() {
  checks=$((checks + 1))
  if ! section "$1" "$2" | grep -qF -- "$3"; then
    failures=$((failures + 1))
    echo "FAIL: ${1#"$src/"}, section '$2', does not mention $3"
  fi
}

# --- bench options: every one the engine takes (its table, through `cephmark options`) is in
# pool:bench's section too
options=$("$CEPHMARK" options engine | awk 'NR > 1 { print $1 }')
check_count=$(wc -w <<<"$options")
checks=$((checks + 1))
if [ "$check_count" -lt 9 ]; then
  failures=$((failures + 1))
  echo "FAIL: \`cephmark options engine\` lists $check_count options, expected at least 9"
fi
for option in $options; do
  in_section "$docs/rados.md" "## pool:bench" "\`$option\`"
done

# --- cluster flags: every flag of every `cephmark cluster` command's help ---------------------
for command in up down status env kill restart; do
  run_cli 0 cluster "$command" --help
  for flag in $(grep -oE -- '--[a-z][a-z-]*' "$out_file" | sort -u); do
    [ "$flag" = --help ] && continue
    checks=$((checks + 1))
    if ! grep -qE -- "$flag([^a-z-]|\$)" "$docs/local-cluster.md"; then
      failures=$((failures + 1))
      echo "FAIL: cluster $command --help lists $flag, docs/local-cluster.md does not"
    fi
  done
done

# --- what the shipped scenarios call ------------------------------------------------------------
# for every `local NAME = require "cephmark.X"` and NAME.fn(...) call, a doc names NAME.fn or
# X.fn, or has a line naming both the module and fn(; and every s:method(...) call
for scenario in "$src"/scenarios/*.lua; do
  while read -r name module; do
    short=${module##*.}
    [ "$module" = cephmark ] && short=cm
    for fn in $(grep -oE "(^|[^A-Za-z0-9_.])$name\\.[a-z_]+ *[({\"']" "$scenario" |
      sed -E "s/^.*$name\\.([a-z_]+).*/\\1/" | sort -u); do
      checks=$((checks + 1))
      if ! grep -qF -e "$name.$fn" -e "$short.$fn" "$docs"/*.md &&
        ! grep -hF -- "$module" "$docs"/*.md | grep -qF -- "$fn("; then
        failures=$((failures + 1))
        echo "FAIL: ${scenario#"$src/"} calls $name.$fn ($module), which no doc mentions"
      fi
    done
  done < <(sed -nE 's/^ *local ([a-z_]+)( <close>)? *= *require[ (]*"(cephmark[a-z_.]*)".*/\1 \3/p' "$scenario")
  for method in $(grep -oE 's:[a-z_]+\(' "$scenario" | tr -d '(' | sort -u); do
    documented "$method" "$docs"/*.md
  done
done

# --- fields of fio.description_line and of rgw.swift_connect's second value -------------------
fields=$(sed -n '/^function M.description_line/,/^end/p' "$src/stdlib/cephmark/report/fio.lua" |
  grep -oE '\bo\.[a-z_]+' | sort -u | sed 's/^o\.//')
for field in $fields; do
  in_section "$docs/rbd.md" "### The fio layout" "\`$field"
done
for scenario in "$src"/scenarios/*.lua; do
  variable=$(sed -nE 's/.*local [a-z_]+( <close>)?, ([a-z_]+) = rgw\.swift_connect.*/\2/p' "$scenario")
  [ -n "$variable" ] || continue
  for field in $(grep -oE "\\b$variable\\.[a-z_]+" "$scenario" | sed "s/^$variable\\.//" | sort -u); do
    in_section "$docs/rgw.md" "## The Lua modules" "$field ="
  done
done

# --- a comparison's `relative` is in percent, and docs/dsl.md says so -------------------------
in_section "$docs/dsl.md" "## Comparisons" "in percent"

# --- the local cluster has no mgr: what hangs, and what to use instead ------------------------
in_section "$docs/local-cluster.md" "## Without a mgr" "ceph config show"
in_section "$docs/local-cluster.md" "## Without a mgr" "ceph tell osd.N config get"

# --- the README's example output names no folder of the machine it ran on ---------------------
# (the examples run from a clone in /srv/cephmark; system paths are fine)
checks=$((checks + 1))
stray=$(grep -noE "(^|[ '\"=(])/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*" "$src/README.md" |
  grep -vE ":[ '\"=(]?/(srv/|etc/ceph)" || true)
if [ -n "$stray" ]; then
  failures=$((failures + 1))
  echo "FAIL: README.md names folders outside /srv and /etc/ceph:"
  sed 's/^/  /' <<<"$stray"
fi
documented "/srv/cephmark/build/demo-cluster" "$src/README.md"

finish
