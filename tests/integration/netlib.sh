# shellcheck shell=bash
# The test network for the network tests (issue 13): two network
# namespaces joined by a veth pair, built by the test as root, so that no
# test sends a packet anywhere else.  Sourced after lib.sh.
#
#   inner   where crucible runs (and its confined commands below it):
#           192.0.2.1/24, 2001:db8::1/64; its own mount namespace, with a
#           hosts file bound over /etc/hosts and a resolv.conf naming its
#           own loopback (so a DNS query goes nowhere); a service on its
#           loopback (127.0.0.1:NET_LOOPBACK_PORT, "the host's loopback");
#           the upstream proxy (tinyproxy, a real one from Debian) on
#           192.0.2.1:3129, allowing CONNECT to any port and logging it.
#   origin  the origins, tests/integration/netorigin.py: 192.0.2.10/24,
#           192.0.2.11/24, 2001:db8::10/64, and 169.254.169.254 and
#           10.0.0.1 (a metadata service and a private neighbour, each
#           routed from inner): HTTP on 80, HTTPS on 443 and 8443 with a
#           certificate from a test CA made here by openssl, DNS on UDP 53;
#           a git repository over HTTPS (dumb HTTP), a pip simple index
#           with one wheel, an npm registry (package document + tarball).
#
# Neither namespace has a default route, and the only link leaves inner
# for origin: whatever is sent to any other address fails in inner itself.
#
# net_setup           build it all; 1 with NET_WHY when it cannot be built
# net_run CMD...      run CMD in inner (its network and mount namespaces),
#                     in the current directory
# net_origin CMD...   run CMD in origin's network namespace
# net_teardown        kill every process of both namespaces and their
#                     descendants; the namespaces and inner's mounts go with
#                     the last of them; says (1) when something is left
#
# NET_CA              the test CA's certificate (PEM)
# NET_UPSTREAM        http://192.0.2.1:3129, the upstream proxy
# NET_UPSTREAM_TLS    https://192.0.2.1:3129, the same as an https:// upstream
#                     (no TLS server needed: crucible must refuse to use it)
# NET_UPSTREAM_LOG    tinyproxy's log (its CONNECT lines)
# NET_AUTH_URL        http://crucible:<32 hex>@127.0.0.1:3130: a second
#                     tinyproxy on inner's loopback requiring that Basic
#                     credential, the controls' stand-in for crucible's
#                     proxy (another port than 3128, so that no confined
#                     check could ever be served by it)
# NET_AUTH_ENV        the proxy variables a confined command gets, naming
#                     NET_AUTH_URL (NAME=VALUE words, for env)
# NET_HELLO           the text of /hello.txt on every origin
# NET_LOOPBACK_PORT   the port of inner's loopback service
# NET_LOOPBACK_TEXT   what it answers for /hello.txt

NET_DIR=
NET_INNER_PID=
NET_ORIGIN_PID=
NET_NS=()
NET_WHY=
NET_UPSTREAM=http://192.0.2.1:3129
NET_UPSTREAM_TLS=https://192.0.2.1:3129
NET_HELLO='hello from the origin'
NET_LOOPBACK_PORT=8080
NET_AUTH_PORT=3130
NET_AUTH_ENV=()
NET_LOOPBACK_TEXT='the loopback service of the host'
NET_NAMES='allowed.test other.test git.test pypi.test npm.test
wild.test sub.wild.test deep.sub.wild.test'
NET_HOSTS_FILE='127.0.0.1 localhost
::1 localhost ip6-localhost ip6-loopback
192.0.2.10 allowed.test other.test git.test pypi.test npm.test
192.0.2.10 wild.test sub.wild.test deep.sub.wild.test
192.0.2.11 second.test noproxy.test
2001:db8::10 v6.test
127.0.0.1 rebind-loop.test
169.254.169.254 rebind-meta.test
10.0.0.1 private.test'

# net_run CMD...: CMD in the inner namespaces, here.
net_run() {
  nsenter -t "$NET_INNER_PID" -n -m --wd="$PWD" -- "$@"
}

# net_origin CMD...: CMD in the origin's network namespace.
net_origin() {
  nsenter -t "$NET_ORIGIN_PID" -n -- "$@"
}

# Whether every tool the network needs is here; sets NET_WHY.
net_tools() {
  local t
  if [ "$(id -u)" -ne 0 ]; then
    NET_WHY="building the test network needs root"
    return 1
  fi
  for t in unshare nsenter ip openssl python3 tinyproxy git curl setpriv; do
    if ! command -v "$t" >/dev/null 2>&1; then
      NET_WHY="no $t (tools/deps.sh installs it)"
      return 1
    fi
  done
  if ! /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
    NET_WHY="no pip for /usr/bin/python3 (python3-pip)"
    return 1
  fi
  if ! command -v npm >/dev/null 2>&1; then
    NET_WHY="no npm"
    return 1
  fi
}

# net_wait_file FILE: whether FILE is there (non-empty) within 10 s.
net_wait_file() {
  local i
  for ((i = 0; i < 200; i++)); do
    [ -s "$1" ] && return 0
    sleep 0.05
  done
  return 1
}

# net_bg CMD...: start CMD in the background, detached from the job table
# (net_teardown finds it by its namespace).
net_bg() {
  "$@" </dev/null >>"$NET_DIR/bg.log" 2>&1 &
  disown $!
}

# The two namespaces: a holder process each (sleep), in its namespaces
# from the first instruction, so that nothing runs there before the hosts
# file is bound and loopback is up.
net_namespaces() {
  printf '%s\n' "$NET_HOSTS_FILE" >"$NET_DIR/hosts"
  echo 'nameserver 127.0.0.1' >"$NET_DIR/resolv.conf"
  chmod 644 "$NET_DIR/hosts" "$NET_DIR/resolv.conf"
  # unshare --mount makes the new mount namespace private (no propagation
  # either way), so the binds stay inside and die with it.
  unshare --net --mount --propagation private sh -c '
    mount --bind "$1/hosts" /etc/hosts &&
    mount --bind "$1/resolv.conf" /etc/resolv.conf &&
    ip link set lo up && echo $$ >"$1/inner.pid" && exec sleep infinity' \
    sh "$NET_DIR" </dev/null >>"$NET_DIR/bg.log" 2>&1 &
  disown $!
  unshare --net sh -c 'ip link set lo up && echo $$ >"$1/origin.pid" &&
    exec sleep infinity' sh "$NET_DIR" </dev/null >>"$NET_DIR/bg.log" 2>&1 &
  disown $!
  if ! net_wait_file "$NET_DIR/inner.pid" || ! net_wait_file "$NET_DIR/origin.pid"; then
    NET_WHY="unshare --net --mount did not make the namespaces: $(tail -n 3 "$NET_DIR/bg.log")"
    return 1
  fi
  NET_INNER_PID=$(cat "$NET_DIR/inner.pid")
  NET_ORIGIN_PID=$(cat "$NET_DIR/origin.pid")
  NET_NS=("$(readlink "/proc/$NET_INNER_PID/ns/net")"
    "$(readlink "/proc/$NET_ORIGIN_PID/ns/net")")
  if [ "${NET_NS[0]}" = "$(readlink /proc/self/ns/net)" ]; then
    NET_WHY="the inner namespace is the test's own"
    return 1
  fi
}

# The veth pair and the documentation addresses (nodad: usable at once).
net_links() {
  local log=$NET_DIR/ip.log
  if ! net_run ip link add nt-inner type veth peer name nt-origin \
    netns "$NET_ORIGIN_PID" >"$log" 2>&1; then
    NET_WHY="no veth pair: $(cat "$log")"
    return 1
  fi
  {
    net_run ip link set nt-inner up &&
      net_run ip addr add 192.0.2.1/24 dev nt-inner &&
      net_run ip addr add 2001:db8::1/64 dev nt-inner nodad &&
      net_run ip route add 169.254.169.254/32 dev nt-inner &&
      net_run ip route add 10.0.0.1/32 dev nt-inner &&
      net_origin ip link set nt-origin up &&
      net_origin ip addr add 192.0.2.10/24 dev nt-origin &&
      net_origin ip addr add 192.0.2.11/24 dev nt-origin &&
      net_origin ip addr add 169.254.169.254/32 dev nt-origin &&
      net_origin ip addr add 10.0.0.1/32 dev nt-origin &&
      net_origin ip addr add 2001:db8::10/64 dev nt-origin nodad
  } >"$log" 2>&1 || {
    NET_WHY="addressing the veth pair: $(cat "$log")"
    return 1
  }
}

# The test CA and the origins' certificate (every test name, and the
# addresses as IP entries).
net_certs() {
  local d=$NET_DIR/tls san=
  local n
  mkdir -p "$d"
  for n in $NET_NAMES second.test noproxy.test v6.test rebind-loop.test \
    rebind-meta.test private.test; do
    san+="DNS:$n,"
  done
  san+="IP:192.0.2.10,IP:192.0.2.11,IP:2001:db8::10"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=%s\n' \
    "$san" >"$d/ext"
  {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -keyout "$d/ca.key" -out "$d/ca.pem" -days 2 -subj /CN=crucible-test-ca \
      -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign,cRLSign &&
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$d/origin.key" -out "$d/origin.csr" -subj /CN=allowed.test &&
      openssl x509 -req -in "$d/origin.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
        -CAcreateserial -out "$d/origin.pem" -days 2 -extfile "$d/ext"
  } >"$d/log" 2>&1 || {
    NET_WHY="openssl could not make the test CA: $(tail -n 3 "$d/log")"
    return 1
  }
  chmod 644 "$d/ca.pem"
  NET_CA=$d/ca.pem
}

# What the origins serve: hello.txt, a git repository (dumb HTTP), a pip
# simple index with one wheel, an npm package document and its tarball.
net_content() {
  local www=$NET_DIR/www src=$NET_DIR/src
  mkdir -p "$www/git" "$www/simple/nettestpkg" "$www/packages" "$www/npm" \
    "$www/npm-tarballs" "$src"
  echo "$NET_HELLO" >"$www/hello.txt"

  git init -q "$src/repo" &&
    echo 'cloned through the proxy' >"$src/repo/README" &&
    git -C "$src/repo" add README &&
    git -C "$src/repo" -c user.name=test -c user.email=test@example.invalid \
      commit -q -m 'the test repository' &&
    git clone -q --bare "$src/repo" "$www/git/repo.git" &&
    git -C "$www/git/repo.git" update-server-info || {
    NET_WHY="git could not make the test repository"
    return 1
  }

  # A wheel is a zip of the files and a dist-info directory; pip downloads
  # it without building anything (an sdist would need setuptools from the
  # index).
  /usr/bin/python3 - "$www" <<'PY' || { NET_WHY="the test wheel and npm package could not be made"; return 1; }
import base64, hashlib, io, json, sys, tarfile, zipfile
www = sys.argv[1]
files = {
    "nettestpkg/__init__.py": b"VALUE = 'installed through the proxy'\n",
    "nettestpkg-1.0.dist-info/METADATA":
        b"Metadata-Version: 2.1\nName: nettestpkg\nVersion: 1.0\n",
    "nettestpkg-1.0.dist-info/WHEEL":
        b"Wheel-Version: 1.0\nGenerator: crucible-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for name, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    record.append("%s,sha256=%s,%d" % (name, digest.decode(), len(data)))
record.append("nettestpkg-1.0.dist-info/RECORD,,")
files["nettestpkg-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
wheel = "nettestpkg-1.0-py3-none-any.whl"
with zipfile.ZipFile(www + "/packages/" + wheel, "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
sha = hashlib.sha256(open(www + "/packages/" + wheel, "rb").read()).hexdigest()
open(www + "/simple/index.html", "w").write(
    '<!DOCTYPE html><html><body><a href="nettestpkg/">nettestpkg</a></body></html>\n')
open(www + "/simple/nettestpkg/index.html", "w").write(
    '<!DOCTYPE html><html><body><a href="../../packages/%s#sha256=%s">%s</a></body></html>\n'
    % (wheel, sha, wheel))

buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as t:
    for name, data in (
        ("package/package.json",
         json.dumps({"name": "nettestpkg", "version": "1.0.0",
                     "main": "index.js"}).encode()),
        ("package/index.js", b"module.exports = 'installed through the proxy';\n"),
    ):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = 0o644
        t.addfile(info, io.BytesIO(data))
tgz = buf.getvalue()
open(www + "/npm-tarballs/nettestpkg-1.0.0.tgz", "wb").write(tgz)
doc = {
    "name": "nettestpkg",
    "dist-tags": {"latest": "1.0.0"},
    "versions": {"1.0.0": {
        "name": "nettestpkg", "version": "1.0.0", "main": "index.js",
        "dist": {
            "tarball": "https://npm.test/npm-tarballs/nettestpkg-1.0.0.tgz",
            "shasum": hashlib.sha1(tgz).hexdigest(),
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode(),
        }}},
}
open(www + "/npm/nettestpkg", "w").write(json.dumps(doc))
PY
  chmod -R a+rX "$www"
}

# The origins, inner's loopback service and the upstream proxy.
net_servers() {
  local lo=$NET_DIR/loopback
  net_bg net_origin /usr/bin/python3 "$CRUCIBLE_SRCDIR/tests/integration/netorigin.py" \
    "$NET_DIR/www" "$NET_DIR/tls/origin.pem" "$NET_DIR/tls/origin.key" \
    "$NET_DIR/origin.ready"

  mkdir -p "$lo"
  echo "$NET_LOOPBACK_TEXT" >"$lo/hello.txt"
  net_bg net_run /usr/bin/python3 -m http.server "$NET_LOOPBACK_PORT" \
    --bind 127.0.0.1 --directory "$lo"

  # No ConnectPort line: CONNECT to every port.  LogLevel Connect logs each
  # request line, CONNECT ones included.
  NET_UPSTREAM_LOG=$NET_DIR/upstream.log
  cat >"$NET_DIR/tinyproxy.conf" <<EOF
Port 3129
Listen 192.0.2.1
Timeout 60
LogFile "$NET_UPSTREAM_LOG"
LogLevel Connect
MaxClients 100
DisableViaHeader Yes
EOF
  net_bg net_run tinyproxy -d -c "$NET_DIR/tinyproxy.conf"

  # The controls' stand-in for crucible's proxy: the same shape of URL
  # (user "crucible", 32 hex digits), another port, on inner's loopback.
  NET_AUTH_PASSWORD=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  NET_AUTH_URL="http://crucible:$NET_AUTH_PASSWORD@127.0.0.1:$NET_AUTH_PORT"
  NET_AUTH_ENV=("HTTP_PROXY=$NET_AUTH_URL" "HTTPS_PROXY=$NET_AUTH_URL"
    "http_proxy=$NET_AUTH_URL" "https_proxy=$NET_AUTH_URL"
    NO_PROXY=localhost,127.0.0.1,::1 no_proxy=localhost,127.0.0.1,::1)
  cat >"$NET_DIR/tinyproxy-auth.conf" <<EOF
Port $NET_AUTH_PORT
Listen 127.0.0.1
Timeout 60
LogFile "$NET_DIR/auth-proxy.log"
LogLevel Connect
MaxClients 100
DisableViaHeader Yes
BasicAuth crucible $NET_AUTH_PASSWORD
EOF
  net_bg net_run tinyproxy -d -c "$NET_DIR/tinyproxy-auth.conf"

  if ! net_wait_file "$NET_DIR/origin.ready"; then
    NET_WHY="the origins did not start: $(tail -n 5 "$NET_DIR/bg.log")"
    return 1
  fi
  local i
  for ((i = 0; i < 200; i++)); do
    net_run curl -s -o /dev/null "http://127.0.0.1:$NET_LOOPBACK_PORT/hello.txt" &&
      net_run curl -s -o /dev/null -x "$NET_UPSTREAM" http://allowed.test/hello.txt &&
      net_run curl -s -o /dev/null -x "$NET_AUTH_URL" http://allowed.test/hello.txt &&
      return 0
    sleep 0.05
  done
  NET_WHY="the loopback service or tinyproxy did not start: $(tail -n 5 "$NET_DIR/bg.log")"
  return 1
}

# Build the whole network; 1 with NET_WHY when it cannot.
net_setup() {
  net_tools || return 1
  NET_DIR=$(mktemp -d "$TEST_TMP/net.XXXXXX")
  chmod 755 "$NET_DIR"
  net_namespaces && net_links && net_certs && net_content && net_servers
}

# The processes of both namespaces and all their descendants (a confined
# command's bwrap, broker and workload are in namespaces of their own).
net_pids() {
  local seeds=() all
  [ "${#NET_NS[@]}" -gt 0 ] || return 0
  # One stat for every process: its network namespace's inode.
  mapfile -t seeds < <(stat -L -c '%n %i' /proc/[0-9]*/ns/net 2>/dev/null |
    awk -v a="${NET_NS[0]//[!0-9]/}" -v b="${NET_NS[1]//[!0-9]/}" \
      '$2 == a || $2 == b { split($1, f, "/"); print f[3] }')
  [ "${#seeds[@]}" -gt 0 ] || return 0
  all=$(ps -e -o pid=,ppid=)
  awk -v seeds="${seeds[*]}" '
    BEGIN { n = split(seeds, s, " "); for (i = 1; i <= n; i++) in_set[s[i]] = 1 }
    { parent[$1] = $2 }
    END {
      do {
        grew = 0
        for (p in parent) if (!(p in in_set) && (parent[p] in in_set)) { in_set[p] = 1; grew = 1 }
      } while (grew)
      for (p in in_set) print p
    }' <<<"$all"
}

# Kill everything the network holds and wait for it to be gone; 1 (and
# what is left, on stderr) when something outlives 5 s.
net_teardown() {
  local pids i
  [ -n "$NET_DIR" ] || return 0
  for ((i = 0; i < 100; i++)); do
    pids=$(net_pids)
    [ -z "$pids" ] && break
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null
    sleep 0.05
  done
  if [ -n "$pids" ]; then
    echo "net_teardown: still running: $pids" >&2
    return 1
  fi
  NET_NS=()
  NET_DIR=
}
