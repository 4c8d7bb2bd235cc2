/* The directory core.hooksPath names inside the workspace
 * (sandbox/githooks.h), for every backend's protected roots.  */
#include <config.h>

#include "sandbox/githooks.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/pubguard.h"

/* The most of a git configuration file read for core.hooksPath; a larger
 * one is not git's own writing and is not read.  */
#define GITHOOKS_CONFIG_BYTES (1 << 20)

/* core.hooksPath as set in the git configuration file at path, or NULL
 * (not set, absent, not a regular file, too large).  */
static char *
githooks_path_in (const char *path)
{
  cleanup_close int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;

  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
      || st.st_size > GITHOOKS_CONFIG_BYTES)
    return NULL;
  cleanup_free char *text = xmalloc ((size_t) st.st_size + 1);
  size_t len = 0;
  ssize_t n;
  while (len < (size_t) st.st_size
         && (n = read (fd, text + len, (size_t) st.st_size - len)) > 0)
    len += (size_t) n;
  return pubguard_git_config_value (text, len, "core", "hookspath");
}

/* The repository's own configuration file when its git directory was not
 * given: .git/config, or, when .git is a file saying "gitdir: PATH" (a
 * worktree, --separate-git-dir), PATH/config.  Owned.  */
static char *
githooks_config_of (const char *workspace)
{
  cleanup_free char *name = xasprintf ("%s/.git", workspace);
  cleanup_close int fd
      = open (name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  char buf[4097];
  ssize_t n;

  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
      || (n = read (fd, buf, sizeof buf - 1)) <= 0
      || strncmp (buf, "gitdir: ", 8) != 0)
    return xasprintf ("%s/.git/config", workspace);
  buf[n] = '\0';
  char *path = buf + 8, *end = path + strcspn (path, "\r\n");
  *end = '\0';
  return path[0] == '/' ? xasprintf ("%s/config", path)
                        : xasprintf ("%s/%s/config", workspace, path);
}

/* core.hooksPath as git reads it for the workspace's repository: the
 * person's global files, then the repository's own, the last one set
 * winning.  NULL when none sets it.  */
static char *
githooks_path (const char *workspace, const char *gitdir)
{
  const char *home = getenv ("HOME"), *xdg = getenv ("XDG_CONFIG_HOME");
  char *files[3] = { NULL, NULL, NULL }, *value = NULL;

  if (xdg != NULL && xdg[0] == '/')
    files[0] = xasprintf ("%s/git/config", xdg);
  else if (home != NULL)
    files[0] = xasprintf ("%s/.config/git/config", home);
  if (home != NULL)
    files[1] = xasprintf ("%s/.gitconfig", home);
  files[2] = gitdir != NULL ? xasprintf ("%s/%s/config", workspace, gitdir)
                            : githooks_config_of (workspace);
  for (size_t i = 0; i < 3; i++)
    {
      char *v = files[i] != NULL ? githooks_path_in (files[i]) : NULL;
      if (v != NULL)
        {
          free (value);
          value = v;
        }
      free (files[i]);
    }
  return value;
}

/* path with "", "." components and trailing slashes dropped, or NULL when
 * it has a ".." (only realpath may say where that ends).  */
static char *
githooks_plain_rel (const char *path)
{
  cleanup_free char *copy = xstrdup (path);
  struct buf b = BUF_INIT;
  char *save = NULL;

  for (char *c = strtok_r (copy, "/", &save); c != NULL;
       c = strtok_r (NULL, "/", &save))
    {
      if (strcmp (c, ".") == 0)
        continue;
      if (strcmp (c, "..") == 0)
        {
          buf_free (&b);
          return NULL;
        }
      if (b.len > 0)
        buf_putc (&b, '/');
      buf_append (&b, c, strlen (c));
    }
  if (b.len == 0)
    return NULL;
  buf_append (&b, "", 0);
  return buf_steal (&b, NULL);
}

char *
githooks_dir (const char *workspace, const char *gitdir)
{
  cleanup_free char *value = githooks_path (workspace, gitdir);
  const char *home = getenv ("HOME");
  size_t n = strlen (workspace);

  if (value == NULL || value[0] == '\0')
    return NULL;
  cleanup_free char *full = value[0] == '/' ? xstrdup (value)
                            : strncmp (value, "~/", 2) == 0 && home != NULL
                                ? xasprintf ("%s/%s", home, value + 2)
                                : xasprintf ("%s/%s", workspace, value);
  cleanup_free char *real = realpath (full, NULL);
  if (real != NULL)
    return strncmp (real, workspace, n) == 0 && real[n] == '/'
                   && real[n + 1] != '\0'
               ? xstrdup (real + n + 1)
               : NULL;
  /* Not there yet: the spelling, when it is plainly inside.  */
  if (strncmp (full, workspace, n) == 0 && full[n] == '/')
    return githooks_plain_rel (full + n + 1);
  return NULL;
}
