/* The Linux backend's launch: starting bwrap with its descriptors at
 * their numbers, and one command's launch (its environment, its gitdir,
 * its unreadable patterns and socket grants, its cgroup, the workspace
 * owner's identity, then bwrap, which starts the broker, which starts the
 * workload) (sandbox/bwrap.h).  */
#include <config.h>

#include "sandbox/bwrap.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/keyctl.h>

#include "broker/status.h"
#include "broker/unreadable.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/xalloc.h"
#include "sandbox/bwrap_int.h"
#include "sandbox/cgroup.h"
#include "sandbox/channel.h"
#include "sandbox/seccomp.h"
#include "sandbox/statedir.h"

/* The most of a .git file read for its "gitdir: " line: git writes one
 * short line; anything longer is not trusted to mean what it seems.  */
#define BWRAP_GITDIR_BYTES 4096

/* --- starting bwrap --------------------------------------------------------
 */

/* The most descriptors a launch hands bwrap.  */
#define BWRAP_MAX_FDS (BWRAP_FD_EXTRA + BWRAP_MAX_SOCKETS + 2)

/* Put each descriptor at its number.  Everything is first moved above the
 * targets, so that no dup2 overwrites a source still to be moved.  */
static int
bwrap_child_fds (const struct bwrap_fds *f)
{
  int src[BWRAP_MAX_FDS]
      = { f->in,      f->out,  f->err,    f->status, f->broker,
          f->seccomp, f->env,  f->output, f->self,   f->workload_seccomp,
          f->net,     f->hosts };
  int n_fds = BWRAP_FD_EXTRA, moved[BWRAP_MAX_FDS];

  for (size_t i = 0; i < f->n_extra && n_fds < BWRAP_MAX_FDS; i++)
    src[n_fds++] = f->extra[i];

  for (int i = 0; i < n_fds; i++)
    {
      moved[i] = -1;
      if (src[i] >= 0 && (moved[i] = fcntl (src[i], F_DUPFD_CLOEXEC, 16)) < 0)
        return -1;
    }
  for (int i = 0; i < n_fds; i++)
    if (moved[i] >= 0 && dup2 (moved[i], i) < 0)
      return -1;
  /* bwrap itself is executed by descriptor and must not reach the
   * sandbox; the others are inherited on purpose.  */
  if (fcntl (BWRAP_FD_SELF, F_SETFD, FD_CLOEXEC) < 0)
    return -1;
  for (int i = 0; i < n_fds; i++)
    if (moved[i] < 0 && i >= 3 && i != BWRAP_FD_SELF)
      close (i);
  return (int) syscall (SYS_close_range, (unsigned int) n_fds, ~0U, 0);
}

/* In the forked child, after any change of identity: join a new, empty,
 * anonymous session keyring.  Keyrings belong to no namespace, so the
 * starting session's (where Kerberos, ecryptfs and ssh-agent-like tools
 * keep credentials) would otherwise be readable and writable by the
 * sandbox through "possession"; the workload's seccomp filter refuses the
 * keyring calls as well.  A kernel without keys has nothing to share.  */
static int
bwrap_child_session_keyring (void)
{
  if (syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0)
    return 0;
  return errno == ENOSYS ? 0 : -1;
}

/* In the forked child: become bwrap, from an empty environment, with
 * default signal handling, in a process group of its own (a Ctrl+C at
 * crucible's terminal is crucible's to decide on).  */
void __attribute__ ((noreturn))
bwrap_child_exec (const struct bwrap_fds *f, char **argv)
{
  char *empty_env[] = { NULL };
  sigset_t none;

  setpgid (0, 0);
  for (int s = 1; s < NSIG; s++)
    signal (s, SIG_DFL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  /* Into the command's pids cgroup before anything else of the scope
   * exists, so bwrap, the broker and every process beneath are counted;
   * "0" names the writer, this child's one thread (cgroup_pids_join_fd).  */
  if (f->cgroup_procs >= 0 && write (f->cgroup_procs, "0", 1) != 1)
    _exit (125);
  /* crucible run by root over another user's workspace: the sandbox is
   * that user's (doc/linux-confinement.md, "Root over another user's
   * workspace"), so bwrap starts as them, with no supplementary group of
   * root's and no way back.  */
  if (f->as_owner
      && (setgroups (0, NULL) < 0 || setgid (f->gid) < 0 || setuid (f->uid) < 0
          || setuid (0) == 0))
    _exit (125);
  if (bwrap_child_session_keyring () < 0)
    _exit (125);
  if (bwrap_child_fds (f) < 0)
    _exit (125);
  /* The pinned file, not the path: what was digested is what runs.  */
  syscall (SYS_execveat, BWRAP_FD_SELF, "", argv, empty_env, AT_EMPTY_PATH);
  _exit (127);
}

/* Start the child that becomes bwrap (bwrap_child_exec).  With vfork it
 * shares crucible's memory until its execveat or _exit, so nothing of
 * crucible is copied and neither side takes a copy-on-write fault for each
 * page it writes afterwards (on a virtual machine each one flushes the
 * TLB; together they were a large part of a confined start).  The child
 * makes only system calls, on its own stack frame, before it executes
 * bwrap.  Every signal is blocked around the vfork, so no handler of
 * crucible's runs in the child on the shared memory; the child resets
 * every handler before it unblocks them.  Becoming another user goes
 * through glibc's setuid, which signals the threads of the process it
 * believes it is, so that launch keeps an ordinary fork.  */
pid_t
bwrap_child_spawn (const struct bwrap_fds *f, char **argv)
{
  sigset_t all, old;
  pid_t pid;
  int saved;

  if (f->as_owner)
    {
      pid = fork ();
      if (pid == 0)
        bwrap_child_exec (f, argv);
      return pid;
    }
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  /* The child makes only system calls before its execve or _exit
   * (bwrap_child_exec), which the analyzer cannot see through.  */
  /* NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.vfork) */
  pid = vfork ();
  if (pid == 0)
    bwrap_child_exec (f, argv); /* NOLINT(clang-analyzer-unix.Vfork) */
  saved = errno;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  errno = saved;
  return pid;
}

/* Wait for pid up to ms; SIGKILL it after that.  Returns the wait status,
 * or -1 (the child was killed at the deadline, then reaped).  */
int
bwrap_wait_bounded (pid_t pid, int ms, struct rusage *ru)
{
  long long end = (long long) clock_now_ms () + ms;
  int status;
  /* A pidfd wakes the wait the moment the child ends, where a sleep of
   * a millisecond between polls would add up to one to every launch and
   * probe; without one (an old kernel), the polls.  */
  cleanup_close int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);

  for (;;)
    {
      pid_t r = wait4 (pid, &status, WNOHANG, ru);
      if (r == pid)
        return status;
      if (r < 0 && errno != EINTR)
        return -1;
      long long left = end - (long long) clock_now_ms ();
      if (left <= 0)
        break;
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      struct timespec tick = { 0, 1000L * 1000 };
      if (pidfd < 0 || poll (&p, 1, (int) left) < 0)
        nanosleep (&tick, NULL);
    }
  kill (pid, SIGKILL);
  while (wait4 (pid, &status, 0, ru) < 0 && errno == EINTR)
    ;
  return -1;
}

/* The first line or so of bwrap's message, for quoting.  */
char *
bwrap_quote (const char *text)
{
  size_t n = strcspn (text, "\n");
  if (n > BWRAP_QUOTE_BYTES)
    n = BWRAP_QUOTE_BYTES;
  return xstrndup (text, n);
}

/* --- one command -----------------------------------------------------------
 */

/* A rewound memfd named name holding len bytes of block: what (the
 * command's environment, its line) names it in messages.  */
static int
bwrap_data_fd (const char *name, const char *block, size_t len,
               const char *what, struct cr_error **err)
{
  cleanup_close int fd = memfd_create (name, MFD_CLOEXEC);

  if (fd < 0)
    return cr_error_set (err, errno, "making the command's %s", what);
  for (size_t done = 0; done < len;)
    {
      ssize_t n = write (fd, block + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return cr_error_set (err, errno, "writing the command's %s", what);
      done += (size_t) n;
    }
  if (lseek (fd, 0, SEEK_SET) < 0)
    return cr_error_set (err, errno, "rewinding the command's %s", what);
  return steal_fd (&fd);
}

/* A memfd holding the workload's environment for the broker's --env-fd.  */
static int
bwrap_env_fd (char *const *envp, struct cr_error **err)
{
  size_t len;
  cleanup_free char *block = bwrap_env_block (envp, &len);

  return bwrap_data_fd ("crucible-env", block, len, "environment", err);
}

/* A memfd holding the view's /etc/hosts (BWRAP_HOSTS), rewound, for
 * --ro-bind-data, which reads it to its end.  */
static int
bwrap_hosts_fd (struct cr_error **err)
{
  static const char hosts[] = BWRAP_HOSTS;
  cleanup_close int fd = memfd_create ("crucible-hosts", MFD_CLOEXEC);

  if (fd < 0)
    return cr_error_set (err, errno, "making the command's /etc/hosts");
  if (write (fd, hosts, sizeof hosts - 1) != (ssize_t) (sizeof hosts - 1))
    return cr_error_set (err, errno, "writing the command's /etc/hosts");
  if (lseek (fd, 0, SEEK_SET) < 0)
    return cr_error_set (err, errno, "rewinding the command's /etc/hosts");
  return steal_fd (&fd);
}

/* With domains: the net channel, a SOCK_SEQPACKET pair whose one end goes
 * to the broker (*broker_end) and whose other, non-blocking, is the
 * session's net_channel.  Nothing else has either end: bwrap closes what
 * it does not pass on, the broker keeps its end close-on-exec, and the
 * workload reaches the host's proxy only through the port the broker
 * listens on.  */
static int
bwrap_net_channel (struct bwrap_session *s, int *broker_end,
                   struct cr_error **err)
{
  int pair[2];

  *broker_end = -1;
  if (!s->net)
    return 0;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return cr_error_set (err, errno, "making the command's net channel");
  if (fcntl (pair[0], F_SETFL, O_NONBLOCK) < 0)
    {
      int saved = errno;
      close (pair[0]);
      close (pair[1]);
      return cr_error_set (err, saved, "setting up the command's net channel");
    }
  s->net_channel = pair[0];
  *broker_end = pair[1];
  return 0;
}

/* The path of a "gitdir: PATH" line in buf (NUL-terminated, n bytes), cut
 * in place; NULL when buf is not such a line.  A NUL inside means the file
 * is not git's and is not trusted.  */
static char *
bwrap_gitdir_line (char *buf, size_t n)
{
  static const char prefix[] = "gitdir: ";
  char *path, *end;

  if (memchr (buf, '\0', n) != NULL
      || strncmp (buf, prefix, sizeof prefix - 1) != 0)
    return NULL;
  path = buf + sizeof prefix - 1;
  end = path + strcspn (path, "\n");
  while (end > path && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
    end--;
  *end = '\0';
  return *path != '\0' ? path : NULL;
}

/* A .git that is a symlink (.git -> .realgit): its target, which git
 * uses as the git directory, in *path_out, to be kept read-only like a
 * gitdir: target.  The link itself lives in the read-only lower.  */
static int
bwrap_gitdir_link (const char *name, char **path_out)
{
  char target[PATH_MAX];
  ssize_t n = readlink (name, target, sizeof target - 1);

  if (n <= 0)
    return 0;
  target[n] = '\0';
  *path_out = xstrdup (target);
  return 0;
}

/* Read workspace/.git when it is a regular file, bounded: *path_out gets
 * its gitdir: path, or NULL when .git is absent, a directory or not a
 * gitdir file; a symlink gives its target (bwrap_gitdir_link).
 * O_NOFOLLOW: a .git symlink is never read through, only named, and the
 * broker does not follow it either.  O_NONBLOCK and the S_ISREG check:
 * a fifo or a device named .git cannot hang or feed the launch.  */
static int
bwrap_gitdir_read (const char *workspace, char **path_out,
                   struct cr_error **err)
{
  cleanup_free char *name = xasprintf ("%s/.git", workspace);
  char buf[BWRAP_GITDIR_BYTES + 1];
  struct stat st;
  ssize_t n;
  cleanup_close int fd
      = open (name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

  *path_out = NULL;
  if (fd < 0 && errno == ELOOP)
    return bwrap_gitdir_link (name, path_out);
  if (fd < 0)
    return errno == ENOENT ? 0
                           : cr_error_set (err, errno, "opening '%s'", name);
  if (fstat (fd, &st) < 0)
    return cr_error_set (err, errno, "examining '%s'", name);
  if (!S_ISREG (st.st_mode))
    return 0;
  n = read (fd, buf, sizeof buf);
  if (n < 0)
    return cr_error_set (err, errno, "reading '%s'", name);
  /* Too long to be git's own line: refused, not half-read.  */
  if ((size_t) n > BWRAP_GITDIR_BYTES)
    return cr_error_set (err, EFBIG, "'%s' is larger than %d bytes", name,
                         BWRAP_GITDIR_BYTES);
  buf[n] = '\0';
  char *path = bwrap_gitdir_line (buf, (size_t) n);
  if (path != NULL)
    *path_out = xstrdup (path);
  return 0;
}

/* Check that rel, under workspace, is plain directories all the way down,
 * opening each component without following a symlink: between realpath
 * and here a component swapped for a link must not go unnoticed.  */
static int
bwrap_gitdir_walk (const char *workspace, const char *rel,
                   struct cr_error **err)
{
  cleanup_free char *copy = xstrdup (rel);
  cleanup_close int dir = open (workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
  char *save = NULL;

  if (dir < 0)
    return cr_error_set (err, errno, "opening the workspace '%s'", workspace);
  for (char *c = strtok_r (copy, "/", &save); c != NULL;
       c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0 || strcmp (c, "..") == 0)
        return cr_error_set (err, EINVAL, "gitdir '%s' is not canonical", rel);
      int next = openat (dir, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0)
        return cr_error_set (err, errno, "checking gitdir '%s' at '%s'", rel,
                             c);
      close (dir);
      dir = next;
    }
  return 0;
}

/* Where the workspace's gitdir: file points, relative to the workspace,
 * for the broker to keep read-only like .git: *rel_out NULL when there is
 * none, it names nothing, or it lies outside the workspace (then it is
 * not mounted in the sandbox at all, so nothing inside can reach it).
 * realpath resolves ".." and symlinks only to learn where the name ends;
 * nothing outside is opened or mounted.  The workspace is canonical, so
 * a prefix match on the canonical target is containment.  */
static int
bwrap_gitdir (const char *workspace, char **rel_out, struct cr_error **err)
{
  cleanup_free char *path = NULL, *full = NULL, *real = NULL;
  size_t n = strlen (workspace);

  *rel_out = NULL;
  if (bwrap_gitdir_read (workspace, &path, err) < 0)
    return -1;
  if (path == NULL)
    return 0;
  full = path[0] == '/' ? xstrdup (path) : xasprintf ("%s/%s", workspace, path);
  real = realpath (full, NULL);
  if (real == NULL)
    return errno == ENOENT || errno == ENOTDIR
               ? 0
               : cr_error_set (err, errno, "resolving gitdir '%s'", path);
  if (strncmp (real, workspace, n) != 0 || (real[n] != '/' && real[n] != '\0'))
    return 0;
  /* The workspace itself as its own git directory: read-only would mean
   * the whole root, so the launch is refused rather than left open.  */
  if (real[n] == '\0' || real[n + 1] == '\0')
    return cr_error_set (err, EINVAL, "gitdir '%s' is the workspace itself",
                         path);
  if (bwrap_gitdir_walk (workspace, real + n + 1, err) < 0)
    return -1;
  *rel_out = xstrdup (real + n + 1);
  return 0;
}

/* What one launch resolves from the policy's grants against the
 * workspace: the unreadable patterns, relative to it, and the granted
 * sockets, by name inside it or pinned by descriptor outside.  */
struct bwrap_grants
{
  char **unreadable;
  size_t n_unreadable;
  char **names; /* sockets inside the workspace, relative */
  size_t n_names;
  char **dests; /* sockets outside it: where each is bound */
  int *fds;     /* and the socket itself, opened O_PATH */
  size_t n_binds;
};

static void
bwrap_grants_clear (struct bwrap_grants *g)
{
  for (size_t i = 0; i < g->n_unreadable; i++)
    free (g->unreadable[i]);
  for (size_t i = 0; i < g->n_names; i++)
    free (g->names[i]);
  for (size_t i = 0; i < g->n_binds; i++)
    {
      free (g->dests[i]);
      close (g->fds[i]);
    }
  free (g->unreadable);
  free (g->names);
  free (g->dests);
  free (g->fds);
  memset (g, 0, sizeof *g);
}

/* Append s to a growing list of strings.  */
static void
bwrap_list_push (char ***list, size_t *n, char *s)
{
  *list = xrealloc (*list, (*n + 1) * sizeof **list);
  (*list)[(*n)++] = s;
}

/* Where pattern applies: relative to the workspace as written; an absolute
 * one inside the workspace made relative; an absolute one outside it is
 * nothing in this view (nothing outside the workspace is mounted), so
 * *rel_out is NULL.  */
static int
bwrap_pattern_rel (const char *pattern, const char *workspace,
                   const char **rel_out, struct cr_error **err)
{
  size_t n = strlen (workspace);
  const char *why;

  *rel_out = NULL;
  if (pattern[0] == '/')
    {
      if (strncmp (pattern, workspace, n) != 0
          || (pattern[n] != '/' && pattern[n] != '\0'))
        return 0;
      if (pattern[n] == '\0' || pattern[n + 1] == '\0')
        return cr_error_set (err, 0,
                             "sandbox.filesystem.unreadable: '%s' is the "
                             "workspace itself",
                             pattern);
      pattern += n + 1;
    }
  why = unreadable_check (pattern);
  if (why != NULL)
    return cr_error_set (err, 0, "sandbox.filesystem.unreadable: '%s' %s",
                         pattern, why);
  *rel_out = pattern;
  return 0;
}

/* The patterns, relative to the workspace.  */
static int
bwrap_resolve_patterns (const struct bwrap_backend *b, const char *workspace,
                        struct bwrap_grants *g, struct cr_error **err)
{
  for (size_t i = 0; i < b->opt.n_unreadable; i++)
    {
      const char *rel;
      if (bwrap_pattern_rel (b->unreadable[i], workspace, &rel, err) < 0)
        return -1;
      if (rel != NULL)
        bwrap_list_push (&g->unreadable, &g->n_unreadable, xstrdup (rel));
    }
  return 0;
}

/* The canonical path of what path names, its last component not
 * resolved (it is the socket itself, opened without following).  */
static char *
bwrap_canonical_parent (const char *path)
{
  cleanup_free char *dir = xstrdup (path);
  char *slash = strrchr (dir, '/');
  cleanup_free char *real = NULL;

  *slash = '\0';
  real = realpath (dir[0] != '\0' ? dir : "/", NULL);
  if (real == NULL)
    return NULL;
  return xasprintf ("%s/%s", strcmp (real, "/") == 0 ? "" : real, slash + 1);
}

/* One granted socket: opened without following a symlink and checked to
 * be a socket, so what is bound is the socket that was named.  One that
 * does not exist when the command starts is left out (a server started
 * later is not reachable); anything else that is not a socket refuses the
 * launch.  */
static int
bwrap_resolve_socket (const char *path, const char *workspace,
                      struct bwrap_grants *g, struct cr_error **err)
{
  size_t n = strlen (workspace);
  struct stat st;
  cleanup_free char *canon = NULL;
  cleanup_close int fd = open (path, O_PATH | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    return errno == ENOENT || errno == ENOTDIR
               ? 0
               : cr_error_set (err, errno,
                               "sandbox.network.allowUnixSockets: '%s'", path);
  if (fstat (fd, &st) < 0)
    return cr_error_set (err, errno, "sandbox.network.allowUnixSockets: '%s'",
                         path);
  if (!S_ISSOCK (st.st_mode))
    return cr_error_set (err, 0,
                         "sandbox.network.allowUnixSockets: '%s' is not a "
                         "Unix socket",
                         path);
  canon = bwrap_canonical_parent (path);
  if (canon == NULL)
    return cr_error_set (err, errno, "sandbox.network.allowUnixSockets: '%s'",
                         path);
  /* Inside the workspace the projection shows it already; the broker is
   * told to leave it uncovered.  */
  if (strncmp (canon, workspace, n) == 0 && canon[n] == '/')
    {
      bwrap_list_push (&g->names, &g->n_names, xstrdup (canon + n + 1));
      return 0;
    }
  g->fds = xrealloc (g->fds, (g->n_binds + 1) * sizeof *g->fds);
  g->fds[g->n_binds] = steal_fd (&fd);
  bwrap_list_push (&g->dests, &g->n_binds, steal_pointer (&canon));
  return 0;
}

static int
bwrap_resolve_sockets (const struct bwrap_backend *b, const char *workspace,
                       struct bwrap_grants *g, struct cr_error **err)
{
  for (size_t i = 0; i < b->opt.n_unix_sockets; i++)
    if (bwrap_resolve_socket (b->unix_sockets[i], workspace, g, err) < 0)
      return -1;
  return 0;
}

/* Put the command in a pids cgroup of its own where crucible can make one:
 * the cap then binds whoever runs crucible.  bwrap and the broker are
 * counted too, hence the two more.  */
static int
bwrap_cgroup (struct bwrap_session *s, int *procs_fd, struct cr_error **err)
{
  const char *parent = bwrap_cgroup_parent (s->backend);

  *procs_fd = -1;
  if (parent == NULL)
    return 0;
  return cgroup_pids_make (parent, s->processes + 2, &s->cgroup, procs_fd, err);
}

/* Whose sandbox this is.  crucible run by root over a workspace that
 * another user owns: inside a one-uid namespace of root's, that user's
 * files would appear as 65534 and read-only, so the sandbox is run as the
 * owner instead (bwrap started as them, their own state directory, layers
 * they own); their primary group from the password database, or the
 * workspace's group when they have no entry.  */
static int
bwrap_owner (struct bwrap_session *s, const char *workspace,
             struct cr_error **err)
{
  struct stat st;
  char *statedir = NULL;
  int fd = -1;

  if (geteuid () != 0)
    return 0;
  if (stat (workspace, &st) < 0)
    return cr_error_set (err, errno, "examining the workspace root");
  if (st.st_uid == 0)
    return 0;
  struct passwd *pw = getpwuid (st.st_uid);
  s->as_owner = true;
  s->owner_uid = st.st_uid;
  s->owner_gid = pw != NULL ? pw->pw_gid : st.st_gid;
  if (statedir_open (s->backend->opt.state_parent, s->owner_uid, s->owner_gid,
                     &statedir, &fd, err)
      < 0)
    return cr_error_prefix (err, "the workspace's owner's sandbox");
  close (fd);
  free (s->statedir);
  s->statedir = statedir;
  return 0;
}

/* Act as the workspace's owner (effective uid, gid and groups) for what
 * touches their state directory and workspace: publication's baseline,
 * lock, counts and journal are then theirs, as their own crucible would
 * make them, and what is published is written as them.  crucible is one
 * thread, so nothing else runs under the borrowed identity.  */
int
bwrap_become_owner (const struct bwrap_session *s, struct bwrap_ids *saved,
                    struct cr_error **err)
{
  saved->switched = false;
  if (!s->as_owner)
    return 0;
  saved->n_groups = getgroups (64, saved->groups);
  if (saved->n_groups < 0 || setgroups (1, &s->owner_gid) < 0
      || setegid (s->owner_gid) < 0 || seteuid (s->owner_uid) < 0)
    {
      int saved_errno = errno;
      if (seteuid (0) == 0 && setegid (0) == 0 && saved->n_groups >= 0)
        setgroups ((size_t) saved->n_groups, saved->groups);
      return cr_error_set (err, saved_errno, "acting as the workspace's owner");
    }
  saved->switched = true;
  return 0;
}

/* Back to root.  Failing here would leave crucible as someone else:
 * abort rather than carry on.  */
void
bwrap_become_self (struct bwrap_ids *saved)
{
  if (!saved->switched)
    return;
  if (seteuid (0) < 0 || setegid (0) < 0
      || setgroups ((size_t) saved->n_groups, saved->groups) < 0)
    abort ();
  saved->switched = false;
}

/* --- starting again on another candidate ------------------------------------
 * Only while the probe's answer came from a record (doc/linux-confinement.md,
 * "The remembered probe"): a launch that failed as a probe would have is
 * made again on the candidate a fresh probe passes, so the command ends as
 * it would have had every candidate been probed first.  Nothing of the
 * workload ran: the broker lets it exec only after STARTED.  */

/* The most descriptors a GO carries (broker/status.h).  */
#define BWRAP_GO_MAX_FDS 5

/* What a relaunch needs: the argument vector and copies of the
 * descriptors handed to bwrap, the command's output among them (held,
 * the output's end is not seen until the broker speaks or the launch is
 * given up).  */
struct bwrap_retry
{
  char **argv;
  struct bwrap_fds f;
  int *extra;
  /* Copies of what GO carried, for a launch that waited for it (prepared
   * ahead, or a workload with streams of its own): the relaunched broker
   * waits for GO in its turn.  n_go 0 until GO went.  */
  int go[BWRAP_GO_MAX_FDS];
  size_t n_go;
};

/* A copy of fd, or -1 for none (or when it cannot be copied: bwrap then
 * lacks it and fails, which stands as the launch's own failure).  */
static int
bwrap_retry_dup (int fd)
{
  return fd < 0 ? -1 : fcntl (fd, F_DUPFD_CLOEXEC, 3);
}

/* Keep argv (owned now) and copies of f's own descriptors.  */
static struct bwrap_retry *
bwrap_retry_keep (const struct bwrap_fds *f, char **argv)
{
  struct bwrap_retry *r = xcalloc (1, sizeof *r);

  r->argv = argv;
  r->f = *f;
  r->f.in = r->f.out = bwrap_retry_dup (f->in);
  r->f.seccomp = bwrap_retry_dup (f->seccomp);
  r->f.env = bwrap_retry_dup (f->env);
  r->f.output = bwrap_retry_dup (f->output);
  r->f.workload_seccomp = bwrap_retry_dup (f->workload_seccomp);
  r->f.net = bwrap_retry_dup (f->net);
  r->f.hosts = bwrap_retry_dup (f->hosts);
  r->extra = xcalloc (f->n_extra + 1, sizeof *r->extra);
  for (size_t i = 0; i < f->n_extra; i++)
    r->extra[i] = bwrap_retry_dup (f->extra[i]);
  r->f.extra = r->extra;
  r->f.status = r->f.err = r->f.cgroup_procs = r->f.self = -1;
  return r;
}

void
bwrap_retry_free (struct bwrap_retry *r)
{
  if (r == NULL)
    return;
  int own[]
      = { r->f.in,  r->f.seccomp, r->f.env, r->f.output, r->f.workload_seccomp,
          r->f.net, r->f.hosts };
  for (size_t i = 0; i < sizeof own / sizeof *own; i++)
    if (own[i] >= 0)
      close (own[i]);
  for (size_t i = 0; i < r->f.n_extra; i++)
    if (r->extra[i] >= 0)
      close (r->extra[i]);
  for (size_t i = 0; i < r->n_go; i++)
    if (r->go[i] >= 0)
      close (r->go[i]);
  free (r->extra);
  bwrap_argv_free (r->argv);
  free (r);
}

/* Put a fresh descriptor at the number at, which the loop or the session
 * holds, close-on-exec; the fresh one is closed.  */
static int
bwrap_retry_place (int fresh, int at)
{
  int rc = dup3 (fresh, at, O_CLOEXEC);
  close (fresh);
  return rc < 0 ? -1 : 0;
}

/* The channel and the error pipe anew, at the session's numbers; the
 * broker's ends in *status and *err_end.  */
static int
bwrap_retry_channels (struct bwrap_session *s, int *status, int *err_end)
{
  int pair[2], errp[2];

  if (pipe2 (errp, O_CLOEXEC | O_NONBLOCK) < 0)
    return -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    {
      close (errp[0]);
      close (errp[1]);
      return -1;
    }
  if (fcntl (pair[0], F_SETFL, O_NONBLOCK) < 0
      || bwrap_retry_place (pair[0], s->channel) < 0
      || bwrap_retry_place (errp[0], s->err_fd) < 0)
    {
      close (pair[1]);
      close (errp[1]);
      return -1;
    }
  *status = pair[1];
  *err_end = errp[1];
  return 0;
}

/* Rewind the memfds bwrap and the broker read to their end.  */
static void
bwrap_retry_rewind (const struct bwrap_retry *r)
{
  int fds[] = { r->f.seccomp, r->f.env, r->f.workload_seccomp, r->f.hosts };

  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    if (fds[i] >= 0)
      lseek (fds[i], 0, SEEK_SET);
}

/* Keep copies of the descriptors GO carried (output, environment, line,
 * and with stdio input and error) in r, so a relaunch can send it again.
 * A copy that cannot be made leaves the relaunched broker without GO,
 * which the end of its channel reports, as for any launch that failed.  */
static void
bwrap_retry_keep_go (struct bwrap_retry *r, const int *fds, size_t n)
{
  for (size_t i = 0; i < n && i < BWRAP_GO_MAX_FDS; i++)
    r->go[i] = bwrap_retry_dup (fds[i]);
  r->n_go = n < BWRAP_GO_MAX_FDS ? n : BWRAP_GO_MAX_FDS;
}

/* A relaunch of a launch whose GO already went to the broker that failed:
 * send it again, its environment and line read from their start.  The
 * copies stay held until the broker speaks (bwrap.c frees the retry).  */
static void
bwrap_retry_go (struct bwrap_session *s, const struct bwrap_retry *r)
{
  if (r->n_go < 3)
    return;
  lseek (r->go[1], 0, SEEK_SET);
  lseek (r->go[2], 0, SEEK_SET);
  if (r->n_go == BWRAP_GO_MAX_FDS)
    channel_send_go_stdio (s->channel, r->go[0], r->go[1], r->go[2], r->go[3],
                           r->go[4]);
  else
    channel_send_go (s->channel, r->go[0], r->go[1], r->go[2]);
}

/* Start bwrap again from r, on the backend's candidate now.  */
static int
bwrap_retry_start (struct bwrap_session *s, struct bwrap_retry *r)
{
  cleanup_close int procs = -1;
  int status, err_end;

  if (s->channel < 0 || s->err_fd < 0
      || bwrap_retry_channels (s, &status, &err_end) < 0)
    return 0;
  if (s->cgroup != NULL)
    procs = cgroup_pids_join_fd (s->cgroup);
  bwrap_retry_rewind (r);
  r->f.status = status;
  r->f.err = err_end;
  r->f.broker = s->backend->broker_fd;
  r->f.self = s->backend->bwrap.fd;
  r->f.cgroup_procs = procs;
  pid_t pid = (s->cgroup != NULL && procs < 0)
                  ? -1
                  : bwrap_child_spawn (&r->f, r->argv);
  close (status);
  close (err_end);
  if (pid < 0)
    return 0;
  s->launcher = pid;
  s->ru_known = false;
  s->scope_gone = false;
  bwrap_retry_go (s, r);
  return 1;
}

int
bwrap_relaunch (struct bwrap_session *s)
{
  struct bwrap_backend *b = s->backend;
  struct bwrap_retry *r = s->retry;
  char before[SHA256_HEX_LEN + 1];
  int started = 0;

  s->retry = NULL;
  if (r == NULL)
    return 0;
  snprintf (before, sizeof before, "%s", b->bwrap.sha256);
  cleanup_free char *path = xstrdup (b->bwrap.path);
  bwrap_probe_forget (b);
  bwrap_probe_once (b);
  /* The same candidate passing again: its launch failed after a probe
   * that passed, which without the record reads the same.  None passing:
   * the launch's own failure is what is reported.  */
  if (b->probe.usable
      && (strcmp (path, b->bwrap.path) != 0
          || strcmp (before, b->bwrap.sha256) != 0))
    started = bwrap_retry_start (s, r);
  bwrap_retry_free (r);
  return started;
}

static int bwrap_launch (struct bwrap_session *s,
                         const struct sandbox_command *cmd, const char *shell,
                         const char *workspace, const char *gitdir,
                         const struct bwrap_grants *g, struct cr_error **err);
static int bwrap_go (struct bwrap_session *s, const struct sandbox_command *cmd,
                     struct cr_error **err);
static int bwrap_start_stdio (struct bwrap_session *s,
                              const struct sandbox_command *cmd,
                              struct cr_error **err);

/* What a launch reads from the workspace, resolved: the gitdir, the
 * grants and (once per session) the protected roots.  */
static int
bwrap_resolve (struct bwrap_session *s, const char *workspace, char **gitdir,
               struct bwrap_grants *g, struct cr_error **err)
{
  if (bwrap_statedir_refuse (s->backend, workspace, err) < 0
      || bwrap_gitdir (workspace, gitdir, err) < 0)
    return -1;
  if (s->protect == NULL)
    bwrap_roots_resolve (s, workspace, *gitdir);
  if (bwrap_resolve_patterns (s->backend, workspace, g, err) < 0
      || bwrap_resolve_sockets (s->backend, workspace, g, err) < 0)
    {
      bwrap_grants_clear (g);
      return -1;
    }
  return 0;
}

/* Start bwrap, which starts the broker, which starts the workload; for a
 * session prepared ahead, only give the broker GO.  */
int
bwrap_start (struct sandbox_session *base, const struct sandbox_command *cmd,
             struct cr_error **err)
{
  struct bwrap_session *s = (struct bwrap_session *) base;
  cleanup_free char *workspace = NULL, *gitdir = NULL;
  struct bwrap_grants g = { 0 };
  int rc;

  if (cmd->stdio)
    return bwrap_start_stdio (s, cmd, err);
  if (s->ahead)
    return bwrap_go (s, cmd, err);
  if ((workspace = realpath (cmd->cwd, NULL)) == NULL)
    return cr_error_set (err, errno, "resolving the workspace root");
  if (bwrap_resolve (s, workspace, &gitdir, &g, err) < 0)
    return -1;
  rc = bwrap_launch (s, cmd, cmd->shell, workspace, gitdir, &g, err);
  bwrap_grants_clear (&g);
  return rc;
}

/* One string of everything a launch read from the workspace (the
 * gitdir, the protected roots, the grants, each socket by device and
 * inode), so that a session prepared ahead can tell whether a launch now
 * would read the same.  */
static char *
bwrap_ahead_key_of (const char *gitdir, char *const *protect, size_t n_protect,
                    const struct bwrap_grants *g)
{
  struct buf b = BUF_INIT;
  struct stat st;

  buf_printf (&b, "gitdir %s\n", gitdir != NULL ? gitdir : "");
  for (size_t i = 0; i < n_protect; i++)
    buf_printf (&b, "protect %s\n", protect[i]);
  for (size_t i = 0; i < g->n_unreadable; i++)
    buf_printf (&b, "unreadable %s\n", g->unreadable[i]);
  for (size_t i = 0; i < g->n_names; i++)
    buf_printf (&b, "socket %s\n", g->names[i]);
  for (size_t i = 0; i < g->n_binds; i++)
    if (fstat (g->fds[i], &st) == 0)
      buf_printf (&b, "bind %s %llu:%llu\n", g->dests[i],
                  (unsigned long long) st.st_dev,
                  (unsigned long long) st.st_ino);
  buf_append (&b, "", 1);
  return buf_steal (&b, NULL);
}

/* Launch ahead of the command: bwrap and the broker, waiting for GO.  */
int
bwrap_ahead (struct sandbox_session *base, const char *cwd, const char *shell,
             struct cr_error **err)
{
  struct bwrap_session *s = (struct bwrap_session *) base;
  cleanup_free char *workspace = realpath (cwd, NULL), *gitdir = NULL;
  struct bwrap_grants g = { 0 };
  struct stat st;

  if (s->ahead || s->launcher != 0)
    return cr_error_set (err, 0, "the sandbox was already started");
  if (workspace == NULL || stat (workspace, &st) < 0)
    return cr_error_set (err, errno, "resolving the workspace root");
  if (bwrap_resolve (s, workspace, &gitdir, &g, err) < 0)
    return -1;
  int rc = bwrap_launch (s, NULL, shell, workspace, gitdir, &g, err);
  if (rc == 0)
    {
      s->ahead = true;
      s->ahead_shell = xstrdup (shell);
      s->ahead_key = bwrap_ahead_key_of (gitdir, s->protect, s->n_protect, &g);
      s->ws_dev = st.st_dev;
      s->ws_ino = st.st_ino;
      s->ws_uid = st.st_uid;
    }
  bwrap_grants_clear (&g);
  return rc;
}

/* Whether the broker of a session prepared ahead still waits: nothing
 * arrived on the channel (a failed setup, an end).  */
static bool
bwrap_ahead_waiting (const struct bwrap_session *s)
{
  struct pollfd p = { .fd = s->channel, .events = POLLIN };

  return s->channel >= 0 && poll (&p, 1, 0) == 0;
}

/* Whether the session prepared ahead still fits cwd and shell.  */
bool
bwrap_ahead_current (const struct sandbox_session *base, const char *cwd,
                     const char *shell)
{
  const struct bwrap_session *s = (const struct bwrap_session *) base;
  cleanup_free char *workspace = realpath (cwd, NULL), *gitdir = NULL;
  struct bwrap_grants g = { 0 };
  struct stat st;

  if (!s->ahead || s->go_sent || !bwrap_ahead_waiting (s) || workspace == NULL
      || strcmp (workspace, s->root) != 0 || strcmp (shell, s->ahead_shell) != 0
      || stat (workspace, &st) < 0 || st.st_dev != s->ws_dev
      || st.st_ino != s->ws_ino || st.st_uid != s->ws_uid)
    return false;
  /* The protected roots as they would resolve now, in a session of their
   * own that borrows this one's configured roots.  */
  struct bwrap_session now = { .backend = s->backend,
                               .cfg_roots = s->cfg_roots,
                               .n_cfg = s->n_cfg,
                               .n_cfg_read_only = s->n_cfg_read_only };
  if (bwrap_gitdir (workspace, &gitdir, NULL) < 0)
    return false;
  bwrap_roots_resolve (&now, workspace, gitdir);
  bool same = false;
  if (bwrap_resolve_patterns (s->backend, workspace, &g, NULL) == 0
      && bwrap_resolve_sockets (s->backend, workspace, &g, NULL) == 0)
    {
      cleanup_free char *key
          = bwrap_ahead_key_of (gitdir, now.protect, now.n_protect, &g);
      same = strcmp (key, s->ahead_key) == 0;
    }
  bwrap_grants_clear (&g);
  bwrap_argv_free (now.protect);
  free (now.guard_roots);
  return same;
}

/* Whether the workload may bind and listen: allowLocalBinding, or a
 * Unix socket grant, whose own servers need both calls and which a
 * filter cannot tell from an inet socket's (bind's address is behind a
 * pointer).  Either way what it binds is in its own namespace, which no
 * other process reaches (doc/linux-confinement.md, "Local binding").  */
static bool
bwrap_binding_allowed (const struct bwrap_session *s)
{
  return s->allow_local_binding || s->backend->opt.n_unix_sockets > 0;
}

/* Take the command's publication baseline, as the workspace's owner.
 * Under the publication lock, so no baseline is taken halfway through
 * another command's publication; it also recovers what an earlier
 * process abandoned.  */
static int
bwrap_baseline (struct bwrap_session *s, struct cr_error **err)
{
  struct bwrap_ids ids;
  if (bwrap_become_owner (s, &ids, err) < 0)
    return -1;
  int taken = publish_baseline_take (
      s->statedir, s->root, PUBLISH_WAIT_PREPARE_MS, &s->baseline, err);
  bwrap_become_self (&ids);
  return taken;
}

/* Hand the broker waiting for GO the command's streams, its environment
 * and its line: the output alone, or with stdio its stdin, its stdout
 * and its stderr, each the very descriptor the caller gave.  */
static int
bwrap_send_go (const struct bwrap_session *s, const struct sandbox_command *cmd,
               int env, int args)
{
  if (s->retry != NULL)
    {
      int fds[BWRAP_GO_MAX_FDS]
          = { cmd->output_fd, env, args, cmd->input_fd, cmd->error_fd };
      bwrap_retry_keep_go (s->retry, fds, cmd->stdio ? BWRAP_GO_MAX_FDS : 3);
    }
  if (cmd->stdio)
    return channel_send_go_stdio (s->channel, cmd->output_fd, env, args,
                                  cmd->input_fd, cmd->error_fd);
  return channel_send_go (s->channel, cmd->output_fd, env, args);
}

/* A workload with standard streams of its own (an MCP server): its
 * three descriptors travel the way a prepared sandbox's output does, in
 * GO, straight to the broker, which makes them the workload's 0, 1 and 2
 * and keeps no copy; bwrap and the broker themselves hold only
 * /dev/null and their own stderr, so the workload's input sees its end
 * when the host closes it, and its output and error theirs when the
 * workload's last process is gone.  Nothing else of the host's reaches
 * it: bwrap gets only the descriptors of a launch prepared ahead, and the
 * broker closes every other it inherited before GO comes.  Prepared ahead
 * or not, the launch waits for that GO; a launch that fails as a probe
 * would have is made again with the same GO (bwrap_retry_go).  */
static int
bwrap_start_stdio (struct bwrap_session *s, const struct sandbox_command *cmd,
                   struct cr_error **err)
{
  if (cmd->input_fd < 0 || cmd->output_fd < 0 || cmd->error_fd < 0)
    return cr_error_set (err, EBADF,
                         "starting a workload with its own streams: its "
                         "input, output and error must all be given");
  /* A terminal as one of them would be the person's keyboard and screen
   * inside the sandbox: keystrokes read, escape sequences written, the
   * terminal's settings and its session's job control reached.  A command
   * never gets one (its input is /dev/null, its output a pipe), and
   * neither does a workload with streams of its own.  */
  if (isatty (cmd->input_fd) || isatty (cmd->output_fd)
      || isatty (cmd->error_fd))
    return cr_error_set (err, 0,
                         "starting a workload with its own streams: a "
                         "terminal cannot be one of them");
  if (!s->ahead && bwrap_ahead (&s->base, cmd->cwd, cmd->shell, err) < 0)
    return -1;
  return bwrap_go (s, cmd, err);
}

/* The command of a session prepared ahead may run: take its baseline now
 * (not when it was prepared: what changed in the workspace meanwhile is
 * the command's starting point, not its change), then hand the broker,
 * which has mounted nothing of the workspace yet, the output, the
 * environment and the line.  The environment exists only from here on,
 * so no credential ever waits in a prepared sandbox.  A broker that has
 * gone meanwhile is not an error here: the end of its channel says what
 * became of it, as for a launch that failed.  */
static int
bwrap_go (struct bwrap_session *s, const struct sandbox_command *cmd,
          struct cr_error **err)
{
  cleanup_close int env = -1, args = -1;

  if (s->go_sent)
    return cr_error_set (err, 0, "the sandbox was already started");
  if (strcmp (cmd->shell, s->ahead_shell) != 0)
    return cr_error_set (err, 0, "the sandbox was prepared for %s, not %s",
                         s->ahead_shell, cmd->shell);
  if (bwrap_baseline (s, err) < 0)
    return -1;
  if ((env = bwrap_env_fd (cmd->envp, err)) < 0
      || (args = bwrap_data_fd ("crucible-line", cmd->line,
                                strlen (cmd->line) + 1, "line", err))
             < 0)
    return -1;
  s->go_sent = true;
  if (bwrap_send_go (s, cmd, env, args) < 0 && errno != EPIPE
      && errno != ECONNRESET && errno != ECONNREFUSED)
    return cr_error_set (err, errno, "starting the prepared sandbox");
  return 0;
}

/* The launch itself, once the grants are resolved; cmd NULL for a session
 * prepared ahead, whose broker waits for GO (bwrap_go).  */
static int
bwrap_launch (struct bwrap_session *s, const struct sandbox_command *cmd,
              const char *shell, const char *workspace, const char *gitdir,
              const struct bwrap_grants *g, struct cr_error **err)
{
  struct bwrap_backend *b = s->backend;
  cleanup_close int devnull = -1, seccomp = -1, env = -1, procs = -1;
  cleanup_close int workload_seccomp = -1, hosts = -1, net = -1;
  int pair[2], errp[2];

  if (bwrap_owner (s, workspace, err) < 0)
    return -1;
  /* The user's groups mapped where crucible can make the namespaces: the
   * pair goes to bwrap after the granted sockets.  */
  cleanup_userns struct userns_pair uns = USERNS_PAIR_INIT;
  int extra[BWRAP_MAX_SOCKETS + 2];
  bwrap_userns (s, &uns);
  if (g->n_binds > 0)
    memcpy (extra, g->fds, g->n_binds * sizeof *extra);
  extra[g->n_binds] = uns.outer;
  extra[g->n_binds + 1] = uns.inner;
  s->root = xstrdup (workspace);
  /* The baseline comes before the layers.  Prepared ahead, it waits for
   * GO; the layers are empty until then, and the broker mounts nothing of
   * the workspace before it.  */
  if (cmd != NULL && bwrap_baseline (s, err) < 0)
    return -1;
  if (statedir_pair_create (s->statedir, workspace, &s->pair, err) < 0)
    return -1;
  if (bwrap_cgroup (s, &procs, err) < 0)
    return -1;
  devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0)
    return cr_error_set (err, errno,
                         "opening /dev/null for the command's input");
  if ((seccomp = sandbox_seccomp_fd (b->opt.n_unix_sockets > 0, err)) < 0
      || (workload_seccomp
          = sandbox_seccomp_workload_fd (bwrap_binding_allowed (s), err))
             < 0
      || (cmd != NULL && (env = bwrap_env_fd (cmd->envp, err)) < 0)
      || (hosts = bwrap_hosts_fd (err)) < 0
      || bwrap_net_channel (s, &net, err) < 0)
    return -1;
  /* The broker's digest was computed beside all of the above; an answer
   * from a record stands only when the whole key is still the same.  */
  bwrap_probe_settle (b);
  if (!b->probe.usable)
    return bwrap_unavailable (b, err);
  if (pipe2 (errp, O_CLOEXEC | O_NONBLOCK) < 0)
    return cr_error_set (err, errno, "making bwrap's error pipe");
  s->err_fd = errp[0];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    {
      close (errp[1]);
      return cr_error_set (err, errno, "making the command's status channel");
    }
  struct bwrap_plan plan = { .workspace = workspace,
                             .layer_dir = s->pair.dir,
                             .gitdir = gitdir,
                             .protect = s->protect,
                             .n_protect = s->n_protect,
                             .shell = shell,
                             .line = cmd != NULL ? cmd->line : NULL,
                             .await = cmd == NULL,
                             .cpu_seconds = b->opt.cpu_seconds,
                             .open_files = b->opt.open_files,
                             .processes = s->processes,
                             .memory_bytes = s->memory_bytes,
                             .unreadable = g->unreadable,
                             .n_unreadable = g->n_unreadable,
                             .hide_sockets = b->opt.n_unix_sockets > 0,
                             .socket_names = g->names,
                             .n_socket_names = g->n_names,
                             .socket_dests = g->dests,
                             .n_socket_binds = g->n_binds,
                             .net = s->net,
                             .ports = s->ports,
                             .n_ports = s->n_ports,
                             .userns = uns.outer >= 0 };
  char **argv = bwrap_build_argv (&plan);
  /* bwrap's own stdout and stderr are not the command's: bwrap and the
   * broker hold them for the whole run, and the host must see the end of
   * the output when the workload's last process is gone.  */
  struct bwrap_fds f = { .in = devnull,
                         .out = devnull,
                         .err = errp[1],
                         .status = pair[1],
                         .broker = b->broker_fd,
                         .seccomp = seccomp,
                         .env = env,
                         .output = cmd != NULL ? cmd->output_fd : -1,
                         .self = b->bwrap.fd,
                         .workload_seccomp = workload_seccomp,
                         .net = net,
                         .hosts = hosts,
                         .extra = extra,
                         .n_extra = g->n_binds + (uns.outer >= 0 ? 2 : 0),
                         .cgroup_procs = procs,
                         .uid = s->owner_uid,
                         .gid = s->owner_gid,
                         .as_owner = s->as_owner };
  pid_t pid = bwrap_child_spawn (&f, argv);
  int saved = errno;
  if (pid > 0 && b->remembered)
    s->retry = bwrap_retry_keep (&f, steal_pointer (&argv));
  bwrap_argv_free (argv);
  close (pair[1]);
  close (errp[1]);
  if (pid < 0)
    {
      close (pair[0]);
      return cr_error_set (err, saved, "starting bwrap");
    }
  s->launcher = pid;
  /* Closing the channel is how the broker learns the host is gone, so the
   * host's end is the only copy outside the sandbox.  */
  if (fcntl (pair[0], F_SETFL, O_NONBLOCK) < 0)
    {
      close (pair[0]);
      return cr_error_set (err, errno,
                           "setting up the command's status channel");
    }
  s->channel = pair[0];
  /* The workspace's groups are looked at while bwrap and the broker start
   * on another CPU: only the result's note needs them, and the scan reads
   * the workspace itself, which the command changes only through its
   * layer (up to 20,000 entries: as long as the rest of a start).  */
  bwrap_groups_check (s, workspace);
  /* Layer pairs left in this state directory by a crucible that was
   * killed outright (and so could not remove its own): only those whose
   * maker is gone.  Nothing of this command depends on them, and the
   * listing grows with the directory (its probe and grant records too),
   * so it is made here, beside the start, and not before it.  */
  int recovered;
  statedir_recover (s->statedir, &recovered);
  return 0;
}
