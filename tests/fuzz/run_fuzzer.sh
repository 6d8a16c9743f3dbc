# Runs one libFuzzer target for a bounded time: FUZZER SEED_DIR WORK_DIR SECONDS.
# New inputs go to WORK_DIR (kept between runs); a crash, leak, timeout or sanitizer report
# fails the test and leaves the input in WORK_DIR/crash-* (printed by libFuzzer).
set -eu
fuzzer=$1 seeds=$2 work=$3 seconds=$4
mkdir -p "$work"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work" "$seeds"
