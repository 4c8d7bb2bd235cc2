#!/bin/bash
# Build crucible into ./build and run it with the given arguments:
#   ./build.sh                 the full-screen session in this directory
#   ./build.sh run -- echo hello
# As root it installs the Debian packages it needs; otherwise it prints the
# apt-get line to run.  What configure and make print goes to
# build/build.log, shown only when the build fails.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
. "$top/tools/deps.sh"
deps_ensure "$DEPS_BUILD"
cd "$top"
mkdir -p build
log=$top/build/build.log
if ! {
  { [ -x configure ] || autoreconf -fi; } &&
    cd build &&
    { [ -f Makefile ] || ../configure --disable-tests -q; } &&
    make -j"$(nproc)"
} >"$log" 2>&1; then
  echo "build.sh: the build failed; the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
cd "$top/build"
exec ./crucible "$@"
