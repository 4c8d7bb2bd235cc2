/* The confined command's seccomp filter.  */
#include <config.h>

#include "sandbox/seccomp.h"

#include <errno.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/cleanup.h"

/* Release a libseccomp context on every return path.  */
static void
seccomp_releasep (scmp_filter_ctx *ctx)
{
  if (*ctx != NULL)
    seccomp_release (*ctx);
}
#define cleanup_seccomp __attribute__ ((cleanup (seccomp_releasep)))

/* Refuse one system call by name, whatever its arguments; a name this
 * libseccomp or architecture does not know has nothing to refuse.  */
static int
seccomp_refuse (scmp_filter_ctx ctx, const char *name)
{
  int nr = seccomp_syscall_resolve_name (name);

  if (nr == __NR_SCMP_ERROR)
    return 0;
  return seccomp_rule_add (ctx, SCMP_ACT_ERRNO (SANDBOX_SECCOMP_ERRNO), nr, 0);
}

/* Build the rules.  Returns 0 or a negative errno from libseccomp.  */
static int
seccomp_rules (scmp_filter_ctx ctx, bool allow_unix)
{
  static const char *const uring[]
      = { "io_uring_setup", "io_uring_enter", "io_uring_register" };
  int rc = 0;

  /* Only the first argument is compared: the domain.  AF_UNIX and
   * AF_LOCAL are the same number.  */
  if (!allow_unix)
    rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (SANDBOX_SECCOMP_ERRNO),
                           SCMP_SYS (socket), 1,
                           SCMP_A0 (SCMP_CMP_EQ, (scmp_datum_t) AF_UNIX));
  for (size_t i = 0; rc == 0 && i < sizeof uring / sizeof uring[0]; i++)
    rc = seccomp_refuse (ctx, uring[i]);
  return rc;
}

int
sandbox_seccomp_fd (bool allow_unix, struct cr_error **err)
{
  cleanup_seccomp scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  cleanup_close int fd = -1;
  int rc;

  if (ctx == NULL)
    return cr_error_set (err, ENOMEM, "making the seccomp filter");
  /* A call through another ABI is killed, not allowed: the filter's rules
   * are written for the native numbers only.  */
  rc = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc == 0)
    rc = seccomp_rules (ctx, allow_unix);
  if (rc < 0)
    return cr_error_set (err, -rc, "making the seccomp filter");
  fd = memfd_create ("crucible-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    return cr_error_set (err, errno, "making the seccomp filter's memfd");
  rc = seccomp_export_bpf (ctx, fd);
  if (rc < 0)
    return cr_error_set (err, -rc, "writing the seccomp filter");
  if (lseek (fd, 0, SEEK_SET) < 0)
    return cr_error_set (err, errno, "rewinding the seccomp filter");
  return steal_fd (&fd);
}
