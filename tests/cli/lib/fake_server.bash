# fake_server.bash: start and stop tests/tools/fake_model_server.py for the
# dkb optimize tests (sourced after common.bash).
#   start_server SCRIPT   serve SCRIPT's steps; sets PORT and SERVER_PID;
#                         the requests are logged to $WORK/server.log
#   stop_server
start_server() {
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
    rm -f "$WORK/port"
    python3 "$root/tests/tools/fake_model_server.py" --script "$1" --port-file "$WORK/port" --log "$WORK/server.log" &
    SERVER_PID=$!
    for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
    PORT=$(cat "$WORK/port") || fail "fake server did not start"
}
stop_server() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
