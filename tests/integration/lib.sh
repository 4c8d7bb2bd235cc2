# TAP helpers for crucible's integration tests.  Source it, call plan N,
# then ok/is/like/skip; every test can fail, and a skip says why.
#
# CRUCIBLE_BIN_DIR   where the installed crucible binaries are
# CRUCIBLE_HELPER_DIR where the test helpers (maxrss, broker_peer) are
# CRUCIBLE_TEST_REQUIRE comma-separated requirements (bwrap, unprivileged,
#                       tmux) whose absence fails instead of skipping

set -u
: "${CRUCIBLE_BIN_DIR:?CRUCIBLE_BIN_DIR must name the installed binaries}"
CRUCIBLE="$CRUCIBLE_BIN_DIR/crucible"
HELPERS="${CRUCIBLE_HELPER_DIR:-}"
tap_n=0

# A private directory for this test, removed at exit.
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/crucible-test.XXXXXX")
chmod 755 "$TEST_TMP"
trap 'rm -rf "$TEST_TMP"' EXIT

plan() { echo "1..$1"; }

# Print text as TAP diagnostics.
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

# ok STATUS DESCRIPTION: pass when STATUS is 0.
ok() {
  tap_n=$((tap_n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $tap_n - $2"
  else
    echo "not ok $tap_n - $2"
  fi
}

# is GOT EXPECTED DESCRIPTION: exact comparison, with a diff on failure.
is() {
  tap_n=$((tap_n + 1))
  if [ "$1" == "$2" ]; then
    echo "ok $tap_n - $3"
  else
    echo "not ok $tap_n - $3"
    diag "expected:" "$2" "got:" "$1"
  fi
}

# like GOT PATTERN DESCRIPTION: bash regular expression match.
like() {
  tap_n=$((tap_n + 1))
  if [[ "$1" =~ $2 ]]; then
    echo "ok $tap_n - $3"
  else
    echo "not ok $tap_n - $3"
    diag "expected to match: $2" "got:" "$1"
  fi
}

# skip DESCRIPTION REASON [REQUIREMENT]: a skip, or a failure when the
# requirement is listed in CRUCIBLE_TEST_REQUIRE.
skip() {
  tap_n=$((tap_n + 1))
  if [ -n "${3:-}" ] && [[ ",${CRUCIBLE_TEST_REQUIRE:-}," == *",$3,"* ]]; then
    echo "not ok $tap_n - $1 # required ($3) but: $2"
  else
    echo "ok $tap_n - $1 # SKIP $2"
  fi
}

# crun ARGS...: run crucible, capturing stdout in $out, stderr in $err and
# the exit status in $rc.
crun() {
  out=$("$CRUCIBLE" "$@" 2>"$TEST_TMP/stderr") && rc=0 || rc=$?
  err=$(cat "$TEST_TMP/stderr")
}

# Whether an unprivileged identity can be taken (the suite runs as root).
can_drop_privileges() {
  [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1
}

# as_nobody CMD...: run CMD as uid/gid 65534.
as_nobody() {
  setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

# wait_gone PID SECONDS: whether PID is gone within SECONDS.
wait_gone() {
  local pid=$1 tries=$(($2 * 20))
  while [ "$tries" -gt 0 ]; do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
    tries=$((tries - 1))
  done
  return 1
}

# without_bwrap CMD...: run CMD (as sh -c words) where no trusted bwrap can
# be found: a private mount namespace covers every bwrap with /dev/null.
# Needs root; returns 2 without running anything otherwise.
without_bwrap() {
  [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null || return 2
  unshare -m --propagation private sh -c \
    'for b in /usr/bin/bwrap /bin/bwrap; do [ -e "$b" ] && mount --bind /dev/null "$b"; done; exec env -i PATH=/usr/bin:/bin HOME="$HOME" "$@"' \
    sh "$@"
}
NO_BWRAP_REFUSAL='confinement is enabled (sandbox.enabled), but the sandbox backend cannot be used here: no trusted bwrap was found: /usr/bin/bwrap: not a regular file; commands are never run unconfined while it is enabled'

# A fresh workspace and HOME, so no configuration of the machine leaks in.
new_workspace() {
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  export HOME="$TEST_TMP/home"
  mkdir -p "$HOME"
  cd "$WS" || exit 1
}

# fake_bwrap_standins N MODE...: install tests/helpers/fake_bwrap,
# root-owned, as $STANDIN/MODE/bwrap in a root-owned directory per mode
# (with its "mode" file), for a test to put first on PATH; SANDBOX_RUN
# names the helper.  Where that cannot be done (not root, helpers not
# built, no usable bwrap), skip the script's N checks, saying why, and end
# it.
fake_bwrap_standins() {
  local n=$1 why= i mode fake="$HELPERS/fake_bwrap" probe
  shift
  SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
  if [ "$(id -u)" -ne 0 ]; then
    why="needs root to install a root-owned stand-in bwrap"
  elif [ ! -x "$fake" ] || [ ! -x "$SANDBOX_RUN" ]; then
    why="no $fake or $SANDBOX_RUN (make check builds and installs them)"
  elif ! probe=$(PATH=/usr/bin:/bin "$SANDBOX_RUN" --probe 2>&1); then
    why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  fi
  if [ -n "$why" ]; then
    for ((i = 0; i < n; i++)); do skip "stand-in bwrap" "$why" bwrap; done
    exit 0
  fi
  STANDIN=$(mktemp -d /opt/crucible-fake-bwrap.XXXXXX)
  trap 'rm -rf "$STANDIN" "$TEST_TMP"' EXIT
  chmod 755 "$STANDIN"
  for mode; do
    mkdir -m 755 "$STANDIN/$mode"
    install -m 755 -o root -g root "$fake" "$STANDIN/$mode/bwrap"
    echo "$mode" >"$STANDIN/$mode/mode"
  done
}

# peer_checks: run the Python program on standard input (it imports
# tests/integration/peer.py) and turn its "0 WHAT" / "1 WHAT" lines into TAP,
# passing "# ..." lines through; a program that dies says so.
peer_checks() {
  local line
  while IFS= read -r line; do
    case $line in
      '# '*) echo "$line" ;;
      [01]' '*) ok "${line%% *}" "${line#* }" ;;
      'S '*) line=${line#S }; skip "${line%% # *}" "${line#* # }" ;;
      'peer exit 0') ;;
      'peer exit '*) ok 1 "the checks ran to their end ($line)" ;;
      *) diag "$line" ;;
    esac
  done < <(PYTHONPATH="$CRUCIBLE_SRCDIR/tests/integration" TEST_TMP="$TEST_TMP" \
    python3 -u - 2>&1; echo "peer exit $?")
}

# tap_part FILE CMD...: run CMD in a background subshell whose TAP results
# are numbered from 1 into FILE, for independent checks that wait on
# different things (engines, timers) to run at the same time; its process
# ID is in TAP_PART_PID.  tap_join prints the parts, in the order they were
# started, renumbered to follow the script's own results, so that the plan
# and the order of the results are what they would be run one after the
# other.  A part that ends with a nonzero status (a failed `exit 1`, an
# unset variable) ends the script with it, as it would have run alone.
TAP_PARTS=()
tap_part() {
  local file=$1
  shift
  (
    trap - EXIT INT TERM
    tap_n=0
    "$@"
  ) >"$file" 2>&1 </dev/null &
  TAP_PART_PID=$!
  TAP_PARTS+=("$TAP_PART_PID:$file")
}

# tap_join: wait for every part tap_part started, then print each.
tap_join() {
  local p pid file line st worst=0
  for p in "${TAP_PARTS[@]}"; do
    pid=${p%%:*} file=${p#*:}
    wait "$pid"
    st=$?
    [ "$st" -eq 0 ] || worst=$st
    while IFS= read -r line || [ -n "$line" ]; do
      if [[ $line =~ ^(not )?ok\ [0-9]+(.*)$ ]]; then
        tap_n=$((tap_n + 1))
        line="${BASH_REMATCH[1]}ok $tap_n${BASH_REMATCH[2]}"
      fi
      printf '%s\n' "$line"
    done <"$file"
  done
  TAP_PARTS=()
  [ "$worst" -eq 0 ] || exit "$worst"
}

# ahead_sandbox DIR KIND [PREV]: the sandbox ID of the newest sandbox
# prepared ahead as KIND ("kept", "approval") that the journals in DIR
# record, once it is one other than PREV; empty after 10 s.
ahead_sandbox() {
  local id
  for _ in $(seq 200); do
    id=$(cat "$1"/*.jsonl 2>/dev/null | grep '"fact":"policy"' | grep "\"ahead\":\"$2\"" |
      sed -n 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' | tail -1)
    [ -n "$id" ] && [ "$id" != "${3:-}" ] && { printf '%s' "$id"; return; }
    sleep 0.05
  done
}

# started_sandbox DIR N: the sandbox ID of the Nth command started that
# the journals in DIR record.
started_sandbox() {
  cat "$1"/*.jsonl 2>/dev/null | grep '"fact":"start"' |
    sed -n 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' | sed -n "${2}p"
}
