#!/bin/bash
# The Debian packages: built from this tree with dpkg-buildpackage (the
# suite is not run again: DEB_BUILD_OPTIONS=nocheck; no debug symbol
# packages: noddebs), checked by lintian
# with no error, installed on this machine, and then: crucible --version,
# a confined crucible run whose PID 1 is the broker installed beside it,
# and the example out-of-tree backend built against the installed -dev
# package and audited.  The packages are removed again at the end.  Run
# as root by test.sh (TAP); CRUCIBLE_SRCDIR is the tree.
set -uo pipefail
src=${CRUCIBLE_SRCDIR:?}
N=8
echo "1..$N"
n=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
skip_rest() {
  while [ "$n" -lt "$N" ]; do n=$((n + 1)); echo "ok $n - packages # SKIP $1"; done
  exit 0
}
[ "$(id -u)" -eq 0 ] || skip_rest "not root: the packages cannot be installed"
for t in dpkg-buildpackage dh lintian; do
  command -v "$t" >/dev/null || skip_rest "$t is not installed (debhelper, lintian, dpkg-dev)"
done

work=$(mktemp -d /tmp/crucible-deb.XXXXXX)
installed=
cleanup() {
  [ -n "$installed" ] && dpkg -r crucible libcrucible-sandbox-dev libcrucible-sandbox1 >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
tree=$work/crucible-0.1.0
mkdir -p "$tree"
# The tree as it is (uncommitted changes too), without build directories.
(cd "$src" && { git ls-files -z --cached --others --exclude-standard 2>/dev/null ||
  find . -path ./build\* -prune -o -type f -print0; }) |
  (cd "$src" && xargs -0 cp --parents -t "$tree" 2>/dev/null)

t0=$(date +%s)
(cd "$tree" && DEB_BUILD_OPTIONS="nocheck noddebs" dpkg-buildpackage -us -uc -b) \
  >"$work/build.log" 2>&1
rc=$?
ok $rc "dpkg-buildpackage -us -uc -b builds the packages ($(( $(date +%s) - t0 )) s)"
[ $rc -eq 0 ] || { tail -n 30 "$work/build.log" | sed 's/^/# /'; skip_rest "the packages did not build"; }
debs=$(ls "$work"/*.deb 2>/dev/null | sort | tr '\n' ' ')
names=$(for d in $debs; do dpkg-deb -f "$d" Package; done | sort | tr '\n' ' ')
# The library package is named after the SONAME its library carries.
lib=$(dpkg-deb -c "$work"/libcrucible-sandbox1_*.deb 2>/dev/null |
  grep -o 'usr/lib/.*/libcrucible-sandbox\.so\.[0-9.]*$' | head -n 1)
mkdir -p "$work/lib"
dpkg-deb -x "$work"/libcrucible-sandbox1_*.deb "$work/lib" 2>/dev/null
soname=$(objdump -p "$work/lib/$lib" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
[ "$names" = "crucible libcrucible-sandbox-dev libcrucible-sandbox1 " ] &&
  [ "$soname" = libcrucible-sandbox.so.1 ]
ok $? "three packages: crucible, libcrucible-sandbox1 (its library's SONAME: $soname), libcrucible-sandbox-dev ($names)"
lintian --fail-on error "$work"/*.changes >"$work/lintian.log" 2>&1
rc=$?
ok $rc "lintian finds no error ($(grep -c '^W:' "$work/lintian.log") warnings)"
[ $rc -eq 0 ] || sed 's/^/# /' "$work/lintian.log" | head -n 20

dpkg -i $debs >"$work/install.log" 2>&1
rc=$?
installed=yes
ok $rc "the packages install"
[ $rc -eq 0 ] || sed 's/^/# /' "$work/install.log" | tail -n 10

out=$(/usr/bin/crucible --version 2>&1)
[[ "$out" =~ ^crucible\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
ok $? "the installed crucible --version: $out"
[ -x /usr/bin/crucible-sandbox-broker ]
ok $? "the broker is installed beside crucible"

home=$work/home ws=$work/ws
mkdir -p "$home/.crucible" "$ws"
echo '{"sandbox": {"enabled": true}}' >"$home/.crucible/config.json"
out=$(cd "$ws" && env -i PATH=/usr/bin:/bin HOME="$home" LANG=C.UTF-8 \
  /usr/bin/crucible run -- 'cat /proc/1/comm; echo ran confined' 2>&1)
[[ "$out" == $'broker\nran confined' ]]
ok $? "the installed crucible runs a command confined, its broker as PID 1"
[ $? -eq 0 ] || echo "# $out"

cp -r "$src/doc/examples/example-backend" "$work/example"
make -C "$work/example" >"$work/example.log" 2>&1 &&
  "$work/example/example-backend" "$ws" >>"$work/example.log" 2>&1
rc=$?
ok $rc "the example backend builds against the installed -dev package and passes its audit"
[ $rc -eq 0 ] || sed 's/^/# /' "$work/example.log" | tail -n 10
