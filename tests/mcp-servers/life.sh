# Sourced by the lifecycle tests (tests/integration/mcp-life*.sh,
# tests/security/mcp*.sh) after tests/integration/lib.sh: life_checks runs
# the Python program on standard input (it imports
# tests/mcp-servers/lifelib.py) with the ways that can run here, and turns
# its "0 WHAT" / "1 WHAT" / "S WHAT|WHY|REQUIREMENT" lines into TAP.

# Why each way cannot run here (empty: it can), as REQUIREMENT:REASON.
life_ways() {
  local run="$CRUCIBLE_BIN_DIR/helpers/sandbox_run" probe why=""
  LIFE_SKIP_unconfined=""
  if [ ! -x "$run" ]; then
    why="bwrap:no $run (make check installs it)"
  elif ! probe=$(PATH=/usr/bin:/bin "$run" --probe 2>&1); then
    why="bwrap:bwrap backend unusable: $(sed -n 's/^reason //p' <<<"$probe")"
  fi
  LIFE_SKIP_root=$why
  LIFE_SKIP_nobody=$why
  if [ -z "$why" ] && ! can_drop_privileges; then
    LIFE_SKIP_nobody="unprivileged:cannot take uid 65534 (needs root and setpriv)"
  fi
  export LIFE_SKIP_unconfined LIFE_SKIP_root LIFE_SKIP_nobody
}

life_checks() {
  local line d w r
  life_ways
  while IFS= read -r line; do
    case $line in
      '# '*) echo "$line" ;;
      [01]' '*) ok "${line%% *}" "${line#* }" ;;
      'S '*) IFS='|' read -r d w r <<<"${line#S }"; skip "$d" "$w" "$r" ;;
      'life exit 0') ;;
      'life exit '*) ok 1 "the checks ran to their end ($line)" ;;
      *) diag "$line" ;;
    esac
  done < <(PYTHONPATH="$CRUCIBLE_SRCDIR/tests/mcp-servers" TEST_TMP="$TEST_TMP" \
    CRUCIBLE="$CRUCIBLE" LIFE_SERVER="$CRUCIBLE_SRCDIR/tests/mcp-servers/life_server.py" \
    python3 -u - 2>&1; echo "life exit $?")
}
