#!/bin/bash
# sandbox.network.ports in the full-screen session: a confined server on a
# listed port, left running with Ctrl+B, says where it listens in the
# answer and in the "Still running" list, answers from the host's
# 127.0.0.1 meanwhile, and no longer once x has stopped it.  In a network
# namespace of the test's own, as root (bwrap confines it).
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=6
TUI_COLS=140
tui_have_tmux || tui_skip_all $N "tmux is not installed"
if [ -z "${PORTS_IN_NETNS:-}" ] && [ "$(id -u)" -eq 0 ] &&
  unshare --net true 2>/dev/null; then
  exec env PORTS_IN_NETNS=1 unshare --net /bin/sh -c \
    'ip link set lo up 2>/dev/null || /usr/bin/python3 -c "
import fcntl, socket, struct
s = socket.socket(); ifr = struct.pack(\"16sH\", b\"lo\", 0)
f = struct.unpack(\"16sH\", fcntl.ioctl(s, 0x8913, ifr))[1]
fcntl.ioctl(s, 0x8914, struct.pack(\"16sH\", b\"lo\", f | 1))"; exec "$0" "$@"' "$0" "$@"
fi
[ -n "${PORTS_IN_NETNS:-}" ] ||
  tui_skip_all $N "no network namespace of the test's own (needs root and unshare)"
"$CRUCIBLE_BIN_DIR/helpers/sandbox_run" --probe >/dev/null 2>&1 ||
  tui_skip_all $N "the bwrap backend is unusable here"
command -v curl >/dev/null || tui_skip_all $N "no curl (tools/deps.sh installs it)"
plan $N
new_workspace
mkdir -p "$HOME/.crucible"
printf '%s\n' '{"sandbox":{"enabled":true,"network":{"allowLocalBinding":true,"ports":[5173]}}}' \
  >"$HOME/.crucible/config.json"
echo "the dev server" >"$WS/index.html"

host_get() {
  curl -s --max-time 2 http://127.0.0.1:5173/ 2>/dev/null || echo unreached
}

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys 'python3 -u -m http.server 5173 --bind 127.0.0.1' Enter
tui_wait "Serving HTTP on 127.0.0.1 port 5173" 20 >/dev/null
# The broker looks every 200 ms; the answer is made when Ctrl+B is pressed.
sleep 1
tui_keys C-b
tui_wait "[#1 is listening on 127.0.0.1:5173]"
ok $? "the answer for a server left running says where it listens"
is "$(host_get)" "the dev server" "the server answers from the host's 127.0.0.1"

tui_keys C-b
tui_wait "Still running"
ok $? "ctrl+b at the prompt opens the list"
like "$(tui_block "Still running" 3 | sed -n 3p)" \
  "^› 1\. Bash\(python3 -u -m http.server 5173.* · [0-9]+ B · listening on 127\.0\.0\.1:5173$" \
  "the list's row says where it listens"

tui_keys x
tui_gone "Still running"
ok $? "x stops it"
sleep 0.5
is "$(host_get)" "unreached" "once stopped, the host's port is closed"
