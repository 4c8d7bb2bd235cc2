/* Unit tests for sandbox/seccomp.c: the exported BPF programs refuse what
 * they say and allow what they say.  The programs are not loaded: each is
 * run here on a struct seccomp_data, by a classic-BPF evaluator of the
 * instructions libseccomp emits, so that nothing is ever called for real
 * (a refusal that failed would otherwise reboot or remount the machine).  */
#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cmocka.h>

#include "sandbox/seccomp.h"

#define TEST_MAX_INSNS 4096

/* A program read back from its memfd.  */
struct test_prog
{
  struct sock_filter insn[TEST_MAX_INSNS];
  size_t len;
};

/* Read the whole BPF program out of fd, and close it.  */
static void
test_prog_read (int fd, struct test_prog *p)
{
  size_t got = 0;
  ssize_t n;

  assert_true (fd >= 0);
  while ((n = read (fd, (char *) p->insn + got, sizeof p->insn - got)) > 0)
    got += (size_t) n;
  close (fd);
  assert_int_equal (got % sizeof (struct sock_filter), 0);
  p->len = got / sizeof (struct sock_filter);
  assert_true (p->len > 0);
}

/* The 32-bit word at offset k of d, as the kernel hands it to a filter.  */
static uint32_t
test_load (const struct seccomp_data *d, uint32_t k)
{
  uint32_t w;

  assert_true (k % 4 == 0 && k + 4 <= sizeof *d);
  memcpy (&w, (const char *) d + k, 4);
  return w;
}

/* One ALU operation.  */
static uint32_t
test_alu (uint16_t op, uint32_t a, uint32_t x)
{
  switch (op)
    {
    case BPF_ADD:
      return a + x;
    case BPF_SUB:
      return a - x;
    case BPF_AND:
      return a & x;
    case BPF_OR:
      return a | x;
    case BPF_XOR:
      return a ^ x;
    case BPF_LSH:
      return a << (x & 31);
    case BPF_RSH:
      return a >> (x & 31);
    case BPF_NEG:
      return -a;
    default:
      fail_msg ("ALU op %#x", op);
      return 0;
    }
}

/* Whether the conditional jump op holds.  */
static int
test_cond (uint16_t op, uint32_t a, uint32_t x)
{
  switch (op)
    {
    case BPF_JEQ:
      return a == x;
    case BPF_JGT:
      return a > x;
    case BPF_JGE:
      return a >= x;
    case BPF_JSET:
      return (a & x) != 0;
    default:
      fail_msg ("jump op %#x", op);
      return 0;
    }
}

/* Run p on d; the SECCOMP_RET_* value it returns.  */
static uint32_t
test_run (const struct test_prog *p, const struct seccomp_data *d)
{
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

  for (size_t pc = 0; pc < p->len; pc++)
    {
      const struct sock_filter *i = &p->insn[pc];
      uint32_t src = BPF_SRC (i->code) == BPF_X ? x : i->k;
      switch (BPF_CLASS (i->code))
        {
        case BPF_LD:
          a = BPF_MODE (i->code) == BPF_ABS   ? test_load (d, i->k)
              : BPF_MODE (i->code) == BPF_MEM ? mem[i->k]
                                              : i->k;
          break;
        case BPF_LDX:
          x = BPF_MODE (i->code) == BPF_MEM ? mem[i->k] : i->k;
          break;
        case BPF_ST:
          mem[i->k] = a;
          break;
        case BPF_STX:
          mem[i->k] = x;
          break;
        case BPF_ALU:
          a = test_alu (BPF_OP (i->code), a, src);
          break;
        case BPF_MISC:
          if (BPF_MISCOP (i->code) == BPF_TAX)
            x = a;
          else
            a = x;
          break;
        case BPF_RET:
          return BPF_RVAL (i->code) == BPF_A ? a : i->k;
        case BPF_JMP:
          if (BPF_OP (i->code) == BPF_JA)
            pc += i->k;
          else
            pc += test_cond (BPF_OP (i->code), a, src) ? i->jt : i->jf;
          break;
        default:
          fail_msg ("instruction class %#x", BPF_CLASS (i->code));
        }
    }
  fail_msg ("the program ran off its end");
  return 0;
}

/* What p answers the native call nr with arguments a0 and a1.  */
static uint32_t
test_call (const struct test_prog *p, int nr, uint64_t a0, uint64_t a1)
{
  struct seccomp_data d = { .nr = nr, .arch = seccomp_arch_native () };

  d.args[0] = a0;
  d.args[1] = a1;
  return test_run (p, &d);
}

#define ERRNO_OF(e) (SECCOMP_RET_ERRNO | ((uint32_t) (e) &SECCOMP_RET_DATA))

/* Every call the table names is refused with its errno, whatever its
 * arguments; the table holds what the brief and the doc promise.  */
static void
test_workload_refuses_table (void **state)
{
  static struct test_prog p;
  static const char *const promised[] = { "keyctl",
                                          "add_key",
                                          "request_key",
                                          "mount",
                                          "umount2",
                                          "pivot_root",
                                          "move_mount",
                                          "open_tree",
                                          "fsopen",
                                          "fsconfig",
                                          "fsmount",
                                          "fspick",
                                          "mount_setattr",
                                          "setns",
                                          "unshare",
                                          "clone3",
                                          "init_module",
                                          "finit_module",
                                          "delete_module",
                                          "kexec_load",
                                          "kexec_file_load",
                                          "reboot",
                                          "swapon",
                                          "swapoff",
                                          "clock_settime",
                                          "clock_adjtime",
                                          "settimeofday",
                                          "acct",
                                          "quotactl",
                                          "syslog",
                                          "bpf",
                                          "perf_event_open",
                                          "userfaultfd",
                                          "open_by_handle_at",
                                          "name_to_handle_at" };
  struct cr_error *err = NULL;
  size_t n;
  const struct sandbox_seccomp_refusal *r
      = sandbox_seccomp_workload_refusals (&n);

  (void) state;
  test_prog_read (sandbox_seccomp_workload_fd (false, &err), &p);
  for (size_t i = 0; i < sizeof promised / sizeof *promised; i++)
    {
      size_t k = 0;
      while (k < n && strcmp (r[k].name, promised[i]) != 0)
        k++;
      if (k == n)
        fail_msg ("%s is not in the table", promised[i]);
    }
  for (size_t k = 0; k < n; k++)
    {
      int nr = seccomp_syscall_resolve_name (r[k].name);
      if (nr < 0)
        continue; /* not on this architecture (a libseccomp pseudo-number) */
      if (test_call (&p, nr, 0, 0) != ERRNO_OF (r[k].err)
          || test_call (&p, nr, ~0ULL, ~0ULL) != ERRNO_OF (r[k].err))
        fail_msg ("%s is not refused with errno %d", r[k].name, r[k].err);
    }
  assert_int_equal (test_call (&p, SCMP_SYS (clone3), 0, 0), ERRNO_OF (ENOSYS));
  assert_int_equal (test_call (&p, SCMP_SYS (keyctl), 0, 0), ERRNO_OF (EPERM));
}

/* clone is refused with any namespace flag and allowed without one (fork,
 * threads); ioctl is refused for TIOCSTI and TIOCLINUX, even with high
 * bits set, and allowed otherwise.  */
static void
test_workload_arguments (void **state)
{
  static struct test_prog p;
  static const uint64_t ns[]
      = { CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
          CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP };
  const uint64_t thread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND
                          | CLONE_THREAD | CLONE_SYSVSEM;
  struct cr_error *err = NULL;
  int clone_arg = 0;

  (void) state;
#if defined(__s390__) || defined(__s390x__)
  clone_arg = 1;
#endif
  test_prog_read (sandbox_seccomp_workload_fd (false, &err), &p);
  for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
    {
      uint64_t flags = ns[i] | SIGCHLD;
      assert_int_equal (test_call (&p, SCMP_SYS (clone), clone_arg ? 0 : flags,
                                   clone_arg ? flags : 0),
                        ERRNO_OF (EPERM));
    }
  assert_int_equal (test_call (&p, SCMP_SYS (clone), clone_arg ? 0 : SIGCHLD,
                               clone_arg ? SIGCHLD : 0),
                    SECCOMP_RET_ALLOW);
  assert_int_equal (test_call (&p, SCMP_SYS (clone), clone_arg ? 0 : thread,
                               clone_arg ? thread : 0),
                    SECCOMP_RET_ALLOW);
  assert_int_equal (test_call (&p, SCMP_SYS (ioctl), 0, TIOCSTI),
                    ERRNO_OF (EPERM));
  assert_int_equal (test_call (&p, SCMP_SYS (ioctl), 0, TIOCLINUX),
                    ERRNO_OF (EPERM));
  assert_int_equal (
      test_call (&p, SCMP_SYS (ioctl), 0, 0xffffffff00000000ULL | TIOCSTI),
      ERRNO_OF (EPERM));
  assert_int_equal (test_call (&p, SCMP_SYS (ioctl), 0, TCGETS),
                    SECCOMP_RET_ALLOW);
}

/* What a coding session and its debuggers need stays: ptrace and
 * process_vm_* (strace, gdb of its own children), personality (gdb turns
 * address randomisation off), seccomp (sandboxes of its own), and the
 * everyday calls.  A foreign ABI kills the process.  */
static void
test_workload_allows (void **state)
{
  static struct test_prog p;
  static const char *const allowed[] = {
    "read",        "write",   "openat", "execve",           "fork",
    "vfork",       "wait4",   "ptrace", "process_vm_readv", "process_vm_writev",
    "personality", "seccomp", "prctl",  "socket",           "mbind",
    "kcmp",        "adjtimex"
  };
  struct cr_error *err = NULL;
  struct seccomp_data foreign = { .nr = 0, .arch = AUDIT_ARCH_I386 };

  (void) state;
  test_prog_read (sandbox_seccomp_workload_fd (false, &err), &p);
  for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++)
    {
      int nr = seccomp_syscall_resolve_name (allowed[i]);
      if (nr < 0)
        continue;
      if (test_call (&p, nr, 0, 0) != SECCOMP_RET_ALLOW)
        fail_msg ("%s is not allowed", allowed[i]);
    }
  if (seccomp_arch_native () != AUDIT_ARCH_I386)
    assert_int_equal (test_run (&p, &foreign), SECCOMP_RET_KILL_PROCESS);
#ifdef __x86_64__
  /* x32 shares x86-64's audit arch; its numbers carry bit 30.  */
  assert_int_equal (test_call (&p, 0x40000000 | SCMP_SYS (keyctl), 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
#endif
}

/* The outer filter (bwrap's --seccomp, which binds the broker too) still
 * refuses socket(AF_UNIX) and io_uring only, and leaves the mount calls
 * the broker's setup needs.  */
static void
test_outer_filter (void **state)
{
  static struct test_prog p;
  struct cr_error *err = NULL;

  (void) state;
  test_prog_read (sandbox_seccomp_fd (false, &err), &p);
  assert_int_equal (test_call (&p, SCMP_SYS (socket), AF_UNIX, 0),
                    ERRNO_OF (SANDBOX_SECCOMP_ERRNO));
  assert_int_equal (test_call (&p, SCMP_SYS (socket), AF_INET, 0),
                    SECCOMP_RET_ALLOW);
  assert_int_equal (test_call (&p, SCMP_SYS (io_uring_setup), 0, 0),
                    ERRNO_OF (SANDBOX_SECCOMP_ERRNO));
  assert_int_equal (test_call (&p, SCMP_SYS (mount), 0, 0), SECCOMP_RET_ALLOW);
  assert_int_equal (test_call (&p, SCMP_SYS (unshare), 0, 0),
                    SECCOMP_RET_ALLOW);
  test_prog_read (sandbox_seccomp_fd (true, &err), &p);
  assert_int_equal (test_call (&p, SCMP_SYS (socket), AF_UNIX, 0),
                    SECCOMP_RET_ALLOW);
}

/* bind(2) and listen(2): refused with SANDBOX_SECCOMP_ERRNO by default,
 * whatever the arguments, and allowed with allowLocalBinding; connect(2),
 * accept4(2) and socket(AF_INET) stay allowed either way (the relay is
 * reached with connect; the broker accepts under this filter).  */
static void
test_workload_binding (void **state)
{
  static struct test_prog p;
  static const char *const refused[] = { "bind", "listen" };
  static const char *const kept[] = { "connect", "accept4", "socket" };
  struct cr_error *err = NULL;

  (void) state;
  for (int allow = 0; allow <= 1; allow++)
    {
      test_prog_read (sandbox_seccomp_workload_fd (allow, &err), &p);
      for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        {
          int nr = seccomp_syscall_resolve_name (refused[i]);
          assert_true (nr >= 0);
          uint32_t want
              = allow ? SECCOMP_RET_ALLOW : ERRNO_OF (SANDBOX_SECCOMP_ERRNO);
          if (test_call (&p, nr, 0, 0) != want
              || test_call (&p, nr, ~0ULL, ~0ULL) != want
              || test_call (&p, nr, 3, AF_INET) != want)
            fail_msg ("%s is not %s with allowLocalBinding %s", refused[i],
                      allow ? "allowed" : "refused", allow ? "true" : "false");
        }
      for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        {
          int nr = seccomp_syscall_resolve_name (kept[i]);
          if (nr < 0)
            continue;
          if (test_call (&p, nr, AF_INET, 0) != SECCOMP_RET_ALLOW)
            fail_msg ("%s is not allowed", kept[i]);
        }
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_workload_refuses_table),
    cmocka_unit_test (test_workload_arguments),
    cmocka_unit_test (test_workload_allows),
    cmocka_unit_test (test_outer_filter),
    cmocka_unit_test (test_workload_binding),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
