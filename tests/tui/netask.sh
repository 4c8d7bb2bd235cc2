#!/bin/bash
# The network question in the full-screen session (issue 13): a confined
# command's connection to a name its policy does not allow waits while the
# approval panel asks; "this command" lets it through (200), the next
# command is asked again, "refuse" gets the 403 text, two connections to
# the same name make one question, "always" writes the home file's
# workspaces.<ws>.domains and later commands, and a new session, reach the
# name without a question; no answer within 60 s refuses it; a project
# file can neither answer nor pre-allow.  As root and as uid 65534.  TAP.
#
# The session runs inside the inner namespace of the test network
# (tests/integration/netlib.sh): its tmux server is started there through
# net_run and driven from here on its socket.  Controls: the same curl
# unconfined, from the same namespace and identity, reaches other.test.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/netlib.sh"
. "$CRUCIBLE_SRCDIR/tests/integration/session-lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin

PER_IDENTITY=25
SLOW=3
ids=root
can_drop_privileges && ids="root nobody"
n_ids=$(wc -w <<<"$ids")
N=$((n_ids * PER_IDENTITY + SLOW + 3))
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N

trap 'net_teardown; rm -rf "$TEST_TMP"' EXIT
skip_rest() {
  local i
  for ((i = tap_n; i < N; i++)); do skip "$1" "$2" "$3"; done
  exit 0
}
if [ "$(id -u)" -ne 0 ] || ! can_drop_privileges; then
  skip "the network question as root and as uid 65534" \
    "the suite does not run as root with setpriv" unprivileged
else
  ok 0 "the network question is tested as root and as uid 65534"
fi
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  skip_rest "the network question" \
    "bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")" bwrap
fi
net_setup || skip_rest "the test network" "$NET_WHY" network
ok 0 "the test network is built"

TUI_COLS=160
TUI_ROWS=40
CURL="curl -sS --max-time 90 -w '\\\\n%{http_code}\\\\n' http://other.test/hello.txt"
QUESTION="A command wants to reach other.test, which is not allowed"
REFUSAL="crucible refused the connection to other.test: it is not among the domains this command may reach"

# become WHO: AS (the identity prefix), a workspace WS and home H it owns,
# and D, a directory of its own for tmux and the pane's files.
become() {
  WHO=$1
  AS=()
  [ "$WHO" = nobody ] && AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  D=$(mktemp -d "$TEST_TMP/tui.XXXXXX")
  mkdir -p "$H/.crucible" "$D/tmux"
  chmod 700 "$D/tmux"
  [ "$WHO" = nobody ] && chown -R 65534:65534 "$WS" "$H" "$D"
  chmod 755 "$WS" "$H" "$D"
}

# config [SANDBOX-ENABLED]: the home configuration: confinement on (or
# as given), allowed.test only, no approval asked for the calls.
config() {
  printf '{"sandbox":{"enabled":%s,"network":{"domains":["allowed.test"]}},"permissions":{"mode":"fullAccess"}}\n' \
    "${1:-true}" >"$H/.crucible/config.json"
  [ "$WHO" = nobody ] && chown 65534:65534 "$H/.crucible/config.json"
  return 0
}

# The session as the identity, in the test network (tests/tui/lib.sh).
tui_net_session

# got200 / got403 DESCRIPTION: $RESULT holds the origin's text and 200, or
# the 403 text naming other.test and the key, and 403.
got200() { like "$RESULT" "$NET_HELLO"'(\\n)+200' "$1"; }
got403() { like "$RESULT" "$REFUSAL"'.*sandbox\.network\.domains.*\\n403' "$1"; }

# asked LABEL: wait for the question about other.test; true when its
# command's label is LABEL (the panel's second line).
asked() {
  tui_wait "$QUESTION" || return 1
  [ "$(tui_block "$QUESTION" 2 | sed -n 2p)" = "  $1" ] && return 0
  diag "the question is not about $1:" "$(tui_block "$QUESTION" 3)"
  return 1
}

# quit: leave the session with Ctrl+D.
quit() {
  tui_keys C-d
  local i
  for ((i = 0; i < 300; i++)); do
    [ -s "$D/tui-exit" ] && return 0
    sleep 0.05
  done
  return 1
}

# A call to the agent's script: send call ID running CMD, then wait for its result.
call() {
  printf 'send {"type":"bash","id":"%s","command":"%s","description":"%s"}\nuntil "type":"tool_result","id":"%s"\n' \
    "$1" "$2" "$3" "$1"
}

# No answer within 60 s: refused (once, as root: it takes the minute; the
# wait is a constant, PROXY_ASK_WAIT_MS and NETASK_WAIT_MS, with no knob).
# The question left unanswered is the second of one command's two names,
# queued while the first was on screen for 20 s: its 60 s count from when
# it is shown, as the panel says, not from when it was queued.
# It runs beside the two identities' checks (tap_part), in a workspace,
# home, script and tmux of its own, its results printed after theirs.
unanswered_minute() {
  become root
  config
  SCRIPT=$TEST_TMP/script-minute.txt
  C2="curl -sS --max-time 150 -w '\\\\n%{http_code}\\\\n' http://second.test/hello.txt"
  {
    echo 'expect "type":"hello"'
    echo "$HELLO"
    echo 'expect {"type":"prompt","text":"go"}'
    call t1 "$CURL >a.out & sleep 1; $C2 >b.out & wait; cat a.out b.out" "fetch two names"
    echo 'send {"type":"end_turn"}'
  } >"$SCRIPT"
  net_tui_start
  tui_wait "mode on (shift+tab to cycle)" >/dev/null
  tui_keys go Enter
  tui_wait "$QUESTION" >/dev/null
  sleep 20
  tui_keys 3
  tui_wait "A command wants to reach second.test, which is not allowed"
  t0=$SECONDS
  result t1 80
  took=$((SECONDS - t0))
  if [ -n "$RESULT" ] && [ "$took" -ge 55 ] && [ "$took" -le 70 ]; then
    ok 0 "confined (root): unanswered, a question is refused 60 s after it is shown, though queued 20 s before (took ${took} s)"
  else
    ok 1 "confined (root): unanswered, a question is refused 60 s after it is shown, though queued 20 s before (took ${took} s)"
  fi
  like "$RESULT" 'crucible refused the connection to other\.test.*crucible refused the connection to second\.test.*\\n403' \
    "confined (root): both connections got the 403"
  tui_wait "second.test was refused: the question about it was not answered within 60 seconds" 5
  ok $? "confined (root): the session says the question was not answered in time"
  quit >/dev/null
}
if [ -z "${CRUCIBLE_SANITIZED:-}" ]; then
  tap_part "$TEST_TMP/minute.tap" unanswered_minute
fi

for who in $ids; do
  become "$who"

  # (The pane runs in SHELL: nobody's login shell is nologin.)
  # The control: unconfined, the same curl reaches other.test.
  config
  ctl=$(cd "$WS" && net_run "${AS[@]}" env -i PATH=/usr/bin:/bin \
    sh -c "curl -sS --max-time 20 -w '\n%{http_code}\n' http://other.test/hello.txt" 2>&1)
  like "$ctl" "^$NET_HELLO"$'\n+200' "control ($WHO): unconfined, curl reaches other.test"

  {
    echo 'expect "type":"hello"'
    echo "$HELLO"
    echo 'expect {"type":"prompt","text":"go"}'
    call c1 "$CURL; sleep 0.5; $CURL" "fetch once"
    call c2 "$CURL" "fetch again"
    call c3 "$CURL >a.out & sleep 1; $CURL >b.out & wait; cat a.out b.out" "fetch twice at once"
    call c4 "$CURL" "fetch for good"
    call c5 "$CURL" "fetch later"
    echo 'send {"type":"end_turn"}'
  } >"$SCRIPT"
  net_tui_start
  tui_wait "mode on (shift+tab to cycle)" >/dev/null
  tui_keys go Enter

  # c1: asked while the connection waits; "this command" lets it through.
  tui_wait "$QUESTION"
  ok $? "confined ($WHO): a name not allowed raises the question, naming it"
  is "$(tui_block "$QUESTION" 8 | sed 's/refused in [0-9]* s/refused in N s/')" "$QUESTION
  fetch once
  its connection waits; refused in N s without an answer

› 1. Allow other.test for this command
  2. Allow other.test always in this workspace
  3. Refuse
enter chooses · esc refuses" "confined ($WHO): the panel names the command and offers the three answers"
  sleep 1
  if grep -qF '> {"type":"bash","id":"c1"' "$D/agent.log" 2>/dev/null &&
    ! grep -F '"id":"c1"' "$D/agent.log" | grep -qF tool_result; then
    ok 0 "confined ($WHO): the command waits while the question is open"
  else
    ok 1 "confined ($WHO): the command waits while the question is open"
  fi
  tui_keys 1
  result c1
  got200 "confined ($WHO): allowed for this command, the connection reaches the origin (200)"
  like "$RESULT" "$NET_HELLO"'(\\n)+200(\\n)+'"$NET_HELLO"'(\\n)+200' \
    "confined ($WHO): and the command's next connection to it, without a second question"

  # c2: the next command is asked again; refusing gets the 403 text.
  asked "fetch again"
  ok $? "confined ($WHO): the next command is asked again about the same name"
  tui_keys 3
  result c2
  got403 "confined ($WHO): refused, the connection gets the 403 naming the name and the key"

  # c3: two connections to the same name, one question: refused once (Esc),
  # both get the 403 at once (a second question would hold the command).
  asked "fetch twice at once"
  ok $? "confined ($WHO): two connections to one name raise the question"
  sleep 2.5
  tui_keys Escape
  t0=$SECONDS
  result c3 10
  n403=$(grep -o 'n403' <<<"$RESULT" | wc -l)
  if [ "$n403" -eq 2 ] && [ $((SECONDS - t0)) -lt 10 ]; then
    ok 0 "confined ($WHO): one answer (esc) refused both connections: one question for both"
  else
    ok 1 "confined ($WHO): one answer (esc) refused both connections: one question for both"
    diag "403s: $n403" "result: $RESULT" "screen: $SCREEN"
  fi

  # c4: "always": written under workspaces.<WS>.domains in the home file.
  asked "fetch for good"
  ok $? "confined ($WHO): asked again after the refusal"
  tui_keys 2
  result c4
  got200 "confined ($WHO): allowed always, the connection reaches the origin (200)"
  tui_wait "other.test is allowed in this workspace from now on ($H/.crucible/config.json)"
  ok $? "confined ($WHO): the session says the name is allowed in this workspace, and where"
  like "$(tr -d ' \n' <"$H/.crucible/config.json")" \
    "\"workspaces\":\{\"$WS\":\{\"domains\":\[\"other.test\"\]\}\}" \
    "confined ($WHO): the home file holds the name under workspaces.<ws>.domains"
  like "$(tr -d ' \n' <"$H/.crucible/config.json")" '"sandbox":\{"enabled":true,"network":\{"domains":\["allowed.test"\]\}\}' \
    "confined ($WHO): the home file's sandbox.network.domains is left as it was"

  # c5: a later command reaches it without a question.
  result c5
  got200 "confined ($WHO): a later command of the session reaches it without a question"
  tui_capture
  [[ $SCREEN != *"its connection waits"* ]]
  ok $? "confined ($WHO): no question was raised for it"
  quit
  ok $? "confined ($WHO): the session ends with Ctrl+D"

  # A new session reads the name from the home file.
  {
    echo 'expect "type":"hello"'
    echo "$HELLO"
    echo 'expect {"type":"prompt","text":"go"}'
    call d1 "$CURL" "fetch in a new session"
    echo 'send {"type":"end_turn"}'
  } >"$SCRIPT"
  net_tui_start
  tui_wait "mode on (shift+tab to cycle)" >/dev/null
  tui_keys go Enter
  result d1
  got200 "confined ($WHO): a new session reaches the name allowed always, without a question"
  [[ $SCREEN != *"its connection waits"* ]]
  ok $? "confined ($WHO): and asks nothing"
  quit >/dev/null

  # A project file cannot pre-allow: its workspaces key is a configuration
  # error, and a name in its own domains that home does not grant is one.
  config
  mkdir -p "$WS/.crucible"
  printf '{"workspaces":{"%s":{"domains":["second.test"]}}}\n' "$WS" >"$WS/.crucible/config.json"
  [ "$WHO" = nobody ] && chown -R 65534:65534 "$WS/.crucible"
  net_tui_start
  for ((i = 0; i < 200; i++)); do [ -s "$D/tui-exit" ] && break; sleep 0.05; done
  tui_capture
  like "$(cat "$D/tui-exit" 2>/dev/null):$SCREEN" \
    "^[1-9][0-9]*:.*config\.json:1: workspaces: may only be set in the home configuration" \
    "confined ($WHO): a project's workspaces key is a configuration error; the session does not start"
  printf '{"sandbox":{"network":{"domains":["second.test"]}}}\n' >"$WS/.crucible/config.json"
  net_tui_start
  for ((i = 0; i < 200; i++)); do [ -s "$D/tui-exit" ] && break; sleep 0.05; done
  tui_capture
  like "$(cat "$D/tui-exit" 2>/dev/null):$SCREEN" \
    "^[1-9][0-9]*:.*sandbox\.network\.domains\[0\]: \"second\.test\" is not granted by the home configuration" \
    "confined ($WHO): a project's domains cannot add a name the home file does not grant"
  rm -rf "$WS/.crucible"
  # The positive control of the two: without the project file the session starts.
  {
    echo 'expect "type":"hello"'
    echo "$HELLO"
    echo 'expect {"type":"prompt","text":"go"}'
    call e1 "curl -sS --max-time 20 -w '\\\\n%{http_code}\\\\n' http://allowed.test/hello.txt" "fetch allowed"
    echo 'send {"type":"end_turn"}'
  } >"$SCRIPT"
  net_tui_start
  tui_wait "mode on (shift+tab to cycle)" >/dev/null
  tui_keys go Enter
  result e1
  like "$RESULT" "$NET_HELLO"'(\\n)+200' "control ($WHO): without the project file the session starts and reaches allowed.test"
  quit >/dev/null
  rm -rf "$WS"/*.out

  # Unconfined (sandbox.enabled false), the same curl in the session reaches
  # other.test with no question: the question is the boundary's.
  config false
  {
    echo 'expect "type":"hello"'
    echo "$HELLO"
    echo 'expect {"type":"prompt","text":"go"}'
    call u1 "curl -sS --max-time 20 -w '\\\\n%{http_code}\\\\n' http://second.test/hello.txt" "fetch unconfined"
    echo 'send {"type":"end_turn"}'
  } >"$SCRIPT"
  net_tui_start
  tui_wait "mode on (shift+tab to cycle)" >/dev/null
  tui_keys go Enter
  result u1
  like "$RESULT" "$NET_HELLO"'(\\n)+200' "control ($WHO): unconfined in the session, curl reaches a name not listed"
  [[ $SCREEN != *"its connection waits"* ]]
  ok $? "control ($WHO): and nothing is asked"
  quit >/dev/null
done

if [ -n "${CRUCIBLE_SANITIZED:-}" ]; then
  for i in 1 2 3; do
    skip "confined (root): the unanswered question's minute" \
      "a sanitizer build: the minute is a timer's, which the plain build's run measures; the answered questions run the same code here"
  done
else
  tap_join
fi

net_teardown
ok $? "net_teardown leaves no process of the test network (the tmux servers included)"
