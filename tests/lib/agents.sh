# Agents for the integration tests: start_agent runs `cephmark agent` on the test's control
# pool ($control) with its log in $work/NAME.log and its pid in the caller's `pids` array
# (the caller's cleanup ends them); wait_registered waits for each named agent to register,
# and ends the test with the agent's log when one does not.

start_agent() { # NAME [AGENT ARGS...]
  local name=$1
  shift
  "$CEPHMARK" agent --control-pool "$control" --name "$name" "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
}

wait_registered() { # NAME...
  local name
  for name in "$@"; do
    wait_until 20 0.1 grep -q "registered in pool" "$work/$name.log" ||
      { echo "FAIL: agent $name did not register: $(cat "$work/$name.log")"; exit 1; }
  done
}
