#!/bin/bash
# A key typed while a flood is shown is drawn at once: crucible writes the
# frame with it before its loop waits again or reads any more of the
# flood, not at the next frame tick (strace on the session shows the
# order of its system calls).  And the box still has what was typed, and
# the flood's count row still counts.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=6
tui_have_tmux || tui_skip_all $N "tmux is not installed"
if ! command -v strace >/dev/null 2>&1; then
  plan $N
  for i in $(seq 1 $N); do skip "key during a flood $i" "strace is not installed" strace; done
  exit 0
fi
plan $N
new_workspace
mkdir -p "$HOME/.crucible"
# The ceiling as high as it goes, so that the flood runs its whole time.
printf '{"sandbox":{"limits":{"outputBytes":68719476736}}}\n' \
  >"$HOME/.crucible/config.json"

tui_start
tui_wait "ask mode on (shift+tab to cycle)" >/dev/null
pid=$(tui_crucible_pid)

tui_keys 'timeout 60 yes' Enter
tui_wait "lines ·" 20
ok $? "the flood is shown"

# Trace the session's loop: its waits, its reads and its writes.
trace=$TEST_TMP/trace
strace -o "$trace" -e trace=poll,ppoll,read,write -p "$pid" 2>"$TEST_TMP/strace.err" &
spid=$!
for _ in $(seq 1 100); do
  [ -s "$trace" ] && break
  sleep 0.05
done
[ -s "$trace" ]
ok $? "strace follows the session"

# Three keys at typing pace, each in a read of its own.
letters="Q X Z"
typed=
for k in $letters; do
  sleep 0.3
  tui_keys -l "$k"
  typed+=$k
  tui_wait "› $typed" 10 >/dev/null
done
is "$(tui_capture; printf '%s\n' "$SCREEN" | grep -o "› $typed")" "› $typed" \
  "the box shows the keys typed during the flood"
sleep 0.3
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null

# For each key: the system calls from its read to the first write of the
# terminal that draws it.  The loop's poll (more than one descriptor) or a
# read of anything but the terminal in between would mean the key waited
# for a later turn; ncurses' own typeahead check (poll of fd 0, no wait)
# is not the loop.
between=$(awk -v letters="$letters" '
  BEGIN { n = split(letters, l, " ") }
  {
    if (want == "" && match($0, /^read\(0, "[A-Z]"/)) {
      key = substr($0, 10, 1)
      for (i = 1; i <= n; i++) if (l[i] == key) want = key
      extra = 0
      next
    }
    if (want == "") next
    if ($0 ~ /^write\(1, / && index($0, want) > 0) {
      printf "%s:%d\n", want, extra; found++; want = ""; next
    }
    if ($0 ~ /^p?poll\(\[\{fd=[0-9]+, events=POLLIN\}, \{/ ||
        ($0 ~ /^read\(/ && $0 !~ /^read\(0, /))
      extra++
  }
  END { if (want != "") printf "%s:unwritten\n", want }' "$trace")
is "$(printf '%s\n' "$between" | wc -l | tr -d ' ')" 3 \
  "each of the three keys was read and then written"
is "$(printf '%s\n' "$between" | grep -vc ':0$')" 0 \
  "no loop wait and no read of the flood between a key and its frame"
[ -n "$between" ] || diag "strace: $(tail -5 "$TEST_TMP/strace.err")"
printf '%s\n' "$between" | grep -v ':0$' | sed 's/^/# /'

tui_keys C-u
tui_capture
like "$SCREEN" "[0-9]+ lines · [0-9.]+ [kMG]?B · ctrl\+b to leave it running" \
  "the count row still counts the flood"
tui_keys Escape
