# The Debian 12 packages crucible builds and tests with; sourced by
# build.sh and test.sh.  deps_ensure installs what is missing when run as
# root, and otherwise prints the exact apt-get line and fails.

DEPS_BUILD="build-essential autoconf automake libtool autopoint gettext pkg-config
libncurses-dev libtermkey-dev libvterm-dev libyajl-dev libpcre2-dev
libseccomp-dev nettle-dev libidn2-dev"
DEPS_TEST="libcmocka-dev bubblewrap tmux util-linux cppcheck clang-tidy strace python3
locales keyutils curl"
# What building the Debian packages needs beyond DEPS_BUILD (debian/).
DEPS_PACKAGE="debhelper lintian dpkg-dev"
# The test network (tests/integration/netlib.sh, network.sh, bench/network):
# namespaces and a veth pair, a test CA, an upstream proxy, the clients.
DEPS_TEST="$DEPS_TEST iproute2 openssl tinyproxy-bin curl git python3-pip"
# npm: Debian's, unless a Node.js that carries its own is installed
# (NodeSource's nodejs provides npm and conflicts with Debian's).
command -v npm >/dev/null 2>&1 || DEPS_TEST="$DEPS_TEST npm"
# newuidmap/newgidmap: an unprivileged user's groups mapped in the sandbox
# (sandbox/userns.h, tests/integration/run-groups.sh).
DEPS_TEST="$DEPS_TEST uidmap"
# The container backend (sandbox/container/, tests/container/): libcurl's
# header (libcurl is loaded at run time, not linked), and the engines the
# tests start themselves with the busybox root their image is made from.
DEPS_BUILD="$DEPS_BUILD libcurl4-openssl-dev"
DEPS_TEST="$DEPS_TEST docker.io podman runc busybox-static"

# Print the packages of the given lists that are not installed.
deps_missing() {
  local p
  for p in $*; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"
  done
}

# Install the packages of the given lists, or say how.
deps_ensure() {
  local missing
  missing=$(deps_missing "$@" | tr '\n' ' ')
  [ -z "${missing// /}" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "crucible needs these Debian packages; install them with:" >&2
    echo "  sudo apt-get install -y $missing" >&2
    return 1
  fi
  echo "installing: $missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq </dev/null >/dev/null
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing </dev/null >/dev/null
}

# The real MCP servers tests/integration/mcp-client-real.sh speaks to,
# pinned by tests/mcp-servers/package-lock.json: `npm ci` installs exactly
# those into tests/mcp-servers/node_modules (again only when the lockfile
# is newer than what was installed).  .ci/run calls it.
mcp_test_servers() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/mcp-servers"
  [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] \
    && return 0
  echo "installing the MCP test servers (npm ci in $dir)" >&2
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund \
    --loglevel=error </dev/null >/dev/null)
}
