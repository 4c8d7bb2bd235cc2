#!/bin/bash
# The /sandbox panel: the Settings tab and the Dependencies tab, and
# /sandbox enable|disable doing what `crucible sandbox enable|disable` does.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=17
tui_have_tmux || tui_skip_all $N "tmux is not installed"
plan $N
new_workspace
TUI_ROWS=40 TUI_COLS=110

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
tui_keys /sandbox Enter
tui_wait "Sandbox  [Settings]    Dependencies"
ok $? "/sandbox opens on the Settings tab"
# The screen read once its last row is drawn too: the title alone can be
# caught mid-frame (CI under ASan read the first four rows and no keys).
tui_wait "tab switches · esc to close" >/dev/null
expected="  enabled      no (the default)
  backend      compat (unconfined)
  workspace    $WS
  writable     not restricted: confinement is off
  read-only    not restricted: confinement is off
  network      not restricted: confinement is off
  limits       output 10485760 bytes · 1200 s a command · 4 at once · cpu, open files: not restricted"
is "$(tui_block "  enabled" 7)" "$expected" \
  "the Settings tab, unconfined: each row says what holds with confinement off"
is "$(tui_row $((TUI_ROWS - 1)))" \
  "tab switches · esc to close · /sandbox enable|disable changes it" \
  "the panel's keys"

tui_keys Tab
tui_wait "Sandbox   Settings    [Dependencies]"
ok $? "tab switches to the Dependencies tab"
deps=$(tui_block "Sandbox   Settings    [Dependencies]" 14)
# Each requirement is found or not, and says why; the positive and the
# negative forms are both pinned so that the tab is checked on any machine.
like "$deps" $'\n  [✓✗] bubblewrap +[^\n]+' "bubblewrap: found or why not"
# Every trusted candidate, pinned by its digest, or where each was looked
# for and why it was turned down (which must not happen where bwrap is
# required).
if [[ "$deps" == *"✓ bubblewrap"* ]] \
  || [[ ",${CRUCIBLE_TEST_REQUIRE:-}," == *",bwrap,"* ]]; then
  like "$deps" $'\n  ✓ bubblewrap +/[^ ]*/bwrap \\(SHA-256 [0-9a-f]{12}…\\)' \
    "bubblewrap: each trusted candidate with its digest"
else
  like "$deps" $'\n  ✗ bubblewrap +no trusted bwrap was found: ' \
    "bubblewrap: where it was looked for, and why not"
fi
like "$deps" $'\n    probed options +--unshare-all --unshare-user --disable-userns' \
  "the options the probe asks bwrap's --help for"
like "$deps" $'\n  [✓✗] broker +[^\n]+' "the broker: found or why not"
if [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ]; then
  like "$deps" $'\n  ✓ user namespaces +up to [0-9]+' "user namespaces: found"
else
  like "$deps" $'\n  ✗ user namespaces +' "user namespaces: not available, and why"
fi
if grep -q $'\toverlay$' /proc/filesystems; then
  like "$deps" $'\n  ✓ overlay +in /proc/filesystems' "overlay: found"
else
  like "$deps" $'\n  ✗ overlay +not in /proc/filesystems' "overlay: not found"
fi
like "$deps" $'\n  [✓✗] probe +[^\n]+' "the probe of the backend"
tui_keys Escape
tui_gone "Dependencies"

# /sandbox enable says what `crucible sandbox enable` says, and writes the
# same file (or, where it cannot be enforced, writes nothing).
mkdir -p "$TEST_TMP/cli-home"
cli=$(cd "$WS" && HOME="$TEST_TMP/cli-home" "$CRUCIBLE" sandbox enable 2>&1)
cli=${cli#crucible: }
cli=${cli//$TEST_TMP\/cli-home/$HOME}
tui_keys '/sandbox enable' Enter
tui_wait "${cli:0:30}"
ok $? "/sandbox enable answers as crucible sandbox enable does"
if [ -f "$TEST_TMP/cli-home/.crucible/config.json" ]; then
  is "$(cat "$HOME/.crucible/config.json" 2>/dev/null)" \
    "$(cat "$TEST_TMP/cli-home/.crucible/config.json")" \
    "the home configuration is written as the command writes it"
else
  ok "$([ ! -e "$HOME/.crucible/config.json" ]; echo $?)" \
    "where enabling cannot be enforced nothing is written"
fi
tui_keys C-d
tui_exited 10

# Confined, each row says what a command gets: the workspace and the
# configured roots, the network closed or the domains through the proxy,
# every ceiling.
settings_confined() {
  printf '%s\n' "$1" >"$HOME/.crucible/config.json"
  tui_start
  tui_wait "mode on (shift+tab to cycle)" >/dev/null
  tui_keys /sandbox Enter
  tui_wait "Sandbox  [Settings]    Dependencies" >/dev/null
  # The panel's last row, so that the screen taken holds all of it (under
  # load a capture can land between the header and the rows).
  tui_wait "$3" >/dev/null
  BLOCK=$(tui_block "  enabled" "$2")
  tui_keys Escape C-d
  tui_exited 10
}
mkdir -p "$HOME/.crucible" "$WS/docs" "$WS/.crucible"
# With MCP servers too (their rows come after these, checked below), one
# of them disabled by the project.
printf '{"disabledMcpServers": ["old"]}\n' >"$WS/.crucible/config.json"
settings_confined '{"sandbox": {"enabled": true}, "mcpServers": {"files": {"command": "npx"}, "everything": {"command": "srv", "optional": true}, "old": {"command": "old"}}}' 7 \
  "not started: disabledMcpServers names it"
SERVERS=$(tui_block "  MCP servers" 3)
rm -f "$WS/.crucible/config.json"
is "$BLOCK" "  enabled      yes ($HOME/.crucible/config.json)
  backend      linux-bubblewrap
  workspace    $WS
  writable     the workspace
  read-only    none
  network      closed
  limits       output 10485760 bytes · cpu 3600 s · 4096 open files · 1200 s a command · 4 at once" \
  "the Settings tab, confined: the workspace, a closed network, every ceiling"
# The configured MCP servers, after the limits: each with whether it would
# run confined, in `crucible sandbox inspect`'s words.
if (cd "$WS" && "$CRUCIBLE" sandbox inspect | grep -q '^no sandbox backend was found:'); then
  state="not started: no sandbox backend was found, and servers are never run unconfined while sandbox.enabled is true"
else
  state=confined
fi
is "$SERVERS" "  MCP servers  files       $state
               everything  $state, optional
               old         not started: disabledMcpServers names it" \
  "the Settings tab: each configured server, whether it would run confined, the disabled one not started"
settings_confined '{"sandbox": {"enabled": true, "filesystem": {"readOnly": ["docs"]}, "network": {"domains": ["registry.npmjs.org", "*.pypi.org"]}, "limits": {"cpuSeconds": 60}}}' 9 \
  "  MCP servers  none"
is "$BLOCK" "  enabled      yes ($HOME/.crucible/config.json)
  backend      linux-bubblewrap
  workspace    $WS
  writable     the workspace
  read-only    docs
  network      2 domains, through the host proxy
               registry.npmjs.org
               *.pypi.org
  limits       output 10485760 bytes · cpu 60 s · 4096 open files · 1200 s a command · 4 at once" \
  "the Settings tab, confined with roots and domains: each listed, the domains through the proxy"
is "$(tui_block "  MCP servers" 1)" "  MCP servers  none" \
  "the Settings tab: no MCP server configured, said so"
