/* What the parts of the Linux backend (sandbox/bwrap*.c) share and nothing
 * else sees: bwrap.c holds the backend, its sessions and their events;
 * bwrap_locate.c finding and trusting bwrap and the broker;
 * bwrap_probe.c the probe (the option surface, the version, that the
 * namespaces can be made), which starts bwrap the way a launch does;
 * bwrap_argv.c the argument vector and the workload's environment, which
 * the probe's own bwrap is built from as well.  */
#ifndef CRUCIBLE_SANDBOX_BWRAP_INT_H
#define CRUCIBLE_SANDBOX_BWRAP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "sandbox/bwrap.h"

/* The backend: its settings, the probe's cached answer, and the bwrap and
 * broker it found and pinned.  */
struct bwrap_backend
{
  struct sandbox_backend base;
  struct bwrap_options opt;
  bool probed;
  struct sandbox_probe probe; /* the cached answer */
  struct bwrap_location bwrap;
  char *broker_path;
  int broker_fd;
  char **unreadable; /* copies of opt's lists */
  char **unix_sockets;
};

/* Descriptors a child of the host is given, by number; -1 for none.  */
struct bwrap_fds
{
  int in, out, err;                         /* 0, 1, 2 */
  int status, broker, seccomp, env, output; /* BWRAP_FD_* */
  int self;                                 /* bwrap, executed through it */
  int workload_seccomp; /* BWRAP_FD_WORKLOAD_SECCOMP, or -1 */
  const int *extra;     /* at BWRAP_FD_EXTRA and on: the granted sockets */
  size_t n_extra;
  int cgroup_procs; /* written "0" to join the pids cgroup, or -1 */
  uid_t uid;        /* run bwrap as this identity when as_owner */
  gid_t gid;
  bool as_owner;
};

/* In the child: put f's descriptors at their numbers, drop what bwrap
 * must not inherit, and execute bwrap (through f->self) with argv.  */
void bwrap_child_exec (const struct bwrap_fds *f, char **argv)
    __attribute__ ((noreturn));

/* Milliseconds on the monotonic clock.  */
long long bwrap_now_ms (void);

/* Wait for pid at most ms milliseconds (killing it then); its wait status
 * or -1.  */
int bwrap_wait_bounded (pid_t pid, int ms, struct rusage *ru);

/* The first line or so of bwrap's message, for quoting.  Owned.  */
char *bwrap_quote (const char *text);

/* Find, pin and probe, once; the answer is kept in b->probe.  */
void bwrap_probe_once (struct bwrap_backend *b);

/* The backend's probe (struct sandbox_backend_ops).  */
int bwrap_probe (struct sandbox_backend *base, struct sandbox_probe *out,
                 struct cr_error **err);

/* An argument vector being built, NULL-terminated all along.  */
struct bwrap_argv
{
  char **v;
  size_t n, cap;
};

/* Append copies of the NULL-terminated strings that follow a.  */
void bwrap_args (struct bwrap_argv *a, ...);

/* The namespaces and session options every bwrap is started with.  */
void bwrap_args_namespaces (struct bwrap_argv *a);

/* The read-only runtime every bwrap binds.  */
void bwrap_args_runtime (struct bwrap_argv *a);

#endif
