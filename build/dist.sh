#!/usr/bin/env bash
# Linux packages of Rerun Desktop into build/dist/, from a built binary:
#   rerun_VERSION_ARCH.deb            (nfpm, run as a Go tool from build/tools/nfpm)
#   rerun-VERSION-linux-ARCH.tar.gz   (binary, desktop entry, icons, install.sh)
# The package version is the binary's own (`rerun --version`, set by the
# Makefile's -ldflags), so a package never says another version than its binary.
#
# With SIGNING_KEY (a key file of build/feed keygen) it also writes the
# signed release feed, feed.json and feed.json.sig (build/feed), listing the
# .deb and a Windows installer already in build/dist (make dist-windows first);
# RELEASE_URL is where the packages will be downloaded from, RELEASE_NOTES a
# file with the notes.
#
#   build/dist.sh [BINARY]       (make dist)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin/rerun}
maintainer=${MAINTAINER:-Rerun <maintainers@rerun.build>}
root=$(pwd)
out=$root/build/dist
stage=$out/stage
case "$bin" in /*) ;; *) bin=$root/$bin ;; esac

line=$("$bin" --version) || { echo "dist: $bin --version failed: build it first (make build)" >&2; exit 1; }
# rerun VERSION (commit C, built D)
read -r _ version _ commit _ built <<<"${line//[(),]/}"
[ -n "$version" ] && [ -n "$commit" ] || { echo "dist: cannot read a version from \"$line\"" >&2; exit 1; }

# Debian versions start with a digit and use [0-9A-Za-z.+~]; a dash would
# mean a Debian revision. v1.2.3 → 1.2.3; v1.2.3-4-gabc → 1.2.3+4.gabc;
# a bare commit (no tag yet) → 0.0.0+git<commit>.
debver=${version#v}
debver=$(printf '%s' "$debver" | sed 's/-/+/; s/-/./g; s/[^0-9A-Za-z.+~]/./g')
[[ "$debver" =~ ^[0-9]+\.[0-9] ]] || debver="0.0.0+git$debver"

goarch=$(go env GOARCH)
case "$goarch" in
  amd64|arm64|386) debarch=$goarch ;;
  arm) debarch=armhf ;;
  *) debarch=$goarch ;;
esac

rm -rf "$stage" && mkdir -p "$stage"
go run ./build/icons -in app/icon.png -out "$stage/icons" -name rerun
gzip -9n <build/linux/rerun.1 >"$stage/rerun.1.gz"
# A native package's changelog, as Debian policy (and lintian) want it.
cat >"$stage/changelog" <<CHANGES
rerun ($debver) unstable; urgency=medium

  * Build $version: commit $commit, $built.

 -- $maintainer  $(LC_ALL=C date -u -R)
CHANGES
gzip -9n <"$stage/changelog" >"$stage/changelog.gz"

{
  cat <<YAML
name: rerun
arch: $debarch
platform: linux
version: "$debver"
version_schema: none
section: utils
priority: optional
maintainer: "$maintainer"
vendor: Rerun
homepage: https://github.com/rerun-build/rerun-desktop
license: proprietary
description: |-
  workspace of AI coworkers on this computer
  Rerun Desktop runs a board of AI coworkers that keep working on this
  computer: schedules, triggers and runs, with a local web API and an MCP
  endpoint. The window uses WebKitGTK; agents' browsers use Chromium.
depends:
  - libc6
  - libgtk-3-0
  - libwebkit2gtk-4.1-0
  - libgl1-mesa-dri
recommends:
  - chromium
contents:
  - src: $bin
    dst: /usr/bin/rerun
    file_info: {mode: 0755}
  - src: $root/build/linux/rerun.desktop
    dst: /usr/share/applications/rerun.desktop
    file_info: {mode: 0644}
  - src: $stage/rerun.1.gz
    dst: /usr/share/man/man1/rerun.1.gz
    file_info: {mode: 0644}
  - src: $root/build/linux/copyright
    dst: /usr/share/doc/rerun/copyright
    file_info: {mode: 0644}
  - src: $stage/changelog.gz
    dst: /usr/share/doc/rerun/changelog.gz
    file_info: {mode: 0644}
YAML
  for f in "$stage"/icons/hicolor/*/apps/rerun.png; do
    size=$(basename "$(dirname "$(dirname "$f")")")
    printf '  - src: %s\n    dst: /usr/share/icons/hicolor/%s/apps/rerun.png\n    file_info: {mode: 0644}\n' "$f" "$size"
  done
} >"$stage/nfpm.yaml"

mkdir -p "$out"
rm -f "$out"/rerun_*.deb "$out"/rerun-*-linux-*.tar.gz
deb="$out/rerun_${debver}_${debarch}.deb"
(cd build/tools/nfpm && go tool nfpm package --config "$stage/nfpm.yaml" --packager deb --target "$deb") >/dev/null

name="rerun-$version-linux-$goarch"
tree="$stage/$name"
mkdir -p "$tree"
cp "$bin" "$tree/rerun"
cp build/linux/rerun.desktop build/linux/rerun.1 build/linux/install.sh "$tree/"
cp -r "$stage/icons" "$tree/icons"
chmod 755 "$tree/rerun" "$tree/install.sh"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" "$name"

rm -rf "$stage"
echo "dist: $deb"
echo "dist: $out/$name.tar.gz"

if [ -n "${SIGNING_KEY:-}" ]; then
  packages=("$deb")
  for f in "$out"/rerun-setup-"$version"-*.exe; do [ -f "$f" ] && packages+=("$f"); done
  go run ./build/feed sign -key "$SIGNING_KEY" -version "$version" \
    -base-url "${RELEASE_URL:-https://github.com/rerun-build/rerun-desktop/releases/download/$version}" \
    ${RELEASE_NOTES:+-notes "$RELEASE_NOTES"} -out "$out" "${packages[@]}"
  echo "dist: $out/feed.json (signed: feed.json.sig; each package beside its .sig)"
fi
