# Helpers for the publication tests: crucible run under the bwrap backend,
# as root and as an unprivileged identity, each in a workspace of its own.
# Sourced after tests/integration/lib.sh.

# Whether the enforcing backend can run here; sets PUB_REASON.
pub_usable() {
  local report
  report=$(HOME="$PUB_HOME" "$CRUCIBLE" sandbox inspect --json 2>&1)
  if [[ "$report" == *'"status":"ready"'* ]]; then
    return 0
  fi
  PUB_REASON="the bwrap backend is not ready here: ${report:0:200}"
  return 1
}

# pub_setup: a HOME with confinement enabled, readable by every identity.
pub_setup() {
  PUB_HOME="$TEST_TMP/home"
  mkdir -p "$PUB_HOME/.crucible"
  printf '{"sandbox":{"enabled":true}}\n' >"$PUB_HOME/.crucible/config.json"
  chmod -R a+rX "$PUB_HOME"
}

# The identities to run as: root, and crucibletest (or 65534) when the
# suite runs as root and one can be taken.
pub_identities() {
  if [ "$(id -u)" -ne 0 ]; then
    echo self
    return
  fi
  echo root
  if command -v setpriv >/dev/null 2>&1; then
    if id crucibletest >/dev/null 2>&1; then
      echo crucibletest
    else
      echo nobody
    fi
  fi
}

# pub_become WHO: a fresh workspace WS owned by WHO, and PUB_AS, the
# prefix that runs a program as WHO with its own HOME.
pub_become() {
  PUB_WHO=$1
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  chmod 755 "$WS"
  PUB_AS=(env HOME="$PUB_HOME")
  case $1 in
    crucibletest | nobody)
      local uid gid
      uid=$(id -u "$1" 2>/dev/null || echo 65534)
      gid=$(id -g "$1" 2>/dev/null || echo 65534)
      PUB_UHOME=$(mktemp -d "$TEST_TMP/uhome.XXXXXX")
      cp -r "$PUB_HOME/.crucible" "$PUB_UHOME/"
      chown -R "$uid:$gid" "$WS" "$PUB_UHOME"
      chmod 755 "$TEST_TMP"
      PUB_AS=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --
        env HOME="$PUB_UHOME")
      ;;
  esac
}

# pub_owner: make everything in WS belong to the identity again (after
# the test, as root, put files there).
pub_owner() {
  if [ "$PUB_WHO" = crucibletest ] || [ "$PUB_WHO" = nobody ]; then
    chown -R "$(stat -c %u:%g "$WS")" "$WS"
  fi
}

# prun ARGS...: crucible ARGS in WS as the identity; $out, $err, $rc.
prun() {
  out=$(cd "$WS" && "${PUB_AS[@]}" "$CRUCIBLE" "$@" 2>"$TEST_TMP/stderr") \
    && rc=0 || rc=$?
  err=$(cat "$TEST_TMP/stderr")
}

# tree DIR: a listing of DIR that two equal trees share (type, mode, size,
# link target, content digest), directory mtimes aside.
tree() {
  (cd "$1" && find . -mindepth 1 -printf '%p %y %m %s %l\n' | LC_ALL=C sort \
    && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2)
}

# wait_started: wait (up to 20 s) until a confined command runs in WS: its
# bwrap, started right after the baseline, names WS in its arguments.
wait_started() {
  local tries=400
  while [ "$tries" -gt 0 ]; do
    pgrep -f -- "--dir $WS" >/dev/null 2>&1 && return 0
    sleep 0.05
    tries=$((tries - 1))
  done
  return 1
}

# pub_begin PER_ID WHAT: plan PER_ID tests for each identity, set up the
# HOME, and when the backend cannot run here skip them all (saying WHAT
# and why) and end the script.  Sets ids.
pub_begin() {
  local per=$1 what=$2 who i
  ids=$(pub_identities)
  plan $(($(wc -w <<<"$ids") * per))
  pub_setup
  pub_usable && return 0
  for who in $ids; do
    for i in $(seq "$per"); do
      skip "$what as $who ($i)" "$PUB_REASON" bwrap
    done
  done
  exit 0
}

# pub_payload WHO: a program at $TEST_TMP/payload that, if anything ever
# runs it, makes $RAN ($TEST_TMP/ran.WHO, removed first) exist: what a
# planted hook or a program-naming git key would run on the host.
pub_payload() {
  RAN="$TEST_TMP/ran.$1"
  rm -f "$RAN"
  printf '#!/bin/sh\ntouch %s\n' "$RAN" >"$TEST_TMP/payload"
  chmod 755 "$TEST_TMP/payload"
}
