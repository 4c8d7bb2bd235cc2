# Helpers for the escape tests: each attempt runs twice, unconfined (the
# positive control, which must succeed, or the test proves nothing) and
# confined through the bwrap backend (which must stop it).  Every test
# runs as root and again as uid 65534, with a workspace that identity
# owns.  Sourced after tests/integration/lib.sh.
#
# SANDBOX_RUN  tests/helpers/sandbox_run, installed beside the broker's
#              directory ($CRUCIBLE_BIN_DIR/helpers/sandbox_run)

SANDBOX_RUN="${SANDBOX_RUN:-$CRUCIBLE_BIN_DIR/helpers/sandbox_run}"
# The controls run the same programs the sandbox sees: the system's, not a
# per-user shim that another identity cannot reach.
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
AS=()      # the identity prefix: empty for root, as_nobody for 65534
WHO=root   # its name in test descriptions

# Whether the confined runs can happen at all here; sets SEC_REASON.
sec_usable() {
  if [ ! -x "$SANDBOX_RUN" ]; then
    SEC_REASON="no $SANDBOX_RUN (make check installs it)"
    return 1
  fi
  local probe
  probe=$("$SANDBOX_RUN" --probe 2>&1) && return 0
  SEC_REASON="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  return 1
}

# The identities to run as: root, and 65534 when it can be taken.
sec_identities() {
  if [ "$(id -u)" -eq 0 ]; then
    echo root
    can_drop_privileges && echo nobody
  else
    echo self
  fi
}

# Take identity $1: AS, WHO, a fresh workspace WS it owns, and OUT, a
# directory outside every root that it can write to.
sec_become() {
  WHO=$1
  case $1 in
    nobody) AS=(as_nobody) ;;
    *) AS=() ;;
  esac
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  OUT=$(mktemp -d "$TEST_TMP/out.XXXXXX")
  echo original >"$WS/tracked"
  mkdir -p "$WS/.git/hooks"
  echo '[core]' >"$WS/.git/config"
  if [ "$1" = nobody ]; then
    chown -R 65534:65534 "$WS" "$OUT"
  fi
  chmod 755 "$WS" "$OUT"
}

# sec_exec CMD...: exec CMD as the identity, so that $! of "(sec_exec ...) &"
# is the command itself and can be killed.
sec_exec() {
  if [ "$WHO" = nobody ]; then
    exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
  fi
  exec "$@"
}

# confined SNIPPET [sandbox_run options...]: run SNIPPET inside, in WS,
# as the identity.  $cout: output; $crc: status; $cerr: the helper's
# stderr.  Extra descriptors and variables of the caller reach the helper.
confined() {
  local snippet=$1
  shift
  cout=$(cd "$WS" && "${AS[@]}" "$SANDBOX_RUN" --timeout 30 "$@" -- \
    "$snippet" 2>"$TEST_TMP/cerr") && crc=0 || crc=$?
  cerr=$(cat "$TEST_TMP/cerr")
}

# unconfined SNIPPET: the same, as a plain sh -c.  $uout, $urc.
unconfined() {
  uout=$(cd "$WS" && "${AS[@]}" /bin/sh -c "$1" 2>&1) && urc=0 || urc=$?
}

# attempt DESCRIPTION SNIPPET [sandbox_run options...]: SNIPPET exits 0
# exactly when the escape worked.  The control must exit 0 unconfined;
# inside, the workload must have run (it prints "ran" first) and SNIPPET
# must fail.
attempt() {
  local name=$1 snippet=$2
  shift 2
  unconfined "$snippet"
  ok "$urc" "control ($WHO): unconfined, $name succeeds"
  confined "echo ran; $snippet" "$@"
  if [ "${cout%%$'\n'*}" = ran ] && [ "$crc" -ne 0 ] && [ "$crc" -ne 125 ]; then
    ok 0 "confined ($WHO): $name is refused"
  else
    ok 1 "confined ($WHO): $name is refused"
    diag "status $crc" "output: $cout" "helper: $cerr"
  fi
}

# attempt_effect DESCRIPTION SNIPPET HOST-CHECK: SNIPPET tries to change
# something on the host, HOST-CHECK (run on the host, after) exits 0 when
# the change is there.  reset (run between) puts things back.
attempt_effect() {
  local name=$1 snippet=$2 check=$3 reset=$4
  unconfined "$snippet"
  sh -c "$check"
  ok $? "control ($WHO): unconfined, $name takes effect"
  sh -c "$reset"
  confined "echo ran; $snippet"
  if [ "${cout%%$'\n'*}" = ran ] && [ "$crc" -ne 125 ] && ! sh -c "$check"; then
    ok 0 "confined ($WHO): $name does not reach the host"
  else
    ok 1 "confined ($WHO): $name does not reach the host"
    diag "status $crc" "output: $cout" "helper: $cerr"
  fi
  sh -c "$reset"
}

# Skip the rest of a plan of n tests, with the bwrap requirement.
sec_skip_all() {
  local n=$1 i
  for ((i = 0; i < n; i++)); do
    skip "escape test" "$SEC_REASON" bwrap
  done
}

# Where the identity 65534 cannot be taken, say so (once per script).
sec_unprivileged_check() {
  if [ "$(id -u)" -eq 0 ] && ! can_drop_privileges; then
    skip "escape tests as an unprivileged user" "setpriv is missing" \
      unprivileged
  elif [ "$(id -u)" -eq 0 ]; then
    ok 0 "escape tests also run as uid 65534"
  else
    skip "escape tests as root" "the suite does not run as root" unprivileged
  fi
}

# sec_claim_row FEATURE: that row of the matrix as the identity sees it.
sec_claim_row() {
  (cd "$WS" && "${AS[@]}" "$SANDBOX_RUN" --claims) \
    | sed -n "s/^$1 *//p"
}

# The pids cgroup hierarchy root can make children in, if any: a cgroup v1
# pids mount here (where the test runs as root, in its root cgroup or
# below), or a v2 one whose subtree hands "pids" down.
sec_pids_cgroup() {
  local mounts own dir
  # mount point and type, and the super options, per mount.
  mounts=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") {
      print $5, $(i + 1), $(i + 3); break } }' /proc/self/mountinfo)
  dir=$(awk '$2 == "cgroup" && $3 ~ /(^|,)pids(,|$)/ {print $1; exit}' <<<"$mounts")
  own=$(awk -F: '$2 ~ /(^|,)pids(,|$)/ {print $3; exit}' /proc/self/cgroup)
  if [ -n "$dir" ] && [ -w "$dir${own%/}" ]; then
    echo "$dir${own%/}"
    return
  fi
  dir=$(awk '$2 == "cgroup2" {print $1; exit}' <<<"$mounts")
  own=$(awk -F: '$1 == 0 {print $3; exit}' /proc/self/cgroup)
  if [ -n "$dir" ] && [ -w "$dir${own%/}" ] \
     && grep -qw pids "$dir${own%/}/cgroup.subtree_control" 2>/dev/null; then
    echo "$dir${own%/}"
  fi
}

# sec_begin N: plan N checks for each identity (and the unprivileged
# check), and when the backend cannot run here skip them all, saying why,
# and end the script.  Sets ids.
sec_begin() {
  ids=$(sec_identities)
  plan $(($(wc -w <<<"$ids") * $1 + 1))
  sec_unprivileged_check
  if ! sec_usable; then
    sec_skip_all $(($(wc -w <<<"$ids") * $1))
    exit 0
  fi
}
