/* The workspace root as a ustar archive (sandbox/container/workspace.h).  */
#include <config.h>

#include "sandbox/container/workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/container/jobproto.h"
#include "sandbox/container/tar.h"
#include "sandbox/pubplan.h"

/* Deeper than this, a workspace is refused rather than walked with one
 * descriptor per level.  */
#define WORKSPACE_DEPTH_MAX 256

#define WORKSPACE_CHUNK 65536

/* One walk in progress.  */
struct workspace_walk
{
  const char *const *patterns;
  uint64_t bytes_max;
  size_t entries_max;
  job_sink_fn fn;
  void *fn_data;
  struct buf out; /* archive bytes not yet handed on */
  struct job_sent *sent;
  int depth;
};

/* Whether one pattern matches rel: with a '/', the whole path; without,
 * its last name (so "*.pem" matches at any depth).  */
static bool
workspace_pattern_one (const char *pattern, const char *rel)
{
  if (strchr (pattern, '/') != NULL)
    return fnmatch (pattern, rel, FNM_PATHNAME | FNM_PERIOD) == 0;
  const char *base = strrchr (rel, '/');
  return fnmatch (pattern, base != NULL ? base + 1 : rel, FNM_PERIOD) == 0;
}

bool
workspace_pattern_hit (const char *const *patterns, const char *rel)
{
  if (patterns == NULL)
    return false;
  cleanup_free char *p = xstrdup (rel);
  /* rel, then each directory above it.  */
  for (;;)
    {
      for (size_t i = 0; patterns[i] != NULL; i++)
        if (workspace_pattern_one (patterns[i], p))
          return true;
      char *slash = strrchr (p, '/');
      if (slash == NULL)
        return false;
      *slash = '\0';
    }
}

/* Name a path the archive leaves out.  */
static void
workspace_leave_out (struct job_sent *sent, const char *rel, const char *why)
{
  sent->left_out = xrealloc (sent->left_out,
                             (sent->n_left_out + 1) * sizeof *sent->left_out);
  sent->left_out[sent->n_left_out].path = xstrdup (rel);
  sent->left_out[sent->n_left_out++].why = xstrdup (why);
}

/* Hand on what is held, in pieces of at most a frame; all of it when
 * all, else only whole frames.  */
static int
workspace_flush (struct workspace_walk *w, bool all, struct cr_error **err)
{
  size_t at = 0;
  while (w->out.len - at >= JOBPROTO_FRAME_MAX || (all && w->out.len > at))
    {
      size_t n = w->out.len - at;
      if (n > JOBPROTO_FRAME_MAX)
        n = JOBPROTO_FRAME_MAX;
      if (w->fn (w->fn_data, w->out.data + at, n, err) < 0)
        return -1;
      at += n;
    }
  if (at > 0)
    memmove (w->out.data, w->out.data + at, w->out.len - at);
  w->out.len -= at;
  return 0;
}

/* Count one entry of bytes content against the bounds.  */
static int
workspace_count (struct workspace_walk *w, uint64_t bytes,
                 struct cr_error **err)
{
  if (++w->sent->entries > w->entries_max)
    return cr_error_set (err, 0,
                         "the workspace holds more than %zu entries, the "
                         "bound of a container's workspace",
                         w->entries_max);
  if (bytes > w->bytes_max - w->sent->bytes)
    return cr_error_set (err, 0,
                         "the workspace holds more than %llu bytes, the "
                         "bound of a container's workspace",
                         (unsigned long long) w->bytes_max);
  w->sent->bytes += bytes;
  return 0;
}

/* Append a regular file's header and exactly st->st_size bytes of it.  */
static int
workspace_file (struct workspace_walk *w, int dirfd, const char *name,
                const char *rel, const struct stat *st, struct cr_error **err)
{
  cleanup_close int fd
      = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat now;
  if (fd < 0 || fstat (fd, &now) < 0 || !S_ISREG (now.st_mode))
    {
      workspace_leave_out (w->sent, rel, "it could not be opened");
      return 0;
    }
  uint64_t size = (uint64_t) now.st_size;
  if (workspace_count (w, size, err) < 0)
    return -1;
  struct tar_entry e = { .name = rel,
                         .kind = TAR_FILE,
                         .mode = st->st_mode & 0777,
                         .size = size,
                         .mtime = now.st_mtim.tv_sec };
  if (tar_put_header (&w->out, &e, err) < 0)
    return -1;
  for (uint64_t left = size; left > 0;)
    {
      char chunk[WORKSPACE_CHUNK];
      ssize_t n = read (fd, chunk, left < sizeof chunk ? left : sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return cr_error_set (err, n < 0 ? errno : 0,
                             "reading %s for the container (it shrank "
                             "while it was sent?)",
                             rel);
      buf_append (&w->out, chunk, (size_t) n);
      left -= (uint64_t) n;
      if (workspace_flush (w, false, err) < 0)
        return -1;
    }
  tar_pad (&w->out, size);
  return workspace_flush (w, false, err);
}

/* Append a symbolic link, or leave out one that points out.  */
static int
workspace_link (struct workspace_walk *w, int dirfd, const char *name,
                const char *rel, const struct stat *st, struct cr_error **err)
{
  char target[TAR_NAME_MAX + 1];
  ssize_t n = readlinkat (dirfd, name, target, sizeof target);
  if (n < 0 || (size_t) n >= sizeof target)
    {
      workspace_leave_out (w->sent, rel, "its target could not be read");
      return 0;
    }
  target[n] = '\0';
  if (!jobproto_link_inside (rel, target))
    {
      workspace_leave_out (w->sent, rel, "a link out of the workspace");
      return 0;
    }
  if (workspace_count (w, 0, err) < 0)
    return -1;
  struct tar_entry e = { .name = rel,
                         .kind = TAR_SYMLINK,
                         .mode = 0777,
                         .link = target,
                         .mtime = st->st_mtim.tv_sec };
  return tar_put_header (&w->out, &e, err);
}

static int workspace_dir (struct workspace_walk *w, int fd, const char *rel,
                          struct cr_error **err);

/* The word for a kind the archive never holds, or NULL.  */
static const char *
workspace_unsent (const struct stat *st)
{
  if (S_ISSOCK (st->st_mode))
    return "a socket";
  if (S_ISFIFO (st->st_mode))
    return "a fifo";
  if (S_ISCHR (st->st_mode) || S_ISBLK (st->st_mode))
    return "a device";
  return NULL;
}

/* One entry of a directory.  */
static int
workspace_entry (struct workspace_walk *w, int dirfd, const char *name,
                 const char *rel, struct cr_error **err)
{
  struct stat st;
  const char *why;
  if (workspace_pattern_hit (w->patterns, rel))
    {
      workspace_leave_out (w->sent, rel, "it is unreadable");
      return 0;
    }
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      workspace_leave_out (w->sent, rel, "it could not be examined");
      return 0;
    }
  if ((why = workspace_unsent (&st)) != NULL)
    {
      workspace_leave_out (w->sent, rel, why);
      return 0;
    }
  if (S_ISREG (st.st_mode))
    return workspace_file (w, dirfd, name, rel, &st, err);
  if (S_ISLNK (st.st_mode))
    return workspace_link (w, dirfd, name, rel, &st, err);
  cleanup_close int sub
      = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0)
    {
      workspace_leave_out (w->sent, rel, "it could not be opened");
      return 0;
    }
  if (workspace_count (w, 0, err) < 0)
    return -1;
  struct tar_entry e = { .name = rel,
                         .kind = TAR_DIR,
                         .mode = st.st_mode & 0777,
                         .mtime = st.st_mtim.tv_sec };
  if (tar_put_header (&w->out, &e, err) < 0)
    return -1;
  return workspace_dir (w, sub, rel, err);
}

/* Every entry of the open directory rel ("" for the root).  */
static int
workspace_dir (struct workspace_walk *w, int fd, const char *rel,
               struct cr_error **err)
{
  size_t n;
  int rc = 0;
  if (++w->depth > WORKSPACE_DEPTH_MAX)
    return cr_error_set (err, ELOOP, "archiving %s: deeper than %d levels", rel,
                         WORKSPACE_DEPTH_MAX);
  char **names = pubplan_sorted_names (fd, &n);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *child
          = rel[0] ? xasprintf ("%s/%s", rel, names[i]) : xstrdup (names[i]);
      if (rc == 0)
        rc = workspace_entry (w, fd, names[i], child, err);
      free (names[i]);
    }
  free (names);
  w->depth--;
  return rc;
}

int
workspace_archive (const char *root, const char *const *leave_out,
                   uint64_t bytes_max, size_t entries_max, job_sink_fn fn,
                   void *fn_data, struct job_sent *sent, struct cr_error **err)
{
  struct workspace_walk w = { .patterns = leave_out,
                              .bytes_max = bytes_max,
                              .entries_max = entries_max,
                              .fn = fn,
                              .fn_data = fn_data,
                              .sent = sent };
  cleanup_close int fd
      = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return cr_error_set (err, errno, "opening the workspace root %s", root);
  int rc = workspace_dir (&w, fd, "", err);
  if (rc == 0)
    {
      tar_end (&w.out);
      rc = workspace_flush (&w, true, err);
    }
  buf_free (&w.out);
  return rc;
}
