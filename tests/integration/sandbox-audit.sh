#!/bin/bash
# `crucible sandbox audit` through the installed binary: the compatibility
# backend and the Linux bubblewrap backend pass with no fault and nothing
# unreached (run as root by make check, and again as an unprivileged user
# by test.sh); --json is one line with no path; no backend to probe exits
# 3 with the probe's error; preparing is all it does (under strace, no
# shell is started and no broker launched).  The lying backends, caught with the
# feature named, are in tests/unit/test_conformance.c and, built against
# the installed library, in tests/integration/sandbox-audit-library.sh.

. "$(dirname "$0")/lib.sh"

plan 41

new_workspace
FEATURE_ROW='^  [a-z_]+ +(enforced|observed|unsupported) +(accepted|refused|overclaimed|withheld|unreached|stated|absent)'

# --- the compatibility backend (confinement off, the default) ---------------
crun sandbox audit
is "$rc" 0 "compat: exits 0"
is "$(sed -n 1,2p <<<"$out")" "sandbox audit of compat
  version   $("$CRUCIBLE" --version | sed 's/^crucible //')" \
  "compat: the header names the backend and its version"
like "$out" $'\n  mode      unconfined: confinement is disabled \\(sandbox.enabled is false\\)\n' \
  "compat: unconfined, with the reason"
is "$(grep -cE "$FEATURE_ROW" <<<"$out")" 26 "compat: every feature has a row"
is "$(grep -cE '^  [a-z]+ +(holds|does not hold|unreached|not tested)$' <<<"$out")" 8 \
  "compat: every family has a row"
like "$out" $'\n  filesystem            unsupported  refused\n' \
  "compat: filesystem disclaimed and refused"
like "$out" $'\n  command_time_limit    enforced     accepted\n' \
  "compat: command_time_limit claimed and accepted"
like "$out" $'\n  pty                   unsupported  absent \\(read, not tested\\)\n' \
  "compat: pty read, not tested"
like "$out" $'\nfaults: none$' "compat: no fault, and nothing unreached"

crun sandbox audit --json
is "$rc" 0 "compat --json: exits 0"
is "$(printf '%s\n' "$out" | wc -l)" 1 "compat --json: one line"
like "$out" '^\{"format_version":1,"kind":"sandbox-audit","status":"pass","backend":\{"id":"compat",' \
  "compat --json: format_version, kind, status, backend"
like "$out" '"faults":0,"unreached":0\}$' "compat --json: no fault, nothing unreached"
like "$out" '"enabled":false,"confined":false,"disabled_reason":"confinement is disabled \(sandbox.enabled is false\)","features":\[\{"feature":"filesystem","family":"isolation","claim":"unsupported","answer":"refused","exercised":true,"fault":false,"reason":"the policy requires filesystem, which the compat backend does not enforce"\}' \
  "compat --json: not enabled, not confined, the reason, the claims and answers"
is "$(grep -o '"feature":' <<<"$out" | wc -l)|$(grep -o '"exercised":false' <<<"$out" | wc -l)" "26|3" \
  "compat --json: every feature, three of them read, not tested"
like "$out" ',"families":\{"isolation":"holds","materialization":"holds","network":"holds","resources":"holds","terminal":"not tested","persistence":"holds","accounting":"holds","cost":"holds"\},' \
  "compat --json: every family's verdict"
[[ "$out" != */* ]]
ok $? "compat --json: no path at all"

# --- the Linux backend -------------------------------------------------------
crun sandbox audit --backend linux-bubblewrap
bw_out=$out bw_rc=$rc bw_err=$err
if [ "$bw_rc" -eq 3 ]; then
  for d in "bwrap: exits 0" "bwrap: confined" "bwrap: no fault" \
    "bwrap: nothing unreached" "bwrap: isolation holds" \
    "bwrap: the configuration's choice is audited" "bwrap --json: pass"; do
    skip "$d" "no usable bwrap backend: $bw_err" bwrap
  done
else
  is "$bw_rc" 0 "bwrap: exits 0"
  like "$bw_out" $'^sandbox audit of linux-bubblewrap\n  version   [^\n]+\n  mode      confined\n' \
    "bwrap: confined"
  like "$bw_out" $'\nfaults: none($|\n)' "bwrap: no fault"
  [[ "$bw_out" != *unreached* ]]
  ok $? "bwrap: nothing unreached"
  [ "$bw_rc" -eq 0 ] || diag "$bw_out"
  like "$bw_out" $'\n  isolation             holds\n' "bwrap: isolation holds"
  # Confinement enabled by the project selects the Linux backend.
  mkdir -p .crucible
  printf '{"sandbox":{"enabled":true}}\n' >.crucible/config.json
  crun sandbox audit
  is "$(sed -n 1p <<<"$out")|$rc" "sandbox audit of linux-bubblewrap|0" \
    "bwrap: the configuration's choice is audited"
  crun sandbox audit --json
  like "$out|$rc" '^\{"format_version":1,"kind":"sandbox-audit","status":"pass",.*"faults":0,"unreached":0\}\|0$' \
    "bwrap --json: pass"
  rm -rf .crucible
fi

# --- no backend to probe -----------------------------------------------------
out=$(without_bwrap "$CRUCIBLE" sandbox audit --backend linux-bubblewrap 2>"$TEST_TMP/nb") && rc=0 || rc=$?
if [ "$rc" -eq 2 ] && [ ! -s "$TEST_TMP/nb" ]; then
  skip "no backend: exits 3" "needs root to hide bwrap in a private mount namespace"
  skip "no backend: the probe's error, not a table" "needs root"
  skip "no backend --json: unavailable, with the reason" "needs root"
  skip "no backend --json: no path" "needs root"
else
  is "$rc" 3 "no backend: exits 3"
  is "$out|$(cat "$TEST_TMP/nb")" "|crucible: sandbox audit: no backend to audit: the linux-bubblewrap backend cannot be used here: no trusted bwrap was found: /usr/bin/bwrap: not a regular file" \
    "no backend: the probe's error, not a table"
  out=$(without_bwrap "$CRUCIBLE" sandbox audit --backend linux-bubblewrap --json 2>/dev/null) && rc=0 || rc=$?
  is "$out|$rc" '{"format_version":1,"kind":"sandbox-audit","status":"unavailable","backend":{"id":"linux-bubblewrap"},"reason":"the linux-bubblewrap backend cannot be used here: no trusted bwrap was found: <path>: not a regular file"}|3' \
    "no backend --json: unavailable, with the reason"
  [[ "$out" != */* ]]
  ok $? "no backend --json: no path"
fi

# --- usage and failures --------------------------------------------------------
crun sandbox audit --frobnicate
is "$rc|$(sed -n 1p <<<"$err")" "2|crucible: sandbox audit: unknown option '--frobnicate'" \
  "an unknown option exits 2, named"
crun sandbox audit --backend containr
is "$rc|$err" "2|crucible: sandbox audit: unknown backend 'containr' (known: linux-bubblewrap, compat, container)" \
  "an unknown backend exits 2, named"
crun sandbox audit --help
is "$rc|$out" "0|Usage: crucible sandbox audit [--json] [--backend ID]

Offer the sandbox backend one policy per feature (preparing a
session for each and dropping it; no command is started) and
check each answer against what the backend claims.

--backend ID  audit ID (linux-bubblewrap or compat) instead of
              the backend the configuration selects
--json        one line of JSON

Exit status: 0 no fault, 1 a fault, 2 usage, 3 no backend could
be probed, 4 the audit could not be run." "--help exits 0 with the whole usage"
crun sandbox frobnicate
is "$rc|$(sed -n 1p <<<"$err")" "2|crucible: sandbox: unknown command 'frobnicate'" \
  "an unknown sandbox subcommand exits 2, named"
crun sandbox enable extra
is "$rc|$(sed -n 1p <<<"$err")" "2|crucible: sandbox enable: unexpected argument 'extra'" \
  "enable takes no argument"
crun sandbox --help
like "$out" $'\n       crucible sandbox audit \\[--json\\] \\[--backend ID\\]\n' \
  "sandbox --help lists audit"

mkdir -p .crucible
printf '{"sandbox":{"enabled":tru}}\n' >.crucible/config.json
crun sandbox audit
like "$rc|$err" "^4\\|crucible: sandbox audit: .*config.json" \
  "a configuration that does not load exits 4, naming the file"
crun sandbox audit --json
is "$out|$rc" '{"format_version":1,"kind":"sandbox-audit","status":"failed","stage":"configuration"}|4' \
  "--json: failed, with the stage"
rm -rf .crucible

# --- preparing is all it does --------------------------------------------------
STRACE_TESTS=("strace compat: only crucible is executed"
  "strace bwrap: no shell started" "strace bwrap: no broker launched for a command"
  "strace: nothing written in the workspace"
  "strace control: a confined command shows its broker and shell")
if ! command -v strace >/dev/null 2>&1; then
  for d in "${STRACE_TESTS[@]}"; do
    skip "$d" "strace is not installed (apt-get install strace)" strace
  done
elif ! strace -f -o /dev/null true 2>/dev/null; then
  for d in "${STRACE_TESTS[@]}"; do
    skip "$d" "strace cannot trace here (ptrace refused)" strace
  done
else
  trace="$TEST_TMP/trace"
  # Whether the trace shows a shell or the broker being executed.
  started_shell() { grep -E 'execve\("[^"]*/sh"' "$trace" >/dev/null; }
  # The probe runs the broker bare to see the namespaces made; a launch
  # hands it the status channel.
  started_broker() { grep -E 'execve\("[^"]*crucible-sandbox[^"]*", \[[^]]*"--status-fd"' "$trace" >/dev/null; }
  traced() {
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq \
      -s 256 -o "$trace" -e trace=execve "$CRUCIBLE" "$@" >/dev/null 2>&1
  }
  traced sandbox audit
  is "$(grep -c 'execve(' "$trace")" 1 "strace compat: only crucible is executed"
  # The probe starts bwrap (its option surface, version and namespaces,
  # with the broker bare); nothing the audit prepares is started.
  traced sandbox audit --backend linux-bubblewrap
  ! started_shell
  ok $? "strace bwrap: no shell started"
  ! started_broker
  ok $? "strace bwrap: no broker launched for a command"
  is "$(find . -mindepth 1 | wc -l)" 0 "strace: nothing written in the workspace"
  # Positive control: the same trace of a command that does run.
  if [ "$bw_rc" -eq 0 ]; then
    mkdir -p .crucible
    printf '{"sandbox":{"enabled":true}}\n' >.crucible/config.json
    traced run -- true
    started_shell && started_broker
    ok $? "strace control: a confined command shows its broker and shell"
    rm -rf .crucible
  else
    skip "strace control: a confined command shows its broker and shell" \
      "no usable bwrap backend" bwrap
  fi
fi
