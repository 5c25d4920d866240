#!/usr/bin/env bash
# Desktop smoke test: open the real window under Xvfb, find it with xdotool,
# screenshot it, and fail unless the board painted (window present, the page
# opened its live event stream through the window's asset server, and the
# screenshot is not blank).
#
#   build/smoke-desktop.sh [BINARY] [SCREENSHOT.png]
set -euo pipefail
bin=${1:-build/bin/rerun}
shot=${2:-build/bin/desktop-smoke.png}
if [ -z "${SMOKE_INNER:-}" ]; then
  exec env SMOKE_INNER=1 xvfb-run -a -s "-screen 0 1280x800x24" "$0" "$bin" "$shot"
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

import -window root "$shot"
colors=$(convert "$shot" -format '%k' info:)
stddev=$(convert "$shot" -colorspace Gray -format '%[fx:int(standard_deviation*1000)]' info:)
echo "desktop smoke: window $win, screenshot $shot: $colors colours, grey stddev $stddev/1000"
[ "$colors" -ge 64 ] || fail "screenshot has only $colors colours: the board did not paint"
[ "$stddev" -ge 20 ] || fail "screenshot is nearly uniform (stddev $stddev): the board did not paint"
echo "desktop smoke: ok"
