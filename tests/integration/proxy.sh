#!/bin/bash
# core/proxy on its own (tests/helpers/proxy_run), without a sandbox, in a
# network of the test's own: an "inner" namespace (net + mount, its
# /etc/hosts bound over privately) where the proxy and the clients run, and
# an "origin" namespace joined to it by a veth pair, holding the origins
# (python3 HTTP and HTTPS with a CA made here by openssl) and an upstream
# proxy (tinyproxy).  No packet leaves the two namespaces.
#
#   inner  veth 192.0.2.1/24, routes to 10.0.0.0/24 and 169.254.169.254
#   origin veth 192.0.2.10/24, 10.0.0.1/24, 169.254.169.254/16
. "$(dirname "$0")/lib.sh"

N=57
plan $N

# skip_all WHY: the namespace cannot be built; every check skips, saying so.
skip_all() {
  local i
  for ((i = 0; i < N; i++)); do skip "proxy network" "$1" network; done
  exit 0
}

PROXY_RUN="$HELPERS/proxy_run"
[ -x "$PROXY_RUN" ] || skip_all "no $PROXY_RUN (make check builds it)"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to make network namespaces"
for tool in unshare nsenter ip curl openssl python3 tinyproxy; do
  command -v "$tool" >/dev/null || skip_all "no $tool"
done
PY=$(command -v python3)
SRC="$CRUCIBLE_SRCDIR/tests/integration"

pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$TEST_TMP"
}
trap cleanup EXIT

# ---- the network ---------------------------------------------------------

cat >"$TEST_TMP/hosts" <<'EOF'
127.0.0.1 localhost
192.0.2.10 allowed.test www.allowed.test other.test
127.0.0.1 rebind-loop.test
169.254.169.254 rebind-meta.test
10.0.0.1 private.test
192.0.2.1 rebind-self.test
192.0.2.11 twoaddr.test
192.0.2.10 twoaddr.test
127.0.0.1 mixed.test
192.0.2.10 mixed.test
EOF

# Each namespace is held by a sleeping process; the inner one binds the
# hosts file over /etc/hosts in its own (private) mount namespace.
unshare --net -- sleep infinity &
ORIGIN=$!
pids+=("$ORIGIN")
unshare --net --mount --propagation private -- sh -c \
  'mount --bind "$1" /etc/hosts && exec sleep infinity' sh "$TEST_TMP/hosts" &
INNER=$!
pids+=("$INNER")
sleep 0.2

in_origin() { nsenter -t "$ORIGIN" -n -- "$@"; }
in_inner() { nsenter -t "$INNER" -n -m -- "$@"; }
# The same for a background job: exec, so that $! is the program itself
# and killing it at the end reaches it.
bg_origin() { exec nsenter -t "$ORIGIN" -n -- "$@"; }
bg_inner() { exec nsenter -t "$INNER" -n -m -- "$@"; }

net_ok=0
{
  in_inner ip link set lo up &&
    in_origin ip link set lo up &&
    in_inner ip link add pxin type veth peer name pxout netns "/proc/$ORIGIN/ns/net" &&
    in_inner ip addr add 192.0.2.1/24 dev pxin &&
    in_inner ip link set pxin up &&
    in_origin ip addr add 192.0.2.10/24 dev pxout &&
    in_origin ip addr add 192.0.2.11/24 dev pxout &&
    in_origin ip addr add 10.0.0.1/24 dev pxout &&
    in_origin ip addr add 169.254.169.254/16 dev pxout &&
    in_origin ip link set pxout up &&
    in_inner ip route add 10.0.0.0/24 dev pxin &&
    in_inner ip route add 169.254.169.254/32 dev pxin
} 2>"$TEST_TMP/net.err" || net_ok=1
if [ "$net_ok" -ne 0 ] || ! in_inner grep -q rebind-loop.test /etc/hosts; then
  skip_all "cannot build the test network: $(head -c 300 "$TEST_TMP/net.err")"
fi

# ---- a test CA and the origins --------------------------------------------

(
  cd "$TEST_TMP" &&
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=crucible test CA" \
      -keyout ca.key -out ca.pem &&
    openssl req -newkey rsa:2048 -nodes -subj "/CN=allowed.test" \
      -keyout origin.key -out origin.csr &&
    printf 'subjectAltName=DNS:allowed.test,DNS:www.allowed.test,DNS:private.test\n' >ext &&
    openssl x509 -req -in origin.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
      -days 2 -extfile ext -out origin.pem
) >"$TEST_TMP/openssl.log" 2>&1 || skip_all "openssl could not make the test CA"

bg_origin "$PY" "$SRC/proxy-origin.py" "$TEST_TMP/origin.log" \
  "$TEST_TMP/origin.pem" "$TEST_TMP/origin.key" 2>"$TEST_TMP/origin.err" &
pids+=("$!")

# tinyproxy as the upstream, with its own credential, logging each request.
mkdir -m 777 "$TEST_TMP/tp"
cat >"$TEST_TMP/tp/tinyproxy.conf" <<EOF
User nobody
Group nogroup
Port 8888
Listen 192.0.2.10
Timeout 30
LogFile "$TEST_TMP/tp/tinyproxy.log"
LogLevel Info
MaxClients 20
Allow 192.0.2.0/24
BasicAuth up uppass
EOF
bg_origin tinyproxy -d -c "$TEST_TMP/tp/tinyproxy.conf" >"$TEST_TMP/tp/out" 2>&1 &
pids+=("$!")

for _ in $(seq 50); do
  grep -q ready "$TEST_TMP/origin.log" 2>/dev/null && break
  sleep 0.1
done
grep -q ready "$TEST_TMP/origin.log" 2>/dev/null ||
  skip_all "the origins did not start: $(head -c 300 "$TEST_TMP/origin.err")"

# start_proxy NAME PORT [ENV...] -- ARGS...: run proxy_run in the inner
# namespace with only the environment given (as RUNAS, when set);
# USER_NAME/PASS_NAME set.
RUNAS=()
# A sanitizer build's settings reach the helper through env -i.
SAN_ENV=()
[ -n "${ASAN_OPTIONS:-}" ] && SAN_ENV+=("ASAN_OPTIONS=$ASAN_OPTIONS")
[ -n "${UBSAN_OPTIONS:-}" ] && SAN_ENV+=("UBSAN_OPTIONS=$UBSAN_OPTIONS")
start_proxy() {
  local name=$1 port=$2 envs=()
  shift 2
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  bg_inner "${RUNAS[@]}" env -i PATH=/usr/bin:/bin "${SAN_ENV[@]}" "${envs[@]}" "$PROXY_RUN" \
    --listen "127.0.0.1:$port" "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" &
  pids+=("$!")
  eval "PID_$name=$!"
  for _ in $(seq 50); do
    [ -s "$TEST_TMP/$name.out" ] && break
    sleep 0.1
  done
  read -r u p <"$TEST_TMP/$name.out"
  eval "USER_$name=\$u; PASS_$name=\$p"
}

DOMAINS=(--domain allowed.test --domain '*.allowed.test' --domain twoaddr.test
  --domain mixed.test --domain rebind-loop.test
  --domain rebind-meta.test --domain private.test --domain rebind-self.test)
start_proxy main 3128 -- "${DOMAINS[@]}" --second
# A head that never ends, from the start: checked at the end (30 s).
bg_inner "$PY" "$SRC/proxy-peers.py" headtimeout 3128 x x >"$TEST_TMP/headtimeout.out" 2>&1 &
HEADTIMEOUT=$!
pids+=("$HEADTIMEOUT")
start_proxy priv 3129 -- "${DOMAINS[@]}" --allow-private
start_proxy up 3130 HTTPS_PROXY=http://up:uppass@192.0.2.10:8888 \
  http_proxy=http://up:uppass@192.0.2.10:8888 -- "${DOMAINS[@]}"
start_proxy uphttps 3131 HTTPS_PROXY=https://192.0.2.10:8888 -- "${DOMAINS[@]}"
start_proxy noproxy 3132 HTTPS_PROXY=http://192.0.2.10:9 NO_PROXY=www.allowed.test \
  -- "${DOMAINS[@]}"
start_proxy socks 3135 HTTPS_PROXY=socks5://192.0.2.10:9 HTTP_PROXY=socks5h://192.0.2.10:9 \
  -- "${DOMAINS[@]}"
RUNAS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
start_proxy nobody 3136 -- "${DOMAINS[@]}"
RUNAS=()
start_proxy ask 3133 -- "${DOMAINS[@]}" --ask command
start_proxy askno 3134 -- "${DOMAINS[@]}" --ask refuse
OTHER_PASS=$(sed -n 2p "$TEST_TMP/main.out" | cut -d' ' -f2)

# pc PORT USER:PASS CURLARGS...: curl through the proxy from the inner
# namespace; $out is what curl printed, $rc its status.
pc() {
  local port=$1 cred=$2
  shift 2
  out=$(in_inner curl -sS --max-time 20 --noproxy '' \
    -x "http://${cred:+$cred@}127.0.0.1:$port" "$@" 2>"$TEST_TMP/curl.err") &&
    rc=0 || rc=$?
  [ "$rc" -eq 0 ] || diag "curl: $(cat "$TEST_TMP/curl.err")"
}
CRED="$USER_main:$PASS_main"
W='%{http_code} %{http_connect}\n'

# ---- the credential --------------------------------------------------------

like "$PASS_main" '^[0-9a-f]{32}$' "the credential is 32 hex digits (128 bits)"
[ -n "$OTHER_PASS" ] && [ "$OTHER_PASS" != "$PASS_main" ]
ok $? "two clients have different credentials"

pc 3128 "" -i http://allowed.test/hello
like "$out" '^HTTP/1.1 407' "no credential: 407"
like "$out" 'Proxy-Authenticate: Basic realm="crucible"' \
  "the 407 carries the Basic challenge"
like "$out" "crucible's proxy needs this command's credential: use the proxy URL in HTTP_PROXY or HTTPS_PROXY as given, user and password included\\." \
  "the 407 says what to do (doc/strings.md)"
pc 3128 "crucible:0123456789abcdef0123456789abcdef" -o /dev/null -w "$W" \
  http://allowed.test/hello
is "$out" "407 000" "a wrong password: 407"
pc 3128 "crucible:$OTHER_PASS" -o /dev/null -w "$W" http://allowed.test/hello
is "$out" "407 000" "another client's credential: 407"
pc 3128 "$CRED" http://allowed.test/hello
is "$out" "hello from allowed.test" "with the credential: the origin answers (positive control)"

# ---- names ----------------------------------------------------------------

pc 3128 "$CRED" -i http://forbidden.example/
like "$out" '^HTTP/1.1 403' "a name not allowed: 403"
like "$out" 'forbidden\.example' "the 403 says which name was refused"
like "$out" 'sandbox\.network\.domains' "the 403 names the key that allows it"
pc 3128 "$CRED" -o /dev/null -w "$W" https://forbidden.example/
is "$out" "000 403" "CONNECT to a name not allowed: 403"

# ---- CONNECT over TLS -----------------------------------------------------

pc 3128 "$CRED" --cacert "$TEST_TMP/ca.pem" https://allowed.test/hello
is "$out" "hello from allowed.test" "CONNECT to an allowed name: TLS end to end with the test CA"
pc 3128 "$CRED" --cacert "$TEST_TMP/ca.pem" https://www.allowed.test/hello
is "$out" "hello from www.allowed.test" "CONNECT to a name under *.allowed.test"

# ---- absolute-form, keep-alive, bodies -------------------------------------

pc 3128 "$CRED" -w '[%{http_code} %{num_connects}]\n' \
  http://allowed.test/hello http://other.test/hello
like "$out" $'hello from allowed.test\n\\[200 1\\]' "keep-alive: the first request is served"
like "$out" '\[403 0\]' "keep-alive: the second request on the same connection, to a name not allowed, is refused"

head -c 300000 /dev/urandom >"$TEST_TMP/body"
sum=$(sha256sum "$TEST_TMP/body" | cut -d' ' -f1)
pc 3128 "$CRED" -H 'Transfer-Encoding: chunked' --data-binary "@$TEST_TMP/body" \
  http://allowed.test/echo
is "$out" "got 300000 bytes sha256 $sum" "a chunked POST arrives whole"
grep -q '^POST /echo host=allowed.test te=chunked' "$TEST_TMP/origin.log"
ok $? "the origin saw the chunked framing, in origin-form"

pc 3128 "$CRED" -v --stderr - -H 'Expect: 100-continue' --data-binary "@$TEST_TMP/body" \
  http://allowed.test/echo
like "$out" 'HTTP/1.1 100 Continue' "Expect: 100-continue gets the origin's 100"
like "$out" "got 300000 bytes sha256 $sum" "... and the body after it arrives whole"

# ---- addresses --------------------------------------------------------------

bg_inner "$PY" -m http.server --bind 127.0.0.1 8080 >/dev/null 2>&1 &
pids+=("$!")
for _ in $(seq 50); do
  in_inner curl -s -o /dev/null --max-time 5 http://127.0.0.1:8080/ && break
  sleep 0.1
done
in_inner curl -s -o /dev/null --max-time 5 http://127.0.0.1:8080/
ok $? "positive control: a loopback server in the inner namespace answers directly"
pc 3128 "$CRED" -o /dev/null -w "$W" http://rebind-loop.test:8080/
is "$out" "403 000" "an allowed name resolving to 127.0.0.1 is refused"
in_inner curl -s -o /dev/null --max-time 5 http://169.254.169.254/hello
ok $? "positive control: 169.254.169.254 answers directly"
pc 3128 "$CRED" -o /dev/null -w "$W" http://rebind-meta.test/hello
is "$out" "403 000" "an allowed name resolving to 169.254.169.254 is refused"
pc 3128 "$CRED" -o /dev/null -w "$W" http://private.test/hello
is "$out" "403 000" "an allowed name resolving to 10.0.0.1 is refused without allow-private"
pc 3129 "$USER_priv:$PASS_priv" http://private.test/hello
is "$out" "hello from private.test" "... and reached with --allow-private"
pc 3128 "$CRED" -o /dev/null -w "$W" http://rebind-self.test/hello
is "$out" "403 000" "an allowed name resolving to the host's own interface address is refused"
grep -q 'refused loopback' "$TEST_TMP/main.err" && grep -q 'refused link-local' "$TEST_TMP/main.err" &&
  grep -q 'refused private' "$TEST_TMP/main.err" && grep -q 'refused name' "$TEST_TMP/main.err"
ok $? "each refusal reached the callback with its class"

# Only 192.0.2.10 listens on 8081; 192.0.2.11 (first for twoaddr.test)
# refuses the connection.
bg_origin "$PY" -m http.server --bind 192.0.2.10 8081 --directory "$TEST_TMP/tp" >/dev/null 2>&1 &
pids+=("$!")
for _ in $(seq 50); do
  in_inner curl -s -o /dev/null --max-time 5 http://192.0.2.10:8081/ && break
  sleep 0.1
done
in_inner curl -s -o /dev/null --max-time 5 http://192.0.2.11:8081/
[ $? -eq 7 ]
ok $? "positive control: 192.0.2.11:8081 refuses a direct connection"
pc 3128 "$CRED" -o /dev/null -w "$W" http://twoaddr.test:8081/
is "$out" "200 000" "the first address failing, the next one is tried"
pc 3128 "$CRED" http://mixed.test/hello
is "$out" "hello from mixed.test" "of a name's addresses, the refused one (127.0.0.1) is skipped and the allowed one used"

# ---- upstreams ---------------------------------------------------------------

pc 3130 "$USER_up:$PASS_up" --cacert "$TEST_TMP/ca.pem" https://allowed.test/hello
is "$out" "hello from allowed.test" "through an http upstream with its credential: TLS end to end"
grep -q 'CONNECT 192.0.2.10:443' "$TEST_TMP/tp/tinyproxy.log"
ok $? "the upstream saw a CONNECT to the checked address, not the name"
pc 3130 "$USER_up:$PASS_up" http://www.allowed.test/hello
is "$out" "hello from www.allowed.test" "an absolute-form request through the http upstream (http_proxy)"
grep -q 'CONNECT 192.0.2.10:80' "$TEST_TMP/tp/tinyproxy.log"
ok $? "... leaves as a CONNECT to the checked address too"
pc 3135 "$USER_socks:$PASS_socks" --cacert "$TEST_TMP/ca.pem" https://allowed.test/hello
is "$out" "hello from allowed.test" "a socks5:// upstream is passed by (connect directly)"
pc 3135 "$USER_socks:$PASS_socks" -o /dev/null -w "$W" http://allowed.test/hello
is "$out" "502 000" "a socks5h:// upstream: 502, never around it"
pc 3131 "$USER_uphttps:$PASS_uphttps" -o /dev/null -w "$W" https://allowed.test/hello
is "$out" "000 502" "under an https:// upstream, a permitted CONNECT gets 502"
pc 3132 "$USER_noproxy:$PASS_noproxy" --cacert "$TEST_TMP/ca.pem" https://www.allowed.test/hello
is "$out" "hello from www.allowed.test" "a NO_PROXY host bypasses the (unreachable) upstream"
pc 3132 "$USER_noproxy:$PASS_noproxy" -o /dev/null -w "$W" https://allowed.test/hello
is "$out" "000 502" "positive control: a host NO_PROXY does not list goes to the upstream (502: nothing there)"

# ---- the proxy as uid 65534 ----------------------------------------------------

is "$(awk '/^Uid:/ {print $2}' "/proc/$PID_nobody/status" 2>/dev/null)" 65534 \
  "a proxy_run runs as uid 65534"
pc 3136 "$USER_nobody:$PASS_nobody" --cacert "$TEST_TMP/ca.pem" https://allowed.test/hello
is "$out" "hello from allowed.test" "as 65534: CONNECT to an allowed name over TLS"
pc 3136 "" -o /dev/null -w "$W" http://allowed.test/hello
is "$out" "407 000" "as 65534: no credential, 407"
pc 3136 "$USER_nobody:$PASS_nobody" -o /dev/null -w "$W" http://rebind-loop.test:8080/
is "$out" "403 000" "as 65534: an allowed name resolving to 127.0.0.1 is refused"

# ---- tunnels: volume, Upgrade, half-close ----------------------------------------

expect=$("$PY" -c 'import hashlib; b = bytes(range(256)) * 256; n = 20000000
h = hashlib.sha256()
while n > 0:
    h.update(b[:min(n, len(b))]); n -= min(n, len(b))
print(h.hexdigest())')
out=$(in_inner curl -sS --max-time 60 --noproxy '' -p -x "http://$CRED@127.0.0.1:3128" \
  http://allowed.test/big/20000000 | sha256sum | cut -d' ' -f1)
is "$out" "$expect" "20 MB through a CONNECT tunnel (splice) arrive intact"
out=$(in_inner "$PY" "$SRC/proxy-peers.py" upgrade 3128 "$USER_main" "$PASS_main" 2>&1)
is "$out" $'upgrade 101\necho:ping' "an absolute-form Upgrade (WebSocket) becomes a tunnel after 101"
out=$(in_inner "$PY" "$SRC/proxy-peers.py" halfclose 3128 "$USER_main" "$PASS_main" 2>&1)
is "$out" "halfclose 100000" "a client's half-close passes through the tunnel; the answer arrives whole"

# ---- asking about a name (phase 2) ------------------------------------------------

askers=()
for i in 1 2; do
  bg_inner curl -sS --max-time 20 --noproxy '' -x "http://$USER_ask:$PASS_ask@127.0.0.1:3133" \
    http://other.test/hello >"$TEST_TMP/ask$i.out" 2>&1 &
  askers+=("$!")
done
wait "${askers[@]}"
is "$(cat "$TEST_TMP/ask1.out" "$TEST_TMP/ask2.out")" $'hello from other.test\nhello from other.test' \
  "with an asker answering 'this command', two waiting connections to a name not listed are served"
pc 3133 "$USER_ask:$PASS_ask" http://other.test/hello
is "$(grep -c '^asked other.test for proxy-run' "$TEST_TMP/ask.err")" 1 \
  "the two were one question (coalesced), and the allowed name is not asked again"
pc 3134 "$USER_askno:$PASS_askno" -o /dev/null -w "$W" http://other.test/hello
is "$out" "403 000" "an asker answering 'refuse': 403"
grep -q '^asked other.test' "$TEST_TMP/askno.err"
ok $? "... after asking"

# ---- hostile peers --------------------------------------------------------------

out=$(in_inner "$PY" "$SRC/proxy-peers.py" malformed 3128 "$USER_main" "$PASS_main" 2>&1)
is "$out" $'B 400\nA 200' "a malformed request gets 400 while a parallel connection is served"
out=$(in_inner "$PY" "$SRC/proxy-peers.py" huge 3128 "$USER_main" "$PASS_main" 2>&1)
is "$out" "huge 431" "a head past 64 KiB gets 431"
out=$(in_inner "$PY" "$SRC/proxy-peers.py" rst 3128 "$USER_main" "$PASS_main" 2>&1)
is "$out" "after 200" "peers resetting mid-head and mid-tunnel leave the proxy serving"
out=$(in_inner "$PY" "$SRC/proxy-peers.py" slow 3128 "$USER_main" "$PASS_main" 2>&1)
like "$out" '^B 200 0\.[0-9]+$' "a slowloris client does not hold up another connection"

wait "$HEADTIMEOUT"
like "$(cat "$TEST_TMP/headtimeout.out")" '^closed (29|30|31|32|33|34|35)$' \
  "a request head still trickling after 30 s is cut off then (not before)"
kill "$PID_main"
wait "$PID_main" 2>/dev/null
like "$(cat "$TEST_TMP/main.err")" 'counts allowed=[1-9][0-9]* refused=[1-9][0-9]* out=[1-9][0-9]* in=[1-9][0-9]*' \
  "the client's counts are kept"
