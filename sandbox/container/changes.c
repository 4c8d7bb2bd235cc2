/* The container's changes stream as a staged change set
 * (sandbox/container/changes.h).  */
#include <config.h>

#include "sandbox/container/changes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/container/tar.h"
#include "sandbox/container/workspace.h"
#include "sandbox/pubfs.h"
#include "sandbox/statedir.h"

/* The attribute overlayfs (with userxattr) marks a replacing directory
 * with, which pubplan_scan reads.  */
#define CHANGES_OPAQUE_XATTR "user.overlay.opaque"

/* A directory staged, whose mode and mtime are set once its entries are
 * in (a read-only one could not take them otherwise).  */
struct changes_dir
{
  char *path;
  mode_t mode;
  struct timespec mtime;
};

struct job_changes
{
  struct statedir_pair pair;
  char *statedir;
  char *root;
  int rootfd;
  int upperfd;
  uid_t uid; /* the upper's owner, which staged entries take */
  gid_t gid;
  uint64_t bytes_max, bytes;
  size_t entries_max, entries;
  char **patterns;  /* NULL-terminated; owned */
  char **untouched; /* the paths the archive left out; owned */
  size_t n_untouched;
  struct tar_reader tar;
  bool tar_started;
  int file_fd;           /* the regular file being written, or -1 */
  char *file_path;       /* its name */
  struct tar_entry file; /* its header (name and link not kept) */
  struct changes_dir *dirs;
  size_t n_dirs;
  char *refusal; /* why the set is refused; owned */
  bool complete;
};

const char *
changes_refusal (const struct job_changes *ch)
{
  return ch->refusal;
}

const char *
changes_upper (const struct job_changes *ch)
{
  return ch->pair.upper;
}

bool
job_changes_complete (const struct job_changes *ch)
{
  return ch->complete && ch->refusal == NULL;
}

/* Text of the workload's as the note shows it: printable ASCII, at most
 * max bytes (a control byte could draw on the person's terminal, or a
 * newline forge a line of crucible's own).  */
static char *
changes_shown_max (const char *name, size_t max)
{
  struct buf b = BUF_INIT;
  size_t i = 0;
  for (const unsigned char *p = (const unsigned char *) name; *p; p++, i++)
    {
      if (i == max)
        {
          buf_puts (&b, "...");
          break;
        }
      if (*p < ' ' || *p >= 0x7f || *p == '\\')
        buf_printf (&b, "\\x%02x", *p);
      else
        buf_putc (&b, (char) *p);
    }
  return buf_steal (&b, NULL);
}

/* A name as the note shows it: at most 100 bytes.  */
static char *
changes_shown (const char *name)
{
  return changes_shown_max (name, 100);
}

/* Refuse the whole set for what name is: the first reason stays.  -1.  */
static int
changes_refuse_path (struct job_changes *ch, const char *name, const char *why,
                     struct cr_error **err)
{
  if (ch->refusal == NULL)
    {
      if (name != NULL)
        {
          cleanup_free char *shown = changes_shown (name);
          ch->refusal = xasprintf ("%s: %s", shown, why);
        }
      else
        ch->refusal = xstrdup (why);
    }
  return cr_error_set (err, 0, "the container's changes were refused: %s",
                       ch->refusal);
}

void
job_changes_refuse (struct job_changes *ch, const char *why)
{
  struct cr_error *ignored = NULL;
  /* why may carry the runner's 'F' words, which name the workload's
   * paths (a tree too deep, a file over the bound).  */
  cleanup_free char *shown = changes_shown_max (why, 600);
  changes_refuse_path (ch, NULL, shown, &ignored);
  cr_error_free (ignored);
}

/* Copy a NULL-terminated list of strings.  */
static char **
changes_strv_copy (const char *const *v)
{
  size_t n = 0;
  while (v != NULL && v[n] != NULL)
    n++;
  char **out = xcalloc (n + 1, sizeof *out);
  for (size_t i = 0; i < n; i++)
    out[i] = xstrdup (v[i]);
  return out;
}

struct job_changes *
job_changes_new (const char *statedir, const struct job *job,
                 const struct job_sent *sent, struct cr_error **err)
{
  struct job_changes *ch = xcalloc (1, sizeof *ch);
  struct stat st;
  ch->rootfd = ch->upperfd = ch->file_fd = -1;
  ch->bytes_max = job->limits.changes_max ? job->limits.changes_max
                                          : JOB_CHANGES_MAX_DEFAULT;
  ch->entries_max
      = job->entries_max ? job->entries_max : JOB_ENTRIES_MAX_DEFAULT;
  ch->patterns = changes_strv_copy (job->leave_out);
  for (size_t i = 0; sent != NULL && i < sent->n_left_out; i++)
    {
      ch->untouched = xrealloc (ch->untouched,
                                (ch->n_untouched + 1) * sizeof *ch->untouched);
      ch->untouched[ch->n_untouched++] = xstrdup (sent->left_out[i].path);
    }
  tar_reader_init (&ch->tar);
  ch->statedir = xstrdup (statedir);
  ch->root = xstrdup (job->root);
  ch->rootfd
      = open (job->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (ch->rootfd < 0)
    {
      cr_error_set (err, errno, "opening the workspace root %s", job->root);
      job_changes_free (ch);
      return NULL;
    }
  if (statedir_pair_create (statedir, job->root, &ch->pair, err) < 0)
    {
      job_changes_free (ch);
      return NULL;
    }
  ch->upperfd
      = open (ch->pair.upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (ch->upperfd < 0 || fstat (ch->upperfd, &st) < 0)
    {
      cr_error_set (err, errno, "opening the staged changes' directory");
      job_changes_free (ch);
      return NULL;
    }
  ch->uid = st.st_uid;
  ch->gid = st.st_gid;
  return ch;
}

void
job_changes_free (struct job_changes *ch)
{
  if (ch == NULL)
    return;
  if (ch->file_fd >= 0)
    close (ch->file_fd);
  if (ch->upperfd >= 0)
    close (ch->upperfd);
  if (ch->rootfd >= 0)
    close (ch->rootfd);
  if (ch->pair.dir != NULL)
    {
      struct cr_error *ignored = NULL;
      statedir_pair_remove (&ch->pair, &ignored);
      cr_error_free (ignored);
    }
  for (size_t i = 0; ch->patterns != NULL && ch->patterns[i] != NULL; i++)
    free (ch->patterns[i]);
  free (ch->patterns);
  for (size_t i = 0; i < ch->n_untouched; i++)
    free (ch->untouched[i]);
  free (ch->untouched);
  for (size_t i = 0; i < ch->n_dirs; i++)
    free (ch->dirs[i].path);
  free (ch->dirs);
  free (ch->file_path);
  free (ch->refusal);
  free (ch->statedir);
  free (ch->root);
  tar_reader_clear (&ch->tar);
  free (ch);
}

/* --- checks ------------------------------------------------------------
 */

/* Whether a is b or a path below b.  */
static bool
changes_at_or_below (const char *a, const char *b)
{
  size_t n = strlen (b);
  return strncmp (a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

/* Whether a change at path could touch what the command never saw: a
 * left-out path at, above or below it, or a pattern matching it or a
 * directory above it.  */
static bool
changes_untouchable (const struct job_changes *ch, const char *path)
{
  if (workspace_pattern_hit ((const char *const *) ch->patterns, path))
    return true;
  for (size_t i = 0; i < ch->n_untouched; i++)
    if (changes_at_or_below (path, ch->untouched[i])
        || changes_at_or_below (ch->untouched[i], path))
      return true;
  return false;
}

/* What the root holds at path, without following links: 0 with *st, or
 * -1 when nothing is there (or it cannot be reached without a link).  */
static int
changes_root_stat (const struct job_changes *ch, const char *path,
                   struct stat *st)
{
  const char *base;
  cleanup_close int parent = pubfs_open_parent (ch->rootfd, path, &base);
  if (parent < 0)
    return -1;
  return fstatat (parent, base, st, AT_SYMLINK_NOFOLLOW);
}

/* Whether st is a whiteout (a deletion staged).  */
static bool
changes_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

/* Note a directory to finish (mode, mtime) once the stream is whole.  */
static void
changes_dir_note (struct job_changes *ch, const char *path, mode_t mode,
                  struct timespec mtime)
{
  ch->dirs = xrealloc (ch->dirs, (ch->n_dirs + 1) * sizeof *ch->dirs);
  ch->dirs[ch->n_dirs++]
      = (struct changes_dir){ xstrdup (path), mode & 07777, mtime };
}

/* Make the staged directory name in parent (at path) 0700, owned as the
 * upper is.  */
static int
changes_mkdir (struct job_changes *ch, int parent, const char *name)
{
  if (mkdirat (parent, name, 0700) < 0)
    return -1;
  if (geteuid () == 0
      && fchownat (parent, name, ch->uid, ch->gid, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  return 0;
}

/* Open the staged directory that holds path, making the directories above
 * it that the root holds (unchanged: their own mode and mtime).  -1 with
 * *why when a component is not a directory or the root has none.  */
static int
changes_upper_parent (struct job_changes *ch, const char *path,
                      const char **base, const char **why)
{
  cleanup_free char *p = xstrdup (path);
  int fd = dup (ch->upperfd);
  char *name = p;
  for (char *slash; fd >= 0 && (slash = strchr (name, '/')) != NULL;
       name = slash + 1)
    {
      *slash = '\0';
      int sub
          = openat (fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct stat st;
      if (sub < 0 && errno == ENOENT)
        {
          bool there = changes_root_stat (ch, p, &st) == 0;
          if (!there || !S_ISDIR (st.st_mode))
            {
              *why = there ? "it is below something that is not a directory"
                           : "its directory is neither in the workspace nor "
                             "in the changes";
              close (fd);
              return -1;
            }
          if (changes_mkdir (ch, fd, name) == 0)
            {
              changes_dir_note (ch, p, st.st_mode & 07777, st.st_mtim);
              sub = openat (fd, name,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            }
        }
      else if (sub < 0)
        *why = "it is below something that is not a directory";
      close (fd);
      fd = sub;
      *slash = '/';
    }
  if (fd < 0 && *why == NULL)
    *why = "its directory could not be staged";
  *base = path + (name - p);
  return fd;
}

/* The word for a kind the changes never carry.  */
static const char *
changes_kind_refused (const struct tar_entry *e)
{
  switch (e->type)
    {
    case '1':
      return "a hard link";
    case '3':
    case '4':
      return "a device";
    case '6':
      return "a fifo";
    default:
      return "an entry of a kind the changes never carry";
    }
}

/* Whether an entry's kind and st's agree.  */
static bool
changes_same_kind (const struct tar_entry *e, const struct stat *st)
{
  return (e->kind == TAR_FILE && S_ISREG (st->st_mode))
         || (e->kind == TAR_DIR && S_ISDIR (st->st_mode))
         || (e->kind == TAR_SYMLINK && S_ISLNK (st->st_mode));
}

/* The checks of one 'D' entry that need no file system.  NULL when it
 * passes, else why not.  */
static const char *
changes_entry_why (struct job_changes *ch, const struct tar_entry *e)
{
  if (!jobproto_path_ok (e->name))
    return "a name that is absolute, empty or holds \"..\"";
  if (e->kind == TAR_OTHER)
    return changes_kind_refused (e);
  if (e->mode & (S_ISUID | S_ISGID))
    return "a setuid or setgid bit";
  if (e->kind == TAR_SYMLINK && !jobproto_link_inside (e->name, e->link))
    return "a link out of the workspace";
  if (changes_untouchable (ch, e->name))
    return "it was left out of the workspace the command was given";
  if (++ch->entries > ch->entries_max)
    return "more entries than the changes' bound";
  if (e->size > ch->bytes_max - ch->bytes)
    return "more content than the changes' bound";
  ch->bytes += e->size;
  return NULL;
}

/* The checks against the root of an entry whose staged parent is open
 * (parent, base): a path the root holds keeps its kind and mode unless a
 * deletion came first, which the staged whiteout shows (and which goes
 * now).  *replaces is set for that.  */
static const char *
changes_existing_why (struct job_changes *ch, const struct tar_entry *e,
                      int parent, const char *base, bool *replaces)
{
  struct stat st, up;
  *replaces = false;
  if (fstatat (parent, base, &up, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (changes_whiteout (&up) && unlinkat (parent, base, 0) == 0)
        {
          *replaces = true;
          return NULL;
        }
      /* A directory made as the parent of an earlier entry is declared
       * now: it is checked like any directory of the root.  */
      if (!(e->kind == TAR_DIR && S_ISDIR (up.st_mode)))
        return "a path given twice";
    }
  if (changes_root_stat (ch, e->name, &st) < 0)
    return NULL;
  if (!changes_same_kind (e, &st))
    return "a change of type of a path the workspace holds";
  if (e->kind != TAR_SYMLINK && (st.st_mode & 0777) != (e->mode & 0777))
    return "a change of mode of a path the workspace holds";
  return NULL;
}

/* --- staging -----------------------------------------------------------
 */

/* Stage a directory entry (replacing: opaque, so nothing of the old one
 * shows through).  */
static int
changes_stage_dir (struct job_changes *ch, const struct tar_entry *e,
                   int parent, const char *base, bool replaces)
{
  struct stat st, low;
  struct timespec mtime = { .tv_sec = e->mtime };
  mode_t mode = e->mode & 0777;
  if (fstatat (parent, base, &st, AT_SYMLINK_NOFOLLOW) < 0
      && changes_mkdir (ch, parent, base) < 0)
    return -1;
  /* A directory the root keeps keeps all its bits (a setgid or sticky
   * bit the archive does not carry): staged otherwise, publication would
   * take them off.  */
  if (!replaces && changes_root_stat (ch, e->name, &low) == 0
      && S_ISDIR (low.st_mode))
    mode = low.st_mode & 07777;
  if (replaces)
    {
      cleanup_close int fd = openat (
          parent, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 || fsetxattr (fd, CHANGES_OPAQUE_XATTR, "y", 1, 0) < 0)
        return -1;
    }
  /* Declared after being made as a parent: the declaration's mode and
   * mtime win (they were checked to be the root's).  */
  for (size_t i = 0; i < ch->n_dirs; i++)
    if (strcmp (ch->dirs[i].path, e->name) == 0)
      {
        ch->dirs[i].mode = mode;
        ch->dirs[i].mtime = mtime;
        return 0;
      }
  changes_dir_note (ch, e->name, mode, mtime);
  return 0;
}

/* Stage a symbolic link entry, owned as the upper is.  */
static int
changes_stage_link (struct job_changes *ch, const struct tar_entry *e,
                    int parent, const char *base)
{
  struct timespec t[2] = { { .tv_sec = e->mtime }, { .tv_sec = e->mtime } };
  if (symlinkat (e->link, parent, base) < 0)
    return -1;
  if (geteuid () == 0
      && fchownat (parent, base, ch->uid, ch->gid, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  utimensat (parent, base, t, AT_SYMLINK_NOFOLLOW);
  return 0;
}

/* Start staging a regular file entry: its content follows.  */
static int
changes_stage_file (struct job_changes *ch, const struct tar_entry *e,
                    int parent, const char *base)
{
  ch->file_fd = openat (
      parent, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (ch->file_fd < 0)
    return -1;
  free (ch->file_path);
  ch->file_path = xstrdup (e->name);
  ch->file = *e;
  ch->file.name = ch->file.link = NULL;
  return 0;
}

/* The tar reader's entry: check, then stage.  */
static int
changes_on_entry (void *data, const struct tar_entry *e, struct cr_error **err)
{
  struct job_changes *ch = data;
  const char *why = changes_entry_why (ch, e), *base = NULL;
  bool replaces;
  if (why != NULL)
    return changes_refuse_path (ch, e->name, why, err);
  cleanup_close int parent = changes_upper_parent (ch, e->name, &base, &why);
  if (parent < 0)
    return changes_refuse_path (ch, e->name, why, err);
  if ((why = changes_existing_why (ch, e, parent, base, &replaces)) != NULL)
    return changes_refuse_path (ch, e->name, why, err);
  int rc = e->kind == TAR_DIR
               ? changes_stage_dir (ch, e, parent, base, replaces)
           : e->kind == TAR_SYMLINK ? changes_stage_link (ch, e, parent, base)
                                    : changes_stage_file (ch, e, parent, base);
  if (rc < 0)
    {
      int saved = errno;
      changes_refuse_path (ch, e->name, "it could not be staged", err);
      return cr_error_set (err, saved, "staging the container's change %s",
                           ch->refusal);
    }
  return 0;
}

/* The tar reader's content of the current file.  */
static int
changes_on_content (void *data, const void *bytes, size_t len,
                    struct cr_error **err)
{
  struct job_changes *ch = data;
  const char *p = bytes;
  while (len > 0)
    {
      ssize_t n = write (ch->file_fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return cr_error_set (err, n < 0 ? errno : EIO,
                             "staging the container's change %s",
                             ch->file_path);
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

/* The current file is whole: its mode, owner and mtime.  */
static int
changes_on_content_end (void *data, struct cr_error **err)
{
  struct job_changes *ch = data;
  struct timespec t[2]
      = { { .tv_sec = ch->file.mtime }, { .tv_sec = ch->file.mtime } };
  int fd = ch->file_fd;
  ch->file_fd = -1;
  int rc = 0;
  if ((geteuid () == 0 && fchown (fd, ch->uid, ch->gid) < 0)
      || fchmod (fd, ch->file.mode & 0777) < 0 || futimens (fd, t) < 0)
    rc = cr_error_set (err, errno, "staging the container's change %s",
                       ch->file_path);
  close (fd);
  return rc;
}

static const struct tar_reader_ops changes_tar_ops
    = { changes_on_entry, changes_on_content, changes_on_content_end };

/* A 'U' frame: a deletion, staged as a whiteout.  */
static int
changes_deleted (struct job_changes *ch, const uint8_t *payload, size_t len,
                 struct cr_error **err)
{
  cleanup_free char *path = xstrndup ((const char *) payload, len);
  const char *why = NULL, *base;
  struct stat st;
  if (strlen (path) != len || !jobproto_path_ok (path))
    return changes_refuse_path (ch, path,
                                "a name that is absolute, empty or holds "
                                "\"..\"",
                                err);
  if (changes_untouchable (ch, path))
    return changes_refuse_path (
        ch, path, "it was left out of the workspace the command was given",
        err);
  if (++ch->entries > ch->entries_max)
    return changes_refuse_path (ch, path,
                                "more entries than the changes' bound", err);
  /* Nothing the root holds there: there is nothing to delete.  */
  if (changes_root_stat (ch, path, &st) < 0)
    return 0;
  cleanup_close int parent = changes_upper_parent (ch, path, &base, &why);
  if (parent < 0)
    return changes_refuse_path (ch, path, why, err);
  if (mknodat (parent, base, S_IFCHR | 0600, makedev (0, 0)) < 0)
    {
      if (errno == EEXIST)
        return changes_refuse_path (ch, path, "a path given twice", err);
      int saved = errno;
      changes_refuse_path (ch, path, "its deletion could not be staged", err);
      return cr_error_set (err, saved, "staging the container's change %s",
                           ch->refusal);
    }
  return 0;
}

/* Set the staged directories' modes and mtimes, deepest first (sorted
 * last, as a child's name sorts after its parent's).  */
static int
changes_finish_dirs (struct job_changes *ch, struct cr_error **err)
{
  for (size_t i = ch->n_dirs; i-- > 0;)
    {
      const struct changes_dir *d = &ch->dirs[i];
      const char *base, *why = NULL;
      struct timespec t[2] = { d->mtime, d->mtime };
      cleanup_close int parent
          = changes_upper_parent (ch, d->path, &base, &why);
      if (parent < 0 || pubfs_chmod_dir (parent, base, d->mode) < 0
          || utimensat (parent, base, t, AT_SYMLINK_NOFOLLOW) < 0)
        return cr_error_set (err, errno, "staging the container's change %s",
                             d->path);
    }
  return 0;
}

/* A decimal count after key in text at *p ("changes=12"); false when it
 * is not there as such.  */
static bool
changes_count (const char **p, const char *key, unsigned long long *out)
{
  size_t n = strlen (key);
  char *end;
  if (strncmp (*p, key, n) != 0 || (*p)[n] < '0' || (*p)[n] > '9')
    return false;
  errno = 0;
  *out = strtoull (*p + n, &end, 10);
  *p = end;
  return errno == 0;
}

/* The 'Z' frame: the counts must be what came, the archive whole.  */
static int
changes_end (struct job_changes *ch, const uint8_t *payload, size_t len,
             struct cr_error **err)
{
  char text[64];
  unsigned long long n, bytes;
  const char *p = text;
  if (len >= sizeof text || memchr (payload, '\0', len) != NULL)
    return changes_refuse_path (ch, NULL, "a malformed end of the changes",
                                err);
  memcpy (text, payload, len);
  text[len] = '\0';
  if (!changes_count (&p, "changes=", &n) || *p++ != ' '
      || !changes_count (&p, "bytes=", &bytes) || *p != '\0')
    return changes_refuse_path (ch, NULL, "a malformed end of the changes",
                                err);
  if (n != ch->entries || bytes != ch->bytes)
    return changes_refuse_path (ch, NULL,
                                "its end counts other changes than came", err);
  if (ch->tar_started && !tar_reader_done (&ch->tar))
    return changes_refuse_path (ch, NULL, "the changes' archive is cut short",
                                err);
  if (changes_finish_dirs (ch, err) < 0)
    {
      job_changes_refuse (ch, "the staged directories could not be finished");
      return -1;
    }
  ch->complete = true;
  return 1;
}

int
job_changes_frame (struct job_changes *ch, enum jobproto_type type,
                   const uint8_t *payload, size_t len, struct cr_error **err)
{
  if (ch->refusal != NULL)
    return cr_error_set (err, 0, "the container's changes were refused: %s",
                         ch->refusal);
  if (ch->complete)
    return changes_refuse_path (ch, NULL, "frames after the end of the changes",
                                err);
  switch (type)
    {
    case ANS_CHANGES:
      ch->tar_started = true;
      if (tar_reader_feed (&ch->tar, payload, len, &changes_tar_ops, ch, err)
          < 0)
        {
          if (ch->refusal == NULL)
            {
              cleanup_free char *why = xstrdup (err != NULL && *err != NULL
                                                    ? (*err)->msg
                                                    : "a malformed archive");
              job_changes_refuse (ch, why);
            }
          return -1;
        }
      return 0;
    case ANS_DELETED:
      return changes_deleted (ch, payload, len, err);
    case ANS_END:
      return changes_end (ch, payload, len, err);
    default:
      {
        char why[64];
        snprintf (why, sizeof why, "a '%c' frame among the changes",
                  type >= ' ' && type < 0x7f ? (char) type : '?');
        return changes_refuse_path (ch, NULL, why, err);
      }
    }
}

/* --- publication -------------------------------------------------------
 */

/* What publish gives for a set that publishes nothing.  */
static void
changes_publish_refused (const struct job_changes *ch,
                         struct sandbox_publication *out)
{
  out->published_nothing = true;
  out->outcome = "refused";
  out->note = xasprintf ("[published nothing: the changes the container "
                         "sent back were refused (%s)]",
                         ch->refusal != NULL ? ch->refusal
                                             : "they ended before their end");
}

int
job_changes_publish (struct job_changes *ch, const char *call_id,
                     const struct publish_baseline *baseline,
                     const struct pubguard *guard,
                     struct sandbox_publication *out, struct cr_error **err)
{
  struct publish_report rep;
  memset (out, 0, sizeof *out);
  if (!job_changes_complete (ch))
    {
      changes_publish_refused (ch, out);
      return 0;
    }
  struct publish_request req = { .statedir = ch->statedir,
                                 .root = ch->root,
                                 .upper = ch->pair.upper,
                                 .call_id = call_id,
                                 .baseline = baseline,
                                 .guard = guard };
  if (publish_run (&req, &rep, err) < 0)
    return -1;
  publish_report_answer (&rep, out);
  publish_report_clear (&rep);
  return 0;
}
