#!/bin/bash
# The container backend's messages for an engine or a job runner that
# misbehaves, each pinned as doc/strings.md writes it.  The engine is
# tests/container/fake_engine.py: the Docker Engine API on a Unix socket
# under the test's directory, reached through DOCKER_HOST as dockerd is
# (crucible cannot tell it from one), whose containers run nothing and
# whose job runner is played by the engine itself, with the faults a real
# engine will not make on demand (tests/container/fake_engine.py says
# which).  A first command that runs shows the fake holds what crucible
# checks (the positive control for every fault after it).  No real engine
# is needed: nothing here skips.

. "$(dirname "$0")/../integration/lib.sh"

plan 27

HERE=$(cd "$(dirname "$0")" && pwd)
new_workspace
mkdir -p "$HOME/.crucible"
CONFIG='{"sandbox": {"enabled": true, "backend": "container"}, "permissions": {"allow": ["Bash(*)"]}}'
echo "$CONFIG" >"$HOME/.crucible/config.json"
FAULT="$TEST_TMP/fault"
LOG="$TEST_TMP/requests"
SOCK="$TEST_TMP/engine.sock"
echo ok >"$FAULT"
RUNNER_SHA=$(sha256sum "$CRUCIBLE_BIN_DIR/../libexec/crucible/crucible-job-runner" | cut -d' ' -f1)
python3 "$HERE/fake_engine.py" "$SOCK" "$FAULT" "$LOG" "$RUNNER_SHA" 2>"$TEST_TMP/engine.err" &
FAKE_PID=$!
trap 'kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; rm -rf "$TEST_TMP"' EXIT
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
export DOCKER_HOST="unix://$SOCK"
ENGINE="unix://$SOCK (docker 20.10.24-fake)"
# What the report and the messages show of the engine's address.
ENGINE_RE="unix://[^ ]* \\(docker 20\\.10\\.24-fake\\)"

# with FAULT: the next commands meet FAULT.
with() { echo "$1" >"$FAULT"; }
# result: the result text crucible run printed, one line.
result() { tr '\n' ' ' <<<"$out$err"; }

# --- the positive control ---------------------------------------------------
with ok
crun run 'echo hi'
like "$rc|$(result)" '^0\|fake output' \
  "a command runs in the fake engine's container: what it holds passes every check"

# --- a workspace no command may write --------------------------------------
# The state directory holds records crucible trusts (a remembered probe,
# an MCP grant): a command whose workspace it is would write them.
STATE="/var/tmp/crucible-code-sandbox-$(id -u)-v1"
out=$(cd "$STATE" && "$CRUCIBLE" run 'echo hi' 2>&1) && rc=0 || rc=$?
like "$rc|$(tr '\n' ' ' <<<"$out")" "the workspace is inside the sandbox state directory, which no command may write; run it from another directory" \
  "a workspace inside the sandbox state directory is refused, as the bwrap backend refuses it"

# --- facts from inside that do not hold -------------------------------------
with filter
crun run 'echo hi'
like "$(result)" "the container's hardening does not hold from inside: kernel_surface: the runner's own seccomp filter is not loaded \\(none\\)" \
  "a runner that says its own seccomp filter is not loaded fails the command by name"
with userns
crun run 'echo hi'
like "$(result)" "the container's hardening does not hold from inside: kernel_surface: a new user namespace is allowed inside" \
  "a runner that says a new user namespace can be made fails the command by name"
with dumpable
crun run 'echo hi'
like "$(result)" "the container's hardening does not hold from inside: the job runner is dumpable \\(1\\): the command could ptrace it and forge its answer" \
  "a runner that says it is dumpable fails the command by name"

# --- the runner and the stream ----------------------------------------------
with failed
crun run 'echo hi'
like "$(result)" "the job runner failed: fake-runner: the workspace did not fit" \
  "a runner that failed a step says so in its words"
with noending
crun run 'echo hi'
like "$(result)" "the command's container ended without saying how the command ended; it said: fake-runner: crashed" \
  "a container that ends without an ending says so, with the runner's stderr"

# --- the engine's description -----------------------------------------------
with readback
crun run 'echo hi'
like "$(result)" "the engine $ENGINE_RE did not make the container as asked: NetworkMode none does not hold in its description" \
  "an engine whose description of the container differs from what was asked fails the command by the item's name"

# --- the image --------------------------------------------------------------
with label
crun run 'echo hi'
like "$(result)" 'the image crucible-sandbox:latest was not made by this build of crucible \(its job runner differs\); rebuild the image with `crucible sandbox image build`' \
  "an image whose runner label is another build's is refused"
with nolabel
crun run 'echo hi'
like "$(result)" 'the image crucible-sandbox:latest was not made by this build of crucible \(its job runner is not labelled\); rebuild the image with `crucible sandbox image build`' \
  "an image without the runner label is refused"
with noimage
crun run 'echo hi'
like "$(result)" "the image crucible-sandbox:latest is not on the engine $ENGINE_RE \\(engine $ENGINE_RE: GET /v1\\.41/images/crucible-sandbox:latest/json: 404: No such image: crucible-sandbox:latest\\); \`crucible sandbox image build\` makes it" \
  "an engine without the image refuses the command, naming the image and the engine"
crun sandbox inspect
like "$out" "image +crucible-sandbox:latest, not on the engine \\(crucible sandbox image build makes it\\)" \
  "inspect says the image is not on the engine"

# --- image build ------------------------------------------------------------
crun sandbox image build --from nosuch:1
like "$rc|$err" "^1\\|Building the image on the engine $ENGINE_RE…
crucible: building the image crucible-sandbox:latest: the image to build from \\(--from nosuch:1\\) must be on the engine already; crucible pulls nothing: engine $ENGINE_RE: GET /v1\\.41/images/nosuch:1/json: 404: No such image: nosuch:1$" \
  "image build says which engine it builds on; --from an image the engine lacks is refused, pulling nothing"
echo '{"sandbox": {"enabled": true, "backend": "container", "container": {"image": "crucible-sandbox@sha256:'"$(printf 'cd%.0s' $(seq 32))"'"}}}' >"$HOME/.crucible/config.json"
crun sandbox image build
like "$rc|$err" "^1\\|.*the image crucible-sandbox@sha256:(cd){32} is named by digest, which names what exists and cannot be built; name it by tag$" \
  "image build refuses an image named by digest"
echo "$CONFIG" >"$HOME/.crucible/config.json"
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
  # /bin is /usr/bin on Debian: a tmpfs over it leaves no /bin/busybox.
  out=$(unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /bin && exec "$@"' \
    sh "$CRUCIBLE" sandbox image build 2>&1) && rc=0 || rc=$?
  like "$rc|$out" "^1\\|.*crucible: building the image crucible-sandbox:latest: no /bin/busybox: the image is made from the host's busybox-static \\(apt-get install busybox-static\\)$" \
    "image build without /bin/busybox names the package"
else
  skip "image build without busybox" "needs root and unshare" unprivileged
fi

# --- the engine's answers ---------------------------------------------------
with notjson
crun run 'echo hi'
like "$(result)" "engine $ENGINE_RE: GET /v1\\.41/info: the answer is not JSON: " \
  "an engine answering /info with something that is not JSON cannot be used, and says why"
with bigping
crun run 'echo hi'
like "$(result)" "engine unix://[^ ]*: GET /_ping: the answer is longer than 4096 bytes" \
  "an engine answering /_ping past its bound cannot be used, and says why"

# --- a policy the backend cannot hold ---------------------------------------
with ok
echo '{"sandbox": {"enabled": true, "backend": "container", "network": {"ports": [8080], "allowLocalBinding": true}}, "permissions": {"allow": ["Bash(*)"]}}' >"$HOME/.crucible/config.json"
crun run 'echo hi'
# (Ports need allowLocalBinding, which needs network_allowlist: that is
# what refuses it first; doc/strings.md's ports row is not reached so.)
like "$(result)" "the policy requires network_allowlist, which the container backend does not enforce; nothing was run" \
  "a policy with ports is refused by the container backend"
echo "$CONFIG" >"$HOME/.crucible/config.json"

# --- inspect, the engine answering ------------------------------------------
crun sandbox inspect
like "$out" "status +the engine answers; commands run in containers it makes.*what crucible would ask for, beside what the engine says it can hold:.*each item is read back from the engine's description of every container and checked from inside before the command runs" \
  "inspect, the engine answering with the image: the status, the two sections' words"

# --- a kept container -------------------------------------------------------
. "$CRUCIBLE_SRCDIR/tests/integration/mcpcoproc.sh"
call() { # call ID COMMAND-AS-JSON-STRING
  send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":{\"command\":\"$2\"}}}"
}
# await_waiting: wait up to 20 s for crucible mcp's kept container to be
# started (its attach and start in the log); 0 when it is.
await_waiting() {
  for _ in $(seq 200); do
    [ "$(grep -c 'POST /containers/[0-9a-f]*/start' "$LOG")" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

# It ends when crucible looks its image up at the take: the call races
# with that end, and is failed with its words.
with gonetake
: >"$LOG"
start_mcp
await_waiting 1
call 1 'echo hi'
like "$(recv)" "the container kept for the command ended before it; it said: fake-runner: ended while it waited" \
  "a kept container that ends as its call takes it fails the call, with the runner's words"

# Its removal never confirmed, at its disposal (it went stale): the next
# preparation says so.
with ok
await_waiting 2
with nodeletekept
sleep 0.05
echo "$CONFIG" >"$HOME/.crucible/config.json"
t0=$(date +%s%N)
call 2 'echo again'
reply=$(recv)
diag "the call that found the kept container stale was answered in $((($(date +%s%N) - t0) / 1000000)) ms; its removal takes two 5 s rounds"
# How many times the engine was asked to remove the stale one when the
# call was answered: the disposal waits for none of the three rounds of
# its removal (two of the 5 s budget, so 10 s), which used to hold the
# supervisor's loop, and the call, until all three had failed.
deletes=$(grep '^DELETE ' "$LOG" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $1 }')
like "$reply|$deletes" '"text":"fake output".*\|[12]$' \
  "a kept container gone stale is left to its thread's removal: the call runs in a new one before that removal is through"
with ok
# Its removal is given up after two rounds of the 5 s budget.
for _ in $(seq 150); do
  grep -q 'not confirmed' "$TEST_TMP/mcp.err" 2>/dev/null && break
  call 3 'echo third'
  reply=$(recv)
  case $reply in *"not been confirmed"*) break ;; esac
  sleep 0.2
done
like "$reply" "the container kept for a command has not been confirmed gone from the engine" \
  "a kept container whose removal the engine never confirmed is reported at a later preparation"
exec {mcp_in}>&-
wait "$mcp_pid" 2>/dev/null

# --- a command's container the engine never confirms gone -----------------
GONE_RE="the container [0-9a-f]{12} is still on the engine $ENGINE_RE after crucible removed it"
# The engine says every removal succeeded and keeps the container: after
# its two rounds of the 5 s budget the backend says so, and the command
# gets its result.  A `crucible run` used to give none until its deadline
# (10 minutes): the timeout is a hang guard only.  crucible run and a
# crucible mcp session run side by side, so the two waits are one.
with nodelete
touch "$TEST_TMP/gone-mark"
t0=$(date +%s)
( timeout 120 "$CRUCIBLE" run 'echo hi' >"$TEST_TMP/gone-out" 2>"$TEST_TMP/gone-err"
  echo $? >"$TEST_TMP/gone-rc" ) &
run_pid=$!
: >"$LOG"
start_mcp
await_waiting 1
call 1 'echo hi'
reply=$(recv 120)
wait "$run_pid"
diag "the run whose container was not confirmed gone ended in $(($(date +%s) - t0)) s"
with ok
like "$(cat "$TEST_TMP/gone-rc")|$(tr '\n' ' ' <"$TEST_TMP/gone-out")" "^0\\|fake output \\[cleanup failed: $GONE_RE; nothing the command wrote was published\\] $" \
  "crucible run: a command whose container is still on the engine after its removal gets its result: its output, its ending, and the cleanup failure by name"
like "$reply" "\"text\":\"fake output\\\\n\\[cleanup failed: $GONE_RE; nothing the command wrote was published\\]\"" \
  "crucible mcp: the call whose container stays on the engine is answered with its output and the cleanup failure"
# Each of the two sessions' journals: its command's cleanup_failed with
# the reason, and no cleanup invented for it.
held=0
for j in $(find "$HOME/.local/state/crucible" -name '*.jsonl' -newer "$TEST_TMP/gone-mark"); do
  sbx=$(grep '"fact":"start"' "$j" | sed -n 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' | head -1)
  facts=$(grep "\"sandbox\":\"$sbx\"" "$j")
  [[ -n "$sbx" && "$(grep -c '"fact":"cleanup"' <<<"$facts")|$(grep '"fact":"cleanup_failed"' <<<"$facts")" =~ ^0\|.*\"reason\":\"$GONE_RE\" ]] && held=$((held + 1))
done
is "$held" 2 "the journal has the cleanup failure with its reason, and no cleanup invented for it (run and mcp)"
# The slot stays held and the session's next command is refused, naming
# the container.
call 2 'echo again'
reply=$(recv)
like "$reply" "an earlier command's cleanup was not confirmed \\($GONE_RE\\); no command is prepared again until crucible restarts" \
  "the next command is refused, naming the container still on the engine"
grep -q 'fake output' <<<"$reply"
ok $((!$?)) "the refused command did not run"
exec {mcp_in}>&-
wait "$mcp_pid" 2>/dev/null
