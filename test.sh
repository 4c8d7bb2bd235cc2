#!/bin/bash
# Run crucible's whole test suite the way CI does, and end with one line:
#   N passed, N failed, N skipped
# Stages: a -Wall -Wextra -Werror build running every test, with make
# lint beside it; publication's fault tests over a build with fault
# points; an ASan+UBSan build running the unit and integration tests; make
# bench-smoke; the Debian packages built, installed and run.  Every skip is printed with its reason.  As root it installs
# the Debian packages it needs.
#
# CRUCIBLE_TEST_TESTS, when set, runs only the tests it names (paths as in
# Makefile.am's TESTS, separated by spaces): make check's in both stages,
# and of the scripts this runs itself (faults, unprivileged, package) those
# named; the builds, make lint, the audits and make bench-smoke run as
# ever.  It is for trying a change to this script, not for CI.
set -uo pipefail
top=$(cd "$(dirname "$0")" && pwd)
. "$top/tools/deps.sh"
deps_ensure "$DEPS_BUILD" "$DEPS_TEST" "$DEPS_PACKAGE" || exit 1
only=${CRUCIBLE_TEST_TESTS:-}
check_only=()
[ -z "$only" ] || check_only=(TESTS="$only")
# wanted TEST: whether TEST runs (every test, unless CRUCIBLE_TEST_TESTS).
wanted() { [ -z "$only" ] || [[ " $only " == *" $1 "* ]]; }
# The real MCP servers some tests talk to, pinned by a lockfile; without
# the npm registry those tests skip (and fail where they are required).
# npm ci waits on the registry more than it computes: it runs beside
# autoreconf and the plain build, and the plain stage's tests wait for it.
mcp_test_servers &
mcp_pid=$!
cd "$top" || exit 1
autoreconf -fi >/dev/null 2>&1 || { autoreconf -fi; wait "$mcp_pid"; exit 1; }

work=${CRUCIBLE_TEST_BUILDDIR:-$top/build-test}
rm -rf "$work"
mkdir -p "$work"
# The unprivileged user exists before any test runs: run-groups.sh's
# check of root over another user's workspace needs it in the plain stage.
[ "$(id -u)" -eq 0 ] && ! id crucibletest >/dev/null 2>&1 &&
  useradd --create-home --shell /bin/bash crucibletest
passed=0 failed=0 skipped=0
failures=() skips=()

# Announce a stage, with the seconds the suite has run so far.
stage() {
  echo "== [${SECONDS}s] $*"
}

# Record one stage that is a single result.
stage_result() {
  if [ "$2" -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$1 (see $3)")
  fi
}

# Count the TAP results of a build's test logs.
count_results() {
  local dir=$1 label=$2 trs log line before named
  while IFS= read -r trs; do
    log=${trs%.trs}.log
    before=$failed named=${#failures[@]}
    while IFS= read -r line; do
      case "$line" in
        ":test-result: PASS"*) passed=$((passed + 1)) ;;
        ":test-result: SKIP"*) skipped=$((skipped + 1)) ;;
        ":test-result: "*) failed=$((failed + 1)) ;;
      esac
    done <"$trs"
    # Which checks failed, as the log names them (the .trs does not).
    if [ "$failed" -gt "$before" ]; then
      while IFS= read -r line; do
        failures+=("$label: $line")
      done < <(grep -E '^(FAIL|ERROR|XPASS): ' "$log" 2>/dev/null)
      [ "${#failures[@]}" -gt "$named" ] ||
        failures+=("$label: ${log#"$dir"/} failed")
    fi
    while IFS= read -r line; do
      skips+=("$label: ${log#"$dir"/}: $line")
    done < <(grep -E '^ok [0-9]+ .*# SKIP' "$log" 2>/dev/null | sed 's/^ok [0-9]* - //')
  done < <(find "$dir/tests" -name '*.trs' | sort)
}

# Print the slowest tests of a build's last make check, with their seconds
# (from when each test's log was made to when its result was written).
slowest() {
  local dir=$1 trs log born
  while IFS= read -r trs; do
    log=${trs%.trs}.log
    born=$(stat -c %W "$log" 2>/dev/null) && [ "$born" -gt 0 ] || continue
    echo "$(($(stat -c %Y "$trs") - born)) ${log#"$dir"/}"
  done < <(find "$dir/tests" -name '*.trs') | sort -rn | head -n 8 | sed 's/^/   slowest: /'
}

# check_stage DIR LABEL JOBS: make check in DIR, its results counted; a
# make check that fails with no test failing (a check program that did
# not build) fails too.
check_stage() {
  local dir=$1 label=$2 before=$failed rc
  (cd "$dir" && make -j"$3" check "${check_only[@]}") >"$dir.check.log" 2>&1
  rc=$?
  count_results "$dir" "$label"
  if [ "$rc" -ne 0 ] && [ "$failed" -eq "$before" ]; then
    failed=$((failed + 1))
    failures+=("$label: make check failed with no test failing (see $dir.check.log)")
  fi
  slowest "$dir"
}

# Count the TAP lines of a script run outside make (ok, not ok, # SKIP).
count_tap() {
  local label=$1 log=$2 line
  while IFS= read -r line; do
    case "$line" in
      "not ok "*) failed=$((failed + 1)); failures+=("$label: ${line#not ok }") ;;
      "ok "*"# SKIP"*) skipped=$((skipped + 1)); skips+=("$label: ${line#ok }") ;;
      "ok "*) passed=$((passed + 1)) ;;
      "Bail out!"*) failed=$((failed + 1)); failures+=("$label: $line") ;;
    esac
  done <"$log"
}

# Run the sandbox's tests again as an unprivileged user, against the
# binaries the plain build installed: the boundary must hold for both.
run_unprivileged() {
  local user=crucibletest dir=$work/unprivileged t log
  if [ "$(id -u)" -ne 0 ]; then
    skipped=$((skipped + 1))
    skips+=("unprivileged: not root, so no unprivileged user can be taken")
    return
  fi
  mkdir -p "$dir"
  chown "$user" "$dir"
  for t in $UNPRIVILEGED_TESTS; do
    wanted "$t" || continue
    log=$dir/$(basename "$t").log
    runuser -u "$user" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
      HOME="$(getent passwd "$user" | cut -d: -f6)" TMPDIR=/tmp \
      CRUCIBLE_BIN_DIR=/opt/crucible-check/bin CRUCIBLE_SRCDIR="$top" \
      CRUCIBLE_HELPER_DIR="$work/plain/tests/helpers" \
      CRUCIBLE_TEST_REQUIRE="${CRUCIBLE_TEST_REQUIRE:-}" \
      bash "$top/$t" >"$log" 2>&1 </dev/null
    count_tap "unprivileged: $t" "$log"
  done
}

# The tests that run again as an unprivileged user.
# (tests/security/ already runs every escape attempt as root and as uid
# 65534 from within each script.)
# The Linux backend must pass the conformance audit for both identities
# (.ci/run requires bwrap, so its absence fails rather than skips).
UNPRIVILEGED_TESTS="tests/integration/run-scope.sh tests/integration/run-notes.sh
tests/integration/run-confined.sh
tests/integration/broker.sh tests/integration/sandbox-inspect.sh
tests/integration/sandbox-audit.sh tests/integration/sandbox-audit-library.sh"
UNPRIVILEGED_TESTS="$UNPRIVILEGED_TESTS tests/integration/prepare-ahead.sh"

# Configure and build in a directory; the log is kept.
build_in() {
  local dir=$1; shift
  mkdir -p "$dir"
  (cd "$dir" && "$top/configure" -q "$@" && make -j"$(nproc)") >"$dir.build.log" 2>&1
}

# build_beside CMD...: CMD (which keeps its own log) in the background at
# nice 19; the caller waits for $! and takes its result.
build_beside() {
  (renice -n 19 -p "$BASHPID" >/dev/null && "$@") </dev/null &
}

# The sanitizer build, and its check programs with its check prefix
# installed (make check with no test), so that its stage only runs tests.
build_asan() {
  build_in "$work/asan" --enable-werror --enable-sanitizers \
    CRUCIBLE_CHECK_PREFIX=/opt/crucible-check-asan &&
    (cd "$work/asan" && make -j"$(nproc)" check TESTS=) >>"$work/asan.build.log" 2>&1
}

# The fault-injection build: publication's crash and fault tests need fault
# points in the helper that drives publication (tests/helpers/publish_run),
# and a core of crucible forced while it holds a credential, in crucible.
# crucible is made by `make all`, which makes the generated sources first
# (`make crucible` alone fails in a new build for want of
# tui/theme_builtin.h, and credentials-core.sh then skipped every check).
build_faults() {
  mkdir -p "$work/faults" && cd "$work/faults" &&
    { "$top/configure" -q --enable-werror --enable-fault-injection &&
      make -j"$(nproc)" && make -j"$(nproc)" tests/helpers/publish_run; } \
      >"$work/faults.build.log" 2>&1
}

stage "plain build (-Wall -Wextra -Werror)"
build_in "$work/plain" --enable-werror
stage_result "plain build" $? "$work/plain.build.log"

# The sanitizer and fault-injection builds beside the plain stage's tests,
# at nice 19: they take the CPU those tests leave while they wait, and give
# it back at once when a test wants it (a nice-0 task outweighs a nice-19
# one some 70 to 1), so the plain stage's bounds meet the load they met
# before.  Each one's result is taken before its tests run.
stage "ASan+UBSan and fault-injection builds (beside the plain stage, at nice 19)"
build_beside build_asan
asan_build_pid=$!
build_beside build_faults
faults_build_pid=$!
# The tests are independent and spend most of their time waiting (a
# sandbox's start, a timer, a peer, an engine), so each stage runs more of
# them than there are cores: one more in each stage, the plain stage with
# make lint beside it.  (The sanitizer stage's tests use their CPU: at two
# more, under load, their hang guards ran out.)
# CRUCIBLE_TEST_JOBS says otherwise for both.
check_jobs=${CRUCIBLE_TEST_JOBS:-$(($(nproc) + 1))}
asan_jobs=${CRUCIBLE_TEST_JOBS:-$(($(nproc) + 1))}

# make lint (cppcheck and one clang-tidy: one core, minutes) over the
# plain build, beside the plain stage's tests, which leave a core idle
# while they wait; its result is taken after the sanitizer stage.
stage "make lint (beside the plain stage, its result counted below)"
(cd "$work/plain" && make lint) >"$work/lint.log" 2>&1 </dev/null &
lint_pid=$!

stage "plain build: make check"
wait "$mcp_pid" || echo "warning: the MCP test servers could not be installed" >&2
check_stage "$work/plain" plain "$check_jobs"

# Publication's crash and fault tests, over the fault-injection build.
stage "fault injection: publication killed at every step"
wait "$faults_build_pid"
stage_result "fault-injection build" $? "$work/faults.build.log"
if wanted tests/faults/publish-crash.sh; then
  CRUCIBLE_BIN_DIR=/opt/crucible-check/bin CRUCIBLE_SRCDIR="$top" \
    CRUCIBLE_HELPER_DIR="$work/faults/tests/helpers" CRUCIBLE_FAULT_TREES=4 \
    bash "$top/tests/faults/publish-crash.sh" >"$work/faults.log" 2>&1 </dev/null
  count_tap faults "$work/faults.log"
fi
# The hard-linked backups against a racer: skipped by the plain build's
# make check, which has no fault points, and run here over this build.
if wanted tests/security/backup.sh; then
  CRUCIBLE_BIN_DIR=/opt/crucible-check/bin CRUCIBLE_SRCDIR="$top" \
    CRUCIBLE_HELPER_DIR="$work/faults/tests/helpers" \
    bash "$top/tests/security/backup.sh" >"$work/faults-backup.log" 2>&1 </dev/null
  count_tap faults-backup "$work/faults-backup.log"
fi
# A core of crucible forced while it holds a credential (issue 14): the
# same fault build's crucible, run uninstalled.
if wanted tests/integration/credentials-core.sh; then
  CRUCIBLE_BIN_DIR="$work/faults" CRUCIBLE_SRCDIR="$top" \
    bash "$top/tests/integration/credentials-core.sh" >"$work/faults-core.log" 2>&1 </dev/null
  count_tap faults-core "$work/faults-core.log"
fi

stage "sandbox tests as an unprivileged user"
chmod -R a+rX "$work/plain/tests/helpers" 2>/dev/null
run_unprivileged

# The Linux backend must pass the conformance audit with no fault and
# nothing unreached, as root and as the unprivileged user.  Where no bwrap
# can be used (exit 3) that is a skip, unless bwrap is required.
audit_linux() {
  local label=$1 dir=$2 log=$work/audit-$1.log rc; shift 2
  (cd "$dir" && "$@" /opt/crucible-check/bin/crucible sandbox audit \
    --backend linux-bubblewrap) >"$log" 2>&1 </dev/null
  rc=$?
  if [ "$rc" -eq 3 ] && [[ ",${CRUCIBLE_TEST_REQUIRE:-}," != *",bwrap,"* ]]; then
    skipped=$((skipped + 1))
    skips+=("conformance audit ($label): $(tail -n 1 "$log")")
    return
  fi
  grep -q '^unreached' "$log" && rc=1
  stage_result "conformance audit of linux-bubblewrap ($label)" "$rc" "$log"
}

stage "conformance audit of the Linux backend"
audit_linux root "$work"
if [ "$(id -u)" -eq 0 ] && id crucibletest >/dev/null 2>&1; then
  audit_linux unprivileged "$work/unprivileged" runuser -u crucibletest -- \
    env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
    HOME="$(getent passwd crucibletest | cut -d: -f6)"
fi

stage "ASan+UBSan build: make check"
wait "$asan_build_pid"
stage_result "sanitizer build" $? "$work/asan.build.log"
check_stage "$work/asan" asan "$asan_jobs"
stage "make lint's result"
wait "$lint_pid"
stage_result "make lint" $? "$work/lint.log"

stage "make bench-smoke"
(cd "$work/plain" && make bench-smoke) >"$work/bench.log" 2>&1
stage_result "make bench-smoke" $? "$work/bench.log"
sed 's/^/   /' "$work/bench.log" | grep -E 'ratio|start:|capture:' || true

# Last, since it installs the packages on this machine (and removes them).
if wanted tests/package/debian.sh; then
  stage "Debian packages: built, checked by lintian, installed, run"
  CRUCIBLE_SRCDIR="$top" bash "$top/tests/package/debian.sh" >"$work/package.log" 2>&1 </dev/null
  count_tap package "$work/package.log"
fi

for s in "${skips[@]+"${skips[@]}"}"; do echo "SKIP: $s"; done
for f in "${failures[@]+"${failures[@]}"}"; do echo "FAIL: $f"; done
stage "done"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
