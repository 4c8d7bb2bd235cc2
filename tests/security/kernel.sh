#!/bin/bash
# Escape attempts against the kernel interfaces a namespace does not
# separate, by class rather than by instance: every writable place under
# /proc (and /sys, were it mounted), the session keyring, and each class
# of system call the workload's seccomp filter refuses; and, as positive
# checks, that ordinary tools and strace of the command's own children
# still work inside.  TAP.
#
# Nothing here writes a host-global file: the /proc walk only opens (a
# write to a host sysctl as root would change the machine the suite runs
# on), and each system call is made in a form the kernel rejects on its
# arguments or that touches only the calling process.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PROBE_SRC="${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/kernel_probe.py"
PY=/usr/bin/python3
# One form each, chosen so that the kernel judges the arguments before any
# privilege: a call that gets EPERM or ENOSYS was refused by the filter.
SYSCALLS="keyctl add_key request_key mount umount2 open_tree fsconfig
  mount_setattr setns unshare clone_newuser clone_newns clone3 quotactl
  clock_settime clock_adjtime perf_event_open userfaultfd name_to_handle_at
  tiocsti tioclinux"
N_SYSCALLS=$(wc -w <<<"$SYSCALLS")

PER_IDENTITY=$((10 + 2 * N_SYSCALLS))
sec_begin "$PER_IDENTITY"
trap 'rm -rf "$TEST_TMP"' EXIT

# keyring_try MODE ID-FILE: in a session keyring of the identity's own
# holding two keys (one readable by its possessor only, one by its uid
# too), run the read and add attempts MODE (confined or unconfined) and
# print "read yes|no" and "add yes|no" as the host sees them.
keyring_try() {
  local mode=$1
  "${AS[@]}" env MODE="$mode" RUN="$SANDBOX_RUN" WS="$WS" \
    keyctl session - /bin/bash -c '
    pos=$(keyctl add user crucible-pos s3cret-pos @s) || exit 3
    usr=$(keyctl add user crucible-usr s3cret-usr @s) || exit 3
    keyctl setperm "$usr" 0x3f3f0000 || exit 3
    read="keyctl print $pos | grep -q s3cret || keyctl print $usr | grep -q s3cret"
    add="keyctl add user crucible-inner v @s >/dev/null"
    cd "$WS" || exit 3
    for what in read add; do
      if [ "$MODE" = confined ]; then
        "$RUN" --timeout 30 -- "${!what}" >/dev/null 2>&1
      else
        /bin/sh -c "${!what}" >/dev/null 2>&1
      fi
      rc=$?
      if [ "$what" = add ]; then
        keyctl search @s user crucible-inner >/dev/null 2>&1
        rc=$?
      fi
      [ "$rc" -eq 0 ] && echo "$what yes" || echo "$what no"
    done' 2>"$TEST_TMP/keyring.err"
}

# The tools a session uses to look at its own processes and the machine.
TOOLS='ps -e >/dev/null && top -b -n1 >/dev/null &&
  [ "$(/usr/bin/python3 -c "import os; print(os.cpu_count() > 0)")" = True ] &&
  grep -q MemTotal /proc/meminfo && grep -q "^Pid:" /proc/self/status &&
  sh -c "echo probe >/proc/\$\$/comm && grep -q probe /proc/\$\$/comm"'

for who in $ids; do
  sec_become "$who"
  cp "$PROBE_SRC" "$WS/kernel_probe.py"
  chmod 644 "$WS/kernel_probe.py"

  # --- /proc and /sys: every regular file, opened for writing --------------
  if [ "$who" = root ]; then
    # Root unconfined: host-global sysctls open, core_pattern among them.
    unconfined "$PY kernel_probe.py walk /proc"
    grep -qx /proc/sys/kernel/core_pattern <<<"$uout"
    ok $? "control ($WHO): unconfined, the walk finds /proc/sys/kernel/core_pattern writable"
  else
    # 65534 has nothing host-global to write; its own process entries,
    # which the real walk leaves out, show the walker sees writability.
    unconfined "$PY kernel_probe.py walk --own /proc/self/"
    [ "$urc" -eq 0 ] && ! grep -qx 'writable 0' <<<"$uout"
    ok $? "control ($WHO): unconfined, the walk finds its own /proc/self entries writable"
  fi
  [ "$urc" -eq 0 ] || diag "walk: $(tail -3 <<<"$uout")"
  confined "echo ran; $PY kernel_probe.py walk /proc /sys"
  walked=$(sed -n 's/^walked //p' <<<"$cout")
  if [ "${cout%%$'\n'*}" = ran ] && [ "$crc" -eq 0 ] \
     && grep -qx 'writable 0' <<<"$cout" && [ "${walked:-0}" -ge 100 ]; then
    ok 0 "confined ($WHO): nothing under /proc or /sys opens for writing outside its own processes"
  else
    ok 1 "confined ($WHO): nothing under /proc or /sys opens for writing outside its own processes"
    diag "status $crc, walked ${walked:-none}, $(grep '^writable' <<<"$cout")" \
      "$(grep '^/' <<<"$cout" | head -40)" "helper: $cerr"
  fi

  # Ordinary tools still read what they need.
  unconfined "$TOOLS"
  ok "$urc" "control ($WHO): unconfined, ps, top, os.cpu_count, /proc/meminfo and /proc/self work"
  confined "$TOOLS"
  ok "$crc" "confined ($WHO): ps, top, os.cpu_count, /proc/meminfo and /proc/self work"
  [ "$crc" -eq 0 ] || diag "status $crc" "output: $cout" "helper: $cerr"

  # --- the session keyring ---------------------------------------------------
  if ! command -v keyctl >/dev/null 2>&1; then
    for i in 1 2 3 4; do
      skip "keyring ($WHO)" "keyctl is missing (keyutils)" keyutils
    done
  else
    got=$(keyring_try unconfined)
    grep -qx 'read yes' <<<"$got"
    ok $? "control ($WHO): unconfined, a key of the session keyring is read"
    grep -qx 'add yes' <<<"$got"
    ok $? "control ($WHO): unconfined, a key is added to the session keyring"
    got=$(keyring_try confined)
    grep -qx 'read no' <<<"$got"
    ok $? "confined ($WHO): a key of the starting session keyring cannot be read"
    grep -qx 'add no' <<<"$got"
    ok $? "confined ($WHO): no key reaches the starting session keyring"
    grep -qx 'read no' <<<"$got" && grep -qx 'add no' <<<"$got" \
      || diag "confined: $got"
  fi

  # --- each class of refused system call -------------------------------------
  if [ "$(uname -m)" != x86_64 ]; then
    for ((i = 0; i < 2 * N_SYSCALLS; i++)); do
      skip "system call classes ($WHO)" "the probe's numbers are x86-64's"
    done
  else
    for s in $SYSCALLS; do
      attempt "calling $s" "$PY kernel_probe.py syscall $s"
    done
  fi

  # --- debugging the command's own children still works ----------------------
  TRACE='strace -f -o /tmp/st.log sh -c "/bin/true; exit 0" && grep -q "execve(\"/bin/true\"" /tmp/st.log'
  unconfined "TMPDIR=$OUT; ${TRACE//\/tmp\//$OUT/}"
  ok "$urc" "control ($WHO): unconfined, strace -f of a child works"
  confined "$TRACE"
  ok "$crc" "confined ($WHO): strace -f of a child works"
  [ "$crc" -eq 0 ] || diag "status $crc" "output: $cout" "helper: $cerr"
done
