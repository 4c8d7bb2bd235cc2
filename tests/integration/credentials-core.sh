#!/bin/bash
# A core of crucible forced while it holds a credential holds no value
# (issue 14): in a --enable-fault-injection build, the test-only variable
# CRUCIBLE_FAULT_CREDENTIALS_ABORT makes crucible abort once it has read
# the command's credentials.  The control is the same crash with none
# configured, which must leave a core holding a marker from crucible's own
# environment, so the search is shown to find what a core holds.  As root
# and as uid 65534.  The core pattern is the machine's own and is left as
# it is (a global sysctl is not a test's to change).
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"

ids=(root)
can_drop_privileges && ids+=(nobody)
PER=3
plan $((2 * PER))

MARK=Mk7Yp2Rt9Wq4Zx1Cv # in crucible's environment: any core of it holds it
VAL=Fd8Sg3Hj6Kl0Qa5We  # the credential file's value

skip_all() {
  for ((i = 0; i < 2 * PER; i++)); do skip "a core of crucible holds no credential" "$1" "${2:-}"; done
  exit 0
}
pattern=$(cat /proc/sys/kernel/core_pattern)
case $pattern in
  '|'* | /*) skip_all "kernel.core_pattern ($pattern) does not write cores into the crashing process's directory" ;;
esac
ulimit -c unlimited 2>/dev/null || skip_all "the core size limit cannot be raised here"
[ "${#ids[@]}" = 2 ] || skip "as uid 65534" "needs root and setpriv" unprivileged
[ "${#ids[@]}" = 2 ] || for ((i = 1; i < PER; i++)); do skip "as uid 65534" "needs root and setpriv" unprivileged; done

# crash WHO CONFIG: crucible run as WHO in a fresh workspace with CONFIG,
# told to abort once the credentials are read; $rc, and $cores, the core
# files it left.
crash() {
  local as=()
  [ "$1" = nobody ] && as=(as_nobody)
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  W=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  mkdir -p "$H/.crucible"
  printf '%s\n' "$VAL" >"$H/tok"
  chmod 600 "$H/tok"
  printf '%s\n' "${2//@TOK@/$H/tok}" >"$H/.crucible/config.json"
  [ "$1" = nobody ] && chown -R 65534:65534 "$H" "$W"
  chmod 755 "$H" "$W"
  (cd "$W" && "${as[@]}" env -i PATH=/usr/bin:/bin HOME="$H" MARKER="$MARK" \
    CRUCIBLE_FAULT_CREDENTIALS_ABORT=1 "$CRUCIBLE" run -- true >/dev/null 2>&1) && rc=0 || rc=$?
  cores=$(find "$W" -maxdepth 1 -name 'core*' -type f)
}

for who in "${ids[@]}"; do
  crash "$who" '{}'
  # 0: the command ran, so this build has no fault points; anything else
  # but the abort (127: no crucible at all) is a failure, not a skip.
  if [ "$rc" = 0 ]; then
    skip_all "this build has no fault points (configure --enable-fault-injection): crucible ran the command instead of aborting"
  elif [ "$rc" != 134 ]; then
    for ((i = 0; i < 2 * PER; i++)); do
      ok 1 "a core of crucible holds no credential: crucible exited $rc, neither 134 (the forced abort) nor 0 (a build without fault points)"
    done
    exit 0
  fi
  ok "$([ -n "$cores" ] && grep -q -a -F "$MARK" $cores && echo 0 || echo 1)" \
    "control ($who): with no credential, crucible's forced crash leaves a core holding what its memory held"
  crash "$who" '{"sandbox":{"credentials":{"NPM_TOKEN":{"file":"@TOK@"}}}}'
  ok "$([ "$rc" = 134 ] && echo 0 || echo 1)" \
    "($who): crucible crashed with a credential held"
  found=1
  [ -n "$cores" ] && grep -q -a -F "$VAL" $cores && found=0
  ok "$([ "$found" = 1 ] && echo 0 || echo 1)" \
    "($who): no core of it holds the value ($([ -n "$cores" ] && echo "a core was written" || echo "no core was written: crucible is not dumpable"))"
done
