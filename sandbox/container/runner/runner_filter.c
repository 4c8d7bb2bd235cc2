/* The job runner's own seccomp filter and its undumpable state (runner.h):
 * what holds in the container whatever profile the engine applied.
 *
 * Podman 4's default profile lets `unshare -r` succeed where dockerd's
 * refuses it, and an engine may run with no profile at all, so the
 * kernel_surface claim does not rest on the engine: the runner loads the
 * refusals of crucible's own workload filter (sandbox/seccomp.c) on
 * itself before it forks the command, which inherits them, and reads
 * back from inside that a new user namespace is refused.  Classic BPF by
 * hand: the runner links libc only.  */
#include <config.h>

#include "sandbox/container/runner/runner.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#define RUNNER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define RUNNER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* One refused call and its errno (EPERM as the kernel answers a caller
 * without the privilege; ENOSYS where a fallback exists).  */
struct runner_refusal
{
  long nr;
  int err;
};

#ifdef RUNNER_AUDIT_ARCH
/* The refusals, as sandbox/seccomp.c's workload filter has them (that
 * file says why each): keyrings, the mount table, namespaces, the
 * machine, and the kernel objects that are the usual way in.  */
static const struct runner_refusal runner_refusals[] = {
  { SYS_keyctl, EPERM },
  { SYS_add_key, EPERM },
  { SYS_request_key, EPERM },
  { SYS_mount, EPERM },
  { SYS_umount2, EPERM },
  { SYS_pivot_root, EPERM },
  { SYS_chroot, EPERM },
#ifdef SYS_open_tree
  { SYS_open_tree, ENOSYS },
  { SYS_move_mount, ENOSYS },
  { SYS_fsopen, ENOSYS },
  { SYS_fsconfig, ENOSYS },
  { SYS_fsmount, ENOSYS },
  { SYS_fspick, ENOSYS },
#endif
#ifdef SYS_mount_setattr
  { SYS_mount_setattr, ENOSYS },
#endif
  { SYS_setns, EPERM },
  { SYS_unshare, EPERM },
#ifdef SYS_clone3
  { SYS_clone3, ENOSYS },
#endif
  { SYS_init_module, EPERM },
  { SYS_finit_module, EPERM },
  { SYS_delete_module, EPERM },
  { SYS_kexec_load, EPERM },
#ifdef SYS_kexec_file_load
  { SYS_kexec_file_load, EPERM },
#endif
  { SYS_reboot, EPERM },
  { SYS_swapon, EPERM },
  { SYS_swapoff, EPERM },
  { SYS_acct, EPERM },
  { SYS_quotactl, EPERM },
  { SYS_syslog, EPERM },
  { SYS_bpf, EPERM },
  { SYS_perf_event_open, EPERM },
  { SYS_userfaultfd, EPERM },
  { SYS_fanotify_init, EPERM },
  { SYS_open_by_handle_at, EPERM },
  { SYS_name_to_handle_at, EPERM },
#ifdef SYS_io_uring_setup
  /* A second system-call path that a filter does not see into.  */
  { SYS_io_uring_setup, EPERM },
  { SYS_io_uring_enter, EPERM },
  { SYS_io_uring_register, EPERM },
#endif
};

/* Append one instruction.  ins is a brace initializer (BPF_STMT,
 * BPF_JUMP), which parentheses would turn into something else.  prog has
 * room for twice as many instructions as the refusals and the fixed
 * checks take.  */
#define RUNNER_PUT(ins)                                                        \
  (prog[n++]                                                                   \
   = (struct sock_filter) ins) /* NOLINT(bugprone-macro-parentheses) */

/* Refuse nr with err: two instructions, with the call's number in the
 * accumulator.  */
static size_t
runner_put_refusal (struct sock_filter *prog, size_t n, long nr, int err)
{
  RUNNER_PUT (BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (__u32) nr, 0, 1));
  RUNNER_PUT (BPF_STMT (BPF_RET | BPF_K,
                        SECCOMP_RET_ERRNO | ((__u32) err & SECCOMP_RET_DATA)));
  return n;
}

int
runner_filter_load (bool allow_binding)
{
  struct sock_filter prog[160];
  size_t n = 0;
  const __u32 ns = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER
                   | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP;
  /* Another ABI's numbers (i386 on x86-64) would pass a filter written
   * for the native ones: killed.  */
  RUNNER_PUT (BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                        offsetof (struct seccomp_data, arch)));
  RUNNER_PUT (BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, RUNNER_AUDIT_ARCH, 1, 0));
  RUNNER_PUT (BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  RUNNER_PUT (
      BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)));
#if defined(__x86_64__)
  /* The x32 ABI shares the architecture word: its calls carry this bit.  */
  RUNNER_PUT (BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  RUNNER_PUT (BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
  for (size_t i = 0; i < sizeof runner_refusals / sizeof *runner_refusals; i++)
    n = runner_put_refusal (prog, n, runner_refusals[i].nr,
                            runner_refusals[i].err);
  /* allowLocalBinding false: nothing in the container serves on any
   * socket (the same errno as the bwrap backend's refusal).  */
  if (!allow_binding)
    {
      n = runner_put_refusal (prog, n, SYS_bind, EACCES);
      n = runner_put_refusal (prog, n, SYS_listen, EACCES);
    }
  /* clone(2) with a namespace flag: a new user namespace gives back every
   * capability, and the kernel surface the drop closed.  */
  RUNNER_PUT (BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
  RUNNER_PUT (BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                        offsetof (struct seccomp_data, args[0])));
  RUNNER_PUT (BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, ns, 0, 1));
  RUNNER_PUT (BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
  RUNNER_PUT (BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  /* TIOCSTI and TIOCLINUX push input into a terminal that someone else
   * reads next.  */
  RUNNER_PUT (BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 5));
  RUNNER_PUT (BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
                        offsetof (struct seccomp_data, args[1])));
  RUNNER_PUT (BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0));
  RUNNER_PUT (BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0));
  RUNNER_PUT (BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  RUNNER_PUT (BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
  RUNNER_PUT (BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  struct sock_fprog fprog = { .len = (unsigned short) n, .filter = prog };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return -1;
  return prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0);
}
#else
int
runner_filter_load (bool allow_binding)
{
  (void) allow_binding;
  errno = ENOSYS;
  return -1;
}
#endif

const char *
runner_userns_probe (void)
{
  int status;
  pid_t pid = fork ();
  if (pid < 0)
    return "unknown";
  if (pid == 0)
    _exit (unshare (CLONE_NEWUSER) == 0 ? 0 : 1);
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return "unknown";
  if (!WIFEXITED (status))
    return "unknown";
  return WEXITSTATUS (status) == 0 ? "allowed" : "refused";
}
