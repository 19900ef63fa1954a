#!/usr/bin/env bash
# Start `dagster dev` from the project root, wait until it answers, list the asset graph over GraphQL,
# then stop it. Exits non-zero if it does not come up, the graph is empty, or it does not stop.
#
#   scripts/dagster_dev_check.sh [PORT]      (default: a free port)
#
# Job control is on (set -m) so that dagster dev runs in its own process group: started from a
# non-interactive script without it, dagster dev ignores SIGTERM (it routes SIGTERM to a SIGINT handler
# that a background job has ignored) and its webserver and daemon children have to be killed by hand.
set -euo pipefail
set -m

cd "$(dirname "$0")/.."
BIN=.venv/bin
PORT="${1:-$("$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
URL="http://127.0.0.1:$PORT"
TIMEOUT="${DAGSTER_DEV_CHECK_TIMEOUT:-90}"

# A throwaway instance, telemetry off, so the check leaves no history behind.
HOME_DIR="$(mktemp -d)"
printf 'telemetry:\n  enabled: false\n' >"$HOME_DIR/dagster.yaml"
LOG="$HOME_DIR/dagster-dev.log"
PID=""

stop() {
    if [[ -n "$PID" ]] && kill -0 "$PID" 2>/dev/null; then
        kill -TERM -- "-$PID" 2>/dev/null || true
        # Up to 60 s: on a loaded two-core machine the webserver and daemon can take a while to
        # shut down cleanly, and killing them early is what this check exists to catch.
        for _ in $(seq 1 120); do
            kill -0 -- "-$PID" 2>/dev/null || break
            sleep 0.5
        done
        if kill -0 -- "-$PID" 2>/dev/null; then
            echo "dagster dev did not stop on SIGTERM; killing its process group" >&2
            kill -KILL -- "-$PID" 2>/dev/null || true
            STOP_FAILED=1
        fi
    fi
    rm -rf "$HOME_DIR"
}
STOP_FAILED=0
trap stop EXIT

DAGSTER_HOME="$HOME_DIR" CLEAR_RAG_EMBEDDER=hash "$BIN/dagster" dev -h 127.0.0.1 -p "$PORT" >"$LOG" 2>&1 &
PID=$!

echo "waiting for dagster dev on $URL (pid $PID) ..."
ready=0
for _ in $(seq 1 "$((TIMEOUT * 2))"); do
    if ! kill -0 "$PID" 2>/dev/null; then
        echo "dagster dev exited early:" >&2
        tail -n 40 "$LOG" >&2
        exit 1
    fi
    if curl -fsS "$URL/server_info" >/dev/null 2>&1; then
        ready=1
        break
    fi
    sleep 0.5
done
if [[ "$ready" != 1 ]]; then
    echo "dagster dev did not answer /server_info within ${TIMEOUT}s:" >&2
    tail -n 40 "$LOG" >&2
    exit 1
fi
echo "server_info: $(curl -fsS "$URL/server_info")"

# The code location loads in its own process after the webserver is up; retry until nodes appear.
keys=""
for _ in $(seq 1 "$((TIMEOUT * 2))"); do
    answer="$(curl -fsS -X POST "$URL/graphql" -H 'Content-Type: application/json' \
        -d '{"query": "{ assetNodes { assetKey { path } } }"}' || true)"
    keys="$(printf '%s' "$answer" | "$BIN/python" -c '
import json, sys
try:
    nodes = json.load(sys.stdin)["data"]["assetNodes"]
except (ValueError, KeyError, TypeError):
    sys.exit(0)
print("\n".join(sorted("/".join(n["assetKey"]["path"]) for n in nodes)))
')"
    [[ -n "$keys" ]] && break
    sleep 0.5
done
if [[ -z "$keys" ]]; then
    echo "the asset graph stayed empty; last answer: ${answer:-none}" >&2
    tail -n 40 "$LOG" >&2
    exit 1
fi
echo "asset keys:"
printf '%s\n' "$keys" | sed 's/^/  /'

stop
PID=""
trap - EXIT
if [[ "$STOP_FAILED" != 0 ]]; then
    exit 1
fi
echo "stopped cleanly"
