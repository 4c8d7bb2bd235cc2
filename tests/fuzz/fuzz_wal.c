/* libFuzzer target for the write-ahead log reader (sandbox/wal.c): the
 * input is the log file of a transaction directory, as a crash, a full
 * disk or a hand could have left it.  Whatever it holds, reading it
 * either fails with a message or gives records whose steps are steps and
 * whose payloads are NUL-terminated at their length; a log read back from
 * records the reader accepted reads back the same.  tests/fuzz/replay.c
 * runs the same function over tests/fuzz/corpus-wal without libFuzzer.  */
#include <config.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/error.h"
#include "sandbox/wal.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* One scratch transaction directory for the whole run.  */
static int
scratch_dir (void)
{
  static int fd = -1;
  if (fd < 0)
    {
      char tmpl[] = "/dev/shm/fuzz-wal.XXXXXX";
      if (mkdtemp (tmpl) == NULL)
        abort ();
      fd = open (tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        abort ();
    }
  return fd;
}

/* Put len bytes of data in dirfd's log, replacing what was there.  */
static void
put_log (int dirfd, const uint8_t *data, size_t len)
{
  int fd
      = openat (dirfd, "wal", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    abort ();
  while (len > 0)
    {
      ssize_t n = write (fd, data, len);
      if (n <= 0)
        abort ();
      data += n;
      len -= (size_t) n;
    }
  close (fd);
}

/* Abort unless every record of log is well formed.  */
static void
check_log (const struct wal_log *log)
{
  for (size_t i = 0; i < log->n; i++)
    {
      const struct wal_record *r = &log->records[i];
      if ((unsigned) r->step >= WAL_STEP_COUNT || r->payload == NULL
          || r->payload[r->len] != '\0')
        abort ();
    }
}

/* Write log's records afresh and read them back: the same records.  */
static void
check_round_trip (int dirfd, const struct wal_log *log)
{
  struct cr_error *err = NULL;
  unlinkat (dirfd, "wal", 0);
  int fd = wal_create (dirfd, &err);
  if (fd < 0)
    abort ();
  for (size_t i = 0; i < log->n; i++)
    if (wal_append (fd, log->records[i].step, log->records[i].payload,
                    log->records[i].len, &err)
        < 0)
      abort ();
  close (fd);
  struct wal_log again = { 0 };
  if (wal_read (dirfd, &again, &err) < 0 || again.n != log->n || again.torn
      || again.corrupt)
    abort ();
  for (size_t i = 0; i < log->n; i++)
    if (again.records[i].step != log->records[i].step
        || again.records[i].len != log->records[i].len
        || memcmp (again.records[i].payload, log->records[i].payload,
                   log->records[i].len)
               != 0)
      abort ();
  wal_log_clear (&again);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  int dirfd = scratch_dir ();
  struct cr_error *err = NULL;
  struct wal_log log = { 0 };
  put_log (dirfd, data, size);
  if (wal_read (dirfd, &log, &err) < 0)
    {
      if (err == NULL || err->msg == NULL || log.n != 0)
        abort ();
      cr_error_free (err);
      return 0;
    }
  check_log (&log);
  check_round_trip (dirfd, &log);
  wal_log_clear (&log);
  return 0;
}
