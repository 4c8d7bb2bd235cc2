#!/bin/bash
# An attacker's pass over the remembered probe's records (issue 17), from
# inside a confined command whose workspace holds the user's private state
# directory (/var/tmp/crucible-code-sandbox-<uid>-v1: a workspace of /,
# /var or /var/tmp).  A record is believed when it is a regular file with
# one name, owned by the reader and writable by no one else, in that
# directory (sandbox/statedir.c, statedir_probe_trusted): exactly what a
# file the command writes there and publication then writes on the host
# is.  So the command could plant (or replace) a record for any key it
# computes from what it can read (bwrap, the broker, crucible, uname), and
# the mcp__<server> grants and publication's own state beside them.  The
# state directory is now kept read-only inside, as .git is, and refused at
# publication.  As root and as uid 65534, through crucible mcp (the call
# runs in the sandbox kept prepared ahead) and crucible run; each attempt
# with its positive control.  A workspace that is the state directory or
# lies below it (someone looking into it, or into its quarantine) is
# refused: the command there could write the records themselves.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER=11
sec_begin "$PER"

PARENT=/var/tmp # STATEDIR_PARENT: the workspace that holds the state directory

# The crucible mcp server in $PARENT as the identity, one bash call ($1),
# its reply on stdout.
rs_mcp_call() {
  local line
  coproc RS {
    cd "${RS_WS:-$PARENT}" && sec_exec env -i PATH="$PATH" HOME="$H" "$CRUCIBLE" mcp 2>>"$TEST_TMP/mcp.err"
  }
  local pid=$RS_PID in=${RS[1]} out=${RS[0]}
  printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}' >&"$in"
  IFS= read -r -t 30 line <&"$out"
  printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"$in"
  # The kept sandbox is made once the server is idle: the call comes
  # after its policy fact (bounded; a call before it runs fresh, which
  # the crucible run case covers anyway).
  for _ in $(seq 100); do
    grep -qs '"ahead":"kept"' "$H"/.local/state/crucible/*.jsonl && break
    [ -n "${RS_WS:-}" ] && break
    sleep 0.1
  done
  local args
  args=$(python3 -c 'import json,sys; print(json.dumps({"command":sys.argv[1]}))' "$1")
  printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":$args}}" >&"$in"
  IFS= read -r -t 60 line <&"$out" || line=TIMEOUT
  printf '%s' "$line"
  exec {in}>&-
  wait_gone "$pid" 10
  wait "$pid" 2>/dev/null
}

# rs_believed FILE: whether FILE is what statedir_probe_trusted believes
# (regular, one link, the identity's, not writable by group or others).
rs_believed() {
  [ -f "$1" ] && [ ! -L "$1" ] || return 1
  local s
  s=$(stat -c '%h %u %a' "$1") || return 1
  set -- $s
  [ "$1" = 1 ] && [ "$2" = "$uid" ] && [ $((8#$3 & 8#022)) = 0 ]
}

for who in $ids; do
  sec_become "$who"
  uid=0
  [ "$who" = nobody ] && uid=65534
  SD=crucible-code-sandbox-$uid-v1
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible"
  printf '{"sandbox":{"enabled":true},"permissions":{"mode":"fullAccess"}}\n' >"$H/.crucible/config.json"
  [ "$who" = nobody ] && chown -R 65534:65534 "$H"
  chmod 755 "$H"
  NAME=probe-review-speed-$$-$who # never a key's digest: nothing reads it
  REC=$PARENT/$SD/$NAME
  PLANT="echo ran; printf 'crucible probe record v2: passed\nkey %064d\nversion bubblewrap 0.8.0\n' 0 >$SD/$NAME && echo planted"

  # The state directory exists once a confined command was prepared.
  rs_mcp_call 'true' >/dev/null
  ok "$([ -d "$PARENT/$SD" ] && echo 0 || echo 1)" "($WHO): the state directory is there, in the workspace $PARENT"

  # Control: unconfined, the same write lands there, as a believed record.
  rm -f "$REC"
  (cd "$PARENT" && "${AS[@]}" /bin/sh -c "$PLANT") >/dev/null 2>&1
  rs_believed "$REC"
  ok $? "control ($WHO): unconfined, a record written in the state directory is one crucible would believe"
  rm -f "$REC"

  # Through crucible mcp, in the sandbox kept prepared ahead.
  reply=$(rs_mcp_call "$PLANT")
  like "$reply" '"text":"ran' "($WHO): crucible mcp ran the call" || diag "$reply" "$(tail -3 "$TEST_TMP/mcp.err")"
  ok "$([ ! -e "$REC" ] && echo 0 || echo 1)" \
    "($WHO): a record the call wrote in the state directory is not on the host (crucible mcp, kept sandbox)" ||
    diag "$(ls -l "$REC")" "$reply"
  rm -f "$REC"

  # Through crucible run, prepared for the command.
  out=$(cd "$PARENT" && "${AS[@]}" env -i PATH="$PATH" HOME="$H" timeout 60 "$CRUCIBLE" run -- "$PLANT" 2>&1)
  like "$out" 'ran' "($WHO): crucible run ran the command" || diag "$out"
  ok "$([ ! -e "$REC" ] && echo 0 || echo 1)" \
    "($WHO): a record the command wrote in the state directory is not on the host (crucible run)" ||
    diag "$(ls -l "$REC")" "$out"
  rm -f "$REC"

  # And the command was told why: the state directory is read-only inside.
  out=$(rs_mcp_call "touch $SD/$NAME 2>&1 || echo refused")
  like "$out" 'refused' "($WHO): inside, the state directory cannot be written" || diag "$out"
  rm -f "$REC"
  # The workspace is the state directory itself, or its quarantine: the
  # control writes there unconfined; confined, the command is refused and
  # nothing is written.
  for sub in "" /quarantine; do
    mkdir -p "$PARENT/$SD$sub"
    [ "$who" = nobody ] && chown 65534:65534 "$PARENT/$SD$sub"
    chmod 700 "$PARENT/$SD$sub"
    F=$PARENT/$SD$sub/$NAME
    rm -f "$F"
    (cd "$PARENT/$SD$sub" && "${AS[@]}" /bin/sh -c "echo forged >$NAME")
    rs_believed "$F"
    ok $? "control ($WHO): unconfined, a file written in the workspace $SD$sub is one crucible would believe"
    rm -f "$F"
    reply=$(RS_WS=$PARENT/$SD$sub rs_mcp_call "echo ran; echo forged >$NAME")
    out=$(cd "$PARENT/$SD$sub" && "${AS[@]}" env -i PATH="$PATH" HOME="$H" timeout 60 "$CRUCIBLE" run -- "echo ran; echo forged >$NAME" 2>&1)
    ok "$([ ! -e "$F" ] && [[ $reply == *"inside the sandbox state directory"* ]] &&
      [[ $out == *"inside the sandbox state directory"* ]] && echo 0 || echo 1)" \
      "($WHO): a workspace of $SD$sub is refused (crucible mcp and crucible run), nothing written" ||
      diag "$reply" "$out" "$(ls -l "$F" 2>&1)"
    rm -f "$F"
  done
done
