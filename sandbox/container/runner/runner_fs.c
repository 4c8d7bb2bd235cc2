/* The job runner's workspace: the 'W' archive unpacked strictly, the
 * baseline, and the changes walked against it (runner.h).  */
#include <config.h>

#include "sandbox/container/runner/runner.h"

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
#include "sandbox/container/jobproto.h"

#define RUNNER_DEPTH_MAX 256
#define RUNNER_CHUNK 65536

/* --- unpacking ---------------------------------------------------------
 */

void
runner_unpack_init (struct runner_unpack *u, int wsfd)
{
  memset (u, 0, sizeof *u);
  u->wsfd = wsfd;
  u->file_fd = -1;
  tar_reader_init (&u->tar);
}

void
runner_unpack_clear (struct runner_unpack *u)
{
  if (u->file_fd >= 0)
    close (u->file_fd);
  for (size_t i = 0; i < u->n_dirs; i++)
    free (u->dirs[i].path);
  free (u->dirs);
  free (u->file_name);
  tar_reader_clear (&u->tar);
}

/* Open the directory that holds path below wsfd, through directories
 * only (no link is followed, nothing is made: an archive gives parents
 * before children).  */
static int
runner_parent (int wsfd, const char *path, const char **base)
{
  cleanup_free char *p = xstrdup (path);
  int fd = dup (wsfd);
  char *name = p;
  for (char *slash; fd >= 0 && (slash = strchr (name, '/')) != NULL;
       name = slash + 1)
    {
      *slash = '\0';
      int sub
          = openat (fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      int saved = errno;
      close (fd);
      fd = sub;
      errno = saved;
    }
  *base = path + (name - p);
  return fd;
}

/* Refuse an archive entry; -1.  */
static int
runner_refuse (struct cr_error **err, const char *name, const char *why)
{
  return cr_error_set (err, 0, "the workspace archive's %.200s: %s", name, why);
}

/* The checks of one archive entry before anything is made of it.  */
static const char *
runner_entry_why (struct runner_unpack *u, const struct tar_entry *e)
{
  if (!jobproto_path_ok (e->name))
    return "a name that is absolute, empty or holds \"..\"";
  if (e->kind == TAR_OTHER)
    return "neither a file, a directory nor a symbolic link";
  if (e->kind == TAR_SYMLINK && !jobproto_link_inside (e->name, e->link))
    return "a link out of the workspace";
  if (++u->entries > RUNNER_ENTRIES_MAX)
    return "more entries than the workspace may hold";
  return NULL;
}

/* The archive's entry: made, never over anything already there.  */
static int
runner_on_entry (void *data, const struct tar_entry *e, struct cr_error **err)
{
  struct runner_unpack *u = data;
  const char *base, *why = runner_entry_why (u, e);
  if (why != NULL)
    return runner_refuse (err, e->name, why);
  cleanup_close int parent = runner_parent (u->wsfd, e->name, &base);
  if (parent < 0)
    return runner_refuse (err, e->name,
                          "its directory is not in the archive before it");
  int rc;
  /* Setuid, setgid and sticky bits are never made (the tmpfs is nosuid
   * too); O_EXCL and mkdir refuse a name given twice.  */
  if (e->kind == TAR_DIR)
    {
      rc = mkdirat (parent, base, 0700);
      if (rc == 0)
        {
          u->dirs = xrealloc (u->dirs, (u->n_dirs + 1) * sizeof *u->dirs);
          u->dirs[u->n_dirs++]
              = (struct runner_dir){ xstrdup (e->name), e->mode & 0777,
                                     e->mtime };
        }
    }
  else if (e->kind == TAR_SYMLINK)
    rc = symlinkat (e->link, parent, base);
  else
    {
      rc = u->file_fd
          = openat (parent, base,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      u->file = *e;
      u->file.name = u->file.link = NULL;
      free (u->file_name);
      u->file_name = xstrdup (e->name);
    }
  if (rc < 0)
    return cr_error_set (err, errno, "unpacking the workspace's %.200s",
                         e->name);
  return 0;
}

/* Content of the file being unpacked.  */
static int
runner_on_content (void *data, const void *bytes, size_t len,
                   struct cr_error **err)
{
  struct runner_unpack *u = data;
  const char *p = bytes;
  while (len > 0)
    {
      ssize_t n = write (u->file_fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return cr_error_set (err, n < 0 ? errno : EIO,
                             "unpacking the workspace's %.200s (the "
                             "workspace did not fit?)",
                             u->file_name);
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

/* The file being unpacked is whole: its mode and mtime.  */
static int
runner_on_content_end (void *data, struct cr_error **err)
{
  struct runner_unpack *u = data;
  struct timespec t[2]
      = { { .tv_sec = u->file.mtime }, { .tv_sec = u->file.mtime } };
  int fd = u->file_fd;
  u->file_fd = -1;
  int rc = fchmod (fd, u->file.mode & 0777) < 0 || futimens (fd, t) < 0
               ? cr_error_set (err, errno, "unpacking the workspace's %.200s",
                               u->file_name)
               : 0;
  close (fd);
  return rc;
}

static const struct tar_reader_ops runner_unpack_ops
    = { runner_on_entry, runner_on_content, runner_on_content_end };

int
runner_unpack_feed (struct runner_unpack *u, const void *data, size_t len,
                    struct cr_error **err)
{
  u->started = true;
  return tar_reader_feed (&u->tar, data, len, &runner_unpack_ops, u, err);
}

int
runner_unpack_finish (struct runner_unpack *u, struct cr_error **err)
{
  if (u->started && !tar_reader_done (&u->tar))
    return cr_error_set (err, 0, "the workspace archive is cut short");
  /* Deepest first: a child's mtime is set before its parent's.  */
  for (size_t i = u->n_dirs; i-- > 0;)
    {
      const char *base;
      struct timespec t[2]
          = { { .tv_sec = u->dirs[i].mtime }, { .tv_sec = u->dirs[i].mtime } };
      cleanup_close int parent
          = runner_parent (u->wsfd, u->dirs[i].path, &base);
      if (parent < 0
          || fchmodat (parent, base, u->dirs[i].mode, AT_SYMLINK_NOFOLLOW) < 0
          || utimensat (parent, base, t, AT_SYMLINK_NOFOLLOW) < 0)
        return cr_error_set (err, errno, "unpacking the workspace's %.200s",
                             u->dirs[i].path);
    }
  return 0;
}

/* --- the walk both the baseline and the changes take -------------------
 */

/* Compare names for a stable order.  */
static int
runner_cmp (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The names in an open directory, sorted.  */
static char **
runner_names (int fd, size_t *n)
{
  int dup_fd = dup (fd);
  DIR *dir = dup_fd < 0 ? NULL : fdopendir (dup_fd);
  char **names = NULL;
  struct dirent *de;
  *n = 0;
  if (dir == NULL)
    {
      if (dup_fd >= 0)
        close (dup_fd);
      return NULL;
    }
  /* The duplicate shares the position of fd, which an earlier walk left
   * at the end.  */
  rewinddir (dir);
  while ((de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      names = xrealloc (names, (*n + 1) * sizeof *names);
      names[(*n)++] = xstrdup (de->d_name);
    }
  closedir (dir);
  if (*n > 1)
    qsort (names, *n, sizeof *names, runner_cmp);
  return names;
}

/* What a walk does at each entry (st of name in dirfd, at path).  A
 * nonzero return stops it; *descend says whether to go into a
 * directory.  */
typedef int (*runner_visit_fn) (void *data, int dirfd, const char *name,
                                const char *path, const struct stat *st,
                                bool *descend, struct cr_error **err);

/* Walk the open directory rel, children in sorted order, following no
 * link.  */
static int
runner_walk (int fd, const char *rel, int depth, runner_visit_fn fn, void *data,
             struct cr_error **err)
{
  size_t n;
  int rc = 0;
  /* A tree deeper than the bound is refused, named, rather than walked
   * with one descriptor per level.  */
  if (depth > RUNNER_DEPTH_MAX)
    return cr_error_set (err, 0,
                         "the workspace's %.200s is deeper than %d levels", rel,
                         RUNNER_DEPTH_MAX);
  char **names = runner_names (fd, &n);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *path
          = rel[0] ? xasprintf ("%s/%s", rel, names[i]) : xstrdup (names[i]);
      struct stat st;
      bool descend = false;
      if (rc == 0 && fstatat (fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
        rc = fn (data, fd, names[i], path, &st, &descend, err);
      if (rc == 0 && descend)
        {
          cleanup_close int sub = openat (
              fd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0)
            rc = runner_walk (sub, path, depth + 1, fn, data, err);
        }
      free (names[i]);
    }
  free (names);
  return rc;
}

/* A link's target, or NULL.  */
static char *
runner_readlink (int dirfd, const char *name)
{
  char t[TAR_NAME_MAX + 1];
  ssize_t n = readlinkat (dirfd, name, t, sizeof t);
  if (n < 0 || (size_t) n >= sizeof t)
    return NULL;
  return xstrndup (t, (size_t) n);
}

/* --- the baseline ------------------------------------------------------
 */

/* Note one path of the workspace as it is before the command.  */
static int
runner_base_visit (void *data, int dirfd, const char *name, const char *path,
                   const struct stat *st, bool *descend, struct cr_error **err)
{
  struct runner_baseline *b = data;
  (void) err;
  b->v = xrealloc (b->v, (b->n + 1) * sizeof *b->v);
  b->v[b->n++] = (struct runner_base){
    .path = xstrdup (path),
    .mode = st->st_mode,
    .ino = st->st_ino,
    .size = st->st_size,
    .mtime = st->st_mtim,
    .ctime = st->st_ctim,
    .target = S_ISLNK (st->st_mode) ? runner_readlink (dirfd, name) : NULL
  };
  *descend = S_ISDIR (st->st_mode);
  return 0;
}

/* Compare baseline entries by path.  */
static int
runner_base_cmp (const void *a, const void *b)
{
  return strcmp (((const struct runner_base *) a)->path,
                 ((const struct runner_base *) b)->path);
}

int
runner_baseline_take (int wsfd, struct runner_baseline *b,
                      struct cr_error **err)
{
  memset (b, 0, sizeof *b);
  if (runner_walk (wsfd, "", 0, runner_base_visit, b, err) < 0)
    return -1;
  if (b->n > 1)
    qsort (b->v, b->n, sizeof *b->v, runner_base_cmp);
  return 0;
}

void
runner_baseline_clear (struct runner_baseline *b)
{
  for (size_t i = 0; i < b->n; i++)
    {
      free (b->v[i].path);
      free (b->v[i].target);
    }
  free (b->v);
  memset (b, 0, sizeof *b);
}

/* The baseline's entry for path, or NULL.  */
static struct runner_base *
runner_base_find (struct runner_baseline *b, const char *path)
{
  struct runner_base key = { .path = (char *) path };
  return b->n ? bsearch (&key, b->v, b->n, sizeof *b->v, runner_base_cmp)
              : NULL;
}

/* --- the changes -------------------------------------------------------
 */

/* The changes being sent.  */
struct runner_send
{
  struct runner_baseline *base;
  uint64_t max, bytes, entries;
  int out;
  struct buf tar; /* archive bytes not yet sent as 'D' */
  bool over;      /* changes_max was passed */
  char *over_at;  /* the file that passed it (its size, never its
                   * content: a sparse file is never read); owned */
};

/* Send what the archive holds as 'D' frames: all of it, or only whole
 * frames.  */
static int
runner_send_flush (struct runner_send *s, bool all, struct cr_error **err)
{
  size_t at = 0;
  while (s->tar.len - at >= JOBPROTO_FRAME_MAX || (all && s->tar.len > at))
    {
      size_t n = s->tar.len - at;
      if (n > JOBPROTO_FRAME_MAX)
        n = JOBPROTO_FRAME_MAX;
      if (jobproto_write (s->out, ANS_CHANGES, s->tar.data + at, n, err) < 0)
        return -1;
      at += n;
    }
  if (at > 0)
    memmove (s->tar.data, s->tar.data + at, s->tar.len - at);
  s->tar.len -= at;
  return 0;
}

/* Send a deletion (after the archive so far, which it may follow).  */
static int
runner_send_deleted (struct runner_send *s, const char *path,
                     struct cr_error **err)
{
  if (runner_send_flush (s, true, err) < 0)
    return -1;
  s->entries++;
  return jobproto_write (s->out, ANS_DELETED, path, strlen (path), err);
}

/* Add a regular file, its content read now (the command's processes are
 * all gone, so it holds still).  */
static int
runner_send_file (struct runner_send *s, int dirfd, const char *name,
                  const char *path, const struct stat *st,
                  struct cr_error **err)
{
  cleanup_close int fd
      = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat now;
  if (fd < 0 || fstat (fd, &now) < 0 || !S_ISREG (now.st_mode))
    return 0; /* gone, or swapped: nothing of it is sent */
  uint64_t size = (uint64_t) now.st_size;
  if (size > s->max - s->bytes)
    {
      s->over = true;
      s->over_at = xstrdup (path);
      return 1;
    }
  s->bytes += size;
  s->entries++;
  struct tar_entry e = { .name = path,
                         .kind = TAR_FILE,
                         .mode = st->st_mode & 0777,
                         .size = size,
                         .mtime = now.st_mtim.tv_sec };
  if (tar_put_header (&s->tar, &e, err) < 0)
    return -1;
  for (uint64_t left = size; left > 0;)
    {
      char chunk[RUNNER_CHUNK];
      ssize_t n = read (fd, chunk, left < sizeof chunk ? left : sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return cr_error_set (err, n < 0 ? errno : 0,
                             "reading the workspace's %.200s", path);
      buf_append (&s->tar, chunk, (size_t) n);
      left -= (uint64_t) n;
      if (runner_send_flush (s, false, err) < 0)
        return -1;
    }
  tar_pad (&s->tar, size);
  return runner_send_flush (s, false, err);
}

/* Add a directory or a link header.  */
static int
runner_send_other (struct runner_send *s, int dirfd, const char *name,
                   const char *path, const struct stat *st,
                   struct cr_error **err)
{
  cleanup_free char *target
      = S_ISLNK (st->st_mode) ? runner_readlink (dirfd, name) : NULL;
  if (S_ISLNK (st->st_mode) && target == NULL)
    return 0;
  struct tar_entry e
      = { .name = path,
          .kind = S_ISDIR (st->st_mode) ? TAR_DIR : TAR_SYMLINK,
          .mode = S_ISDIR (st->st_mode) ? st->st_mode & 0777 : 0777,
          .link = target,
          .mtime = st->st_mtim.tv_sec };
  s->entries++;
  return tar_put_header (&s->tar, &e, err);
}

/* Whether a baseline file is other than it was: a write, a truncation, a
 * chmod or a replacement all move the inode or its ctime, which the
 * command cannot set back.  */
static bool
runner_file_changed (const struct runner_base *b, const struct stat *st)
{
  return b->ino != st->st_ino || b->size != st->st_size
         || b->mode != st->st_mode || b->ctime.tv_sec != st->st_ctim.tv_sec
         || b->ctime.tv_nsec != st->st_ctim.tv_nsec
         || b->mtime.tv_sec != st->st_mtim.tv_sec
         || b->mtime.tv_nsec != st->st_mtim.tv_nsec;
}

/* One path of the workspace after the command: what is new or changed
 * is sent; fifos and sockets never are.  */
static int
runner_send_visit (void *data, int dirfd, const char *name, const char *path,
                   const struct stat *st, bool *descend, struct cr_error **err)
{
  struct runner_send *s = data;
  struct runner_base *b = runner_base_find (s->base, path);
  bool isdir = S_ISDIR (st->st_mode);
  if (!isdir && !S_ISREG (st->st_mode) && !S_ISLNK (st->st_mode))
    return 0;
  *descend = isdir;
  if (b != NULL && (b->mode & S_IFMT) != (st->st_mode & S_IFMT))
    {
      /* Another kind under the same name: deleted, then made anew.  */
      b->replaced = true;
      if (runner_send_deleted (s, path, err) < 0)
        return -1;
      b = NULL;
    }
  if (b != NULL)
    b->seen = true;
  if (S_ISREG (st->st_mode))
    return b == NULL || runner_file_changed (b, st)
               ? runner_send_file (s, dirfd, name, path, st, err)
               : 0;
  if (isdir && b != NULL && (b->mode & 0777) == (st->st_mode & 0777))
    return 0;
  if (S_ISLNK (st->st_mode) && b != NULL)
    {
      cleanup_free char *t = runner_readlink (dirfd, name);
      if (t != NULL && b->target != NULL && strcmp (t, b->target) == 0)
        return 0;
    }
  return runner_send_other (s, dirfd, name, path, st, err);
}

/* Whether the baseline's entry i went, and its directory stayed (so that
 * it is the deletion to send, not something below one).  */
static bool
runner_gone_at_top (struct runner_baseline *b, size_t i)
{
  const struct runner_base *e = &b->v[i];
  if (e->seen || e->replaced)
    return false;
  const char *slash = strrchr (e->path, '/');
  if (slash == NULL)
    return true;
  cleanup_free char *parent = xstrndup (e->path, (size_t) (slash - e->path));
  const struct runner_base *p = runner_base_find (b, parent);
  return p != NULL && p->seen && !p->replaced;
}

int
runner_changes_send (int wsfd, struct runner_baseline *b, uint64_t changes_max,
                     int out_fd, struct cr_error **err)
{
  struct runner_send s = { .base = b, .max = changes_max, .out = out_fd };
  int rc = runner_walk (wsfd, "", 0, runner_send_visit, &s, err);
  if (rc == 0)
    {
      tar_end (&s.tar);
      rc = runner_send_flush (&s, true, err);
    }
  for (size_t i = 0; rc == 0 && i < b->n; i++)
    if (runner_gone_at_top (b, i))
      rc = runner_send_deleted (&s, b->v[i].path, err);
  buf_free (&s.tar);
  cleanup_free char *over_at = s.over_at;
  if (rc < 0)
    return -1;
  if (s.over)
    {
      /* The path is the workload's: crucible shows it escaped.  */
      cleanup_free char *why
          = xasprintf ("the changes are over the %llu-byte bound at %.200s",
                       (unsigned long long) changes_max, over_at);
      return jobproto_write (out_fd, ANS_FAILED, why, strlen (why), err);
    }
  char end[64];
  int n
      = snprintf (end, sizeof end, "changes=%llu bytes=%llu",
                  (unsigned long long) s.entries, (unsigned long long) s.bytes);
  return jobproto_write (out_fd, ANS_END, end, (size_t) n, err);
}
