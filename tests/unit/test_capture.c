/* Tests for core/capture.c: counts, head and tail, ceiling, spool.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/capture.h"
#include "lib/buf.h"
#include "lib/error.h"
#include "lib/xalloc.h"

/* The byte at position i of the test stream: lines of 100, letters that
 * change per line, so any window of it says where it came from.  */
static char
stream_byte (uint64_t i)
{
  return i % 100 == 99 ? '\n' : (char) ('a' + (i / 100) % 26);
}

/* Fill p with the test stream from position from.  */
static void
stream_fill (char *p, size_t len, uint64_t from)
{
  for (size_t i = 0; i < len; i++)
    p[i] = stream_byte (from + i);
}

/* Check head and tail hold the stream's first and last bytes.  */
static void
assert_retained_stream (struct capture *cap, size_t head_want, size_t tail_want,
                        uint64_t kept)
{
  const char *head, *tail;
  size_t hl, tl;
  uint64_t omitted;
  capture_retained (cap, &head, &hl, &tail, &tl, &omitted);
  assert_int_equal (hl, head_want);
  assert_int_equal (tl, tail_want);
  assert_int_equal (omitted, kept - hl - tl);
  char *want = xmalloc (hl + tl + 1);
  stream_fill (want, hl, 0);
  assert_memory_equal (head, want, hl);
  stream_fill (want, tl, kept - tl);
  assert_memory_equal (tail, want, tl);
  free (want);
}

/* Limits with small head, tail and ceiling for tests.  */
static struct capture_limits
small_limits (size_t head, size_t tail, uint64_t ceiling)
{
  struct capture_limits l = { head, tail, ceiling };
  return l;
}

/* The result budget is split evenly and the ceiling passed through.  */
static void
test_limits_for_result (void **state)
{
  struct capture_limits l = capture_limits_for_result (CAPTURE_DEFAULT_CEILING);
  assert_int_equal (l.head_bytes, 14872);
  assert_int_equal (l.tail_bytes, 14872);
  assert_int_equal (l.head_bytes + l.tail_bytes, CAPTURE_RETAINED_BUDGET);
  assert_int_equal (l.ceiling_bytes, 10485760);
}

/* A stream within the head is all head, nothing omitted.  */
static void
test_small_stream_is_head (void **state)
{
  struct capture_limits l = capture_limits_for_result (CAPTURE_DEFAULT_CEILING);
  struct capture *cap = capture_new (&l, -1);
  assert_int_equal (capture_feed (cap, "hello\n", 6), CAPTURE_OK);
  assert_int_equal (capture_feed (cap, "world", 5), CAPTURE_OK);
  const char *head, *tail;
  size_t hl, tl;
  uint64_t omitted;
  capture_retained (cap, &head, &hl, &tail, &tl, &omitted);
  assert_int_equal (hl, 11);
  assert_memory_equal (head, "hello\nworld", 11);
  assert_int_equal (tl, 0);
  assert_int_equal (omitted, 0);
  assert_int_equal (capture_total_bytes (cap), 11);
  assert_int_equal (capture_lines (cap), 2);
  assert_false (capture_over_ceiling (cap));
  assert_int_equal (capture_spool_fd (cap), -1);
  assert_false (capture_spool_failed (cap));
  capture_free (cap);
}

/* Lines of the given pieces fed in order.  */
static uint64_t
lines_of (const char *const *pieces, size_t n)
{
  struct capture_limits l = small_limits (4, 4, UINT64_MAX);
  struct capture *cap = capture_new (&l, -1);
  for (size_t i = 0; i < n; i++)
    capture_feed (cap, pieces[i], strlen (pieces[i]));
  uint64_t lines = capture_lines (cap);
  capture_free (cap);
  return lines;
}

/* Each '\n' ends a line and a final partial line counts, across feeds.  */
static void
test_line_counting_edges (void **state)
{
  static const struct
  {
    const char *pieces[3];
    size_t n;
    uint64_t lines;
  } cases[] = {
    { { "" }, 1, 0 },
    { { "\n" }, 1, 1 },
    { { "a" }, 1, 1 },
    { { "a\n" }, 1, 1 },
    { { "a\nb" }, 1, 2 },
    { { "\n\n" }, 1, 2 },
    { { "a", "\n" }, 2, 1 },
    { { "a\n", "b" }, 2, 2 },
    { { "a", "b", "" }, 3, 1 },
    { { "a\n", "", "" }, 3, 1 },
    { { "\n", "\n", "x" }, 3, 3 },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    assert_int_equal (lines_of (cases[i].pieces, cases[i].n), cases[i].lines);
}

/* The word-at-a-time count agrees with a plain one at every length and
 * alignment, including runs longer than its 255-word batches.  */
static void
test_line_counting_matches_naive (void **state)
{
  size_t size = 5000;
  unsigned char *buf = xmalloc (size + 8);
  unsigned seed = 7;
  for (size_t i = 0; i < size + 8; i++)
    {
      unsigned r = (unsigned) rand_r (&seed);
      /* Mostly '\n' and near neighbours ('\t', '\v', 0x8a) to catch lanes
         that borrow from each other.  */
      static const unsigned char pick[]
          = { '\n', '\n', '\t', '\v', 0x8a, 0x0b, 0xff, 'a' };
      buf[i] = pick[r % sizeof pick];
    }
  struct capture_limits l = small_limits (16, 16, UINT64_MAX);
  for (size_t off = 0; off < 8; off++)
    for (size_t len = 0; len < size; len += len < 64 ? 1 : 997)
      {
        struct capture *cap = capture_new (&l, -1);
        capture_feed (cap, buf + off, len);
        uint64_t want = 0;
        for (size_t i = 0; i < len; i++)
          want += buf[off + i] == '\n';
        if (len > 0 && buf[off + len - 1] != '\n')
          want++;
        assert_int_equal (capture_lines (cap), want);
        capture_free (cap);
      }
  memset (buf, '\n', size);
  struct capture *cap = capture_new (&l, -1);
  capture_feed (cap, buf, size);
  assert_int_equal (capture_lines (cap), size);
  capture_free (cap);
  free (buf);
}

/* Head and tail are the same however the stream is chunked.  */
static void
test_head_tail_any_chunking (void **state)
{
  static const size_t chunks[] = { 1, 2, 3, 5, 7, 13, 64, 4096 };
  char stream[1000];
  stream_fill (stream, sizeof stream, 0);
  struct capture_limits l = small_limits (37, 41, UINT64_MAX);
  for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
    {
      struct capture *cap = capture_new (&l, -1);
      for (size_t at = 0; at < sizeof stream; at += chunks[c])
        {
          size_t n
              = sizeof stream - at < chunks[c] ? sizeof stream - at : chunks[c];
          assert_int_equal (capture_feed (cap, stream + at, n), CAPTURE_OK);
        }
      assert_retained_stream (cap, 37, 41, sizeof stream);
      assert_int_equal (capture_lines (cap), 10);
      capture_free (cap);
    }
}

/* Resident memory in bytes, from /proc/self/statm.  */
static long
resident_bytes (void)
{
  FILE *f = fopen ("/proc/self/statm", "r");
  assert_non_null (f);
  char line[128];
  assert_non_null (fgets (line, sizeof line, f));
  fclose (f);
  char *end;
  strtol (line, &end, 10); /* the total size, then the resident pages */
  long resident = strtol (end, NULL, 10);
  return resident * sysconf (_SC_PAGESIZE);
}

/* 100 MB through a capture: right counts, head and tail, and memory that
 * does not grow with the stream.  */
static void
test_hundred_megabytes (void **state)
{
  const uint64_t total = 100ULL * 1024 * 1024;
  const size_t chunk = 65521; /* odd, so chunks and lines never align */
  char *src = xmalloc (chunk + 2600);
  stream_fill (src, chunk + 2600, 0);
  struct capture_limits l = capture_limits_for_result (UINT64_MAX);
  struct capture *cap = capture_new (&l, -1);
  long before = resident_bytes ();
  for (uint64_t at = 0; at < total; at += chunk)
    {
      size_t n = total - at < chunk ? (size_t) (total - at) : chunk;
      /* The stream repeats every 2600 bytes.  */
      assert_int_equal (capture_feed (cap, src + at % 2600, n), CAPTURE_OK);
    }
  long grown = resident_bytes () - before;
  assert_int_equal (capture_total_bytes (cap), total);
  assert_int_equal (capture_lines (cap), total / 100);
  assert_retained_stream (cap, 14872, 14872, total);
  assert_true (grown < 4L * 1024 * 1024);
  capture_free (cap);
  free (src);
}

/* Past the ceiling bytes are counted, not kept, and CAPTURE_CEILING sticks.  */
static void
test_ceiling (void **state)
{
  char stream[100];
  stream_fill (stream, sizeof stream, 0);
  struct capture_limits l = small_limits (4, 4, 10);
  struct capture *cap = capture_new (&l, -1);
  assert_int_equal (capture_feed (cap, stream, 10), CAPTURE_OK);
  assert_false (capture_over_ceiling (cap));
  assert_int_equal (capture_feed (cap, stream + 10, 1), CAPTURE_CEILING);
  assert_true (capture_over_ceiling (cap));
  assert_retained_stream (cap, 4, 4, 10);
  assert_int_equal (capture_feed (cap, stream + 11, 89), CAPTURE_CEILING);
  assert_int_equal (capture_feed (cap, stream, 0), CAPTURE_CEILING);
  assert_int_equal (capture_total_bytes (cap), 100);
  assert_int_equal (capture_lines (cap), 1);
  assert_retained_stream (cap, 4, 4, 10);
  capture_free (cap);

  /* Crossing it inside one feed keeps exactly the bytes up to it.  */
  cap = capture_new (&l, -1);
  assert_int_equal (capture_feed (cap, stream, 25), CAPTURE_CEILING);
  assert_int_equal (capture_total_bytes (cap), 25);
  assert_retained_stream (cap, 4, 4, 10);
  capture_free (cap);
}

/* Read all of fd from its start.  */
static void
read_back (int fd, struct buf *out)
{
  assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
  char tmp[65536];
  ssize_t n;
  while ((n = read (fd, tmp, sizeof tmp)) > 0)
    buf_append (out, tmp, (size_t) n);
  assert_int_equal (n, 0);
}

/* A spool file is anonymous, private and regular.  */
static void
assert_private_spool (int fd)
{
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0);
  assert_true (S_ISREG (st.st_mode));
  assert_int_equal (st.st_mode & 07777, 0600);
  assert_int_equal (st.st_nlink, 0);
}

/* The spool holds every byte up to the ceiling, in order.  */
static void
test_spool_contents (void **state)
{
  struct cr_error *err = NULL;
  int fd = capture_spool_open ("/tmp", &err);
  assert_true (fd >= 0);
  assert_null (err);
  assert_private_spool (fd);
  const size_t total = 1000000, chunk = 4099;
  char *stream = xmalloc (total);
  stream_fill (stream, total, 0);
  struct capture_limits l = capture_limits_for_result (total);
  struct capture *cap = capture_new (&l, fd);
  for (size_t at = 0; at < total; at += chunk)
    capture_feed (cap, stream + at, total - at < chunk ? total - at : chunk);
  assert_false (capture_spool_failed (cap));
  assert_int_equal (capture_spool_fd (cap), fd);
  struct buf got = BUF_INIT;
  read_back (fd, &got);
  assert_int_equal (got.len, total);
  assert_memory_equal (got.data, stream, total);
  buf_free (&got);
  capture_free (cap);
  free (stream);
}

/* While the head and tail hold the whole stream the spool is not
 * written; the feed that first drops a byte writes what they held
 * before its own, so the spool has every byte from the first on.  */
static void
test_spool_starts_at_first_drop (void **state)
{
  struct cr_error *err = NULL;
  int fd = capture_spool_open ("/tmp", &err);
  assert_true (fd >= 0);
  char stream[3000];
  stream_fill (stream, sizeof stream, 0);
  struct capture_limits l = small_limits (700, 900, UINT64_MAX);
  struct capture *cap = capture_new (&l, fd);
  for (size_t at = 0; at < 1600; at += 100)
    capture_feed (cap, stream + at, 100);
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0);
  assert_int_equal (st.st_size, 0);
  char got[3000];
  uint64_t at;
  assert_int_equal (capture_read_all (cap, 0, got, sizeof got, &at, NULL), 700);
  assert_int_equal (
      capture_read_all (cap, 700, got + 700, sizeof got, &at, NULL), 900);
  assert_memory_equal (got, stream, 1600);
  capture_feed (cap, stream + 1600, 1);
  capture_feed (cap, stream + 1601, 1399);
  struct buf back = BUF_INIT;
  read_back (fd, &back);
  assert_int_equal (back.len, 3000);
  assert_memory_equal (back.data, stream, 3000);
  buf_free (&back);
  capture_free (cap);
}

/* Bytes past the ceiling are not spooled.  */
static void
test_spool_bounded_by_ceiling (void **state)
{
  struct cr_error *err = NULL;
  int fd = capture_spool_open ("/tmp", &err);
  assert_true (fd >= 0);
  char stream[5000];
  stream_fill (stream, sizeof stream, 0);
  struct capture_limits l = small_limits (8, 8, 1000);
  struct capture *cap = capture_new (&l, fd);
  assert_int_equal (capture_feed (cap, stream, 600), CAPTURE_OK);
  assert_int_equal (capture_feed (cap, stream + 600, 4400), CAPTURE_CEILING);
  assert_int_equal (capture_feed (cap, stream, 100), CAPTURE_CEILING);
  struct buf got = BUF_INIT;
  read_back (fd, &got);
  assert_int_equal (got.len, 1000);
  assert_memory_equal (got.data, stream, 1000);
  buf_free (&got);
  capture_free (cap);
}

/* The mkstemp fallback is as private as O_TMPFILE.  */
static void
test_spool_fallback (void **state)
{
  struct cr_error *err = NULL;
  int fd = capture_spool_open_unlinked ("/tmp", &err);
  assert_true (fd >= 0);
  assert_null (err);
  assert_private_spool (fd);
  assert_int_equal (write (fd, "abc", 3), 3);
  struct buf got = BUF_INIT;
  read_back (fd, &got);
  assert_int_equal (got.len, 3);
  buf_free (&got);
  close (fd);
}

/* A spool directory that is not there is an error naming it.  */
static void
test_spool_open_error (void **state)
{
  struct cr_error *err = NULL;
  assert_int_equal (capture_spool_open ("/nonexistent/crucible", &err), -1);
  assert_non_null (err);
  assert_int_equal (err->code, ENOENT);
  assert_non_null (strstr (err->msg, "/nonexistent/crucible"));
  cr_error_free (err);
  err = NULL;
  assert_int_equal (capture_spool_open_unlinked ("/nonexistent/crucible", &err),
                    -1);
  assert_non_null (err);
  assert_non_null (strstr (err->msg, "/nonexistent/crucible"));
  cr_error_free (err);
}

/* A spool that cannot be written is marked failed; capturing goes on.  */
static void
test_spool_write_failure (void **state)
{
  char path[] = "/tmp/crucible-test-spool-XXXXXX";
  int wfd = mkstemp (path);
  assert_true (wfd >= 0);
  close (wfd);
  int fd = open (path, O_RDONLY);
  assert_true (fd >= 0);
  unlink (path);
  char stream[1000];
  stream_fill (stream, sizeof stream, 0);
  struct capture_limits l = small_limits (10, 10, UINT64_MAX);
  struct capture *cap = capture_new (&l, fd);
  assert_int_equal (capture_feed (cap, stream, 500), CAPTURE_OK);
  assert_true (capture_spool_failed (cap));
  assert_int_equal (capture_feed (cap, stream + 500, 500), CAPTURE_OK);
  assert_true (capture_spool_failed (cap));
  assert_int_equal (capture_total_bytes (cap), 1000);
  assert_int_equal (capture_lines (cap), 10);
  assert_retained_stream (cap, 10, 10, 1000);
  capture_free (cap);
}

/* Reader of a pipe: all it receives until end of file.  */
struct drain
{
  int fd;
  struct buf got;
};

/* Read the pipe to its end, with the timer's signal kept off this thread.  */
static void *
drain_run (void *arg)
{
  struct drain *d = arg;
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGALRM);
  pthread_sigmask (SIG_BLOCK, &set, NULL);
  char tmp[4096];
  for (;;)
    {
      ssize_t n = read (d->fd, tmp, sizeof tmp);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      buf_append (&d->got, tmp, (size_t) n);
    }
  return NULL;
}

/* Signals that interrupted the spool's writes; a handler can only count
 * into a static.  */
static volatile sig_atomic_t alarms;

/* Count an interruption.  */
static void
on_alarm (int sig)
{
  alarms++;
}

/* Writes cut short by signals (EINTR or a partial count) are finished.  */
static void
test_spool_interrupted_writes (void **state)
{
  int p[2];
  assert_int_equal (pipe (p), 0);
  struct drain d = { p[0], BUF_INIT };
  pthread_t reader;
  assert_int_equal (pthread_create (&reader, NULL, drain_run, &d), 0);
  struct sigaction sa = { .sa_handler = on_alarm }, old;
  sigemptyset (&sa.sa_mask);
  assert_int_equal (sigaction (SIGALRM, &sa, &old), 0); /* no SA_RESTART */
  struct itimerval every = { { 0, 200 }, { 0, 200 } }, off = { 0 };
  setitimer (ITIMER_REAL, &every, NULL);
  const size_t total = (size_t) 8 * 1024 * 1024, chunk = (size_t) 1024 * 1024;
  char *stream = xmalloc (total);
  stream_fill (stream, total, 0);
  struct capture_limits l = capture_limits_for_result (UINT64_MAX);
  struct capture *cap = capture_new (&l, p[1]);
  for (size_t at = 0; at < total; at += chunk)
    capture_feed (cap, stream + at, chunk);
  setitimer (ITIMER_REAL, &off, NULL);
  sigaction (SIGALRM, &old, NULL);
  assert_false (capture_spool_failed (cap));
  capture_free (cap); /* closes the write end: the reader sees its end */
  pthread_join (reader, NULL);
  close (p[0]);
  assert_int_equal (d.got.len, total);
  assert_memory_equal (d.got.data, stream, total);
  print_message ("# spool writes interrupted by %d signals\n", (int) alarms);
  buf_free (&d.got);
  free (stream);
}

/* Read a capture's whole stream through capture_read_all into out.  */
static void
read_all_of (const struct capture *cap, struct buf *out)
{
  char tmp[65536];
  uint64_t from = 0, at;
  size_t n;
  while ((n = capture_read_all (cap, from, tmp, sizeof tmp, &at, NULL)) > 0)
    {
      assert_int_equal (at, from);
      buf_append (out, tmp, n);
      from = at + n;
    }
}

/* A spool given back is written over by the next capture from its start:
 * that capture reads its own stream, every byte, and nothing of the
 * longer one before it; a failed spool is not given back.  */
static void
test_spool_released_and_reused (void **state)
{
  struct cr_error *err = NULL;
  int fd = capture_spool_open ("/tmp", &err);
  assert_true (fd >= 0);
  const size_t first = 1000000, second = 300001, chunk = 65536;
  char *stream = xmalloc (first);
  stream_fill (stream, first, 0);
  struct capture_limits l = small_limits (700, 900, UINT64_MAX);
  struct capture *cap = capture_new (&l, fd);
  for (size_t at = 0; at < first; at += chunk)
    capture_feed (cap, stream + at, first - at < chunk ? first - at : chunk);
  assert_int_equal (capture_spool_release (cap), fd);
  assert_int_equal (capture_spool_fd (cap), -1);
  capture_free (cap);
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0); /* still open: not closed by free */
  assert_int_equal (st.st_size, (off_t) first);
  stream_fill (stream, second, 7);
  cap = capture_new (&l, fd);
  for (size_t at = 0; at < second; at += chunk)
    capture_feed (cap, stream + at, second - at < chunk ? second - at : chunk);
  struct buf got = BUF_INIT;
  read_all_of (cap, &got);
  assert_int_equal (got.len, second);
  assert_memory_equal (got.data, stream, second);
  buf_free (&got);
  /* Given back again, it is cut to the shorter stream: nothing of the
   * first one is kept while it waits.  */
  assert_int_equal (capture_spool_release (cap), fd);
  assert_int_equal (fstat (fd, &st), 0);
  assert_int_equal (st.st_size, (off_t) second);
  close (fd);
  capture_free (cap);
  char path[] = "/tmp/crucible-test-spool-XXXXXX";
  int wfd = mkstemp (path);
  assert_true (wfd >= 0);
  close (wfd);
  fd = open (path, O_RDONLY);
  assert_true (fd >= 0);
  unlink (path);
  cap = capture_new (&l, fd);
  capture_feed (cap, stream, 5000);
  assert_true (capture_spool_failed (cap));
  assert_int_equal (capture_spool_release (cap), -1);
  errno = 0;
  assert_int_equal (fcntl (fd, F_GETFD), -1); /* closed by the release */
  assert_int_equal (errno, EBADF);
  capture_free (cap);
  free (stream);
}

/* Check one capture_read from offset from against the stream: the bytes
 * are the stream's at *at, which is from when the capture still holds
 * it and the first held byte after the dropped middle otherwise, and
 * lines_before counts the stream's '\n's before *at.  */
static void
assert_read_at (const struct capture *cap, uint64_t from, size_t head,
                size_t tail)
{
  char got[512];
  uint64_t at, lines;
  uint64_t kept = capture_kept_bytes (cap);
  size_t n = capture_read (cap, from, got, sizeof got, &at, &lines);
  uint64_t head_len = kept < head ? kept : head;
  uint64_t ring_len = kept - head_len < tail ? kept - head_len : tail;
  uint64_t ring_start = kept - ring_len;
  uint64_t want_at = from;
  if (from >= head_len && from < ring_start)
    want_at = ring_start;
  if (want_at > kept)
    want_at = kept;
  assert_int_equal (at, want_at);
  assert_int_equal (lines, want_at / 100);
  uint64_t end = want_at < head_len ? head_len : kept;
  size_t want_n
      = end - want_at < sizeof got ? (size_t) (end - want_at) : sizeof got;
  assert_int_equal (n, want_n);
  for (size_t i = 0; i < n; i++)
    assert_int_equal (got[i], stream_byte (at + i));
}

/* A view reads what the capture holds on demand: any offset, at any
 * point of the stream, however it was fed; the middle is skipped, with
 * the lines before where reading goes on.  */
static void
test_read_on_demand (void **state)
{
  (void) state;
  const size_t head = 700, tail = 900;
  struct capture_limits l = small_limits (head, tail, UINT64_MAX);
  struct capture *cap = capture_new (&l, -1);
  char chunk[1500];
  uint64_t fed = 0;
  unsigned seed = 7;
  assert_int_equal (capture_kept_bytes (cap), 0);
  assert_int_equal (capture_read (cap, 0, chunk, 10, &(uint64_t){ 0 }, NULL),
                    0);
  for (int round = 0; round < 60; round++)
    {
      size_t len = (size_t) (rand_r (&seed) % sizeof chunk) + 1;
      stream_fill (chunk, len, fed);
      capture_feed (cap, chunk, len);
      fed += len;
      assert_int_equal (capture_kept_bytes (cap), fed);
      uint64_t probes[] = { 0,        1,       head - 1,   head,
                            head + 1, fed / 2, fed - tail, fed - tail + 1,
                            fed - 1,  fed,     fed + 5 };
      for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++)
        if (probes[k] <= fed + 5)
          assert_read_at (cap, probes[k], head, tail);
    }
  /* A reader following from the start sees the head, one jump, the tail,
   * and then nothing more.  */
  uint64_t at, from = 0, lines, jumps = 0, got = 0;
  size_t n;
  while ((n = capture_read (cap, from, chunk, 64, &at, &lines)) > 0)
    {
      jumps += at != from;
      got += n;
      from = at + n;
    }
  assert_int_equal (jumps, 1);
  assert_int_equal (got, head + tail);
  assert_int_equal (from, fed);
  capture_free (cap);
}

/* Past the ceiling nothing more is kept, and reading ends where keeping
 * did, with the lines of what was kept.  */
static void
test_read_stops_at_ceiling (void **state)
{
  (void) state;
  struct capture_limits l = small_limits (300, 300, 1000);
  struct capture *cap = capture_new (&l, -1);
  char chunk[1500];
  stream_fill (chunk, sizeof chunk, 0);
  capture_feed (cap, chunk, sizeof chunk);
  assert_int_equal (capture_kept_bytes (cap), 1000);
  uint64_t at, lines;
  char got[400];
  assert_int_equal (capture_read (cap, 500, got, sizeof got, &at, &lines), 300);
  assert_int_equal (at, 700);
  assert_int_equal (lines, 7);
  assert_memory_equal (got, chunk + 700, 300);
  assert_int_equal (capture_read (cap, 1000, got, sizeof got, &at, &lines), 0);
  assert_int_equal (at, 1000);
  assert_int_equal (lines, 10);
  capture_free (cap);
}

/* With a spool the full view's reader has every kept byte, in order,
 * from any offset and at any point of the stream: the middle comes from
 * the spool (not counted for lines), the rest as capture_read gives it;
 * past the ceiling nothing more.  */
static void
test_read_all_with_spool (void **state)
{
  (void) state;
  struct cr_error *err = NULL;
  int fd = capture_spool_open ("/tmp", &err);
  assert_true (fd >= 0);
  struct capture_limits l = small_limits (700, 900, 50000);
  struct capture *cap = capture_new (&l, fd);
  char chunk[1500], got[512];
  uint64_t fed = 0, at, lines;
  unsigned seed = 11;
  while (fed < 60000)
    {
      size_t len = (size_t) (rand_r (&seed) % sizeof chunk) + 1;
      stream_fill (chunk, len, fed);
      capture_feed (cap, chunk, len);
      fed += len;
      uint64_t kept = capture_kept_bytes (cap);
      uint64_t probes[] = { 0, 699, 700, 701, kept / 2, kept - 1, kept };
      for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++)
        {
          if (probes[k] > kept)
            continue;
          size_t n
              = capture_read_all (cap, probes[k], got, sizeof got, &at, &lines);
          assert_int_equal (at, probes[k]);
          assert_true (n > 0 || probes[k] == kept);
          for (size_t i = 0; i < n; i++)
            assert_int_equal (got[i], stream_byte (at + i));
          if (kept > 1600 && probes[k] >= 700 && probes[k] < kept - 900)
            assert_true (lines == UINT64_MAX);
        }
    }
  /* A reader following from the start: no jump, every byte, up to the
   * ceiling.  */
  uint64_t from = 0, total = 0;
  size_t n;
  while ((n = capture_read_all (cap, from, got, sizeof got, &at, NULL)) > 0)
    {
      assert_int_equal (at, from);
      total += n;
      from = at + n;
    }
  assert_int_equal (total, 50000);
  capture_free (cap);
}

/* capture_count_newlines against a byte-at-a-time count: every length up
 * to 700 at every alignment up to 16 (so each of the sixteen-, eight- and
 * one-byte paths, and each way from one to the next, is taken), over
 * random bytes with newlines dense and sparse; then lengths where the
 * lane counts would pass 255 if a round went on too long, every byte a
 * newline (255 rounds of 32, of 8, and either side of them).  */
static uint64_t
naive_newlines (const unsigned char *p, size_t len)
{
  uint64_t n = 0;
  for (size_t i = 0; i < len; i++)
    n += p[i] == '\n';
  return n;
}

static void
test_count_newlines (void **state)
{
  (void) state;
  enum
  {
    MAX = 700,
    ALIGN = 16
  };
  unsigned char *buf = xmalloc (MAX + ALIGN);
  unsigned seed = 12345;
  for (int density = 2; density <= 64; density *= 8)
    {
      for (size_t i = 0; i < MAX + ALIGN; i++)
        {
          seed = seed * 1103515245u + 12345u;
          unsigned r = seed >> 16;
          buf[i] = r % (unsigned) density == 0 ? '\n' : (unsigned char) r;
        }
      for (size_t off = 0; off < ALIGN; off++)
        for (size_t len = 0; len <= MAX; len++)
          assert_int_equal (capture_count_newlines (buf + off, len),
                            naive_newlines (buf + off, len));
    }
  free (buf);

  const size_t round = 255 * (size_t) 32, words = 255 * (size_t) 8;
  const size_t lens[] = { round - 1,      round, round + 1, round + 16,
                          round * 3 + 31, words, words + 7, (size_t) 1 << 20 };
  for (size_t k = 0; k < sizeof lens / sizeof *lens; k++)
    {
      unsigned char *all = xmalloc (lens[k] + 1);
      memset (all, '\n', lens[k] + 1);
      assert_int_equal (capture_count_newlines (all, lens[k]), lens[k]);
      assert_int_equal (capture_count_newlines (all + 1, lens[k]), lens[k]);
      free (all);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_hundred_megabytes),
    cmocka_unit_test (test_limits_for_result),
    cmocka_unit_test (test_small_stream_is_head),
    cmocka_unit_test (test_line_counting_edges),
    cmocka_unit_test (test_line_counting_matches_naive),
    cmocka_unit_test (test_head_tail_any_chunking),
    cmocka_unit_test (test_ceiling),
    cmocka_unit_test (test_read_on_demand),
    cmocka_unit_test (test_read_stops_at_ceiling),
    cmocka_unit_test (test_read_all_with_spool),
    cmocka_unit_test (test_spool_starts_at_first_drop),
    cmocka_unit_test (test_spool_contents),
    cmocka_unit_test (test_spool_bounded_by_ceiling),
    cmocka_unit_test (test_spool_fallback),
    cmocka_unit_test (test_spool_open_error),
    cmocka_unit_test (test_spool_write_failure),
    cmocka_unit_test (test_spool_interrupted_writes),
    cmocka_unit_test (test_spool_released_and_reused),
    cmocka_unit_test (test_count_newlines),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
