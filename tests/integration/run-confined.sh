#!/bin/bash
# crucible run with confinement enabled through the home configuration:
# the unreadable patterns and allowUnixSockets it names reach the bwrap
# backend.  The escape tests themselves are tests/security/; this shows the
# settings are read by the command that a person runs.
. "$(dirname "$0")/lib.sh"

plan 15

new_workspace
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  [ -x "$SANDBOX_RUN" ] || why="no $SANDBOX_RUN (make check installs it)"
  for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do skip "confined crucible run" "$why" bwrap; done
  exit 0
fi
echo notes >notes
echo KEY >server.pem
mkdir -p "$HOME/.crucible" "$TEST_TMP/sockets"
config() {
  printf '{"sandbox":{"enabled":true,"filesystem":{"unreadable":[%s]},"network":{"allowUnixSockets":[%s]}}}\n' \
    "$1" "$2" >"$HOME/.crucible/config.json"
}

config '"**/*.pem"' ''
crun run -- 'cat notes; cat server.pem'
is "$rc:$out" $'1:notes\ncat: server.pem: Permission denied\n[exit status 1]' \
  "an unreadable pattern from the home configuration hides the file"

# The journal: the confined command's policy and negotiation facts.
journal=$(cat "$HOME"/.local/state/crucible/*.jsonl)
like "$journal" '"fact":"policy","command":1,"sandbox":"[0-9a-f]{16}","backend":"linux-bubblewrap","mode":"confined","policy":"sha256:[0-9a-f]{64}","degraded":false' \
  "the journal has the confined policy, with the sandbox ID"
printf '{"sandbox":{"enabled":true,"network":{"domains":["example.com"]}}}\n' \
  >"$HOME/.crucible/config.json"
rm -rf "$HOME/.local/state/crucible"
crun run -- 'echo ran'
journal=$(cat "$HOME"/.local/state/crucible/*.jsonl)
like "$rc:$out|$journal" '^0:ran\|.*"fact":"capabilities","command":1,"sandbox":"[0-9a-f]{16}","backend":"linux-bubblewrap","required":[0-9]+,"outcome":"accepted"' \
  "domains are network_allowlist, which the backend now enforces: the command runs, and the negotiation says so"

# A command that wrote nothing is answered "unchanged" by crucible itself,
# with no publishing process (sandbox_publish_inline); one that wrote is
# published by one, as before.  Counted with strace: crucible's own
# process starts bwrap and nothing else.
config '' ''
# outcomes: the publication outcomes of the journal's one run, which is
# then removed (each run's journal file has a random name, so two runs'
# files list in no particular order).
outcomes() {
  cat "$HOME"/.local/state/crucible/*.jsonl | grep -o '"fact":"publication".*"outcome":"[a-z_]*"' | grep -o '"outcome":"[a-z_]*"' | tr '\n' ' '
  rm -rf "$HOME/.local/state/crucible"
}
rm -rf "$HOME/.local/state/crucible"
crun run -- 'cat notes >/dev/null'
facts=$(outcomes)
crun run -- 'echo made >made'
facts+=$(outcomes)
is "$rc:$(cat made):$facts" '0:made:"outcome":"unchanged" "outcome":"published" ' \
  "a command that wrote nothing is unchanged, one that wrote is published"
rm -f made

# crucible run leaves a command's layer pair to the next start's recovery
# only when its upper holds nothing (statedir_pair_release; the unit test
# shows one left): one that wrote is removed before crucible exits, and
# the next start removes one that was left.
STATE=/var/tmp/crucible-code-sandbox-$(id -u)-v1
"$CRUCIBLE" run -- 'echo w >wrote' >/dev/null 2>&1 &
wrote=$!
wait "$wrote"
kept=$(ls -d "$STATE/cmd-$wrote-"* 2>/dev/null | wc -l)
"$CRUCIBLE" run -- true >/dev/null 2>&1 &
quiet=$!
wait "$quiet"
held=$(find "$STATE/cmd-$quiet-"*/upper -mindepth 1 2>/dev/null | wc -l)
"$CRUCIBLE" run -- true >/dev/null 2>&1
gone=$(ls -d "$STATE/cmd-$quiet-"* 2>/dev/null | wc -l)
is "$kept:$held:$gone:$(cat wrote)" 0:0:0:w \
  "a run that wrote leaves no layer pair; one left empty is removed by the next start"
rm -f wrote
if command -v strace >/dev/null 2>&1; then
  # (LeakSanitizer's check at exit clones a tracer of its own, and cannot
  # run under ptrace anyway.)
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -o "$TEST_TMP/forks" -e trace=fork,vfork,clone,clone3 \
    "$CRUCIBLE" run -- 'cat notes >/dev/null' >/dev/null 2>&1
  main=$(head -n 1 "$TEST_TMP/forks" | cut -d' ' -f1)
  # Calls, not lines: a call another traced process interrupts is two
  # lines, "vfork( <unfinished ...>" and "<... vfork resumed>" (CI, under
  # load, counted 2 for crucible's one vfork of bwrap).  Processes, not
  # threads: the broker's digest has a thread of its own (CLONE_THREAD).
  is "$(grep -E "^$main +(v?fork|clone3?)\(" "$TEST_TMP/forks" |
    grep -cv CLONE_THREAD)" 1 \
    "crucible forks no publishing process for a command that wrote nothing"
else
  skip "crucible forks no publishing process for a command that wrote nothing" "no strace" strace
fi

config '"a/**/**"' ''
crun run -- 'echo ran'
is "$rc:$out" \
  "125:[refused: sandbox.filesystem.unreadable: 'a/**/**' has more than one '**'; nothing was run]" \
  "a pattern outside the grammar refuses the command"

config "\"$WS\"" ''
crun run -- 'echo ran'
is "$rc:$out" \
  "125:[refused: sandbox.filesystem.unreadable: '$WS' is the workspace itself; nothing was run]" \
  "the workspace itself cannot be made unreadable"

# A scan past its bounds refuses the launch, quoting the broker's words.
mkdir -p "$(printf 'deep/%.0s' $(seq 130))"
config '"**/zz"' ''
crun run -- 'echo ran'
is "$rc:$out" \
  "125:[refused: setting up the command: \"crucible-sandbox-broker: covering unreadable paths: Too many levels of symbolic links\"; nothing was run]" \
  "a scan deeper than its bound refuses the command, quoting the broker"
rm -rf deep

# Run by root over a workspace another user owns: the command runs as that
# user, and what it wrote is published as theirs.
if [ "$(id -u)" -eq 0 ]; then
  OWS=$(mktemp -d "$TEST_TMP/owned.XXXXXX")
  echo original >"$OWS/tracked"
  chown -R 65534:65534 "$OWS"
  chmod 755 "$OWS"
  config '' ''
  out=$(cd "$OWS" && "$CRUCIBLE" run -- 'id -u; echo more >> tracked; echo new > made' 2>&1)
  is "$out" 65534 "as root over 65534's workspace, the command runs as 65534"
  is "$(stat -c %u:%g "$OWS/tracked" "$OWS/made" | tr '\n' ' ')$(cat "$OWS/tracked" | tr '\n' ' ')" \
    "65534:65534 65534:65534 original more " \
    "and what it wrote is published as 65534's"
  # Everything root made in the owner's state directory (layers, the
  # publication's baseline, counts, journal) is the owner's: their own
  # crucible must be able to use it afterwards.
  is "$(find /var/tmp/crucible-code-sandbox-65534-v1 ! -user 65534 2>&1 | head -3)" "" \
    "nothing in the owner's state directory is left root's"
else
  skip "crucible run as root over another user's workspace" "not root"
  skip "what it wrote is published as the owner's" "not root"
  skip "nothing in the owner's state directory is left root's" "not root"
fi

if ! command -v python3 >/dev/null 2>&1; then
  for i in 1 2 3; do skip "allowUnixSockets through crucible run" "no python3"; done
  exit 0
fi
python3 - "$TEST_TMP/sockets/agent.sock" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
while True:
    c, _ = s.accept()
    c.sendall(b"hello")
    c.close()
PY
listener=$!
trap 'kill $listener 2>/dev/null; rm -rf "$TEST_TMP"' EXIT
for _ in $(seq 100); do [ -S "$TEST_TMP/sockets/agent.sock" ] && break; sleep 0.05; done
talk="python3 -c 'import socket
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(\"$TEST_TMP/sockets/agent.sock\")
    print(s.recv(5).decode())
except OSError as e:
    print(e.errno)'"
config '' ''
crun run -- "$talk"
is "$out" 13 "without a grant, the host socket is not reached"
config '' "\"$TEST_TMP/sockets/agent.sock\""
crun run -- "$talk"
is "$out" hello "allowUnixSockets grants the named socket"
config '' "\"$TEST_TMP/sockets/agent.sock.missing\""
crun run -- "$talk"
is "$out" 2 "a grant naming another path does not reach it"
