#!/bin/sh
# Installs Rerun Desktop from this folder for the current user (into
# ~/.local) or under a prefix: the binary, the desktop entry and the icons.
#
#   ./install.sh                   install into ~/.local
#   ./install.sh --prefix DIR      install into DIR (e.g. /usr/local, as root)
#   ./install.sh --uninstall [--prefix DIR]
#
# The window needs WebKitGTK 4.1 and GTK 3 (Debian/Ubuntu:
# apt install libwebkit2gtk-4.1-0 libgtk-3-0); agents' browsers use Chromium.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${PREFIX:-$HOME/.local}
uninstall=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a folder" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) prefix=$(pwd)/$prefix ;; esac

refresh() {
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$prefix/share/applications" 2>/dev/null || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$prefix/share/icons/hicolor/index.theme" ] &&
    gtk-update-icon-cache -q -t "$prefix/share/icons/hicolor" 2>/dev/null || true
}

if [ -n "$uninstall" ]; then
  rm -f "$prefix/bin/rerun" "$prefix/share/applications/rerun.desktop" "$prefix/share/man/man1/rerun.1"
  for d in "$here"/icons/hicolor/*/apps; do
    size=$(basename "$(dirname "$d")")
    rm -f "$prefix/share/icons/hicolor/$size/apps/rerun.png"
  done
  refresh
  echo "Rerun removed from $prefix (your workspaces are kept)."
  exit 0
fi

mkdir -p "$prefix/bin" "$prefix/share/applications" "$prefix/share/man/man1"
cp "$here/rerun" "$prefix/bin/rerun.new" && chmod 755 "$prefix/bin/rerun.new" && mv -f "$prefix/bin/rerun.new" "$prefix/bin/rerun"
sed "s|^Exec=.*|Exec=$prefix/bin/rerun|" "$here/rerun.desktop" >"$prefix/share/applications/rerun.desktop"
cp "$here/rerun.1" "$prefix/share/man/man1/rerun.1"
for d in "$here"/icons/hicolor/*/apps; do
  size=$(basename "$(dirname "$d")")
  mkdir -p "$prefix/share/icons/hicolor/$size/apps"
  cp "$d/rerun.png" "$prefix/share/icons/hicolor/$size/apps/rerun.png"
done
refresh

echo "Rerun installed: $prefix/bin/rerun ($("$prefix/bin/rerun" --version 2>/dev/null || echo 'cannot run here'))"
if command -v ldconfig >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q libwebkit2gtk-4.1; then
  echo "The window needs WebKitGTK 4.1: sudo apt install libwebkit2gtk-4.1-0 libgtk-3-0 (or your system's packages)."
fi
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "Add $prefix/bin to your PATH to run \`rerun\` from a terminal." ;; esac
