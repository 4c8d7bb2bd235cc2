#!/bin/bash
# sandbox.network.ports: a confined server on a listed port answers from
# the host's 127.0.0.1 while it runs (and not once it has ended), and at
# localhost:PORT from the session's next confined command (crucible mcp);
# an unlisted port answers from neither (its server is shown to run by
# reaching it inside its own command); a port taken on the host is said
# so and the command still runs; the key is refused without
# allowLocalBinding, below 1024, past 16 ports and in a project file.
# As root and as uid 65534, in a network namespace of the test's own
# (so the ports are free and no other test's are touched).
. "$(dirname "$0")/lib.sh"

PER=22
ids=root
can_drop_privileges && ids="root nobody"
N=$(($(wc -w <<<"$ids") * PER))

# The whole test in its own network namespace, loopback up.
if [ -z "${PORTS_IN_NETNS:-}" ] && [ "$(id -u)" -eq 0 ] &&
  unshare --net true 2>/dev/null; then
  exec env PORTS_IN_NETNS=1 unshare --net /bin/sh -c \
    'ip link set lo up 2>/dev/null || /usr/bin/python3 -c "
import fcntl, socket, struct
s = socket.socket(); ifr = struct.pack(\"16sH\", b\"lo\", 0)
f = struct.unpack(\"16sH\", fcntl.ioctl(s, 0x8913, ifr))[1]
fcntl.ioctl(s, 0x8914, struct.pack(\"16sH\", b\"lo\", f | 1))"; exec "$0" "$@"' "$0" "$@"
fi
plan "$N"

SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
why=
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  [ -x "$SANDBOX_RUN" ] || why="no $SANDBOX_RUN (make check installs it)"
fi
command -v curl >/dev/null || why="no curl (tools/deps.sh installs it)"
[ -n "${PORTS_IN_NETNS:-}" ] || why="no network namespace of the test's own (needs root and unshare)"
if [ -n "$why" ]; then
  for i in $(seq "$N"); do skip "sandbox.network.ports" "$why" bwrap; done
  exit 0
fi

# config JSON: the home configuration.
config() {
  printf '%s\n' "$1" >"$H/.crucible/config.json"
  [ "$who" = nobody ] && chown 65534:65534 "$H/.crucible/config.json"
  return 0
}
ON='"sandbox":{"enabled":true,"network":{"allowLocalBinding":true'

# run_as ARGS...: crucible run ARGS in WS as the identity; $out, $rc.
run_as() {
  local as=()
  [ "$who" = nobody ] && as=(as_nobody)
  out=$(cd "$WS" && HOME="$H" "${as[@]}" "$CRUCIBLE" run "$@" 2>&1) && rc=0 || rc=$?
}

# host_get PORT: what the host's 127.0.0.1:PORT answers, or "unreached".
host_get() {
  curl -s --max-time 2 "http://127.0.0.1:$1/" 2>/dev/null || echo unreached
}

# A server on 5173 (listed) and 5174 (not), and inside the command itself
# both answering (the control that the unlisted one ran); then it waits.
SERVE='mkdir -p site && echo "the dev server" >site/index.html &&
/usr/bin/python3 -m http.server 5173 --bind 127.0.0.1 --directory site >/dev/null 2>&1 &
/usr/bin/python3 -m http.server 5174 --bind 127.0.0.1 --directory site >/dev/null 2>&1 &
for i in $(seq 50); do curl -s localhost:5174/ >/dev/null && break; sleep 0.1; done
echo "inside 5173: $(curl -s localhost:5173/)"; echo "inside 5174: $(curl -s localhost:5174/)"
sleep 5'

for who in $ids; do
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible"
  [ "$who" = nobody ] && chown -R 65534:65534 "$WS" "$H"

  # --- the key --------------------------------------------------------
  config "{$ON}}}"
  run_as -- 'echo ran'
  is "$rc:$out" "0:ran" "$who: control: allowLocalBinding alone runs"
  config "{\"sandbox\":{\"enabled\":true,\"network\":{\"ports\":[5173]}}}"
  run_as -- 'echo ran'
  like "$rc:$out" "sandbox\.network\.ports: needs sandbox\.network\.allowLocalBinding set to true" \
    "$who: ports without allowLocalBinding are refused, naming the key"
  [[ $out != *ran* ]]
  ok $? "$who: ... and nothing ran"
  config "{$ON,\"ports\":[5173]}}}"
  run_as -- 'echo ran'
  is "$rc:$out" "0:ran" "$who: control: ports with allowLocalBinding run"
  config "{$ON,\"ports\":[1023]}}}"
  run_as -- 'echo ran'
  like "$out" "sandbox\.network\.ports: expected an array of port numbers from 1024 to 65535" \
    "$who: a port below 1024 is refused"
  config "{$ON,\"ports\":[$(seq -s, 2001 2017)]}}}"
  run_as -- 'echo ran'
  like "$out" "sandbox\.network\.ports: more than 16 entries" "$who: more than 16 ports are refused"
  config "{$ON,\"ports\":[$(seq -s, 2001 2016)]}}}"
  run_as -- 'echo ran'
  is "$rc:$out" "0:ran" "$who: control: 16 ports run"
  config "{$ON}}}"
  mkdir -p "$WS/.crucible"
  printf '{"sandbox":{"network":{"ports":[5173]}}}\n' >"$WS/.crucible/config.json"
  [ "$who" = nobody ] && chown -R 65534:65534 "$WS/.crucible"
  run_as -- 'echo ran'
  like "$out" "sandbox\.network\.ports: may only be set in the home configuration" \
    "$who: a project file naming ports gets the home-only error"
  rm -rf "$WS/.crucible"

  # --- crucible run: the host's 127.0.0.1 ------------------------------
  config "{$ON,\"ports\":[5173]}}}"
  (run_as --timeout 30 -- "$SERVE"; printf '%s' "$out" >"$TEST_TMP/serve.out") &
  s_pid=$!
  listed=unreached
  for ((i = 0; i < 100; i++)); do
    listed=$(host_get 5173)
    [ "$listed" = "the dev server" ] && break
    sleep 0.1
  done
  unlisted=$(host_get 5174)
  wait "$s_pid"
  serve_out=$(cat "$TEST_TMP/serve.out")
  is "$listed" "the dev server" "$who: a listed port of a confined server answers from the host's 127.0.0.1"
  like "$serve_out" "inside 5174: the dev server" "$who: control: the unlisted server ran (it answers inside its own command)"
  is "$unlisted" "unreached" "$who: an unlisted port does not answer from the host"
  is "$(host_get 5173)" "unreached" "$who: once the server's command has ended, the host's port is closed"

  # --- a port taken on the host ---------------------------------------
  mkdir -p "$TEST_TMP/hostsite" && echo "the host's own" >"$TEST_TMP/hostsite/index.html"
  /usr/bin/python3 -m http.server 5173 --bind 127.0.0.1 --directory "$TEST_TMP/hostsite" >/dev/null 2>&1 &
  h_pid=$!
  for ((i = 0; i < 50; i++)); do [ "$(host_get 5173)" = "the host's own" ] && break; sleep 0.1; done
  (run_as --timeout 30 -- 'mkdir -p site && echo "the dev server" >site/index.html &&
/usr/bin/python3 -m http.server 5173 --bind 127.0.0.1 --directory site >/dev/null 2>&1 &
for i in $(seq 50); do curl -s localhost:5173/ >/dev/null && break; sleep 0.1; done
echo "inside: $(curl -s localhost:5173/)"; sleep 1'
  printf '%s:%s' "$rc" "$out" >"$TEST_TMP/taken.out") &
  t_pid=$!
  sleep 1.5
  during=$(host_get 5173)
  wait "$t_pid"
  kill "$h_pid" 2>/dev/null
  wait "$h_pid" 2>/dev/null
  taken_out=$(cat "$TEST_TMP/taken.out")
  like "$taken_out" "^0:inside: the dev server" "$who: with the host's port taken, the command still runs and serves inside"
  like "$taken_out" "\[the command listened on 5173; the host's 127\.0\.0\.1 had it taken already, so it was not reachable there\]" \
    "$who: the result says the host's port was taken"
  is "$during" "the host's own" "$who: the host's own server on the port keeps it"

  # --- the session: the next command, and the left-running answer -----
  config "{$ON,\"ports\":[5173]}},\"permissions\":{\"mode\":\"fullAccess\"}}"
  as=()
  [ "$who" = nobody ] && as=(as_nobody)
  mcp_out=$(cd "$WS" && HOME="$H" "${as[@]}" /usr/bin/python3 - "$CRUCIBLE" "$CRUCIBLE_SRCDIR/tests/helpers" <<'PY' 2>&1
import subprocess, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
from mcp_client import start
mcp = start(sys.argv[1], 90)
p, call = mcp.p, mcp.call
def host(port):
    r = subprocess.run(["curl", "-s", "--max-time", "2", "http://127.0.0.1:%d/" % port],
                       capture_output=True, text=True)
    return r.stdout.strip() or "unreached"
first = call(1, "bash", background=True, command=
    "mkdir -p site && echo 'the dev server' >site/index.html && "
    "/usr/bin/python3 -m http.server 5174 --bind 127.0.0.1 --directory site >/dev/null 2>&1 & "
    "exec /usr/bin/python3 -m http.server 5173 --bind 127.0.0.1 --directory site >/dev/null 2>&1")
for _ in range(50):
    if host(5173) != "unreached":
        break
    time.sleep(0.1)
first += call(2, "bash_output", number=1)
print("first:", first.replace("\n", " "))
print("listed:", call(3, "bash", command="curl -s --max-time 3 http://localhost:5173/ || echo unreached").strip())
print("listed6:", call(4, "bash", command="curl -s -g --max-time 3 'http://[::1]:5173/' || echo unreached").strip())
print("unlisted:", call(5, "bash", command="curl -s --max-time 3 http://localhost:5174/ || echo unreached").strip())
# The next command's broker forwards 5173 with listeners of its own: the
# workload holds none of them (nor any socket), and a socket it makes is
# counted (the control).
COUNT = ("import os, socket, sys\n"
         "s = socket.socket() if sys.argv[1] == 'one' else None\n"
         "def kind(f):\n"
         "    try:\n"
         "        return os.readlink('/proc/self/fd/' + f)\n"
         "    except OSError:\n"
         "        return ''\n"
         "print(sum(kind(f).startswith('socket:') for f in os.listdir('/proc/self/fd')))")
print("sockets held:", call(6, "bash", command="/usr/bin/python3 -c \"$C\" none", env={"C": COUNT}).strip())
print("sockets control:", call(7, "bash", command="/usr/bin/python3 -c \"$C\" one", env={"C": COUNT}).strip())
print("host:", host(5173))
p.stdin.close()
p.terminate()
p.wait(20)
print("host after:", host(5173))
PY
  )
  like "$mcp_out" "first:.*\[#1 is listening on 127\.0\.0\.1:5173\]" \
    "$who: the answer for a server left running says where it listens"
  like "$mcp_out" $'\n'"listed: the dev server" "$who: the next command reaches a listed port at localhost"
  like "$mcp_out" $'\n'"listed6: the dev server" "$who: ... and at [::1]"
  like "$mcp_out" $'\n'"unlisted: unreached" "$who: the next command does not reach an unlisted port"
  like "$mcp_out" $'\n'"sockets held: 0" "$who: the next command's workload holds none of its broker's forwarding sockets"
  like "$mcp_out" $'\n'"sockets control: 1" "$who: control: a socket the workload makes is counted"
  like "$mcp_out" $'\n'"host: the dev server"$'\n'"host after: unreached" \
    "$who: the session's server answers from the host until crucible ends"
done
