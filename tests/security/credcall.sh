#!/bin/bash
# A credential limited by "commands" (sandbox.credentials.NAME.commands)
# reaching code the line does not name, through the variables the call
# sets (--env, a tool call's "env"; both are the supervisor's req->env).
# The rules read the line's programs; a variable such as LD_PRELOAD makes
# an allowed program (ls) load a library of the workload's, which then
# has the value and writes it, reversed so that no masking sees it, into
# a workspace file that is published.  As root and as uid 65534, confined
# (sandbox.enabled).  TAP.
#
# - control: the same library loaded into ls unconfined, with the value in
#   its environment, writes it out (the injection works);
# - control: the line alone (printenv TOKEN, which the rules list) is
#   given the value;
# - the call setting LD_PRELOAD for ls: the value is withheld (the file
#   written holds nothing of it) and the result says why;
# - any variable set by the call withholds it (the rule is not a list of
#   dangerous names, which could never be complete).
# - crucible's own PATH with a directory a command can fill: an empty
#   entry (the working directory, which is the workspace) or one in the
#   workspace.  The program the rules allow by name (ghx) is then the
#   workspace's own, put there by a command before: unconfined it has the
#   value (control); confined it is not given it, and the result says so.
# - compatibility (sandbox.enabled false): a credential from crucible's
#   own environment ("env") withheld from the line is still in crucible's
#   /proc/PID/environ, which a command of the same user (its descendant:
#   Yama's ptrace_scope 1 allows it) reads unless crucible is not
#   dumpable; crucible made itself so only once it read a value, so a
#   line that got none read it.  The control: crucible with no credential
#   configured is readable so (the walk finds its marker).  uid 65534 only
#   (root reads any process's).
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER=11
sec_begin "$PER"

VAL=Rk4Wm9Xq2Tz7Bn5Lp   # the credential file's value
REV=$(rev <<<"$VAL")    # what the library writes
WHY='[credentials withheld: TOKEN (the call sets environment variables, which can change what its programs run)]'
PWHY="[credentials withheld: TOKEN (PATH has a directory that is relative or that commands can write, so a program the line names may be the workspace's own)]"

CC=$(command -v cc || command -v gcc || true)
if [ -z "$CC" ]; then
  for who in $ids; do
    for ((i = 0; i < PER; i++)); do skip "a limited credential and the call's variables" "no C compiler"; done
  done
  exit 0
fi
cat >"$TEST_TMP/steal.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Loaded into any program: its TOKEN, reversed, into ./stolen.  */
__attribute__ ((constructor)) static void
steal (void)
{
  const char *t = getenv ("TOKEN");
  FILE *f;
  if (t == NULL || (f = fopen ("stolen", "w")) == NULL)
    return;
  for (size_t i = strlen (t); i > 0; i--)
    fputc (t[i - 1], f);
  fputc ('\n', f);
  fclose (f);
}
EOF
"$CC" -shared -fPIC -o "$TEST_TMP/steal.so" "$TEST_TMP/steal.c" || exit 1

for who in $ids; do
  sec_become "$who"
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible"
  printf '%s\n' "$VAL" >"$H/tok"
  chmod 600 "$H/tok"
  printf '{"sandbox":{"enabled":true,"credentials":{"TOKEN":{"file":"%s","commands":["ls","ls *","printenv TOKEN","ghx *"]}}}}\n' \
    "$H/tok" >"$H/.crucible/config.json"
  cp "$TEST_TMP/steal.so" "$WS/steal.so"
  # What a command before left in the workspace: a program named as the
  # rules allow, which writes the value out, reversed.
  mkdir -p "$WS/bin"
  printf '#!/bin/sh\nprintenv TOKEN | rev >stolen\n' >"$WS/bin/ghx"
  chmod 755 "$WS/bin/ghx"
  cp "$WS/bin/ghx" "$WS/ghx"
  [ "$who" = nobody ] && chown -R 65534:65534 "$H" "$WS"
  chmod 755 "$H"
  # cr ARGS...: crucible run as the identity in WS, with CR_PATH for
  # PATH when set; $out, $rc.
  cr() {
    out=$(cd "$WS" && "${AS[@]}" env -i PATH="${CR_PATH:-$PATH}" HOME="$H" "$CRUCIBLE" run "$@" 2>&1) && rc=0 || rc=$?
  }

  (cd "$WS" && "${AS[@]}" env TOKEN="$VAL" LD_PRELOAD="$WS/steal.so" ls >/dev/null)
  is "$(cat "$WS/stolen" 2>/dev/null)" "$REV" \
    "control ($WHO): unconfined, a library loaded into ls has the value and writes it"
  rm -f "$WS/stolen"

  cr -- 'printenv TOKEN'
  ok "$([[ "$out" != *'credentials withheld'* ]] && [[ "$out" == *'*****'* ]] && echo 0 || echo 1)" \
    "control ($WHO): the line the rules list is given the value (masked in its output)" || diag "$out"

  cr --env LD_PRELOAD="$WS/steal.so" -- 'ls'
  ok "$([ ! -e "$WS/stolen" ] || ! grep -q "$REV" "$WS/stolen"; echo $?)" \
    "($WHO): confined, LD_PRELOAD set by the call does not carry the value into another program" ||
    diag "$out" "stolen: $(cat "$WS/stolen" 2>/dev/null)"
  like "$out" "$(sed 's/[][().]/\\&/g' <<<"$WHY")" "($WHO): ... the value is withheld, and the result says why"
  rm -f "$WS/stolen"

  cr --env HARMLESS=1 -- 'printenv TOKEN'
  like "$out" "$(sed 's/[][().]/\\&/g' <<<"$WHY")" \
    "($WHO): any variable the call sets withholds a limited credential"

  # PATH with an empty entry (the working directory), then with the
  # workspace's bin/ first.
  (cd "$WS" && "${AS[@]}" env TOKEN="$VAL" PATH="$PATH:" ghx pr list)
  is "$(cat "$WS/stolen" 2>/dev/null)" "$REV" \
    "control ($WHO): unconfined, with an empty PATH entry, ghx is the workspace's, and has the value"
  rm -f "$WS/stolen"
  CR_PATH="$PATH:" cr -- 'ghx pr list'
  ok "$([ ! -e "$WS/stolen" ] || ! grep -q "$REV" "$WS/stolen"; echo $?)" \
    "($WHO): confined, PATH with an empty entry does not carry the value into the workspace's program" ||
    diag "$out" "stolen: $(cat "$WS/stolen" 2>/dev/null)"
  like "$out" "$(sed 's/[][().]/\\&/g' <<<"$PWHY")" "($WHO): ... the value is withheld, and the result says why"
  rm -f "$WS/stolen"
  CR_PATH="$WS/bin:$PATH" cr -- 'ghx pr list'
  ok "$([ ! -e "$WS/stolen" ] || ! grep -q "$REV" "$WS/stolen"; echo $?)" \
    "($WHO): confined, PATH naming the workspace's bin/ does not either" ||
    diag "$out" "stolen: $(cat "$WS/stolen" 2>/dev/null)"
  rm -f "$WS/stolen"

  # Compatibility: crucible's own environment, walked from a command.
  if [ "$who" != nobody ]; then
    skip "control: a compatibility command reads crucible's environment" "root reads any process's"
    skip "a withheld credential is not in crucible's readable environment" "root reads any process's"
    continue
  fi
  WALK='for p in /proc/[0-9]*; do tr "\0" "\n" <"$p/environ" 2>/dev/null; done | grep "^CRSRC=" | rev'
  printf '{"sandbox":{"enabled":false}}\n' >"$H/.crucible/config.json"
  out=$(cd "$WS" && "${AS[@]}" env -i PATH="$PATH" HOME="$H" CRSRC="$VAL" "$CRUCIBLE" run -- "$WALK" 2>&1)
  like "$out" "$REV" "control ($WHO): with no credential, a compatibility command reads crucible's environment"
  printf '{"sandbox":{"enabled":false,"credentials":{"TOKEN":{"env":"CRSRC","commands":["printenv TOKEN"]}}}}\n' \
    >"$H/.crucible/config.json"
  out=$(cd "$WS" && "${AS[@]}" env -i PATH="$PATH" HOME="$H" CRSRC="$VAL" "$CRUCIBLE" run -- "$WALK" 2>&1)
  ok "$([[ "$out" != *"$REV"* ]] && [[ "$out" == *'credentials withheld: TOKEN'* ]] && echo 0 || echo 1)" \
    "($WHO): a credential withheld from a compatibility command is not read from crucible's environment" ||
    diag "$out"
done
