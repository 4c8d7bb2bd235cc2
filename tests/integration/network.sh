#!/bin/bash
# Network through the host-owned proxy (issue 13, "What it must show"):
# inside confinement, as root and as uid 65534, curl over HTTP and HTTPS,
# git clone over https, pip download and npm install reach allowed names
# through the proxy crucible runs; nothing else is reachable (a name not
# allowed gets the 403 text, a direct connection, DNS, a name rebound to
# loopback, the metadata address or a private neighbour all fail); no
# credential gets 407 with the challenge; the credential is masked in what
# the command prints, at every cut; the upstream proxy crucible was started
# under is used (http), refused with 502 (https) and bypassed (NO_PROXY);
# listen needs allowLocalBinding; a listed port answers from the host and
# from the next command, an unlisted one from neither.  TAP.
#
# Everything happens in the test network of netlib.sh: crucible runs in its
# inner namespace, the origins and the upstream proxy are there too, and
# no packet leaves.  Each confined check has its control: the same request
# made unconfined, from the same namespace, as the same identity, with the
# same environment the confined command gets (env -i plus the variables
# passed with --env), succeeds.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/netlib.sh"
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin

PER_IDENTITY=54
ids=root
can_drop_privileges && ids="root nobody"
n_ids=$(wc -w <<<"$ids")
plan $((n_ids * PER_IDENTITY + 3))

trap 'net_teardown; rm -rf "$TEST_TMP"' EXIT
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
why=
if [ "$(id -u)" -ne 0 ] || ! can_drop_privileges; then
  why="the suite does not run as root with setpriv, so uid 65534 cannot be taken"
fi
if [ -n "$why" ]; then
  skip "network tests as root and as uid 65534" "$why" unprivileged
else
  ok 0 "network tests run as root and as uid 65534"
fi
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  why="bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  [ -x "$SANDBOX_RUN" ] || why="no $SANDBOX_RUN (make check installs it)"
  for ((i = 0; i < n_ids * PER_IDENTITY + 2; i++)); do skip "confined network" "$why" bwrap; done
  exit 0
fi
if ! net_setup; then
  for ((i = 0; i < n_ids * PER_IDENTITY + 2; i++)); do
    skip "the test network" "$NET_WHY" network
  done
  exit 0
fi
ok 0 "the test network is built (two namespaces, origins, a test CA, tinyproxy)"

ALL_DOMAINS='"allowed.test","*.wild.test","git.test","pypi.test","npm.test","v6.test","noproxy.test","rebind-loop.test","rebind-meta.test","private.test"'
HELLO_RE="$NET_HELLO"
# become WHO: AS (the identity prefix), a fresh workspace WS and home H it
# owns, with the test CA in the workspace (the confined view has it there).
become() {
  WHO=$1
  AS=()
  [ "$WHO" = nobody ] && AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible"
  cp "$NET_CA" "$WS/ca.pem"
  # What the command gets with --env: each tool's CA setting, the test CA
  # (npm's own cafile too: a global npmrc may name one, which replaces
  # Node's store, extra certificates included).
  CA_ENV_CTL=("GIT_SSL_CAINFO=$WS/ca.pem" "PIP_CERT=$WS/ca.pem"
    "NODE_EXTRA_CA_CERTS=$WS/ca.pem" "npm_config_cafile=$WS/ca.pem"
    PIP_CONFIG_FILE=/dev/null)
  CA_ENV=()
  local v
  for v in "${CA_ENV_CTL[@]}"; do CA_ENV+=(--env "$v"); done
  [ "$WHO" = nobody ] && chown -R 65534:65534 "$WS" "$H"
  chmod 755 "$WS" "$H"
}

# config [DOMAINS-JSON-LIST [NETWORK-KEYS [SANDBOX-KEYS [TOP-KEYS]]]]: the
# home configuration: confinement on, those domains (all the test's by
# default), and the other keys given.
config() {
  printf '{"sandbox":{"enabled":true,"network":{"domains":[%s]%s}%s}%s}\n' \
    "${1-$ALL_DOMAINS}" "${2:+,$2}" "${3:+,$3}" "${4:+,$4}" >"$H/.crucible/config.json"
  [ "$WHO" = nobody ] && chown 65534:65534 "$H/.crucible/config.json"
  return 0
}

# The environment crucible itself is started in: nothing of this machine's
# (no proxy, no CA variables), plus what UPSTREAM_ENV names.
UPSTREAM_ENV=()
# conf SNIPPET [crucible run options...]: SNIPPET confined through crucible
# run in the inner namespace, as the identity, within 60 s unless the
# options give a --timeout.  $cout the result, $crc its status.
conf() {
  local snippet=$1 limit=(--timeout 60)
  shift
  [[ " $* " == *" --timeout "* ]] && limit=()
  cout=$(cd "$WS" && net_run env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 \
    "${UPSTREAM_ENV[@]}" "${AS[@]}" "$CRUCIBLE" run "${limit[@]}" "$@" -- \
    "$snippet" 2>"$TEST_TMP/cerr") && crc=0 || crc=$?
  cout+=$(cat "$TEST_TMP/cerr")
}

# ctl SNIPPET [NAME=VALUE...]: the control, SNIPPET unconfined in the same
# namespace, as the identity, with the command's environment.  $uout, $urc.
ctl() {
  local snippet=$1
  shift
  uout=$(cd "$WS" && net_run env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 \
    "$@" "${AS[@]}" timeout 120 /bin/sh -c "$snippet" 2>&1) && urc=0 || urc=$?
}

# ctl_like SNIPPET PATTERN DESCRIPTION [NAME=VALUE...]
ctl_like() {
  local s=$1 p=$2 d=$3
  shift 3
  ctl "$s" "$@"
  like "$urc:$uout" "^0:$p" "control ($WHO): unconfined, $d"
}

# conf_like SNIPPET PATTERN DESCRIPTION [crucible run options...]: the
# result must match ^PATTERN.
conf_like() {
  local s=$1 p=$2 d=$3
  shift 3
  conf "$s" "$@"
  like "$cout" "^$p" "confined ($WHO): $d"
}

# conf_refused SNIPPET DESCRIPTION [options...]: the workload ran (its
# first line is "ran") and SNIPPET printed no ESCAPED and failed.
conf_refused() {
  local s=$1 d=$2
  shift 2
  conf "echo ran; $s" "$@"
  if [ "${cout%%$'\n'*}" = ran ] && [ "$crc" -ne 125 ] &&
    [[ $cout != *ESCAPED* ]] && [[ $cout == *'[exit status '* ]]; then
    ok 0 "confined ($WHO): $d"
  else
    ok 1 "confined ($WHO): $d"
    diag "status $crc" "result: ${cout:0:2000}"
  fi
}

CURL='curl -sS --max-time 20'
# A DNS query for allowed.test to the origin's resolver; prints ESCAPED
# when an answer comes back.
DNS_QUERY="/usr/bin/python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
q = b\"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x07allowed\\x04test\\x00\\x00\\x01\\x00\\x01\"
s.sendto(q, (\"192.0.2.10\", 53)); s.recv(512); print(\"ESCAPED\")'"
# Direct TCP connections bypassing the proxy: the origin (IPv4, IPv6), the
# upstream proxy, and the loopback service of the namespace crucible runs in.
DIRECT="/usr/bin/python3 -c 'import socket
for a, port in ((\"192.0.2.10\", 80), (\"2001:db8::10\", 80), (\"192.0.2.1\", 3129),
                (\"127.0.0.1\", $NET_LOOPBACK_PORT)):
    try:
        socket.create_connection((a, port), 3).close(); print(\"ESCAPED\", a)
    except OSError as e:
        print(a, e)'"
LISTEN="/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), 3); a, _ = s.accept()
c.sendall(b\"x\"); assert a.recv(1) == b\"x\"; print(\"LISTENED\")'"
# The proxy password, from HTTPS_PROXY, or the command stops (so that no
# masking check passes for want of a secret).
PASSWORD='p=${HTTPS_PROXY#http://crucible:}; p=${p%@127.0.0.1:3128}
[ ${#p} -eq 32 ] || { echo "no credential in HTTPS_PROXY"; exit 3; }'
STARS='********************************'

# In a refusal check, first the same command's own control: the proxy
# serves an allowed name (else it exits 0, which fails the check).
PROXY_OK='curl -sSf --max-time 20 -o /dev/null http://allowed.test/hello.txt || { echo "the proxy did not serve allowed.test"; exit 0; };'

# masked WHAT: the result, less its notes, holds nothing but '*', '.' and
# newlines, at least one '*', and it ran (status 0 unless told otherwise).
masked() {
  local body unmasked
  body=$(grep -v '^\[' <<<"$cout")
  unmasked=$(tr -d '.*\n' <<<"$body")
  if [ "$crc" -ne 125 ] && [[ $cout != *'no credential'* ]] &&
    [[ $body == *'*'* ]] && [ -z "$unmasked" ]; then
    ok 0 "confined ($WHO): the credential is masked $1"
  else
    ok 1 "confined ($WHO): the credential is masked $1"
    diag "status $crc" "result: ${cout:0:600}" "unmasked bytes: ${unmasked:0:200}"
  fi
}

for who in $ids; do
  become "$who"
  config
  UPSTREAM_ENV=()

  # --- the tools, through the proxy ------------------------------------
  # The tools' controls go through the stand-in (NET_AUTH_ENV): the same
  # variables, a Debian proxy that wants the same kind of credential.
  ctl_like "$CURL http://allowed.test/hello.txt" "$HELLO_RE" \
    "curl over HTTP reaches allowed.test through an authenticated proxy" "${NET_AUTH_ENV[@]}"
  conf_like "$CURL http://allowed.test/hello.txt" "$HELLO_RE" "curl over HTTP reaches an allowed name"
  ctl_like "$CURL --cacert ca.pem https://allowed.test/hello.txt" "$HELLO_RE" \
    "curl over HTTPS reaches allowed.test through an authenticated proxy" "${NET_AUTH_ENV[@]}"
  conf_like "$CURL --cacert ca.pem https://allowed.test/hello.txt" "$HELLO_RE" "curl over HTTPS reaches an allowed name"
  ctl_like "$CURL --cacert ca.pem https://v6.test:8443/hello.txt" "$HELLO_RE" \
    "HTTPS to an IPv6 origin on port 8443 through an authenticated proxy" "${NET_AUTH_ENV[@]}"
  conf_like "$CURL --cacert ca.pem https://v6.test:8443/hello.txt" "$HELLO_RE" "HTTPS to an allowed IPv6 origin on another port"
  ctl_like "git clone -q https://git.test/git/repo.git clone-ctl && cat clone-ctl/README" \
    "cloned through the proxy" "git clone https:// works through an authenticated proxy" "${NET_AUTH_ENV[@]}" "${CA_ENV_CTL[@]}"
  conf_like "git clone -q https://git.test/git/repo.git clone && cat clone/README" \
    "cloned through the proxy" "git clone https:// works" "${CA_ENV[@]}"
  PIP="/usr/bin/python3 -m pip download -q --no-cache-dir --no-deps --retries 0 --timeout 20 --index-url https://pypi.test/simple/"
  ctl_like "$PIP -d dl-ctl nettestpkg && ls dl-ctl" "nettestpkg-1.0-py3-none-any.whl" \
    "pip download from the test index works through an authenticated proxy" "${NET_AUTH_ENV[@]}" "${CA_ENV_CTL[@]}"
  conf_like "$PIP -d dl nettestpkg && ls dl" "nettestpkg-1.0-py3-none-any.whl" \
    "pip download from the test index works" "${CA_ENV[@]}"
  # Each run its own cache, so that the confined install cannot be served
  # from what the control fetched.
  NPM="npm install --no-audit --no-fund --no-update-notifier --prefer-online --fetch-retries 0 --fetch-timeout 20000 --registry https://npm.test/npm/ nettestpkg >/dev/null"
  ctl_like "mkdir np-ctl && cd np-ctl && $NPM --cache ../npmcache-ctl && cat node_modules/nettestpkg/index.js" \
    "module.exports = 'installed through the proxy'" "npm install from the test registry works through an authenticated proxy" "${NET_AUTH_ENV[@]}" "${CA_ENV_CTL[@]}"
  conf_like "mkdir np && cd np && $NPM --cache ../npmcache && cat node_modules/nettestpkg/index.js" \
    "module.exports = 'installed through the proxy'" "npm install from the test registry works" "${CA_ENV[@]}"

  # --- names: case, a trailing dot, "*." at any depth but not the name itself
  config '"Allowed.Test"'
  conf_like "$CURL http://allowed.TEST./hello.txt" "$HELLO_RE" \
    "names compare without case, one trailing dot ignored (\"Allowed.Test\" allows allowed.TEST.)"
  config
  ctl_like "$CURL http://wild.test/hello.txt" "$HELLO_RE" "wild.test is reachable"
  conf "$CURL -w '\n%{http_code}\n' http://sub.wild.test/hello.txt http://deep.sub.wild.test/hello.txt http://wild.test/hello.txt"
  like "$cout" "^$NET_HELLO"$'\n+'"200"$'\n'"$NET_HELLO"$'\n+'"200"$'\n'".*"$'\n+'"403"$'(\n|$)' \
    "confined ($WHO): *.wild.test allows names at any depth below it, not wild.test itself"

  # --- a name not allowed: the 403 and its words -------------------------
  ctl_like "$CURL http://other.test/hello.txt" "$HELLO_RE" "other.test is reachable"
  conf "$CURL -w '\n%{http_code}\n' http://other.test/hello.txt"
  like "$cout" "other\.test.*sandbox\.network\.domains.*"$'\n'"403" \
    "confined ($WHO): a name not allowed gets 403, naming the name and the key that allows it"
  conf "$CURL -v --cacert ca.pem https://other.test/hello.txt"
  like "$cout" "< HTTP/1\.[01] 403" "confined ($WHO): a CONNECT to a name not allowed gets 403"
  conf "$CURL -w '\n%{http_code}\n' http://192.0.2.10/hello.txt"
  like "$cout" $'\n'"403"$'(\n|$)' "confined ($WHO): a literal address not listed gets 403"

  # --- nothing but the proxy is reachable ------------------------------
  ctl "$DIRECT"
  like "$uout" "ESCAPED 192\.0\.2\.10.*ESCAPED 2001:db8::10.*ESCAPED 192\.0\.2\.1.*ESCAPED 127\.0\.0\.1" \
    "control ($WHO): unconfined, direct connections to the origin, the upstream proxy and the host's loopback service work"
  conf_refused "$PROXY_OK $DIRECT; exit 1" \
    "direct connections to the origin, the upstream proxy and the host's loopback service fail"
  ctl "$DNS_QUERY; getent hosts allowed.test"
  like "$uout" "ESCAPED.*192\.0\.2\.10 +allowed\.test" \
    "control ($WHO): unconfined, a DNS query is answered and the test names resolve"
  conf_refused "$PROXY_OK $DNS_QUERY; getent hosts allowed.test && echo ESCAPED; exit 1" \
    "a DNS query gets no answer and names do not resolve inside"
  conf_like "getent ahosts localhost | grep -q '^127\.0\.0\.1 ' && echo RESOLVED" \
    RESOLVED "localhost resolves inside"

  # --- allowed names that resolve where the proxy must not go ------------
  ctl_like "$CURL http://rebind-loop.test:$NET_LOOPBACK_PORT/hello.txt" "$NET_LOOPBACK_TEXT" \
    "the host's loopback service answers"
  conf_refused "$PROXY_OK $CURL -f http://rebind-loop.test:$NET_LOOPBACK_PORT/hello.txt | grep -q loopback && echo ESCAPED; exit 1" \
    "an allowed name resolving to 127.0.0.1 is refused"
  ctl_like "$CURL http://rebind-meta.test/hello.txt" "$HELLO_RE" "169.254.169.254 answers"
  conf_refused "$PROXY_OK $CURL -f http://rebind-meta.test/hello.txt | grep -q hello && echo ESCAPED; exit 1" \
    "an allowed name resolving to 169.254.169.254 is refused"
  ctl_like "$CURL http://private.test/hello.txt" "$HELLO_RE" "the private neighbour 10.0.0.1 answers"
  conf_refused "$PROXY_OK $CURL -f http://private.test/hello.txt | grep -q hello && echo ESCAPED; exit 1" \
    "an allowed name resolving to a private address is refused"
  config "$ALL_DOMAINS" '"allowPrivateAddresses":true'
  conf_like "$CURL http://private.test/hello.txt" "$HELLO_RE" \
    "with allowPrivateAddresses in the home configuration, the private address is reached"
  config

  # --- the credential: 407 without it ----------------------------------
  ctl "$CURL -i -x http://127.0.0.1:$NET_AUTH_PORT http://allowed.test/hello.txt"
  like "$uout" "^HTTP/1\.[01] 407.*[Pp]roxy-[Aa]uthenticate: Basic" \
    "control ($WHO): unconfined, the stand-in proxy answers 407 with the Basic challenge, which this check reads"
  conf "$CURL -i -x http://127.0.0.1:3128 http://allowed.test/hello.txt; \
$CURL -i -x http://crucible:00000000000000000000000000000000@127.0.0.1:3128 http://allowed.test/hello.txt"
  like "$cout" "^HTTP/1\.[01] 407.*[Pp]roxy-[Aa]uthenticate: Basic.*HTTP/1\.[01] 407.*[Pp]roxy-[Aa]uthenticate: Basic" \
    "confined ($WHO): without the credential, or with a wrong one, 407 with the Basic challenge"
  # --- the credential is masked in what the command prints ----------------
  conf "env | grep -E '^(HTTPS?_PROXY|https?_proxy)=' | sort"
  is "$cout" "HTTPS_PROXY=http://crucible:$STARS@127.0.0.1:3128
HTTP_PROXY=http://crucible:$STARS@127.0.0.1:3128
http_proxy=http://crucible:$STARS@127.0.0.1:3128
https_proxy=http://crucible:$STARS@127.0.0.1:3128" \
    "confined ($WHO): env shows the four proxy variables, the password masked one '*' per byte"
  conf "$PASSWORD"'
printf "%s" "${p%????????????????}"; sleep 0.3; printf "%s\n" "${p#????????????????}"'
  is "$cout" "$STARS" "confined ($WHO): the credential split across two writes is masked"
  # Only copies of the password and dots, shifted by one byte each line, so
  # that a copy straddles every cut wherever it falls.
  FILL="$PASSWORD"'
n=$1; i=0; while [ $i -lt $n ]; do d=$((i % 33)); printf "%.${d}s%s\n" ................................. "$p"; i=$((i + 1)); done'
  conf "set -- 1500; $FILL"
  masked "at the capture's head/tail cut"
  like "$cout" "\[process output was [0-9]+ bytes; [0-9]+ bytes omitted" \
    "confined ($WHO): that output was cut in the middle by the capture"
  config "$ALL_DOMAINS" "" '"limits":{"outputBytes":20000}'
  conf "set -- 1500; $FILL"
  masked "at the output ceiling"
  config
  conf "$PASSWORD"'
printf "....%s" "${p%????????????????????}"; sleep 30' --timeout 2
  masked "at a stop (the timeout cut it mid-credential)"
  # Newlines cost two encoded bytes: under the capture's budget in raw bytes,
  # over the 30,000-byte encoded cap.
  FILL2="$PASSWORD"'
i=0; while [ $i -lt 480 ]; do d=$((i % 33)); printf "%.${d}s%s\n\n\n\n\n\n\n\n\n\n" ................................. "$p"; i=$((i + 1)); done'
  conf "$FILL2"
  masked "at the 30,000-byte encoded cap"
  like "$cout" "\[encoded output was [0-9]+ bytes" "confined ($WHO): that output was cut by the encoded cap"

  # --- the upstream proxy crucible was started under ----------------------
  : >"$NET_UPSTREAM_LOG"
  UPSTREAM_ENV=("HTTPS_PROXY=$NET_UPSTREAM" "HTTP_PROXY=$NET_UPSTREAM")
  conf "$CURL --cacert ca.pem https://allowed.test/hello.txt; env | grep -c 192.0.2.1"
  like "$cout|$(cat "$NET_UPSTREAM_LOG")" "$HELLO_RE"$'\n'"0"$'\n'".*\|.*CONNECT 192\.0\.2\.10:443 " \
    "confined ($WHO): through an http upstream, the upstream's log has the CONNECT to the checked address, and the command does not see it"
  : >"$NET_UPSTREAM_LOG"
  UPSTREAM_ENV=("HTTPS_PROXY=$NET_UPSTREAM" "NO_PROXY=noproxy.test")
  conf "$CURL --cacert ca.pem https://noproxy.test/hello.txt"
  if [[ $cout =~ $HELLO_RE ]] && ! grep -q '192\.0\.2\.11\|noproxy' "$NET_UPSTREAM_LOG"; then
    ok 0 "confined ($WHO): a NO_PROXY host bypasses the upstream"
  else
    ok 1 "confined ($WHO): a NO_PROXY host bypasses the upstream"
    diag "result: $cout" "upstream log: $(cat "$NET_UPSTREAM_LOG")"
  fi
  # An upstream whose URL carries its own credential (the stand-in, which
  # requires one): crucible sends it, the command never sees it.
  : >"$NET_DIR/auth-proxy.log"
  UPSTREAM_ENV=("HTTPS_PROXY=$NET_AUTH_URL")
  conf "$CURL --cacert ca.pem https://allowed.test/hello.txt; env | grep -c $NET_AUTH_PASSWORD"
  like "$cout|$(cat "$NET_DIR/auth-proxy.log")" "$HELLO_RE"$'\n'"0"$'\n'".*\|.*CONNECT 192\.0\.2\.10:443 " \
    "confined ($WHO): an upstream's own credential from its URL is sent to it, and the command does not see it"
  UPSTREAM_ENV=("HTTPS_PROXY=$NET_UPSTREAM_TLS")
  conf "$CURL -v --cacert ca.pem https://allowed.test/hello.txt"
  like "$cout" "< HTTP/1\.[01] 502" "confined ($WHO): under an https:// upstream, a permitted connection fails with 502"
  UPSTREAM_ENV=()

  # --- listening: allowLocalBinding ---------------------------------------
  ctl_like "$LISTEN" LISTENED "listening on loopback works"
  conf_refused "$LISTEN" "listen fails without allowLocalBinding"
  config "$ALL_DOMAINS" '"allowLocalBinding":true'
  conf_like "$LISTEN" LISTENED "listen works with allowLocalBinding"

  # --- ports: a listed port answers from the host, an unlisted one does not
  config "$ALL_DOMAINS" '"allowLocalBinding":true,"ports":[5173]'
  SERVE='mkdir -p site && echo "the dev server" >site/index.html &&
/usr/bin/python3 -u -m http.server 5173 --bind 127.0.0.1 --directory site 2>&1 &
/usr/bin/python3 -u -m http.server 5174 --bind 127.0.0.1 --directory site 2>&1 &
sleep 8'
  (conf "$SERVE"; printf '%s' "$cout" >"$WS/serve.out") &
  s_pid=$!
  listed=1 unlisted=1
  for ((i = 0; i < 160; i++)); do
    kill -0 "$s_pid" 2>/dev/null || break
    net_run curl -s --max-time 1 http://127.0.0.1:5173/ 2>/dev/null | grep -q 'dev server' && { listed=0; break; }
    sleep 0.05
  done
  net_run curl -s --max-time 1 http://127.0.0.1:5174/ 2>/dev/null | grep -q 'dev server' && unlisted=0
  wait "$s_pid"
  serve_out=$(cat "$WS/serve.out" 2>/dev/null)
  if [ "$listed" -eq 0 ] && [[ $serve_out == *'port 5174'* ]]; then
    ok 0 "confined ($WHO): a listed port of a confined server answers from the host's 127.0.0.1"
  else
    ok 1 "confined ($WHO): a listed port of a confined server answers from the host's 127.0.0.1"
    diag "result: ${serve_out:0:600}"
  fi
  if [ "$unlisted" -ne 0 ] && [[ $serve_out == *'port 5174'* ]]; then
    ok 0 "confined ($WHO): an unlisted port (the server ran) does not answer from the host"
  else
    ok 1 "confined ($WHO): an unlisted port (the server ran) does not answer from the host"
    diag "result: ${serve_out:0:600}"
  fi
  # The same session (crucible mcp, one proxy): the first command, left
  # running, serves 5173 (listed) and 5174 (not listed) and prints its proxy
  # URL reversed (the masker hides only the exact bytes); the next commands
  # reach the listed port and not the other, and get 407 with the first's
  # credential while it still runs.  (The status ends its line: bytes at
  # the very end of the output that could begin the command's own
  # credential are masked, and a hex digit can.)
  config "$ALL_DOMAINS" '"allowLocalBinding":true,"ports":[5173]' "" '"permissions":{"mode":"fullAccess"}'
  mcp_out=$(cd "$WS" && net_run env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 "${AS[@]}" \
    /usr/bin/python3 - "$CRUCIBLE" "$CRUCIBLE_SRCDIR/tests/helpers" <<'PY' 2>&1
import subprocess, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
from mcp_client import start
mcp = start(sys.argv[1], 120)
p, call = mcp.p, mcp.call
first = call(1, "bash", background=True, command=
    "printf '%s\\n' \"$HTTPS_PROXY\" | rev; mkdir -p site && echo 'the dev server' >site/index.html && "
    "/usr/bin/python3 -m http.server 5174 --bind 127.0.0.1 --directory site >/dev/null 2>&1 & "
    "exec /usr/bin/python3 -m http.server 5173 --bind 127.0.0.1 --directory site")
time.sleep(2)
# A line between the two answers: when the first holds none of the output
# yet, the output must not be glued to its last word.
first += "\n" + call(2, "bash_output", number=1)
print("first:", first.replace("\n", " "))
rev = next((w for w in first.split() if w.endswith("//:ptth")), "none")
print("listed:", call(3, "bash", command="curl -s --max-time 3 http://localhost:5173/ || echo unreached"))
print("unlisted:", call(4, "bash", command="curl -s --max-time 3 http://localhost:5174/ || echo unreached"))
print("other credential:", call(5, "bash", command=
    "u=$(echo '%s' | rev); [ -n \"$HTTPS_PROXY\" ] && [ \"$u\" != \"$HTTPS_PROXY\" ] && echo different; "
    "curl -s -o /dev/null -w '%%{http_code}\\n' -x \"$u\" http://allowed.test/hello.txt" % rev).replace("\n", " "))
p.stdin.close()
p.terminate()
p.wait(10)
PY
  )
  like "$mcp_out" "first:.*listening on 127\.0\.0\.1:5173" \
    "confined ($WHO): the answer for a server left running says where it listens"
  like "$mcp_out" $'\n'"listed: the dev server" \
    "confined ($WHO): the next command reaches a listed port of a server left running"
  like "$mcp_out" $'\n'"unlisted: unreached" \
    "confined ($WHO): the next command does not reach an unlisted port"
  like "$mcp_out" $'\n'"other credential: different 407" \
    "confined ($WHO): two commands side by side have different credentials; one's is 407 to the other"
  config
done

net_dir=$NET_DIR
net_teardown
td=$?
# The hosts file was bound only inside inner's own mount namespace.
grep -qF "$net_dir" /proc/self/mountinfo && td=1
ok "$td" "net_teardown leaves no process of the test network (and so no namespace), and no mount here"
