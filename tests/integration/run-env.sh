#!/bin/bash
# The command's environment is built, not inherited, and its input is
# /dev/null.
. "$CRUCIBLE_SRCDIR/tests/integration/lib.sh"
plan 10
new_workspace

# Only the base list reaches the command; sh itself adds PWD.
out=$(env -i PATH=/usr/bin:/bin HOME=/h LANG=C.UTF-8 LC_ALL=C.UTF-8 LC_CTYPE=C.UTF-8 \
  TERM=dumb TMPDIR=/tmp SECRET_TOKEN=hunter2 OPENAI_API_KEY=sk-x \
  "$CRUCIBLE" run -- 'env | grep -v "^PWD=" | sort')
is "$out" "$(printf 'HOME=/h\nLANG=C.UTF-8\nLC_ALL=C.UTF-8\nLC_CTYPE=C.UTF-8\nPATH=/usr/bin:/bin\nTERM=dumb\nTMPDIR=/tmp')" \
  "exactly PATH HOME LC_ALL LC_CTYPE LANG TERM TMPDIR"

out=$(env -i PATH=/usr/bin:/bin HOME="$HOME" SECRET_TOKEN=hunter2 "$CRUCIBLE" run -- 'env')
ok "$([[ "$out" != *hunter2* && "$out" != *SECRET* ]] && echo 0 || echo 1)" \
  "crucible's own variables do not reach the command"

out=$(env -i PATH=/usr/bin:/bin HOME="$HOME" "$CRUCIBLE" run --env FOO=bar --env 'SPACED=a b' -- 'echo "$FOO|$SPACED"')
is "$out" "bar|a b" "--env names variables"

out=$(env -i PATH=/usr/bin:/bin HOME=/h "$CRUCIBLE" run --env HOME=/other -- 'echo "$HOME"')
is "$out" "/other" "--env replaces a base variable"

crun run -- 'readlink /proc/self/fd/0'
is "$out" "/dev/null" "standard input is /dev/null"

crun run --env 'FOO=1' --env 'FOO=2' -- true
is "$out|$rc" "[refused: environment variable FOO is named twice; nothing was run]|125" "a name given twice is refused"

crun run --env '1BAD=x' -- true
is "$out|$rc" "[refused: environment variable name is not a valid name (letters, digits and _, not starting with a digit): '1BAD'; nothing was run]|125" \
  "a bad name is refused"

big=$(head -c 70000 /dev/zero | tr '\0' x)
crun run --env "BIG=$big" -- true
is "$out|$rc" "[refused: environment is larger than 65536 bytes (at BIG); nothing was run]|125" \
  "an oversized environment is refused"

args=()
for i in $(seq 1 70); do args+=(--env "V$i=x"); done
crun run "${args[@]}" -- true
is "$out|$rc" "[refused: more than 64 environment variables; nothing was run]|125" "too many variables are refused"

crun run --env 'NOEQUALS' -- true
is "$rc|$err" "125|crucible: run: --env takes NAME=VALUE, not 'NOEQUALS'
Usage: crucible run [--timeout S] [--env NAME=VALUE]... [--description TEXT] -- COMMAND
Run COMMAND through sh -c in the current directory, as one bash call,
and print exactly the result the model would get." "--env without = is a usage error"
