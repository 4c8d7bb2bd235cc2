/* Quarantined publications: keep, list, drop (restore is in publish.c,
 * which owns the transaction's steps).  */
#include <config.h>

#include "sandbox/quarantine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/pubfs.h"
#include "sandbox/pubplan.h"
#include "sandbox/wal.h"

#define QUARANTINE_REASON "reason"

int
quarantine_keep (const char *statedir, const char *id, const char *why,
                 struct cr_error **err)
{
  cleanup_free char *dir = xasprintf ("%s/" QUARANTINE_DIR, statedir);
  cleanup_free char *from = xasprintf ("%s/txn/%s", statedir, id);
  cleanup_free char *to = xasprintf ("%s/%s", dir, id);
  cleanup_free char *reason = xasprintf ("%s/" QUARANTINE_REASON, to);

  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    return cr_error_set (err, errno, "making the quarantine");
  if (rename (from, to) < 0)
    return cr_error_set (err, errno, "moving publication %s to quarantine", id);
  cleanup_close int fd = open (
      reason, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || dprintf (fd, "%s\n", why) < 0 || fsync (fd) < 0)
    return cr_error_set (err, errno, "writing why %s is in quarantine", id);
  return 0;
}

/* Read an entry's root and time from its log's first record.  */
static void
quarantine_read_begin (int dirfd, struct quarantine_entry *e)
{
  struct wal_log log;
  struct cr_error *err = NULL;
  if (wal_read (dirfd, &log, &err) < 0)
    {
      cr_error_free (err);
      return;
    }
  if (log.n > 0 && log.records[0].step == WAL_BEGIN)
    {
      char *save = NULL;
      for (char *line = strtok_r (log.records[0].payload, "\n", &save);
           line != NULL; line = strtok_r (NULL, "\n", &save))
        if (strncmp (line, "root ", 5) == 0 && e->root == NULL)
          e->root = pubplan_unescape (line + 5);
        else if (strncmp (line, "time ", 5) == 0)
          e->when = strtoll (line + 5, NULL, 10);
    }
  wal_log_clear (&log);
}

/* Read why an entry was kept.  */
static char *
quarantine_read_reason (int dirfd)
{
  cleanup_close int fd
      = openat (dirfd, QUARANTINE_REASON, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  char text[512];
  ssize_t n = fd < 0 ? -1 : read (fd, text, sizeof text - 1);
  if (n <= 0)
    return xstrdup ("unknown");
  text[n] = '\0';
  text[strcspn (text, "\n")] = '\0';
  return xstrdup (text);
}

/* Oldest first, then by id.  */
static int
quarantine_cmp (const void *a, const void *b)
{
  const struct quarantine_entry *x = a, *y = b;
  if (x->when != y->when)
    return x->when < y->when ? -1 : 1;
  return strcmp (x->id, y->id);
}

int
quarantine_list (const char *statedir, struct quarantine_entry **out, size_t *n,
                 struct cr_error **err)
{
  cleanup_free char *dir = xasprintf ("%s/" QUARANTINE_DIR, statedir);
  cleanup_closedir DIR *d = opendir (dir);
  struct dirent *de;

  *out = NULL;
  *n = 0;
  if (d == NULL)
    return errno == ENOENT
               ? 0
               : cr_error_set (err, errno, "reading the quarantine");
  while ((de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.')
        continue;
      cleanup_close int fd
          = openat (dirfd (d), de->d_name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        continue;
      *out = xrealloc (*out, (*n + 1) * sizeof **out);
      struct quarantine_entry *e = &(*out)[(*n)++];
      memset (e, 0, sizeof *e);
      e->id = xstrdup (de->d_name);
      quarantine_read_begin (fd, e);
      e->reason = quarantine_read_reason (fd);
    }
  if (*n > 1)
    qsort (*out, *n, sizeof **out, quarantine_cmp);
  return 0;
}

void
quarantine_entries_free (struct quarantine_entry *e, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (e[i].id);
      free (e[i].root);
      free (e[i].reason);
    }
  free (e);
}

int
quarantine_check_id (const char *statedir, const char *id,
                     struct cr_error **err)
{
  struct stat st;
  if (id[0] == '\0' || id[0] == '.' || strchr (id, '/') != NULL)
    return cr_error_set (err, 0, "'%s' is not a quarantine entry", id);
  cleanup_free char *path
      = xasprintf ("%s/" QUARANTINE_DIR "/%s", statedir, id);
  if (lstat (path, &st) < 0 || !S_ISDIR (st.st_mode))
    return cr_error_set (err, 0, "there is no quarantine entry '%s'", id);
  return 0;
}

int
quarantine_drop (const char *statedir, const char *id, struct cr_error **err)
{
  cleanup_free char *dir = xasprintf ("%s/" QUARANTINE_DIR, statedir);
  if (quarantine_check_id (statedir, id, err) < 0)
    return -1;
  cleanup_close int fd
      = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || pubfs_remove_tree (fd, id) < 0)
    return cr_error_set (err, errno, "removing quarantine entry %s", id);
  return 0;
}
