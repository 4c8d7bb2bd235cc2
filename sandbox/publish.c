/* Publication: check, stage, journal, apply, verify, roll back, quarantine,
 * recover.  */
#include <config.h>

#include "sandbox/publish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crucible/sandbox.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/pubfs.h"
#include "sandbox/publock.h"
#include "sandbox/pubplan.h"
#include "sandbox/quarantine.h"
#include "sandbox/wal.h"

#define PUBLISH_TXN_DIR "txn"

/* Plans of at most this many changes are synced path by path.  */
#define PUBLISH_SMALL_PLAN 64

/* How many changes' names stage/ and backup/ hold in one directory.  The
 * first group's are in the directory itself, and each further group's in
 * a directory of its own, dK for changes K * PUBLISH_SLOT_GROUP on, each
 * still named by its index.  Every change is looked up or added there
 * about four times, and ext4 scans the block its name hashes to: one of
 * about 300 names in a directory of thousands, against a small block
 * here (a 10,000-file publication spent a fifth of its time on it).
 * Equal to PUBLISH_SMALL_PLAN, so a plan synced path by path has only
 * the top directory's to sync.  */
#define PUBLISH_SLOT_GROUP PUBLISH_SMALL_PLAN

/* stage/ or backup/ of a transaction, and the group directory last
 * opened in it.  */
struct publish_slots
{
  int top;
  int fd;       /* group's directory, or -1 */
  size_t group; /* which group fd is, when it is open */
};

#define PUBLISH_SLOTS_NONE                                                     \
  {                                                                            \
    .top = -1, .fd = -1, .group = 0                                            \
  }

/* The most left-out paths named in a result; the rest are counted.  */
#define PUBLISH_NAMED_MAX 20

/* One transaction in progress.  */
struct publish_txn
{
  const char *statedir;
  const char *root;
  char *id;
  char *dir; /* statedir/txn/ID */
  int dirfd;
  int rootfd;
  struct publish_slots stage;
  struct publish_slots backup;
  int wal;
  struct pubplan *plan;
  struct pubfs_dir parents; /* the root's directory last opened */
  bool small;               /* synced path by path (publish_small) */
};

void
publish_report_clear (struct publish_report *rep)
{
  publish_tidy (&rep->tidy);
  free (rep->note);
  free (rep->quarantine_id);
  memset (rep, 0, sizeof *rep);
}

void
publish_report_answer (struct publish_report *rep,
                       struct sandbox_publication *out)
{
  static const char *const words[] = {
    [PUBLISH_NOTHING] = "unchanged",
    [PUBLISH_DONE] = "published",
    [PUBLISH_BUSY] = "busy",
    [PUBLISH_REFUSED_COUNT] = "refused",
    [PUBLISH_REFUSED_CHANGED] = "refused",
    [PUBLISH_ROLLED_BACK] = "rolled_back",
    [PUBLISH_QUARANTINED] = "quarantined",
  };
  out->busy = rep->status == PUBLISH_BUSY;
  out->published_nothing = rep->status != PUBLISH_DONE
                           && rep->status != PUBLISH_NOTHING && !out->busy;
  out->outcome = words[rep->status];
  out->paths = rep->published;
  out->bytes = rep->bytes;
  out->note = rep->note;
  rep->note = NULL;
}

/* --- notes ---------------------------------------------------------------
 */

/* "[not published: a (a socket), b (a fifo)]", or NULL.  */
static char *
publish_note_left_out (const struct pubplan *plan)
{
  struct buf b = BUF_INIT;
  if (plan->n_left_out == 0)
    return NULL;
  buf_puts (&b, "[not published: ");
  for (size_t i = 0; i < plan->n_left_out && i < PUBLISH_NAMED_MAX; i++)
    buf_printf (&b, "%s%s", i ? ", " : "", plan->left_out[i]);
  if (plan->n_left_out > PUBLISH_NAMED_MAX)
    buf_printf (&b, " and %zu more", plan->n_left_out - PUBLISH_NAMED_MAX);
  buf_puts (&b, "; everything else it wrote was published]");
  return buf_steal (&b, NULL);
}

char *
publish_note_wait_over (int64_t ms)
{
  return xasprintf ("[published nothing: another publication held the "
                    "workspace for longer than %" PRId64
                    " seconds, so what the command wrote was discarded]",
                    (ms + 999) / 1000);
}

/* --- the transaction's steps ---------------------------------------------
 */

/* Open a directory of the transaction.  */
static int
publish_subdir (int dirfd, const char *name)
{
  if (mkdirat (dirfd, name, 0700) < 0 && errno != EEXIST)
    return -1;
  return openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The directory holding change i's name in slots (written to out, n
 * bytes): the top one for the first group, the group's own for the rest,
 * made first when make is set.  A group's directory that is missing when
 * reading is looked for in the top one, where a transaction left by a
 * build before groups holds every name.  The descriptor is the slots';
 * -1 on failure (errno).  */
static int
publish_slot (struct publish_slots *s, size_t i, bool make, char *out, size_t n)
{
  size_t group = i / PUBLISH_SLOT_GROUP;
  char dir[32];

  snprintf (out, n, "%zu", i);
  if (group == 0)
    return s->top;
  if (s->fd >= 0 && s->group == group)
    return s->fd;
  if (s->fd >= 0)
    close (s->fd);
  snprintf (dir, sizeof dir, "d%zu", group);
  s->fd = make ? publish_subdir (s->top, dir)
               : openat (s->top, dir,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  s->group = group;
  if (s->fd < 0 && !make && errno == ENOENT)
    return s->top;
  return s->fd;
}

/* The temporary name a change is written under before its rename.  */
static void
publish_tmp_name (char *out, size_t n, size_t i)
{
  snprintf (out, n, ".crucible-publish-%zu.tmp", i);
}

/* Open the root's directory holding path, through the transaction's
 * cache: the descriptor is the cache's, not the caller's.  */
static int
publish_parent (struct publish_txn *t, const char *path, const char **base)
{
  if (t->parents.rootfd != t->rootfd)
    {
      pubfs_dir_forget (&t->parents);
      pubfs_dir_init (&t->parents, t->rootfd);
    }
  return pubfs_dir_parent (&t->parents, path, base);
}

/* Whether applying or undoing c makes, removes or replaces a directory,
 * so that a directory opened before it may no longer be the one its path
 * names: the cache is forgotten around it.  */
static bool
publish_touches_dirs (const struct pubplan_change *c)
{
  return c->kind == PUBPLAN_DIR || c->kind == PUBPLAN_DELETE
         || c->before == PUBPLAN_WAS_TREE || c->before == PUBPLAN_WAS_DIRMETA;
}

/* Back up the regular file parent/base (seen as st) as backup/name, with
 * its digest.  A file with no other name is linked rather than copied:
 * applying the change renames a new file over its name, so from then on
 * the backup is the only name left to its content, whose digest still
 * proves it before it is restored.  A file with other names (which anyone
 * could write through), or one that cannot be linked (another
 * filesystem, another owner's file), is copied as before.  */
static int
publish_backup_file (int parent, const char *base, const struct stat *st,
                     int backupfd, const char *name, struct pubplan_change *c)
{
  if (st->st_nlink == 1)
    {
      if (wal_fault_enospc ("stage"))
        return errno = ENOSPC, -1;
      if (linkat (parent, base, backupfd, name, 0) == 0)
        {
          struct stat bst;
          /* The name could have been swapped between the look and the
           * link: the backup must be the file that was looked at.  */
          if (fstatat (backupfd, name, &bst, AT_SYMLINK_NOFOLLOW) == 0
              && bst.st_ino == st->st_ino && bst.st_dev == st->st_dev
              && bst.st_nlink == 2)
            return pubfs_digest (backupfd, name, c->before_digest);
          if (unlinkat (backupfd, name, 0) < 0)
            return -1;
        }
      else if (errno == ENOSPC || errno == EDQUOT || errno == EIO)
        return -1;
    }
  return pubfs_copy_file (parent, base, backupfd, name, NULL, c->before_digest,
                          "stage");
}

/* Record what change i's path is at the baseline, backing it up.  */
static int
publish_backup_one (struct publish_txn *t, size_t i)
{
  struct pubplan_change *c = &t->plan->changes[i];
  const char *base;
  char name[32];
  struct stat st;

  int backupfd = publish_slot (&t->backup, i, true, name, sizeof name);
  if (backupfd < 0)
    return -1;
  int parent = publish_parent (t, c->path, &base);
  if (parent < 0 || fstatat (parent, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
        return -1;
      c->before = PUBPLAN_WAS_ABSENT;
      return 0;
    }
  c->before_mode = st.st_mode & 07777;
  c->before_mtime = st.st_mtim;
  if (S_ISDIR (st.st_mode) && c->kind == PUBPLAN_DIR && !c->opaque)
    c->before = PUBPLAN_WAS_DIRMETA;
  else if (S_ISREG (st.st_mode))
    {
      c->before = PUBPLAN_WAS_FILE;
      return publish_backup_file (parent, base, &st, backupfd, name, c);
    }
  else if (S_ISLNK (st.st_mode))
    {
      char target[PATH_MAX + 1];
      ssize_t n = readlinkat (parent, base, target, sizeof target - 1);
      if (n < 0)
        return -1;
      target[n] = '\0';
      c->before = PUBPLAN_WAS_LINK;
      c->before_target = xstrdup (target);
    }
  else
    {
      c->before = PUBPLAN_WAS_TREE;
      return pubfs_copy_tree (parent, base, backupfd, name, "stage");
    }
  return 0;
}

/* Stage change i's new content from the upper: 0, -1 on failure (errno),
 * -2 when content the scan judged is no longer what the upper holds.  */
static int
publish_stage_one (struct publish_txn *t, struct pubfs_dir *up, size_t i)
{
  struct pubplan_change *c = &t->plan->changes[i];
  const char *base;
  char name[32];

  if (c->kind != PUBPLAN_FILE)
    return 0;
  int stagefd = publish_slot (&t->stage, i, true, name, sizeof name);
  if (stagefd < 0)
    return -1;
  int parent = pubfs_dir_parent (up, c->path, &base);
  struct pubfs_meta m = { .mode = 0600, .mtime = c->mtime };
  if (parent < 0)
    return -1;
  if (wal_fault_enospc ("stage"))
    return errno = ENOSPC, -1;
  /* Content the scan judged (a new repository's git configuration) is
   * copied, so that what is staged is no file anything else holds open,
   * and must be the bytes judged: a descriptor the command passed out
   * over a granted Unix socket can still write the upper once the scope
   * is gone (tests/security/fdpass.sh).  */
  if (c->judged[0] != '\0')
    {
      if (pubfs_copy_file (parent, base, stagefd, name, &m, c->digest, "stage")
          < 0)
        return -1;
      return strcmp (c->digest, c->judged) == 0 ? 0 : -2;
    }
  /* Anything else is pinned by a hard link, without a copy: a write to
   * it after this (through such a descriptor) fails the verification
   * against the digest taken here, and the root is rolled back.  */
  if (linkat (parent, base, stagefd, name, 0) == 0)
    return pubfs_digest (stagefd, name, c->digest);
  return pubfs_copy_file (parent, base, stagefd, name, &m, c->digest, "stage");
}

/* Rename parent/tmp, a file just written, to base.  A file that was
 * there (a file or a link, as the backup saw it) is exchanged with tmp
 * rather than renamed over: ext4 (auto_da_alloc) writes a new file
 * renamed over another back to the disc at once, one synchronous write
 * per file, where the root's sync before the applied record writes them
 * all together, and the exchange is just as atomic at base.  The old
 * file, now named tmp, is unlinked (its content stays in backup/).
 * Should base have become a directory meanwhile, the exchange is undone
 * and the change fails, as a rename over it would have.  */
static int
publish_replace (int parent, const char *tmp, const char *base,
                 const struct pubplan_change *c, bool small)
{
  /* A small plan fsyncs each file it applies anyway: there the write the
   * rename starts is no extra, and the exchange's unlink would be.  */
  if (small || (c->before != PUBPLAN_WAS_FILE && c->before != PUBPLAN_WAS_LINK))
    return renameat (parent, tmp, parent, base);
  if (renameat2 (parent, tmp, parent, base, RENAME_EXCHANGE) < 0)
    return errno == EINVAL || errno == ENOENT || errno == ENOSYS
               ? renameat (parent, tmp, parent, base)
               : -1;
  if (unlinkat (parent, tmp, 0) == 0)
    return 0;
  int saved = errno;
  renameat2 (parent, tmp, parent, base, RENAME_EXCHANGE);
  return errno = saved, -1;
}

/* Apply change i to the root (the cache as publish_apply_one leaves it).  */
static int
publish_apply_do (struct publish_txn *t, size_t i)
{
  struct pubplan_change *c = &t->plan->changes[i];
  const char *base;
  char stage[32], tmp[48];
  struct pubfs_meta m = { .mode = c->mode,
                          .uid = c->uid,
                          .gid = c->gid,
                          .mtime = c->mtime,
                          .from_upper = true };

  publish_tmp_name (tmp, sizeof tmp, i);
  int parent = publish_parent (t, c->path, &base);
  if (parent < 0)
    return -1;
  bool keep_dir = c->kind == PUBPLAN_DIR && c->before == PUBPLAN_WAS_DIRMETA;
  bool replace = c->before == PUBPLAN_WAS_TREE
                 || (c->kind == PUBPLAN_DIR && !keep_dir)
                 || c->kind == PUBPLAN_DELETE;
  if (replace && pubfs_remove_tree (parent, base) < 0)
    return -1;
  switch (c->kind)
    {
    case PUBPLAN_FILE:
      {
        /* The temporary name is made exclusively; one left by an earlier
         * run that died is removed and the copy made again.  */
        int stagefd = publish_slot (&t->stage, i, false, stage, sizeof stage);
        if (stagefd < 0)
          return -1;
        int rc
            = pubfs_copy_file (stagefd, stage, parent, tmp, &m, NULL, "apply");
        if (rc < 0 && errno == EEXIST && pubfs_remove_tree (parent, tmp) == 0)
          rc = pubfs_copy_file (stagefd, stage, parent, tmp, &m, NULL, "apply");
        return rc < 0 ? -1 : publish_replace (parent, tmp, base, c, t->small);
      }
    case PUBPLAN_LINK:
      {
        struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, c->mtime };
        if (pubfs_remove_tree (parent, tmp) < 0
            || symlinkat (c->target, parent, tmp) < 0)
          return -1;
        if (geteuid () == 0)
          fchownat (parent, tmp, c->uid, c->gid, AT_SYMLINK_NOFOLLOW);
        utimensat (parent, tmp, times, AT_SYMLINK_NOFOLLOW);
        return renameat (parent, tmp, parent, base);
      }
    case PUBPLAN_DIR:
      if (!keep_dir && mkdirat (parent, base, 0700) < 0)
        return -1;
      if (geteuid () == 0
          && fchownat (parent, base, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
      return pubfs_chmod_dir (parent, base, c->mode);
    case PUBPLAN_DELETE:
      return 0;
    }
  return 0;
}

/* Give directories their mtimes, deepest first, after their contents.  */
static void
publish_dir_times (struct publish_txn *t, bool before)
{
  for (size_t i = t->plan->n; i-- > 0;)
    {
      struct pubplan_change *c = &t->plan->changes[i];
      const char *base;
      if (before ? c->before != PUBPLAN_WAS_DIRMETA : c->kind != PUBPLAN_DIR)
        continue;
      struct timespec times[2]
          = { { .tv_nsec = UTIME_OMIT }, before ? c->before_mtime : c->mtime };
      int parent = pubfs_open_parent (t->rootfd, c->path, &base);
      if (parent >= 0)
        {
          utimensat (parent, base, times, AT_SYMLINK_NOFOLLOW);
          close (parent);
        }
    }
}

/* Whether base (seen as st) is a symbolic link to exactly want.  */
static bool
publish_is_link_to (int parent, const char *base, const struct stat *st,
                    const char *want)
{
  char target[PATH_MAX + 1];
  ssize_t n;

  if (!S_ISLNK (st->st_mode))
    return false;
  n = readlinkat (parent, base, target, sizeof target);
  return n >= 0 && (size_t) n == strlen (want)
         && memcmp (target, want, (size_t) n) == 0;
}

/* Whether the root holds change i as published (after) or as it was
 * (before).  */
static bool
publish_holds (struct publish_txn *t, size_t i, bool after)
{
  struct pubplan_change *c = &t->plan->changes[i];
  const char *base;
  char hex[SHA256_HEX_LEN + 1], tmp[48], name[32];
  struct stat st;

  publish_tmp_name (tmp, sizeof tmp, i);
  int parent = publish_parent (t, c->path, &base);
  struct stat tst;
  /* Before, a temporary name left beside the path is a change not undone
   * yet (after, it never is: applying renamed it).  */
  if (!after && parent >= 0
      && fstatat (parent, tmp, &tst, AT_SYMLINK_NOFOLLOW) == 0)
    return false;
  bool absent
      = parent < 0 || fstatat (parent, base, &st, AT_SYMLINK_NOFOLLOW) < 0;
  if (absent)
    return after ? c->kind == PUBPLAN_DELETE : c->before == PUBPLAN_WAS_ABSENT;
  if (after)
    switch (c->kind)
      {
      case PUBPLAN_FILE:
        return S_ISREG (st.st_mode) && (st.st_mode & 07777) == c->mode
               && (uint64_t) st.st_size == c->size
               && pubfs_digest (parent, base, hex) == 0
               && strcmp (hex, c->digest) == 0;
      case PUBPLAN_DIR:
        return S_ISDIR (st.st_mode) && (st.st_mode & 07777) == c->mode;
      case PUBPLAN_LINK:
        return publish_is_link_to (parent, base, &st, c->target);
      case PUBPLAN_DELETE:
        return false;
      }
  switch (c->before)
    {
    case PUBPLAN_WAS_ABSENT:
      return false;
    case PUBPLAN_WAS_FILE:
      return S_ISREG (st.st_mode) && (st.st_mode & 07777) == c->before_mode
             && pubfs_digest (parent, base, hex) == 0
             && strcmp (hex, c->before_digest) == 0;
    case PUBPLAN_WAS_LINK:
      return publish_is_link_to (parent, base, &st, c->before_target);
    case PUBPLAN_WAS_TREE:
      {
        int backupfd = publish_slot (&t->backup, i, false, name, sizeof name);
        return backupfd >= 0 && pubfs_same_tree (parent, base, backupfd, name);
      }
    case PUBPLAN_WAS_DIRMETA:
      return S_ISDIR (st.st_mode) && (st.st_mode & 07777) == c->before_mode;
    }
  return false;
}

/* Whether every change holds as published (after) or as it was.  */
static bool
publish_verify (struct publish_txn *t, bool after)
{
  for (size_t i = 0; i < t->plan->n; i++)
    if (!publish_holds (t, i, after))
      return false;
  return true;
}

/* Copy change i's backup (name) to parent/tmp with the file's old
 * metadata, proving the copy against the backup's digest.  A copy that
 * does not match is removed and nothing is restored over what is there:
 * the rollback is then unproved, and kept in quarantine.  The proof is
 * of what was copied, not of a read before it: a linked backup is the
 * file's old inode, which a process that had it open can still write.  */
static int
publish_undo_copy (const struct pubplan_change *c, int backupfd,
                   const char *name, int parent, const char *tmp)
{
  struct stat st;
  char hex[SHA256_HEX_LEN + 1];

  if (fstatat (backupfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  struct pubfs_meta m = { .mode = c->before_mode,
                          .uid = st.st_uid,
                          .gid = st.st_gid,
                          .mtime = c->before_mtime };
  if (pubfs_copy_file (backupfd, name, parent, tmp, &m, hex, NULL) < 0)
    return -1;
  if (strcmp (hex, c->before_digest) != 0)
    {
      unlinkat (parent, tmp, 0);
      return errno = EIO, -1;
    }
  return 0;
}

/* Put change i's path back as it was (the cache as publish_undo_one
 * leaves it).  */
static int
publish_undo_do (struct publish_txn *t, size_t i)
{
  struct pubplan_change *c = &t->plan->changes[i];
  const char *base;
  char name[32], tmp[48];
  int backupfd = -1;

  publish_tmp_name (tmp, sizeof tmp, i);
  int parent = publish_parent (t, c->path, &base);
  if (parent < 0)
    /* Its directory is gone or was never made: an earlier change in the
     * plan, undone after this one, puts back what was there.  */
    return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -1;
  if (pubfs_remove_tree (parent, tmp) < 0)
    return -1;
  if (publish_holds (t, i, false))
    return 0;
  if ((c->before == PUBPLAN_WAS_FILE || c->before == PUBPLAN_WAS_TREE)
      && (backupfd = publish_slot (&t->backup, i, false, name, sizeof name))
             < 0)
    return -1;
  /* The file comes back from its backup only as a proved copy.  */
  if (c->before == PUBPLAN_WAS_FILE
      && publish_undo_copy (c, backupfd, name, parent, tmp) < 0)
    return -1;
  if (c->before == PUBPLAN_WAS_DIRMETA)
    {
      struct stat st;
      if (fstatat (parent, base, &st, AT_SYMLINK_NOFOLLOW) == 0
          && !S_ISDIR (st.st_mode) && pubfs_remove_tree (parent, base) < 0)
        return -1;
      if (mkdirat (parent, base, c->before_mode) < 0 && errno != EEXIST)
        return -1;
      return pubfs_chmod_dir (parent, base, c->before_mode);
    }
  if (pubfs_remove_tree (parent, base) < 0)
    return -1;
  switch (c->before)
    {
    case PUBPLAN_WAS_FILE:
      return renameat (parent, tmp, parent, base);
    case PUBPLAN_WAS_LINK:
      {
        struct timespec times[2]
            = { { .tv_nsec = UTIME_OMIT }, c->before_mtime };
        if (symlinkat (c->before_target, parent, base) < 0)
          return -1;
        utimensat (parent, base, times, AT_SYMLINK_NOFOLLOW);
        return 0;
      }
    case PUBPLAN_WAS_TREE:
      return pubfs_copy_tree (backupfd, name, parent, base, NULL);
    default:
      return 0;
    }
}

/* Run step on change i, forgetting the directory cache around a change
 * that makes, removes or replaces directories.  */
static int
publish_change (struct publish_txn *t, size_t i,
                int (*step) (struct publish_txn *, size_t))
{
  bool dirs = publish_touches_dirs (&t->plan->changes[i]);
  if (dirs)
    pubfs_dir_forget (&t->parents);
  int rc = step (t, i);
  if (dirs)
    {
      int saved = errno;
      pubfs_dir_forget (&t->parents);
      errno = saved;
    }
  return rc;
}

/* Apply change i to the root.  */
static int
publish_apply_one (struct publish_txn *t, size_t i)
{
  return publish_change (t, i, publish_apply_do);
}

/* Put change i's path back as it was.  Idempotent: recovery may run it
 * over a change that was never applied, or twice.  */
static int
publish_undo_one (struct publish_txn *t, size_t i)
{
  return publish_change (t, i, publish_undo_do);
}

/* --- the transaction -----------------------------------------------------
 */

/* Close what a transaction holds (the plan is the caller's).  */
static void
publish_txn_close (struct publish_txn *t)
{
  pubfs_dir_forget (&t->parents);
  int *fds[] = { &t->dirfd,      &t->rootfd,    &t->stage.top, &t->stage.fd,
                 &t->backup.top, &t->backup.fd, &t->wal };
  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
  free (t->id);
  free (t->dir);
  t->id = t->dir = NULL;
}

/* Remove the directory name below the directory parent.  */
static void
publish_remove_below (const char *parent, const char *name)
{
  cleanup_close int fd
      = open (parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0)
    pubfs_remove_tree (fd, name);
}

/* Remove a finished transaction's directory.  */
static void
publish_txn_remove (struct publish_txn *t)
{
  cleanup_free char *parent = xasprintf ("%s/" PUBLISH_TXN_DIR, t->statedir);
  publish_remove_below (parent, t->id);
}

void
publish_tidy (char **dir)
{
  char *slash = *dir != NULL ? strrchr (*dir, '/') : NULL;
  if (slash != NULL && slash != *dir)
    {
      *slash = '\0';
      publish_remove_below (*dir, slash + 1);
    }
  free (*dir);
  *dir = NULL;
}

/* Keep a transaction whose rollback could not be proved.  */
static void
publish_txn_quarantine (struct publish_txn *t, const char *why,
                        struct publish_report *rep)
{
  struct cr_error *err = NULL;
  if (quarantine_keep (t->statedir, t->id, why, &err) < 0)
    cr_error_free (err);
  rep->status = PUBLISH_QUARANTINED;
  rep->quarantine_id = xstrdup (t->id);
}

/* Roll the root back to its baseline and prove it; quarantine otherwise.
 * Returns 0 when proved.  */
static int
publish_rollback (struct publish_txn *t, struct publish_report *rep)
{
  struct cr_error *err = NULL;
  int rc = 0;

  if (wal_append (t->wal, WAL_ROLLBACK, "", 0, &err) < 0)
    cr_error_clear (&err); /* the log may be what failed: roll back anyway */
  pubfs_dir_forget (&t->parents);
  for (size_t i = t->plan->n; i-- > 0;)
    if (publish_undo_one (t, i) < 0)
      rc = -1;
  publish_dir_times (t, true);
  syncfs (t->rootfd);
  if (rc == 0 && publish_verify (t, false)
      && wal_append (t->wal, WAL_ROLLEDBACK, "", 0, &err) == 0)
    {
      rep->status = PUBLISH_ROLLED_BACK;
      publish_txn_remove (t);
      return 0;
    }
  cr_error_free (err);
  publish_txn_quarantine (t, "its rollback could not be proved", rep);
  return -1;
}

/* Begin: the transaction's directory and its log's first record.  */
static int
publish_txn_begin (struct publish_txn *t, const char *call_id,
                   struct cr_error **err)
{
  struct timespec now = publock_now (), mono;
  cleanup_free char *parent = xasprintf ("%s/" PUBLISH_TXN_DIR, t->statedir);

  /* Unique: the time, the process and a monotonic nanosecond count (two
   * transactions of one process never share one).  */
  clock_gettime (CLOCK_MONOTONIC, &mono);
  t->id = xasprintf ("%lld-%ld-%lld%09ld", (long long) now.tv_sec,
                     (long) getpid (), (long long) mono.tv_sec, mono.tv_nsec);
  t->dir = xasprintf ("%s/%s", parent, t->id);
  if ((mkdir (parent, 0700) < 0 && errno != EEXIST) || mkdir (t->dir, 0700) < 0)
    return cr_error_set (err, errno, "making the publication's directory");
  t->dirfd = open (t->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (t->dirfd < 0 || (t->stage.top = publish_subdir (t->dirfd, "stage")) < 0
      || (t->backup.top = publish_subdir (t->dirfd, "backup")) < 0)
    return cr_error_set (err, errno, "making the publication's directory");
  if ((t->wal = wal_create (t->dirfd, err)) < 0)
    return -1;
  cleanup_free char *root = pubplan_escape (t->root);
  cleanup_free char *call = pubplan_escape (call_id ? call_id : "");
  cleanup_free char *begin = xasprintf ("root %s\ncall %s\ntime %lld\n", root,
                                        call, (long long) now.tv_sec);
  return wal_append (t->wal, WAL_BEGIN, begin, strlen (begin), err);
}

/* Whether a plan is small enough to sync path by path: syncfs costs what
 * the whole filesystem has unwritten, whoever wrote it, and a few fsyncs
 * cost what was changed.  A plan that backs up whole trees is synced
 * whole.  */
static bool
publish_small (const struct publish_txn *t)
{
  if (t->plan->n > PUBLISH_SMALL_PLAN)
    return false;
  for (size_t i = 0; i < t->plan->n; i++)
    if (t->plan->changes[i].before == PUBPLAN_WAS_TREE)
      return false;
  return true;
}

/* Sync dir/name (a file or directory; a link has nothing of its own to
 * sync beyond its directory entry).  */
static int
publish_sync_at (int dir, const char *name)
{
  cleanup_close int fd
      = openat (dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno == ELOOP || errno == ENOENT ? 0 : -1;
  return fsync (fd);
}

/* Whether the plan backs up a whole tree (a directory replaced or
 * deleted).  */
static bool
publish_has_tree (const struct publish_txn *t)
{
  for (size_t i = 0; i < t->plan->n; i++)
    if (t->plan->changes[i].before == PUBPLAN_WAS_TREE)
      return true;
  return false;
}

/* Make the backups durable, so that nothing in the root is touched until
 * it can be put back: each backed-up file and the directories holding
 * them, or the whole filesystem for a large plan (an fsync costs a flush
 * of the disc's cache each; syncfs one).  With with_log, the log's staged
 * record (written, not synced) is made durable in the same sync: syncfs
 * of the transaction directory's filesystem holds the log too, and a
 * small plan's fsyncs end with the log's.  The staged files need not be
 * durable: recovery never reads them (a staged plan without a commit is
 * rolled back from the backups), and the root is synced after they are
 * copied into it.  */
static int
publish_sync_staged (struct publish_txn *t, bool with_log)
{
  /* A small plan's backups are all in the top directory: no group's.  */
  _Static_assert(PUBLISH_SLOT_GROUP >= PUBLISH_SMALL_PLAN,
                 "a plan synced path by path has one backup directory");
  if (!publish_small (t))
    return syncfs (t->dirfd);
  for (size_t i = 0; i < t->plan->n; i++)
    {
      char name[32];
      snprintf (name, sizeof name, "%zu", i);
      if (t->plan->changes[i].before == PUBPLAN_WAS_FILE
          && publish_sync_at (t->backup.top, name) < 0)
        return -1;
    }
  if (fsync (t->backup.top) < 0 || fsync (t->dirfd) < 0)
    return -1;
  return with_log ? fdatasync (t->wal) : 0;
}

/* Make what was applied durable: each changed path and the directory
 * holding it, or the whole filesystem for a large plan.  */
static int
publish_sync_root (struct publish_txn *t)
{
  if (!publish_small (t))
    return syncfs (t->rootfd);
  for (size_t i = 0; i < t->plan->n; i++)
    {
      const char *base;
      cleanup_close int parent
          = pubfs_open_parent (t->rootfd, t->plan->changes[i].path, &base);
      if (parent < 0 && (errno == ENOENT || errno == ENOTDIR))
        continue; /* removed with a directory above it */
      if (parent < 0 || publish_sync_at (parent, base) < 0
          || fsync (parent) < 0)
        return -1;
    }
  return 0;
}

/* Whether the root and the transaction (in the state directory) are on
 * one filesystem, so that a syncfs of either syncs both.  */
static bool
publish_same_fs (const struct publish_txn *t)
{
  struct stat r, d;
  return fstat (t->rootfd, &r) == 0 && fstat (t->dirfd, &d) == 0
         && r.st_dev == d.st_dev;
}

/* Back up and stage every change, then log the plan.  */
static int
publish_txn_stage (struct publish_txn *t, const char *upper,
                   struct cr_error **err)
{
  cleanup_close int upperfd
      = open (upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (upperfd < 0)
    return cr_error_set (err, errno, "opening the command's upper directory");
  struct pubfs_dir up;
  pubfs_dir_init (&up, upperfd);
  for (size_t i = 0; i < t->plan->n; i++)
    {
      int rc
          = publish_backup_one (t, i) < 0 ? -1 : publish_stage_one (t, &up, i);
      if (rc == 0)
        continue;
      int saved = errno;
      pubfs_dir_forget (&up);
      if (rc == -2)
        return cr_error_set (err, 0, "%s was changed after the command ended",
                             t->plan->changes[i].path);
      return cr_error_set (err, saved, "staging %s", t->plan->changes[i].path);
    }
  pubfs_dir_forget (&up);
  size_t len;
  cleanup_free char *text = pubplan_serialize (t->plan, &len);
  /* A plan that backs up a whole tree syncs its backups before the log
   * says staged: its rollback compares each such path with its backup
   * before deciding whether to restore it, so the backup must be whole
   * whenever the record can be read.  */
  if (publish_has_tree (t))
    {
      if (publish_sync_staged (t, false) < 0)
        return cr_error_set (err, errno, "syncing what was staged");
      return wal_append (t->wal, WAL_STAGED, text, len, err);
    }
  /* Any other plan writes the staged record first and makes it and the
   * backups durable in one sync (one flush of the disc instead of two).
   * The order between them does not matter, because nothing in the root
   * is touched before that sync has returned: a crash before it leaves
   * either no staged record on the disc (recovery removes a transaction
   * that never touched the root) or one whose backups may be missing; its
   * rollback (publish_undo_do) then finds every path still holding what
   * the plan recorded it was (a file by its digest, which the root's own
   * file still has; a link by its target; a directory by its mode; an
   * absent path by its absence) and restores nothing, so no missing
   * backup is ever read, and the rollback verifies.  */
  if (wal_write (t->wal, WAL_STAGED, text, len, err) < 0)
    return -1;
  if (publish_sync_staged (t, true) < 0)
    return cr_error_set (err, errno, "syncing what was staged");
  wal_fault (wal_step_name (WAL_STAGED));
  return 0;
}

/* Apply, verify, count and commit.  */
static int
publish_txn_apply (struct publish_txn *t, struct cr_error **err)
{
  t->small = publish_small (t);
  for (size_t i = 0; i < t->plan->n; i++)
    {
      char index[32];
      int n = snprintf (index, sizeof index, "%zu", i);
      if (wal_append (t->wal, WAL_APPLY, index, (size_t) n, err) < 0)
        return -1;
      if (publish_apply_one (t, i) < 0)
        return cr_error_set (err, errno, "publishing %s",
                             t->plan->changes[i].path);
    }
  publish_dir_times (t, false);
  /* The next count is written now, unsynced, when the root's syncfs below
   * also syncs the state directory's filesystem; it is counted (renamed
   * over the count file) only once the root is verified, as before.  A
   * crash between leaves a next count that is not counted and that the
   * next publication writes again.  */
  bool together = !publish_small (t) && publish_same_fs (t);
  if (publock_count_prepare (t->statedir, t->root, !together, err) < 0)
    return -1;
  if (publish_sync_root (t) < 0)
    return cr_error_set (err, errno, "syncing the workspace");
  if (wal_append (t->wal, WAL_APPLIED, "", 0, err) < 0)
    return -1;
  if (!publish_verify (t, true))
    return cr_error_set (err, 0,
                         "the workspace does not hold what was "
                         "published");
  if (wal_append (t->wal, WAL_VERIFIED, "", 0, err) < 0
      || publock_count_commit (t->statedir, t->root, err) < 0)
    return -1;
  return wal_append (t->wal, WAL_COMMIT, "", 0, err);
}

/* "[published nothing: WHAT; ...]" for a failure.  */
static char *
publish_note_failed (const struct publish_report *rep, const char *why)
{
  if (rep->status == PUBLISH_QUARANTINED)
    return xasprintf ("[published nothing: publication failed (%s) and the "
                      "workspace could not be proved rolled back; what was "
                      "staged is kept in quarantine as %s (crucible sandbox "
                      "quarantine list)]",
                      why, rep->quarantine_id);
  return xasprintf ("[published nothing: publication failed (%s) and the "
                    "workspace was left as it was]",
                    why);
}

/* Run the whole transaction under the lock.  */
static void
publish_transact (struct publish_txn *t, const struct publish_request *req,
                  struct publish_report *rep)
{
  struct cr_error *err = NULL;
  bool staged = false;

  if (publish_txn_begin (t, req->call_id, &err) == 0
      && publish_txn_stage (t, req->upper, &err) == 0)
    {
      staged = true;
      if (publish_txn_apply (t, &err) == 0)
        {
          rep->status = PUBLISH_DONE;
          rep->published = t->plan->n;
          for (size_t i = 0; i < t->plan->n; i++)
            if (t->plan->changes[i].kind == PUBPLAN_FILE)
              rep->bytes += t->plan->changes[i].size;
          rep->note = publish_note_left_out (t->plan);
          if (req->defer_tidy)
            rep->tidy = xstrdup (t->dir);
          else
            publish_txn_remove (t);
          return;
        }
    }
  if (staged)
    publish_rollback (t, rep);
  else
    {
      rep->status = PUBLISH_ROLLED_BACK;
      if (t->id != NULL)
        publish_txn_remove (t);
    }
  rep->note = publish_note_failed (rep, err ? err->msg : "unknown");
  cr_error_free (err);
}

/* Whether st was changed at or after the baseline: its ctime against the
 * instant of its own filesystem.  */
static bool
publish_since (const struct stat *st, const struct publish_baseline *base)
{
  const struct timespec *since
      = st->st_dev == base->dev ? &base->instant : &base->foreign;
  return st->st_ctim.tv_sec > since->tv_sec
         || (st->st_ctim.tv_sec == since->tv_sec
             && st->st_ctim.tv_nsec >= since->tv_nsec);
}

/* Whether anyone changed one of the directories dir ("a/b": a, then a/b)
 * since the baseline; 1 when one did, 0 when none did, -1 when one is
 * absent or not a directory (so nothing below it can be looked at).  */
static int
publish_dirs_changed (int rootfd, const char *dir,
                      const struct publish_baseline *base)
{
  cleanup_free char *p = xstrdup (dir);
  struct stat st;
  if (*p == '\0')
    return 0;
  for (char *slash = p;; slash++)
    {
      slash = strchr (slash, '/');
      if (slash != NULL)
        *slash = '\0';
      const char *name;
      cleanup_close int parent = pubfs_open_parent (rootfd, p, &name);
      if (parent < 0 || fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
      if (publish_since (&st, base))
        return 1;
      if (!S_ISDIR (st.st_mode))
        return -1;
      if (slash == NULL)
        return 0;
      *slash = '/';
    }
}

/* The directory the last path's check looked at, and what it found
 * (publish_dirs_changed's answer).  */
struct publish_seen
{
  char *dir;
  int rc;
};

/* Whether anyone changed path or a directory above it in the root since
 * the baseline: each one's ctime, without following links (the root
 * itself is the caller's to check).  A plan's paths come sorted, so the
 * files of one directory look at it once (seen), and at their own entries
 * through dir's cache.  */
static bool
publish_changed_since (struct pubfs_dir *dir, struct publish_seen *seen,
                       const char *path, const struct publish_baseline *base)
{
  const char *slash = strrchr (path, '/'), *name;
  cleanup_free char *parent_path
      = slash != NULL ? xstrndup (path, (size_t) (slash - path)) : xstrdup ("");
  struct stat st;

  if (seen->dir == NULL || strcmp (seen->dir, parent_path) != 0)
    {
      free (seen->dir);
      seen->dir = xstrdup (parent_path);
      seen->rc = publish_dirs_changed (dir->rootfd, parent_path, base);
    }
  if (seen->rc != 0)
    return seen->rc > 0;
  int parent = pubfs_dir_parent (dir, path, &name);
  if (parent < 0 || fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return false;
  return publish_since (&st, base);
}

/* Refuse a publication because path was changed from outside; false.  */
static bool
publish_refuse_changed (struct publish_report *rep, const char *path)
{
  rep->status = PUBLISH_REFUSED_CHANGED;
  rep->note = xasprintf (
      "[published nothing: %s in the workspace was changed by "
      "something outside the sandbox after this command started, so "
      "what this command wrote was discarded rather than merged]",
      path);
  return false;
}

/* Check the root against the baseline; fill rep on a refusal.  */
static bool
publish_check (const struct publish_request *req, int rootfd,
               const struct pubplan *plan, struct publish_report *rep,
               struct cr_error **err)
{
  uint64_t count;
  struct timespec last;
  if (publock_count_read (req->statedir, req->root, &count, &last, err) < 0)
    return false;
  if (count != req->baseline->count)
    {
      rep->status = PUBLISH_REFUSED_COUNT;
      rep->note = xstrdup (
          "[published nothing: another command published into the "
          "workspace after this one started, so what this command wrote "
          "was discarded rather than merged]");
      return false;
    }
  struct stat st;
  if (fstatat (rootfd, ".", &st, AT_SYMLINK_NOFOLLOW) == 0
      && publish_since (&st, req->baseline))
    return publish_refuse_changed (rep, plan->changes[0].path);
  struct pubfs_dir dir;
  struct publish_seen seen = { 0 };
  bool changed = false;
  size_t i;
  pubfs_dir_init (&dir, rootfd);
  for (i = 0; i < plan->n && !changed; i++)
    changed = publish_changed_since (&dir, &seen, plan->changes[i].path,
                                     req->baseline);
  pubfs_dir_forget (&dir);
  free (seen.dir);
  if (changed)
    return publish_refuse_changed (rep, plan->changes[i - 1].path);
  return true;
}

int
publish_run (const struct publish_request *req, struct publish_report *rep,
             struct cr_error **err)
{
  struct pubplan plan = { 0 };
  bool busy;

  memset (rep, 0, sizeof *rep);
  struct pubguard none = { .git_templates = PUBGUARD_GIT_TEMPLATES };
  if (pubplan_scan (req->upper, req->root,
                    req->guard != NULL ? req->guard : &none, &plan, err)
      < 0)
    return -1;
  if (plan.n == 0)
    {
      rep->status = plan.n_left_out ? PUBLISH_DONE : PUBLISH_NOTHING;
      rep->note = publish_note_left_out (&plan);
      pubplan_clear (&plan);
      return 0;
    }
  int lock = publock_take (req->statedir, 0, &busy, err);
  if (lock < 0)
    {
      pubplan_clear (&plan);
      rep->status = PUBLISH_BUSY;
      return busy ? 0 : -1;
    }
  struct publish_txn t = { .statedir = req->statedir,
                           .root = req->root,
                           .dirfd = -1,
                           .stage = PUBLISH_SLOTS_NONE,
                           .backup = PUBLISH_SLOTS_NONE,
                           .wal = -1,
                           .plan = &plan };
  int rc = 0;
  struct cr_error *rerr = NULL;
  if (publish_recover (req->statedir, &rerr) < 0)
    cr_error_free (rerr); /* what could not be recovered stays for later */
  t.rootfd = open (req->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (t.rootfd < 0)
    rc = cr_error_set (err, errno, "opening the writable root");
  else if (publish_check (req, t.rootfd, &plan, rep, err))
    publish_transact (&t, req, rep);
  else if (rep->status == PUBLISH_NOTHING)
    rc = -1; /* the count could not be read */
  publish_txn_close (&t);
  publock_drop (lock);
  pubplan_clear (&plan);
  return rc;
}

/* --- baseline and recovery -----------------------------------------------
 */

/* Whether a is later than b.  */
static bool
publish_later (const struct timespec *a, const struct timespec *b)
{
  return a->tv_sec > b->tv_sec
         || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* Wait (a few ticks at most) until the coarse clock is past t.  */
static void
publish_tick_past (const struct timespec *t)
{
  for (int i = 0; i < 500; i++)
    {
      struct timespec now = publock_now ();
      if (publish_later (&now, t))
        return;
      usleep (200);
    }
}

/* Change the state directory's stamp file and read back the ctime the
 * kernel gave it.  */
static int
publish_stamp (const char *statedir, struct timespec *out,
               struct cr_error **err)
{
  cleanup_free char *path = xasprintf ("%s/baseline.stamp", statedir);
  cleanup_close int fd
      = open (path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  struct stat st;
  memset (out, 0, sizeof *out);
  if (fd < 0 || futimens (fd, NULL) < 0 || fstat (fd, &st) < 0)
    return cr_error_set (err, errno, "stamping the baseline");
  *out = st.st_ctim;
  return 0;
}

/* The filesystem holding path (0 when it cannot be read).  */
static dev_t
publish_dev (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 ? st.st_dev : 0;
}

/* The baseline instant, as a ctime: a change made before the baseline has
 * an older ctime, and one made after it a ctime at least as new.  File
 * times come from a coarse clock, or (multigrain timestamps) from a finer
 * one kept in order across every file, never behind the coarse one.  Two
 * stamps are taken at once.  When the second is strictly later than the
 * first, it is the instant without any wait: every earlier change is at
 * most the first (ctimes are handed out in order), every later one at
 * least the second.  That holds only on the stamp's own filesystem (a
 * coarse-only one could stamp a later change behind it): paths elsewhere
 * are held to the coarse clock read before the stamps, which no later
 * change is behind (an earlier change in that same tick counts as
 * changed: refused, never missed).  Otherwise the second stamp is taken a
 * clock tick after the first, and the instant is the second once the
 * coarse clock has passed it too, for every filesystem.  */
static int
publish_instant (const char *statedir, const char *root,
                 struct publish_baseline *out, struct cr_error **err)
{
  struct timespec first = { 0 }, coarse = publock_now ();
  if (publish_stamp (statedir, &first, err) < 0
      || publish_stamp (statedir, &out->instant, err) < 0)
    return -1;
  out->dev = publish_dev (statedir);
  out->foreign = coarse;
  if (publish_later (&out->instant, &first) && out->dev != 0
      && out->dev == publish_dev (root))
    return 0;
  publish_tick_past (&first);
  if (publish_stamp (statedir, &out->instant, err) < 0)
    return -1;
  publish_tick_past (&out->instant);
  out->foreign = out->instant;
  return 0;
}

int
publish_baseline_take (const char *statedir, const char *root, int64_t wait_ms,
                       struct publish_baseline *out, struct cr_error **err)
{
  bool busy;
  struct timespec last;
  struct cr_error *rerr = NULL;

  memset (out, 0, sizeof *out);
  int lock = publock_take (statedir, wait_ms, &busy, err);
  if (lock < 0 && busy)
    return cr_error_set (err, 0,
                         "another publication held the workspace for longer "
                         "than %" PRId64 " seconds",
                         (wait_ms + 999) / 1000);
  if (lock < 0)
    return -1;
  if (publish_recover (statedir, &rerr) < 0)
    cr_error_free (rerr);
  int rc = publock_count_read (statedir, root, &out->count, &last, err);
  if (rc == 0)
    rc = publish_instant (statedir, root, out, err);
  publock_drop (lock);
  out->taken = rc == 0;
  return rc;
}

/* Open what a kept transaction (abandoned, or in quarantine) is undone
 * with: its root (root may be NULL when its log did not say), its staged
 * and backup directories, and its log.  -1 when any is missing; err is set
 * only where the log says why.  */
static int
publish_txn_reopen (struct publish_txn *t, const char *root,
                    struct cr_error **err)
{
  if (root == NULL
      || (t->rootfd
          = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
             < 0
      || (t->stage.top = publish_subdir (t->dirfd, "stage")) < 0
      || (t->backup.top = publish_subdir (t->dirfd, "backup")) < 0
      || (t->wal = wal_open (t->dirfd, err)) < 0)
    return -1;
  return 0;
}

/* Recover one abandoned transaction, id, in statedir.  */
static int
publish_recover_one (const char *statedir, const char *id,
                     struct cr_error **err)
{
  struct publish_txn t = { .statedir = statedir,
                           .id = xstrdup (id),
                           .dirfd = -1,
                           .rootfd = -1,
                           .stage = PUBLISH_SLOTS_NONE,
                           .backup = PUBLISH_SLOTS_NONE,
                           .wal = -1 };
  struct wal_log log;
  struct pubplan plan = { 0 };
  struct publish_report rep = { 0 };
  bool staged = false, done = false;
  cleanup_free char *root = NULL;

  t.dir = xasprintf ("%s/" PUBLISH_TXN_DIR "/%s", statedir, id);
  t.dirfd = open (t.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (t.dirfd < 0 || wal_read (t.dirfd, &log, err) < 0)
    {
      /* No log: it died before its first record; the root is untouched.  */
      cr_error_clear (err);
      publish_txn_remove (&t);
      publish_txn_close (&t);
      return 0;
    }
  for (size_t i = 0; i < log.n; i++)
    {
      enum wal_step s = log.records[i].step;
      done |= s == WAL_COMMIT || s == WAL_ROLLEDBACK;
      if (s == WAL_BEGIN && root == NULL)
        {
          char *line = strchr (log.records[i].payload, '\n');
          if (line != NULL)
            *line = '\0';
          root = strncmp (log.records[i].payload, "root ", 5) == 0
                     ? pubplan_unescape (log.records[i].payload + 5)
                     : NULL;
        }
      if (s == WAL_STAGED && !staged)
        staged = pubplan_parse (log.records[i].payload, log.records[i].len,
                                &plan, err)
                 == 0;
    }
  int rc = 0;
  if (log.corrupt
      || (!staged && !done && log.n > 0
          && log.records[log.n - 1].step > WAL_STAGED))
    {
      publish_txn_quarantine (&t, "its log is damaged", &rep);
      cr_error_clear (err);
    }
  else if (done || !staged)
    publish_txn_remove (&t);
  else if (publish_txn_reopen (&t, root, err) < 0)
    {
      cr_error_clear (err);
      publish_txn_quarantine (&t, "its root could not be opened", &rep);
    }
  else
    {
      t.root = root;
      t.plan = &plan;
      publish_rollback (&t, &rep);
    }
  publish_report_clear (&rep);
  pubplan_clear (&plan);
  wal_log_clear (&log);
  publish_txn_close (&t);
  return rc;
}

int
publish_recover (const char *statedir, struct cr_error **err)
{
  cleanup_free char *dir = xasprintf ("%s/" PUBLISH_TXN_DIR, statedir);
  cleanup_closedir DIR *d = opendir (dir);
  struct dirent *de;
  int n = 0;

  if (d == NULL)
    return errno == ENOENT
               ? 0
               : cr_error_set (err, errno, "reading the publication journal");
  while ((de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.')
        continue;
      if (publish_recover_one (statedir, de->d_name, err) < 0)
        return -1;
      n++;
    }
  return n;
}

/* --- restoring from quarantine -------------------------------------------
 */

/* Read a quarantined transaction's root and plan.  */
static int
publish_read_entry (struct publish_txn *t, struct pubplan *plan, char **root,
                    struct cr_error **err)
{
  struct wal_log log;
  struct cr_error *perr = NULL;
  bool staged = false;

  if (wal_read (t->dirfd, &log, err) < 0)
    return -1;
  for (size_t i = 0; i < log.n; i++)
    {
      char *p = log.records[i].payload;
      if (log.records[i].step == WAL_BEGIN && *root == NULL
          && strncmp (p, "root ", 5) == 0)
        {
          p[strcspn (p, "\n")] = '\0';
          *root = pubplan_unescape (p + 5);
        }
      if (log.records[i].step == WAL_STAGED && !staged)
        staged = pubplan_parse (p, log.records[i].len, plan, &perr) == 0;
    }
  wal_log_clear (&log);
  cr_error_free (perr);
  if (*root == NULL || !staged)
    return cr_error_set (err, 0, "its log holds no plan to restore from");
  return 0;
}

int
quarantine_restore (const char *statedir, const char *id, struct cr_error **err)
{
  struct pubplan plan = { 0 };
  struct publish_report rep = { 0 };
  cleanup_free char *root = NULL;
  bool busy;
  int rc = -1;

  if (quarantine_check_id (statedir, id, err) < 0)
    return -1;
  int lock = publock_take (statedir, PUBLISH_WAIT_SHORT_MS, &busy, err);
  if (lock < 0)
    return busy ? cr_error_set (err, 0, "another publication holds the lock")
                : -1;
  struct publish_txn t
      = { .statedir = statedir,
          .id = xstrdup (id),
          .dir = xasprintf ("%s/" QUARANTINE_DIR "/%s", statedir, id),
          .rootfd = -1,
          .stage = PUBLISH_SLOTS_NONE,
          .backup = PUBLISH_SLOTS_NONE,
          .wal = -1,
          .plan = &plan };
  t.dirfd = open (t.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (t.dirfd < 0)
    cr_error_set (err, errno, "opening quarantine entry %s", id);
  else if (publish_read_entry (&t, &plan, &root, err) < 0)
    cr_error_prefix (err, "quarantine entry %s", id);
  else if (publish_txn_reopen (&t, root, err) < 0)
    {
      if (*err == NULL)
        cr_error_set (err, errno, "opening %s", root ? root : "its root");
    }
  else
    {
      t.root = root;
      size_t i;
      for (i = 0; i < plan.n; i++)
        if (!publish_holds (&t, i, true) && !publish_holds (&t, i, false))
          break;
      if (i < plan.n)
        cr_error_set (err, 0,
                      "%s in %s is neither as the transaction found it nor "
                      "as it left it: something changed it since; compare "
                      "it with the entry before restoring by hand",
                      plan.changes[i].path, root);
      else
        {
          for (i = plan.n; i-- > 0;)
            publish_undo_one (&t, i);
          publish_dir_times (&t, true);
          syncfs (t.rootfd);
          if (!publish_verify (&t, false))
            cr_error_set (err, 0, "%s could not be proved restored", root);
          else
            rc = 0;
        }
    }
  publish_txn_close (&t);
  publock_drop (lock);
  pubplan_clear (&plan);
  publish_report_clear (&rep);
  if (rc == 0)
    return quarantine_drop (statedir, id, err);
  return rc;
}
