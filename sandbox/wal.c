/* The publication's write-ahead log.  */
#include <config.h>

#include "sandbox/wal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "sandbox/sha256.h"

#define WAL_NAME "wal"

/* The largest log read back: a plan of a million changes fits.  */
#define WAL_MAX_BYTES (1024L * 1024 * 1024)

static const char *const wal_names[WAL_STEP_COUNT]
    = { [WAL_BEGIN] = "begin",       [WAL_STAGED] = "staged",
        [WAL_APPLY] = "apply",       [WAL_APPLIED] = "applied",
        [WAL_VERIFIED] = "verified", [WAL_COMMIT] = "commit",
        [WAL_ROLLBACK] = "rollback", [WAL_ROLLEDBACK] = "rolledback" };

const char *
wal_step_name (enum wal_step step)
{
  return step < WAL_STEP_COUNT ? wal_names[step] : "?";
}

enum wal_step
wal_step_from_name (const char *name)
{
  for (int i = 0; i < WAL_STEP_COUNT; i++)
    if (strcmp (wal_names[i], name) == 0)
      return (enum wal_step) i;
  return WAL_STEP_COUNT;
}

/* Whether recovery's course depends on step having reached the disc, so
 * that its record is synced before the next step.  Staged, commit and
 * rolledback decide it: a staged plan without either end is rolled back
 * whatever else the log holds.  The others are not synced, and syncing
 * any later record (or nothing: a log lost with them) decides the same:
 * begin, because nothing touches the root until staged is on the disc
 * (and syncing staged syncs the file's earlier records with it); apply,
 * applied and verified, because a staged plan is rolled back path by path
 * whether or not they reached the disc; rollback, because only rolledback
 * ends the transaction.  A caller may write staged with wal_write and make
 * it durable in one sync with the backups (sandbox/publish.c,
 * publish_txn_stage, says when that is as safe).  */
static bool
wal_step_decides (enum wal_step step)
{
  return step == WAL_STAGED || step == WAL_COMMIT || step == WAL_ROLLEDBACK;
}

int
wal_create (int dirfd, struct cr_error **err)
{
  int fd = openat (
      dirfd, WAL_NAME,
      O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return cr_error_set (err, errno, "creating the publication log");
  return fd;
}

int
wal_open (int dirfd, struct cr_error **err)
{
  int fd
      = openat (dirfd, WAL_NAME, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return cr_error_set (err, errno, "opening the publication log");
  return fd;
}

/* The checksum of a record: its step's name, its length and its payload.  */
static void
wal_checksum (enum wal_step step, const char *payload, size_t len, char *hex)
{
  struct buf b = BUF_INIT;
  buf_printf (&b, "%s %zu\n", wal_step_name (step), len);
  buf_append (&b, payload, len);
  sha256_buffer (b.data, b.len, hex);
  buf_free (&b);
}

/* Write all of p.  */
static int
wal_write_all (int fd, const char *p, size_t n)
{
  while (n > 0)
    {
      ssize_t w = write (fd, p, n);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return -1;
      p += w;
      n -= (size_t) w;
    }
  return 0;
}

/* Write one record, syncing it when sync says so.  */
static int
wal_put (int fd, enum wal_step step, const char *payload, size_t len, bool sync,
         struct cr_error **err)
{
  char hex[SHA256_HEX_LEN + 1];
  struct buf b = BUF_INIT;

  wal_checksum (step, payload, len, hex);
  buf_printf (&b, "W %s %zu %s\n", wal_step_name (step), len, hex);
  buf_append (&b, payload, len);
  buf_putc (&b, '\n');
  int rc = wal_write_all (fd, b.data, b.len);
  buf_free (&b);
  if (rc < 0 || (sync && fdatasync (fd) < 0))
    return cr_error_set (err, errno, "writing the publication log (%s)",
                         wal_step_name (step));
  return 0;
}

int
wal_append (int fd, enum wal_step step, const char *payload, size_t len,
            struct cr_error **err)
{
  if (wal_put (fd, step, payload, len, wal_step_decides (step), err) < 0)
    return -1;
  wal_fault (wal_step_name (step));
  return 0;
}

int
wal_write (int fd, enum wal_step step, const char *payload, size_t len,
           struct cr_error **err)
{
  return wal_put (fd, step, payload, len, false, err);
}

/* Split "W NAME LEN HEX" into its fields.  */
static int
wal_parse_header (const char *head, char *name, size_t name_size, size_t *len,
                  char *hex)
{
  if (strncmp (head, "W ", 2) != 0)
    return -1;
  const char *n = head + 2, *sp = strchr (n, ' ');
  if (sp == NULL || (size_t) (sp - n) >= name_size)
    return -1;
  memcpy (name, n, (size_t) (sp - n));
  name[sp - n] = '\0';
  char *end;
  errno = 0;
  unsigned long long v = strtoull (sp + 1, &end, 10);
  if (errno != 0 || end == sp + 1 || *end != ' '
      || strlen (end + 1) != SHA256_HEX_LEN)
    return -1;
  *len = (size_t) v;
  memcpy (hex, end + 1, SHA256_HEX_LEN + 1);
  return 0;
}

/* Parse one record at p (n bytes left); returns its size, 0 when it is
 * cut short, -1 when it fails its checksum or is malformed.  */
static long
wal_parse_one (const char *p, size_t n, struct wal_record *out)
{
  const char *nl = memchr (p, '\n', n);
  char name[32], hex[SHA256_HEX_LEN + 1], want[SHA256_HEX_LEN + 1];
  size_t len;

  if (nl == NULL)
    return 0;
  cleanup_free char *head = xmalloc ((size_t) (nl - p) + 1);
  memcpy (head, p, (size_t) (nl - p));
  head[nl - p] = '\0';
  if (wal_parse_header (head, name, sizeof name, &len, hex) < 0)
    return -1;
  size_t header = (size_t) (nl - p) + 1;
  if (len > n - header || n - header - len < 1)
    return 0;
  enum wal_step step = wal_step_from_name (name);
  if (step == WAL_STEP_COUNT || p[header + len] != '\n')
    return -1;
  wal_checksum (step, p + header, len, want);
  if (strcmp (want, hex) != 0)
    return -1;
  out->step = step;
  out->len = len;
  out->payload = xmalloc (len + 1);
  memcpy (out->payload, p + header, len);
  out->payload[len] = '\0';
  return (long) (header + len + 1);
}

/* Read the whole log file.  */
static char *
wal_slurp (int dirfd, size_t *n, struct cr_error **err)
{
  cleanup_close int fd
      = openat (dirfd, WAL_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      cr_error_set (err, errno, "reading the publication log");
      return NULL;
    }
  if (!S_ISREG (st.st_mode) || st.st_size > WAL_MAX_BYTES)
    {
      cr_error_set (err, 0, "the publication log is not a plain file");
      return NULL;
    }
  char *data = xmalloc ((size_t) st.st_size + 1);
  size_t got = 0;
  while (got < (size_t) st.st_size)
    {
      ssize_t r = read (fd, data + got, (size_t) st.st_size - got);
      if (r <= 0)
        break;
      got += (size_t) r;
    }
  *n = got;
  return data;
}

int
wal_read (int dirfd, struct wal_log *log, struct cr_error **err)
{
  size_t n, off = 0;
  memset (log, 0, sizeof *log);
  cleanup_free char *data = wal_slurp (dirfd, &n, err);
  if (data == NULL)
    return -1;
  while (off < n)
    {
      struct wal_record r;
      long used = wal_parse_one (data + off, n - off, &r);
      if (used <= 0)
        {
          /* A record cut short, or a bad one at the very end, is the one
           * being written when the process died; anything after a bad
           * record means the log cannot be trusted.  */
          const char *next
              = used < 0 ? memchr (data + off, '\n', n - off) : NULL;
          log->torn
              = used == 0 || next == NULL
                || memmem (next, n - (size_t) (next - data), "\nW ", 3) == NULL;
          log->corrupt = !log->torn;
          break;
        }
      log->records
          = xrealloc (log->records, (log->n + 1) * sizeof *log->records);
      log->records[log->n++] = r;
      off += (size_t) used;
    }
  return 0;
}

void
wal_log_clear (struct wal_log *log)
{
  for (size_t i = 0; i < log->n; i++)
    free (log->records[i].payload);
  free (log->records);
  memset (log, 0, sizeof *log);
}

#ifdef CRUCIBLE_FAULT_INJECTION
/* How often each point was hit in this process: a test build only.  */
static unsigned long wal_hits[WAL_STEP_COUNT + 2];

/* Whether spec ("name" or "name:N") names this hit of point.  */
static bool
wal_fault_matches (const char *spec, const char *point, unsigned long hit)
{
  size_t n = strlen (point);
  if (spec == NULL || strncmp (spec, point, n) != 0)
    return false;
  if (spec[n] == '\0')
    return hit == 1;
  return spec[n] == ':' && strtoul (spec + n + 1, NULL, 10) == hit;
}

void
wal_fault (const char *point)
{
  enum wal_step s = wal_step_from_name (point);
  unsigned long hit = ++wal_hits[s];
  const char *log = getenv ("CRUCIBLE_FAULT_LOG");
  if (log != NULL)
    {
      FILE *f = fopen (log, "ae");
      if (f != NULL)
        {
          fprintf (f, "%s\n", point);
          fclose (f);
        }
    }
  if (wal_fault_matches (getenv ("CRUCIBLE_FAULT"), point, hit))
    kill (getpid (), SIGKILL);
}

bool
wal_fault_enospc (const char *phase)
{
  int i = strcmp (phase, "stage") == 0 ? WAL_STEP_COUNT : WAL_STEP_COUNT + 1;
  unsigned long hit = ++wal_hits[i];
  return wal_fault_matches (getenv ("CRUCIBLE_FAULT_ENOSPC"), phase, hit);
}
#else
void
wal_fault (const char *point)
{
  (void) point;
}

bool
wal_fault_enospc (const char *phase)
{
  (void) phase;
  return false;
}
#endif
