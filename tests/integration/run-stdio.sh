#!/bin/bash
# A confined workload with standard streams of its own
# (sandbox_command.stdio, as an MCP server is started) through the bwrap
# backend: it reads what it is given on stdin, to its end, and its stdout
# and stderr arrive apart; without stdio its input is /dev/null and the
# two share one pipe, as for every command.  As root and as uid 65534.
# TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=4
sec_begin "$PER_IDENTITY"

for who in $ids; do
  sec_become "$who"
  # stdout is the helper's stdout, the workload's stderr its stderr.
  out=$(printf 'hello\n' | (cd "$WS" && "${AS[@]}" "$SANDBOX_RUN" \
    --timeout 30 --stdio -- 'read x; echo got $x; echo err >&2') \
    2>"$TEST_TMP/err") && rc=0 || rc=$?
  err=$(cat "$TEST_TMP/err")
  is "$rc:$out" "0:got hello" \
    "$WHO: the input arrives, and only stdout is on the output"
  is "$(grep -vx 'sandbox_run: .*' <<<"$err")" "err" \
    "$WHO: stderr arrives apart, on its own pipe"

  # The input's end is seen when its writer closes it.
  out=$(printf 'a\nb\nc\n' | (cd "$WS" && "${AS[@]}" "$SANDBOX_RUN" \
    --timeout 30 --stdio -- 'wc -l') 2>/dev/null) && rc=0 || rc=$?
  is "$rc:${out// /}" "0:3" "$WHO: the whole input is read, to its end"

  # Without stdio: no input, stdout and stderr on one pipe.
  out=$(printf 'hello\n' | (cd "$WS" && "${AS[@]}" "$SANDBOX_RUN" \
    --timeout 30 -- 'read x || echo no-input; echo err >&2') \
    2>/dev/null) && rc=0 || rc=$?
  is "$rc:$out" $'0:no-input\nerr' \
    "$WHO: without stdio, stdin is /dev/null and stderr shares stdout"
done
