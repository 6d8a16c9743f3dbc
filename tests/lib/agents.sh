# Agents for the integration tests: start_agent runs `cephmark agent` on the test's control
# pool ($control) with its log in $work/NAME.log and its pid in the caller's `pids` array;
# wait_registered waits for each named agent to register, and ends the test with the
# agent's log when one does not; stop_agents, from the caller's cleanup, ends the agents
# and removes the control pool; trap_cleanup runs the caller's `cleanup` however the test
# ends; s3_setting prints a setting of the cluster's S3 credentials and gateway_port the
# port of its S3 endpoint.

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

stop_agents() { # ends the agents of `pids` and removes the test's control pool
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  ceph osd pool rm "$control" "$control" --yes-i-really-really-mean-it >/dev/null 2>&1
}

trap_cleanup() { # the caller's cleanup at exit; a signal ends the script through that trap
  trap cleanup EXIT
  trap 'exit 130' INT TERM HUP
}

s3_setting() { # KEY: a setting of the [s3] section of the cluster's credentials.conf
  awk -v key="$1" '/^\[/ { s = ($0 == "[s3]") } s && $1 == key { print $3; exit }' \
    "$(dirname "$CEPH_CONF")/credentials.conf"
}

gateway_port() { # the port of the S3 endpoint in the cluster's credentials.conf, or the test fails
  local endpoint
  endpoint=$(s3_setting endpoint)
  [ -n "$endpoint" ] || { echo "FAIL: no S3 endpoint in credentials.conf (the cluster needs --rgw)" >&2; exit 1; }
  echo "${endpoint##*:}"
}
