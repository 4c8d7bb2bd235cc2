/* The Linux backend: trusted bubblewrap, the broker as PID 1: the backend,
 * its claims and preparation, and a session's events, stop, publication
 * and disposal.  Finding bwrap and the broker is in bwrap_locate.c, the
 * probe in bwrap_probe.c, the argument vector in bwrap_argv.c, starting
 * bwrap and one command's launch in bwrap_launch.c (sandbox/bwrap_int.h).  */
#include <config.h>

#include "sandbox/bwrap.h"

#include <dirent.h>
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
#include "sandbox/githooks.h"
#include "sandbox/groupscan.h"
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
  /* Domains reach the network through the host's proxy alone, over the
   * broker's net channel (doc/linux-confinement.md, "The network through
   * the host's proxy").  */
  out->support[SANDBOX_NETWORK_ALLOWLIST] = SANDBOX_ENFORCED;
  /* Looked up once: a claim asked of a const backend only remembers.  */
  const char *cgroup = bwrap_cgroup_parent ((struct bwrap_backend *) b);
  if (geteuid () != 0 || cgroup != NULL)
    out->support[SANDBOX_PROCESS_LIMIT] = SANDBOX_ENFORCED;
  /* Every lifecycle fact is journaled, keyed by the sandbox ID, as in
   * compatibility (compat_claims: observed, since a lost fact does not
   * stop the command).  */
  out->support[SANDBOX_AUDIT] = SANDBOX_OBSERVED;
  out->support[SANDBOX_USAGE] = SANDBOX_OBSERVED;
}

static const struct sandbox_backend_ops bwrap_ops;

const char *
bwrap_cgroup_parent (struct bwrap_backend *b)
{
  if (!b->cgroup_looked)
    {
      b->cgroup_parent = cgroup_pids_parent ();
      b->cgroup_looked = true;
    }
  return b->cgroup_parent;
}

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
  s->guard_roots[s->n_protect - 1]
      = (struct pubguard_root){ .path = rel, .why = why };
}

/* The hooks directory core.hooksPath names, when it lies inside the
 * workspace (sandbox/githooks.h), kept as .git is, read-only inside and
 * refused at publication.  */
static void
bwrap_roots_hooks (struct bwrap_session *s, const char *workspace,
                   const char *gitdir)
{
  char *rel = githooks_dir (workspace, gitdir);
  if (rel != NULL)
    bwrap_roots_add (s, rel, "a git hooks directory");
}

/* The users whose state directories a command in workspace reaches:
 * this one, and, for root in another user's workspace, its owner, whose
 * directory holds the command's layers then (bwrap_launch.c).  */
static size_t
bwrap_statedir_uids (const char *workspace, uid_t uids[2])
{
  struct stat st;
  size_t n = 0;

  uids[n++] = getuid ();
  if (geteuid () == 0 && stat (workspace, &st) == 0 && st.st_uid != 0
      && st.st_uid != uids[0])
    uids[n++] = st.st_uid;
  return n;
}

/* A state directory inside the workspace (the workspace is /, /var or
 * /var/tmp) is protected as .git is: read-only inside, refused at
 * publication.  A command could otherwise write records crucible trusts
 * there (a remembered probe, an MCP grant, a transaction to recover).  */
static void
bwrap_roots_statedir (struct bwrap_session *s, const char *workspace)
{
  uid_t uids[2];
  size_t n = bwrap_statedir_uids (workspace, uids);

  for (size_t i = 0; i < n; i++)
    {
      char *rel
          = statedir_below (s->backend->opt.state_parent, uids[i], workspace);
      if (rel != NULL)
        bwrap_roots_add (s, rel, "the sandbox state directory");
    }
}

int
bwrap_statedir_refuse (const struct bwrap_backend *b, const char *workspace,
                       struct cr_error **err)
{
  uid_t uids[2];
  size_t n = bwrap_statedir_uids (workspace, uids);

  for (size_t i = 0; i < n; i++)
    if (statedir_refuse_workspace (b->opt.state_parent, uids[i], workspace, err)
        < 0)
      return -1;
  return 0;
}

/* The configured roots as the broker and publication keep them: each by
 * its spelling, and, when a symlink on the way moves it elsewhere inside
 * the workspace, by where it resolves too (a write through the link
 * lands there).  Resolved once, before anything of the command runs.  */
void
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
  bwrap_roots_statedir (s, workspace);
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

int
bwrap_unavailable (const struct bwrap_backend *b, struct cr_error **err)
{
  return cr_error_set (err, 0, "the %s backend is unavailable: %s",
                       bwrap_ops.id, b->probe.reason);
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
  const char *cgroups = bwrap_cgroup_parent (b);
  if (cgroups != NULL)
    cgroup_pids_recover (cgroups);
  bwrap_probe_once (b);
  if (!b->probe.usable)
    return bwrap_unavailable (b, err);
  if (statedir_open (b->opt.state_parent, getuid (), getgid (), &statedir,
                     &statefd, err)
      < 0)
    return -1;
  struct bwrap_session *s = xcalloc (1, sizeof *s);
  s->base.ops = &bwrap_ops;
  s->backend = b;
  s->channel = -1;
  s->net_channel = -1;
  for (size_t i = 0; i < policy->n_ports && i < 16; i++)
    s->ports[s->n_ports++] = policy->ports[i];
  s->net = policy->n_domains > 0 || s->n_ports > 0;
  s->allow_local_binding = policy->allow_local_binding;
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

static int
bwrap_status_fd (const struct sandbox_session *base)
{
  return ((const struct bwrap_session *) base)->channel;
}

static int
bwrap_network_fd (const struct sandbox_session *base)
{
  return ((const struct bwrap_session *) base)->net_channel;
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
  /* Nothing was ever said and bwrap is gone: it could not make its
   * namespaces or start the broker, as a probe would have found.  An
   * answer from a record is then dropped, and the command started on
   * what a fresh probe passes (bwrap_relaunch).  */
  if (!s->heard && s->retry != NULL && s->scope_gone && bwrap_relaunch (s))
    return CHANNEL_NONE;
  bwrap_retry_free (s->retry);
  s->retry = NULL;
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
      /* The broker spoke: the launch did what a probe checks, and the
       * output's copy held for a relaunch must go, or its end would not
       * be seen.  */
      s->heard = true;
      bwrap_retry_free (s->retry);
      s->retry = NULL;
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

/* The answer for a publication that ran to rep (whose note out takes).  */
static void
bwrap_publish_answer (struct bwrap_session *s, struct publish_report *rep,
                      struct sandbox_publication *out)
{
  publish_report_answer (rep, out);
  s->published = !out->busy;
  if (s->groups_note != NULL)
    {
      char *both = out->note != NULL
                       ? xasprintf ("%s\n%s", s->groups_note, out->note)
                       : xstrdup (s->groups_note);
      free (out->note);
      out->note = both;
    }
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
                                 .guard = &s->guard,
                                 .defer_tidy = true };
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
  bwrap_publish_answer (s, &rep, out);
  publish_tidy (&s->tidy);
  s->tidy = steal_pointer (&rep.tidy);
  publish_report_clear (&rep);
  return 0;
}

/* Remove the transaction publish left (its backups free the blocks of the
 * files it replaced), as whoever published.  */
static void
bwrap_publish_tidy (struct sandbox_session *base)
{
  struct bwrap_session *s = (struct bwrap_session *) base;
  struct bwrap_ids ids;
  struct cr_error *err = NULL;

  if (s->tidy == NULL)
    return;
  if (bwrap_become_owner (s, &ids, &err) < 0)
    {
      /* Left for the next publication's recovery, which removes it.  */
      cr_error_free (err);
      free (s->tidy);
      s->tidy = NULL;
      return;
    }
  publish_tidy (&s->tidy);
  bwrap_become_self (&ids);
}

/* Whether the directory open at fd has no entry but "." and "..";
 * false when it cannot be read.  */
static bool
bwrap_dir_empty (int fd)
{
  cleanup_closedir DIR *d = fdopendir (fd);
  struct dirent *de;

  if (d == NULL)
    {
      close (fd);
      return false;
    }
  errno = 0;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      return false;
  return errno == 0;
}

/* Publication's answer for a command that wrote nothing, told without a
 * process of its own (the caller forks one for publish).  publish_run
 * opens the upper and the root, finds no entry in the upper and answers
 * "unchanged" before it takes the lock or reads the baseline
 * (sandbox/publish.c); so does this, with the same opens, as the same
 * identity: a sandbox run as the workspace's owner publishes as them, and
 * is left to publish.  Anything else, or anything that fails here, is
 * publish's to answer.  */
static int
bwrap_publish_inline (struct sandbox_session *base,
                      struct sandbox_publication *out)
{
  struct bwrap_session *s = (struct bwrap_session *) base;
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

  if (s->published || s->pair.upper == NULL || !s->baseline.taken || !s->done
      || !s->scope_gone || s->as_owner)
    return 0;
  cleanup_close int root = open (s->root, flags);
  int upper = open (s->pair.upper, flags);
  if (root < 0 || upper < 0)
    {
      if (upper >= 0)
        close (upper);
      return 0;
    }
  if (!bwrap_dir_empty (upper))
    return 0;
  struct publish_report rep = { .status = PUBLISH_NOTHING };
  bwrap_publish_answer (s, &rep, out);
  publish_report_clear (&rep);
  return 1;
}

/* What dispose and abandon both release, last.  */
static void
bwrap_session_free (struct bwrap_session *s)
{
  /* A publication in this process whose caller gave no turn to tidy.  */
  bwrap_publish_tidy (&s->base);
  bwrap_retry_free (s->retry);
  free (s->cgroup);
  free (s->groups_note);
  if (s->err_fd >= 0)
    close (s->err_fd);
  if (s->net_channel >= 0)
    close (s->net_channel);
  free (s->message);
  free (s->statedir);
  free (s->root);
  free (s->ahead_shell);
  free (s->ahead_key);
  bwrap_roots_clear (s);
  free (s);
}

/* A session prepared ahead and never given GO: close the channel (the
 * waiting broker leaves on that, having run nothing, and bwrap follows)
 * and reap bwrap within the launcher's budget.  Nothing of a command ran,
 * so nothing of its scope can be left: what is left is the layers and
 * the cgroup, which dispose removes next.  */
static void
bwrap_ahead_release (struct bwrap_session *s)
{
  if (s->channel >= 0)
    close (s->channel);
  s->channel = -1;
  bwrap_wait_bounded (s->launcher, BWRAP_LAUNCHER_MS, &s->ru);
  s->launcher = -1;
  s->done = true;
}

/* Release the session once the scope is confirmed empty: close the
 * channel (the broker exits, then bwrap), reap bwrap within a short
 * budget, discard the layers: whatever was not published is dropped.  */
/* dispose and dispose_leaving: leaving, a pair whose upper holds nothing
 * is left to the next start's recovery (statedir_pair_release).  */
static int
bwrap_release (struct sandbox_session *base, struct sandbox_usage *usage,
               bool leaving, struct cr_error **err)
{
  struct bwrap_session *s = (struct bwrap_session *) base;
  struct cr_error *rm_err = NULL;
  bool left;

  if (s->ahead && !s->go_sent && s->launcher > 0)
    bwrap_ahead_release (s);
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
  if (leaving)
    statedir_pair_release (&s->pair, &left, &rm_err);
  else
    statedir_pair_remove (&s->pair, &rm_err);
  cr_error_free (rm_err); /* a leftover pair is only disc space */
  if (s->cgroup != NULL)
    cgroup_pids_remove (s->cgroup); /* one left is recovered later */
  bwrap_session_free (s);
  return 0;
}

static int
bwrap_dispose (struct sandbox_session *base, struct sandbox_usage *usage,
               struct cr_error **err)
{
  return bwrap_release (base, usage, false, err);
}

static int
bwrap_dispose_leaving (struct sandbox_session *base,
                       struct sandbox_usage *usage, struct cr_error **err)
{
  return bwrap_release (base, usage, true, err);
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
  bwrap_session_free (s);
}

void
bwrap_groups_check (struct bwrap_session *s, const char *workspace)
{
  struct bwrap_backend *b = s->backend;
  if (b->groups_checked != NULL && strcmp (b->groups_checked, workspace) == 0)
    return;
  free (b->groups_checked);
  b->groups_checked = xstrdup (workspace);

  /* The sandbox maps the group of whoever bwrap runs as, and the groups
   * bwrap_userns mapped beside it; a user's own groups decide what they
   * could change unconfined.  */
  struct groupscan_who who = { .uid = geteuid (),
                               .mapped_gid = getegid (),
                               .mapped = s->userns.groups,
                               .n_mapped = s->userns.n_groups };
  cleanup_free gid_t *groups = NULL;
  int n = 0;
  if (s->as_owner)
    {
      struct passwd *pw = getpwuid (s->owner_uid);
      who.uid = s->owner_uid;
      who.mapped_gid = s->owner_gid;
      n = 64;
      groups = xcalloc ((size_t) n, sizeof *groups);
      if (pw == NULL
          || getgrouplist (pw->pw_name, s->owner_gid, groups, &n) < 0)
        n = 0;
    }
  else if (who.uid != 0 && (n = getgroups (0, NULL)) > 0)
    {
      groups = xcalloc ((size_t) n, sizeof *groups);
      n = getgroups (n, groups);
    }
  who.groups = groups;
  who.n_groups = n > 0 ? (size_t) n : 0;

  struct bwrap_ids ids;
  struct cr_error *err = NULL;
  struct groupscan_result r;
  if (bwrap_become_owner (s, &ids, &err) < 0)
    {
      cr_error_free (err);
      return;
    }
  cleanup_close int fd
      = open (workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  int scanned = fd >= 0 ? groupscan_run (fd, &who, &r) : -1;
  bwrap_become_self (&ids);
  if (scanned < 0)
    return;
  free (s->groups_note);
  s->groups_note = groupscan_note (&r, who.mapped_gid);
  groupscan_result_clear (&r);
}

void
bwrap_userns (struct bwrap_session *s, struct userns_pair *out)
{
  out->outer = out->inner = -1;
  s->userns.n_groups = 0;
  /* Root over another user's workspace: the helper that makes the
   * namespaces would have to become that user while holding a copy of
   * crucible's memory (credentials among it), open to their ptrace; their
   * sandbox keeps bwrap's one-group map.  */
  if (s->as_owner || !userns_plan_groups (&s->userns))
    return;
  struct cr_error *err = NULL;
  if (userns_make (&s->userns, out, &err) < 0)
    {
      /* bwrap's own namespace, as without the groups: the scan then
       * names what it cannot map.  */
      s->userns.n_groups = 0;
      cr_error_free (err);
    }
}

static void
bwrap_free (struct sandbox_backend *base)
{
  struct bwrap_backend *b = (struct bwrap_backend *) base;

  free (b->groups_checked);
  free (b->cgroup_parent);
  bwrap_location_clear (&b->bwrap);
  bwrap_argv_free (b->unreadable);
  bwrap_argv_free (b->unix_sockets);
  free (b->broker_path);
  /* The broker's digest reads its descriptor until it is done.  */
  if (b->broker_job != NULL)
    sha256_file_finish (b->broker_job, b->broker_sha256, NULL);
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
  .network_fd = bwrap_network_fd,
  .prepare_ahead = bwrap_ahead,
  .ahead_current = bwrap_ahead_current,
  .publish_inline = bwrap_publish_inline,
  .publish_tidy = bwrap_publish_tidy,
  .dispose_leaving = bwrap_dispose_leaving,
  .probe_starting = bwrap_probe_starting,
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
