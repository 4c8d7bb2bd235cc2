#!/bin/bash
# Commands through the container backend, against both engines
# (tests/container/lib.sh starts dockerd and Podman's service once; the
# two engines' checks run at the same time):
# `crucible sandbox image build` makes the image; each command runs in a
# container of its own and its result notes are every backend's (exit
# status, killed, ran too long with what it printed, the head and tail
# of a long output, the output ceiling); an ordinary exit publishes
# (new, changed, deleted; a nonzero exit too), a stop discards, a root
# changed while it ran publishes nothing, and a changes stream with a link
# out is refused; the hardening is checked item by item from inside; the
# escape attempts each fail where their positive control (the same
# attempt run plainly on the host) succeeds; the credential given to the
# command is not in the container's stored description; a SIGKILLed
# crucible leaves no container within 5 s; `sandbox audit --backend
# container` finds no fault; and every run's start fact says
# "isolation":"container".

. "$(dirname "$0")/lib.sh"

PER_ENGINE=35
plan $((2 * PER_ENGINE))

container_home

# What lives outside the workspace: a secret to read, a directory to
# write, a process to signal, a port to reach.
OUTSIDE="$TEST_TMP/outside"
mkdir -p "$OUTSIDE/w"
echo outside-secret >"$OUTSIDE/secret"
chmod 755 "$OUTSIDE" "$OUTSIDE/w"
sleep 300 &
SLEEPER=$!
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 "$PORT" --directory "$OUTSIDE" >/dev/null 2>&1 &
SERVER=$!
trap 'kill $SLEEPER $SERVER 2>/dev/null; engines_stop; rm -rf "$TEST_TMP"' EXIT
# Until it answers (or has ended: then the controls fail).
for _ in $(seq 1200); do
  busybox wget -q -O /dev/null "http://127.0.0.1:$PORT/secret" 2>/dev/null && break
  kill -0 "$SERVER" 2>/dev/null || break
  sleep 0.1
done

# journal: the facts of the newest session.
journal() { cat "$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)"; }

# containers NAME: how many containers NAME has, of any state.
containers() {
  engine_api "$1" GET "/v1.41/containers/json?all=1" | grep -o '"Id":"' | wc -l
}

# attempt NAME WHAT CONTROL CONFINED: the positive control (sh -c, on the
# host) must succeed and the same attempt in a container must fail.
attempt() {
  local name=$1 what=$2 control=$3 confined=$4
  sh -c "$control" >/dev/null 2>&1
  local c=$?
  crun run "$confined"
  if [ "$c" -ne 0 ]; then
    ok 1 "$name: $what: the positive control failed on the host, so this proves nothing"
  else
    [ "$rc" -ne 0 ]
    ok $? "$name: $what fails in the container (rc $rc) and succeeds on the host"
    [ "$rc" -ne 0 ] || diag "$out"
  fi
}

# engine_checks ENGINE: the checks against one engine (engines_each runs
# the two engines' at the same time, each with a HOME of its own).
engine_checks() {
  local engine=$1
  # A workspace of its own (HOME and its configuration stay), the image.
  engine_begin "$engine" "$PER_ENGINE" || return 0

  # --- the result -----------------------------------------------------------
  t0=$(date +%s%N)
  crun run 'echo out; echo err >&2; exit 3'
  t1=$(date +%s%N)
  is "$rc|$out" "3|out
err
[exit status 3]" "$engine: stdout and stderr joined, the exit status noted"
  diag "$engine: one command's round trip: $(((t1 - t0) / 1000000)) ms"
  # A deadline counts from the launch, the engine's container start with
  # it (doc/container-backend.md, "Deadlines"): the deadlines below outlast
  # twice the round trip just measured, so that each command has begun
  # before its deadline comes (a 2 s deadline was outrun by a loaded
  # engine), and each checks that it had.
  secs=$(((t1 - t0) * 2 / 1000000000 + 2))
  [ "$secs" -ge 5 ] || secs=5
  t0=$(date +%s)
  crun run --timeout "$secs" 'echo before; sleep 60; echo after'
  t1=$(date +%s)
  is "$rc|$out" "124|before
[stopped: the command ran too long]" "$engine: ran too long, with what it printed first"
  [ $((t1 - t0)) -lt $((secs + 10)) ]
  ok $? "$engine: the overrun was stopped and removed within its budget ($((t1 - t0)) s of $secs + 10)"
  # The policy's own deadline: the runner stops the command just before
  # the supervisor's outer kill, and the ending is told as ran too long
  # with what it printed.
  echo '{"sandbox": {"enabled": true, "backend": "container", "limits": {"commandSeconds": '"$secs"'}}}' >"$HOME/.crucible/config.json"
  crun run 'echo early; sleep 60'
  is "$rc|$out" "124|early
[stopped: the command ran too long]" "$engine: the policy's deadline: stopped from inside, told as ran too long"
  echo '{"sandbox": {"enabled": true, "backend": "container"}}' >"$HOME/.crucible/config.json"
  crun run 'seq 1 200000 | tail -n 1'
  is "$rc|$out" "0|200000" "$engine: a pipeline's output arrives whole"
  # The other endings' notes, as every backend gives them: a signal
  # crucible did not send, the capture's head and tail, the ceiling.
  crun run 'echo k; kill -KILL $$'
  like "$out" $'^k\n\\[the command was killed\\]$' "$engine: a command killed by a signal crucible did not send is noted as killed"
  crun run 'head -c 41200 /dev/zero | tr "\0" a; exit 1'
  like "$out" $'^a+\n\\[process output was 41200 bytes; 11456 bytes omitted from the middle during capture\\]\na+\n\\[exit status 1\\]$' \
    "$engine: a long output keeps its head and tail, the capture note at the cut"
  echo '{"sandbox": {"enabled": true, "backend": "container", "limits": {"outputBytes": 100000}}}' >"$HOME/.crucible/config.json"
  crun run 'yes | head -c 1000000; sleep 30'
  like "$out" $'\\[stopped: the command printed more than 100000 bytes, the output ceiling \\(sandbox.limits.outputBytes\\)\\]$' \
    "$engine: a command past the output ceiling is stopped, the ceiling noted"
  echo '{"sandbox": {"enabled": true, "backend": "container"}}' >"$HOME/.crucible/config.json"

  # --- publication ----------------------------------------------------------
  echo one >a.txt
  echo doomed >d.txt
  crun run 'cat a.txt; echo new >n.txt; echo two >a.txt; rm d.txt; mkdir sub; echo s >sub/f'
  is "$rc|$out|$(cat n.txt)|$(cat a.txt)|$([ -e d.txt ] || echo gone)|$(cat sub/f)" \
    "0|one|new|two|gone|s" "$engine: an ordinary exit publishes new, changed and deleted paths"
  crun run 'echo x >nonzero.txt; exit 1'
  is "$rc|$(cat nonzero.txt 2>/dev/null)" "1|x" "$engine: a nonzero exit publishes too"
  crun run --timeout "$secs" 'echo y >stopped.txt && echo written; sleep 60'
  is "$rc|$out|$([ -e stopped.txt ] && echo there || echo absent)" "124|written
[stopped: the command ran too long]|absent" \
    "$engine: a command stopped at its deadline after its write publishes nothing"
  # The host's write comes once the run's start fact is in the journal,
  # after the baseline (taken before the container is made), and the
  # command holds its container until then (the host ends its sleep): a
  # sleep here was outrun by a loaded engine.
  starts=$(cat "$HOME"/.local/state/crucible/*.jsonl 2>/dev/null | grep -c '"fact":"start"')
  hold=$(hold_secs "$engine")
  "$CRUCIBLE" run "sleep $hold; echo z >raced.txt" >"$TEST_TMP/raced.out" 2>"$TEST_TMP/stderr" &
  pid=$!
  for _ in $(seq 1200); do
    [ "$(cat "$HOME"/.local/state/crucible/*.jsonl 2>/dev/null | grep -c '"fact":"start"')" -gt "$starts" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo host >host.txt
  hold_end "$hold" "$pid"
  wait "$pid" && rc=0 || rc=$?
  out=$(cat "$TEST_TMP/raced.out")
  like "$rc|$([ -e raced.txt ] && echo there || echo absent)|$out" \
    "^0\\|absent\\|.*published nothing: .*changed by something outside the sandbox" \
    "$engine: a root changed while it ran publishes nothing"
  rm -f host.txt
  crun run 'ln -s /etc/passwd link; echo ok >alongside.txt'
  like "$([ -e link ] || [ -L link ] && echo there || echo absent)|$([ -e alongside.txt ] && echo there || echo absent)|$out" \
    "^absent\\|absent\\|.*published nothing: the changes the container sent back were refused \\(link: a link out of the workspace\\)" \
    "$engine: a changes stream with a link out is refused whole"
  crun run 'echo x >su; chmod 4755 su'
  [ ! -u su ] && [ ! -g su ]
  ok $? "$engine: a setuid bit set inside never reaches the workspace"
  rm -f su

  # --- the hardening, from inside -------------------------------------------
  crun run 'id -u; id -G; grep -E "^(NoNewPrivs|CapEff|CapBnd|Seccomp):" /proc/self/status | tr -s "\t" " "'
  is "$out" "65534
65534
CapEff: 0000000000000000
CapBnd: 0000000000000000
NoNewPrivs: 1
Seccomp: 2" "$engine: uid 65534, no capability at all, no_new_privs, seccomp filtering"
  crun run 'touch /etc/x 2>&1 || touch /bin/x 2>&1; ls /sys/class/net'
  like "$out" "Read-only file system.*
lo$" "$engine: the root filesystem is read-only; lo is the only interface"
  # Sorted: Podman mounts the two in either order.
  crun run 'grep -E " /workspace | /tmp " /proc/mounts | cut -d" " -f2-4 | sort'
  like "$out" "^/tmp tmpfs rw,nosuid,nodev,[^
]*size=262144k
/workspace tmpfs rw,nosuid,nodev,[^
]*size=1048576k$" "$engine: /workspace and /tmp are sized tmpfs mounts, nosuid,nodev"
  [[ "$out" != *noexec* ]]
  ok $? "$engine: and exec (not noexec)"
  crun run 'printf "#!/bin/sh\necho ran from tmp\n" >/tmp/x; chmod +x /tmp/x; /tmp/x'
  is "$out" "ran from tmp" "$engine: a program written to /tmp runs"
  crun run 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory.swap.max /sys/fs/cgroup/pids.max'
  like "$out" "^(1073741824
1073741824
1024|1073741824
0
1024)$" "$engine: memory and swap capped together at 1 GiB, 1024 processes (the cgroup)"
  crun run 'ulimit -n; ulimit -u; ulimit -f'
  is "$out" "4096
1024
2097152" "$engine: open files, processes and file size capped inside too"

  # --- escapes, each with its positive control ------------------------------
  attempt "$engine" "reading a file outside the workspace" \
    "cat $OUTSIDE/secret" "cat $OUTSIDE/secret"
  attempt "$engine" "writing outside the workspace" \
    "echo x >$OUTSIDE/w/control-$engine" "echo x >$OUTSIDE/w/escaped-$engine"
  [ ! -e "$OUTSIDE/w/escaped-$engine" ]
  ok $? "$engine: and nothing was written there"
  attempt "$engine" "reaching a server on the host's loopback" \
    "printf 'GET /secret HTTP/1.0\r\n\r\n' | busybox nc -w 3 127.0.0.1 $PORT | grep -q outside-secret" \
    "printf 'GET /secret HTTP/1.0\r\n\r\n' | nc -w 3 127.0.0.1 $PORT | grep -q outside-secret"
  attempt "$engine" "signalling a host process" \
    "kill -0 $SLEEPER" "kill -0 $SLEEPER"
  attempt "$engine" "making a device node" \
    "rm -f $OUTSIDE/w/null-$engine && mknod $OUTSIDE/w/null-$engine c 1 3" "mknod /tmp/null c 1 3"

  # --- what the engine stores ------------------------------------------------
  # The command holds its container until the host has read its
  # description (the host ends its sleep).
  hold=$(hold_secs "$engine")
  "$CRUCIBLE" run --env CRUCIBLE_TEST_TOKEN=tok-3141592653 "sleep $hold" >/dev/null 2>&1 &
  pid=$!
  desc=
  for _ in $(seq 1200); do
    id=$(engine_api "$engine" GET "/v1.41/containers/json" | grep -o '"Id":"[0-9a-f]*' | head -1 | cut -d'"' -f4)
    [ -n "$id" ] && desc=$(engine_api "$engine" GET "/v1.41/containers/$id/json") && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  hold_end "$hold" "$pid"
  wait "$pid"
  [ -n "$desc" ] && [[ "$desc" != *tok-3141592653* ]] && [[ "$desc" == *'"org.crucible.made-by":"crucible"'* ]]
  ok $? "$engine: the command's credential is not in the container's stored description, which carries crucible's labels"
  # The hardening table's rows no other check reads: the engine keeps no
  # log, the IPC namespace is the container's own, no bind and no mount but tmpfs (as
  # the engine stored them), and the CPU rlimit inside.
  held=$(python3 -c '
import json, sys
d = json.loads(sys.argv[1]); hc = d["HostConfig"]
# Podman stores "shareable" for an IPC namespace of the container alone,
# as dockerd does by default: either is neither the host one nor another.
ipc = "own" if hc["IpcMode"] in ("private", "shareable") else hc["IpcMode"]
print(hc["LogConfig"]["Type"], ipc, len(hc.get("Binds") or []),
      sorted(set(m["Type"] for m in d.get("Mounts") or [])) in ([], ["tmpfs"]))' "$desc" 2>&1)
  crun run 'ulimit -t'
  is "$held|$out" "none own 0 True|3600" \
    "$engine: the engine keeps no log of the output, the IPC namespace is the container's own, no bind or mount but tmpfs; CPU seconds capped inside"

  # --- endings ----------------------------------------------------------------
  "$CRUCIBLE" run 'sleep 120' >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1200); do
    [ "$(containers "$engine")" -gt 0 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  up=$(containers "$engine")
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  left=1
  for _ in $(seq 50); do
    left=$(containers "$engine")
    [ "$left" -eq 0 ] && break
    sleep 0.1
  done
  is "$up|$left" "1|0" "$engine: a SIGKILLed crucible leaves no container within 5 s"

  # --- claims and facts -------------------------------------------------------
  crun sandbox audit --backend container
  like "$rc|$out" "^0\\|.*faults: none" "$engine: sandbox audit --backend container finds no fault"
  [ "$rc" -eq 0 ] || diag "$out"
  crun run 'true'
  like "$(journal | grep '"fact":"start"')" '"backend":"container","background":false,"isolation":"container"' \
    "$engine: the start fact stamps the isolation"
  like "$(journal | grep '"fact":"finish"')" \
    '"container":"[0-9a-f]{12}","image":"sha256:[0-9a-f]{64}","read_back":"NetworkMode none, ReadonlyRootfs, .*PidsLimit [0-9]+, .*AutoRemove","inside":"uid=65534 caps=[0-9a-f,]+ no_new_privs=1 .*pids_max=[0-9]+ rlimits=[0-9a-z,]+"' \
    "$engine: the finish fact has the hardening read back and checked from inside"
  is "$(containers "$engine")" 0 "$engine: no container is left after the commands"
  unset DOCKER_HOST
}
engines_start docker podman
engines_each engine_checks
