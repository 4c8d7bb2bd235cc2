/* Finding the Linux backend's parts without starting them: the first
 * trusted bwrap, and the trusted crucible-sandbox-broker beside the
 * running program, each pinned by a descriptor so that the file checked is
 * the file run (sandbox/bwrap.h).  */
#include <config.h>

#include "sandbox/bwrap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"

void
bwrap_location_clear (struct bwrap_location *loc)
{
  free (loc->path);
  loc->path = NULL;
  if (loc->fd >= 0)
    close (loc->fd);
  loc->fd = -1;
  loc->sha256[0] = '\0';
}

/* --- trust ---------------------------------------------------------------- */

/* Whether st's owner is acceptable.  */
static bool
bwrap_owner_ok (const struct stat *st, bool allow_user, uid_t user)
{
  return st->st_uid == 0 || (allow_user && st->st_uid == user);
}

char *
bwrap_distrust (const char *path, bool allow_user, uid_t user)
{
  cleanup_free char *real = realpath (path, NULL);
  struct stat st;
  const char *owned = allow_user ? "owned by neither root nor you"
                                 : "owned by someone other than root";

  if (real == NULL)
    return xstrdup (errno == ENOENT ? "not found" : strerror (errno));
  if (lstat (real, &st) < 0)
    return xstrdup (strerror (errno));
  if (!S_ISREG (st.st_mode))
    return xstrdup ("not a regular file");
  if (!bwrap_owner_ok (&st, allow_user, user))
    return xstrdup (owned);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return xstrdup ("writable by group or others");
  if (access (real, X_OK) < 0)
    return xstrdup ("not executable by you");
  /* Every directory above: whoever can write one can swap the file.  */
  for (char *slash = strrchr (real, '/'); slash != NULL;
       slash = strrchr (real, '/'))
    {
      *slash = '\0';
      const char *dir = real[0] == '\0' ? "/" : real;
      if (stat (dir, &st) < 0)
        return xasprintf ("below %s: %s", dir, strerror (errno));
      if (!bwrap_owner_ok (&st, allow_user, user))
        return xasprintf ("below %s, which is %s", dir, owned);
      if (st.st_mode & (S_IWGRP | S_IWOTH))
        return xasprintf ("below %s, which group or others can write "
                          "(chmod g-w,o-w on it is the remedy)",
                          dir);
      if (real[0] == '\0')
        break;
    }
  return NULL;
}

/* Open a trusted file and check that what was opened is what was judged.  */
static int
bwrap_pin (const char *path, char **real_out)
{
  cleanup_free char *real = realpath (path, NULL);
  struct stat before, after;
  int fd;

  if (real == NULL || lstat (real, &before) < 0)
    return -1;
  fd = open (real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (fstat (fd, &after) < 0 || after.st_dev != before.st_dev
      || after.st_ino != before.st_ino)
    {
      close (fd);
      errno = ESTALE;
      return -1;
    }
  *real_out = steal_pointer (&real);
  return fd;
}

/* Add "place: why" to the list of places turned down.  */
static void
bwrap_note_refusal (struct buf *why, const char *place, const char *reason)
{
  buf_printf (why, "%s%s: %s", why->len > 0 ? "; " : "", place, reason);
}

/* Try one candidate; 1 when it was taken, 0 when turned down.  */
static int
bwrap_try (const char *cand, struct buf *why, struct bwrap_location *out)
{
  cleanup_free char *reason = bwrap_distrust (cand, false, 0);
  char *real = NULL;
  int fd;

  if (reason != NULL)
    {
      bwrap_note_refusal (why, cand, reason);
      return 0;
    }
  fd = bwrap_pin (cand, &real);
  if (fd < 0)
    {
      bwrap_note_refusal (why, cand, strerror (errno));
      return 0;
    }
  struct cr_error *err = NULL;
  if (sha256_fd (fd, out->sha256, &err) < 0)
    {
      bwrap_note_refusal (why, cand, err->msg);
      cr_error_free (err);
      close (fd);
      free (real);
      return 0;
    }
  out->path = real;
  out->fd = fd;
  return 1;
}

/* Whether cand names a file already tried (through its directory's real
 * path: on a merged /usr, /bin/bwrap is /usr/bin/bwrap); records it.  */
static bool
bwrap_seen (struct buf *seen, const char *cand)
{
  cleanup_free char *dir = xstrdup (cand);
  char *slash = strrchr (dir, '/');
  if (slash != NULL)
    *slash = '\0';
  cleanup_free char *real = realpath (dir[0] != '\0' ? dir : "/", NULL);
  cleanup_free char *key
      = xasprintf ("\n%s/bwrap\n", real != NULL ? real : dir);
  if (seen->data != NULL && strstr (seen->data, key) != NULL)
    return true;
  buf_puts (seen, key);
  return false;
}

/* Try cand unless it was tried already; *skip trusted ones are passed
 * over (counted down) before one is taken.  */
static bool
bwrap_try_once (const char *cand, struct buf *seen, struct buf *why, int *skip,
                struct bwrap_location *out)
{
  if (bwrap_seen (seen, cand) || !bwrap_try (cand, why, out))
    return false;
  if (*skip == 0)
    return true;
  (*skip)--;
  bwrap_location_clear (out);
  return false;
}

int
bwrap_locate_in (const char *path_env, struct bwrap_location *out,
                 struct cr_error **err)
{
  return bwrap_locate_nth (path_env, 0, out, err);
}

int
bwrap_locate_nth (const char *path_env, int nth, struct bwrap_location *out,
                  struct cr_error **err)
{
  static const char *const fixed[] = BWRAP_FIXED_CANDIDATES;
  struct buf why = BUF_INIT, seen = BUF_INIT;
  cleanup_free char *copy = xstrdup (path_env != NULL ? path_env : "");
  char *save = NULL;
  int entries = 0;

  out->path = NULL;
  out->fd = -1;
  out->sha256[0] = '\0';
  /* PATH entries, bounded; an empty or relative one names the current
   * directory, which a workspace controls, so it is never looked in.  */
  for (char *dir = strtok_r (copy, ":", &save);
       dir != NULL && entries < BWRAP_MAX_PATH_ENTRIES;
       dir = strtok_r (NULL, ":", &save), entries++)
    {
      if (dir[0] != '/' || strlen (dir) > PATH_MAX - 8)
        continue;
      cleanup_free char *cand = xasprintf ("%s/bwrap", dir);
      if (bwrap_try_once (cand, &seen, &why, &nth, out))
        goto found;
    }
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (bwrap_try_once (fixed[i], &seen, &why, &nth, out))
      goto found;
  cr_error_set (err, 0, "no trusted bwrap was found: %s",
                why.data != NULL ? why.data : "no candidate");
  buf_free (&why);
  buf_free (&seen);
  return -1;

found:
  buf_free (&why);
  buf_free (&seen);
  return 0;
}

int
bwrap_locate (struct bwrap_location *out, struct cr_error **err)
{
  return bwrap_locate_in (getenv ("PATH"), out, err);
}

int
broker_locate_in (const char *exe_dir, char **path_out, int *fd_out,
                  struct cr_error **err)
{
  struct buf why = BUF_INIT;
  cleanup_free char *beside = xasprintf ("%s/" BROKER_PROGRAM_NAME, exe_dir);
  cleanup_free char *above = xasprintf ("%s/../" BROKER_PROGRAM_NAME, exe_dir);
  const char *cands[2] = { beside, above };
  /* Each place in words too: inspection's report redacts paths.  */
  const char *where[2] = { "beside the program", "in the directory above it" };

  for (int i = 0; i < 2; i++)
    {
      cleanup_free char *reason = bwrap_distrust (cands[i], true, getuid ());
      char *real = NULL;
      int fd;
      if (reason == NULL && (fd = bwrap_pin (cands[i], &real)) >= 0)
        {
          buf_free (&why);
          *path_out = real;
          *fd_out = fd;
          return 0;
        }
      const char *because = reason != NULL ? reason : strerror (errno);
      cleanup_free char *place = xasprintf ("%s, %s", where[i], cands[i]);
      bwrap_note_refusal (&why, place, because);
    }
  cr_error_set (err, 0, "no trusted " BROKER_PROGRAM_NAME " was found: %s",
                why.data);
  buf_free (&why);
  return -1;
}

int
broker_locate (char **path_out, int *fd_out, struct cr_error **err)
{
  cleanup_free char *exe = realpath ("/proc/self/exe", NULL);
  char *slash;

  if (exe == NULL || (slash = strrchr (exe, '/')) == NULL)
    return cr_error_set (err, errno, "finding the running program");
  *slash = '\0';
  return broker_locate_in (exe[0] == '\0' ? "/" : exe, path_out, fd_out, err);
}
