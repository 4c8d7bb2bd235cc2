#!/bin/bash
# Numbers keep their '.' under a locale that writes them with ',' (fr_FR):
# crucible takes the person's character set and language from the locale
# and nothing else, so a fractional limit in the configuration is read as
# JSON spells it and shown as the spec spells it.  The locale is made in
# the test's own directory (localedef, LOCPATH), as in tui/translation.sh.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
N=4
plan $N
new_workspace

LOC="$TEST_TMP/locale"
mkdir -p "$LOC" "$HOME/.crucible"
if ! localedef -i fr_FR -f UTF-8 "$LOC/fr_FR.UTF-8" >/dev/null 2>&1; then
  for i in $(seq $N); do
    skip "numbers under fr_FR.UTF-8 $i" "the fr_FR.UTF-8 locale cannot be made (localedef; the locales package)" locale
  done
  exit 0
fi
# The control: the locale made does write a decimal comma.
comma=$(LOCPATH=$LOC LC_ALL=fr_FR.UTF-8 locale decimal_point 2>/dev/null)
is "$comma" "," "the fr_FR.UTF-8 made here writes numbers with a decimal comma"

fr() { LOCPATH=$LOC LC_ALL=fr_FR.UTF-8 crun "$@"; }

echo '{"sandbox": {"limits": {"commandSeconds": 1.5}}}' >"$HOME/.crucible/config.json"
fr sandbox inspect --json
like "$out" '"feature":"command_time_limit","value":1\.5,"unit":"seconds","label":"1\.5s per command"' \
  "commandSeconds 1.5 is read as 1.5 and shown with a '.', not cut at the '.' to 1"

echo '{"sandbox": {"limits": {"commandSeconds": 0.5}}}' >"$HOME/.crucible/config.json"
fr run -- 'sleep 5; echo not stopped'
is "$rc|$err" "124|" "commandSeconds 0.5 is no configuration error (strtod in fr_FR would read 0)"
is "$out" $'(no output)\n[stopped: the command ran too long]' "and it stops the command at its deadline"
