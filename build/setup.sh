#!/usr/bin/env bash
# Installs what building and testing Rerun Desktop needs, skipping what is
# already present. Debian/Ubuntu: apt packages (sudo when not root).
# macOS/Windows: says what Wails needs instead. Everywhere: the npm packages
# of the frontend and of the MCP server the connector tests start.
set -euo pipefail
cd "$(dirname "$0")/.."

case "$(uname -s)" in
  Darwin)
    echo "setup: on macOS, install Xcode command line tools (xcode-select --install), Go 1.26+ and Node 20+."
    echo "       Wails v2 needs nothing else; see https://wails.io/docs/gettingstarted/installation"
    ;;
  MINGW*|MSYS*|CYGWIN*)
    echo "setup: on Windows, install Go 1.26+, Node 20+ and the WebView2 runtime (built into Windows 11)."
    ;;
  Linux)
    # build: GTK/WebKit headers for the window; run: libgl1-mesa-dri (WebKit
    # aborts on EGL without it); test: chromium, Xvfb, xdotool, ImageMagick;
    # bench: wrk (webhook intake); the tray test: dbus-daemon (a private session bus);
    # dist: nsis (makensis, the Windows installer).
    want=(build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev libgl1-mesa-dri
          chromium xvfb xauth xdotool imagemagick wrk dbus-daemon nsis)
    missing=()
    for p in "${want[@]}"; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
      if ! command -v apt-get >/dev/null; then
        echo "setup: missing ${missing[*]}; install the equivalents with your package manager" >&2
        exit 1
      fi
      sudo=""
      [ "$(id -u)" -eq 0 ] || sudo="sudo"
      echo "setup: installing ${missing[*]}"
      $sudo apt-get update -q
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
    ;;
esac

command -v go >/dev/null || { echo "setup: Go 1.26+ is needed (https://go.dev/dl)" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup: Node 20+ and npm are needed" >&2; exit 1; }

# npm ci only when a lock file changed since the last install: the
# frontend's, and build/bench-mcp's — @modelcontextprotocol/server-everything,
# the real stdio MCP server of the connector tests and the MCP benchmark.
for dir in frontend build/bench-mcp; do
  stamp=$dir/node_modules/.package-lock.json
  if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
    echo "setup: installing $dir packages"
    npm ci --prefix "$dir" --no-audit --no-fund
  fi
done
