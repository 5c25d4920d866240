#!/usr/bin/env bash
# The macOS build, run on a Mac (Xcode command line tools, Go 1.26+, Node 20+):
# the window binary for arm64 and amd64 (cgo: WebKit via Apple's SDK), one
# universal binary (lipo), Rerun.app around it (build/dist-macos.sh), signed
# (ad hoc unless SIGN_IDENTITY names a Developer ID), and Rerun-VERSION.dmg.
# Not run on Linux; .ci/macos.yml is the CI job that runs it.
#
#   build/macos/build-on-mac.sh [VERSION]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(uname -s)" = Darwin ] || { echo "build-on-mac: run this on macOS (on Linux, make dist-macos lays out the bundle only)" >&2; exit 1; }
version=${1:-$(git describe --tags --always --dirty)}
commit=$(git rev-parse --short=12 HEAD)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w -X main.version=$version -X main.commit=$commit -X main.date=$date${UPDATE_KEY:+ -X main.updateKey=$UPDATE_KEY}"

(cd frontend && npm ci --no-audit --no-fund && npm run build)
mkdir -p build/bin/darwin
for arch in arm64 amd64; do
  CGO_ENABLED=1 GOOS=darwin GOARCH=$arch MACOSX_DEPLOYMENT_TARGET=10.15 \
    go build -tags desktop,production -ldflags "$ldflags" -o "build/bin/darwin/rerun-$arch" .
done
lipo -create -output build/bin/darwin/rerun build/bin/darwin/rerun-arm64 build/bin/darwin/rerun-amd64
build/dist-macos.sh "$version" build/bin/darwin/rerun

app=build/dist/Rerun.app
codesign --force --deep --options runtime --timestamp=none --sign "${SIGN_IDENTITY:--}" "$app"
codesign --verify --deep --strict "$app"
dmg=build/dist/Rerun-$version.dmg
rm -f "$dmg"
hdiutil create -volname Rerun -srcfolder "$app" -ov -format UDZO "$dmg"
build/dist/Rerun.app/Contents/MacOS/rerun --version
echo "build-on-mac: $dmg"
