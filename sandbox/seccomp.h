/* The seccomp filter a confined command runs under (kernel_surface): built
 * with libseccomp, handed to bwrap's --seccomp as classic BPF in a memfd.
 *
 * Everything is allowed except what opens a way around the namespace view:
 * socket(AF_UNIX, ...) unless the policy names sockets (a Unix socket in a
 * bound directory is reachable through a read-only bind and a closed
 * network; socketpair stays allowed)
 * and the io_uring calls (a second system-call path that seccomp does not
 * see into).  Foreign system-call ABIs (i386, x32 on x86-64) are killed,
 * since their socketcall() would pass a filter written for the native one.
 *
 * A second, stricter filter binds the workload itself: the host builds it
 * here, hands it to the broker on a descriptor, and the broker loads it as
 * its last setup step, after the mounts it needed (doc/broker.md,
 * --seccomp-fd).  It refuses the calls below, clone(2) with a namespace
 * flag, and ioctl TIOCSTI and TIOCLINUX; ptrace and process_vm_* stay, so
 * that strace and gdb work on the workload's own processes.  */
#ifndef CRUCIBLE_SANDBOX_SECCOMP_H
#define CRUCIBLE_SANDBOX_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

/* The errno a refused call gets.  */
#define SANDBOX_SECCOMP_ERRNO EACCES

/* A memfd holding the filter as BPF, at offset 0, close-on-exec; the
 * caller owns it.  allow_unix: the policy names Unix sockets
 * (allowUnixSockets), so socket(AF_UNIX) is let through; what it can then
 * reach is bounded by the filesystem view alone (doc/linux-confinement.md,
 * "Unix sockets").  */
int sandbox_seccomp_fd (bool allow_unix, struct cr_error **err);

/* One system call the workload's filter refuses whatever its arguments,
 * and the errno it then gets.  */
struct sandbox_seccomp_refusal
{
  const char *name; /* libseccomp's name; unknown here: nothing to refuse */
  int err;
};

/* The refusals, in a static table; *n gets their number.  */
const struct sandbox_seccomp_refusal *
sandbox_seccomp_workload_refusals (size_t *n);

/* A memfd holding the workload's filter as BPF, at offset 0,
 * close-on-exec; the caller owns it.  allow_binding false adds bind(2)
 * and listen(2) to the refusals, with SANDBOX_SECCOMP_ERRNO: the
 * workload cannot serve on any socket (allowLocalBinding false).  The
 * broker makes its own listeners before it loads this filter.  */
int sandbox_seccomp_workload_fd (bool allow_binding, struct cr_error **err);

/* The libseccomp in use, "MAJOR.MINOR.MICRO", into buf (n bytes): it
 * writes the filters, so a remembered probe is keyed by it too.  */
void sandbox_seccomp_library (char *buf, size_t n);

#endif
