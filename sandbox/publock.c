/* The per-user publication lock and the per-root publication counts.  */
#include <config.h>

#include <stdbool.h>

#include "sandbox/publock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/sha256.h"

#define PUBLOCK_FILE "publish.lock"
#define PUBLOCK_COUNTS "counts"

/* How long to sleep between tries of a busy lock.  */
#define PUBLOCK_POLL_US 10000

struct timespec
publock_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME_COARSE, &ts);
  return ts;
}

/* Milliseconds on the monotonic clock.  */
static int64_t
publock_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
publock_take (const char *statedir, int64_t wait_ms, bool *busy,
              struct cr_error **err)
{
  cleanup_free char *path = xasprintf ("%s/" PUBLOCK_FILE, statedir);
  int64_t until = publock_ms () + wait_ms;

  *busy = false;
  int fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return cr_error_set (err, errno, "opening the publication lock");
  for (;;)
    {
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
      if (errno != EWOULDBLOCK && errno != EINTR)
        {
          int saved = errno;
          close (fd);
          return cr_error_set (err, saved, "taking the publication lock");
        }
      if (publock_ms () >= until)
        break;
      usleep (PUBLOCK_POLL_US);
    }
  close (fd);
  *busy = true;
  return -1;
}

void
publock_drop (int fd)
{
  if (fd >= 0)
    close (fd);
}

/* The count file of a root: named by the digest of its path.  */
static char *
publock_count_path (const char *statedir, const char *root)
{
  char hex[SHA256_HEX_LEN + 1];
  sha256_buffer (root, strlen (root), hex);
  return xasprintf ("%s/" PUBLOCK_COUNTS "/%s", statedir, hex);
}

int
publock_count_read (const char *statedir, const char *root, uint64_t *count,
                    struct timespec *last, struct cr_error **err)
{
  cleanup_free char *path = publock_count_path (statedir, root);
  cleanup_close int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  char text[96];
  long long sec = 0;
  long nsec = 0;

  *count = 0;
  memset (last, 0, sizeof *last);
  if (fd < 0)
    return errno == ENOENT
               ? 0
               : cr_error_set (err, errno, "reading the publication count");
  ssize_t n = read (fd, text, sizeof text - 1);
  if (n < 0)
    return cr_error_set (err, errno, "reading the publication count");
  text[n] = '\0';
  char *end;
  errno = 0;
  *count = strtoull (text, &end, 10);
  if (end != text && *end == ' ')
    sec = strtoll (end + 1, &end, 10);
  if (end != text && *end == ' ')
    nsec = strtol (end + 1, &end, 10);
  if (errno != 0 || *end != '\n')
    return cr_error_set (err, 0, "the publication count is malformed");
  last->tv_sec = sec;
  last->tv_nsec = nsec;
  return 0;
}

int
publock_count_prepare (const char *statedir, const char *root, bool sync,
                       struct cr_error **err)
{
  uint64_t count;
  struct timespec last, now = publock_now ();
  cleanup_free char *dir = xasprintf ("%s/" PUBLOCK_COUNTS, statedir);
  cleanup_free char *path = publock_count_path (statedir, root);
  cleanup_free char *tmp = xasprintf ("%s.tmp", path);

  if (publock_count_read (statedir, root, &count, &last, err) < 0)
    return -1;
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    return cr_error_set (err, errno, "making the publication counts");
  cleanup_close int fd
      = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return cr_error_set (err, errno, "writing the publication count");
  if (dprintf (fd, "%" PRIu64 " %lld %ld\n", count + 1, (long long) now.tv_sec,
               now.tv_nsec)
          < 0
      || (sync && fdatasync (fd) < 0))
    return cr_error_set (err, errno, "writing the publication count");
  return 0;
}

int
publock_count_commit (const char *statedir, const char *root,
                      struct cr_error **err)
{
  cleanup_free char *path = publock_count_path (statedir, root);
  cleanup_free char *tmp = xasprintf ("%s.tmp", path);

  if (rename (tmp, path) < 0)
    return cr_error_set (err, errno, "writing the publication count");
  return 0;
}

int
publock_count_bump (const char *statedir, const char *root,
                    struct cr_error **err)
{
  if (publock_count_prepare (statedir, root, true, err) < 0)
    return -1;
  return publock_count_commit (statedir, root, err);
}
