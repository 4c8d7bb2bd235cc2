#!/bin/bash
# Build crucible into ./build and run it with the given arguments:
#   ./build.sh run -- echo hello
# As root it installs the Debian packages it needs; otherwise it prints the
# apt-get line to run.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
. "$top/tools/deps.sh"
deps_ensure "$DEPS_BUILD"
cd "$top"
[ -x configure ] || autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
mkdir -p build
cd build
[ -f Makefile ] || ../configure --disable-tests -q >/dev/null
make -s -j"$(nproc)" >/dev/null
exec ./crucible "$@"
