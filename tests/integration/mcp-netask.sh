#!/bin/bash
# The network question through crucible mcp and crucible run (issue 13):
# a confined command's connection to a name its policy does not allow is
# put to an MCP client that declared the elicitation capability; accepting
# lets it through for this command (200), declining, accepting without
# allow, or an error answer gets the 403; the question offers only "this
# command" (its schema is {"allow": boolean}, nothing that lasts); a
# client without the capability gets the 403 at once, asked nothing.
# crucible run has nobody to ask: the 403 at once.  As root and as uid
# 65534, in the test network of netlib.sh.  Controls: the same curl
# unconfined reaches other.test, and through the same server an allowed
# name is reached without a question.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/netlib.sh"
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin

PER_IDENTITY=19
SLOW=3 # the unanswered question, as root only
ids=root
can_drop_privileges && ids="root nobody"
n_ids=$(wc -w <<<"$ids")
N=$((n_ids * PER_IDENTITY + 3 + SLOW))
plan $N

trap 'net_teardown; rm -rf "$TEST_TMP"' EXIT
skip_rest() {
  local i
  for ((i = tap_n; i < N; i++)); do skip "$1" "$2" "$3"; done
  exit 0
}
if [ "$(id -u)" -ne 0 ] || ! can_drop_privileges; then
  skip "the network question as root and as uid 65534" \
    "the suite does not run as root with setpriv" unprivileged
else
  ok 0 "the network question is tested as root and as uid 65534"
fi
SANDBOX_RUN="$CRUCIBLE_BIN_DIR/helpers/sandbox_run"
if ! probe=$("$SANDBOX_RUN" --probe 2>&1); then
  skip_rest "the network question" \
    "bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")" bwrap
fi
net_setup || skip_rest "the test network" "$NET_WHY" network
ok 0 "the test network is built"

# The MCP client: one server per scenario, each printing "0 WHAT"/"1 WHAT"
# lines (and "# ..." diagnostics).
cat >"$TEST_TMP/client.py" <<'PY'
import json, os, select, subprocess, sys, time

CRUCIBLE, WHO = sys.argv[1], sys.argv[2]
CURL = "curl -sS --max-time 90 -w '\\n%{http_code}\\n' http://HOST/hello.txt"
HELLO = "hello from the origin"
REFUSAL = ("crucible refused the connection to other.test: it is not among "
           "the domains this command may reach")
MESSAGE = ("A command wants to reach other.test, which its configuration does "
           "not allow (sandbox.network.domains). Allow it for this command only?")
SCHEMA = {"type": "object", "properties": {"allow": {"type": "boolean", "title": "Allow"}},
          "required": ["allow"]}


def check(passed, what, *diag):
    print(("0 " if passed else "1 ") + "(%s) %s" % (WHO, what), flush=True)
    if not passed:
        for d in diag:
            for line in str(d).splitlines() or [""]:
                print("# " + line, flush=True)


class Server:
    def __init__(self, capabilities):
        self.p = subprocess.Popen([CRUCIBLE, "mcp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.buf = b""
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": capabilities,
            "clientInfo": {"name": "test", "version": "1"}}})
        self.recv(10)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, m):
        self.p.stdin.write((json.dumps(m) + "\n").encode())
        self.p.stdin.flush()

    def recv(self, seconds):
        """The next message within seconds, or None."""
        end = time.monotonic() + seconds
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, i, command):
        self.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "bash", "arguments": {"command": command}}})

    def until(self, seconds, want):
        """Messages until one for which want(m) holds; (it, the others)."""
        seen = []
        end = time.monotonic() + seconds
        while True:
            m = self.recv(max(0.0, end - time.monotonic()))
            if m is None:
                return None, seen
            if want(m):
                return m, seen
            seen.append(m)

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def text(m):
    if m is None or "result" not in m:
        return repr(m)
    return "".join(c.get("text", "") for c in m["result"]["content"])


def is_elicit(m):
    return m.get("method") == "elicitation/create"


def result_of(i):
    return lambda m: m.get("id") == i and "method" not in m


def asked_then(server, i, answer, host="other.test"):
    """Call i curls host; the elicitation is answered by answer(request)
    (a dict to send, or None); returns (request, result, seconds)."""
    server.call(i, CURL.replace("HOST", host))
    req, seen = server.until(20, lambda m: is_elicit(m) or result_of(i)(m))
    if req is None or not is_elicit(req):
        return None, req, 0
    t0 = time.monotonic()
    reply = answer(req)
    if reply is not None:
        server.send(reply)
    res, _ = server.until(30, result_of(i))
    return req, res, time.monotonic() - t0


def got200(res):
    return HELLO in text(res) and text(res).rstrip().endswith("\n200")


def got403(res):
    t = text(res)
    return REFUSAL in t and "sandbox.network.domains" in t and "\n403" in t


# --- a question left unanswered (once, as root: it takes the minute, a
# constant with no knob, MCP_NET_WAIT_MS); it waits while the rest runs.
slow = None
if WHO == "root" and not os.environ.get("CRUCIBLE_SANITIZED"):
    slow = Server({"elicitation": {}})
    slow.call(1, CURL.replace("HOST", "other.test"))
    slow_req, _ = slow.until(20, is_elicit)
    slow_t0 = time.monotonic()

# --- a client that can be asked -----------------------------------------
s = Server({"elicitation": {}})
s.call(1, CURL.replace("HOST", "allowed.test"))
res, seen = s.until(30, result_of(1))
check(got200(res) and not any(is_elicit(m) for m in seen),
      "control: an allowed name is reached with no question", text(res), seen)

req, res, _ = asked_then(s, 2, lambda r: {"jsonrpc": "2.0", "id": r["id"], "result": {
    "action": "accept", "content": {"allow": True}}})
check(req is not None, "a name not allowed is put to the client as elicitation/create", res)
params = (req or {}).get("params", {})
check(params.get("message") == MESSAGE, "the elicitation names the name and the key, for this command only",
      params.get("message"))
check(params.get("requestedSchema") == SCHEMA,
      "its schema offers only this command's grant ({\"allow\": boolean}, nothing lasting)",
      json.dumps(params.get("requestedSchema")))
check("always" not in json.dumps(req).lower() and "workspace" not in json.dumps(req).lower(),
      "nothing in the question offers always or the workspace", json.dumps(req))
check(got200(res), "accepted with allow true, the connection reaches the origin (200)", text(res))

req, res, _ = asked_then(s, 3, lambda r: {"jsonrpc": "2.0", "id": r["id"], "result": {
    "action": "decline"}})
check(req is not None, "the next command is asked again", res)
check(got403(res), "declined, the connection gets the 403 text", text(res))

req, res, _ = asked_then(s, 4, lambda r: {"jsonrpc": "2.0", "id": r["id"], "result": {
    "action": "accept", "content": {"allow": False}}})
check(req is not None and got403(res), "accepted with allow false, the 403", text(res))

req, res, _ = asked_then(s, 5, lambda r: {"jsonrpc": "2.0", "id": r["id"], "error": {
    "code": -32603, "message": "the client failed"}})
check(req is not None and got403(res), "an error answer, the 403", text(res))

req, res, _ = asked_then(s, 6, lambda r: {"jsonrpc": "2.0", "id": r["id"], "result": {
    "action": "cancel"}})
check(req is not None and got403(res), "cancelled, the 403", text(res))
s.close()
check(s.p.returncode == 0, "the server ends with its input", s.p.returncode)

# --- a client that cannot be asked: the 403 at once ---------------------
s = Server({})
t0 = time.monotonic()
s.call(1, CURL.replace("HOST", "other.test"))
res, seen = s.until(30, result_of(1))
took = time.monotonic() - t0
check(got403(res), "a client without the elicitation capability gets the 403", text(res))
check(took < 10, "at once (%.1f s), not after the question's wait" % took)
check(not any(is_elicit(m) for m in seen), "and it is asked nothing", seen)
s.call(2, CURL.replace("HOST", "allowed.test"))
res, _ = s.until(30, result_of(2))
check(got200(res), "control: the same client reaches an allowed name", text(res))
s.close()

if slow is not None:
    res, seen = slow.until(80, result_of(1))
    took = time.monotonic() - slow_t0
    check(slow_req is not None and got403(res) and 55 <= took <= 70,
          "unanswered, the question is refused with the 403 after 60 s (%.0f s)" % took,
          text(res), seen)
    slow.send({"jsonrpc": "2.0", "id": (slow_req or {}).get("id", "none"), "result": {
        "action": "accept", "content": {"allow": True}}})
    late = slow.recv(1)
    slow.call(2, CURL.replace("HOST", "other.test"))
    req, _ = slow.until(20, is_elicit)
    check(late is None and req is not None,
          "a late answer is ignored, and the next command is asked afresh", late, req)
    slow.send({"jsonrpc": "2.0", "id": (req or {}).get("id", "none"), "result": {"action": "decline"}})
    res, _ = slow.until(30, result_of(2))
    check(got403(res), "and refused, it gets the 403", text(res))
    slow.close()
PY

# become WHO: AS (the identity prefix), a workspace WS and home H it owns,
# confinement on with allowed.test only, and no approval asked for calls.
become() {
  WHO=$1
  AS=()
  [ "$WHO" = nobody ] && AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  WS=$(mktemp -d "$TEST_TMP/ws.XXXXXX")
  H=$(mktemp -d "$TEST_TMP/home.XXXXXX")
  mkdir -p "$H/.crucible"
  printf '{"sandbox":{"enabled":true,"network":{"domains":["allowed.test"]}},"permissions":{"mode":"fullAccess"}}\n' \
    >"$H/.crucible/config.json"
  [ "$WHO" = nobody ] && chown -R 65534:65534 "$WS" "$H"
  chmod 755 "$WS" "$H"
}

# in_net CMD...: CMD in the inner namespace, in WS, as the identity, with
# nothing of this machine's environment.
in_net() {
  (cd "$WS" && net_run env -i PATH=/usr/bin:/bin HOME="$H" LANG=C.UTF-8 "${AS[@]}" "$@")
}

for who in $ids; do
  become "$who"
  ctl=$(in_net sh -c "curl -sS --max-time 20 -w '\n%{http_code}\n' http://other.test/hello.txt" 2>&1)
  like "$ctl" "^$NET_HELLO"$'\n+200' "control ($WHO): unconfined, curl reaches other.test"

  while IFS= read -r line; do
    case $line in
      '# '*) echo "$line" ;;
      [01]' '*) ok "${line%% *}" "crucible mcp ${line#* }" ;;
      'client exit 0') ;;
      'client exit '*) ok 1 "the MCP client ran to its end ($line)" ;;
      *) diag "$line" ;;
    esac
  done < <(in_net env CRUCIBLE_SANITIZED="${CRUCIBLE_SANITIZED:-}" \
    timeout 300 /usr/bin/python3 "$TEST_TMP/client.py" "$CRUCIBLE" "$WHO" 2>&1
    echo "client exit $?")

  if [ "$WHO" = root ] && [ -n "${CRUCIBLE_SANITIZED:-}" ]; then
    for ((i = 0; i < SLOW; i++)); do
      skip "crucible mcp (root): the unanswered question's minute" \
        "a sanitizer build: the minute is a timer's, which the plain build's run measures; the answered questions run the same code here"
    done
  fi

  # crucible run: nobody to ask, the 403 at once.
  t0=$SECONDS
  cout=$(in_net "$CRUCIBLE" run --timeout 60 -- \
    "curl -sS --max-time 90 -w '\n%{http_code}\n' http://other.test/hello.txt" 2>&1)
  took=$((SECONDS - t0))
  like "$cout" "crucible refused the connection to other\.test: it is not among the domains.*"$'\n'"403" \
    "crucible run ($WHO): a name not allowed gets the 403 text"
  if [ "$took" -lt 10 ]; then
    ok 0 "crucible run ($WHO): at once (${took} s), with no question waited for"
  else
    ok 1 "crucible run ($WHO): at once (${took} s), with no question waited for"
  fi
done

net_teardown
ok $? "net_teardown leaves no process of the test network"
