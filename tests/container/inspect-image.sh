#!/bin/bash
# The container backend's engine, asked and used without running a
# command, against both engines (tests/container/lib.sh):
# `crucible sandbox inspect` with sandbox.backend "container" says it is
# asking the engine, reports what the engine's own /info says (runtime,
# cgroup version, memory/swap/pids limits, seccomp, rootless) beside what
# crucible would ask for, and the image ID, creating nothing;
# `crucible sandbox image build` makes the image from busybox-static with
# no registry (and with --from on a local image), the ID it prints being
# the engine's.  Then, with no engine: unreachable is "unavailable" with
# the reason, plain tcp to another host is refused, a dynamic busybox is
# refused naming busybox-static, and commands are refused (never run
# unconfined), the audit has nothing to audit and `sandbox enable` refuses,
# while confinement is enabled with this backend.

. "$(dirname "$0")/lib.sh"

plan 28

new_workspace
mkdir -p "$HOME/.crucible"
home_config() { printf '%s\n' "$1" >"$HOME/.crucible/config.json"; }
home_config '{"sandbox": {"enabled": true, "backend": "container"}}'
NO_IMAGE='the image is not on the engine; `crucible sandbox image build` makes it'

# info_field NAME FIELD: FIELD of the engine's own /info, as JSON text.
info_field() {
  engine_api "$1" GET /v1.41/info | python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin).get('$2')))"
}
# json_field TEXT PATH: a member of a JSON text (dotted path), as JSON.
json_field() {
  python3 -c "import json,sys
v=json.loads(sys.argv[1])
for k in sys.argv[2].split('.'): v=v.get(k) if isinstance(v,dict) else None
print(json.dumps(v))" "$1" "$2"
}

# engine_checks ENGINE: the checks against one engine (engines_each runs
# the two engines' at the same time, each with a HOME of its own).
engine_checks() {
  local engine=$1
  if ! engine_up "$engine"; then
    engine_skip 8 "$engine"
    return 0
  fi
  export DOCKER_HOST
  DOCKER_HOST=$(engine_host "$engine")
  before=$(engine_api "$engine" GET "/v1.41/containers/json?all=1")
  crun sandbox inspect
  like "$rc|$err|$out" "^0\\|Asking the engine…\\|sandbox enabled in $WS
  mode      enabled by home configuration
  backend   container
  isolation container
  engine    unix://<path>, from DOCKER_HOST
  status    the engine answers; commands are refused until the image is on it
.*  engine                $engine [^ ]+, API 1\\.41
  runtime               runc
  cgroups               v1, cgroupfs driver
.*  image                 crucible-sandbox:latest, not on the engine" \
    "$engine: inspect asks the engine (saying so) and reports it, no image yet"
  like "$out" "memory and swap 1 GiB together +memory limit yes, swap limit yes
  1024 processes \\(cgroup\\) +pids limit yes
  the engine's seccomp profile +seccomp yes \\(profile default\\)" \
    "$engine: what crucible would ask, beside what the engine holds"
  crun sandbox inspect --json
  got="$(json_field "$out" engine.memory_limit) $(json_field "$out" engine.swap_limit) $(json_field "$out" engine.pids_limit) $(json_field "$out" engine.cgroup_version) $(json_field "$out" engine.runtime)"
  want="$(info_field "$engine" MemoryLimit) $(info_field "$engine" SwapLimit) $(info_field "$engine" PidsLimit) $(info_field "$engine" CgroupVersion) $(info_field "$engine" DefaultRuntime)"
  is "$got" "$want" "$engine: --json reports what the engine's own /info says ($want)"
  is "$(json_field "$out" status)|$(json_field "$out" engine_reachable)|$(json_field "$out" reason)" \
    "\"unavailable\"|true|\"$NO_IMAGE\"" "$engine: --json: reachable, and no command runs through it without the image"
  crun sandbox image build
  id=$(engine_api "$engine" GET /v1.41/images/crucible-sandbox:latest/json | sed -n 's/^{"Id":"\(sha256:[0-9a-f]*\)".*/\1/p')
  is "$rc|$out" "0|built crucible-sandbox:latest: $id" \
    "$engine: image build makes crucible-sandbox:latest from busybox-static and prints its ID"
  crun sandbox inspect --json
  is "$(json_field "$out" image.id)|$(json_field "$out" status)|$(json_field "$out" isolation)" "\"$id\"|\"available\"|\"container\"" \
    "$engine: inspect reports the image ID; commands run through it"
  after=$(engine_api "$engine" GET "/v1.41/containers/json?all=1")
  is "$after" "$before" "$engine: inspecting created no container"
  # --from: crucible's tools layered onto a local image, nothing pulled.
  engine_import "$engine" base-image 1 >/dev/null
  home_config '{"sandbox": {"enabled": true, "backend": "container", "container": {"image": "layered:1"}}}'
  crun sandbox image build --from base-image:1
  cid=$(engine_api "$engine" POST /v1.41/containers/create -H 'Content-Type: application/json' \
    -d '{"Image":"layered:1","Cmd":["/usr/local/lib/crucible/busybox","sh","-c","test -d /workspace && echo layered"],"HostConfig":{"NetworkMode":"none"}}' \
    | sed -n 's/^{"Id":"\([0-9a-f]*\)".*/\1/p')
  engine_api "$engine" POST "/v1.41/containers/$cid/start" >/dev/null
  engine_api "$engine" POST "/v1.41/containers/$cid/wait" >/dev/null
  logs=$(engine_api "$engine" GET "/v1.41/containers/$cid/logs?stdout=1" | tr -d '\000-\010')
  engine_api "$engine" DELETE "/v1.41/containers/$cid?force=1" >/dev/null
  [ "$rc" -eq 0 ] || diag "$err"
  like "$rc|$out|$logs" "^0\\|built layered:1: sha256:[0-9a-f]{64}\\|.*layered" \
    "$engine: image build --from layers busybox and the workspace onto a local image"
  home_config '{"sandbox": {"enabled": true, "backend": "container"}}'
}
engines_start docker podman
engines_each engine_checks

# --- no engine ----------------------------------------------------------------
export DOCKER_HOST="unix://$TEST_TMP/nothing.sock"
crun sandbox inspect
is "$rc|$err|$out" "0|Asking the engine…|sandbox enabled in $WS
  mode      enabled by home configuration
  backend   container
  isolation container
  engine    unix://<path>, from DOCKER_HOST
  status    unavailable

the engine cannot be used:
  engine unix://<path>: GET /_ping: cannot connect to its socket: Couldn't connect to server
  commands are refused, never run unconfined, while sandbox.enabled is true" \
  "no engine: inspect says unavailable, with the reason"
crun sandbox inspect --json
is "$out" '{"format_version":1,"kind":"sandbox-inspection","status":"unavailable","enabled":true,"backend":"container","isolation":"container","engine_reachable":false,"engine":{"address":"unix://<path>","source":"DOCKER_HOST"},"reason":"engine unix://<path>: GET /_ping: cannot connect to its socket: Couldn'"'"'t connect to server"}' \
  "no engine: inspect --json says unavailable, with the reason"
export DOCKER_HOST=tcp://192.0.2.7:2375
crun sandbox inspect --json
is "$(json_field "$out" reason)" '"the engine tcp://192.0.2.7:2375 (DOCKER_HOST): plain tcp:// without TLS is refused unless the address is a numeric loopback address; set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH"' \
  "plain tcp to another host: refused before connecting"
crun sandbox image build
like "$rc|$err" "^1\\|crucible: the engine tcp://192.0.2.7:2375 \\(DOCKER_HOST\\): plain tcp:// without TLS is refused" \
  "plain tcp to another host: image build refused too"
home_config '{"sandbox": {"enabled": true, "backend": "container", "container": {"engine": "unix:///nonexistent.sock"}}}'
crun sandbox inspect --json
is "$(json_field "$out" engine.source)" '"sandbox.container.engine"' \
  "sandbox.container.engine comes before DOCKER_HOST"
home_config '{"sandbox": {"enabled": true, "backend": "container"}}'
unset DOCKER_HOST

# A dynamic busybox (here, another program in its place) is refused by
# name before any engine is asked.
if [ "$(id -u)" -eq 0 ] && engine_up docker; then
  out=$(DOCKER_HOST=$(engine_host docker) unshare -m --propagation private \
    sh -c 'mount --bind /bin/true /bin/busybox && exec "$@"' sh "$CRUCIBLE" sandbox image build 2>&1) && rc=0 || rc=$?
  like "$rc|$out" "^1\\|.*crucible: building the image crucible-sandbox:latest: /bin/busybox is not a statically linked 64-bit ELF program; the image needs busybox-static \\(apt-get install busybox-static\\)" \
    "a busybox that is not busybox-static is refused, naming the package"
else
  skip "dynamic busybox refused" "needs root and dockerd" docker
fi

# --- commands, with no engine --------------------------------------------------
export DOCKER_HOST="unix://$TEST_TMP/nothing.sock"
UNREACHABLE='the container engine cannot be used: engine unix://[^ ]*: GET [^ ]*: cannot connect to its socket: Couldn.t connect to server'
rm -f "$WS/ran"
crun run touch "$WS/ran"
like "$rc|$out" "^125\\|\\[refused: confinement is enabled \\(sandbox.enabled\\), but the sandbox backend cannot be used here: $UNREACHABLE; commands are never run unconfined while it is enabled; nothing was run\\]$" \
  "enabled with the container backend and no engine: the command is refused (125)"
[ ! -e "$WS/ran" ]
ok $? "enabled with the container backend and no engine: nothing ran"
crun sandbox audit
like "$rc|$err" "^3\\|crucible: sandbox audit: no backend to audit: the container backend cannot be used here: $UNREACHABLE$" \
  "enabled with the container backend and no engine: the audit has no backend (3)"
home_config '{"sandbox": {"backend": "container"}}'
crun sandbox enable
like "$rc|$err" "^1\\|crucible: confinement was not enabled: no sandbox backend was found: $UNREACHABLE; nothing was changed$" \
  "sandbox enable with the container backend and no engine: refused, nothing changed"
unset DOCKER_HOST
crun run echo hi
is "$rc|$out" "0|hi" "disabled: the command runs (compatibility, as with every backend)"
crun sandbox image build --fro x
like "$rc|$err" "^2\\|crucible: sandbox image build: unknown option '--fro'" "image build: an unknown option is a usage error"
