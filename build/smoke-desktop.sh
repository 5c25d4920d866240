#!/usr/bin/env bash
# Desktop smoke test: open the real window under Xvfb, find it with xdotool,
# and fail unless the board painted: the window exists, the page opened its
# live event stream through the window's asset server, the screenshot is not
# blank, and a board of 3 boxes and 8 agents added through the local API shows
# up in the window live. On a private D-Bus session bus (dbus-run-session),
# a second `rerun` on the same data hands over to the window and exits 0,
# and `rerun serve` there says the data is in use and exits non-zero. The
# last screenshot is kept to look at.
#
#   build/smoke-desktop.sh [BINARY] [SCREENSHOT.png]
set -euo pipefail
bin=${1:-build/bin/rerun}
shot=${2:-build/bin/desktop-smoke.png}
if [ -z "${SMOKE_INNER:-}" ]; then
  command -v dbus-run-session >/dev/null || { echo "desktop smoke: dbus-run-session is missing (apt: dbus-daemon; build/setup.sh)"; exit 1; }
  # NO_AT_BRIDGE: a bare session bus has no accessibility bus, and GTK
  # waiting for one leaves the window unpainted here (a desktop has one).
  exec env SMOKE_INNER=1 NO_AT_BRIDGE=1 dbus-run-session -- xvfb-run -a -s "-screen 0 1280x800x24" "$0" "$bin" "$shot"
fi

data=$(mktemp -d)
log="$data/rerun.log"
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
"$bin" --data-dir "$data/home" --port 0 >"$log" 2>&1 &
pid=$!

fail() { echo "desktop smoke: FAIL: $*"; echo "--- rerun log"; cat "$log"; exit 1; }

win=""
for _ in $(seq 60); do
  win=$(xdotool search --name '^Rerun$' 2>/dev/null | head -1 || true)
  [ -n "$win" ] && break
  kill -0 "$pid" 2>/dev/null || fail "rerun exited before its window appeared"
  sleep 0.5
done
[ -n "$win" ] || fail "no window named Rerun after 30 s"

# The board is painted once the page has loaded its data and opened /api/events.
for _ in $(seq 60); do
  grep -q 'msg="ui event stream opened"' "$log" && break
  sleep 0.5
done
grep -q 'msg="ui event stream opened"' "$log" || fail "the page never reached the API (no event stream opened)"
sleep 2 # let the first frame settle
import -window root "$data/empty.png"

# Fill the board through the local API (as another window or a script would):
# the window must show it live, through its own event stream.
url=$(grep -o 'http://127[^ ]*' "$log" | head -1)
base=${url%%/?token=*}; tok=${url##*token=}
api() { curl -sf -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' "$@"; }
ws=$(api "$base/api/workspaces" | sed -n 's/.*"current":"\([^"]*\)".*/\1/p')
main=$(api "$base/api/workspaces/$ws/board" | sed -n 's/.*"boxes":\[{"id":"\([^"]*\)".*/\1/p')
[ -n "$main" ] || fail "could not read the board through the API"
api -X PATCH -d '{"name":"Support"}' "$base/api/workspaces/$ws/boxes/$main" >/dev/null
sales=$(api -X POST -d '{"name":"Sales"}' "$base/api/workspaces/$ws/boxes" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
ops=$(api -X POST -d '{"name":"Operations"}' "$base/api/workspaces/$ws/boxes" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
for pair in "Inbox Keeper:$main" "Refund Desk:$main" "Chat Triage:$main" "Lead Finder:$sales" "Deal Closer:$sales" "Site Watcher:$ops" "Sheet Filler:$ops" "Invoice Chaser:$ops"; do
  api -X POST -d "{\"name\":\"${pair%%:*}\",\"box_id\":\"${pair##*:}\"}" "$base/api/workspaces/$ws/agents" >/dev/null || fail "could not create ${pair%%:*}"
done
sleep 3

import -window root "$shot"
diff=$(compare -metric AE "$data/empty.png" "$shot" null: 2>&1 || true)
# compare prints large counts in exponent form (1.00917e+06): read it as a number.
changed=$(awk -v d="${diff%% *}" 'BEGIN { printf "%d", d + 0 }')
colors=$(convert "$shot" -format '%k' info:)
stddev=$(convert "$shot" -colorspace Gray -format '%[fx:int(standard_deviation*1000)]' info:)
echo "desktop smoke: window $win, screenshot $shot: $colors colours, grey stddev $stddev/1000, $diff pixels changed by the live update"
[ "$colors" -ge 64 ] || fail "screenshot has only $colors colours: the board did not paint"
[ "$stddev" -ge 20 ] || fail "screenshot is nearly uniform (stddev $stddev): the board did not paint"
[ "$changed" -ge 5000 ] 2>/dev/null || fail "the window did not change after 3 boxes and 8 agents were added ($diff pixels): live updates do not reach it"

# One instance per data directory.
second=$("$bin" --data-dir "$data/home" --port 0 2>&1) || fail "a second launch failed: $second"
case $second in *"already running"*) ;; *) fail "a second launch did not hand over to the window: $second" ;; esac
kill -0 "$pid" 2>/dev/null || fail "the window quit when a second launch handed over"
if serve=$("$bin" serve --data-dir "$data/home" --port 0 2>&1); then fail "rerun serve on the window's data started: $serve"; fi
case $serve in *"already using"*) ;; *) fail "rerun serve on the window's data did not say it is in use: $serve" ;; esac
echo "desktop smoke: a second launch handed over; rerun serve refused: ${serve##*rerun: }"
echo "desktop smoke: ok"
