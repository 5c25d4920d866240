#!/usr/bin/env bash
# Rerun beside n8n (pinned in build/bench-peers/package.json, installed from
# npm on first use, ~2.5 GB), 3 alternating rounds (ROUNDS=n), medians:
#   - fresh start → first answer (Rerun: the board JSON; n8n: /healthz/readiness)
#   - resident memory 30 s after start, the whole process tree (Rerun with
#     5 boxes and 20 agents; n8n as it starts)
#   - webhook intake, wrk -t2 -c32 -d20s on loopback: Rerun's trigger (202
#     once the delivery and its run are committed) and n8n's Webhook node
#     (answering on receipt, the execution saved)
#   build/bench-peers.sh SERVER_BINARY FAKELLM_BINARY
set -euo pipefail
srv=${1:-build/bin/rerun-server}
fake=${2:-build/bin/fakellm}
here=$(cd "$(dirname "$0")" && pwd)/bench-peers
command -v wrk >/dev/null || { echo "bench-peers: wrk is not installed (make setup installs it)" >&2; exit 1; }
if [ ! -x "$here/node_modules/.bin/n8n" ]; then
  echo "bench-peers: installing n8n from npm (once)"
  npm install --prefix "$here" --no-audit --no-fund --loglevel=error >/dev/null
fi
n8n="$here/node_modules/.bin/n8n"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
now_ms() { date +%s%3N; }
tree_kib() { # resident KiB of a process and all its descendants
  local t c
  t=$(awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0)
  for c in $(pgrep -P "$1" || true); do t=$(( t + $(tree_kib "$c") )); done
  echo "$t"
}
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# Rerun: start DATA_DIR, sets pid, base, tok.
rerun_start() {
  : >"$tmp/out"
  "$srv" serve --port 0 --data-dir "$1" >"$tmp/out" 2>/dev/null &
  pid=$!; pids+=("$pid")
  url=""
  url=$(grep -m1 -o 'http://127[^ ]*' <(timeout 60 tail -n +1 -f --pid="$pid" "$tmp/out") || true) # bench.sh's wait_url
  base=${url%%/?token=*}; tok=${url##*token=}
}
api() { curl -sf -H "Authorization: Bearer $tok" "$@"; }
rerun_ws() { api "$base/api/workspaces" | sed -n 's/.*"current":"\([^"]*\)".*/\1/p'; }

# n8n: n8n_vars USER_FOLDER PORT sets vars, its environment; n8n_start
# USER_FOLDER PORT starts it, sets pid, and waits until it answers and has
# activated its published workflows.
n8n_vars() {
  vars=(N8N_USER_FOLDER="$1" N8N_PORT="$2" N8N_LISTEN_ADDRESS=127.0.0.1 N8N_DIAGNOSTICS_ENABLED=false
    N8N_VERSION_NOTIFICATIONS_ENABLED=false N8N_TEMPLATES_ENABLED=false N8N_PERSONALIZATION_ENABLED=false
    N8N_SECURE_COOKIE=false)
}
n8n_start() {
  n8n_vars "$1" "$2"
  env "${vars[@]}" "$n8n" start >"$tmp/n8n.log" 2>&1 & # env execs n8n: $! is n8n itself
  pid=$!; pids+=("$pid")
  until curl -sf -o /dev/null "http://127.0.0.1:$2/healthz/readiness" && grep -q "$3" "$tmp/n8n.log"; do
    kill -0 "$pid" 2>/dev/null || { echo "bench-peers: n8n exited:" >&2; cat "$tmp/n8n.log" >&2; exit 1; }
    sleep 0.01
  done
}

hook() { # hook URL: prints "req/s p99 non-2xx"
  wrk -t2 -c32 -d20s --latency -s "$here/../bench-hook.lua" "$1" >"$tmp/wrk"
  awk '/^Requests\/sec/ {r = $2} $1 == "99%" {p = $2} $1 == "not2xx" {b = $2} END {printf "%.0f %s %d\n", r, p, b}' "$tmp/wrk"
}
p99_ms() { awk '{v = $1; if (v ~ /us$/) v = v / 1000; else if (v ~ /ms$/) v = v + 0; else if (v ~ /s$/) v = v * 1000; printf "%.2f", v}' <<<"$1"; }

declare -a r_start n_start r_rss n_rss r_rps n_rps r_p99 n_p99
for round in $(seq "${ROUNDS:-3}"); do
  # Rerun: fresh start, idle memory.
  t0=$(now_ms); rerun_start "$tmp/r$round"
  ws=""; until [ -n "$ws" ]; do ws=$(rerun_ws 2>/dev/null || true); done
  api "$base/api/workspaces/$ws/board" >/dev/null
  r_start+=($(( $(now_ms) - t0 )))
  for b in 1 2 3 4 5; do
    bx=$(api -X POST -d "{\"name\":\"Box $b\"}" "$base/api/workspaces/$ws/boxes" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
    for a in 1 2 3 4; do api -X POST -d "{\"name\":\"Agent $b-$a\",\"box_id\":\"$bx\"}" "$base/api/workspaces/$ws/agents" >/dev/null; done
  done
  sleep $(( (t0 + 30000 - $(now_ms)) / 1000 > 0 ? (t0 + 30000 - $(now_ms)) / 1000 : 0 ))
  r_rss+=($(tree_kib "$pid")); stop "$pid"

  # n8n: fresh start, idle memory.
  port=$(( 20000 + RANDOM % 20000 ))
  t0=$(now_ms); n8n_start "$tmp/n$round" "$port" "n8n ready on"
  n_start+=($(( $(now_ms) - t0 )))
  sleep $(( (t0 + 30000 - $(now_ms)) / 1000 > 0 ? (t0 + 30000 - $(now_ms)) / 1000 : 0 ))
  n_rss+=($(tree_kib "$pid")); stop "$pid"

  # Rerun: webhook intake (a model that takes its time, so runs queue).
  "$fake" -delay 10m >"$tmp/fake" & fpid=$!; pids+=("$fpid")
  furl=""; until [ -n "$furl" ]; do furl=$(head -1 "$tmp/fake" 2>/dev/null || true); sleep 0.01; done
  OPENAI_API_KEY=bench OPENAI_BASE_URL=$furl/v1 rerun_start "$tmp/rh$round"
  ws=""; until [ -n "$ws" ]; do ws=$(rerun_ws 2>/dev/null || true); done
  bx=$(api "$base/api/workspaces/$ws/board" | sed -n 's/.*"boxes":\[{"id":"\([^"]*\)".*/\1/p')
  ag=$(api -X POST -d "{\"name\":\"Hooks\",\"box_id\":\"$bx\"}" "$base/api/workspaces/$ws/agents" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
  url=$(api -X POST -d '{"name":"Load","instruction":"Count it.","rate_limit":1000000}' \
    "$base/api/workspaces/$ws/agents/$ag/triggers" | sed -n 's/.*"url":"\([^"]*\)".*/\1/p')
  read -r rps p99 bad < <(hook "$url")
  [ "$bad" = 0 ] || echo "bench-peers: Rerun answered $bad requests with no 2xx" >&2
  r_rps+=("$rps"); r_p99+=("$(p99_ms "$p99")"); stop "$pid"; stop "$fpid"

  # n8n: the same load on a published Webhook workflow.
  port=$(( 20000 + RANDOM % 20000 ))
  n8n_vars "$tmp/nh$round" "$port"
  env "${vars[@]}" "$n8n" import:workflow --input="$here/webhook-workflow.json" >/dev/null 2>&1
  env "${vars[@]}" "$n8n" publish:workflow --id=BenchWebhook0001 >/dev/null 2>&1
  n8n_start "$tmp/nh$round" "$port" 'Activated workflow "Bench webhook"' 
  read -r rps p99 bad < <(hook "http://127.0.0.1:$port/webhook/bench")
  [ "$bad" = 0 ] || echo "bench-peers: n8n answered $bad requests with no 2xx" >&2
  n_rps+=("$rps"); n_p99+=("$(p99_ms "$p99")"); stop "$pid"
done

awk -v rs="$(median "${r_start[@]}")" -v ns="$(median "${n_start[@]}")" \
    -v rm="$(median "${r_rss[@]}")" -v nm="$(median "${n_rss[@]}")" \
    -v rr="$(median "${r_rps[@]}")" -v nr="$(median "${n_rps[@]}")" \
    -v rp="$(median "${r_p99[@]}")" -v np="$(median "${n_p99[@]}")" -v rounds="${ROUNDS:-3}" 'BEGIN {
  printf "peers (%d alternating rounds, medians; n8n 2.8.4):\n", rounds
  printf "  fresh start → first answer: Rerun %d ms, n8n %d ms (Rerun %.1f× faster)\n", rs, ns, ns / rs
  printf "  resident memory 30 s after start: Rerun %.1f MiB, n8n %.1f MiB (%.1f×)\n", rm / 1024, nm / 1024, nm / rm
  printf "  webhook intake (wrk -t2 -c32 -d20s): Rerun %d req/s (p99 %s ms), n8n %d req/s (p99 %s ms) (%.1f×)\n", rr, rp, nr, np, rr / nr }'
