/* The seccomp filter a confined command runs under (kernel_surface): built
 * with libseccomp, handed to bwrap's --seccomp as classic BPF in a memfd.
 *
 * Everything is allowed except what opens a way around the namespace view:
 * socket(AF_UNIX, ...) unless the policy names sockets (a Unix socket in a
 * bound directory is reachable through a read-only bind and a closed
 * network; socketpair stays allowed)
 * and the io_uring calls (a second system-call path that seccomp does not
 * see into).  Foreign system-call ABIs (i386, x32 on x86-64) are killed,
 * since their socketcall() would pass a filter written for the native one.  */
#ifndef CRUCIBLE_SANDBOX_SECCOMP_H
#define CRUCIBLE_SANDBOX_SECCOMP_H

#include <stdbool.h>

#include "lib/error.h"

/* The errno a refused call gets.  */
#define SANDBOX_SECCOMP_ERRNO EACCES

/* A memfd holding the filter as BPF, at offset 0, close-on-exec; the
 * caller owns it.  allow_unix: the policy names Unix sockets
 * (allowUnixSockets), so socket(AF_UNIX) is let through; what it can then
 * reach is bounded by the filesystem view alone (doc/linux-confinement.md,
 * "Unix sockets").  */
int sandbox_seccomp_fd (bool allow_unix, struct cr_error **err);

#endif
