#!/bin/bash
# Escape attempts against privilege isolation: mount, a new user
# namespace, a setuid binary, capabilities, mknod of a real device.  TAP.
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "${CRUCIBLE_SRCDIR:-$(dirname "$0")/../..}/tests/security/lib.sh"

PER_IDENTITY=9
sec_begin "$PER_IDENTITY"

for who in $ids; do
  sec_become "$who"
  mkdir "$WS/m" && chmod 777 "$WS/m"

  # Directly, or in a user namespace of one's own, as an ordinary user can.
  attempt "mounting a tmpfs" \
    "(mount -t tmpfs none m && umount m) 2>/dev/null || unshare -rm mount -t tmpfs none m"
  attempt "making a new user namespace" "unshare -r true"

  # A setuid-root copy of id(1) in the workspace: euid 0 when it works.
  cp /usr/bin/id "$WS/suid-id" && chown 0:0 "$WS/suid-id" \
    && chmod 4755 "$WS/suid-id"
  if [ "$who" = root ]; then
    # Root gains nothing from setuid; what it must not keep is a
    # capability.
    attempt "holding a capability" \
      "grep -q '^CapEff:.*[1-9a-f]' /proc/self/status"
  else
    attempt "a working setuid binary" '[ "$(./suid-id -u)" = 0 ]'
  fi

  # A block device for the first disc.
  if [ "$who" = root ]; then
    attempt "mknod of a real device" "mknod sda b 8 0 && rm sda"
  else
    skip "control ($WHO): mknod of a real device" \
      "an unprivileged user cannot make one unconfined either"
    confined "echo ran; mknod sda b 8 0"
    [ "${cout%%$'\n'*}" = ran ] && [ "$crc" -ne 0 ] && [ "$crc" -ne 125 ]
    ok $? "confined ($WHO): mknod of a real device is refused"
  fi
  confined "grep -c . /proc/self/status >/dev/null; grep NoNewPrivs /proc/self/status"
  like "$cout" "NoNewPrivs:[[:space:]]*1" "confined ($WHO): no_new_privs is set"
done
