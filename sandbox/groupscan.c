/* Paths a confined command cannot change because of their group.  */
#include <config.h>

#include "sandbox/groupscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

/* Paths counted before the scan stops: enough to say "and more".  */
#define GROUPSCAN_MAX_FOUND 100

struct groupscan
{
  const struct groupscan_who *who;
  struct groupscan_result *out;
  dev_t dev;
  size_t entries;
  char path[4096]; /* the current directory, relative to the root */
};

/* Whether the user, outside any sandbox, could change st.  */
static bool
groupscan_writable (const struct groupscan_who *who, const struct stat *st)
{
  if (who->uid == 0)
    return true;
  if (st->st_uid == who->uid)
    return (st->st_mode & S_IWUSR) != 0;
  for (size_t i = 0; i < who->n_groups; i++)
    if (who->groups[i] == st->st_gid)
      return (st->st_mode & S_IWGRP) != 0;
  return (st->st_mode & S_IWOTH) != 0;
}

/* Whether the sandbox maps group gid.  */
static bool
groupscan_mapped (const struct groupscan_who *who, gid_t gid)
{
  if (gid == who->mapped_gid)
    return true;
  for (size_t i = 0; i < who->n_mapped; i++)
    if (who->mapped[i] == gid)
      return true;
  return false;
}

/* Note one path found.  */
static void
groupscan_found (struct groupscan *g, const char *name, const struct stat *st)
{
  if (g->out->count++ == 0)
    {
      g->out->first = g->path[0] != '\0' ? xasprintf ("%s/%s", g->path, name)
                                         : xstrdup (name);
      g->out->first_gid = st->st_gid;
    }
}

/* Scan the directory fd (closed here), depth directories deep.  */
static void
groupscan_dir (struct groupscan *g, int fd, int depth)
{
  cleanup_closedir DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return;
    }
  size_t base = strlen (g->path);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (g->out->count >= GROUPSCAN_MAX_FOUND
          || ++g->entries > GROUPSCAN_MAX_ENTRIES)
        {
          g->out->bounded = g->out->count < GROUPSCAN_MAX_FOUND;
          return;
        }
      struct stat st;
      if (fstatat (fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
          || st.st_dev != g->dev
          || !(S_ISREG (st.st_mode) || S_ISDIR (st.st_mode)))
        continue;
      if (!groupscan_mapped (g->who, st.st_gid)
          && groupscan_writable (g->who, &st))
        groupscan_found (g, de->d_name, &st);
      if (!S_ISDIR (st.st_mode))
        continue;
      if (depth + 1 >= GROUPSCAN_MAX_DEPTH
          || base + 1 + strlen (de->d_name) + 1 > sizeof g->path)
        {
          g->out->bounded = true;
          continue;
        }
      int sub = openat (fd, de->d_name,
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0)
        continue;
      /* Room was checked above.  */
      snprintf (g->path + base, sizeof g->path - base, "%s%s",
                base > 0 ? "/" : "", de->d_name);
      groupscan_dir (g, sub, depth + 1);
      g->path[base] = '\0';
    }
}

int
groupscan_run (int root_fd, const struct groupscan_who *who,
               struct groupscan_result *out)
{
  struct groupscan g = { .who = who, .out = out };
  struct stat st;

  memset (out, 0, sizeof *out);
  if (fstat (root_fd, &st) < 0)
    return -1;
  g.dev = st.st_dev;
  int fd = openat (root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  groupscan_dir (&g, fd, 0);
  return 0;
}

char *
groupscan_note (const struct groupscan_result *r, gid_t mapped)
{
  if (r->count == 0)
    return NULL;
  struct buf path = BUF_INIT;
  utf8_show (&path, r->first, strlen (r->first), 0);
  struct group *gr = getgrgid (r->first_gid);
  cleanup_free char *group = gr != NULL
                                 ? xstrdup (gr->gr_name)
                                 : xasprintf ("%u", (unsigned) r->first_gid);
  gr = getgrgid (mapped);
  cleanup_free char *own = gr != NULL ? xstrdup (gr->gr_name)
                                      : xasprintf ("%u", (unsigned) mapped);
  cleanup_free char *remedy = r->count == 1
                                  ? xasprintf ("chgrp %s -- %s", own, path.data)
                                  : xasprintf ("chgrp %s on each", own);
  char *note = xasprintf (
      "[confined, %s%" PRIu64 " path%s in the workspace cannot be changed: "
      "%s a group the sandbox does not map (first: %s, group %s), so "
      "writing to %s fails with \"Value too large for defined data "
      "type\"; give %s your own group (%s), or run the command with "
      "confinement off]",
      r->count >= GROUPSCAN_MAX_FOUND ? "at least " : "", r->count,
      r->count == 1 ? "" : "s", r->count == 1 ? "it carries" : "they carry",
      path.data, group, r->count == 1 ? "it" : "them",
      r->count == 1 ? "it" : "them", remedy);
  buf_free (&path);
  return note;
}

void
groupscan_result_clear (struct groupscan_result *r)
{
  free (r->first);
  memset (r, 0, sizeof *r);
}
