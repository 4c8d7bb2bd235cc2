/* The pids cgroup for a confined command's processes.  */
#include <config.h>

#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"

/* Whether the comma-separated list has the word.  */
static bool
cgroup_has_word (const char *list, const char *word, const char *seps)
{
  size_t n = strlen (word);

  for (const char *p = list; *p != '\0';)
    {
      size_t len = strcspn (p, seps);
      if (len == n && strncmp (p, word, n) == 0)
        return true;
      p += len;
      p += *p != '\0';
    }
  return false;
}

/* Read a small file whole (at most 4 KiB); NULL on failure.  */
static char *
cgroup_read_small (const char *path)
{
  char text[4097];
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, text, sizeof text - 1);

  if (n < 0)
    return NULL;
  text[n] = '\0';
  return xstrdup (text);
}

/* The path crucible's own cgroup has on the hierarchy: v1 the line whose
 * controllers hold "pids", v2 ("0::") when v2 is asked for.  */
static char *
cgroup_own_path (bool v2)
{
  cleanup_fclose FILE *f = fopen ("/proc/self/cgroup", "re");
  char line[4096];

  if (f == NULL)
    return NULL;
  while (fgets (line, sizeof line, f) != NULL)
    {
      char *first = strchr (line, ':');
      char *second = first == NULL ? NULL : strchr (first + 1, ':');
      if (second == NULL)
        continue;
      *second = '\0';
      line[strcspn (line, "\n")] = '\0';
      second[1 + strcspn (second + 1, "\n")] = '\0';
      bool is_v2 = strcmp (line, "0") == 0 && first[1] == '\0';
      if (v2 ? is_v2 : cgroup_has_word (first + 1, "pids", ","))
        return xstrdup (second + 1);
    }
  return NULL;
}

/* mount point + (own path less the mount's root), when the mount's root
 * is a prefix of it; NULL otherwise.  */
static char *
cgroup_join (const char *mnt, const char *root, const char *own)
{
  size_t n = strcmp (root, "/") == 0 ? 0 : strlen (root);

  if (strncmp (own, root, n) != 0 || (own[n] != '/' && own[n] != '\0'))
    return NULL;
  return xasprintf ("%s%s", mnt, own[n] == '\0' ? "" : own + n);
}

/* Whether crucible can make children in dir (and, for v2, whether they get
 * the pids controller).  */
static bool
cgroup_usable (const char *dir, bool v2)
{
  cleanup_free char *procs = xasprintf ("%s/cgroup.procs", dir);

  if (access (dir, W_OK) < 0 || access (procs, F_OK) < 0)
    return false;
  if (v2)
    {
      cleanup_free char *sub = xasprintf ("%s/cgroup.subtree_control", dir);
      cleanup_free char *text = cgroup_read_small (sub);
      return text != NULL && cgroup_has_word (text, "pids", " \n");
    }
  return true;
}

char *
cgroup_pids_parent (void)
{
  cleanup_fclose FILE *f = fopen ("/proc/self/mountinfo", "re");
  char line[8192];
  char *found = NULL;

  if (f == NULL)
    return NULL;
  while (found == NULL && fgets (line, sizeof line, f) != NULL)
    {
      /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SRC
       * SUPER-OPTS.  A mount point with a space is octal-escaped; no
       * cgroup mount worth supporting has one.  */
      char *sep = strstr (line, " - "), *save = NULL, *f4 = NULL, *f5 = NULL;
      if (sep == NULL)
        continue;
      *sep = '\0';
      char *tok = strtok_r (line, " ", &save);
      for (int i = 1; tok != NULL && i <= 5;
           i++, tok = strtok_r (NULL, " ", &save))
        {
          if (i == 4)
            f4 = tok;
          if (i == 5)
            f5 = tok;
        }
      char *type = strtok_r (sep + 3, " ", &save);
      char *src = type == NULL ? NULL : strtok_r (NULL, " ", &save);
      char *opts = src == NULL ? NULL : strtok_r (NULL, " \n", &save);
      if (f5 == NULL || opts == NULL || strchr (f5, '\\') != NULL)
        continue;
      bool v2 = strcmp (type, "cgroup2") == 0;
      if (!v2
          && !(strcmp (type, "cgroup") == 0
               && cgroup_has_word (opts, "pids", ",")))
        continue;
      cleanup_free char *own = cgroup_own_path (v2);
      char *dir = own == NULL ? NULL : cgroup_join (f5, f4, own);
      if (dir != NULL && cgroup_usable (dir, v2))
        found = dir;
      else
        free (dir);
    }
  return found;
}

/* Write text to dir/name.  */
static int
cgroup_write (const char *dir, const char *name, const char *text)
{
  cleanup_free char *path = xasprintf ("%s/%s", dir, name);
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC);
  size_t n = strlen (text);

  if (fd < 0)
    return -1;
  return write (fd, text, n) == (ssize_t) n ? 0 : -1;
}

int
cgroup_pids_join_fd (const char *dir)
{
  cleanup_free char *tasks = xasprintf ("%s/tasks", dir);
  int fd = open (tasks, O_WRONLY | O_CLOEXEC);

  if (fd >= 0 || errno != ENOENT)
    return fd;
  cleanup_free char *procs = xasprintf ("%s/cgroup.procs", dir);
  return open (procs, O_WRONLY | O_CLOEXEC);
}

int
cgroup_pids_make (const char *parent, unsigned long max, char **dir_out,
                  int *procs_fd_out, struct cr_error **err)
{
  static unsigned long seq;
  char value[32];
  cleanup_free char *dir = NULL;
  int fd;

  dir = xasprintf ("%s/" CGROUP_PREFIX "%ld-%lu", parent, (long) getpid (),
                   ++seq);
  if (mkdir (dir, 0755) < 0)
    return cr_error_set (err, errno,
                         "making the pids cgroup for the command's process "
                         "cap");
  snprintf (value, sizeof value, "%lu", max);
  if (cgroup_write (dir, "pids.max", value) < 0
      || (fd = cgroup_pids_join_fd (dir)) < 0)
    {
      int saved = errno;
      rmdir (dir);
      return cr_error_set (err, saved,
                           "setting the command's process cap in its pids "
                           "cgroup");
    }
  *dir_out = steal_pointer (&dir);
  *procs_fd_out = fd;
  return 0;
}

bool
cgroup_pids_empty (const char *dir)
{
  cleanup_free char *path = xasprintf ("%s/cgroup.procs", dir);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  char c;
  ssize_t n;

  if (fd < 0)
    return false;
  do
    n = read (fd, &c, 1);
  while (n < 0 && errno == EINTR);
  return n == 0;
}

bool
cgroup_pids_remove (const char *dir)
{
  for (int i = 0; i < 50; i++)
    {
      if (rmdir (dir) == 0 || errno == ENOENT)
        return true;
      if (errno != EBUSY)
        return false;
      struct timespec tick = { 0, 10L * 1000 * 1000 };
      nanosleep (&tick, NULL);
    }
  return false;
}

void
cgroup_pids_recover (const char *parent)
{
  cleanup_closedir DIR *d = opendir (parent);
  struct dirent *de;

  if (d == NULL)
    return;
  while ((de = readdir (d)) != NULL)
    {
      long pid;
      char *end;
      if (strncmp (de->d_name, CGROUP_PREFIX, strlen (CGROUP_PREFIX)) != 0)
        continue;
      pid = strtol (de->d_name + strlen (CGROUP_PREFIX), &end, 10);
      if (pid <= 0 || *end != '-' || pid == (long) getpid ())
        continue;
      /* Its maker still runs: its commands may too.  */
      if (kill ((pid_t) pid, 0) == 0 || errno != ESRCH)
        continue;
      cleanup_free char *dir = xasprintf ("%s/%s", parent, de->d_name);
      rmdir (dir); /* EBUSY while a process is still in it: kept */
    }
}
