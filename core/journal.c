/* The session journal: lifecycle facts as JSON Lines.  */
#include <config.h>

#include "core/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/jsonw.h"
#include "lib/utf8.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"

/* What an ellipsis costs, encoded: "…" is U+2026, three bytes.  */
#define JOURNAL_ELLIPSIS "\xe2\x80\xa6"
#define JOURNAL_ELLIPSIS_LEN 3

struct journal
{
  int fd;
  char session[JOURNAL_SESSION_LEN + 1];
  char *path;    /* NULL when opened on a descriptor */
  int dirfd;     /* O_PATH descriptor of path's directory, or -1 */
  uint64_t seq;  /* the last seq given out */
  uint64_t lost; /* facts whose line was not written */
  bool torn;     /* a partial line was left: end it before the next */
};

static const char *const journal_fact_names[JOURNAL_FACT_COUNT] = {
  [JOURNAL_SESSION_START] = "session_start",
  [JOURNAL_SESSION_END] = "session_end",
  [JOURNAL_POLICY] = "policy",
  [JOURNAL_START] = "start",
  [JOURNAL_FINISH] = "finish",
  [JOURNAL_ENDING] = "ending",
  [JOURNAL_BACKGROUND] = "background",
  [JOURNAL_STOP] = "stop",
  [JOURNAL_STOP_FAILED] = "stop_failed",
  [JOURNAL_CLEANUP] = "cleanup",
  [JOURNAL_CLEANUP_FAILED] = "cleanup_failed",
  [JOURNAL_REFUSAL] = "refusal",
  [JOURNAL_APPROVAL] = "approval",
  [JOURNAL_VIOLATION] = "violation",
  [JOURNAL_USAGE] = "usage",
  [JOURNAL_PUBLICATION] = "publication",
  [JOURNAL_CAPABILITIES] = "capabilities",
  [JOURNAL_PEER] = "peer",
  [JOURNAL_NETWORK] = "network",
};

/* Names every line has, and names that would invite forbidden content: a
 * tripwire against a caller adding a command line or a secret by name.  */
static const char *const journal_refused_names[] = {
  "ts",           "session",     "seq",        "fact",        "command",
  "call",         "argv",        "args",       "arguments",   "cmdline",
  "command_line", "description", "env",        "environment", "password",
  "secret",       "token",       "credential", "credentials", NULL,
};

const char *
journal_fact_name (enum journal_fact fact)
{
  if ((unsigned) fact >= JOURNAL_FACT_COUNT)
    return NULL;
  return journal_fact_names[fact];
}

/* Report a failure of journal_fact() without touching an error the caller
 * already holds.  Returns -1.  */
static int journal_fail (struct cr_error **err, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
journal_fail (struct cr_error **err, int code, const char *fmt, ...)
{
  va_list ap;

  if (err == NULL || *err != NULL)
    return -1;
  va_start (ap, fmt);
  cleanup_free char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  return cr_error_set (err, code, "%s", msg);
}

/* Whether s is a session id: exactly JOURNAL_SESSION_LEN lowercase hex.  */
static bool
journal_session_valid (const char *s)
{
  size_t i;
  for (i = 0; s[i] != '\0'; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return i == JOURNAL_SESSION_LEN;
}

/* Fill out with a fresh random session id from getrandom().  */
static int
journal_session_random (char out[JOURNAL_SESSION_LEN + 1],
                        struct cr_error **err)
{
  unsigned char bytes[JOURNAL_SESSION_LEN / 2];
  size_t got = 0;

  while (got < sizeof bytes)
    {
      ssize_t n = getrandom (bytes + got, sizeof bytes - got, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return cr_error_set (err, errno, _ ("making a journal session id"));
      got += (size_t) n;
    }
  buf_hex (out, bytes, sizeof bytes);
  return 0;
}

/* Take session, or make one when it is NULL.  */
static int
journal_session_pick (char out[JOURNAL_SESSION_LEN + 1], const char *session,
                      struct cr_error **err)
{
  if (session == NULL)
    return journal_session_random (out, err);
  if (!journal_session_valid (session))
    return cr_error_set (err, 0,
                         _ ("journal session id '%.64s' is not %d lowercase "
                            "hex digits"),
                         session, JOURNAL_SESSION_LEN);
  memcpy (out, session, JOURNAL_SESSION_LEN + 1);
  return 0;
}

/* The default directory: $XDG_STATE_HOME/crucible when that is absolute
 * (the XDG rule is to ignore a relative one), else
 * $HOME/.local/state/crucible.  The caller owns the result; NULL after
 * filling *err.  */
static char *
journal_default_dir (struct cr_error **err)
{
  const char *xdg = getenv ("XDG_STATE_HOME");
  if (xdg != NULL && xdg[0] == '/')
    return xasprintf ("%s/crucible", xdg);
  const char *home = getenv ("HOME");
  if (home == NULL || home[0] == '\0')
    {
      cr_error_set (err, 0,
                    _ ("placing the journal: neither XDG_STATE_HOME nor "
                       "HOME is set"));
      return NULL;
    }
  if (home[0] != '/')
    {
      cr_error_set (err, 0,
                    _ ("placing the journal: HOME '%s' is not an absolute "
                       "path"),
                    home);
      return NULL;
    }
  return xasprintf ("%s/.local/state/crucible", home);
}

/* Open the directory component name under parent (an O_PATH descriptor),
 * creating it mode 0700 when it is missing.  Returns a descriptor or -1.
 * shown is the path so far, for messages.  */
static int
journal_dir_step (int parent, const char *name, const char *shown,
                  struct cr_error **err)
{
  int flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  int fd = openat (parent, name, flags);
  if (fd >= 0)
    return fd;
  if (errno != ENOENT)
    return cr_error_set (err, errno, _ ("opening journal directory %s"), shown);
  if (mkdirat (parent, name, 0700) < 0 && errno != EEXIST)
    return cr_error_set (err, errno, _ ("creating journal directory %s"),
                         shown);
  fd = openat (parent, name, flags);
  if (fd < 0)
    return cr_error_set (err, errno, _ ("opening journal directory %s"), shown);
  return fd;
}

/* Check that the final directory is one the user alone controls.  Whoever
 * else could write it could remove or rename the journal under us.  */
static int
journal_dir_check (int fd, const char *dir, struct cr_error **err)
{
  struct stat st;

  if (fstat (fd, &st) < 0)
    return cr_error_set (err, errno, _ ("checking journal directory %s"), dir);
  if (!S_ISDIR (st.st_mode))
    return cr_error_set (err, 0, _ ("journal directory %s is not a directory"),
                         dir);
  if (st.st_uid != geteuid ())
    return cr_error_set (err, 0,
                         _ ("journal directory %s is owned by uid %lu, not "
                            "by you (uid %lu); refusing it"),
                         dir, (unsigned long) st.st_uid,
                         (unsigned long) geteuid ());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return cr_error_set (err, 0,
                         _ ("journal directory %s is writable by others "
                            "(mode %04o); refusing it"),
                         dir, (unsigned) (st.st_mode & 07777));
  return 0;
}

/* Open the last component: created when missing, never followed when it is
 * a symbolic link (an attacker's link would send facts elsewhere).  */
static int
journal_dir_last (int parent, const char *name, const char *dir,
                  struct cr_error **err)
{
  struct stat st;

  if (fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno != ENOENT)
        return cr_error_set (err, errno, _ ("checking journal directory %s"),
                             dir);
      if (mkdirat (parent, name, 0700) < 0 && errno != EEXIST)
        return cr_error_set (err, errno, _ ("creating journal directory %s"),
                             dir);
      if (fstatat (parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return cr_error_set (err, errno, _ ("checking journal directory %s"),
                             dir);
    }
  if (S_ISLNK (st.st_mode))
    return cr_error_set (err, 0,
                         _ ("journal directory %s is a symbolic link; "
                            "refusing it"),
                         dir);
  if (!S_ISDIR (st.st_mode))
    return cr_error_set (err, 0, _ ("journal directory %s is not a directory"),
                         dir);
  cleanup_close int fd
      = openat (parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return cr_error_set (err, errno, _ ("opening journal directory %s"), dir);
  struct stat now;
  if (fstat (fd, &now) < 0)
    return cr_error_set (err, errno, _ ("checking journal directory %s"), dir);
  if (now.st_dev != st.st_dev || now.st_ino != st.st_ino)
    return cr_error_set (err, 0,
                         _ ("journal directory %s changed while it was "
                            "opened; refusing it"),
                         dir);
  if (journal_dir_check (fd, dir, err) < 0)
    return -1;
  return steal_fd (&fd);
}

/* Open dir (absolute) as an O_PATH descriptor, creating each missing
 * component mode 0700.  Components before the last may be symbolic links
 * (a home directory often is one); the last may not.  */
static int
journal_dir_open (const char *dir, struct cr_error **err)
{
  if (dir[0] != '/')
    return cr_error_set (
        err, 0, _ ("journal directory %s is not an absolute path"), dir);
  cleanup_free char *copy = xstrdup (dir);
  size_t len = strlen (copy);
  while (len > 1 && copy[len - 1] == '/')
    copy[--len] = '\0';

  cleanup_close int fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return cr_error_set (err, errno, _ ("opening journal directory /"));
  if (len == 1)
    {
      if (journal_dir_check (fd, "/", err) < 0)
        return -1;
      return steal_fd (&fd);
    }

  char *last = strrchr (copy, '/') + 1;
  for (char *p = copy + 1; p < last;)
    {
      char *slash = strchr (p, '/');
      *slash = '\0';
      if (*p != '\0')
        {
          int next = journal_dir_step (fd, p, copy, err);
          if (next < 0)
            return -1;
          close (fd);
          fd = next;
        }
      *slash = '/';
      p = slash + 1;
    }
  return journal_dir_last (fd, last, copy, err);
}

/* Whether name is a session's file: 32 lowercase hex digits and
 * ".jsonl".  */
static bool
journal_file_name (const char *name)
{
  size_t n = strlen (name);
  if (n != JOURNAL_SESSION_LEN + 6
      || strcmp (name + JOURNAL_SESSION_LEN, ".jsonl") != 0)
    return false;
  char id[JOURNAL_SESSION_LEN + 1];
  memcpy (id, name, JOURNAL_SESSION_LEN);
  id[JOURNAL_SESSION_LEN] = '\0';
  return journal_session_valid (id);
}

/* Remove dirfd's file name when it is an ended session's file last
 * written before cutoff: a regular file of this user (me), not a link, and
 * not locked by the session writing it.  1 when removed, 0 when kept,
 * -1 with errno when it could not be looked at.  */
static int
journal_retain_one (int dirfd, const char *name, time_t cutoff, uid_t me)
{
  struct stat seen;
  /* Most files are recent or someone else's: judged by their name's
   * inode alone, they cost no open; the open below judges again.  */
  if (fstatat (dirfd, name, &seen, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  if (!S_ISREG (seen.st_mode) || seen.st_uid != me || seen.st_mtime >= cutoff)
    return 0;
  cleanup_close int fd = openat (
      dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return errno == ELOOP ? 0 : -1;
  struct stat st;
  if (fstat (fd, &st) < 0)
    return -1;
  if (!S_ISREG (st.st_mode) || st.st_uid != me || st.st_mtime >= cutoff)
    return 0;
  /* The lock is held while the name is removed, so a session cannot be
   * writing the file it names; a session never reopens a file (O_EXCL),
   * so none can take it afterwards.  */
  if (flock (fd, LOCK_EX | LOCK_NB) < 0)
    return errno == EWOULDBLOCK ? 0 : -1;
  struct stat now;
  if (fstatat (dirfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0
      || now.st_ino != st.st_ino || now.st_dev != st.st_dev)
    return 0;
  if (unlinkat (dirfd, name, 0) < 0)
    return -1;
  return 1;
}

/* About how many journal files one start looks at (journal_retain).  */
#define JOURNAL_RETAIN_BUDGET 64

/* How many leading hex digits of a name must match this session's id for
 * retention to look at it at this start: none (every file) up to
 * JOURNAL_RETAIN_BUDGET files, then one more digit for each sixteenfold,
 * so that a start looks at no more than that many (and at least a
 * sixteenth of it) however many there are, and each file is looked at on
 * average once every 16^digits starts.  */
static size_t
journal_retain_share (size_t files)
{
  size_t digits = 0;
  while (files > JOURNAL_RETAIN_BUDGET && digits < JOURNAL_SESSION_LEN)
    {
      files /= 16;
      digits++;
    }
  return digits;
}

/* How many leading hex digits name shares with the session id.  */
static size_t
journal_shared_digits (const char *name, const char *session)
{
  size_t i = 0;
  while (i < JOURNAL_SESSION_LEN && name[i] == session[i])
    i++;
  return i;
}

/* The names a start may look at, kept while the directory is listed.  */
struct journal_candidates
{
  char (*name)[JOURNAL_SESSION_LEN + sizeof ".jsonl"];
  size_t n, cap;
  size_t files; /* every other session's file listed so far */
};

/* List dirfd's session files other than this session's own.  How many
 * digits a name must share with the session id is only known once every
 * name is counted, but it never falls as the count grows: a name sharing
 * fewer than the count so far asks for can never be chosen, so it is
 * counted and not kept, and a start keeps a few dozen names however many
 * thousand the directory holds.  */
static void
journal_list_candidates (DIR *d, const char *session,
                         struct journal_candidates *c)
{
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (!journal_file_name (e->d_name))
        continue;
      size_t shared = journal_shared_digits (e->d_name, session);
      if (shared == JOURNAL_SESSION_LEN)
        continue; /* this session's own */
      c->files++;
      if (shared < journal_retain_share (c->files))
        continue;
      if (c->n == c->cap)
        {
          c->cap = c->cap ? c->cap * 2 : JOURNAL_RETAIN_BUDGET;
          c->name = xrealloc (c->name, c->cap * sizeof *c->name);
        }
      memcpy (c->name[c->n], e->d_name, sizeof c->name[c->n]);
      c->n++;
    }
}

int
journal_retain (const struct journal *j, uint64_t keep_days, uint64_t *removed,
                struct cr_error **err)
{
  *removed = 0;
  if (j == NULL || j->path == NULL || keep_days == 0)
    return 0;
  cleanup_free char *dir = xstrdup (j->path);
  *strrchr (dir, '/') = '\0';
  /* The directory the journal was created in, as checked then (one walk
   * of the state directory per start, not two): retention judges the
   * same directory the session writes, even if its path was moved since.  */
  cleanup_close int pathfd = -1;
  if (j->dirfd < 0)
    pathfd = journal_dir_open (*dir != '\0' ? dir : "/", err);
  if (j->dirfd < 0 && pathfd < 0)
    return -1;
  int dirfd = openat (j->dirfd >= 0 ? j->dirfd : pathfd, ".",
                      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return cr_error_set (err, errno, _ ("reading journal directory %s"), dir);
  DIR *d = fdopendir (dirfd);
  if (d == NULL)
    {
      close (dirfd);
      return cr_error_set (err, errno, _ ("reading journal directory %s"), dir);
    }
  time_t cutoff = time (NULL) - (time_t) (keep_days * 86400);
  uid_t me = geteuid ();
  int saved = 0;
  cleanup_free char *failed = NULL;
  /* The names first (the listing costs no system call per file), so that
   * how many files are looked at can be bounded (journal_retain_share).  */
  struct journal_candidates c = { 0 };
  journal_list_candidates (d, j->session, &c);
  /* This session's id is 128 random bits: the files whose name begins
   * with its first digits are a share drawn afresh at each start.  */
  size_t digits = journal_retain_share (c.files);
  for (size_t i = 0; i < c.n; i++)
    {
      if (journal_shared_digits (c.name[i], j->session) < digits)
        continue;
      int r = journal_retain_one (dirfd, c.name[i], cutoff, me);
      if (r > 0)
        (*removed)++;
      else if (r < 0 && failed == NULL)
        {
          saved = errno;
          failed = xstrdup (c.name[i]);
        }
    }
  free (c.name);
  closedir (d);
  if (failed != NULL)
    return cr_error_set (err, saved, _ ("removing old journal %s/%s"), dir,
                         failed);
  return 0;
}

/* Make a journal around an open descriptor, which it now owns.  */
static struct journal *
journal_new (int fd, const char *session, char *path)
{
  struct journal *j = xcalloc (1, sizeof *j);
  /* A live session holds its file locked, so that retention
   * (journal_retain) can tell it from one that ended; flock on an
   * O_APPEND descriptor, released when it closes.  A lock refused says
   * only that retention may not see this file as live.  */
  (void) flock (fd, LOCK_EX | LOCK_NB);
  j->fd = fd;
  j->dirfd = -1;
  memcpy (j->session, session, JOURNAL_SESSION_LEN + 1);
  j->path = path;
  return j;
}

int
journal_open_session (struct journal **out, const char *dir,
                      const char *session, struct cr_error **err)
{
  char id[JOURNAL_SESSION_LEN + 1];
  cleanup_free char *fallback = NULL;

  *out = NULL;
  if (journal_session_pick (id, session, err) < 0)
    return -1;
  if (dir == NULL)
    {
      fallback = journal_default_dir (err);
      if (fallback == NULL)
        return -1;
      dir = fallback;
    }
  cleanup_close int dirfd = journal_dir_open (dir, err);
  if (dirfd < 0)
    return -1;

  cleanup_free char *name = xasprintf ("%s.jsonl", id);
  cleanup_free char *path = xasprintf (
      "%s%s%s", dir, dir[strlen (dir) - 1] == '/' ? "" : "/", name);
  /* O_EXCL: a session's file is never reused or appended to by another;
   * O_NOFOLLOW: a planted link is refused (O_EXCL refuses it too).  */
  int fd = openat (
      dirfd, name,
      O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return cr_error_set (err, errno, _ ("creating journal %s"), path);
  *out = journal_new (fd, id, steal_pointer (&path));
  (*out)->dirfd = steal_fd (&dirfd);
  return 0;
}

int
journal_open (struct journal **out, const char *dir, struct cr_error **err)
{
  return journal_open_session (out, dir, NULL, err);
}

int
journal_open_fd (struct journal **out, int fd, const char *session,
                 struct cr_error **err)
{
  char id[JOURNAL_SESSION_LEN + 1];

  *out = NULL;
  if (journal_session_pick (id, session, err) < 0)
    {
      close (fd);
      return -1;
    }
  *out = journal_new (fd, id, NULL);
  return 0;
}

const char *
journal_session (const struct journal *j)
{
  return j->session;
}

const char *
journal_path (const struct journal *j)
{
  return j->path;
}

uint64_t
journal_lost (const struct journal *j)
{
  return j->lost;
}

/* Whether name may name a caller field.  */
static bool
journal_name_valid (const char *name)
{
  size_t len = strlen (name);
  if (len == 0 || len > JOURNAL_MAX_NAME || name[0] < 'a' || name[0] > 'z')
    return false;
  for (size_t i = 0; i < len; i++)
    if (!((name[i] >= 'a' && name[i] <= 'z')
          || (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
      return false;
  for (size_t i = 0; journal_refused_names[i] != NULL; i++)
    if (strcmp (name, journal_refused_names[i]) == 0)
      return false;
  return true;
}

/* Check the caller's fields; nothing is written when they are refused.  */
static int
journal_check_fields (const struct journal_field *fields, size_t n,
                      struct cr_error **err)
{
  if (n > JOURNAL_MAX_FIELDS)
    return journal_fail (err, 0, "journal fact with %zu fields (at most %d)", n,
                         JOURNAL_MAX_FIELDS);
  for (size_t i = 0; i < n; i++)
    {
      const struct journal_field *f = &fields[i];
      if (f->name == NULL || !journal_name_valid (f->name))
        return journal_fail (err, 0, "journal field name '%.40s' refused",
                             f->name != NULL ? f->name : "(null)");
      if (f->kind != JOURNAL_STRING && f->kind != JOURNAL_INT
          && f->kind != JOURNAL_BOOL)
        return journal_fail (err, 0, "journal field %s has no valid kind",
                             f->name);
      if (f->kind == JOURNAL_STRING && f->s == NULL)
        return journal_fail (err, 0, "journal field %s has no string", f->name);
      for (size_t k = 0; k < i; k++)
        if (strcmp (fields[k].name, f->name) == 0)
          return journal_fail (err, 0, "journal field %s given twice", f->name);
    }
  return 0;
}

/* Copy s into out as valid UTF-8, each invalid byte becoming U+FFFD.  Only
 * a prefix is read: past JOURNAL_MAX_STRING source bytes every character
 * costs at least one encoded byte, so nothing there survives the cut (the
 * slack lets the character straddling the bound finish).  */
static void
journal_clean (struct buf *out, const char *s)
{
  size_t len = strnlen (s, JOURNAL_MAX_STRING + 4);
  const unsigned char *u = (const unsigned char *) s;

  for (size_t i = 0; i < len;)
    {
      size_t k = utf8_char_len (u + i, len - i);
      if (k == 0)
        {
          buf_puts (out, UTF8_REPLACEMENT);
          i++;
          continue;
        }
      buf_append (out, s + i, k);
      i += k;
    }
  if (out->data == NULL)
    buf_append (out, "", 0);
}

/* Write s (valid UTF-8) as a JSON string of at most cap encoded bytes
 * between the quotes; a longer one is cut at a character boundary and ends
 * with "…".  cap is at least JOURNAL_ELLIPSIS_LEN.  */
static void
journal_put_string (struct jsonw *w, const char *s, size_t len, size_t cap)
{
  if (json_string_size (s, len) <= cap)
    {
      jsonw_string (w, s, len);
      return;
    }
  size_t used = 0, end = 0;
  while (end < len)
    {
      unsigned char c = (unsigned char) s[end];
      size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
      size_t cost = k == 1 ? json_byte_size (c) : k;
      if (used + cost + JOURNAL_ELLIPSIS_LEN > cap)
        break;
      used += cost;
      end += k;
    }
  struct buf cut = BUF_INIT;
  buf_append (&cut, s, end);
  buf_puts (&cut, JOURNAL_ELLIPSIS);
  jsonw_string (w, cut.data, cut.len);
  buf_free (&cut);
}

/* The civil date (proleptic Gregorian) of days since 1970-01-01, by
 * whole eras of 400 years (H. Hinnant's days_from_civil, inverted).  */
static void
journal_civil (int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
  days += 719468;
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  unsigned doe = (unsigned) (days - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t) yoe + era * 400 + (*m <= 2);
}

/* The current time, RFC 3339 in UTC with milliseconds.  Computed here
 * rather than by gmtime_r, whose first call loads the time zone
 * (/etc/localtime) at every start though journal times are UTC.  */
static void
journal_timestamp (char out[32])
{
  struct timespec now;
  int64_t y;
  unsigned m, d;

  clock_gettime (CLOCK_REALTIME, &now);
  int64_t secs = (int64_t) now.tv_sec;
  int64_t days = (secs >= 0 ? secs : secs - 86399) / 86400;
  int64_t rem = secs - days * 86400;
  journal_civil (days, &y, &m, &d);
  /* Room for any value of each field; a real one is 24 characters.  */
  char full[128];
  int n = snprintf (full, sizeof full,
                    "%04" PRId64 "-%02u-%02uT%02u:%02u:%02u.%03ldZ", y, m, d,
                    (unsigned) (rem / 3600), (unsigned) (rem / 60 % 60),
                    (unsigned) (rem % 60), now.tv_nsec / 1000000L);
  size_t len = n < 0 ? 0 : (size_t) n < 31 ? (size_t) n : 31;
  memcpy (out, full, len);
  out[len] = '\0';
}

/* What one line holds before it is laid out.  */
struct journal_line
{
  const char *ts;
  uint64_t seq;
  const char *fact;
  uint64_t command;
  const struct buf *call; /* cleaned; NULL: none */
  const struct journal_field *fields;
  const struct buf *strings; /* cleaned string of each field */
  size_t n;
};

/* Lay out one line, every string at most cap encoded bytes.  */
static void
journal_layout (const struct journal *j, const struct journal_line *l,
                size_t cap, struct buf *out)
{
  struct jsonw *w = jsonw_new ();
  size_t len;
  jsonw_object_open (w);
  jsonw_key (w, "ts");
  jsonw_cstr (w, l->ts);
  jsonw_key (w, "session");
  jsonw_cstr (w, j->session);
  jsonw_key (w, "seq");
  jsonw_uint (w, l->seq);
  jsonw_key (w, "fact");
  jsonw_cstr (w, l->fact);
  if (l->command != 0)
    {
      jsonw_key (w, "command");
      jsonw_uint (w, l->command);
    }
  if (l->call != NULL)
    {
      jsonw_key (w, "call");
      journal_put_string (w, l->call->data, l->call->len, cap);
    }
  for (size_t i = 0; i < l->n; i++)
    {
      const struct journal_field *f = &l->fields[i];
      jsonw_key (w, f->name);
      if (f->kind == JOURNAL_STRING)
        journal_put_string (w, l->strings[i].data, l->strings[i].len, cap);
      else if (f->kind == JOURNAL_INT)
        jsonw_int (w, f->i);
      else
        jsonw_bool (w, f->b);
    }
  jsonw_object_close (w);
  const char *text = jsonw_get (w, &len);
  out->len = 0;
  buf_append (out, text, len);
  buf_putc (out, '\n');
  jsonw_free (w);
}

/* Lay out the line within JOURNAL_MAX_LINE: strings at JOURNAL_MAX_STRING
 * when that fits, else at the largest common bound that does.  The bound
 * always exists: with every string at "…" a line is about 1 KiB.  */
static void
journal_fit (const struct journal *j, const struct journal_line *l,
             struct buf *out)
{
  journal_layout (j, l, JOURNAL_MAX_STRING, out);
  if (out->len <= JOURNAL_MAX_LINE)
    return;
  size_t lo = JOURNAL_ELLIPSIS_LEN, hi = JOURNAL_MAX_STRING - 1;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo + 1) / 2;
      journal_layout (j, l, mid, out);
      if (out->len <= JOURNAL_MAX_LINE)
        lo = mid;
      else
        hi = mid - 1;
    }
  journal_layout (j, l, lo, out);
}

/* Write all of data, retrying the remainder after a partial write.  Sets
 * *partial when some bytes went out before the failure.  */
static int
journal_write_all (int fd, const char *data, size_t len, bool *partial)
{
  size_t done = 0;

  *partial = false;
  while (done < len)
    {
      ssize_t n = write (fd, data + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (n == 0)
            errno = EIO;
          *partial = done > 0;
          return -1;
        }
      done += (size_t) n;
    }
  return 0;
}

/* Write a laid-out line.  After a torn line the file lacks its newline;
 * this line then starts with one, so the damage stays one unparsable
 * line rather than spoiling this one too.  */
static int
journal_emit (struct journal *j, const char *fact, struct buf *line,
              uint64_t seq, struct cr_error **err)
{
  const char *data = line->data;
  size_t len = line->len;
  cleanup_free char *mended = NULL;
  bool partial;

  if (j->torn)
    {
      mended = xasprintf ("\n%s", line->data);
      data = mended;
      len++;
    }
  if (journal_write_all (j->fd, data, len, &partial) < 0)
    {
      int saved = errno;
      j->lost++;
      j->torn = j->torn || partial;
      return journal_fail (
          err, saved, "writing journal fact %s (seq %" PRIu64 ") to %s", fact,
          seq, j->path != NULL ? j->path : "the journal");
    }
  j->torn = false;
  return 0;
}

size_t
journal_fields_from_lines (char *lines, struct journal_field *fields, size_t n,
                           size_t max)
{
  for (char *line = lines, *next; line != NULL && n < max; line = next)
    {
      next = strchr (line, '\n');
      if (next != NULL)
        *next++ = '\0';
      char *sp = strchr (line, ' ');
      if (sp == NULL || sp == line
          || strspn (line, "abcdefghijklmnopqrstuvwxyz_")
                 != (size_t) (sp - line))
        continue;
      *sp = '\0';
      fields[n++] = (struct journal_field) JOURNAL_STR (line, sp + 1);
    }
  return n;
}

int
journal_fact (struct journal *j, enum journal_fact fact, uint64_t command,
              const char *call, const struct journal_field *fields, size_t n,
              struct cr_error **err)
{
  const char *name = journal_fact_name (fact);
  if (name == NULL)
    return journal_fail (err, 0, "journal fact %d is not one", (int) fact);
  if (n > 0 && fields == NULL)
    return journal_fail (err, 0, "journal fact %s without its fields", name);
  if (journal_check_fields (fields, n, err) < 0)
    return -1;

  struct buf call_clean = BUF_INIT;
  struct buf *strings = xcalloc (n > 0 ? n : 1, sizeof *strings);
  if (call != NULL)
    journal_clean (&call_clean, call);
  for (size_t i = 0; i < n; i++)
    if (fields[i].kind == JOURNAL_STRING)
      journal_clean (&strings[i], fields[i].s);

  char ts[32];
  journal_timestamp (ts);
  struct journal_line l = {
    .ts = ts,
    .seq = ++j->seq,
    .fact = name,
    .command = command,
    .call = call != NULL ? &call_clean : NULL,
    .fields = fields,
    .strings = strings,
    .n = n,
  };
  struct buf line = BUF_INIT;
  journal_fit (j, &l, &line);
  int ret = journal_emit (j, name, &line, l.seq, err);

  buf_free (&line);
  buf_free (&call_clean);
  for (size_t i = 0; i < n; i++)
    buf_free (&strings[i]);
  free (strings);
  return ret;
}

int
journal_usage (struct journal *j, uint64_t command, const char *call,
               const struct journal_usage *usage, struct cr_error **err)
{
  const struct journal_field fields[] = {
    JOURNAL_INT64 ("cpu_user_ms", usage->cpu_user_ms),
    JOURNAL_INT64 ("cpu_system_ms", usage->cpu_system_ms),
    JOURNAL_INT64 ("max_rss_kib", usage->max_rss_kib),
    JOURNAL_INT64 ("bytes", usage->bytes),
    JOURNAL_INT64 ("lines", usage->lines),
  };
  return journal_fact (j, JOURNAL_USAGE, command, call, fields,
                       sizeof fields / sizeof fields[0], err);
}

void
journal_close (struct journal *j)
{
  if (j == NULL)
    return;
  if (j->fd >= 0)
    close (j->fd);
  if (j->dirfd >= 0)
    close (j->dirfd);
  free (j->path);
  free (j);
}
