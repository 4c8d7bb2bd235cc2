#!/bin/bash
# The French translation: complete (0 untranslated, 0 fuzzy), and the
# session drawn in French under fr_FR.UTF-8 while what the model reads
# stays in English.  The locale is made in the test's own directory
# (localedef, LOCPATH), so the machine's locales are not touched.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
. "$CRUCIBLE_SRCDIR/tests/tui/lib.sh"

N=10
plan $N
new_workspace

if command -v msgfmt >/dev/null; then
  stats=$(msgfmt --statistics -o /dev/null "$CRUCIBLE_SRCDIR/po/fr.po" 2>&1)
  like "$stats" "^[0-9]+ translated messages\.$" \
    "fr.po is complete: no untranslated or fuzzy message ($stats)"
else
  skip "fr.po is complete" "msgfmt is not installed"
fi

if ! tui_have_tmux; then
  for i in $(seq 2 $N); do skip "translated screen $i" "tmux is not installed" tmux; done
  exit 0
fi
LOC="$TEST_TMP/locale"
mkdir -p "$LOC"
if ! localedef -i fr_FR -f UTF-8 "$LOC/fr_FR.UTF-8" >/dev/null 2>&1; then
  for i in $(seq 2 $N); do
    skip "translated screen $i" "the fr_FR.UTF-8 locale cannot be made (localedef; the locales package)" locale
  done
  exit 0
fi

TUI_LANG=fr_FR.UTF-8 TUI_ENV="LOCPATH=$LOC LANGUAGE=fr"
tui_start
tui_wait "mode ask actif (maj+tab pour changer)"
ok $? "the status row is in French"

tui_keys 'seq 1 100; sleep 300' Enter
tui_wait "100 lignes · 292 B · ctrl+b pour la laisser tourner"
ok $? "the count row is in French"
like "$(tui_block "100 lignes" 3 | sed -n 3p)" \
  "^✳ en cours \([0-9]+s · ↓ 292 · échap pour interrompre\)$" \
  "the running row is in French"
tui_keys C-b
tui_wait "[left running as #1; the developer pressed ctrl+b to leave it running"
ok $? "what the model reads is not translated"
is "$(tui_row "$TUI_ROWS")" "  mode ask actif (maj+tab pour changer) · 1 commande" \
  "the count of commands left running is in French"
tui_keys C-b
tui_wait "Toujours en cours"
ok $? "the list is in French"
is "$(tui_row $((TUI_ROWS - 1)))" "échap pour fermer · entrée pour la voir · x pour l'arrêter" \
  "the list's keys are in French"
like "$(tui_block "Toujours en cours" 3 | sed -n 3p)" \
  "^› 1\. Bash\(seq 1 100; sleep 300\) +[0-9]+s · 100 lignes · 292 B$" \
  "a row of the list is in French"
tui_keys x
tui_gone "Toujours en cours"
tui_keys C-d
tui_exited 10
is "$TUI_RC" 0 "the session quits"
