/* Scanning an upper directory into a publication plan, and the plan as
 * text for the write-ahead log.  */
#include <config.h>

#include "sandbox/pubplan.h"

#include <dirent.h>
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
#include "sandbox/pubguard.h"
#include "sandbox/sha256.h"

/* Deeper than this, an upper is refused rather than walked with one
 * descriptor per level.  */
#define PUBPLAN_MAX_DEPTH 256

#define PUBPLAN_CHUNK 65536

/* The attribute overlayfs (mounted with userxattr) marks a replaced
 * directory with.  */
#define PUBPLAN_OPAQUE_XATTR "user.overlay.opaque"

void
pubplan_clear (struct pubplan *plan)
{
  for (size_t i = 0; i < plan->n; i++)
    {
      free (plan->changes[i].path);
      free (plan->changes[i].target);
      free (plan->changes[i].before_target);
    }
  free (plan->changes);
  for (size_t i = 0; i < plan->n_left_out; i++)
    free (plan->left_out[i]);
  free (plan->left_out);
  memset (plan, 0, sizeof *plan);
}

struct pubplan_change *
pubplan_add (struct pubplan *plan, char *path, enum pubplan_kind kind)
{
  plan->changes
      = xrealloc (plan->changes, (plan->n + 1) * sizeof *plan->changes);
  struct pubplan_change *c = &plan->changes[plan->n++];
  memset (c, 0, sizeof *c);
  c->path = path;
  c->kind = kind;
  return c;
}

void
pubplan_leave_out (struct pubplan *plan, const char *path, const char *why)
{
  plan->left_out = xrealloc (plan->left_out,
                             (plan->n_left_out + 1) * sizeof *plan->left_out);
  plan->left_out[plan->n_left_out++] = xasprintf ("%s (%s)", path, why);
}

/* Whether two open regular files hold the same bytes.  */
static bool
pubplan_same_content (int a, int b)
{
  cleanup_free char *x = xmalloc (PUBPLAN_CHUNK);
  cleanup_free char *y = xmalloc (PUBPLAN_CHUNK);
  for (;;)
    {
      ssize_t n = read (a, x, PUBPLAN_CHUNK);
      if (n < 0)
        return false;
      ssize_t m = 0;
      while (m < n)
        {
          ssize_t r = read (b, y + m, (size_t) (n - m));
          if (r <= 0)
            return false;
          m += r;
        }
      if (n == 0)
        return read (b, y, 1) == 0;
      if (memcmp (x, y, (size_t) n) != 0)
        return false;
    }
}

/* A regular file in the upper that only a read-write open copied up is
 * the lower file unchanged: same size, mode, mtime and bytes.  */
static bool
pubplan_file_unchanged (int upfd, int lowfd, const char *name,
                        const struct stat *up, const struct stat *low)
{
  if (!S_ISREG (low->st_mode) || up->st_size != low->st_size
      || (up->st_mode & 07777) != (low->st_mode & 07777)
      || up->st_mtim.tv_sec != low->st_mtim.tv_sec
      || up->st_mtim.tv_nsec != low->st_mtim.tv_nsec)
    return false;
  cleanup_close int a = openat (upfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int b
      = openat (lowfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (a < 0 || b < 0)
    return false;
  return pubplan_same_content (a, b);
}

/* A symlink's target, or NULL.  */
static char *
pubplan_readlink (int dirfd, const char *name, size_t size)
{
  char *t = xmalloc (size + 2);
  ssize_t n = readlinkat (dirfd, name, t, size + 1);
  if (n < 0 || (size_t) n > size)
    {
      free (t);
      return NULL;
    }
  t[n] = '\0';
  return t;
}

/* Whether an upper directory replaces the lower one (opaque).  */
static bool
pubplan_opaque (int fd)
{
  char v[4];
  ssize_t n = fgetxattr (fd, PUBPLAN_OPAQUE_XATTR, v, sizeof v);
  return n == 1 && v[0] == 'y';
}

/* What is left out: the name of a kind of file that is never published. */
static const char *
pubplan_unpublishable (const struct stat *st)
{
  if (S_ISSOCK (st->st_mode))
    return "a socket";
  if (S_ISFIFO (st->st_mode))
    return "a fifo";
  if (S_ISCHR (st->st_mode) || S_ISBLK (st->st_mode))
    return "a device";
  if (S_ISREG (st->st_mode) && (uint64_t) st->st_size > PUBPLAN_MAX_BYTES)
    return "a file over 8 GiB";
  return NULL;
}

/* What the walk knows of the directory it is in.  */
struct pubplan_dirctx
{
  /* Not there at the baseline, or replacing what was: a .git directory
   * made in it is a new repository (git clone, git init).  */
  bool fresh;
  /* A git directory the command made: its hooks and configuration are
   * what would run at the person's next git command.  */
  bool gitdir;
};

struct pubplan_walk
{
  struct pubplan *plan;
  const struct pubguard *guard; /* NULL: nothing beyond the kinds */
  int up_root;                  /* the upper directory, for a named path */
  int depth;
};

static int pubplan_scan_dir (struct pubplan_walk *w, int upfd, int lowfd,
                             const char *rel, const struct pubplan_dirctx *ctx,
                             struct cr_error **err);

/* Fill the parts of a change every kind has.  */
static void
pubplan_fill (struct pubplan_change *c, const struct stat *st)
{
  c->mode = st->st_mode & 07777 & ~(mode_t) (S_ISUID | S_ISGID);
  c->uid = st->st_uid;
  c->gid = st->st_gid;
  c->mtime = st->st_mtim;
  c->size = S_ISREG (st->st_mode) ? (uint64_t) st->st_size : 0;
}

/* Whether st is an overlay whiteout (a deletion).  */
static bool
pubplan_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

/* Whether name is in the directory fd (a whiteout is not); fd -1: no.  */
static bool
pubplan_present (int fd, const char *name)
{
  struct stat st;
  return fd >= 0 && fstatat (fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
         && !pubplan_whiteout (&st);
}

/* Whether name is in the merged view of an upper and a lower directory
 * (lower -1 when the upper one is opaque or new).  */
static bool
pubplan_merged_has (int up, int low, const char *name)
{
  struct stat st;
  if (up >= 0 && fstatat (up, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return !pubplan_whiteout (&st);
  return pubplan_present (low, name);
}

/* Whether a directory has the shape git takes for a git directory
 * (setup.c, is_git_directory: HEAD, and objects/ or a commondir file),
 * whatever it is called: the target of a symlinked .git or of a gitdir:
 * file, a submodule's directory, a bare repository.  Looser than git's
 * own test (the contents of HEAD are not read), so never narrower.  */
static bool
pubplan_git_shape (int up, int low)
{
  return pubplan_merged_has (up, low, "HEAD")
         && (pubplan_merged_has (up, low, "objects")
             || pubplan_merged_has (up, low, "commondir"));
}

/* Whether the entry that was a lower directory, name, is (or would
 * become) a git directory: in the lower alone, or merged with what the
 * command added.  */
static bool
pubplan_was_gitdir (int upfd, int lowfd, const char *name,
                    const struct stat *st)
{
  cleanup_close int low
      = openat (lowfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (low >= 0 && pubplan_git_shape (-1, low))
    return true;
  if (!S_ISDIR (st->st_mode))
    return false;
  cleanup_close int up
      = openat (upfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (up < 0)
    return false;
  return pubplan_git_shape (up, pubplan_opaque (up) ? -1 : low);
}

/* Why nothing at rel may be published (owned), or NULL.  *newrepo is
 * set for a .git directory that starts a new repository.  */
static char *
pubplan_guarded (const struct pubplan_walk *w, int upfd, int lowfd,
                 const char *name, const char *rel, const struct stat *st,
                 const struct stat *low, const struct pubplan_dirctx *ctx,
                 bool *newrepo)
{
  const struct pubguard_root *r;

  *newrepo = false;
  switch (pubguard_classify (name))
    {
    case PUBGUARD_GIT:
      /* Created, replaced, deleted, changed: refused, unless it is a new
       * directory in a new directory, which is how a clone looks.  */
      if (ctx->fresh && low == NULL && S_ISDIR (st->st_mode))
        {
          *newrepo = true;
          break;
        }
      return xasprintf ("under %s, which is protected", rel);
    case PUBGUARD_AGENT:
      return xasprintf ("under %s, which is protected", rel);
    case PUBGUARD_PLAIN:
      break;
    }
  if ((r = pubguard_root_over (w->guard, rel)) != NULL)
    return xasprintf ("under %s, which is %s", r->path, r->why);
  /* A directory git would take for its own that was there before: what a
   * .git symlink or a gitdir: file points at, whatever its name.  */
  if (low != NULL && S_ISDIR (low->st_mode)
      && pubplan_was_gitdir (upfd, lowfd, name, st))
    return xasprintf ("under %s, which is a git directory", rel);
  return NULL;
}

/* Whether the upper entry name replaces a lower directory: deletes it,
 * puts something else there, or is an opaque directory.  */
static bool
pubplan_replaces (int upfd, const char *name, const struct stat *st)
{
  if (!S_ISDIR (st->st_mode))
    return true;
  cleanup_close int fd
      = openat (upfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  return fd < 0 || pubplan_opaque (fd);
}

/* The first thing below the lower directory rel (name in lowfd) that
 * removing it would take along and that publication keeps: a .git
 * entry, a git directory, a configured root.  NULL when none.  What
 * cannot be read counts as one: refused, not guessed.  Agent
 * configuration is not looked for: removing it plants nothing.  The
 * walk costs what removing the tree costs (it is backed up whole).  */
static char *
pubplan_lower_holds (const struct pubplan_walk *w, int lowfd, const char *name,
                     const char *rel, int depth)
{
  const struct pubguard_root *r = pubguard_root_below (w->guard, rel);
  size_t n;
  char *found = NULL;

  if (r != NULL)
    return xstrdup (r->path);
  if (depth > PUBPLAN_MAX_DEPTH)
    return xstrdup (rel);
  cleanup_close int fd
      = openat (lowfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return xstrdup (rel);
  if (pubplan_git_shape (-1, fd))
    return xstrdup (rel);
  char **names = pubplan_sorted_names (fd, &n);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *child = xasprintf ("%s/%s", rel, names[i]);
      struct stat st;
      if (found == NULL
          && (fstatat (fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0
              || pubguard_classify (names[i]) == PUBGUARD_GIT))
        found = xstrdup (child);
      else if (found == NULL && S_ISDIR (st.st_mode))
        found = pubplan_lower_holds (w, fd, names[i], child, depth + 1);
      free (names[i]);
    }
  free (names);
  return found;
}

/* Whether the change at path (in the upper) is one of git's own sample
 * hooks: a regular file named *.sample holding exactly the bytes of the
 * template git installs under that name.  */
static bool
pubplan_hook_is_sample (const struct pubplan_walk *w,
                        const struct pubplan_change *c)
{
  const char *base = strrchr (c->path, '/');
  base = base != NULL ? base + 1 : c->path;
  if (c->kind != PUBPLAN_FILE || !pubguard_hook_sample (base)
      || w->guard == NULL || w->guard->git_templates == NULL)
    return false;
  cleanup_close int dir
      = open (w->guard->git_templates, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int want
      = dir < 0 ? -1 : openat (dir, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int got
      = openat (w->up_root, c->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  return want >= 0 && got >= 0 && pubplan_same_content (got, want);
}

/* Move a change from one plan to another (the path and targets go
 * with it).  */
static void
pubplan_move (struct pubplan *to, struct pubplan_change *c)
{
  struct pubplan_change *n = pubplan_add (to, c->path, c->kind);
  *n = *c;
  c->path = c->target = c->before_target = NULL;
}

static int pubplan_scan_entry (struct pubplan_walk *w, int upfd, int lowfd,
                               const char *name, const char *rel,
                               const struct pubplan_dirctx *ctx, bool newrepo,
                               struct cr_error **err);

/* The hooks directory of a git directory the command made: directories
 * and git's own samples publish, anything else is a hook and is left
 * out, each named.  */
static int
pubplan_scan_hooks (struct pubplan_walk *w, int upfd, int lowfd,
                    const char *name, const char *rel, const struct stat *st,
                    struct cr_error **err)
{
  static const struct pubplan_dirctx plain = { 0 };
  struct pubplan side = { 0 };
  struct pubplan_walk sw = {
    .plan = &side, .guard = w->guard, .up_root = w->up_root, .depth = w->depth
  };

  if (!S_ISDIR (st->st_mode))
    {
      pubplan_leave_out (w->plan, rel, "a git hook");
      return 0;
    }
  int rc = pubplan_scan_entry (&sw, upfd, lowfd, name, rel, &plain, false, err);
  for (size_t i = 0; rc == 0 && i < side.n; i++)
    if (side.changes[i].kind == PUBPLAN_DIR
        || pubplan_hook_is_sample (w, &side.changes[i]))
      pubplan_move (w->plan, &side.changes[i]);
    else
      pubplan_leave_out (w->plan, side.changes[i].path, "a git hook");
  for (size_t i = 0; rc == 0 && i < side.n_left_out; i++)
    {
      w->plan->left_out
          = xrealloc (w->plan->left_out,
                      (w->plan->n_left_out + 1) * sizeof *w->plan->left_out);
      w->plan->left_out[w->plan->n_left_out++] = side.left_out[i];
      side.left_out[i] = NULL;
    }
  pubplan_clear (&side);
  return rc;
}

/* The most of a new git configuration file that is read; a larger one is
 * left out rather than half-read.  */
#define PUBPLAN_GIT_CONFIG_BYTES (1 << 20)

/* Why a git configuration file the command made is left out (owned), or
 * NULL when it names no program; then judged gets the digest of the bytes
 * read, which publication stages only if they are still what the upper
 * holds.  */
static char *
pubplan_git_config_why (int upfd, const char *name, const struct stat *st,
                        char *judged)
{
  static const char unreadable[]
      = "a git configuration that cannot be read safely";
  if (!S_ISREG (st->st_mode) || st->st_size > PUBPLAN_GIT_CONFIG_BYTES)
    return xstrdup (unreadable);
  cleanup_close int fd
      = openat (upfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  cleanup_free char *text = xmalloc (PUBPLAN_GIT_CONFIG_BYTES + 1);
  size_t len = 0;
  ssize_t n = 0;
  while (fd >= 0 && len <= PUBPLAN_GIT_CONFIG_BYTES
         && (n = read (fd, text + len, PUBPLAN_GIT_CONFIG_BYTES + 1 - len)) > 0)
    len += (size_t) n;
  if (fd < 0 || n < 0 || len > PUBPLAN_GIT_CONFIG_BYTES)
    return xstrdup (unreadable);
  cleanup_free char *key = pubguard_git_config_runs (text, len);
  if (key == NULL)
    {
      sha256_buffer (text, len, judged);
      return NULL;
    }
  if (key[0] == '\0')
    return xstrdup (unreadable);
  return xasprintf ("a git configuration naming a program: %s", key);
}

/* An entry of a git directory the command made that could run something
 * at the person's next git command: its hooks, its configuration, a
 * commondir pointing elsewhere.  Returns 1 when name is none of those
 * (judged then holds the digest of a configuration judged harmless, or
 * stays empty).  */
static int
pubplan_scan_gitfile (struct pubplan_walk *w, int upfd, int lowfd,
                      const char *name, const char *rel, const struct stat *st,
                      char *judged, struct cr_error **err)
{
  if (strcmp (name, "hooks") == 0)
    return pubplan_scan_hooks (w, upfd, lowfd, name, rel, st, err);
  /* Another directory's config and hooks would be this repository's.  */
  if (strcmp (name, "commondir") == 0)
    {
      pubplan_leave_out (w->plan, rel, "a git commondir file");
      return 0;
    }
  if (strcmp (name, "config") != 0 && strcmp (name, "config.worktree") != 0)
    return 1;
  cleanup_free char *why = pubplan_git_config_why (upfd, name, st, judged);
  if (why == NULL)
    return 1;
  pubplan_leave_out (w->plan, rel, why);
  return 0;
}

/* A directory in the upper: kept in the plan when it is new, replaces
 * what was there, changed mode or holds a change.  */
static int
pubplan_scan_subdir (struct pubplan_walk *w, int upfd, int lowfd,
                     const char *name, const char *rel, const struct stat *st,
                     const struct stat *low, bool newrepo,
                     struct cr_error **err)
{
  cleanup_close int sub
      = openat (upfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0)
    return cr_error_set (err, errno, "scanning %s", rel);
  bool opaque = pubplan_opaque (sub);
  bool low_dir = low != NULL && S_ISDIR (low->st_mode);
  cleanup_close int lowsub
      = low_dir && !opaque ? openat (
            lowfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                           : -1;
  struct pubplan_dirctx ctx = { .fresh = !low_dir || opaque };
  ctx.gitdir = newrepo || (ctx.fresh && pubplan_git_shape (sub, -1));
  size_t mark = w->plan->n;
  struct pubplan_change *c = pubplan_add (w->plan, xstrdup (rel), PUBPLAN_DIR);
  pubplan_fill (c, st);
  c->opaque = opaque && low != NULL;
  bool needed = !low_dir || c->opaque
                || (low->st_mode & 07777) != (st->st_mode & 07777);
  if (pubplan_scan_dir (w, sub, lowsub, rel, &ctx, err) < 0)
    return -1;
  if (!needed && w->plan->n == mark + 1)
    {
      /* Nothing happened below: drop the directory again.  */
      w->plan->n--;
      free (w->plan->changes[mark].path);
    }
  return 0;
}

/* One entry of an upper directory, as a change (or none).  */
static int
pubplan_scan_entry (struct pubplan_walk *w, int upfd, int lowfd,
                    const char *name, const char *rel,
                    const struct pubplan_dirctx *ctx, bool newrepo,
                    struct cr_error **err)
{
  struct stat st, lst;
  bool have_low
      = lowfd >= 0 && fstatat (lowfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0;

  (void) ctx;
  if (fstatat (upfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return cr_error_set (err, errno, "scanning %s", rel);
  if (pubplan_whiteout (&st))
    {
      /* A whiteout: the path was deleted.  */
      if (have_low)
        pubplan_add (w->plan, xstrdup (rel), PUBPLAN_DELETE);
      return 0;
    }
  const char *why = pubplan_unpublishable (&st);
  if (why != NULL)
    {
      pubplan_leave_out (w->plan, rel, why);
      return 0;
    }
  if (S_ISDIR (st.st_mode))
    return pubplan_scan_subdir (w, upfd, lowfd, name, rel, &st,
                                have_low ? &lst : NULL, newrepo, err);
  if (S_ISREG (st.st_mode))
    {
      if (have_low && pubplan_file_unchanged (upfd, lowfd, name, &st, &lst))
        return 0;
      pubplan_fill (pubplan_add (w->plan, xstrdup (rel), PUBPLAN_FILE), &st);
      return 0;
    }
  /* A symbolic link, published as a link.  */
  char *target = pubplan_readlink (upfd, name, (size_t) st.st_size + 4096);
  if (target == NULL)
    return cr_error_set (err, errno, "reading the link %s", rel);
  if (have_low && S_ISLNK (lst.st_mode))
    {
      cleanup_free char *old
          = pubplan_readlink (lowfd, name, (size_t) lst.st_size + 4096);
      if (old != NULL && strcmp (old, target) == 0)
        {
          free (target);
          return 0;
        }
    }
  struct pubplan_change *c = pubplan_add (w->plan, xstrdup (rel), PUBPLAN_LINK);
  pubplan_fill (c, &st);
  c->target = target;
  return 0;
}

/* Compare names for a stable order.  */
static int
pubplan_cmp (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

char **
pubplan_sorted_names (int fd, size_t *n)
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
  /* The duplicate shares the position of fd, which an earlier walk may
   * have left at the end.  */
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
    qsort (names, *n, sizeof *names, pubplan_cmp);
  return names;
}

/* Scan a protected entry into a plan of its own: any change there
 * (created, replaced, deleted, or below it) is refused, and named by its
 * first changed path.  */
static int
pubplan_scan_protected (struct pubplan_walk *w, int upfd, int lowfd,
                        const char *name, const char *rel, const char *why,
                        struct cr_error **err)
{
  static const struct pubplan_dirctx plain = { 0 };
  struct pubplan side = { 0 };
  struct pubplan_walk sw
      = { .plan = &side, .up_root = w->up_root, .depth = w->depth };
  int rc = pubplan_scan_entry (&sw, upfd, lowfd, name, rel, &plain, false, err);
  if (rc == 0 && (side.n > 0 || side.n_left_out > 0))
    pubplan_leave_out (w->plan, side.n > 0 ? side.changes[0].path : rel, why);
  pubplan_clear (&side);
  return rc;
}

/* One entry of an upper directory, with what publication keeps: a
 * protected name, a configured root or a git directory is refused whole;
 * removing a directory that holds one is refused; inside a git directory
 * the command made, its hooks and configuration are checked.  */
static int
pubplan_scan_child (struct pubplan_walk *w, int upfd, int lowfd,
                    const char *name, const char *rel,
                    const struct pubplan_dirctx *ctx, struct cr_error **err)
{
  struct stat st, lst;
  bool newrepo;
  const struct stat *low
      = lowfd >= 0 && fstatat (lowfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0
            ? &lst
            : NULL;

  if (fstatat (upfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return cr_error_set (err, errno, "scanning %s", rel);
  cleanup_free char *why
      = pubplan_guarded (w, upfd, lowfd, name, rel, &st, low, ctx, &newrepo);
  if (why != NULL)
    return pubplan_scan_protected (w, upfd, lowfd, name, rel, why, err);
  if (low != NULL && S_ISDIR (low->st_mode)
      && pubplan_replaces (upfd, name, &st))
    {
      cleanup_free char *held = pubplan_lower_holds (w, lowfd, name, rel, 0);
      if (held != NULL)
        {
          why = xasprintf ("it holds %s, which is protected", held);
          pubplan_leave_out (w->plan, rel, why);
          return 0;
        }
    }
  char judged[SHA256_HEX_LEN + 1] = "";
  if (ctx->gitdir)
    {
      int rc
          = pubplan_scan_gitfile (w, upfd, lowfd, name, rel, &st, judged, err);
      if (rc != 1)
        return rc;
    }
  size_t before = w->plan->n;
  int rc = pubplan_scan_entry (w, upfd, lowfd, name, rel, ctx, newrepo, err);
  if (rc == 0 && judged[0] != '\0' && w->plan->n == before + 1
      && w->plan->changes[before].kind == PUBPLAN_FILE)
    memcpy (w->plan->changes[before].judged, judged, sizeof judged);
  return rc;
}

static int
pubplan_scan_dir (struct pubplan_walk *w, int upfd, int lowfd, const char *rel,
                  const struct pubplan_dirctx *ctx, struct cr_error **err)
{
  size_t n;
  int rc = 0;

  if (++w->depth > PUBPLAN_MAX_DEPTH)
    return cr_error_set (err, ELOOP, "scanning %s", rel);
  char **names = pubplan_sorted_names (upfd, &n);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *child
          = rel[0] ? xasprintf ("%s/%s", rel, names[i]) : xstrdup (names[i]);
      if (rc == 0)
        rc = pubplan_scan_child (w, upfd, lowfd, names[i], child, ctx, err);
      free (names[i]);
    }
  free (names);
  w->depth--;
  return rc;
}

int
pubplan_scan (const char *upper, const char *root, const struct pubguard *guard,
              struct pubplan *plan, struct cr_error **err)
{
  cleanup_close int up
      = open (upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int low
      = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct pubplan_walk w = { .plan = plan, .guard = guard, .up_root = up };
  struct pubplan_dirctx top = { 0 };

  if (up < 0)
    return cr_error_set (err, errno, "opening the command's upper directory");
  if (low < 0)
    return cr_error_set (err, errno, "opening the writable root");
  /* The root itself may be (or be made) a git directory: git run there
   * next, finding no .git, takes it for one, and with core.worktree = .
   * for a repository whose work tree it is.  Its entries are then checked
   * as a new repository's are: no hooks, no configuration that names a
   * program, no commondir.  */
  top.gitdir = pubplan_git_shape (up, low);
  if (pubplan_scan_dir (&w, up, low, "", &top, err) < 0)
    {
      pubplan_clear (plan);
      return -1;
    }
  return 0;
}

/* --- the plan as text ------------------------------------------------------
 */

char *
pubplan_escape (const char *s)
{
  struct buf b = BUF_INIT;
  buf_putc (&b, '=');
  for (const unsigned char *p = (const unsigned char *) s; p && *p; p++)
    if (*p <= ' ' || *p == '%' || *p >= 0x7f)
      buf_printf (&b, "%%%02X", *p);
    else
      buf_putc (&b, (char) *p);
  return buf_steal (&b, NULL);
}

/* The value of a hex digit, or -1.  */
static int
pubplan_hex (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

char *
pubplan_unescape (const char *s)
{
  struct buf b = BUF_INIT;
  if (s == NULL || s[0] != '=')
    return NULL;
  for (const char *p = s + 1; *p; p++)
    {
      if (*p != '%')
        {
          buf_putc (&b, *p);
          continue;
        }
      int hi = pubplan_hex (p[1]), lo = hi < 0 ? -1 : pubplan_hex (p[2]);
      if (lo < 0 || (hi == 0 && lo == 0))
        {
          buf_free (&b);
          return NULL;
        }
      buf_putc (&b, (char) (hi * 16 + lo));
      p += 2;
    }
  buf_append (&b, "", 0);
  return buf_steal (&b, NULL);
}

/* One change as a line.  */
static void
pubplan_put_change (struct buf *b, const struct pubplan_change *c)
{
  cleanup_free char *path = pubplan_escape (c->path);
  cleanup_free char *target = pubplan_escape (c->target);
  cleanup_free char *btarget = pubplan_escape (c->before_target);
  buf_printf (b,
              "C %d %d %o %lu %lu %lld %ld %" PRIu64
              " =%s %d %o %lld %ld =%s %s %s %s\n",
              (int) c->kind, (int) c->opaque, (unsigned) c->mode,
              (unsigned long) c->uid, (unsigned long) c->gid,
              (long long) c->mtime.tv_sec, c->mtime.tv_nsec, c->size, c->digest,
              (int) c->before, (unsigned) c->before_mode,
              (long long) c->before_mtime.tv_sec, c->before_mtime.tv_nsec,
              c->before_digest, path, target, btarget);
}

char *
pubplan_serialize (const struct pubplan *plan, size_t *len)
{
  struct buf b = BUF_INIT;
  for (size_t i = 0; i < plan->n; i++)
    pubplan_put_change (&b, &plan->changes[i]);
  for (size_t i = 0; i < plan->n_left_out; i++)
    {
      cleanup_free char *e = pubplan_escape (plan->left_out[i]);
      buf_printf (&b, "L %s\n", e);
    }
  buf_append (&b, "", 0);
  return buf_steal (&b, len);
}

/* Copy a "=hex" digest field.  */
static bool
pubplan_take_digest (const char *field, char *out)
{
  size_t n = strlen (field);
  if (field[0] != '=' || (n != 1 && n != SHA256_HEX_LEN + 1))
    return false;
  memcpy (out, field + 1, n - 1);
  out[n - 1] = '\0';
  return true;
}

/* Parse one "C ..." line.  */
static int
pubplan_parse_change (char *line, struct pubplan *plan)
{
  char *f[18];
  int n = 0;
  char *save = NULL;
  for (char *t = strtok_r (line, " ", &save); t != NULL && n < 18;
       t = strtok_r (NULL, " ", &save))
    f[n++] = t;
  if (n != 18)
    return -1;
  char *path = pubplan_unescape (f[15]);
  if (path == NULL || path[0] == '\0' || path[0] == '/')
    {
      free (path);
      return -1;
    }
  struct pubplan_change *c
      = pubplan_add (plan, path, (enum pubplan_kind) strtol (f[1], NULL, 10));
  c->opaque = strtol (f[2], NULL, 10) != 0;
  c->mode = (mode_t) strtoul (f[3], NULL, 8);
  c->uid = (uid_t) strtoul (f[4], NULL, 10);
  c->gid = (gid_t) strtoul (f[5], NULL, 10);
  c->mtime.tv_sec = strtoll (f[6], NULL, 10);
  c->mtime.tv_nsec = strtol (f[7], NULL, 10);
  c->size = strtoull (f[8], NULL, 10);
  c->before = (enum pubplan_before) strtol (f[10], NULL, 10);
  c->before_mode = (mode_t) strtoul (f[11], NULL, 8);
  c->before_mtime.tv_sec = strtoll (f[12], NULL, 10);
  c->before_mtime.tv_nsec = strtol (f[13], NULL, 10);
  c->target = strcmp (f[16], "=") == 0 ? NULL : pubplan_unescape (f[16]);
  c->before_target = strcmp (f[17], "=") == 0 ? NULL : pubplan_unescape (f[17]);
  if (c->kind > PUBPLAN_DELETE || c->before > PUBPLAN_WAS_DIRMETA
      || !pubplan_take_digest (f[9], c->digest)
      || !pubplan_take_digest (f[14], c->before_digest)
      || (c->kind == PUBPLAN_LINK && c->target == NULL)
      || (c->before == PUBPLAN_WAS_LINK && c->before_target == NULL))
    return -1;
  return 0;
}

int
pubplan_parse (const char *text, size_t len, struct pubplan *plan,
               struct cr_error **err)
{
  cleanup_free char *copy = xmalloc (len + 1);
  memcpy (copy, text, len);
  copy[len] = '\0';
  char *save = NULL;
  for (char *line = strtok_r (copy, "\n", &save); line != NULL;
       line = strtok_r (NULL, "\n", &save))
    {
      int rc = 0;
      if (strncmp (line, "C ", 2) == 0)
        rc = pubplan_parse_change (line, plan);
      else if (strncmp (line, "L ", 2) == 0)
        {
          char *s = pubplan_unescape (line + 2);
          rc = s == NULL ? -1 : 0;
          if (s != NULL)
            {
              plan->left_out
                  = xrealloc (plan->left_out,
                              (plan->n_left_out + 1) * sizeof *plan->left_out);
              plan->left_out[plan->n_left_out++] = s;
            }
        }
      else
        rc = -1;
      if (rc < 0)
        {
          pubplan_clear (plan);
          return cr_error_set (err, 0, "the publication plan is malformed");
        }
    }
  return 0;
}
