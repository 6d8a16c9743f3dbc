# The table runner of the bad-input tests (tests/cli/bad_input_table.sh and
# tests/integration/test_bad_input_table.sh). Source it after tests/lib/assert.sh, set W to
# the work folder, then `run_table FILE`; `cases` counts the rows run. Table format:
#   EXIT[ +trace] | the exact stderr line (W = the work folder) | arguments (shell words, W too)
# A row must print exactly that one line on stderr, or, marked +trace (script errors), that
# line first and then a traceback. No row may crash or take 20 s.
cases=0
run_table() {
  local line code rest message arguments trace start
  while IFS= read -r line; do
    case "$line" in '#'* | '') continue ;; esac
    code=${line%% | *}
    rest=${line#* | }
    message=${rest%% | *}
    arguments=${rest#* | }
    trace=no
    case "$code" in *+trace) trace=yes code=${code%% *} ;; esac
    message=${message//W/$W}
    # W stands for the work folder in the arguments too (word-split, no globbing)
    set -f
    # shellcheck disable=SC2086
    set -- ${arguments//W/$W}
    set +f
    cases=$((cases + 1))
    start=$(date +%s.%N)
    run_cli "$code" "$@"
    expect_faster_than 20 "$start"
    if [ "$trace" = yes ]; then
      checks=$((checks + 1))
      if [ "$(head -1 "$err_file")" != "$message" ]; then
        failures=$((failures + 1))
        echo "FAIL: '$last_command': first stderr line is not: $message"
        sed 's/^/  stderr: /' "$err_file" | head -5
      fi
      expect_stderr '^stack traceback:$'
    else
      expect_stderr_line "$message"
      expect_stderr_lines 1
    fi
    if grep -qE 'Segmentation|Aborted|AddressSanitizer|runtime error' "$err_file"; then
      failures=$((failures + 1))
      echo "FAIL: '$last_command' crashed"
    fi
  done <"$1"
}
