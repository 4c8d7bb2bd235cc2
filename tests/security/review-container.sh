#!/bin/bash
# A reviewer's pass over what the container backend publishes that git
# would run on the host (issue 15), against both engines
# (tests/container/lib.sh starts dockerd and Podman's service once).  The
# bwrap backend keeps the directory core.hooksPath names inside the
# workspace (husky's .husky/_, a .githooks) and the git directory a `.git`
# file's `gitdir:` names inside it as it keeps .git: read-only inside,
# refused at publication (doc/linux-confinement.md).  A command in a
# container writes into each; what it wrote must not reach the workspace,
# where the person's next commit would run it.  The control: the same
# command's write to a plain directory beside them is published.  The
# same through a container crucible mcp kept ready before core.hooksPath
# was set (the kept one is used, and its write there is not published).
# TAP.

. "$(dirname "$0")/../container/lib.sh"

PER_ENGINE=6
plan $((2 * PER_ENGINE))

# running NAME: the sandbox IDs of the containers running on engine NAME.
running() {
  engine_api "$1" GET "/v1.41/containers/json" \
    | grep -o '"org.crucible.sandbox":"[0-9a-f]*"' | sed 's/.*:"\(.*\)"/\1/'
}
# journal: the facts of the newest session.
journal() { cat "$(ls -t "$HOME"/.local/state/crucible/*.jsonl | head -1)"; }
. "$CRUCIBLE_SRCDIR/tests/integration/mcpcoproc.sh"

engines_start docker podman
for engine in docker podman; do
  container_home
  engine_begin "$engine" "$PER_ENGINE" || continue

  # core.hooksPath names hooks/, inside the workspace.
  git init -q . && git config core.hooksPath hooks
  mkdir -p hooks plain
  crun run 'echo "#!/bin/sh" >plain/x && echo "#!/bin/sh" >hooks/pre-commit; echo done'
  diag "hooks: rc=$rc out=$out"
  ok "$([ -e plain/x ] && echo 0 || echo 1)" \
    "$engine: control: the command's write to a plain directory is published"
  ok "$([ ! -e hooks/pre-commit ] && echo 0 || echo 1)" \
    "$engine: a write into the directory core.hooksPath names is not published"

  # A .git file whose gitdir: names .realgit, inside the workspace.
  new_workspace
  git init -q --separate-git-dir="$WS/.realgit" .
  git config core.hooksPath hooks
  mkdir -p hooks
  crun run 'echo "#!/bin/sh" >.realgit/hooks/pre-commit; echo "#!/bin/sh" >hooks/pre-commit; echo done'
  diag "gitdir: rc=$rc out=$out"
  ok "$([ ! -e .realgit/hooks/pre-commit ] && [ ! -e hooks/pre-commit ] && echo 0 || echo 1)" \
    "$engine: a write into the hooks of the git directory a .git file names, or into its core.hooksPath, is not published"

  # Kept before core.hooksPath was set.
  new_workspace
  git init -q .
  mkdir -p hooks
  echo '{"sandbox": {"enabled": true, "backend": "container"}, "permissions": {"allow": ["Bash(*)"]}}' \
    >"$HOME/.crucible/config.json"
  start_mcp
  kept=
  for _ in $(seq 200); do
    kept=$(running "$engine")
    [ "$(wc -w <<<"$kept")" -eq 1 ] && break
    sleep 0.1
  done
  git config core.hooksPath hooks
  send '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo x >plain.txt; echo x >hooks/pre-commit; echo done"}}}'
  reply=$(recv)
  diag "kept: $reply"
  used=$(journal | grep '"fact":"start"' | sed -n 's/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' | tail -1)
  ok "$([ -n "$kept" ] && [ "$used" = "$kept" ] && [ -e plain.txt ] && echo 0 || echo 1)" \
    "$engine: control: the call ran in the container kept before, and its plain write was published"
  ok "$([ ! -e hooks/pre-commit ] && echo 0 || echo 1)" \
    "$engine: in a container kept before core.hooksPath was set, a write there is not published"
  exec {mcp_in}>&-
  wait "$mcp_pid" 2>/dev/null
done
