/* The private sandbox state directory and its per-command layer pairs.  */
#include <config.h>

#include "sandbox/statedir.h"

#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/pubfs.h"
#include "sandbox/sha256.h"

/* Deeper than this, a finished upper is left for the next cleanup rather
 * than walked with one descriptor per level.  */
#define STATEDIR_MAX_DEPTH 512

enum statedir_verdict
statedir_judge (const struct stat *st, uid_t uid, gid_t gid)
{
  /* The order matters: a symlink or a file is named for what it is even
   * when it is also someone else's, so the remedy reads right.  */
  if (S_ISLNK (st->st_mode))
    return STATEDIR_SYMLINK;
  if (!S_ISDIR (st->st_mode))
    return STATEDIR_NOT_DIR;
  if (st->st_uid != uid)
    return STATEDIR_OTHER_USER;
  if (st->st_gid != gid || (st->st_mode & 07777) != 0700)
    return STATEDIR_WRONG_MODE;
  return STATEDIR_OK;
}

/* The refusal for a verdict.  Neither the path nor the other user's id is
 * printed: the message may be pasted into an issue.  */
static int
statedir_refuse (enum statedir_verdict v, gid_t gid, struct cr_error **err)
{
  const char *what = v == STATEDIR_SYMLINK   ? "a symlink"
                     : v == STATEDIR_NOT_DIR ? "a plain file"
                                             : "another user's directory";
  if (v == STATEDIR_WRONG_MODE)
    return cr_error_set (
        err, 0,
        "the sandbox backend is unavailable: the sandbox state directory is "
        "yours but has the wrong group or mode; restore its group and mode "
        "(group %lu, mode 0700) rather than removing it, since it holds your "
        "own unrecovered journals and quarantine evidence",
        (unsigned long) gid);
  return cr_error_set (
      err, 0,
      "the sandbox backend is unavailable: the sandbox state directory's "
      "name is taken by %s; removing it, which may need an administrator, "
      "lets the sandbox be used",
      what);
}

static int statedir_open_made (const char *path, uid_t uid, gid_t gid,
                               int *fd_out, struct cr_error **err);

/* uid's state directory under parent, resolved through parent: the
 * directory itself may not be made yet, and its own name is never
 * followed (a link there is refused when the directory is opened, by
 * statedir_open, which says so).  NULL when parent cannot be resolved
 * (nothing is made there either).  */
static char *
statedir_resolved (const char *parent, uid_t uid)
{
  cleanup_free char *real = realpath (parent, NULL);
  if (real == NULL)
    return NULL;
  return xasprintf (STATEDIR_FORMAT, strcmp (real, "/") == 0 ? "" : real,
                    (unsigned long) uid);
}

char *
statedir_below (const char *parent, uid_t uid, const char *root)
{
  cleanup_free char *dir = statedir_resolved (parent, uid);
  size_t n = strcmp (root, "/") == 0 ? 0 : strlen (root);
  if (dir == NULL || strncmp (dir, root, n) != 0 || dir[n] != '/')
    return NULL;
  return xstrdup (dir + n + 1);
}

int
statedir_refuse_workspace (const char *parent, uid_t uid, const char *root,
                           struct cr_error **err)
{
  cleanup_free char *dir = statedir_resolved (parent, uid);
  size_t n = dir != NULL ? strlen (dir) : 0;
  if (dir != NULL && strncmp (root, dir, n) == 0
      && (root[n] == '\0' || root[n] == '/'))
    return cr_error_set (err, 0,
                         "the workspace is inside the sandbox state "
                         "directory, which no command may write; run it "
                         "from another directory");
  return 0;
}

int
statedir_open (const char *parent, uid_t uid, gid_t gid, char **path_out,
               int *fd_out, struct cr_error **err)
{
  cleanup_free char *path
      = xasprintf (STATEDIR_FORMAT, parent, (unsigned long) uid);

  /* Create it if absent; a name someone else took between the two calls
   * is judged below like one that was there all along.  Root making one
   * for another user (the owner of the workspace) gives it to them, by the
   * descriptor of what was made: the name is not followed again.  */
  if (mkdir (path, 0700) == 0)
    {
      if (uid != geteuid () || gid != getegid ())
        {
          cleanup_close int made
              = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (made < 0 || fchown (made, uid, gid) < 0)
            return cr_error_set (err, errno,
                                 "giving the sandbox state directory to its "
                                 "user");
        }
    }
  else if (errno != EEXIST)
    return cr_error_set (err, errno,
                         "creating the sandbox state directory in %s", parent);
  if (statedir_open_made (path, uid, gid, fd_out, err) < 0)
    return -1;
  *path_out = steal_pointer (&path);
  return 0;
}

/* Open the state directory at path, which exists, judging what is found
 * there before and after opening it.  */
static int
statedir_open_made (const char *path, uid_t uid, gid_t gid, int *fd_out,
                    struct cr_error **err)
{
  cleanup_close int fd = -1;
  struct stat st;

  if (lstat (path, &st) < 0)
    return cr_error_set (err, errno, "examining the sandbox state directory");
  enum statedir_verdict v = statedir_judge (&st, uid, gid);
  if (v != STATEDIR_OK)
    return statedir_refuse (v, gid, err);
  /* What is opened is judged again: the name could have been swapped for
   * a symlink after the lstat (O_NOFOLLOW refuses that), or for another
   * directory (the second judgement sees its owner).  */
  fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
    return statedir_refuse (
        errno == ELOOP ? STATEDIR_SYMLINK : STATEDIR_NOT_DIR, gid, err);
  if (fd < 0)
    return cr_error_set (err, errno, "opening the sandbox state directory");
  if (fstat (fd, &st) < 0)
    return cr_error_set (err, errno, "examining the sandbox state directory");
  v = statedir_judge (&st, uid, gid);
  if (v != STATEDIR_OK)
    return statedir_refuse (v, gid, err);
  *fd_out = steal_fd (&fd);
  return 0;
}

static int statedir_remove_at (int dirfd, const char *name, int depth);

int
statedir_start_time (pid_t pid, unsigned long long *out)
{
  char path[64], buf[1024];
  cleanup_close int fd = -1;
  ssize_t n;
  char *p;

  snprintf (path, sizeof path, "/proc/%ld/stat", (long) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  /* The name in parentheses may hold anything: count fields after the
   * last ')'.  It is field 2; the start time is field 22.  */
  p = strrchr (buf, ')');
  for (int field = 2; p != NULL && field < 22; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL)
    return errno = EINVAL, -1;
  *out = strtoull (p + 1, NULL, 10);
  return 0;
}

/* Whether the crucible that made a pair named name is provably gone: its
 * pid runs no more, or runs a process that started at another time (the
 * pid was reused).  A name not of this form proves nothing.  */
static bool
statedir_owner_gone (const char *name)
{
  const char *p = name + strlen (STATEDIR_PAIR_PREFIX);
  unsigned long long start, now;
  char *end;
  long pid;

  if (strncmp (name, STATEDIR_PAIR_PREFIX, strlen (STATEDIR_PAIR_PREFIX)) != 0
      || *p < '1' || *p > '9')
    return false;
  errno = 0;
  pid = strtol (p, &end, 10);
  if (errno != 0 || *end != '-' || end[1] < '0' || end[1] > '9')
    return false;
  start = strtoull (end + 1, &end, 10);
  /* Then '-' and mkdtemp's six characters, and nothing more.  */
  if (errno != 0 || *end != '-' || strlen (end + 1) != 6
      || strchr (end + 1, '/') != NULL)
    return false;
  if (pid == (long) getpid ())
    return false;
  if (statedir_start_time ((pid_t) pid, &now) < 0)
    return errno == ENOENT;
  return now != start;
}

int
statedir_recover (const char *statedir, int *removed)
{
  cleanup_closedir DIR *dir = opendir (statedir);
  struct dirent *de;
  int rc = 0;

  *removed = 0;
  if (dir == NULL)
    return -1;
  while ((de = readdir (dir)) != NULL)
    {
      if (!statedir_owner_gone (de->d_name))
        continue;
      if (statedir_remove_at (dirfd (dir), de->d_name, 0) < 0)
        rc = -1;
      else
        (*removed)++;
    }
  return rc;
}

/* Free the strings of a pair.  */
static void
statedir_pair_clear (struct statedir_pair *pair)
{
  free (pair->dir);
  free (pair->upper);
  free (pair->work);
  pair->dir = pair->upper = pair->work = NULL;
}

int
statedir_pair_create (const char *statedir, const char *workspace,
                      struct statedir_pair *out, struct cr_error **err)
{
  struct stat ws;
  struct statedir_pair pair = { 0 };

  if (stat (workspace, &ws) < 0)
    return cr_error_set (err, errno, "examining the workspace root");
  unsigned long long start = 0;
  statedir_start_time (getpid (), &start);
  /* Named for its owner (pid and start time), so that a pair left by a
   * crucible killed outright can be told from one still in use.  */
  pair.dir = xasprintf ("%s/" STATEDIR_PAIR_PREFIX "%ld-%llu-XXXXXX", statedir,
                        (long) getpid (), start);
  if (mkdtemp (pair.dir) == NULL)
    {
      int saved = errno;
      statedir_pair_clear (&pair);
      return cr_error_set (err, saved,
                           "making the command's layer directory in the "
                           "sandbox state directory");
    }
  pair.upper = xasprintf ("%s/upper", pair.dir);
  pair.work = xasprintf ("%s/work", pair.dir);
  /* The merged root takes on the upper's owner and mode; setuid, setgid
   * and sticky bits are not carried over.  Only root can give the upper
   * another owner, and only root needs to.  In a state directory that
   * belongs to someone else (root running the workspace owner's sandbox),
   * the whole pair is that user's: their bwrap binds it.  */
  struct stat sd;
  bool give = geteuid () == 0 && stat (statedir, &sd) == 0 && sd.st_uid != 0;
  if (mkdir (pair.upper, 0700) < 0 || mkdir (pair.work, 0700) < 0
      || (geteuid () == 0 && chown (pair.upper, ws.st_uid, ws.st_gid) < 0)
      || (give
          && (chown (pair.dir, sd.st_uid, sd.st_gid) < 0
              || chown (pair.work, sd.st_uid, sd.st_gid) < 0))
      || chmod (pair.upper, ws.st_mode & 0777) < 0)
    {
      int saved = errno;
      struct cr_error *ignored = NULL;
      statedir_pair_remove (&pair, &ignored);
      cr_error_free (ignored);
      return cr_error_set (err, saved, "making the command's overlay layers");
    }
  *out = pair;
  return 0;
}

/* Empty the open directory fd, entry by entry.  */
static int
statedir_empty_dir (int fd, int depth)
{
  int dup_fd = dup (fd);
  cleanup_closedir DIR *dir = dup_fd < 0 ? NULL : fdopendir (dup_fd);
  struct dirent *de;
  int rc = 0;

  if (dir == NULL)
    {
      if (dup_fd >= 0)
        close (dup_fd);
      return -1;
    }
  while ((de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (statedir_remove_at (fd, de->d_name, depth + 1) < 0)
        rc = -1;
    }
  return rc;
}

/* Remove name under dirfd and everything below it, never following a
 * symlink: the upper holds whatever the workload chose to create.  */
static int
statedir_remove_at (int dirfd, const char *name, int depth)
{
  struct stat st;

  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR (st.st_mode))
    return unlinkat (dirfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
  if (depth > STATEDIR_MAX_DEPTH)
    {
      errno = ELOOP;
      return -1;
    }
  /* overlayfs leaves work/work mode 000, and the workload may have made
   * directories it cannot itself list: make each one ours to empty.
   * Through a descriptor of the directory itself (pubfs_chmod_dir), not
   * its name: root removing a pair in another user's state directory
   * must not follow a link that user swapped in since the fstatat above
   * and change the mode of what it points to.  */
  if ((st.st_mode & 0700) != 0700)
    (void) pubfs_chmod_dir (dirfd, name, 0700);
  cleanup_close int fd
      = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  int rc = statedir_empty_dir (fd, depth);
  if (unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return -1;
  return rc;
}

int
statedir_pair_remove (struct statedir_pair *pair, struct cr_error **err)
{
  int rc = 0;

  if (pair->dir != NULL && statedir_remove_at (AT_FDCWD, pair->dir, 0) < 0)
    rc = cr_error_set (err, errno, "removing the command's overlay layers");
  statedir_pair_clear (pair);
  return rc;
}

/* Whether the directory at path holds no entry but . and ..; false when
 * it cannot be read, or is not a directory of its own (never followed).  */
static bool
statedir_dir_empty (const char *path)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_closedir DIR *dir = fd < 0 ? NULL : fdopendir (fd);
  struct dirent *de;

  if (dir == NULL)
    {
      if (fd >= 0)
        close (fd);
      return false;
    }
  errno = 0;
  while ((de = readdir (dir)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      return false;
  return errno == 0;
}

int
statedir_pair_release (struct statedir_pair *pair, bool *left,
                       struct cr_error **err)
{
  /* What is left is overlayfs's own scratch (work/work and its volatile
   * marker) and the empty upper: removing those frees their blocks, which
   * on a file system mounted with discard waits on the disk for each
   * (about 0.6 ms a command on a virtual disk), after the command's
   * answer and before crucible run exits.  */
  *left = pair->dir != NULL && pair->upper != NULL
          && statedir_dir_empty (pair->upper);
  if (!*left)
    return statedir_pair_remove (pair, err);
  statedir_pair_clear (pair);
  return 0;
}

/* --- the remembered probe -------------------------------------------------
 */

/* The name of the record for a key's digest, in buf.  */
static void
statedir_probe_name (const char *key_digest, char *buf, size_t n)
{
  snprintf (buf, n, STATEDIR_PROBE_PREFIX "%s", key_digest);
}

/* The state directory of uid, opened only when it is already there and
 * sound (never made: looking for a record changes nothing); -1 when not.  */
static int
statedir_open_existing (const char *parent, uid_t uid, gid_t gid)
{
  cleanup_free char *path
      = xasprintf (STATEDIR_FORMAT, parent, (unsigned long) uid);
  struct cr_error *ignored = NULL;
  int fd = -1;

  if (statedir_open_made (path, uid, gid, &fd, &ignored) < 0)
    {
      cr_error_free (ignored);
      return -1;
    }
  return fd;
}

/* Whether the open record fd can be believed: a regular file with one
 * name, owned by whoever reads it and writable by nobody else.  Anyone
 * else who could write it could make a failing bwrap look passed.  */
static bool
statedir_probe_trusted (int fd)
{
  struct stat st;

  return fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_nlink == 1
         && st.st_uid == geteuid () && (st.st_mode & 022) == 0
         && st.st_size < STATEDIR_PROBE_BYTES;
}

int
statedir_probe_recall (const char *parent, uid_t uid, gid_t gid,
                       const char *key_digest, char *whole, size_t whole_n,
                       char *version, size_t n)
{
  static const char head[] = STATEDIR_PROBE_HEAD "\n"
                                                 "key ";
  char name[STATEDIR_PROBE_NAME_MAX], text[STATEDIR_PROBE_BYTES];
  /* The directory is this user's, 0700, judged by descriptor; a
   * directory that another uid owns or can write is never read from.  */
  cleanup_close int dir = statedir_open_existing (parent, uid, gid);
  cleanup_close int fd = -1;
  ssize_t got;

  if (dir < 0)
    return 0;
  statedir_probe_name (key_digest, name, sizeof name);
  fd = openat (dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || !statedir_probe_trusted (fd))
    return 0;
  got = read (fd, text, sizeof text - 1);
  if (got <= 0)
    return 0;
  text[got] = '\0';
  /* Exactly the head, the whole key's line and the version line;
   * anything else is not a record this build wrote.  */
  if (strncmp (text, head, sizeof head - 1) != 0)
    return 0;
  const char *k = text + sizeof head - 1;
  size_t klen = strcspn (k, "\n");
  if (k[klen] != '\n' || klen + 1 > whole_n
      || strncmp (k + klen + 1, "version ", 8) != 0)
    return 0;
  const char *v = k + klen + 1 + 8;
  size_t len = strcspn (v, "\n");
  if (v[len] != '\n' || v[len + 1] != '\0' || len + 1 > n)
    return 0;
  memcpy (whole, k, klen);
  whole[klen] = '\0';
  memcpy (version, v, len);
  version[len] = '\0';
  return 1;
}

/* Remove the records in dir last written before cutoff, other than keep:
 * each build or bwrap leaves one behind.  */
static void
statedir_probe_prune (int dir, const char *keep, time_t cutoff)
{
  int dup_fd = dup (dir);
  cleanup_closedir DIR *d = dup_fd < 0 ? NULL : fdopendir (dup_fd);
  struct dirent *de;
  struct stat st;

  if (d == NULL)
    {
      if (dup_fd >= 0)
        close (dup_fd);
      return;
    }
  while ((de = readdir (d)) != NULL)
    if (strncmp (de->d_name, STATEDIR_PROBE_PREFIX,
                 sizeof STATEDIR_PROBE_PREFIX - 1)
            == 0
        && strcmp (de->d_name, keep) != 0
        && fstatat (dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
        && st.st_mtime < cutoff)
      unlinkat (dir, de->d_name, 0);
}

int
statedir_probe_remember (const char *parent, uid_t uid, gid_t gid,
                         const char *key_digest, const char *whole,
                         const char *version)
{
  char name[STATEDIR_PROBE_NAME_MAX], tmp[STATEDIR_PROBE_NAME_MAX + 16];
  char *path = NULL;
  struct cr_error *ignored = NULL;
  cleanup_close int dir = -1;

  if (statedir_open (parent, uid, gid, &path, &dir, &ignored) < 0)
    {
      cr_error_free (ignored);
      return -1;
    }
  free (path);
  statedir_probe_name (key_digest, name, sizeof name);
  snprintf (tmp, sizeof tmp, "%s.%ld.tmp", name, (long) getpid ());
  cleanup_free char *text = xasprintf (
      STATEDIR_PROBE_HEAD "\nkey %s\nversion %s\n", whole, version);
  size_t len = strlen (text);
  /* Written aside and renamed over: a reader sees a whole record or
   * none, and a crash leaves at most a .tmp, which is never read.  */
  int fd = openat (dir, tmp,
                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  bool written = write (fd, text, len) == (ssize_t) len;
  if (close (fd) < 0 || !written || renameat (dir, tmp, dir, name) < 0)
    {
      unlinkat (dir, tmp, 0);
      return -1;
    }
  statedir_probe_prune (dir, name, time (NULL) - STATEDIR_PROBE_KEEP_S);
  return 0;
}

void
statedir_probe_forget (const char *parent, uid_t uid, gid_t gid,
                       const char *key_digest)
{
  char name[STATEDIR_PROBE_NAME_MAX];
  cleanup_close int dir = statedir_open_existing (parent, uid, gid);

  if (dir < 0)
    return;
  statedir_probe_name (key_digest, name, sizeof name);
  unlinkat (dir, name, 0);
}

/* --- the tools an mcp__<server> rule covers --------------------------------
 */

/* The name of the grant record for a key's digest, in buf.  */
static void
statedir_grant_name (const char *key_digest, char *buf, size_t n)
{
  snprintf (buf, n, STATEDIR_GRANT_PREFIX "%s", key_digest);
}

void
statedir_grant_key (const char *home_file, const char *server, const char *rule,
                    char *hex)
{
  /* NUL-separated, so that no two keys run together into one text.  */
  struct buf key = BUF_INIT;
  buf_puts (&key, STATEDIR_GRANT_HEAD);
  buf_putc (&key, '\0');
  buf_puts (&key, home_file);
  buf_putc (&key, '\0');
  buf_puts (&key, server);
  buf_putc (&key, '\0');
  buf_puts (&key, rule);
  sha256_buffer (key.data, key.len, hex);
  buf_free (&key);
}

char *
statedir_grant_path (const char *parent, uid_t uid, const char *key_digest)
{
  char name[STATEDIR_PROBE_NAME_MAX];
  statedir_grant_name (key_digest, name, sizeof name);
  return xasprintf (STATEDIR_FORMAT "/%s", parent, (unsigned long) uid, name);
}

/* Whether name can be a recorded tool's: what core/mcpclient.c lets a
 * listing offer.  */
static bool
statedir_grant_tool_ok (const char *name, size_t n)
{
  if (n == 0 || n > 128)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!(isascii ((unsigned char) name[i])
          && (isalnum ((unsigned char) name[i]) || name[i] == '-'
              || name[i] == '_')))
      return false;
  return true;
}

/* Free a NULL-terminated list of n names.  */
static void
statedir_grant_names_free (char **names, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
}

/* Parse a record's text (NUL-terminated, len bytes) for server and rule
 * into *tools_out: the head, "server S", "rule R", one "tool T" a name,
 * then "end" and nothing after it.  -1 when it is anything else.  */
static int
statedir_grant_parse (const char *text, size_t len, const char *server,
                      const char *rule, char ***tools_out, size_t *n_out)
{
  cleanup_free char *top = xasprintf (STATEDIR_GRANT_HEAD "\nserver %s\n"
                                                          "rule %s\n",
                                      server, rule);
  size_t top_len = strlen (top), n = 0;
  char **tools = NULL;
  const char *p = text + top_len;

  if (strlen (text) != len || len < top_len || memcmp (text, top, top_len) != 0)
    return -1;
  tools = xcalloc (1, sizeof *tools);
  while (strncmp (p, "tool ", 5) == 0)
    {
      size_t w = strcspn (p + 5, "\n");
      if (p[5 + w] != '\n' || !statedir_grant_tool_ok (p + 5, w))
        {
          statedir_grant_names_free (tools, n);
          return -1;
        }
      tools = xrealloc (tools, (n + 2) * sizeof *tools);
      tools[n++] = xstrndup (p + 5, w);
      tools[n] = NULL;
      p += 5 + w + 1;
    }
  if (strcmp (p, "end\n") != 0)
    {
      statedir_grant_names_free (tools, n);
      return -1;
    }
  *tools_out = tools;
  *n_out = n;
  return 0;
}

/* The text of fd, a record, into a new string (*len bytes); NULL when it
 * cannot be read or is longer than any record crucible writes.  */
static char *
statedir_grant_read (int fd, size_t *len)
{
  cleanup_free char *text = xmalloc (STATEDIR_GRANT_BYTES + 1);
  size_t got = 0;

  for (;;)
    {
      ssize_t r = read (fd, text + got, STATEDIR_GRANT_BYTES + 1 - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return NULL;
      if (r == 0)
        break;
      got += (size_t) r;
      if (got > STATEDIR_GRANT_BYTES)
        return NULL;
    }
  text[got] = '\0';
  *len = got;
  return steal_pointer (&text);
}

int
statedir_grant_recall (const char *parent, uid_t uid, gid_t gid,
                       const char *key_digest, const char *server,
                       const char *rule, char ***tools_out, size_t *n_out,
                       struct cr_error **err)
{
  char name[STATEDIR_PROBE_NAME_MAX];
  cleanup_free char *path
      = xasprintf (STATEDIR_FORMAT, parent, (unsigned long) uid);
  cleanup_close int dir = -1;
  cleanup_close int fd = -1;
  cleanup_free char *text = NULL;
  struct stat st;
  size_t len = 0;

  *tools_out = NULL;
  *n_out = 0;
  /* No state directory yet: nothing was ever recorded.  One that is
   * there is judged by descriptor; a directory another uid owns or can
   * write is never read from (it could hand this user any grant).  */
  if (lstat (path, &st) < 0 && errno == ENOENT)
    return 0;
  if (statedir_open_made (path, uid, gid, &dir, err) < 0)
    return -1;
  statedir_grant_name (key_digest, name, sizeof name);
  fd = openat (dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0)
    return cr_error_set (err, errno, "opening it");
  /* Anyone else who could write it could widen the rule to any tool.  */
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_nlink != 1
      || st.st_uid != geteuid () || (st.st_mode & 022) != 0)
    return cr_error_set (err, 0,
                         "it is not a regular file of one name that only "
                         "you can write");
  text = statedir_grant_read (fd, &len);
  if (text == NULL)
    return cr_error_set (err, errno, "reading it");
  if (statedir_grant_parse (text, len, server, rule, tools_out, n_out) < 0)
    return cr_error_set (err, 0, "it is not a record crucible wrote for %s",
                         rule);
  return 1;
}

int
statedir_grant_remember (const char *parent, uid_t uid, gid_t gid,
                         const char *key_digest, const char *server,
                         const char *rule, char *const *tools, size_t n,
                         struct cr_error **err)
{
  char name[STATEDIR_PROBE_NAME_MAX], tmp[STATEDIR_PROBE_NAME_MAX + 24];
  cleanup_free char *path = NULL;
  cleanup_close int dir = -1;
  struct buf text = BUF_INIT;

  if (statedir_open (parent, uid, gid, &path, &dir, err) < 0)
    return -1;
  statedir_grant_name (key_digest, name, sizeof name);
  snprintf (tmp, sizeof tmp, "%s.%ld.tmp", name, (long) getpid ());
  buf_printf (&text, STATEDIR_GRANT_HEAD "\nserver %s\nrule %s\n", server,
              rule);
  for (size_t i = 0; i < n; i++)
    buf_printf (&text, "tool %s\n", tools[i]);
  buf_puts (&text, "end\n");
  /* Written aside and moved into place: a reader sees a whole record or
   * none, and a crash leaves at most a .tmp, which is never read.  */
  int fd = openat (dir, tmp,
                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      buf_free (&text);
      return cr_error_set (err, errno, "creating %s/%s", path, tmp);
    }
  bool whole = text.len <= STATEDIR_GRANT_BYTES
               && write (fd, text.data, text.len) == (ssize_t) text.len;
  int saved = errno;
  buf_free (&text);
  if (close (fd) < 0 || !whole)
    {
      unlinkat (dir, tmp, 0);
      return cr_error_set (err, whole ? errno : saved, "writing %s/%s", path,
                           tmp);
    }
  /* Never over another record: the first listing seen with the rule
   * stays what it covers, also when two crucible processes race.  */
  if (renameat2 (dir, tmp, dir, name, RENAME_NOREPLACE) < 0)
    {
      saved = errno;
      unlinkat (dir, tmp, 0);
      if (saved == EEXIST)
        return 1;
      return cr_error_set (err, saved, "moving the record into place as %s/%s",
                           path, name);
    }
  return 0;
}
