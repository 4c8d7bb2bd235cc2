/* The sandbox's user namespaces, made with the user's groups mapped
 * (sandbox/userns.h).  */
#include <config.h>

#include "sandbox/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"

/* The most of /etc/subgid read: far more than any real file.  */
#define USERNS_SUBGID_BYTES ((size_t) 1024 * 1024)

/* A map's text: a line per group, each at most ~36 bytes.  */
#define USERNS_MAP_BYTES ((USERNS_MAX_GROUPS + 2) * 40)

/* --- deciding ---------------------------------------------------------------
 */

/* Whether one /etc/subgid line (cut at its end) gives name or uid the
 * group gid.  */
static bool
userns_subgid_line (char *line, const char *name, uid_t uid, gid_t gid)
{
  char *first = strchr (line, ':');
  if (first == NULL)
    return false;
  *first++ = '\0';
  char *count = strchr (first, ':');
  if (count == NULL)
    return false;
  *count++ = '\0';
  char uid_text[32];
  snprintf (uid_text, sizeof uid_text, "%u", (unsigned) uid);
  if (strcmp (line, name) != 0 && strcmp (line, uid_text) != 0)
    return false;
  char *end1, *end2;
  errno = 0;
  unsigned long long lo = strtoull (first, &end1, 10);
  unsigned long long n = strtoull (count, &end2, 10);
  if (errno != 0 || end1 == first || *end1 != '\0' || end2 == count
      || *end2 != '\0' || n == 0)
    return false;
  return gid >= lo && gid - lo < n;
}

bool
userns_subgid_allows (const char *text, const char *name, uid_t uid, gid_t gid)
{
  cleanup_free char *copy = xstrdup (text);
  char *save = NULL;

  for (char *line = strtok_r (copy, "\n", &save); line != NULL;
       line = strtok_r (NULL, "\n", &save))
    if (line[0] != '#' && userns_subgid_line (line, name, uid, gid))
      return true;
  return false;
}

/* /etc/subgid's text, or NULL when it cannot be read.  Owned.  */
static char *
userns_subgid_read (void)
{
  cleanup_close int fd = open (USERNS_SUBGID, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  char *text = xmalloc (USERNS_SUBGID_BYTES + 1);
  size_t len = 0;
  ssize_t n;
  while (len < USERNS_SUBGID_BYTES
         && (n = read (fd, text + len, USERNS_SUBGID_BYTES - len)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          free (text);
          return NULL;
        }
      len += (size_t) n;
    }
  text[len] = '\0';
  return text;
}

/* Whether newgidmap would map the single group gid for the user: one
 * /etc/subgid gives them (shadow's verify_range; their primary group is
 * mapped by its own rule).  */
static bool
userns_helper_allows (const struct passwd *pw, const char *subgid, gid_t gid)
{
  return subgid != NULL
         && userns_subgid_allows (subgid, pw->pw_name, pw->pw_uid, gid);
}

/* Whether gid is already in plan's list, or is one of the two groups the
 * maps give otherwise (the user's own, and 0 inside the outer one).  */
static bool
userns_plan_has (const struct userns_plan *plan, gid_t gid)
{
  if (gid == plan->gid || gid == 0)
    return true;
  for (size_t i = 0; i < plan->n_groups; i++)
    if (plan->groups[i] == gid)
      return true;
  return false;
}

bool
userns_plan_groups (struct userns_plan *plan)
{
  gid_t held[USERNS_MAX_GROUPS];
  int n = getgroups (USERNS_MAX_GROUPS, held);

  plan->uid = geteuid ();
  plan->gid = getegid ();
  plan->as_root = plan->uid == 0;
  plan->n_groups = 0;
  if (n <= 0)
    return false;
  cleanup_free char *subgid = NULL;
  struct passwd *pw = NULL;
  if (!plan->as_root)
    {
      /* The helpers are setuid root; without them no map but bwrap's own
       * one-line map can be written.  They map the user's own ids only
       * for a process whose real and effective ids are the password
       * database's.  */
      pw = getpwuid (plan->uid);
      if (pw == NULL || getuid () != pw->pw_uid || getgid () != pw->pw_gid
          || plan->gid != pw->pw_gid || access (USERNS_NEWUIDMAP, X_OK) < 0
          || access (USERNS_NEWGIDMAP, X_OK) < 0)
        return false;
      subgid = userns_subgid_read ();
    }
  for (int i = 0; i < n; i++)
    if (!userns_plan_has (plan, held[i])
        && (plan->as_root || userns_helper_allows (pw, subgid, held[i])))
      plan->groups[plan->n_groups++] = held[i];
  return plan->n_groups > 0;
}

/* --- the maps ---------------------------------------------------------------
 */

/* A map's text: "inside outside 1" for the user's own id, then each of
 * the other groups as itself.  */
static void
userns_map_text (char *buf, size_t size, unsigned inside, unsigned outside,
                 const gid_t *groups, size_t n)
{
  int len = snprintf (buf, size, "%u %u 1\n", inside, outside);
  for (size_t i = 0; i < n && len > 0 && (size_t) len < size; i++)
    len += snprintf (buf + len, size - (size_t) len, "%u %u 1\n",
                     (unsigned) groups[i], (unsigned) groups[i]);
}

/* Write text to the file at path, in one write (as the kernel wants a
 * map).  */
static int
userns_write (const char *path, const char *text)
{
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t len = strlen (text);
  return write (fd, text, len) == (ssize_t) len ? 0 : -1;
}

/* Write text to the file name under /proc/PID (pid 0: self).  */
static int
userns_proc_write (pid_t pid, const char *name, const char *text)
{
  char path[64];
  if (pid == 0)
    snprintf (path, sizeof path, "/proc/self/%s", name);
  else
    snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  return userns_write (path, text);
}

/* One byte over a pipe: 1 sent or read, 0 at end of file, -1 error.  */
static int
userns_byte (int fd, char *c, bool send)
{
  for (;;)
    {
      ssize_t n = send ? write (fd, c, 1) : read (fd, c, 1);
      if (n < 0 && errno == EINTR)
        continue;
      return n < 0 ? -1 : (int) n;
    }
}

/* Run a setuid map helper (newuidmap or newgidmap) for pid with the map
 * "0 own 1" and each group to itself, from an empty environment.  */
static int
userns_helper_run (const char *helper, pid_t pid, unsigned own,
                   const gid_t *groups, size_t n)
{
  char *argv[3 * (USERNS_MAX_GROUPS + 1) + 3];
  char text[USERNS_MAX_GROUPS + 2][16];
  size_t a = 0, t = 0;

  argv[a++] = (char *) helper;
  snprintf (text[t], sizeof text[t], "%d", (int) pid);
  argv[a++] = text[t++];
  /* "0 own 1", then "G G 1" for each group.  */
  argv[a++] = (char *) "0";
  snprintf (text[t], sizeof text[t], "%u", own);
  argv[a++] = text[t++];
  argv[a++] = (char *) "1";
  for (size_t i = 0; i < n; i++)
    {
      snprintf (text[t], sizeof text[t], "%u", (unsigned) groups[i]);
      argv[a++] = text[t];
      argv[a++] = text[t++];
      argv[a++] = (char *) "1";
    }
  argv[a] = NULL;
  pid_t child = fork ();
  if (child < 0)
    return -1;
  if (child == 0)
    {
      char *empty_env[] = { NULL };
      /* Nothing of theirs on crucible's terminal: a failure is reported
       * by name, and the command still runs (bwrap's own maps).  */
      int devnull = open ("/dev/null", O_RDWR);
      if (devnull >= 0)
        {
          dup2 (devnull, 0);
          dup2 (devnull, 1);
          dup2 (devnull, 2);
        }
      execve (helper, argv, empty_env);
      _exit (127);
    }
  int status;
  while (waitpid (child, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : -1;
}

/* The outer namespace's maps for the helper child pid: uid 0 and gid 0
 * inside are the user's, each other group itself.  As root, written
 * here; otherwise by newuidmap and newgidmap, which check each range
 * against the password database and /etc/subgid themselves.  */
static int
userns_outer_maps (const struct userns_plan *plan, pid_t pid,
                   struct cr_error **err)
{
  char map[USERNS_MAP_BYTES];

  if (!plan->as_root)
    {
      if (userns_helper_run (USERNS_NEWUIDMAP, pid, plan->uid, NULL, 0) < 0)
        return cr_error_set (err, 0, "mapping the sandbox's user (%s)",
                             USERNS_NEWUIDMAP);
      if (userns_helper_run (USERNS_NEWGIDMAP, pid, plan->gid, plan->groups,
                             plan->n_groups)
          < 0)
        return cr_error_set (err, 0, "mapping the sandbox's groups (%s)",
                             USERNS_NEWGIDMAP);
      return 0;
    }
  userns_map_text (map, sizeof map, 0, plan->uid, NULL, 0);
  if (userns_proc_write (pid, "uid_map", map) < 0)
    return cr_error_set (err, errno, "writing the sandbox's uid_map");
  userns_map_text (map, sizeof map, 0, plan->gid, plan->groups, plan->n_groups);
  if (userns_proc_write (pid, "gid_map", map) < 0)
    return cr_error_set (err, errno, "writing the sandbox's gid_map");
  return 0;
}

/* --- the helper children ----------------------------------------------------
 */

/* In the inner helper (a child of the outer one): make the inner
 * namespace, refuse setgroups in it, say so, then wait until crucible has
 * opened it (its pipe ends).  */
static void __attribute__ ((noreturn))
userns_inner_child (int to_outer, int from_crucible)
{
  char c = 'u';
  if (unshare (CLONE_NEWUSER) < 0
      || userns_proc_write (0, "setgroups", "deny") < 0
      || userns_byte (to_outer, &c, true) != 1)
    _exit (1);
  while (userns_byte (from_crucible, &c, false) == 1)
    ;
  _exit (0);
}

/* In the outer helper, with its maps written: limit the namespaces below
 * this one to one, make the inner one in a child and write its maps (only
 * a process in this namespace can), and hand its pid on.  Like bwrap's
 * --disable-userns: the limit sits in a namespace the sandbox never runs
 * in, so nothing inside can raise it again, whatever it holds there.  */
static int
userns_outer_setup (const struct userns_plan *plan, int to_crucible,
                    int from_crucible, pid_t *inner)
{
  int pipe_inner[2];
  char map[USERNS_MAP_BYTES], c;

  if (userns_write ("/proc/sys/user/max_user_namespaces", "1") < 0
      || pipe2 (pipe_inner, O_CLOEXEC) < 0)
    return -1;
  *inner = fork ();
  if (*inner < 0)
    return -1;
  if (*inner == 0)
    {
      close (pipe_inner[0]);
      userns_inner_child (pipe_inner[1], from_crucible);
    }
  close (pipe_inner[1]);
  if (userns_byte (pipe_inner[0], &c, false) != 1)
    return -1;
  close (pipe_inner[0]);
  userns_map_text (map, sizeof map, plan->uid, 0, NULL, 0);
  if (userns_proc_write (*inner, "uid_map", map) < 0)
    return -1;
  userns_map_text (map, sizeof map, plan->gid, 0, plan->groups, plan->n_groups);
  if (userns_proc_write (*inner, "gid_map", map) < 0)
    return -1;
  return write (to_crucible, inner, sizeof *inner) == sizeof *inner ? 0 : -1;
}

/* The outer helper: make the outer namespace and refuse setgroups in it,
 * wait for crucible to write its maps, set the inner one up, then wait
 * until crucible has opened both (its pipe ends).  */
static void __attribute__ ((noreturn))
userns_outer_child (const struct userns_plan *plan, int to_crucible,
                    int from_crucible)
{
  char c = 'u';
  pid_t inner = -1;

  if (unshare (CLONE_NEWUSER) < 0
      || userns_proc_write (0, "setgroups", "deny") < 0
      || userns_byte (to_crucible, &c, true) != 1
      || userns_byte (from_crucible, &c, false) != 1
      || userns_outer_setup (plan, to_crucible, from_crucible, &inner) < 0)
    {
      if (inner > 0)
        kill (inner, SIGKILL);
      _exit (1);
    }
  while (userns_byte (from_crucible, &c, false) == 1)
    ;
  while (waitpid (inner, NULL, 0) < 0 && errno == EINTR)
    ;
  _exit (0);
}

/* --- making the pair --------------------------------------------------------
 */

/* Open pid's user namespace.  */
static int
userns_open (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
  return open (path, O_RDONLY | O_CLOEXEC);
}

/* With the outer helper started: write its maps, then take both
 * namespaces.  */
static int
userns_take (const struct userns_plan *plan, pid_t outer, int from_child,
             int to_child, struct userns_pair *out, struct cr_error **err)
{
  char c = 'm';
  pid_t inner;

  if (userns_byte (from_child, &c, false) != 1)
    return cr_error_set (err, 0, "making the sandbox's user namespace");
  if (userns_outer_maps (plan, outer, err) < 0)
    return -1;
  out->outer = userns_open (outer);
  if (out->outer < 0)
    return cr_error_set (err, errno, "opening the sandbox's user namespace");
  if (userns_byte (to_child, &c, true) != 1
      || read (from_child, &inner, sizeof inner) != sizeof inner)
    return cr_error_set (err, 0, "making the sandbox's inner user namespace");
  /* The inner helper is the outer one's child, alive until to_child is
   * closed: the pid cannot have been reused.  */
  out->inner = userns_open (inner);
  if (out->inner < 0)
    return cr_error_set (err, errno,
                         "opening the sandbox's inner user namespace");
  return 0;
}

int
userns_make (const struct userns_plan *plan, struct userns_pair *out,
             struct cr_error **err)
{
  int up[2], down[2];

  out->outer = out->inner = -1;
  if (pipe2 (up, O_CLOEXEC) < 0)
    return cr_error_set (err, errno, "making the sandbox's user namespace");
  if (pipe2 (down, O_CLOEXEC) < 0)
    {
      close (up[0]);
      close (up[1]);
      return cr_error_set (err, errno, "making the sandbox's user namespace");
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (up[0]);
      close (down[1]);
      userns_outer_child (plan, up[1], down[0]);
    }
  int saved = errno;
  close (up[1]);
  close (down[0]);
  int rc = pid < 0 ? cr_error_set (err, saved,
                                   "making the sandbox's user namespace")
                   : userns_take (plan, pid, up[0], down[1], out, err);
  /* Ends both helpers, whichever step they are at.  */
  close (down[1]);
  close (up[0]);
  while (pid > 0 && waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (rc < 0)
    userns_pair_close (out);
  return rc;
}

void
userns_pair_close (struct userns_pair *p)
{
  if (p->outer >= 0)
    close (p->outer);
  if (p->inner >= 0)
    close (p->inner);
  p->outer = p->inner = -1;
}
