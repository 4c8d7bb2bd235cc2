/* The Linux backend's argument vector for bwrap, and the environment the
 * workload gets (sandbox/bwrap.h, sandbox/bwrap_int.h).  */
#include <config.h>

#include "sandbox/bwrap.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/xalloc.h"
#include "sandbox/pubguard.h"
#include "sandbox/bwrap_int.h"

/* The read-only runtime: exactly these, when present, and never /run,
 * /var/run or a home directory.  /etc/alternatives is Debian's indirection
 * for awk, editor and the like, all symlinks into /usr.  */
static const char *const bwrap_runtime_top[]
    = { "/bin", "/lib", "/lib64", "/lib32", "/sbin" };
static const char *const bwrap_runtime_etc[]
    = { "/etc/ld.so.cache",   "/etc/passwd",    "/etc/group",
        "/etc/nsswitch.conf", "/etc/ssl/certs", "/etc/alternatives" };

/* Inside each writable root, at its top, what stays read-only: .git, and
 * the recognized agent configuration (sandbox/pubguard.c); publication
 * refuses changes to them at any depth.  */
static const char *const bwrap_protected_git = ".git";

/* --- the argument vector ---------------------------------------------------
 */

/* Append copies of NULL-terminated strings.  */
void
bwrap_args (struct bwrap_argv *a, ...)
{
  va_list ap;
  const char *s;

  va_start (ap, a);
  while ((s = va_arg (ap, const char *)) != NULL)
    {
      if (a->n + 2 > a->cap)
        {
          a->cap = a->cap == 0 ? 64 : a->cap * 2;
          a->v = xrealloc (a->v, a->cap * sizeof *a->v);
        }
      a->v[a->n++] = xstrdup (s);
      a->v[a->n] = NULL;
    }
  va_end (ap);
}

/* Append a number option.  */
static void
bwrap_arg_num (struct bwrap_argv *a, const char *opt, unsigned long value)
{
  char text[32];

  if (value == 0)
    return;
  snprintf (text, sizeof text, "%lu", value);
  bwrap_args (a, opt, text, (char *) NULL);
}

/* The namespaces, the session, the capabilities the broker needs for its
 * mounts and nothing more.  --cap-drop ALL comes first: bwrap started by
 * real root otherwise hands on every capability.  --disable-userns needs
 * --unshare-user spelled out.  --clearenv: bwrap runs from an empty
 * environment anyway; this keeps it so whatever bwrap itself sets.  */
void
bwrap_args_namespaces (struct bwrap_argv *a)
{
  bwrap_args (a, "--unshare-all", "--unshare-user", "--disable-userns",
              "--new-session", "--die-with-parent", "--as-pid-1", "--clearenv",
              "--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN", "--cap-add",
              "CAP_DAC_OVERRIDE", "--cap-add", "CAP_SETPCAP", (char *) NULL);
}

/* The same, in the user namespaces crucible made with the user's groups
 * (sandbox/userns.h), bwrap's descriptors for them at fd and fd + 1:
 * bwrap joins the outer one before making the others and the inner one
 * once its mounts are done, and writes no map itself.  --userns cannot
 * be given with --unshare-user, nor so with --unshare-all (which tries
 * it) or --disable-userns (which needs it): each other namespace is
 * named, and --assert-userns-disabled makes bwrap fail unless making a
 * user namespace inside is refused, as the outer namespace's limit of
 * one has it.  */
void
bwrap_args_namespaces_userns (struct bwrap_argv *a, int fd)
{
  char outer[16], inner[16];

  snprintf (outer, sizeof outer, "%d", fd);
  snprintf (inner, sizeof inner, "%d", fd + 1);
  bwrap_args (a, "--unshare-ipc", "--unshare-pid", "--unshare-net",
              "--unshare-uts", "--unshare-cgroup-try", "--userns", outer,
              "--userns2", inner, "--assert-userns-disabled", "--new-session",
              "--die-with-parent", "--as-pid-1", "--clearenv", "--cap-drop",
              "ALL", "--cap-add", "CAP_SYS_ADMIN", "--cap-add",
              "CAP_DAC_OVERRIDE", "--cap-add", "CAP_SETPCAP", (char *) NULL);
}

/* The read-only runtime: /usr, the top-level links (as links, or bound
 * where they are real directories), a minimal /etc.  */
void
bwrap_args_runtime (struct bwrap_argv *a)
{
  struct stat st;
  char target[PATH_MAX];

  bwrap_args (a, "--ro-bind", "/usr", "/usr", (char *) NULL);
  for (size_t i = 0; i < sizeof bwrap_runtime_top / sizeof *bwrap_runtime_top;
       i++)
    {
      const char *p = bwrap_runtime_top[i];
      if (lstat (p, &st) < 0)
        continue;
      ssize_t n;
      if (S_ISLNK (st.st_mode)
          && (n = readlink (p, target, sizeof target - 1)) > 0)
        {
          target[n] = '\0';
          bwrap_args (a, "--symlink", target, p, (char *) NULL);
        }
      else if (S_ISDIR (st.st_mode))
        bwrap_args (a, "--ro-bind", p, p, (char *) NULL);
    }
  for (size_t i = 0; i < sizeof bwrap_runtime_etc / sizeof *bwrap_runtime_etc;
       i++)
    if (access (bwrap_runtime_etc[i], F_OK) == 0)
      bwrap_args (a, "--ro-bind", bwrap_runtime_etc[i], bwrap_runtime_etc[i],
                  (char *) NULL);
}

char **
bwrap_build_argv (const struct bwrap_plan *plan)
{
  struct bwrap_argv a = { 0 };
  char fd_text[8][16];

  snprintf (fd_text[5], sizeof fd_text[5], "%d", BWRAP_FD_WORKLOAD_SECCOMP);
  snprintf (fd_text[0], sizeof fd_text[0], "%d", BWRAP_FD_BROKER);
  snprintf (fd_text[1], sizeof fd_text[1], "%d", BWRAP_FD_SECCOMP);
  snprintf (fd_text[2], sizeof fd_text[2], "%d", BWRAP_FD_STATUS);
  snprintf (fd_text[3], sizeof fd_text[3], "%d", BWRAP_FD_ENV);
  snprintf (fd_text[4], sizeof fd_text[4], "%d", BWRAP_FD_OUTPUT);
  snprintf (fd_text[6], sizeof fd_text[6], "%d", BWRAP_FD_NET);
  snprintf (fd_text[7], sizeof fd_text[7], "%d", BWRAP_FD_HOSTS);
  bwrap_args (&a, "bwrap", (char *) NULL);
  if (plan->userns)
    bwrap_args_namespaces_userns (&a,
                                  BWRAP_FD_EXTRA + (int) plan->n_socket_binds);
  else
    bwrap_args_namespaces (&a);
  bwrap_args_runtime (&a);
  bwrap_args (&a, "--proc", "/proc", "--dev", "/dev", (char *) NULL);
  /* localhost resolves (BWRAP_HOSTS); the host's own file, with its
   * names and neighbours, is never shown.  No resolv.conf: there is no
   * name server to reach.  */
  bwrap_args (&a, "--perms", "0444", "--ro-bind-data", fd_text[7], "/etc/hosts",
              (char *) NULL);
  /* A fresh /tmp, the private TMPDIR; HOME inside it, private too.  */
  bwrap_args (&a, "--tmpfs", "/tmp", "--perms", "0700", "--dir", BWRAP_HOME,
              (char *) NULL);
  /* The layers at hidden paths; the broker covers them once mounted.  */
  bwrap_args (&a, "--ro-bind", plan->workspace, BWRAP_HIDDEN_LOWER, "--bind",
              plan->layer_dir, BWRAP_HIDDEN_LAYER, "--ro-bind-fd", fd_text[0],
              BWRAP_HIDDEN_BROKER, (char *) NULL);
  /* The mount point for the projection, after --tmpfs /tmp so a workspace
   * under /tmp is not covered by it.  */
  bwrap_args (&a, "--dir", plan->workspace, (char *) NULL);
  /* Granted sockets outside the workspace, each the very socket that was
   * checked (a descriptor, not a path bwrap would resolve again), at its
   * canonical path.  After --tmpfs /tmp, like the workspace.  */
  for (size_t i = 0; i < plan->n_socket_binds; i++)
    {
      char fd[16];
      snprintf (fd, sizeof fd, "%d", BWRAP_FD_EXTRA + (int) i);
      bwrap_args (&a, "--ro-bind-fd", fd, plan->socket_dests[i], (char *) NULL);
    }
  bwrap_args (&a, "--remount-ro", "/", "--seccomp", fd_text[1], "--",
              BWRAP_HIDDEN_BROKER, "--status-fd", fd_text[2], (char *) NULL);
  /* The net channel, like the filter, a descriptor only the broker
   * holds: the network stays unshared, and the broker relays the one
   * port inside to the host's proxy.  */
  if (plan->net)
    bwrap_args (&a, "--net-fd", fd_text[6], (char *) NULL);
  for (size_t i = 0; plan->net && i < plan->n_ports; i++)
    {
      char port[8];
      snprintf (port, sizeof port, "%u", (unsigned) plan->ports[i]);
      bwrap_args (&a, "--port", port, (char *) NULL);
    }
  /* Prepared ahead (--await): the environment, the output and the line
   * come with the host's GO, once the command is allowed to start.  */
  if (plan->await)
    bwrap_args (&a, "--await", (char *) NULL);
  else
    bwrap_args (&a, "--env-fd", fd_text[3], "--output-fd", fd_text[4],
                (char *) NULL);
  bwrap_args (&a, "--seccomp-fd", fd_text[5], "--cwd", plan->workspace,
              "--confine", "--lower", BWRAP_HIDDEN_LOWER, "--upper",
              BWRAP_HIDDEN_LAYER "/upper", "--work", BWRAP_HIDDEN_LAYER "/work",
              "--root", plan->workspace, (char *) NULL);
  bwrap_args (&a, "--protect", bwrap_protected_git, (char *) NULL);
  for (const char *const *n = pubguard_agent_names (); *n != NULL; n++)
    bwrap_args (&a, "--protect", *n, (char *) NULL);
  if (plan->gitdir != NULL)
    bwrap_args (&a, "--protect", plan->gitdir, (char *) NULL);
  for (size_t i = 0; i < plan->n_protect; i++)
    bwrap_args (&a, "--protect", plan->protect[i], (char *) NULL);
  bwrap_args (&a, "--hide", BWRAP_HIDDEN_DIR, (char *) NULL);
  for (size_t i = 0; i < plan->n_unreadable; i++)
    bwrap_args (&a, "--unreadable", plan->unreadable[i], (char *) NULL);
  if (plan->hide_sockets)
    bwrap_args (&a, "--hide-sockets", (char *) NULL);
  for (size_t i = 0; i < plan->n_socket_names; i++)
    bwrap_args (&a, "--socket", plan->socket_names[i], (char *) NULL);
  bwrap_arg_num (&a, "--address-space", (unsigned long) plan->memory_bytes);
  bwrap_arg_num (&a, "--cpu-seconds", plan->cpu_seconds);
  bwrap_arg_num (&a, "--open-files", plan->open_files);
  bwrap_arg_num (&a, "--processes", plan->processes);
  bwrap_args (&a, "--", plan->shell, "-c", (char *) NULL);
  if (!plan->await)
    bwrap_args (&a, plan->line, (char *) NULL);
  return a.v;
}

void
bwrap_argv_free (char **argv)
{
  if (argv == NULL)
    return;
  for (char **p = argv; *p != NULL; p++)
    free (*p);
  free (argv);
}

/* Whether entry is NAME=... for name.  */
static bool
bwrap_env_is (const char *entry, const char *name)
{
  size_t n = strlen (name);
  return strncmp (entry, name, n) == 0 && entry[n] == '=';
}

char *
bwrap_env_block (char *const *envp, size_t *len_out)
{
  struct buf b = BUF_INIT;

  for (char *const *p = envp; p != NULL && *p != NULL; p++)
    if (!bwrap_env_is (*p, "HOME") && !bwrap_env_is (*p, "TMPDIR"))
      buf_append (&b, *p, strlen (*p) + 1);
  static const char home[] = "HOME=" BWRAP_HOME, tmp[] = "TMPDIR=" BWRAP_TMPDIR;
  buf_append (&b, home, sizeof home);
  buf_append (&b, tmp, sizeof tmp);
  return buf_steal (&b, len_out);
}
