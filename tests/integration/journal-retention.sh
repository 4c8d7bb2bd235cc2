#!/bin/bash
# The journal's retention (journal.keepDays, home-only, 30 days unless set):
# an ended session's file older than that goes when the next session
# starts; a live session's file stays however old it looks; nothing else in
# the directory is touched; 0 keeps everything; a project cannot set it.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 10
new_workspace
J=$HOME/.local/state/crucible
mkdir -p "$J" "$HOME/.crucible"
chmod 700 "$J"
old=$(printf 'a%.0s' {1..32}).jsonl
recent=$(printf 'b%.0s' {1..32}).jsonl
echo '{}' >"$J/$old"; echo '{}' >"$J/$recent"
chmod 600 "$J/$old" "$J/$recent"
touch -d '31 days ago' "$J/$old"
touch -d '29 days ago' "$J/$recent"
# What is not a session's file stays whatever its age: another name, a
# link to an old file, a directory.
echo notes >"$J/notes.txt"; touch -d '400 days ago' "$J/notes.txt"
ln -s "$J/notes.txt" "$J/$(printf 'c%.0s' {1..32}).jsonl"
mkdir "$J/$(printf 'd%.0s' {1..32}).jsonl"; touch -d '400 days ago' "$J/$(printf 'd%.0s' {1..32}).jsonl"

# A live session: crucible mcp waiting on its input, its own file made to
# look a year old.
mkfifo "$TEST_TMP/in"
"$CRUCIBLE" mcp <"$TEST_TMP/in" >/dev/null 2>&1 &
mcp=$!
exec 9>"$TEST_TMP/in"
live=""
# (Slow to start under a sanitizer: up to 30 s.)
for _ in $(seq 600); do
  live=$(cd "$J" && ls -dt -- *.jsonl 2>/dev/null | grep -vxF -e "$old" -e "$recent" \
    -e "$(printf 'c%.0s' {1..32}).jsonl" -e "$(printf 'd%.0s' {1..32}).jsonl" | head -n 1)
  [ -n "$live" ] && break
  sleep 0.05
done
[ -n "$live" ] || diag "crucible mcp made no journal file within 30 s"
touch -d '365 days ago' "$J/$live"

crun run -- true
is "$rc" 0 "a session starts beside old journals"
ok "$([ ! -e "$J/$old" ] && echo 0 || echo 1)" "an ended session's file older than 30 days is removed"
ok "$([ -f "$J/$recent" ] && echo 0 || echo 1)" "one of 29 days is kept"
ok "$([ -n "$live" ] && [ -f "$J/$live" ] && echo 0 || echo 1)" "a live session's file is kept, however old it looks"
ok "$([ -f "$J/notes.txt" ] && [ -L "$J/$(printf 'c%.0s' {1..32}).jsonl" ] && [ -d "$J/$(printf 'd%.0s' {1..32}).jsonl" ] && echo 0 || echo 1)" \
  "nothing but ended sessions' files is touched: another name, a link, a directory"
exec 9>&-
wait "$mcp"

# Once that session has ended, its file goes like any other.
crun run -- true
ok "$([ ! -e "$J/$live" ] && echo 0 || echo 1)" "the session's file goes once it has ended"

echo '{"journal": {"keepDays": 0}}' >"$HOME/.crucible/config.json"
touch -d '1000 days ago' "$J/$recent"
crun run -- true
ok "$([ -f "$J/$recent" ] && echo 0 || echo 1)" "keepDays 0 keeps every file"
echo '{"journal": {"keepDays": 5}}' >"$HOME/.crucible/config.json"
crun run -- true
ok "$([ ! -e "$J/$recent" ] && echo 0 || echo 1)" "keepDays 5 removes what is older"

rm -f "$HOME/.crucible/config.json"
mkdir -p "$WS/.crucible"
echo '{"journal": {"keepDays": 1}}' >"$WS/.crucible/config.json"
crun run -- true
like "$rc|$err" "^[1-9][0-9]*\|.*journal\.keepDays" "a project file naming journal.keepDays is a configuration error naming the key"

# A file that cannot be looked at is named once, and the session goes on.
rm -rf "$WS/.crucible"
if can_drop_privileges; then
  NH=$TEST_TMP/nobody-home
  mkdir -p "$NH/.local/state/crucible" "$TEST_TMP/nobody-ws"
  chmod 700 "$NH/.local/state/crucible"
  echo '{}' >"$NH/.local/state/crucible/$old"
  chmod 000 "$NH/.local/state/crucible/$old"
  touch -d '90 days ago' "$NH/.local/state/crucible/$old"
  chown -R 65534:65534 "$NH" "$TEST_TMP/nobody-ws"
  chmod 755 "$TEST_TMP"
  out=$(cd "$TEST_TMP/nobody-ws" && as_nobody env -i PATH=/usr/bin:/bin HOME="$NH" "$CRUCIBLE" run -- echo ran 2>&1)
  like "$out" "^crucible: journal\.keepDays: removing old journal $NH/\.local/state/crucible/$old: Permission denied"$'\n'"ran$" \
    "a journal that cannot be removed is named once, and the command still runs"
else
  skip "a journal that cannot be removed is named" "not root: no other identity to make one unreadable to" unprivileged
fi
