#!/usr/bin/env bash
# Tests the Linux packages as a user gets them: builds them (make dist), runs
# lintian on the .deb (no errors allowed), installs the .deb with apt-get,
# runs `rerun --version` and the desktop smoke test against /usr/bin/rerun,
# then installs the .tar.gz into a temporary prefix and runs that binary.
# Last, the Windows installer (make dist-windows): NSIS compiled it with
# warnings as errors, it and rerun.exe are Windows GUI programs, and
# rerun.exe's version information names the same version.
# Installing needs root or sudo; the .deb is removed again at the end unless
# it was installed before.
#
#   build/test-dist.sh         (make test-dist)
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
fail() { echo "test-dist: FAIL: $*" >&2; exit 1; }
step() { echo "== test-dist: $* ($(( SECONDS - t0 )) s)"; }
t0=$SECONDS

step "make dist"
rm -rf build/dist # packages of earlier versions would be taken for these
make --no-print-directory dist
debs=(build/dist/rerun_*.deb) tars=(build/dist/rerun-*-linux-*.tar.gz)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "want one .deb in build/dist, found: ${debs[*]}"
[ ${#tars[@]} -eq 1 ] && [ -f "${tars[0]}" ] || fail "want one .tar.gz in build/dist, found: ${tars[*]}"
deb=${debs[0]} tar=${tars[0]}
want=$(build/bin/rerun --version)

step "lintian $deb"
if ! command -v lintian >/dev/null; then
  $sudo apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 lintian >/dev/null
fi
lint=$(lintian --fail-on none "$deb" 2>&1) || true
echo "$lint"
if grep -q '^E:' <<<"$lint"; then fail "lintian reports errors on $deb"; fi

step "apt-get install ./$deb"
had=""
dpkg-query -W -f='${Status}' rerun 2>/dev/null | grep -q "install ok installed" && had=1
cleanup() {
  [ -n "$had" ] || $sudo apt-get remove -y -q -o DPkg::Lock::Timeout=300 rerun >/dev/null 2>&1 || true
  [ -z "${prefix:-}" ] || rm -rf "$prefix"
}
trap cleanup EXIT
$sudo apt-get install -y -q -o DPkg::Lock::Timeout=300 "./$deb" >/dev/null
for f in /usr/bin/rerun /usr/share/applications/rerun.desktop /usr/share/doc/rerun/copyright \
  /usr/share/icons/hicolor/16x16/apps/rerun.png /usr/share/icons/hicolor/512x512/apps/rerun.png; do
  [ -f "$f" ] || fail "the .deb did not install $f"
done
got=$(/usr/bin/rerun --version) || fail "/usr/bin/rerun --version failed"
echo "$got"
[ "$got" = "$want" ] || fail "installed binary says \"$got\", want \"$want\""
case "$got" in *"commit unknown"*|*"built unknown"*) fail "the build did not set commit and date: $got" ;; esac

step "desktop smoke test of /usr/bin/rerun"
build/smoke-desktop.sh /usr/bin/rerun build/dist/installed-smoke.png

step "install.sh from $tar"
prefix=$(mktemp -d)
mkdir "$prefix/src"
tar -C "$prefix/src" -xzf "$tar"
(cd "$prefix" && src/*/install.sh --prefix "$prefix/usr") || fail "install.sh failed"
got=$("$prefix/usr/bin/rerun" --version) || fail "$prefix/usr/bin/rerun --version failed"
[ "$got" = "$want" ] || fail "the tar.gz's binary says \"$got\", want \"$want\""
grep -qx "Exec=$prefix/usr/bin/rerun" "$prefix/usr/share/applications/rerun.desktop" ||
  fail "the installed desktop entry does not run $prefix/usr/bin/rerun"
[ -f "$prefix/usr/share/icons/hicolor/256x256/apps/rerun.png" ] || fail "install.sh did not install the icons"
HOME="$prefix/home" sh -c 'mkdir -p "$HOME" && '"$prefix"'/src/*/install.sh >/dev/null && "$HOME/.local/bin/rerun" --version >/dev/null' ||
  fail "the per-user install into ~/.local failed"
"$prefix"/src/*/install.sh --uninstall --prefix "$prefix/usr" >/dev/null
[ ! -e "$prefix/usr/bin/rerun" ] || fail "install.sh --uninstall left the binary"

step "make dist-windows"
make --no-print-directory dist-windows
setups=(build/dist/rerun-setup-*-amd64.exe) exes=(build/dist/rerun-*-windows-amd64.exe)
[ ${#setups[@]} -eq 1 ] && [ -f "${setups[0]}" ] || fail "want one installer in build/dist, found: ${setups[*]}"
setup=${setups[0]} exe=${exes[0]}
version=$(read -r _ v _ <<<"$want"; echo "$v")
[ "$setup" = "build/dist/rerun-setup-$version-amd64.exe" ] || fail "the installer is $setup, want build/dist/rerun-setup-$version-amd64.exe"
what=$(file -b "$setup")
echo "$setup: $what"
[[ "$what" == "PE32 executable (GUI)"*"Nullsoft Installer"* ]] || fail "$setup is not an NSIS installer: $what"
what=$(file -b "$exe")
echo "$exe: $what"
[[ "$what" == "PE32+ executable (GUI) x86-64"* ]] || fail "$exe is not a 64-bit Windows GUI program: $what"
res=$(mktemp -d)
(cd build/tools/winres && GOWORK=off go tool go-winres extract --dir "$res" "$OLDPWD/$exe") || fail "cannot read the resources of $exe"
grep -q "\"ProductVersion\": \"$version\"" "$res/winres.json" || fail "$exe's version information does not say $version: $(cat "$res/winres.json")"
ls "$res"/*.ico >/dev/null 2>&1 || fail "$exe has no icon"
rm -rf "$res"

step "ok"
