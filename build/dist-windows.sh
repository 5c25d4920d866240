#!/usr/bin/env bash
# The Windows installer of Rerun Desktop into build/dist/, from rerun.exe
# cross-built on Linux (make dist-windows builds it: Wails needs no cgo on
# Windows):
#   rerun-setup-VERSION-amd64.exe   (NSIS, build/windows/rerun.nsi)
# rerun.exe gets its icon, version information and manifest (per-monitor DPI,
# common controls 6) from go-winres, a Go tool in build/tools/winres; the
# installer carries the WebView2 bootstrapper of the Wails module, as Wails'
# own installers do. The version is the binary's own: the -X main.version the
# Go build recorded in it.
#
#   build/dist-windows.sh [rerun.exe]       (make dist-windows)
set -euo pipefail
cd "$(dirname "$0")/.."
exe=${1:-build/bin/windows/rerun.exe}
root=$(pwd)
out=$root/build/dist
stage=$out/stage-windows
case "$exe" in /*) ;; *) exe=$root/$exe ;; esac
fail() { echo "dist-windows: $*" >&2; exit 1; }

[ -f "$exe" ] || fail "$exe is missing: build it first (make dist-windows)"
command -v makensis >/dev/null || fail "makensis is missing: install Debian's nsis package (make setup does)"

# `go version -m` prints the build settings, -ldflags among them.
flags=$(go version -m "$exe" | sed -n 's/^[[:space:]]*build[[:space:]]*-ldflags=//p')
version=$(sed -n 's/.*-X main\.version=\([^ "]*\).*/\1/p' <<<"$flags")
commit=$(sed -n 's/.*-X main\.commit=\([^ "]*\).*/\1/p' <<<"$flags")
[ -n "$version" ] || fail "cannot read -X main.version from $exe's build settings: build it with make dist-windows"
# Windows wants four numbers: v1.2.3-4-gabc → 1.2.3.4; no tag yet → 0.0.0.0.
v=${version#v}
if [[ "$v" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)(-([0-9]+)-g)? ]]; then
  version4="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.${BASH_REMATCH[3]}.${BASH_REMATCH[5]:-0}"
else
  version4=0.0.0.0
fi

rm -rf "$stage" && mkdir -p "$stage"
go run ./build/icons -in app/icon.png -ico "$stage/rerun.ico"
wails=$(go list -m -f '{{.Dir}}' github.com/wailsapp/wails/v2)
cp "$wails/internal/webview2runtime/MicrosoftEdgeWebview2Setup.exe" "$stage/"
cp "$exe" "$stage/rerun.exe"
chmod u+w "$stage"/*

cat >"$stage/winres.json" <<JSON
{
  "RT_GROUP_ICON": {"APP": {"0000": "rerun.ico"}},
  "RT_MANIFEST": {"#1": {"0409": {
    "identity": {"name": "Rerun.Desktop", "version": "$version4"},
    "description": "Rerun",
    "minimum-os": "win10",
    "execution-level": "as invoker",
    "dpi-awareness": "per monitor v2",
    "use-common-controls-v6": true
  }}},
  "RT_VERSION": {"#1": {"0000": {
    "fixed": {"file_version": "$version4", "product_version": "$version4"},
    "info": {"0409": {
      "CompanyName": "Rerun",
      "FileDescription": "Rerun",
      "FileVersion": "$version",
      "InternalName": "rerun",
      "LegalCopyright": "Rerun",
      "OriginalFilename": "rerun.exe",
      "ProductName": "Rerun",
      "ProductVersion": "$version",
      "Comments": "commit $commit"
    }}
  }}}
}
JSON
(cd build/tools/winres && GOWORK=off go tool go-winres patch --in "$stage/winres.json" --no-backup "$stage/rerun.exe")

mkdir -p "$out"
rm -f "$out"/rerun-setup-*-amd64.exe
setup="$out/rerun-setup-$version-amd64.exe"
makensis -WX -V2 -DVERSION="$version" -DVERSION4="$version4" -DSTAGE="$stage" -DOUTFILE="$setup" build/windows/rerun.nsi
cp "$stage/rerun.exe" "$out/rerun-$version-windows-amd64.exe"
rm -rf "$stage"
echo "dist-windows: $setup"
