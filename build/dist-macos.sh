#!/usr/bin/env bash
# Rerun.app for macOS into build/dist/, from a darwin binary:
#   Rerun.app/Contents/{Info.plist, PkgInfo, MacOS/rerun, Resources/rerun.icns}
#   rerun-VERSION-macos.app.tar.gz
# On Linux (make dist-macos) the binaries are the cross-built headless ones
# (`rerun serve`; the window needs cgo and Apple's SDK), so the bundle is the
# skeleton a Mac build fills: build/macos/build-on-mac.sh builds the window
# binary for arm64 and amd64, joins them with lipo, runs this script on the
# universal binary, signs the bundle and makes the .dmg.
#
#   build/dist-macos.sh VERSION BINARY        (make dist-macos)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: build/dist-macos.sh VERSION BINARY}
bin=${2:?usage: build/dist-macos.sh VERSION BINARY}
root=$(pwd)
out=$root/build/dist
app=$out/Rerun.app
fail() { echo "dist-macos: $*" >&2; exit 1; }
[ -f "$bin" ] || fail "$bin is missing"

# CFBundleShortVersionString wants up to three numbers: v1.2.3-4-gabc → 1.2.3.
v=${version#v}
if [[ "$v" =~ ^([0-9]+\.[0-9]+\.[0-9]+) ]]; then short=${BASH_REMATCH[1]}; else short=0.0.0; fi

rm -rf "$app"
mkdir -p "$app/Contents/MacOS" "$app/Contents/Resources"
cp "$bin" "$app/Contents/MacOS/rerun"
chmod 755 "$app/Contents/MacOS/rerun"
go run ./build/icons -in app/icon.png -icns "$app/Contents/Resources/rerun.icns"
sed -e "s/@VERSION@/$version/g" -e "s/@SHORT@/$short/g" build/macos/Info.plist >"$app/Contents/Info.plist"
printf 'APPL????' >"$app/Contents/PkgInfo"

rm -f "$out"/rerun-*-macos.app.tar.gz
tar -C "$out" --owner=0 --group=0 --numeric-owner -czf "$out/rerun-$version-macos.app.tar.gz" Rerun.app
echo "dist-macos: $app"
echo "dist-macos: $out/rerun-$version-macos.app.tar.gz"
