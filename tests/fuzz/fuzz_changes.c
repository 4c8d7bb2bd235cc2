/* libFuzzer target for the container's changes stream
 * (sandbox/container/changes.c): the input is what a job runner writes
 * after 'X' (frames: D pieces of a ustar archive, U deletions, Z), read
 * through the job protocol's reader into a change set over a fixed
 * scratch root.  Whatever the input, a change set that comes out complete
 * must have staged only what publication may take: no setuid or setgid
 * bit, no device but a whiteout, no fifo or socket, no link whose target
 * could leave the workspace, nothing at or below the left-out paths.  A
 * breach aborts.  tests/fuzz/replay.c runs the same function over
 * tests/fuzz/corpus-changes without libFuzzer.  */
#include <config.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/xalloc.h"
#include "sandbox/container/changes.h"
#include "sandbox/container/job.h"
#include "sandbox/container/jobproto.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The scratch root and state directory, made once.  */
struct fuzz_changes_env
{
  char *dir, *root, *statedir;
};

/* Write a small file.  */
static void
fuzz_changes_file (const char *path, const char *text, mode_t mode)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0 || write (fd, text, strlen (text)) < 0)
    abort ();
  close (fd);
}

static const struct fuzz_changes_env *fuzz_changes_env (void);

/* Remove one entry of the scratch tree.  */
static int
fuzz_changes_rm (const char *path, const struct stat *st, int flag,
                 struct FTW *ftw)
{
  (void) st, (void) flag, (void) ftw;
  remove (path);
  return 0;
}

/* Remove the scratch tree at exit.  */
static void
fuzz_changes_remove (void)
{
  const struct fuzz_changes_env *env = fuzz_changes_env ();
  nftw (env->dir, fuzz_changes_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* The root: a file, a directory with a file, a link, and a left-out
 * file; the state directory beside it.  */
static const struct fuzz_changes_env *
fuzz_changes_env (void)
{
  static struct fuzz_changes_env env;
  if (env.dir != NULL)
    return &env;
  const char *tmp = getenv ("TMPDIR");
  env.dir = xasprintf ("%s/fuzz-changes-XXXXXX", tmp ? tmp : "/tmp");
  if (mkdtemp (env.dir) == NULL)
    abort ();
  env.root = xasprintf ("%s/root", env.dir);
  env.statedir = xasprintf ("%s/state", env.dir);
  char *p = NULL;
  atexit (fuzz_changes_remove);
  if (mkdir (env.root, 0755) < 0 || mkdir (env.statedir, 0700) < 0)
    abort ();
  fuzz_changes_file (p = xasprintf ("%s/a.txt", env.root), "a\n", 0644);
  free (p);
  if (mkdir (p = xasprintf ("%s/dir", env.root), 0755) < 0)
    abort ();
  free (p);
  fuzz_changes_file (p = xasprintf ("%s/dir/b", env.root), "b\n", 0600);
  free (p);
  fuzz_changes_file (p = xasprintf ("%s/key.pem", env.root), "k\n", 0600);
  free (p);
  if (symlink ("a.txt", p = xasprintf ("%s/link", env.root)) < 0)
    abort ();
  free (p);
  return &env;
}

/* Check one staged entry (and below): abort on anything publication may
 * not take.  */
static void
fuzz_changes_check (int dirfd, const char *rel, int depth)
{
  int fd = dup (dirfd);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  struct dirent *de;
  if (d == NULL || depth > 300)
    abort ();
  rewinddir (d);
  while ((de = readdir (d)) != NULL)
    {
      struct stat st;
      char path[8192];
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      snprintf (path, sizeof path, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
      if (fstatat (dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        abort ();
      bool whiteout = S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0);
      if ((st.st_mode & (S_ISUID | S_ISGID)) && !S_ISDIR (st.st_mode))
        abort ();
      if (!whiteout && !S_ISREG (st.st_mode) && !S_ISDIR (st.st_mode)
          && !S_ISLNK (st.st_mode))
        abort ();
      /* Not even a deletion: the command never saw it.  */
      if (strcmp (path, "key.pem") == 0)
        abort ();
      if (S_ISLNK (st.st_mode))
        {
          char t[4097];
          ssize_t n = readlinkat (dirfd, de->d_name, t, sizeof t - 1);
          if (n < 0)
            abort ();
          t[n] = '\0';
          if (!jobproto_link_inside (path, t))
            abort ();
        }
      if (S_ISDIR (st.st_mode))
        {
          int sub
              = openat (dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
          if (sub < 0)
            abort ();
          fuzz_changes_check (sub, path, depth + 1);
          close (sub);
        }
    }
  closedir (d);
}

/* Each frame to the change set; stop at its answer.  */
static int
fuzz_changes_frame (void *data, enum jobproto_type type, const uint8_t *p,
                    size_t len, struct cr_error **err)
{
  return job_changes_frame (data, type, p, len, err);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const struct fuzz_changes_env *env = fuzz_changes_env ();
  static const char *const leave[] = { "*.pem", NULL };
  struct job job = { .root = env->root,
                     .leave_out = leave,
                     .entries_max = 64,
                     .limits = { .changes_max = 1 << 16 } };
  struct cr_error *err = NULL;
  struct job_changes *ch = job_changes_new (env->statedir, &job, NULL, &err);
  if (ch == NULL)
    abort ();
  struct jobproto_reader r;
  jobproto_reader_init (&r);
  /* In two pieces, so that a frame split across reads is exercised.  */
  size_t half = size / 2;
  if (jobproto_reader_feed (&r, data, half, fuzz_changes_frame, ch, &err) == 0)
    jobproto_reader_feed (&r, data + half, size - half, fuzz_changes_frame, ch,
                          &err);
  cr_error_clear (&err);
  if (job_changes_complete (ch))
    {
      int up = open (changes_upper (ch), O_RDONLY | O_DIRECTORY);
      if (up < 0)
        abort ();
      fuzz_changes_check (up, "", 0);
      close (up);
    }
  jobproto_reader_clear (&r);
  job_changes_free (ch);
  return 0;
}
