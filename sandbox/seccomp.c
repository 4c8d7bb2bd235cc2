/* The confined command's seccomp filter.  */
#include <config.h>

#include "sandbox/seccomp.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <seccomp.h>
#include <sys/ioctl.h>
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

/* Write ctx as BPF into a fresh memfd, rewound; returns it or -1.  */
static int
seccomp_export_memfd (scmp_filter_ctx ctx, const char *what,
                      struct cr_error **err)
{
  cleanup_close int fd = memfd_create ("crucible-seccomp", MFD_CLOEXEC);
  int rc;

  if (fd < 0)
    return cr_error_set (err, errno, "making the memfd of %s", what);
  rc = seccomp_export_bpf (ctx, fd);
  if (rc < 0)
    return cr_error_set (err, -rc, "writing %s", what);
  if (lseek (fd, 0, SEEK_SET) < 0)
    return cr_error_set (err, errno, "rewinding %s", what);
  return steal_fd (&fd);
}

/* A default-allow context whose foreign-ABI calls are killed: the rules
 * are written for the native numbers only.  NULL with *rc set.  */
static scmp_filter_ctx
seccomp_new (int *rc)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);

  *rc = -ENOMEM;
  if (ctx == NULL)
    return NULL;
  *rc = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  return ctx;
}

int
sandbox_seccomp_fd (bool allow_unix, struct cr_error **err)
{
  int rc;
  cleanup_seccomp scmp_filter_ctx ctx = seccomp_new (&rc);

  if (rc == 0)
    rc = seccomp_rules (ctx, allow_unix);
  if (rc < 0)
    return cr_error_set (err, -rc, "making the seccomp filter");
  return seccomp_export_memfd (ctx, "the seccomp filter", err);
}

/* --- the workload's filter ------------------------------------------------ */

/* What the workload may not call, whatever its arguments, and the errno it
 * gets (doc/linux-confinement.md, "The seccomp filter", says why each).
 * EPERM is what the kernel itself answers a caller without the privilege,
 * so programs take the refusal as they would on any unprivileged machine;
 * ENOSYS for the new mount API and clone3, so libmount falls back to
 * mount(2) and glibc to clone(2), whose refusals are then the ordinary
 * ones.  */
static const struct sandbox_seccomp_refusal seccomp_workload_refusals[] = {
  /* Keyrings: not separated by any namespace; the session keyring and
   * the per-uid ones hold the person's credentials (Kerberos, ecryptfs).  */
  { "keyctl", EPERM },
  { "add_key", EPERM },
  { "request_key", EPERM },
  /* The mount table: the view is the boundary; nothing inside reshapes
   * it, not even in a namespace it might make.  */
  { "mount", EPERM },
  { "umount", EPERM },
  { "umount2", EPERM },
  { "pivot_root", EPERM },
  { "chroot", EPERM },
  { "open_tree", ENOSYS },
  { "move_mount", ENOSYS },
  { "fsopen", ENOSYS },
  { "fsconfig", ENOSYS },
  { "fsmount", ENOSYS },
  { "fspick", ENOSYS },
  { "mount_setattr", ENOSYS },
  /* Namespaces: a new user namespace gives back every capability, and
   * with it the kernel surface the drop closed.  */
  { "setns", EPERM },
  { "unshare", EPERM },
  { "clone3", ENOSYS },
  /* The machine itself: modules, kexec, reboot, swap, clocks, process
   * accounting, quotas, the kernel log, names, the tty hangup, ports.  */
  { "init_module", EPERM },
  { "finit_module", EPERM },
  { "delete_module", EPERM },
  { "create_module", EPERM },
  { "query_module", EPERM },
  { "get_kernel_syms", EPERM },
  { "kexec_load", EPERM },
  { "kexec_file_load", EPERM },
  { "reboot", EPERM },
  { "swapon", EPERM },
  { "swapoff", EPERM },
  { "acct", EPERM },
  { "quotactl", EPERM },
  { "quotactl_fd", EPERM },
  { "syslog", EPERM },
  { "clock_settime", EPERM },
  { "clock_adjtime", EPERM },
  { "settimeofday", EPERM },
  { "stime", EPERM },
  { "sethostname", EPERM },
  { "setdomainname", EPERM },
  { "vhangup", EPERM },
  { "ioperm", EPERM },
  { "iopl", EPERM },
  /* Kernel objects a coding session has no use for and whose bugs are
   * the usual way from a sandbox into the kernel.  */
  { "bpf", EPERM },
  { "perf_event_open", EPERM },
  { "userfaultfd", EPERM },
  { "fanotify_init", EPERM },
  { "open_by_handle_at", EPERM },
  { "name_to_handle_at", EPERM },
  { "lookup_dcookie", EPERM },
  { "move_pages", EPERM },
  { "migrate_pages", EPERM },
  { "modify_ldt", EPERM },
  /* Obsolete calls nothing current makes.  */
  { "uselib", EPERM },
  { "_sysctl", EPERM },
  { "ustat", EPERM },
  { "sysfs", EPERM },
  { "nfsservctl", EPERM },
  { "vm86", EPERM },
  { "vm86old", EPERM },
};

const struct sandbox_seccomp_refusal *
sandbox_seccomp_workload_refusals (size_t *n)
{
  *n = sizeof seccomp_workload_refusals / sizeof *seccomp_workload_refusals;
  return seccomp_workload_refusals;
}

/* The namespace flags clone(2) may not carry; the flags are its first
 * argument everywhere but s390, where they are the second.  */
static int
seccomp_refuse_clone_flags (scmp_filter_ctx ctx)
{
  static const scmp_datum_t ns[] = {
    CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,    CLONE_NEWUSER,
    CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP,
  };
  int rc = 0;

  for (size_t i = 0; rc == 0 && i < sizeof ns / sizeof ns[0]; i++)
#if defined(__s390__) || defined(__s390x__)
    rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (clone), 1,
                           SCMP_A1 (SCMP_CMP_MASKED_EQ, ns[i], ns[i]));
#else
    rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (clone), 1,
                           SCMP_A0 (SCMP_CMP_MASKED_EQ, ns[i], ns[i]));
#endif
  return rc;
}

/* TIOCSTI pushes input into a terminal, TIOCLINUX (its selection paste)
 * does the same on a virtual console: whoever reads that terminal next
 * runs it.  The request is an int: only its low 32 bits are compared.  */
static int
seccomp_refuse_ioctls (scmp_filter_ctx ctx)
{
  static const scmp_datum_t req[] = { TIOCSTI, TIOCLINUX };
  int rc = 0;

  for (size_t i = 0; rc == 0 && i < sizeof req / sizeof req[0]; i++)
    rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (ioctl), 1,
                           SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffu, req[i]));
  return rc;
}

/* Refuse one call by name with err; a name this libseccomp or
 * architecture does not know has nothing to refuse.  */
static int
seccomp_refuse_with (scmp_filter_ctx ctx, const char *name, int err)
{
  int nr = seccomp_syscall_resolve_name (name);

  if (nr == __NR_SCMP_ERROR)
    return 0;
  return seccomp_rule_add (ctx, SCMP_ACT_ERRNO ((unsigned int) err), nr, 0);
}

/* bind(2) and listen(2), unless local binding is allowed: without them
 * the workload serves nothing on any socket, so its loopback reaches the
 * broker's relay to the host proxy and nothing else (spec,
 * allowLocalBinding).  Refused with the errno every refusal of the outer
 * filter gives.  connect(2) stays: it is how the relay is reached.  */
static int
seccomp_refuse_binding (scmp_filter_ctx ctx)
{
  static const char *const calls[] = { "bind", "listen" };
  int rc = 0;

  for (size_t i = 0; rc == 0 && i < sizeof calls / sizeof *calls; i++)
    rc = seccomp_refuse_with (ctx, calls[i], SANDBOX_SECCOMP_ERRNO);
  return rc;
}

int
sandbox_seccomp_workload_fd (bool allow_binding, struct cr_error **err)
{
  size_t n
      = sizeof seccomp_workload_refusals / sizeof *seccomp_workload_refusals;
  int rc;
  cleanup_seccomp scmp_filter_ctx ctx = seccomp_new (&rc);

  for (size_t i = 0; rc == 0 && i < n; i++)
    rc = seccomp_refuse_with (ctx, seccomp_workload_refusals[i].name,
                              seccomp_workload_refusals[i].err);
  if (rc == 0)
    rc = seccomp_refuse_clone_flags (ctx);
  if (rc == 0)
    rc = seccomp_refuse_ioctls (ctx);
  if (rc == 0 && !allow_binding)
    rc = seccomp_refuse_binding (ctx);
  if (rc < 0)
    return cr_error_set (err, -rc, "making the workload's seccomp filter");
  return seccomp_export_memfd (ctx, "the workload's seccomp filter", err);
}

void
sandbox_seccomp_library (char *buf, size_t n)
{
  const struct scmp_version *v = seccomp_version ();

  if (v == NULL)
    snprintf (buf, n, "unknown");
  else
    snprintf (buf, n, "%u.%u.%u", v->major, v->minor, v->micro);
}
