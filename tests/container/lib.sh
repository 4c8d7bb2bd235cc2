# The container tests' engines: each test script starts its own dockerd and
# its own `podman system service`, on private sockets with their data under
# one temporary directory, and stops them on exit leaving nothing behind
# (no process, no mount, no cgroup, no file outside that directory).
#
# Source it after nothing else (it sources tests/integration/lib.sh), then:
#   engines_start docker podman   start both, in parallel, and wait for them
#   engine_up NAME                whether NAME answered; else $ENGINE_WHY
#   engine_host NAME              its DOCKER_HOST (unix://...)
#   engine_import NAME            make crucible-sandbox:latest there from
#                                 the host's busybox-static, with no
#                                 registry (an import of a tarball); prints
#                                 the image ID
#   engine_api NAME METHOD PATH [CURL ARGS...]   one request, body on stdout
#   engine_skip N NAME            skip N checks for NAME, saying why
#
# ENGINE_DOCKER_ARGS, when set, is added to dockerd's words (another -H and
# its TLS options, say).
#
# Each engine runs in a mount and PID namespace of its own (unshare), so
# that what it mounts stays inside, the files it insists on writing to
# /run, /dev/shm or /var/lib land on namespace-private tmpfs, and when its
# first process ends the kernel ends every process it left.  dockerd runs
# with --iptables=false --bridge=none (no host network changes) and vfs
# storage; podman with runc (crun fails on this machine's hybrid cgroups)
# and the cgroupfs manager.  Requirements for CRUCIBLE_TEST_REQUIRE:
# docker, podman.

. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

# Short: containerd's and conmon's socket paths are built under it.
ENGINE_DIR=$(mktemp -d /tmp/ce.XXXXXX)
chmod 711 "$ENGINE_DIR"
ENGINE_WHY=
# The cgroup directories podman makes for its containers' parents, recorded
# before the engines start so that only those made here are removed.
ENGINE_CGROUPS_BEFORE=$(ls -d /sys/fs/cgroup/*/libpod_parent /sys/fs/cgroup/libpod_parent 2>/dev/null)
trap 'engines_stop; rm -rf "$TEST_TMP"' EXIT
trap 'exit 130' INT TERM

# engine_log NAME: the engine's log, for diagnostics.
engine_log() { cat "$ENGINE_DIR/$1/log" 2>/dev/null; }

# engine_host NAME: the DOCKER_HOST that reaches NAME.
engine_host() { echo "unix://$ENGINE_DIR/$1/sock"; }

# engine_api NAME METHOD PATH [CURL ARGS...]: one request to NAME's API.
engine_api() {
  local name=$1 method=$2 path=$3
  shift 3
  curl -sS --max-time 60 --unix-socket "$ENGINE_DIR/$name/sock" \
    -X "$method" "$@" "http://engine$path"
}

# engine_why NAME: why NAME cannot be started here, or nothing.
engine_why() {
  local prog
  [ "$(id -u)" -eq 0 ] || { echo "the engines are started as root"; return; }
  command -v unshare >/dev/null || { echo "no unshare (util-linux)"; return; }
  command -v curl >/dev/null || { echo "no curl"; return; }
  case $1 in
    docker) prog=dockerd pkg=docker.io ;;
    podman) prog=podman pkg=podman ;;
  esac
  command -v "$prog" >/dev/null || { echo "no $prog (apt-get install $pkg)"; return; }
  command -v runc >/dev/null || { echo "no runc (apt-get install runc)"; return; }
}

# engine_spawn_docker DIR: dockerd with everything it writes under DIR.
engine_spawn_docker() {
  local d=$1
  # The trust key dockerd 20.10 insists on goes where the configuration
  # says, not into /etc/docker.
  printf '{"deprecated-key-path": "%s/key.json"}\n' "$d" >"$d/daemon.json"
  setsid unshare --mount --pid --fork --kill-child --mount-proc \
    --propagation private sh -c '
      mount -t tmpfs -o mode=755 tmpfs /run || exit 1
      exec dockerd --iptables=false --bridge=none --ip-forward=false \
        --storage-driver=vfs --cgroup-parent="/$2" \
        --data-root "$1/data" --exec-root "$1/exec" --pidfile "$1/pid" \
        --config-file "$1/daemon.json" -H "unix://$1/sock" $3' \
    sh "$d" "crucible-test-$$" "${ENGINE_DOCKER_ARGS:-}" </dev/null >"$d/log" 2>&1 &
  echo $! >"$d/unshare.pid"
}

# engine_spawn_podman DIR: `podman system service` with everything it
# writes under DIR.
engine_spawn_podman() {
  local d=$1
  mkdir -p "$d/tmp"
  setsid unshare --mount --pid --fork --kill-child --mount-proc \
    --propagation private sh -c '
      for m in /run /dev/shm /var/lib; do
        mount -t tmpfs -o mode=755 tmpfs "$m" || exit 1
      done
      chmod 1777 /dev/shm
      exec podman --root "$1/root" --runroot "$1/runroot" --tmpdir "$1/tmp" \
        --runtime runc --cgroup-manager cgroupfs --events-backend file \
        --storage-driver vfs system service --time 0 "unix://$1/sock"' \
    sh "$d" </dev/null >"$d/log" 2>&1 &
  echo $! >"$d/unshare.pid"
}

# engine_wait NAME SECONDS: whether NAME answers /_ping within SECONDS.
engine_wait() {
  local tries=$(($2 * 10))
  while [ "$tries" -gt 0 ]; do
    [ -S "$ENGINE_DIR/$1/sock" ] \
      && [ "$(engine_api "$1" GET /_ping 2>/dev/null)" = OK ] && return 0
    kill -0 "$(cat "$ENGINE_DIR/$1/unshare.pid")" 2>/dev/null || return 1
    sleep 0.1
    tries=$((tries - 1))
  done
  return 1
}

# engines_start NAME...: start each engine (in parallel) and wait for it;
# an engine that cannot start is left down, with its reason in
# $ENGINE_DIR/NAME/why.
engines_start() {
  local name why
  for name; do
    mkdir -p "$ENGINE_DIR/$name"
    why=$(engine_why "$name")
    if [ -n "$why" ]; then
      echo "$why" >"$ENGINE_DIR/$name/why"
      continue
    fi
    "engine_spawn_$name" "$ENGINE_DIR/$name"
  done
  for name; do
    [ -e "$ENGINE_DIR/$name/why" ] && continue
    if ! engine_wait "$name" 60; then
      echo "$name did not answer /_ping within 60 s: $(engine_log "$name" | tail -n 3 | tr '\n' ' ')" \
        >"$ENGINE_DIR/$name/why"
    fi
  done
}

# engine_up NAME: whether NAME was started and answered; sets ENGINE_WHY.
engine_up() {
  ENGINE_WHY=$(cat "$ENGINE_DIR/$1/why" 2>/dev/null)
  [ -z "$ENGINE_WHY" ] && [ -S "$ENGINE_DIR/$1/sock" ]
}

# engine_skip N NAME: skip N checks against NAME, saying why.
engine_skip() {
  local i
  for ((i = 0; i < $1; i++)); do
    skip "$2" "${ENGINE_WHY:-$2 is not running}" "$2"
  done
}

# engine_rootfs DIR: a minimal root made of the host's busybox-static.
engine_rootfs() {
  local r=$1 a
  mkdir -p "$r/bin" "$r/tmp" "$r/etc" "$r/workspace"
  cp /bin/busybox "$r/bin/busybox"
  for a in sh cat ls id env true echo sleep grep; do ln -s busybox "$r/bin/$a"; done
  echo 'root:x:0:0:root:/:/bin/sh' >"$r/etc/passwd"
  echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>"$r/etc/passwd"
}

# engine_import NAME [REPO [TAG]]: import the busybox root as REPO:TAG
# (crucible-sandbox:latest) on NAME; prints the image ID.
engine_import() {
  local name=$1 repo=${2:-crucible-sandbox} tag=${3:-latest}
  local r="$ENGINE_DIR/rootfs"
  [ -e /bin/busybox ] && file_is_static /bin/busybox || {
    echo "no static /bin/busybox (apt-get install busybox-static)" >&2
    return 1
  }
  # Made under names of its own and renamed: two engines' checks may
  # import at the same time (engines_each).
  [ -e "$r.tar" ] || { engine_rootfs "$r.$BASHPID" &&
    tar -C "$r.$BASHPID" -cf "$r.tar.$BASHPID" . && mv -f "$r.tar.$BASHPID" "$r.tar"; } || return 1
  # The tag inside repo: Podman 4.3 ignores an import's tag parameter.
  engine_api "$name" POST "/images/create?fromSrc=-&repo=$repo:$tag" \
    -H 'Content-Type: application/x-tar' --data-binary "@$r.tar" >/dev/null || return 1
  engine_api "$name" GET "/images/$repo:$tag/json" \
    | sed -n 's/^{"Id":"\(sha256:[0-9a-f]*\)".*/\1/p'
}

# file_is_static FILE: whether FILE needs no dynamic loader.
file_is_static() { ! ldd "$1" >/dev/null 2>&1; }

# engine_term NAME: TERM the engine (once), without waiting for it.
engine_term() {
  local d="$ENGINE_DIR/$1" upid child
  [ -e "$d/unshare.pid" ] && [ ! -e "$d/termed" ] || return 0
  upid=$(cat "$d/unshare.pid")
  child=$(cat "/proc/$upid/task/$upid/children" 2>/dev/null)
  [ -n "$child" ] && kill -TERM $child 2>/dev/null
  touch "$d/termed"
}

# engine_stop NAME: TERM the engine, wait, then end its namespace (which
# ends everything in it).
engine_stop() {
  local d="$ENGINE_DIR/$1" upid tries=150
  [ -e "$d/unshare.pid" ] || return 0
  engine_term "$1"
  upid=$(cat "$d/unshare.pid")
  while kill -0 "$upid" 2>/dev/null && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  # --kill-child: killing unshare kills the namespace's first process.
  kill -KILL "$upid" 2>/dev/null
  wait "$upid" 2>/dev/null
  rm -f "$d/unshare.pid" "$d/termed"
}

# engines_stop: stop every engine started (both told at once, then each
# waited for), then remove the cgroup directories they made (empty once
# their containers are gone) and their data.
engines_stop() {
  local name c
  for name in docker podman; do engine_term "$name"; done
  for name in docker podman; do engine_stop "$name"; done
  for c in $(ls -d /sys/fs/cgroup/*/crucible-test-$$ /sys/fs/cgroup/crucible-test-$$ \
    /sys/fs/cgroup/*/libpod_parent /sys/fs/cgroup/libpod_parent 2>/dev/null); do
    grep -qxF "$c" <<<"$ENGINE_CGROUPS_BEFORE" && continue
    find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  rm -rf "$ENGINE_DIR"
}

# engines_each FN: `FN docker` and `FN podman` at the same time, each a
# part of its own (tap_part, tests/integration/lib.sh), their results
# printed docker's first, as a loop over the two would (in a sanitizer
# build, one after the other).  Each part has a
# TEST_TMP of its own holding a link to every entry the script made in it
# before, but a copy of home: its HOME and configuration, crun's stderr
# and the files its checks write are its own, so that one engine's checks
# cannot see or race the other's.
engines_each() {
  local fn=$1 engine top=$TEST_TMP e part
  for engine in docker podman; do
    part=$top/part-$engine
    mkdir "$part"
    for e in "$top"/*; do
      [ -e "$e" ] || continue
      case ${e##*/} in part-* | home) continue ;; esac
      ln -s "$e" "$part/${e##*/}"
    done
    [ -d "$top/home" ] && cp -a "$top/home" "$part/home"
    tap_part "$part.tap" engines_part "$part" "$fn" "$engine"
    # Under the sanitizers one after the other: there both engines' runs
    # at once hung in publication (left open, in the ci part's report).
    [ -z "${CRUCIBLE_SANITIZED:-}" ] || tap_join
  done
  tap_join
}

# engines_part DIR FN ENGINE: one engine's part, in DIR as its TEST_TMP.
engines_part() {
  local top=$TEST_TMP
  TEST_TMP=$1
  case $HOME in "$top/home" | "$top/home/"*)
    export HOME="$TEST_TMP/home${HOME#"$top/home"}" ;;
  esac
  case $PWD in "$top/"*) cd "$TEST_TMP/${PWD#"$top/"}" || return 1 ;; esac
  "$2" "$3"
}

# hold_secs ENGINE: the length of a `sleep` that holds a command's
# container until the host ends it (hold_end), unique to this script and
# engine (both engines' parts run at once), and bounded (a day).
hold_secs() {
  echo $((80000 + ($$ % 3000) * 2 + $([ "$1" = podman ] && echo 1 || echo 0)))
}

# hold_end SECS PID: end the container's `sleep SECS` (once it has begun),
# unless PID, the run holding it, ended first; false when neither came.
hold_end() {
  local _
  for _ in $(seq 1200); do
    pkill -TERM -x -f "sleep $1" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# container_home: a fresh workspace and HOME whose configuration enables
# confinement with the container backend.
container_home() {
  new_workspace
  mkdir -p "$HOME/.crucible"
  echo '{"sandbox": {"enabled": true, "backend": "container"}}' >"$HOME/.crucible/config.json"
}

# engine_begin ENGINE N: the start of one engine's N checks: where ENGINE
# is not up they are skipped, saying why, and this is false; else
# DOCKER_HOST names it, a fresh workspace is made and the image is built
# (the first check).
engine_begin() {
  if ! engine_up "$1"; then
    engine_skip "$2" "$1"
    return 1
  fi
  export DOCKER_HOST
  DOCKER_HOST=$(engine_host "$1")
  new_workspace
  crun sandbox image build
  like "$rc|$out" "^0\\|built crucible-sandbox:latest: sha256:" "$1: the image is built"
  [ "$rc" -eq 0 ] || diag "$err"
}
