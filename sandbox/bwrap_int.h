/* What the parts of the Linux backend (sandbox/bwrap*.c) share and nothing
 * else sees: bwrap.c holds the backend, its sessions and their events;
 * bwrap_locate.c finding and trusting bwrap and the broker;
 * bwrap_launch.c starting bwrap, and one command's launch;
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
#include "sandbox/publish.h"
#include "sandbox/pubguard.h"
#include "sandbox/sha256.h"
#include "sandbox/statedir.h"
#include "sandbox/userns.h"

/* How much of bwrap's own message is quoted.  */
#define BWRAP_QUOTE_BYTES 512

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
  /* The broker's SHA-256 for the probe's whole key, computed on a thread
   * of its own from the first probe until bwrap_probe_settle (or a fresh
   * probe's record) needs it; empty until then.  */
  struct sha256_job *broker_job;
  char broker_sha256[SHA256_HEX_LEN + 1];
  /* The remembered probe (bwrap_probe.c): the digest of the key a record
   * is found by and of the whole key it holds, for the candidate taken;
   * whether its answer came from a record; and whether records are to be
   * passed over (once a launch failed as a probe would have).  */
  char probe_key[SHA256_HEX_LEN + 1];
  char probe_whole[SHA256_HEX_LEN + 1];
  bool remembered;
  bool no_recall;
  /* Where commands' pids cgroups are made (cgroup_pids_parent), looked
   * up once per backend: it reads /proc twice and probes the mount.  */
  bool cgroup_looked;
  char *cgroup_parent;
  char **unreadable; /* copies of opt's lists */
  char **unix_sockets;
  /* The workspace whose groups were scanned (bwrap_groups_check): its
   * note goes in the first command's result only.  */
  char *groups_checked;
};

/* Descriptors a child of the host is given, by number; -1 for none.  */
struct bwrap_fds
{
  int in, out, err;                         /* 0, 1, 2 */
  int status, broker, seccomp, env, output; /* BWRAP_FD_* */
  int self;                                 /* bwrap, executed through it */
  int workload_seccomp; /* BWRAP_FD_WORKLOAD_SECCOMP, or -1 */
  int net;              /* BWRAP_FD_NET, or -1 */
  int hosts;            /* BWRAP_FD_HOSTS, or -1 */
  const int *extra;     /* at BWRAP_FD_EXTRA and on: the granted sockets */
  size_t n_extra;
  int cgroup_procs; /* written "0" to join the pids cgroup, or -1 */
  uid_t uid;        /* run bwrap as this identity when as_owner */
  gid_t gid;
  bool as_owner;
};

struct bwrap_session
{
  struct sandbox_session base;
  struct bwrap_backend *backend;
  int channel;      /* host end of the status channel, or -1 */
  pid_t launcher;   /* bwrap: 0 until started, -1 once reaped */
  bool started;     /* STARTED came: from here on the workload may run */
  bool exited_seen; /* EXITED or FAILED has been reported */
  bool owe_exit;    /* a FAILED that stands for the ending: EXITED next */
  bool done;        /* the scope is confirmed empty */
  bool scope_gone;  /* bwrap was reaped having exited on its own, so its
                       PID namespace is gone, and the cgroup (if any) is
                       empty: the only confirmation publication takes */
  bool ru_known;
  struct rusage ru; /* bwrap's children: the broker and all it reaped */
  struct statedir_pair pair;
  char *statedir;
  char *root;                       /* the writable root, resolved */
  struct publish_baseline baseline; /* taken before the layers */
  bool published;                   /* publication has settled */
  int err_fd;    /* read end of bwrap's and the broker's stderr, or -1 */
  char *message; /* what they said, once the channel ended unreported */
  char *cgroup;  /* the command's pids cgroup, or NULL */
  unsigned long processes;         /* the cap: the lower of policy's and ours */
  unsigned long long memory_bytes; /* RLIMIT_AS, policy's or ours; 0: none */
  bool as_owner; /* root, over a workspace another user owns: run as them */
  uid_t owner_uid;
  gid_t owner_gid;
  /* The policy's configured readOnly roots then protected ones, relative
   * to the workspace (copied at prepare); at start, the same with what
   * each resolves to inside it, for the broker's --protect and for
   * publication, which refuses any change to them.  */
  char **cfg_roots;
  size_t n_cfg_read_only, n_cfg;
  char **protect;
  size_t n_protect;
  struct pubguard_root *guard_roots;
  struct pubguard guard;
  char *groups_note; /* paths its group keeps from changing, or NULL */
  char *tidy;        /* what publish left to remove after its answer, or NULL */
  /* The groups the sandbox maps beside the user's own, where crucible
   * makes its user namespaces (bwrap_userns); n_groups 0 otherwise.  */
  struct userns_plan userns;
  /* The policy's network (copied at prepare): domains make a net channel,
   * whose host end is net_channel once started (-1 before, or without);
   * allow_local_binding leaves bind and listen to the workload.  */
  bool net;
  bool allow_local_binding;
  int net_channel;
  /* sandbox.network.ports, copied: with any the command has a net
   * channel even without domains.  */
  uint16_t ports[16];
  size_t n_ports;
  /* Prepared ahead (bwrap_ahead): bwrap runs and the broker waits for GO,
   * which go_sent says was given.  What the sandbox was made from is kept
   * to tell, before it is used, whether the workspace still matches it
   * (bwrap_ahead_current): its shell, the workspace's identity and owner,
   * and one string of what was read from the workspace (the gitdir, the
   * protected roots as they resolved, the grants).  */
  bool ahead;
  bool go_sent;
  char *ahead_shell;
  char *ahead_key;
  dev_t ws_dev;
  ino_t ws_ino;
  uid_t ws_uid;
  /* While the probe's answer came from a record and the broker has not
   * spoken: what it takes to start bwrap again, on the candidate a fresh
   * probe passes, should this launch fail as a probe would have
   * (bwrap_launch.c).  heard: the channel carried a record.  */
  struct bwrap_retry *retry;
  bool heard;
};

/* Effective identity saved while root acts as a workspace's owner.  */
struct bwrap_ids
{
  bool switched;
  gid_t groups[64];
  int n_groups;
};

/* The configured roots as the broker and publication keep them
 * (bwrap.c); resolved once, before anything of the command runs.  */
/* Refuse a workspace that is this user's state directory or lies below
 * it (sandbox/bwrap.c); 0 for any other.  */
int bwrap_statedir_refuse (const struct bwrap_backend *b, const char *workspace,
                           struct cr_error **err);
void bwrap_roots_resolve (struct bwrap_session *s, const char *workspace,
                          const char *gitdir);

/* Act as the workspace's owner while root runs a sandbox for them
 * (bwrap_launch.c), and back to root; becoming self again cannot fail
 * (it aborts).  */
int bwrap_become_owner (const struct bwrap_session *s, struct bwrap_ids *saved,
                        struct cr_error **err);
void bwrap_become_self (struct bwrap_ids *saved);

/* Before each launch, after bwrap_owner: where the user has groups the
 * sandbox could map beyond their own, make the user namespaces with them
 * (sandbox/userns.h) into *out, and keep in s->userns which were mapped;
 * otherwise, or when making them fails, *out stays empty and bwrap makes
 * its own (bwrap.c).  */
void bwrap_userns (struct bwrap_session *s, struct userns_pair *out);

/* Once per backend and workspace, after bwrap_owner has decided whose
 * sandbox it is: find the paths whose group the sandbox cannot map
 * (sandbox/groupscan.h) and keep the note for s's result (bwrap.c).  */
void bwrap_groups_check (struct bwrap_session *s, const char *workspace);

/* The pids cgroup parent, or NULL where none can be made (bwrap.c);
 * the backend's.  */
const char *bwrap_cgroup_parent (struct bwrap_backend *b);

/* Start bwrap, which starts the broker, which starts the workload (struct
 * sandbox_backend_ops); a session prepared ahead is only told GO.  */
int bwrap_start (struct sandbox_session *base,
                 const struct sandbox_command *cmd, struct cr_error **err);

/* Start bwrap and the broker ahead of the command, the broker waiting for
 * GO (struct sandbox_backend_ops's prepare_ahead).  */
int bwrap_ahead (struct sandbox_session *base, const char *cwd,
                 const char *shell, struct cr_error **err);

/* Whether a session prepared ahead may still run a command of shell in
 * cwd: the broker still waits, and the workspace has the identity, owner
 * and protected and granted paths it was prepared with.  */
bool bwrap_ahead_current (const struct sandbox_session *base, const char *cwd,
                          const char *shell);
/* The launch ended with nothing on the channel, its bwrap gone, when the
 * probe's answer came from a record: drop the record, probe afresh, and
 * when another candidate passes, start bwrap again on it with the same
 * layers, cgroup and descriptors (the status channel and the error pipe
 * anew, at the same numbers, which the loop watches).  1 when started
 * again; 0 when the launch's own failure stands, as it would have
 * without the record.  */
int bwrap_relaunch (struct bwrap_session *s);

/* Let go of what a relaunch would have needed (bwrap_launch.c).  */
void bwrap_retry_free (struct bwrap_retry *r);

/* In the child: put f's descriptors at their numbers, drop what bwrap
 * must not inherit, and execute bwrap (through f->self) with argv.  */
void bwrap_child_exec (const struct bwrap_fds *f, char **argv)
    __attribute__ ((noreturn));

/* Start the child that becomes bwrap (vfork where no identity changes);
 * returns its pid, or -1 with errno.  */
pid_t bwrap_child_spawn (const struct bwrap_fds *f, char **argv);

/* Wait for pid at most ms milliseconds (killing it then); its wait status
 * or -1.  */
int bwrap_wait_bounded (pid_t pid, int ms, struct rusage *ru);

/* The first line or so of bwrap's message, for quoting.  Owned.  */
char *bwrap_quote (const char *text);

/* Find, pin and probe, once; the answer is kept in b->probe.  An answer
 * from a record is taken before the broker's digest is in (which a thread
 * computes meanwhile): bwrap_probe_settle confirms it.  */
void bwrap_probe_once (struct bwrap_backend *b);

/* -1 with the error that the backend cannot be used, and why (the
 * probe's reason).  */
int bwrap_unavailable (const struct bwrap_backend *b, struct cr_error **err);

/* Wait for the broker's digest; an answer from a record whose whole key
 * differs with it is dropped with the record, and every candidate probed
 * afresh, so that b->probe is what a probe with the whole key would have
 * answered.  Before anything relies on the answer but the preparation's
 * own steps: before bwrap starts, and before b->probe is reported.  */
void bwrap_probe_settle (struct bwrap_backend *b);

/* A launch failed as a probe would have, with an answer that came from
 * a record: drop the record and the answer, so that the next
 * bwrap_probe_once probes every candidate afresh.  Nothing when the
 * answer was probed in this process.  */
void bwrap_probe_forget (struct bwrap_backend *b);

/* The backend's probe and probe_starting (struct sandbox_backend_ops).  */
int bwrap_probe (struct sandbox_backend *base, struct sandbox_probe *out,
                 struct cr_error **err);
int bwrap_probe_starting (struct sandbox_backend *base,
                          struct sandbox_probe *out, struct cr_error **err);

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

/* Instead, in crucible's own user namespaces, at fd and fd + 1.  */
void bwrap_args_namespaces_userns (struct bwrap_argv *a, int fd);

/* The read-only runtime every bwrap binds.  */
void bwrap_args_runtime (struct bwrap_argv *a);

#endif
