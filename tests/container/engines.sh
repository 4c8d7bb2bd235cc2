#!/bin/bash
# The container tests' own engines (tests/container/lib.sh): dockerd and
# podman's service start on private sockets, an image is made there from
# busybox-static with no registry, a container runs from it, and stopping
# the engines leaves no process, mount, cgroup or file behind.  Every
# check can fail: a leftover of any kind is named.

. "$(dirname "$0")/lib.sh"

plan 8

# What exists outside the engines' directory before they start.  podman's
# libpod_parent is one parent for every podman on the machine (another
# script's may make it meanwhile), so what is this test's own under it is
# its containers' cgroups, by id.
own_cids=()
leftovers() {
  local c
  ls -d /etc/docker /run/docker /run/containerd /run/libpod /run/containers \
    /var/lib/docker /var/lib/containers/storage /var/lib/containers/cache \
    /sys/fs/cgroup/*/docker /sys/fs/cgroup/*/crucible-test-$$ 2>/dev/null
  for c in ${own_cids[@]+"${own_cids[@]}"}; do
    ls -d /sys/fs/cgroup/*/libpod_parent/*"$c"* /sys/fs/cgroup/libpod_parent/*"$c"* 2>/dev/null
  done
  grep -F "$ENGINE_DIR" /proc/mounts
}
before=$(leftovers)
engines_start docker podman
for engine in docker podman; do
  if ! engine_up "$engine"; then
    engine_skip 3 "$engine"
    continue
  fi
  id=$(engine_import "$engine")
  like "$id" '^sha256:[0-9a-f]{64}$' "$engine: crucible-sandbox:latest imported from busybox-static: $id"
  cid=$(engine_api "$engine" POST /containers/create -H 'Content-Type: application/json' \
    -d '{"Image":"crucible-sandbox:latest","Cmd":["/bin/sh","-c","echo ran"],"HostConfig":{"NetworkMode":"none"}}' \
    | sed -n 's/^{"Id":"\([0-9a-f]*\)".*/\1/p')
  [ -z "$cid" ] || own_cids+=("$cid")
  engine_api "$engine" POST "/containers/$cid/start" >/dev/null
  st=$(engine_api "$engine" POST "/containers/$cid/wait")
  logs=$(engine_api "$engine" GET "/containers/$cid/logs?stdout=1" | tr -d '\000-\010')
  engine_api "$engine" DELETE "/containers/$cid?force=1" >/dev/null
  like "$st|$logs" '"StatusCode":0.*\|.*ran' "$engine: a container from it runs"
  # The engine is in PID and mount namespaces of its own.
  upid=$(cat "$ENGINE_DIR/$engine/unshare.pid")
  child=$(cat "/proc/$upid/task/$upid/children")
  [ -n "$child" ] && [ "$(readlink "/proc/$child/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] \
    && [ "$(readlink "/proc/$child/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]
  ok $? "$engine: runs in its own PID and mount namespaces"
done
engines_stop
after=$(leftovers)
is "$after" "$before" "stopped: no directory, cgroup or mount left outside the test's own"
pids=$(ps -eo pid,args | grep -F "$ENGINE_DIR" | grep -v grep)
is "$pids" "" "stopped: no process of either engine left"
