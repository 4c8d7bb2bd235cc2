#!/bin/bash
# An attacker's pass over the sandbox prepared ahead and the credentials
# it is given at GO (last session's code), through crucible mcp, which
# keeps one sandbox prepared for the next call.  As root and as uid 65534,
# each attempt with its positive control.  TAP.
#
# - What one call leaves behind (a file in /tmp, in its HOME, in /dev/shm,
#   a process of its own in a new session, a variable of its call) is seen
#   by the next call, which runs in the sandbox kept prepared meanwhile:
#   unconfined, two commands in a row share all of it (the control);
#   confined, the next call sees none of it and the process is gone.
# - A credential's value (sandbox.credentials, a file) in crucible's
#   memory once the call that had it is over: a core (fs.suid_dumpable 2
#   writes one of an undumpable process, leaving out only MADV_DONTDUMP
#   pages) or root reading /proc/PID/mem would find it in any mapping a
#   core keeps.  The control is the same scan finding a marker of
#   crucible's own environment, and the value itself while the call that
#   has it runs (the masker holds it then).  The environment block the
#   workload's environment is written from (sandbox/bwrap_argv.c,
#   sandbox/bwrap_launch.c) was freed unwiped, and grown by realloc, so
#   the value stayed in crucible's heap after every command.
# - The same user reading crucible's memory once it holds a credential
#   (uid 65534 only; root reads any process's): before the first call it
#   can (the control: crucible is dumpable until it reads a value), after
#   it it cannot.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER=12
sec_begin "$PER"

MARK=Qv3Lm8Tz1Rx6Pw9Ka # in crucible's environment: always in its memory
VAL=Jc5Yd2Nf7Hb4Ge0Ws  # the credential file's value

# A sanitizer build (its memory cannot be scanned whole), or empty.
SANITIZED=$(ldd "$CRUCIBLE" 2>/dev/null | grep -o libasan | head -1)

# ah_scan PID NEEDLE: "KEPT DONTDUMP", how often NEEDLE is in PID's
# mappings a core keeps and in those it leaves out (VmFlags dd).
ah_scan() {
  python3 - "$1" "$2" <<'EOF'
import re, sys
pid, needle = sys.argv[1], sys.argv[2].encode()
kept = skipped = 0
maps = []
cur = None
with open(f"/proc/{pid}/smaps") as f:
    for line in f:
        m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+)", line)
        if m:
            cur = [int(m.group(1), 16), int(m.group(2), 16), m.group(3), False]
            maps.append(cur)
        elif line.startswith("VmFlags:") and cur is not None:
            cur[3] = " dd" in line or line.rstrip().endswith(" dd")
with open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for lo, hi, perms, dd in maps:
        if perms[0] != "r":
            continue
        try:
            mem.seek(lo)
            data = mem.read(hi - lo)
        except OSError:
            continue
        n = data.count(needle)
        if dd:
            skipped += n
        else:
            kept += n
print(kept, skipped)
EOF
}

# The crucible mcp server, as the identity: its pid, and its pipes.
ah_start() {
  coproc MCP {
    cd "$WS" && sec_exec env -i PATH="$PATH" HOME="$H" MARKER="$MARK" \
      "$CRUCIBLE" mcp 2>"$TEST_TMP/mcp.err"
  }
  mcp_pid=$MCP_PID
  mcp_in=${MCP[1]}
  mcp_out=${MCP[0]}
  ah_send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}'
  ah_recv >/dev/null
  ah_send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
}
ah_send() { printf '%s\n' "$1" >&"$mcp_in"; }
ah_recv() {
  local line
  if IFS= read -r -t "${1:-30}" line <&"$mcp_out"; then printf '%s' "$line"; else printf TIMEOUT; fi
}
ah_call() { # ah_call ID ARGS-JSON: send the bash tool's call
  ah_send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":$2}}"
}
ah_journal() { cat "$H"/.local/state/crucible/*.jsonl 2>/dev/null; }
# ah_kept: the newest kept sandbox's ID, once there is one other than
# $kept; empty after 10 s.
ah_kept() { ahead_sandbox "$H/.local/state/crucible" kept "${kept:-}"; }
ah_started_in() { started_sandbox "$H/.local/state/crucible" "$1"; }

LEAVE='echo left >/tmp/ah-left; echo left >"$HOME/ah-left"; echo left >/dev/shm/ah-left-'"$$"' 2>/dev/null; (setsid sleep 121.5 </dev/null >/dev/null 2>&1 &); echo one'
LOOK='cat /tmp/ah-left "$HOME/ah-left" /dev/shm/ah-left-'"$$"' 2>/dev/null; pgrep -f "sleep 121[.]5" >/dev/null && echo sleeping; printf "[%s]" "${GIVEN-unset}"'

for who in $ids; do
  sec_become "$who"
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible"
  printf '%s\n' "$VAL" >"$H/tok"
  chmod 600 "$H/tok"
  printf '{"sandbox":{"enabled":true,"credentials":{"TOKEN":{"file":"%s"}}},"permissions":{"mode":"fullAccess"}}\n' \
    "$H/tok" >"$H/.crucible/config.json"
  [ "$who" = nobody ] && chown -R 65534:65534 "$H"
  chmod 755 "$H"

  # Control: two commands in a row, unconfined, share what the first left.
  CH=$(mktemp -d "$TEST_TMP/ch.XXXXXX")
  [ "$who" = nobody ] && chown 65534:65534 "$CH"
  (cd "$WS" && "${AS[@]}" env HOME="$CH" GIVEN=one /bin/sh -c "${LEAVE//\/tmp\/ah-left/$CH/tmp-left}") >/dev/null 2>&1
  ctl=$(cd "$WS" && "${AS[@]}" env HOME="$CH" /bin/sh -c "${LOOK//\/tmp\/ah-left/$CH/tmp-left}; export GIVEN=one; printf '[%s]\n' \"\$GIVEN\"" 2>&1)
  for p in $(pgrep -f 'sleep 121[.]5'); do kill "$p"; done
  rm -f /dev/shm/ah-left-$$
  [[ "$ctl" == *left*sleeping* ]]
  ok $? "control ($WHO): unconfined, the next command sees the files and the process the last one left" ||
    diag "$ctl"

  ah_start
  kept=$(ah_kept)
  ok "$([ -n "$kept" ] && echo 0 || echo 1)" "($WHO): crucible mcp keeps a sandbox prepared"

  # Same-user reads of crucible's memory, before it holds a value.
  if [ "$who" = nobody ]; then
    before=$(as_nobody cat "/proc/$mcp_pid/environ" 2>/dev/null | tr '\0' '\n' | grep -c MARKER)
    ok "$([ "$before" -ge 1 ] && echo 0 || echo 1)" \
      "control ($WHO): before its first call, the same user reads crucible's memory"
  else
    skip "control: the same user reads crucible's memory" "root reads any process's memory"
  fi

  # The call that leaves things behind; scanned while it runs.
  ah_call 1 "{\"command\":\"$(sed 's/"/\\"/g' <<<"$LEAVE"); sleep 3.7\",\"env\":{\"GIVEN\":\"one\"}}"
  # Scanned once the call's last sleep runs (a fixed wait was outrun by
  # load: the call had not started, or had ended).
  for _ in $(seq 200); do
    pgrep -f 'sleep 3[.]7$' >/dev/null && break
    sleep 0.1
  done
  during=
  [ -z "$SANITIZED" ] && during=$(ah_scan "$mcp_pid" "$VAL")
  reply=$(ah_recv)
  like "$reply" '"text":"one' "($WHO): the first call runs in the kept sandbox and answers" || diag "$(cat "$TEST_TMP/mcp.err")"
  is "$(ah_started_in 1)" "$kept" "($WHO): ... in the kept sandbox (its sandbox ID)"
  ok "$([ -z "$(pgrep -f 'sleep 121[.]5')" ] && [ ! -e "/dev/shm/ah-left-$$" ] && echo 0 || echo 1)" \
    "($WHO): confined, the process it started in a new session is gone when it ends, its /dev/shm file is not the host's"

  # The next call, in the sandbox kept meanwhile.
  prev=$kept
  kept=$(ah_kept)
  ah_call 2 "{\"command\":\"$(sed 's/"/\\"/g' <<<"$LOOK")\"}"
  reply=$(ah_recv)
  is "$reply" '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[unset]"}],"isError":false}}' \
    "($WHO): confined, the next call sees nothing the last one left (files, process, variable)"
  ok "$([ -n "$kept" ] && [ "$kept" != "$prev" ] && [ "$(ah_started_in 2)" = "$kept" ] && echo 0 || echo 1)" \
    "($WHO): ... and it ran in the sandbox kept after the first"

  # The credential in crucible's memory.  A sanitizer build reserves
  # terabytes of shadow and allocator space, which no scan reads whole:
  # there the two checks are left to the plain build.
  if [ -n "$SANITIZED" ]; then
    skip "control: the scan finds crucible's own marker" "crucible is built with AddressSanitizer, whose reserved mappings no scan reads"
    skip "no mapping a core keeps holds the credential's value" "crucible is built with AddressSanitizer, whose reserved mappings no scan reads"
  else
    after=$(ah_scan "$mcp_pid" "$VAL")
    marker=$(ah_scan "$mcp_pid" "$MARK")
    ok "$([ "${marker%% *}" -ge 1 ] && [ "${during%% *}" -ge 1 ] && echo 0 || echo 1)" \
      "control ($WHO): the scan finds crucible's own marker, and the value while the call that has it runs" ||
      diag "marker: $marker" "during: $during"
    ok "$([ "${after%% *}" = 0 ] && echo 0 || echo 1)" \
      "($WHO): once the calls are over, no mapping a core keeps holds the credential's value" ||
      diag "after: $after (kept, left out)"
    diag "$WHO: the value during the call: $during, after: $after (kept, left out)"
  fi
  if [ "$who" = nobody ]; then
    as_nobody cat "/proc/$mcp_pid/environ" >/dev/null 2>&1
    ok "$([ $? -ne 0 ] && echo 0 || echo 1)" \
      "($WHO): once it holds a credential, the same user cannot read crucible's memory"
  else
    skip "the same user cannot read crucible's memory" "root reads any process's memory"
  fi

  exec {mcp_in}>&-
  wait_gone "$mcp_pid" 10
  ok $? "($WHO): crucible mcp ends when its input closes"
  wait "$mcp_pid" 2>/dev/null
done
