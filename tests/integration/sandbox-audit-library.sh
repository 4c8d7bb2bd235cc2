#!/bin/bash
# libcrucible-sandbox as a backend outside this tree sees it: installed
# (make check installs it into the trusted prefix) with self-contained
# headers and crucible-sandbox.pc; the example backend in
# doc/examples/example-backend builds with `pkg-config --cflags --libs
# crucible-sandbox`, passes the suite over a directory it owns and runs a
# command; three test backends built the same way are caught: overclaimed
# and withheld by the feature's name, unreached for their own reasons.
# crucible itself stays one executable that does not load the library.

. "$(dirname "$0")/lib.sh"

plan 22

PREFIX=$(dirname "$CRUCIBLE_BIN_DIR")
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
export LD_LIBRARY_PATH="$PREFIX/lib"
SRC=${CRUCIBLE_SRCDIR:-}
# Built plain, like anything a backend's author builds.
unset ASAN_OPTIONS UBSAN_OPTIONS
CC=${CC:-cc}
why=
if ! command -v "$CC" >/dev/null 2>&1; then
  why="no C compiler ($CC)"
elif ! command -v pkg-config >/dev/null 2>&1; then
  why="pkg-config is not installed"
elif ! pkg-config --exists crucible-sandbox; then
  why="crucible-sandbox.pc is not installed under $PREFIX"
elif [ -z "$SRC" ] || [ ! -f "$SRC/doc/examples/example-backend/example-backend.c" ]; then
  why="CRUCIBLE_SRCDIR does not name the source tree"
fi
if [ -n "$why" ]; then
  for i in $(seq 1 22); do skip "the installed library, test $i" "$why"; done
  exit 0
fi

# --- what is installed ---------------------------------------------------------
flags=$(pkg-config --cflags --libs crucible-sandbox)
# shellcheck disable=SC2086 # word splitting trims pkg-config's spaces
is "$(echo $flags)" "-I$PREFIX/include -L$PREFIX/lib -lcrucible-sandbox" \
  "pkg-config names the installed headers and library"
! grep -rnE '#include +"|lib/error\.h|sandbox/backend\.h' "$PREFIX/include/crucible" >/dev/null
ok $? "the installed headers include only each other and the system's"
for h in error sandbox conformance; do
  printf '#include <crucible/%s.h>\nint main (void) { return 0; }\n' "$h" >"$TEST_TMP/h.c"
  "$CC" -std=c11 -Wall -Wextra -Werror -c -o "$TEST_TMP/h.o" "$TEST_TMP/h.c" \
    $(pkg-config --cflags crucible-sandbox) 2>"$TEST_TMP/cc.err"
  ok $? "crucible/$h.h compiles on its own"
  [ -s "$TEST_TMP/cc.err" ] && diag "$(cat "$TEST_TMP/cc.err")"
done
so="$PREFIX/lib/libcrucible-sandbox.so"
exported=$(nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }')
is "$(grep -cvE '^(sandbox_|conformance_|cr_error_)' <<<"$exported")" 0 \
  "the library exports only sandbox_, conformance_ and cr_error_"
like "$exported" $'(^|\n)conformance_run\n' "conformance_run is exported"
is "$(head -c 4 "$CRUCIBLE" | od -An -c | tr -d ' ')" '177ELF' \
  "crucible is an executable, not a libtool wrapper"
! ldd "$CRUCIBLE" | grep -q crucible-sandbox
ok $? "crucible does not load libcrucible-sandbox"

# --- the example backend ---------------------------------------------------------
cp -r "$SRC/doc/examples/example-backend" "$TEST_TMP/example"
chmod -R u+w "$TEST_TMP/example" # a distcheck source tree is read-only
make -s -C "$TEST_TMP/example" CC="$CC" CFLAGS="-O2 -Wall -Wextra -Werror" \
  >"$TEST_TMP/make.log" 2>&1
ok $? "the example builds with its Makefile and pkg-config"
[ -x "$TEST_TMP/example/example-backend" ] || diag "$(cat "$TEST_TMP/make.log")"
EX="$TEST_TMP/example/example-backend"
OWN=$(mktemp -d "$TEST_TMP/own.XXXXXX")

out=$("$EX" "$OWN" 2>&1) && rc=0 || rc=$?
is "$rc" 0 "example: the audit over a directory it owns exits 0"
like "$out" $'^sandbox audit of example-rlimit\n' "example: its report names it"
like "$out" $'\n  cpu_limit             enforced     accepted\n' \
  "example: a claimed ceiling is accepted"
like "$out" $'\n  filesystem            unsupported  refused\n' \
  "example: a disclaimed feature is refused by name"
like "$out" $'\nfaults: none$' "example: no fault, nothing unreached"

out=$("$EX" "$OWN" -- 'echo from the example; ulimit -n; exit 7' 2>&1) && rc=0 || rc=$?
is "$rc|$out" "7|from the example
1024" "example: runs a command with its ceiling, and its status"

out=$("$EX" "$TEST_TMP/missing" 2>&1) && rc=0 || rc=$?
is "$rc" 0 "example: failing for its own reasons is no fault"
like "$out" $'\nunreached, not faults \\(the backend failed for its own reasons\\):\n  cpu_limit: the example backend needs a workspace it owns: No such file or directory\n' \
  "example: a workspace it cannot use leaves its claims unreached"

# --- the lying backends -----------------------------------------------------------
"$CC" -std=c11 -Wall -Wextra -Werror -o "$TEST_TMP/audit-liar" \
  "$SRC/tests/integration/audit-liar.c" $flags 2>"$TEST_TMP/cc.err"
ok $? "the lying backends build against the installed library"
out=$("$TEST_TMP/audit-liar" overclaim "$OWN" 2>&1) && rc=0 || rc=$?
is "$rc|$(sed -n '/^faults:/,$p' <<<"$out")" "1|faults:
  overclaimed  network_deny: claimed unsupported, but a policy requiring it was accepted" \
  "overclaim: caught, with the feature named"
out=$("$TEST_TMP/audit-liar" withhold "$OWN" 2>&1) && rc=0 || rc=$?
is "$rc|$(sed -n '/^faults:/,$p' <<<"$out")" "1|faults:
  withheld     cpu_limit: claimed enforced, but a policy requiring it was refused: the policy requires cpu_limit, which the liar backend does not enforce" \
  "withhold: caught, with the feature named"
out=$("$TEST_TMP/audit-liar" unreached "$OWN" 2>&1) && rc=0 || rc=$?
is "$rc|$(sed -n '/^faults:/,$p' <<<"$out")" "0|faults: none

unreached, not faults (the backend failed for its own reasons):
  filesystem: the liar's engine is not answering
  cpu_limit: the liar's engine is not answering
  command_time_limit: the liar's engine is not answering" \
  "unreached: no fault, each claim named unreached"
