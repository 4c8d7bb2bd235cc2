/* The Linux backend: trusted bubblewrap, the broker as PID 1: the backend,
 * its claims, preparation, launch and events.  Finding bwrap and the
 * broker is in bwrap_locate.c, the probe in bwrap_probe.c, the argument
 * vector in bwrap_argv.c (sandbox/bwrap_int.h).  */
#include <config.h>

#include "sandbox/bwrap.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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
#include "lib/xalloc.h"
#include "sandbox/cgroup.h"
#include "sandbox/channel.h"
#include "sandbox/publish.h"
#include "sandbox/pubguard.h"
#include "sandbox/seccomp.h"
#include "sandbox/statedir.h"
#include "sandbox/bwrap_int.h"

/* How the broker is named in messages about its channel.  */
#define BWRAP_WHO "the sandbox broker"

/* After the broker has gone, bwrap is given this long to follow.  */
#define BWRAP_LAUNCHER_MS 2000
/* The exit status a launch that never ran the workload is reported with.  */
#define BWRAP_NEVER_RAN 125
/* How much of bwrap's own message is quoted.  */
#define BWRAP_QUOTE_BYTES 512

/* The most of a .git file read for its "gitdir: " line: git writes one
 * short line; anything longer is not trusted to mean what it seems.  */
#define BWRAP_GITDIR_BYTES 4096

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
};

/* --- starting bwrap --------------------------------------------------------
 */

/* The most descriptors a launch hands bwrap.  */
#define BWRAP_MAX_FDS (BWRAP_FD_EXTRA + BWRAP_MAX_SOCKETS)

/* Put each descriptor at its number.  Everything is first moved above the
 * targets, so that no dup2 overwrites a source still to be moved.  */
static int
bwrap_child_fds (const struct bwrap_fds *f)
{
  int src[BWRAP_MAX_FDS]
      = { f->in,      f->out, f->err,    f->status, f->broker,
          f->seccomp, f->env, f->output, f->self,   f->workload_seccomp };
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
   * "0" names the writer.  */
  if (f->cgroup_procs >= 0 && write (f->cgroup_procs, "0", 1) != 1)
    _exit (125);
  /* crucible run by root over another user's workspace: the sandbox is
   * that user's (DESIGN.md), so bwrap starts as them, with no
   * supplementary group of root's and no way back.  */
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

/* Milliseconds on the monotonic clock.  */
long long
bwrap_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for pid up to ms; SIGKILL it after that.  Returns the wait status,
 * or -1 (the child was killed at the deadline, then reaped).  */
int
bwrap_wait_bounded (pid_t pid, int ms, struct rusage *ru)
{
  long long end = bwrap_now_ms () + ms;
  int status;

  for (;;)
    {
      pid_t r = wait4 (pid, &status, WNOHANG, ru);
      if (r == pid)
        return status;
      if (r < 0 && errno != EINTR)
        return -1;
      if (bwrap_now_ms () >= end)
        break;
      struct timespec tick = { 0, 1000L * 1000 };
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

/* --- claims and preparation ------------------------------------------------
 */

/* What this backend holds, each enforced row exercised by a test under
 * tests/security/ (doc/linux-confinement.md lists which).  The process
 * cap is a pids cgroup where crucible can make one, and RLIMIT_NPROC,
 * which does not bind uid 0: as root it is claimed only with the cgroup.
 * Looking for the cgroup reads /proc and starts nothing.  */
static void
bwrap_claims (const struct sandbox_backend *b, struct sandbox_claims *out)
{
  static const enum sandbox_feature enforced[] = {
    SANDBOX_FILESYSTEM,
    SANDBOX_NETWORK_DENY,
    SANDBOX_DESCRIPTOR_ISOLATION,
    SANDBOX_PROCESS_ISOLATION,
    SANDBOX_KERNEL_SURFACE,
    SANDBOX_PRIVILEGE_ISOLATION,
    SANDBOX_CPU_LIMIT,
    SANDBOX_MEMORY_LIMIT,
    SANDBOX_OPEN_FILE_LIMIT,
    SANDBOX_COMMAND_TIME_LIMIT,
    SANDBOX_OUTPUT_LIMIT,
    SANDBOX_CONCURRENCY_LIMIT,
  };

  (void) b;
  memset (out, 0, sizeof *out);
  for (size_t i = 0; i < sizeof enforced / sizeof *enforced; i++)
    out->support[enforced[i]] = SANDBOX_ENFORCED;
  cleanup_free char *cgroup = cgroup_pids_parent ();
  if (geteuid () != 0 || cgroup != NULL)
    out->support[SANDBOX_PROCESS_LIMIT] = SANDBOX_ENFORCED;
  out->support[SANDBOX_USAGE] = SANDBOX_OBSERVED;
}

static const struct sandbox_backend_ops bwrap_ops;

/* Prepare a session: refuse what the claims do not hold, by name, then
 * make sure the backend is usable and the state directory is sound, all
 * before any session exists.  */
/* Keep the policy's configured roots (it is the caller's only until
 * prepare returns): readOnly first, then protected.  */
static void
bwrap_roots_copy (struct bwrap_session *s, const struct sandbox_policy *policy)
{
  s->n_cfg_read_only = policy->n_read_only;
  s->n_cfg = policy->n_read_only + policy->n_protected;
  s->cfg_roots = xcalloc (s->n_cfg + 1, sizeof *s->cfg_roots);
  for (size_t i = 0; i < policy->n_read_only; i++)
    s->cfg_roots[i] = xstrdup (policy->read_only[i]);
  for (size_t i = 0; i < policy->n_protected; i++)
    s->cfg_roots[policy->n_read_only + i]
        = xstrdup (policy->protected_paths[i]);
}

/* Add rel (owned) to the session's protected roots, for why.  */
static void
bwrap_roots_add (struct bwrap_session *s, char *rel, const char *why)
{
  s->protect = xrealloc (s->protect, (s->n_protect + 2) * sizeof *s->protect);
  s->protect[s->n_protect++] = rel;
  s->protect[s->n_protect] = NULL;
  s->guard_roots
      = xrealloc (s->guard_roots, s->n_protect * sizeof *s->guard_roots);
  s->guard_roots[s->n_protect - 1].why = why;
}

/* The most of a git configuration file read for core.hooksPath; a larger
 * one is not git's own writing and is not read.  */
#define BWRAP_GIT_CONFIG_BYTES (1 << 20)

/* core.hooksPath as set in the git configuration file at path, or NULL
 * (not set, absent, not a regular file, too large).  */
static char *
bwrap_hooks_path_in (const char *path)
{
  cleanup_close int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;

  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
      || st.st_size > BWRAP_GIT_CONFIG_BYTES)
    return NULL;
  cleanup_free char *text = xmalloc ((size_t) st.st_size + 1);
  size_t len = 0;
  ssize_t n;
  while (len < (size_t) st.st_size
         && (n = read (fd, text + len, (size_t) st.st_size - len)) > 0)
    len += (size_t) n;
  return pubguard_git_config_value (text, len, "core", "hookspath");
}

/* core.hooksPath as git reads it for the workspace's repository: the
 * person's global files, then the repository's own, the last one set
 * winning.  NULL when none sets it.  */
static char *
bwrap_hooks_path (const char *workspace, const char *gitdir)
{
  const char *home = getenv ("HOME"), *xdg = getenv ("XDG_CONFIG_HOME");
  char *files[3] = { NULL, NULL, NULL }, *value = NULL;

  if (xdg != NULL && xdg[0] == '/')
    files[0] = xasprintf ("%s/git/config", xdg);
  else if (home != NULL)
    files[0] = xasprintf ("%s/.config/git/config", home);
  if (home != NULL)
    files[1] = xasprintf ("%s/.gitconfig", home);
  files[2]
      = xasprintf ("%s/%s/config", workspace, gitdir != NULL ? gitdir : ".git");
  for (size_t i = 0; i < 3; i++)
    {
      char *v = files[i] != NULL ? bwrap_hooks_path_in (files[i]) : NULL;
      if (v != NULL)
        {
          free (value);
          value = v;
        }
      free (files[i]);
    }
  return value;
}

/* path with "", "." components and trailing slashes dropped, or NULL when
 * it has a ".." (only realpath may say where that ends).  */
static char *
bwrap_plain_rel (const char *path)
{
  cleanup_free char *copy = xstrdup (path);
  struct buf b = BUF_INIT;
  char *save = NULL;

  for (char *c = strtok_r (copy, "/", &save); c != NULL;
       c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        {
          buf_free (&b);
          return NULL;
        }
      if (b.len > 0)
        buf_putc (&b, '/');
      buf_append (&b, c, strlen (c));
    }
  if (b.len == 0)
    return NULL;
  buf_append (&b, "", 0);
  return buf_steal (&b, NULL);
}

/* The hooks directory core.hooksPath names, when it lies inside the
 * workspace: git runs what is there at the person's next commit,
 * checkout or push (husky's .husky, a .githooks), so it is kept as .git
 * is, read-only inside and refused at publication.  Relative values are
 * from the top of the work tree, taken to be the workspace; "~/" is the
 * home directory.  include.path is not followed.  */
static void
bwrap_roots_hooks (struct bwrap_session *s, const char *workspace,
                   const char *gitdir)
{
  static const char why[] = "a git hooks directory";
  cleanup_free char *value = bwrap_hooks_path (workspace, gitdir);
  const char *home = getenv ("HOME");
  size_t n = strlen (workspace);

  if (value == NULL || value[0] == '\0')
    return;
  cleanup_free char *full = value[0] == '/' ? xstrdup (value)
                            : strncmp (value, "~/", 2) == 0 && home != NULL
                                ? xasprintf ("%s/%s", home, value + 2)
                                : xasprintf ("%s/%s", workspace, value);
  cleanup_free char *real = realpath (full, NULL);
  if (real != NULL)
    {
      if (strncmp (real, workspace, n) == 0 && real[n] == '/'
          && real[n + 1] != '\0')
        bwrap_roots_add (s, xstrdup (real + n + 1), why);
      return;
    }
  /* Not there yet: the spelling, when it is plainly inside.  */
  if (strncmp (full, workspace, n) == 0 && full[n] == '/')
    {
      char *rel = bwrap_plain_rel (full + n + 1);
      if (rel != NULL)
        bwrap_roots_add (s, rel, why);
    }
}

/* The configured roots as the broker and publication keep them: each by
 * its spelling, and, when a symlink on the way moves it elsewhere inside
 * the workspace, by where it resolves too (a write through the link
 * lands there).  Resolved once, before anything of the command runs.  */
static void
bwrap_roots_resolve (struct bwrap_session *s, const char *workspace,
                     const char *gitdir)
{
  size_t n = strlen (workspace);

  for (size_t i = 0; i < s->n_cfg; i++)
    {
      const char *why = i < s->n_cfg_read_only ? "read-only" : "protected";
      cleanup_free char *full = xasprintf ("%s/%s", workspace, s->cfg_roots[i]);
      cleanup_free char *real = realpath (full, NULL);
      bwrap_roots_add (s, xstrdup (s->cfg_roots[i]), why);
      if (real != NULL && strncmp (real, workspace, n) == 0 && real[n] == '/'
          && strcmp (real + n + 1, s->cfg_roots[i]) != 0)
        bwrap_roots_add (s, xstrdup (real + n + 1), why);
    }
  bwrap_roots_hooks (s, workspace, gitdir);
  for (size_t i = 0; i < s->n_protect; i++)
    s->guard_roots[i].path = s->protect[i];
  s->guard.roots = s->guard_roots;
  s->guard.n_roots = s->n_protect;
  s->guard.git_templates = PUBGUARD_GIT_TEMPLATES;
}

/* Let go of the session's roots.  */
static void
bwrap_roots_clear (struct bwrap_session *s)
{
  bwrap_argv_free (s->cfg_roots);
  bwrap_argv_free (s->protect);
  free (s->guard_roots);
}

/* A process cap above the broker's own is refused by the feature's name.  */
static int
bwrap_refuse_processes (unsigned long long n, struct cr_error **err)
{
  cr_error_set (err, 0,
                "process_limit: %llu processes is more than the %d a "
                "sandbox allows",
                n, BWRAP_DEFAULT_PROCESSES);
  if (err != NULL && *err != NULL)
    (*err)->refused_feature = SANDBOX_PROCESS_LIMIT;
  return -1;
}

static int
bwrap_prepare (struct sandbox_backend *base,
               const struct sandbox_policy *policy,
               struct sandbox_session **out, struct cr_error **err)
{
  struct bwrap_backend *b = (struct bwrap_backend *) base;
  struct sandbox_claims claims;
  char *statedir = NULL;
  cleanup_close int statefd = -1;

  bwrap_claims (base, &claims);
  if (sandbox_check_policy (&claims, policy, bwrap_ops.id, err) < 0)
    return -1;
  if (b->opt.processes > BWRAP_DEFAULT_PROCESSES)
    return bwrap_refuse_processes (b->opt.processes, err);
  if (policy->processes > BWRAP_DEFAULT_PROCESSES)
    return bwrap_refuse_processes (policy->processes, err);
  if (b->opt.n_unix_sockets > BWRAP_MAX_SOCKETS)
    return cr_error_set (err, 0,
                         "sandbox.network.allowUnixSockets: more than %d "
                         "sockets",
                         BWRAP_MAX_SOCKETS);
  for (size_t i = 0; i < b->opt.n_unreadable; i++)
    {
      const char *p = b->unreadable[i], *why = NULL;
      if (p[0] != '/' && (why = unreadable_check (p)) != NULL)
        return cr_error_set (err, 0, "sandbox.filesystem.unreadable: '%s' %s",
                             p, why);
    }
  /* Cgroups left by a crucible that was killed: only those whose maker
   * is gone, and only when empty.  */
  cleanup_free char *cgroups = cgroup_pids_parent ();
  if (cgroups != NULL)
    cgroup_pids_recover (cgroups);
  bwrap_probe_once (b);
  if (!b->probe.usable)
    return cr_error_set (err, 0, "the %s backend is unavailable: %s",
                         bwrap_ops.id, b->probe.reason);
  if (statedir_open (b->opt.state_parent, getuid (), getgid (), &statedir,
                     &statefd, err)
      < 0)
    return -1;
  /* Layer pairs left by a crucible of this user that was killed outright
   * (and so could not remove its own): only those whose maker is gone.  */
  int recovered;
  statedir_recover (statedir, &recovered);
  struct bwrap_session *s = xcalloc (1, sizeof *s);
  s->base.ops = &bwrap_ops;
  s->backend = b;
  s->channel = -1;
  s->err_fd = -1;
  s->statedir = statedir;
  s->processes = b->opt.processes;
  if (policy->processes != 0 && policy->processes < s->processes)
    s->processes = (unsigned long) policy->processes;
  s->memory_bytes = b->opt.memory_bytes;
  if (policy->memory_bytes != 0)
    s->memory_bytes = policy->memory_bytes;
  bwrap_roots_copy (s, policy);
  *out = &s->base;
  return 0;
}

/* --- one command -----------------------------------------------------------
 */

/* A memfd holding the workload's environment for the broker's --env-fd.  */
static int
bwrap_env_fd (char *const *envp, struct cr_error **err)
{
  size_t len;
  cleanup_free char *block = bwrap_env_block (envp, &len);
  cleanup_close int fd = memfd_create ("crucible-env", MFD_CLOEXEC);

  if (fd < 0)
    return cr_error_set (err, errno, "making the command's environment");
  for (size_t done = 0; done < len;)
    {
      ssize_t n = write (fd, block + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return cr_error_set (err, errno, "writing the command's environment");
      done += (size_t) n;
    }
  if (lseek (fd, 0, SEEK_SET) < 0)
    return cr_error_set (err, errno, "rewinding the command's environment");
  return steal_fd (&fd);
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
  cleanup_free char *parent = cgroup_pids_parent ();

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
  int recovered;
  statedir_recover (statedir, &recovered);
  free (s->statedir);
  s->statedir = statedir;
  return 0;
}

/* Effective identity saved while root acts as a workspace's owner.  */
struct bwrap_ids
{
  bool switched;
  gid_t groups[64];
  int n_groups;
};

/* Act as the workspace's owner (effective uid, gid and groups) for what
 * touches their state directory and workspace: publication's baseline,
 * lock, counts and journal are then theirs, as their own crucible would
 * make them, and what is published is written as them.  crucible is one
 * thread, so nothing else runs under the borrowed identity.  */
static int
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
static void
bwrap_become_self (struct bwrap_ids *saved)
{
  if (!saved->switched)
    return;
  if (seteuid (0) < 0 || setegid (0) < 0
      || setgroups ((size_t) saved->n_groups, saved->groups) < 0)
    abort ();
  saved->switched = false;
}

static int bwrap_launch (struct bwrap_session *s,
                         const struct sandbox_command *cmd,
                         const char *workspace, const char *gitdir,
                         const struct bwrap_grants *g, struct cr_error **err);

/* Start bwrap, which starts the broker, which starts the workload.  */
static int
bwrap_start (struct sandbox_session *base, const struct sandbox_command *cmd,
             struct cr_error **err)
{
  struct bwrap_session *s = (struct bwrap_session *) base;
  struct bwrap_backend *b = s->backend;
  cleanup_free char *workspace = realpath (cmd->cwd, NULL);
  cleanup_free char *gitdir = NULL;
  struct bwrap_grants g = { 0 };
  int rc;

  if (workspace == NULL)
    return cr_error_set (err, errno, "resolving the workspace root");
  if (bwrap_gitdir (workspace, &gitdir, err) < 0)
    return -1;
  if (s->protect == NULL)
    bwrap_roots_resolve (s, workspace, gitdir);
  if (bwrap_resolve_patterns (b, workspace, &g, err) < 0
      || bwrap_resolve_sockets (b, workspace, &g, err) < 0)
    {
      bwrap_grants_clear (&g);
      return -1;
    }
  rc = bwrap_launch (s, cmd, workspace, gitdir, &g, err);
  bwrap_grants_clear (&g);
  return rc;
}

/* The launch itself, once the grants are resolved.  */
static int
bwrap_launch (struct bwrap_session *s, const struct sandbox_command *cmd,
              const char *workspace, const char *gitdir,
              const struct bwrap_grants *g, struct cr_error **err)
{
  struct bwrap_backend *b = s->backend;
  cleanup_close int devnull = -1, seccomp = -1, env = -1, procs = -1;
  cleanup_close int workload_seccomp = -1;
  int pair[2], errp[2];

  if (bwrap_owner (s, workspace, err) < 0)
    return -1;
  /* The baseline comes before the layers, under the publication lock, so
   * no baseline is taken halfway through another command's publication;
   * it also recovers what an earlier process abandoned.  */
  struct bwrap_ids ids;
  if (bwrap_become_owner (s, &ids, err) < 0)
    return -1;
  int taken = publish_baseline_take (
      s->statedir, workspace, PUBLISH_WAIT_PREPARE_MS, &s->baseline, err);
  bwrap_become_self (&ids);
  if (taken < 0)
    return -1;
  s->root = xstrdup (workspace);
  if (statedir_pair_create (s->statedir, workspace, &s->pair, err) < 0)
    return -1;
  if (bwrap_cgroup (s, &procs, err) < 0)
    return -1;
  devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0)
    return cr_error_set (err, errno,
                         "opening /dev/null for the command's input");
  if ((seccomp = sandbox_seccomp_fd (b->opt.n_unix_sockets > 0, err)) < 0
      || (workload_seccomp = sandbox_seccomp_workload_fd (err)) < 0
      || (env = bwrap_env_fd (cmd->envp, err)) < 0)
    return -1;
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
                             .shell = cmd->shell,
                             .line = cmd->line,
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
                             .n_socket_binds = g->n_binds };
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
                         .output = cmd->output_fd,
                         .self = b->bwrap.fd,
                         .workload_seccomp = workload_seccomp,
                         .extra = g->fds,
                         .n_extra = g->n_binds,
                         .cgroup_procs = procs,
                         .uid = s->owner_uid,
                         .gid = s->owner_gid,
                         .as_owner = s->as_owner };
  pid_t pid = fork ();
  if (pid == 0)
    bwrap_child_exec (&f, argv);
  int saved = errno;
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
  return 0;
}

static int
bwrap_status_fd (const struct sandbox_session *base)
{
  return ((const struct bwrap_session *) base)->channel;
}

/* What is waiting in the error pipe, quoted; NULL for nothing.  */
static char *
bwrap_read_message (int fd)
{
  char text[BWRAP_QUOTE_BYTES + 1];
  ssize_t n = fd < 0 ? -1 : read (fd, text, sizeof text - 1);

  if (n <= 0)
    return NULL;
  text[n] = '\0';
  return bwrap_quote (text);
}

const char *
bwrap_session_message (const struct sandbox_session *base)
{
  return ((const struct bwrap_session *) base)->message;
}

/* Reap bwrap and decide whether the scope is gone for certain.  What the
 * broker says on the channel is not that proof: bwrap exits only after
 * its child, the broker, and the broker as PID 1 takes every process of
 * the namespace with it, so a launcher that exited on its own (rather
 * than being killed here at the deadline) means nothing of the command
 * runs any more.  Where a pids cgroup counts the scope, it must be empty
 * too.  */
static void
bwrap_reap_launcher (struct bwrap_session *s)
{
  int status;

  if (s->launcher <= 0)
    return;
  status = bwrap_wait_bounded (s->launcher, BWRAP_LAUNCHER_MS, &s->ru);
  s->ru_known = true;
  s->launcher = -1;
  s->scope_gone = status != -1 && WIFEXITED (status)
                  && (s->cgroup == NULL || cgroup_pids_empty (s->cgroup));
}

/* The broker's side ended without DONE.  Once bwrap has exited, the PID
 * namespace went with its init, so nothing of the scope is left: say so,
 * after a FAILED when nothing was ever reported (bwrap refused to start,
 * and its message is in the command's output).  */
static int
bwrap_channel_ended (struct bwrap_session *s, struct sandbox_event *ev,
                     struct cr_error **err)
{
  bwrap_reap_launcher (s);
  /* After STARTED the workload may have run, and it could have written
   * anything into the broker's stderr: an end with no EXITED then reads
   * as a kill, never as a refusal of something that did not run.  */
  if (!s->exited_seen && s->started)
    {
      s->exited_seen = true;
      ev->kind = SANDBOX_EVENT_EXITED;
      ev->wait_status = SIGKILL;
      return 0;
    }
  if (!s->exited_seen)
    {
      if (s->message == NULL)
        s->message = bwrap_read_message (s->err_fd);
      s->exited_seen = true;
      s->owe_exit = true;
      ev->kind = SANDBOX_EVENT_FAILED;
      ev->error = 0;
      ev->failure = SANDBOX_FAILED_SETUP;
      ev->message = s->message;
      return 0;
    }
  if (s->launcher == 0)
    return cr_error_set (err, 0, "the command was never started");
  s->done = true;
  ev->kind = SANDBOX_EVENT_DONE;
  return 0;
}

/* Whether ev is one the broker never sends at this point of a launch, so
 * that only something other than the broker could have written it: a
 * setup or fork failure after the workload started, a second ending, an
 * ending before the start.  Such a record is ignored; the scope's real
 * end still comes, as DONE or as the end of the channel.  */
static bool
bwrap_event_impossible (const struct bwrap_session *s,
                        const struct sandbox_event *ev)
{
  switch (ev->kind)
    {
    case SANDBOX_EVENT_FAILED:
      return s->exited_seen
             || s->started != (ev->failure == SANDBOX_FAILED_EXEC);
    case SANDBOX_EVENT_EXITED:
      return !s->started || s->exited_seen;
    case SANDBOX_EVENT_DONE:
      return !s->exited_seen;
    default:
      return false;
    }
}

/* The broker says the scope is empty: end the channel (the broker exits
 * on that) and reap bwrap, which is what publication believes.  shutdown,
 * not close: the loop still watches the descriptor.  */
static void
bwrap_confirm_gone (struct bwrap_session *s)
{
  if (s->channel >= 0)
    shutdown (s->channel, SHUT_RDWR);
  bwrap_reap_launcher (s);
}

/* Read the next message from the broker.  */
static int
bwrap_next_event (struct sandbox_session *base, struct sandbox_event *ev,
                  struct cr_error **err)
{
  struct bwrap_session *s = (struct bwrap_session *) base;
  struct broker_msg msg;

  memset (ev, 0, sizeof *ev);
  if (s->done)
    return 0;
  /* A launch that failed before the workload ran has no wait status of
   * its own; like the compatibility backend's, its ending is reported as
   * an exit with 125 (the command never ran) after the FAILED, so a
   * supervisor sees every command end the same way.  */
  if (s->owe_exit)
    {
      s->owe_exit = false;
      ev->kind = SANDBOX_EVENT_EXITED;
      ev->wait_status = BWRAP_NEVER_RAN << 8;
      return 0;
    }
  for (;;)
    {
      int r = channel_read (s->channel, BWRAP_WHO, &msg, err);
      if (r < 0 || r == CHANNEL_NONE)
        return r;
      if (r == CHANNEL_ENDED)
        return bwrap_channel_ended (s, ev, err);
      if (msg.type == BROKER_MSG_STARTED)
        s->started = true;
      r = channel_event (&msg, BWRAP_WHO, ev, err);
      if (r < 0)
        return -1;
      if (r == 0 || bwrap_event_impossible (s, ev))
        continue;
      /* The broker said what failed on its stderr before it sent this;
       * only before the workload started is that pipe the broker's
       * alone, so only then is it quoted.  */
      if (ev->kind == SANDBOX_EVENT_FAILED && !s->started)
        {
          if (s->message == NULL)
            s->message = bwrap_read_message (s->err_fd);
          ev->message = s->message;
        }
      if (ev->kind == SANDBOX_EVENT_DONE)
        bwrap_confirm_gone (s);
      /* An exec failure is followed by EXITED 127; a setup or fork failure
       * by nothing, so it stands for the ending.  */
      if (ev->kind == SANDBOX_EVENT_EXITED
          || (ev->kind == SANDBOX_EVENT_FAILED
              && ev->failure != SANDBOX_FAILED_EXEC))
        s->exited_seen = true;
      s->owe_exit = ev->kind == SANDBOX_EVENT_FAILED
                    && ev->failure != SANDBOX_FAILED_EXEC;
      s->done = ev->kind == SANDBOX_EVENT_DONE;
      return 0;
    }
}

/* Ask the broker to end the scope; DONE follows on the channel.  */
static int
bwrap_stop (struct sandbox_session *base, int signo, struct cr_error **err)
{
  struct bwrap_session *s = (struct bwrap_session *) base;

  if (s->done)
    return 0;
  if (channel_send_stop (s->channel, signo) < 0)
    {
      /* A broker already gone reads as the end of the channel next.  */
      if (errno == EPIPE || errno == ECONNRESET)
        return 0;
      return cr_error_set (err, errno, "asking the sandbox broker to stop");
    }
  return 0;
}

/* Publish what the command wrote (sandbox/publish), once and only once
 * the scope is confirmed empty: no process of the command can write into
 * the upper while it is read.  */
static int
bwrap_publish (struct sandbox_session *base, const char *call_id,
               struct sandbox_publication *out, struct cr_error **err)
{
  struct bwrap_session *s = (struct bwrap_session *) base;
  struct publish_report rep;

  if (s->published || s->pair.upper == NULL || !s->baseline.taken)
    return 0;
  if (!s->done || !s->scope_gone)
    return cr_error_set (err, 0,
                         "the command's process scope has not been "
                         "confirmed empty");
  struct publish_request req = { .statedir = s->statedir,
                                 .root = s->root,
                                 .upper = s->pair.upper,
                                 .call_id = call_id,
                                 .baseline = &s->baseline,
                                 .guard = &s->guard };
  struct bwrap_ids ids;
  if (bwrap_become_owner (s, &ids, err) < 0)
    return -1;
  int ran = publish_run (&req, &rep, err);
  bwrap_become_self (&ids);
  if (ran < 0)
    {
      s->published = true;
      return -1;
    }
  out->busy = rep.status == PUBLISH_BUSY;
  s->published = !out->busy;
  out->published_nothing = rep.status != PUBLISH_DONE
                           && rep.status != PUBLISH_NOTHING && !out->busy;
  static const char *const words[] = {
    [PUBLISH_NOTHING] = "unchanged",
    [PUBLISH_DONE] = "published",
    [PUBLISH_BUSY] = "busy",
    [PUBLISH_REFUSED_COUNT] = "refused",
    [PUBLISH_REFUSED_CHANGED] = "refused",
    [PUBLISH_ROLLED_BACK] = "rolled_back",
    [PUBLISH_QUARANTINED] = "quarantined",
  };
  out->outcome = words[rep.status];
  out->paths = rep.published;
  out->bytes = rep.bytes;
  out->note = rep.note;
  rep.note = NULL;
  publish_report_clear (&rep);
  return 0;
}

/* Release the session once the scope is confirmed empty: close the
 * channel (the broker exits, then bwrap), reap bwrap within a short
 * budget, discard the layers: whatever was not published is dropped.  */
static int
bwrap_dispose (struct sandbox_session *base, struct sandbox_usage *usage,
               struct cr_error **err)
{
  struct bwrap_session *s = (struct bwrap_session *) base;
  struct cr_error *rm_err = NULL;

  if (s->launcher > 0 && !s->done)
    return cr_error_set (
        err, 0, "the command's process scope has not been confirmed empty");
  if (s->channel >= 0)
    close (s->channel);
  s->channel = -1;
  if (s->launcher > 0)
    {
      bwrap_wait_bounded (s->launcher, BWRAP_LAUNCHER_MS, &s->ru);
      s->ru_known = true;
      s->launcher = -1;
    }
  if (usage != NULL && s->ru_known)
    {
      usage->known = true;
      usage->cpu_user_ms
          = s->ru.ru_utime.tv_sec * 1000 + s->ru.ru_utime.tv_usec / 1000;
      usage->cpu_system_ms
          = s->ru.ru_stime.tv_sec * 1000 + s->ru.ru_stime.tv_usec / 1000;
      usage->max_rss_kib = s->ru.ru_maxrss;
    }
  statedir_pair_remove (&s->pair, &rm_err);
  cr_error_free (rm_err); /* a leftover pair is only disc space */
  if (s->cgroup != NULL)
    cgroup_pids_remove (s->cgroup); /* one left is recovered later */
  free (s->cgroup);
  if (s->err_fd >= 0)
    close (s->err_fd);
  free (s->message);
  free (s->statedir);
  free (s->root);
  bwrap_roots_clear (s);
  free (s);
  return 0;
}

/* crucible is leaving without a confirmation: close the channel (the
 * broker ends the scope on seeing that) and kill bwrap, whose death takes
 * the PID namespace with it (--die-with-parent).  The layers stay in the
 * state directory.  */
static void
bwrap_abandon (struct sandbox_session *base)
{
  struct bwrap_session *s = (struct bwrap_session *) base;

  if (s->channel >= 0)
    close (s->channel);
  if (s->launcher > 0)
    kill (s->launcher, SIGKILL);
  free (s->pair.dir);
  free (s->pair.upper);
  free (s->pair.work);
  if (s->cgroup != NULL)
    rmdir (s->cgroup); /* fails while bwrap's scope is still in it */
  free (s->cgroup);
  if (s->err_fd >= 0)
    close (s->err_fd);
  free (s->message);
  free (s->statedir);
  free (s->root);
  bwrap_roots_clear (s);
  free (s);
}

static void
bwrap_free (struct sandbox_backend *base)
{
  struct bwrap_backend *b = (struct bwrap_backend *) base;

  bwrap_location_clear (&b->bwrap);
  bwrap_argv_free (b->unreadable);
  bwrap_argv_free (b->unix_sockets);
  free (b->broker_path);
  if (b->broker_fd >= 0)
    close (b->broker_fd);
  sandbox_probe_clear (&b->probe);
  free (b);
}

static const struct sandbox_backend_ops bwrap_ops = {
  .id = BWRAP_BACKEND_ID,
  .claims = bwrap_claims,
  .probe = bwrap_probe,
  .prepare = bwrap_prepare,
  .start = bwrap_start,
  .status_fd = bwrap_status_fd,
  .next_event = bwrap_next_event,
  .stop = bwrap_stop,
  .dispose = bwrap_dispose,
  .abandon = bwrap_abandon,
  .publish = bwrap_publish,
  .free = bwrap_free,
};

/* A NULL-terminated copy of n strings.  */
static char **
bwrap_copy_list (const char *const *list, size_t n)
{
  char **copy = xcalloc (n + 1, sizeof *copy);

  for (size_t i = 0; i < n; i++)
    copy[i] = xstrdup (list[i]);
  return copy;
}

struct sandbox_backend *
bwrap_backend_new (const struct bwrap_options *opt)
{
  struct bwrap_backend *b = xcalloc (1, sizeof *b);

  b->base.ops = &bwrap_ops;
  if (opt != NULL)
    b->opt = *opt;
  if (b->opt.cpu_seconds == 0)
    b->opt.cpu_seconds = BWRAP_DEFAULT_CPU_SECONDS;
  if (b->opt.open_files == 0)
    b->opt.open_files = BWRAP_DEFAULT_OPEN_FILES;
  if (b->opt.processes == 0)
    b->opt.processes = BWRAP_DEFAULT_PROCESSES;
  if (b->opt.state_parent == NULL)
    b->opt.state_parent = STATEDIR_PARENT;
  b->unreadable = bwrap_copy_list (b->opt.unreadable, b->opt.n_unreadable);
  b->unix_sockets
      = bwrap_copy_list (b->opt.unix_sockets, b->opt.n_unix_sockets);
  b->opt.unreadable = NULL;
  b->opt.unix_sockets = NULL;
  b->bwrap.fd = -1;
  b->broker_fd = -1;
  return &b->base;
}

void
bwrap_backend_settings (const struct sandbox_backend *base,
                        struct bwrap_options *out)
{
  const struct bwrap_backend *b = (const struct bwrap_backend *) base;
  *out = b->opt;
  out->unreadable = (const char *const *) b->unreadable;
  out->unix_sockets = (const char *const *) b->unix_sockets;
}
