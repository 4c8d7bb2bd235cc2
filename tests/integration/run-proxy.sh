#!/bin/bash
# crucible run with sandbox.network.domains: the command reaches the host's
# proxy, and nothing else, through its own credential.  What the command
# sees (the proxy variables, the credential masked in its output, a call
# that names one of them refused), what a connection to the inside port
# meets at the host (407 without the credential, 403 for a name not
# allowed, an allowed literal address refused as loopback) and what the
# journal keeps (the class of each refusal, the counts at the end; never a
# name), and allowLocalBinding from the home configuration.  As root and
# as uid 65534.  The acceptance tests against real
# origins and upstreams are tests/integration/network.sh.
. "$(dirname "$0")/lib.sh"

PER=13
ids=root
can_drop_privileges && ids="root nobody"
plan $(($(wc -w <<<"$ids") * PER))

SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1) || ! command -v curl >/dev/null; then
  why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  [ -x "$SANDBOX_RUN" ] || why="no $SANDBOX_RUN (make check installs it)"
  command -v curl >/dev/null || why="no curl (tools/deps.sh installs it)"
  for i in $(seq $(($(wc -w <<<"$ids") * PER))); do
    skip "crucible run through the proxy" "$why" bwrap
  done
  exit 0
fi

# run_as WHO ARGS...: crucible run ARGS in WS as WHO; $out, $rc.
run_as() {
  local who=$1 as=()
  shift
  [ "$who" = nobody ] && as=(as_nobody)
  out=$(cd "$WS" && HOME="$H" "${as[@]}" "$CRUCIBLE" run "$@" 2>"$TEST_TMP/stderr") && rc=0 || rc=$?
}

# The password of each proxy variable: 32 hex digits, checked inside
# (printing it would only show the masked form).
SHAPE='for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy; do
  eval p=\$$v; pw=${p#http://crucible:}; pw=${pw%@127.0.0.1:3128}
  case "$pw" in "$p"|*[!0-9a-f]*) echo "$v bad";; *) echo "$v ${#pw}";; esac
done; echo "$NO_PROXY|$no_proxy"; printf %s "$pw" | sha256sum | cut -c1-16'

for who in $ids; do
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible"
  printf '{"sandbox":{"enabled":true,"network":{"domains":["allowed.test","127.0.0.1"]}}}\n' \
    >"$H/.crucible/config.json"
  [ "$who" = nobody ] && chown -R 65534:65534 "$WS" "$H"

  run_as "$who" -- "$SHAPE"
  sum1=$(sed -n '$p' <<<"$out")
  is "$rc:$(head -n 5 <<<"$out")" \
    $'0:HTTP_PROXY 32\nHTTPS_PROXY 32\nhttp_proxy 32\nhttps_proxy 32\nlocalhost,127.0.0.1,::1|localhost,127.0.0.1,::1' \
    "$who: the proxy variables carry a 32-hex-digit credential and NO_PROXY is loopback"
  run_as "$who" -- "$SHAPE"
  sum2=$(sed -n '$p' <<<"$out")
  [ -n "$sum1" ] && [ "$sum1" != "$sum2" ]
  ok $? "$who: two commands have different credentials"

  run_as "$who" -- 'printenv HTTPS_PROXY'
  is "$out" "http://crucible:********************************@127.0.0.1:3128" \
    "$who: the credential is masked in the command's output, one * per byte"

  # Inherited proxy settings never reach the command; a call naming one
  # is refused, saying so.
  HTTPS_PROXY=http://upstream.test:8080 run_as "$who" -- 'printenv HTTPS_PROXY | cut -c1-16'
  is "$out" "http://crucible:" "$who: crucible's own environment's proxy is replaced"
  run_as "$who" --env HTTPS_PROXY=http://elsewhere.test:1 -- 'echo ran'
  is "$rc:$out" \
    "125:[refused: environment variable HTTPS_PROXY is crucible's own for this command: its network goes through the host's proxy, which HTTPS_PROXY names; do not send it; nothing was run]" \
    "$who: a call naming a proxy variable is refused, saying so"

  # At the host: 407 with the challenge without the credential ...
  run_as "$who" -- 'curl -sS -i --noproxy "" -x http://127.0.0.1:3128 http://allowed.test/ | tr -d "\r" | sed -n "1p;/^Proxy-Authenticate/p"'
  is "$out" $'HTTP/1.1 407 Proxy Authentication Required\nProxy-Authenticate: Basic realm="crucible"' \
    "$who: without the credential the proxy answers 407 with a Basic challenge"
  # ... 403 naming the key for a name not allowed ...
  run_as "$who" -- 'curl -sS -o body -w "%{http_code}\n" http://other.test/; grep -c sandbox.network.domains body'
  is "$out" $'403\n1' "$who: a name not allowed gets 403, naming the key that allows it"
  # ... and an allowed literal address that is loopback is refused.
  run_as "$who" -- 'curl -sS -o /dev/null -w "%{http_code}\n" --noproxy "" -x "$HTTP_PROXY" http://127.0.0.1:9/'
  like "$out" '^403' "$who: an allowed literal loopback address is refused"

  # The journal: the class of each refusal and the counts, never a name.
  rm -rf "$H/.local/state/crucible"
  run_as "$who" -- 'curl -s -o /dev/null http://other.test/; curl -s -o /dev/null --noproxy "" -x http://127.0.0.1:3128 http://allowed.test/; true'
  journal=$(cat "$H"/.local/state/crucible/*.jsonl)
  like "$journal" '"fact":"network","command":1,"sandbox":"[0-9a-f]{16}","event":"refused","class":"[a-z_]+"}.*"fact":"network","command":1,"sandbox":"[0-9a-f]{16}","event":"refused","class":"[a-z_]+"}.*"fact":"network","command":1,"sandbox":"[0-9a-f]{16}","event":"ended","allowed":0,"refused":2,"bytes_out":0,"bytes_in":0}.*"fact":"cleanup"' \
    "$who: a network fact per refusal, and the counts before the slot is released"
  if grep -q "other.test\|allowed.test" <<<"$journal"; then ok 1 "$who: no name in the journal"; else ok 0 "$who: no name in the journal"; fi

  # allowLocalBinding from the home configuration reaches the filter.
  LISTEN="python3 -c 'import socket
try:
    s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1); print(\"listening\")
except OSError as e:
    print(e.errno)'"
  run_as "$who" -- "$LISTEN"
  is "$out" 13 "$who: without allowLocalBinding, bind is refused with EACCES"
  printf '{"sandbox":{"enabled":true,"network":{"allowLocalBinding":true}}}\n' \
    >"$H/.crucible/config.json"
  run_as "$who" -- "$LISTEN"
  is "$out" listening "$who: allowLocalBinding in the home configuration lets it listen"

  # Without domains: no proxy variable, and nothing at the inside port.
  printf '{"sandbox":{"enabled":true}}\n' >"$H/.crucible/config.json"
  run_as "$who" -- 'env | grep -ci proxy; curl -s -o /dev/null -w "%{http_code}\n" -x http://127.0.0.1:3128 http://allowed.test/'
  is "$out" $'0\n000\n[exit status 7]' "$who: without domains, no proxy variable and no relay"
done
