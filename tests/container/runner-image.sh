#!/bin/bash
# `crucible sandbox image build` bakes the job runner (crucible-job-runner,
# installed under libexec/crucible) into the image, without and with
# --from, at /usr/local/lib/crucible/crucible-job-runner, and labels the
# image with its SHA-256 (org.crucible.runner.sha256), against both
# engines (tests/container/lib.sh).  A container of each image reads the
# runner's bytes back: they are the installed runner's, so the label
# names what is in the image.  Then a job through the container's attached
# standard input (tests/helpers/job_drive --via the engine's own client,
# `docker run -i` / `podman run -i`): the runner, PID 1 as uid 65534 on a
# read-only root with a tmpfs workspace, answers, and its changes publish.

. "$(dirname "$0")/lib.sh"

plan 12

RUNNER="$CRUCIBLE_BIN_DIR/../libexec/crucible/crucible-job-runner"
new_workspace
mkdir -p "$HOME/.crucible"
home_config() { printf '%s\n' "$1" >"$HOME/.crucible/config.json"; }
want=$(sha256sum "$RUNNER" 2>/dev/null | cut -d' ' -f1)

# label ENGINE IMAGE: the image's runner label.
label() {
  engine_api "$1" GET "/v1.41/images/$2/json" | python3 -c \
    "import json,sys; print((json.load(sys.stdin).get('Config') or {}).get('Labels', {}).get('org.crucible.runner.sha256'))"
}

# inside ENGINE IMAGE SHA256SUM: the runner's digest read in a container
# of the image (no network), by the image's own sha256sum.
inside() {
  local cid
  cid=$(engine_api "$1" POST /v1.41/containers/create -H 'Content-Type: application/json' \
    -d "{\"Image\":\"$2\",\"Cmd\":[\"$3\",\"sha256sum\",\"/usr/local/lib/crucible/crucible-job-runner\"],\"HostConfig\":{\"NetworkMode\":\"none\"}}" \
    | sed -n 's/^{"Id":"\([0-9a-f]*\)".*/\1/p')
  engine_api "$1" POST "/v1.41/containers/$cid/start" >/dev/null
  engine_api "$1" POST "/v1.41/containers/$cid/wait" >/dev/null
  engine_api "$1" GET "/v1.41/containers/$cid/logs?stdout=1" | tr -d '\000-\010' | cut -d' ' -f1 | tr -dc '0-9a-f'
  engine_api "$1" DELETE "/v1.41/containers/$cid?force=1" >/dev/null
}

# job ENGINE: one job through `run -i` of the engine's client.
job() {
  local cli root="$TEST_TMP/root-$1" state="$TEST_TMP/state-$1"
  case $1 in
  docker) cli="docker -H $DOCKER_HOST" ;;
  podman) cli="podman --url $DOCKER_HOST" ;;
  esac
  if ! command -v "${cli%% *}" >/dev/null || [ ! -x "$HELPERS/job_drive" ]; then
    skip "$1: a job in a container" "no ${cli%% *} client or job_drive" "$1"
    skip "$1: a job in a container" "no ${cli%% *} client or job_drive" "$1"
    return
  fi
  mkdir -p "$root/sub" "$state"
  chmod 700 "$state"
  echo old >"$root/sub/b"
  "$HELPERS/job_drive" --runner none --scratch none --root "$root" --statedir "$state" \
    --via "$cli run -i --rm --network none --read-only --user 65534:65534 --cap-drop all \
      --security-opt no-new-privileges --tmpfs /workspace:rw,exec,nosuid,nodev,size=16m \
      --tmpfs /tmp:rw,exec,nosuid,nodev,size=16m crucible-sandbox:latest \
      /usr/local/lib/crucible/crucible-job-runner" \
    -- 'cat sub/b; echo new >n; rm sub/b' >"$TEST_TMP/out" 2>"$TEST_TMP/err"
  local err
  err=$(cat "$TEST_TMP/err")
  like "$(sed -n 's/^R: //p' <<<"$err")" "^uid=65534 gid=65534 .*caps=0+,0+,0+,0+ .*root_ro=1 .*net= " \
    "$1: the runner answers from inside: uid 65534, no capabilities, a read-only root, no network"
  is "$(cat "$TEST_TMP/out")|$(sed -n 's/^publish: //p' <<<"$err")|$(cat "$root/n")|$(ls "$root/sub")" \
    "old|published paths=3|new|" "$1: the job's output comes back and its changes publish"
}

if [ -z "$want" ]; then
  for i in $(seq 12); do skip "the runner in the image" "no $RUNNER (make check installs it)"; done
  exit 0
fi
# engine_checks ENGINE: the checks against one engine (engines_each runs
# the two engines' at the same time, each with a HOME of its own).
engine_checks() {
  local engine=$1
  if ! engine_up "$engine"; then
    engine_skip 6 "$engine"
    return 0
  fi
  export DOCKER_HOST
  DOCKER_HOST=$(engine_host "$engine")
  home_config '{"sandbox": {"enabled": true, "backend": "container"}}'
  crun sandbox image build
  [ "$rc" -eq 0 ] || diag "$err"
  is "$(label "$engine" crucible-sandbox:latest)" "$want" \
    "$engine: image build labels the image with the runner's SHA-256"
  is "$(inside "$engine" crucible-sandbox:latest /bin/busybox)" "$want" \
    "$engine: and the runner in it is the installed one"
  engine_import "$engine" base-image 1 >/dev/null
  home_config '{"sandbox": {"enabled": true, "backend": "container", "container": {"image": "layered:1"}}}'
  crun sandbox image build --from base-image:1
  [ "$rc" -eq 0 ] || diag "$err"
  is "$(label "$engine" layered:1)" "$want" \
    "$engine: image build --from labels the layered image with it too"
  is "$(inside "$engine" layered:1 /usr/local/lib/crucible/busybox)" "$want" \
    "$engine: and layers the installed runner onto it"
  job "$engine"
}
engines_start docker podman
engines_each engine_checks
