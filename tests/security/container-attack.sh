#!/bin/bash
# An attacker's pass on the container backend, against both engines
# (tests/container/lib.sh starts dockerd and Podman's service once): the
# job runner's own seccomp filter refuses a new user namespace whatever
# the engine's profile is (Podman's lets `unshare -r` through), and the
# command cannot take over the runner, which is PID 1 with the same uid
# 65534: no ptrace attach, no opening /proc/1/mem for writing, no reading
# its descriptors, no signal that ends it, and no descriptor of the
# runner's own stdin or stdout inherited.  Each attempt has its control:
# the same attempt against a process of the command's own, in the same
# container, succeeds (and `unshare -r` as uid 65534 on the host).

. "$(dirname "$0")/../container/lib.sh"

PER_ENGINE=11
plan $((2 * PER_ENGINE))

new_workspace
mkdir -p "$HOME/.crucible"
echo '{"sandbox": {"enabled": true, "backend": "container"}}' >"$HOME/.crucible/config.json"

# A static ptrace(PTRACE_ATTACH) of one pid, carried in with the workspace
# (the image has busybox only): exit 0 when attached.
HELPER_C="$TEST_TMP/ptattach.c"
cat >"$HELPER_C" <<'C'
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/types.h>
int main (int argc, char **argv)
{
  return argc == 2 && ptrace (PTRACE_ATTACH, (pid_t) atoi (argv[1]), 0, 0) == 0 ? 0 : 1;
}
C

# uid 65534 on the host makes a user namespace (the control for the filter).
HOST_USERNS=1
setpriv --reuid 65534 --regid 65534 --clear-groups busybox unshare -r true 2>/dev/null && HOST_USERNS=0

engines_start docker podman
for engine in docker podman; do
  if ! engine_up "$engine"; then
    engine_skip "$PER_ENGINE" "$engine"
    continue
  fi
  export DOCKER_HOST
  DOCKER_HOST=$(engine_host "$engine")
  new_workspace
  gcc -static -O -o ptattach "$HELPER_C" || exit 1
  crun sandbox image build
  like "$rc|$out" "^0\\|built crucible-sandbox:latest: sha256:" "$engine: the image is built"
  [ "$rc" -eq 0 ] || diag "$err"

  # --- a new user namespace ---------------------------------------------------
  crun run 'busybox unshare -r id -u && echo MADE || echo REFUSED'
  if [ "$HOST_USERNS" -ne 0 ]; then
    ok 1 "$engine: unshare -r: the positive control failed on the host (uid 65534), so this proves nothing"
  else
    like "$rc|$out" "^0\\|.*REFUSED" "$engine: unshare -r is refused inside and succeeds for uid 65534 on the host"
  fi
  crun run 'busybox unshare -U true 2>/dev/null && echo MADE || echo REFUSED; busybox unshare -n true 2>/dev/null && echo MADE || echo REFUSED'
  is "$rc|$out" "0|REFUSED
REFUSED" "$engine: unshare -U and -n are refused inside too"
  grep -q '"filter":"crucible".*' "$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)" \
    || grep -q 'filter=crucible' "$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)"
  ok $? "$engine: the run's facts say the runner's own filter was loaded"

  # --- the runner, PID 1 ------------------------------------------------------
  # The control each time: a process of the command's own (same uid, same
  # container) is reachable by the same attempt.
  crun run 'sleep 30 & c=$!; ./ptattach $c && echo CTL-OK || echo CTL-FAIL; kill -9 $c
            ./ptattach 1 && echo ATTACHED || echo REFUSED'
  is "$rc|$out" "0|CTL-OK
REFUSED" "$engine: ptrace attach to the runner fails; to the command's own process it succeeds"
  crun run 'sleep 30 & c=$!; (exec 3<>/proc/$c/mem) 2>/dev/null && echo CTL-OK || echo CTL-FAIL; kill -9 $c
            (exec 3<>/proc/1/mem) 2>/dev/null && echo OPENED || echo REFUSED'
  is "$rc|$out" "0|CTL-OK
REFUSED" "$engine: /proc/1/mem cannot be opened for writing; the command's own process's can"
  crun run 'sleep 30 & c=$!; ls /proc/$c/fd >/dev/null 2>&1 && echo CTL-OK || echo CTL-FAIL; kill -9 $c
            ls /proc/1/fd >/dev/null 2>&1 && echo LISTED || echo REFUSED'
  is "$rc|$out" "0|CTL-OK
REFUSED" "$engine: the runner's descriptors cannot be listed; the command's own process's can"
  # Every signal the command may send (it has no handler for any but
  # SIGCHLD, which it only reaps on): the run still ends with the
  # command's own answer and its changes.
  crun run 'sleep 30 & c=$!; kill -TERM $c; wait $c; echo CTL=$?
            for s in TERM INT HUP QUIT USR1 USR2 ALRM PIPE CHLD STOP KILL; do kill -$s 1 2>/dev/null; done
            sleep 0.5; echo alive >alive.txt; echo ALIVE; exit 7'
  like "$rc|$out|$(cat alive.txt 2>/dev/null)" "^7\\|(Terminated
)?CTL=143
ALIVE
\\[exit status 7\\]\\|alive$" "$engine: signals to PID 1 do not end the runner (the run answers and publishes); the command's own process ends on SIGTERM"
  rm -f alive.txt

  # --- descriptors --------------------------------------------------------------
  # The command's shell holds /dev/null as stdin and one pipe, the runner's
  # output pipe, as stdout and stderr; nothing else (the runner's stdin and
  # stdout, the attach, are neither).  The control: a descriptor the
  # command opens itself is seen by the same listing.
  crun run 'exec 5</dev/null; busybox ls -l /proc/$$/fd'
  fds=$(sed -n 's/.* \([0-9]*\) -> \(.*\)$/\1 \2/p' <<<"$out")
  like "$rc|$fds" "^0\\|0 /dev/null
1 pipe:\\[[0-9]+\\]
2 pipe:\\[[0-9]+\\]
5 /dev/null$" "$engine: the command holds /dev/null, one output pipe and its own descriptor, nothing else"
  one=$(sed -n 's/^1 //p' <<<"$fds")
  two=$(sed -n 's/^2 //p' <<<"$fds")
  [ -n "$one" ] && [ "$one" = "$two" ]
  ok $? "$engine: stdout and stderr are the same pipe ($one)"
  # The runner's stdout would carry raw bytes into the answer stream: a
  # line written to each descriptor arrives framed, as output.
  crun run 'echo to-one >&1; echo to-two >&2'
  is "$rc|$out" "0|to-one
to-two" "$engine: what the command writes to its descriptors arrives as its output, not in the runner's stream"
done
