#!/usr/bin/env bash
# bench/engine-prefill.sh: the client's memory against a phase's length in ops (a prefill of
# 10 million objects is a phase bounded by ops). One null-target phase bounded by ops = 10^4,
# 10^5, 10^6 and 10^7 (no delay, THREADS slots; bench/engine-scale.lua), each in its own
# process, with its peak resident memory (VmHWM) and its RSS after the phase. The claim: flat
# (what grows is the per-second series, a few hundred bytes a second). Needs no cluster.
# Environment: CEPHMARK (binary), THREADS (16), COUNTS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

bench_require --no-cluster
bench_build_helpers
THREADS=${THREADS:-16}
COUNTS=${COUNTS:-10000 100000 1000000 10000000}

echo "ops seconds hwm_kib rss_kib series_seconds"
for count in $COUNTS; do
    measure "ops$count" "$CEPHMARK" run "$BENCH_DIR/engine-scale.lua" -p threads="$THREADS" \
        -p delay=0 -p ops="$count"
    echo "$(kv "ops$count" ops) $(kv "ops$count" seconds) $(kv "ops$count" hwm_kib) $(kv "ops$count" rss_kib) $(kv "ops$count" series)"
done
echo "(load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
