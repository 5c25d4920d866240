#!/usr/bin/env bash
# Measures what the README promises about the running program:
#   - `rerun serve` cold start to the first board JSON (median of 10 starts)
#   - idle resident memory with 5 boxes and 20 agents
#   - binary sizes (static server, desktop)
#   build/bench.sh SERVER_BINARY [DESKTOP_BINARY]
set -euo pipefail
srv=${1:-build/bin/rerun-server}
desk=${2:-}
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
pid=0

start() { # start DATA_DIR: launches serve, sets pid, base, tok
  : >"$tmp/out"
  "$srv" serve --port 0 --data-dir "$1" >"$tmp/out" 2>/dev/null &
  pid=$!
}
wait_url() {
  for _ in $(seq 2000); do
    url=$(grep -o 'http://127[^ ]*' "$tmp/out" 2>/dev/null || true)
    [ -n "$url" ] && break
    sleep 0.001
  done
  base=${url%%/?token=*}; tok=${url##*token=}
}
api() { curl -sf -H "Authorization: Bearer $tok" "$@"; }
now_ms() { date +%s%3N; }

times=()
for i in $(seq 10); do
  t0=$(now_ms)
  start "$tmp/cold$i"
  wait_url
  ws=""
  until [ -n "$ws" ]; do ws=$(api "$base/api/workspaces" 2>/dev/null | sed -n 's/.*"current":"\([^"]*\)".*/\1/p'); done
  api "$base/api/workspaces/$ws/board" >/dev/null
  times+=($(( $(now_ms) - t0 )))
  kill $pid; wait $pid 2>/dev/null || true
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
echo "cold start to first board JSON: median $(echo "$sorted" | sed -n 5p) ms (min $(echo "$sorted" | head -1), max $(echo "$sorted" | tail -1); first start creates the workspace)"

start "$tmp/idle"; wait_url
ws=$(api "$base/api/workspaces" | sed -n 's/.*"current":"\([^"]*\)".*/\1/p')
for b in $(seq 5); do
  bx=$(api -X POST -d "{\"name\":\"Box $b\"}" "$base/api/workspaces/$ws/boxes" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
  for a in $(seq 4); do
    api -X POST -d "{\"name\":\"Agent $b-$a\",\"box_id\":\"$bx\",\"soul\":\"# Agent $b-$a\"}" "$base/api/workspaces/$ws/agents" >/dev/null
  done
done
api "$base/api/workspaces/$ws/board" >/dev/null
sleep 3
echo "idle RSS with 5 boxes / 20 agents: $(awk '/VmRSS/ {printf "%.1f MiB", $2/1024}' /proc/$pid/status)"

# The MCP endpoint beside the official TypeScript SDK's example server.
if command -v node >/dev/null; then
  here=$(dirname "$0")/bench-mcp
  (cd "$here" && { [ -d node_modules ] || npm ci --no-audit --no-fund >/dev/null 2>&1; })
  key=$("$srv" key create bench --data-dir "$tmp/idle" 2>/dev/null)
  eport=$(( 20000 + RANDOM % 20000 ))
  PORT=$eport node "$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp >/dev/null 2>&1 &
  epid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$eport/mcp" && break; sleep 0.1; done
  node "$here/bench.mjs" "$base" "$key" "http://127.0.0.1:$eport" 2000 || echo "MCP bench failed"
  kill $epid 2>/dev/null || true
fi
kill $pid; wait $pid 2>/dev/null || true

size() { stat -c %s "$1" | awk '{printf "%.1f MiB", $1/1048576}'; }
echo "binary size, static server ($srv): $(size "$srv")"
[ -n "$desk" ] && echo "binary size, desktop ($desk): $(size "$desk")"
exit 0
