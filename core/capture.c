/* What a command prints: counts, a fixed head and tail, a spool, a ceiling.  */
#include <config.h>

#include "core/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/mask.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"

struct capture
{
  struct capture_limits limits;
  char *head; /* limits.head_bytes, filled first */
  size_t head_len;
  char *ring;      /* limits.tail_bytes, the latest bytes after the head */
  size_t ring_pos; /* where the next byte goes */
  size_t ring_len; /* bytes held, at most limits.tail_bytes */
  char *scratch;   /* the ring made contiguous for capture_retained */
  uint64_t total;  /* every raw byte that arrived */
  /* Bytes the views were given: total less those held back as perhaps
   * the start of a secret.  */
  uint64_t released;
  uint64_t kept; /* released bytes up to the ceiling: head + ring + dropped */
  uint64_t newlines;
  uint64_t kept_newlines; /* the '\n's of the kept bytes */
  bool ends_in_newline;   /* the last byte that arrived was '\n' */
  bool over;
  int spool_fd;
  bool spool_failed;
  uint64_t spooled;  /* bytes written to the spool, all from offset 0 */
  struct mask *mask; /* the command's secrets, or NULL: none */
  struct buf masked; /* what the last feed or cut released, masked */
  const char *last;  /* what the last feed or cut released */
  size_t last_len;
};

/* Limits for a result: the retained budget split evenly, and the ceiling.  */
struct capture_limits
capture_limits_for_result (uint64_t ceiling_bytes)
{
  struct capture_limits l = {
    .head_bytes = CAPTURE_RETAINED_BUDGET / 2,
    .tail_bytes = CAPTURE_RETAINED_BUDGET - CAPTURE_RETAINED_BUDGET / 2,
    .ceiling_bytes = ceiling_bytes,
  };
  return l;
}

/* Make a capture with its fixed buffers.  */
struct capture *
capture_new (const struct capture_limits *limits, int spool_fd)
{
  struct capture *cap = xcalloc (1, sizeof *cap);
  cap->limits = *limits;
  cap->head = xmalloc (limits->head_bytes);
  cap->ring = xmalloc (limits->tail_bytes);
  cap->scratch = xmalloc (limits->tail_bytes);
  cap->spool_fd = spool_fd;
  return cap;
}

/* Free a capture and close its spool.  */
void
capture_free (struct capture *cap)
{
  if (cap == NULL)
    return;
  if (cap->spool_fd >= 0)
    close (cap->spool_fd);
  free (cap->head);
  free (cap->ring);
  free (cap->scratch);
  mask_free (cap->mask);
  if (cap->masked.data != NULL)
    explicit_bzero (cap->masked.data, cap->masked.cap);
  buf_free (&cap->masked);
  free (cap);
}

/* Add a secret of the command's, masked in everything it prints.  */
int
capture_add_secret (struct capture *cap, const void *secret, size_t len,
                    struct cr_error **err)
{
  if (cap->total > 0)
    return cr_error_set (err, 0,
                         "adding a secret to mask: the output it masks "
                         "has begun");
  if (len == 0)
    return 0;
  if (cap->mask == NULL)
    cap->mask = mask_new ();
  return mask_add (cap->mask, secret, len, err);
}

#ifdef __SSE2__
/* The '\n' in len bytes at p, len a multiple of 16, sixteen at a time: a
 * byte that matches makes its lane of the compare all ones (-1), which is
 * subtracted into that lane's count; 255 rounds at most, so that no lane
 * passes 255, then the sixteen lane counts are summed (psadbw).  Two
 * vectors a round, for the two compare units most cores have.  */
static uint64_t
capture_count_newlines_sse2 (const unsigned char *p, size_t len)
{
  const __m128i nl = _mm_set1_epi8 ('\n');
  const __m128i zero = _mm_setzero_si128 ();
  uint64_t n = 0;
  while (len >= 32)
    {
      size_t rounds = len / 32;
      if (rounds > 255)
        rounds = 255;
      __m128i a = zero, b = zero;
      for (size_t i = 0; i < rounds; i++, p += 32)
        {
          __m128i x = _mm_loadu_si128 ((const __m128i *) (const void *) p);
          __m128i y
              = _mm_loadu_si128 ((const __m128i *) (const void *) (p + 16));
          a = _mm_sub_epi8 (a, _mm_cmpeq_epi8 (x, nl));
          b = _mm_sub_epi8 (b, _mm_cmpeq_epi8 (y, nl));
        }
      __m128i sums
          = _mm_add_epi64 (_mm_sad_epu8 (a, zero), _mm_sad_epu8 (b, zero));
      n += (uint64_t) _mm_cvtsi128_si64 (sums)
           + (uint64_t) _mm_cvtsi128_si64 (_mm_unpackhi_epi64 (sums, sums));
      len -= rounds * 32;
    }
  if (len >= 16)
    {
      __m128i x = _mm_loadu_si128 ((const __m128i *) (const void *) p);
      __m128i c
          = _mm_sad_epu8 (_mm_sub_epi8 (zero, _mm_cmpeq_epi8 (x, nl)), zero);
      n += (uint64_t) _mm_cvtsi128_si64 (c)
           + (uint64_t) _mm_cvtsi128_si64 (_mm_unpackhi_epi64 (c, c));
    }
  return n;
}
#endif

/* Count '\n' in p: sixteen bytes at a time with SSE2 (every x86-64 has
 * it), then, or elsewhere, eight at a time without a branch per byte.
 * The eight-byte test is exact (no carry between lanes): a lane of x is
 * zero iff its high bit is clear in both x and (x & 0x7f..) + 0x7f.. .
 * Each byte of the flood is counted here, by crucible run and the session
 * alike, so it is most of what reading output costs beyond the copy.  */
uint64_t
capture_count_newlines (const void *data, size_t len)
{
  const unsigned char *p = data;
  const uint64_t ones = 0x0101010101010101ULL;
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
  uint64_t n = 0;
#ifdef __SSE2__
  size_t wide = len & ~(size_t) 15;
  n = capture_count_newlines_sse2 (p, wide);
  p += wide;
  len -= wide;
#endif
  while (len >= 8)
    {
      /* Lane sums stay below 256 for up to 255 words.  */
      size_t words = len / 8;
      if (words > 255)
        words = 255;
      uint64_t acc = 0;
      for (size_t i = 0; i < words; i++, p += 8)
        {
          uint64_t w;
          memcpy (&w, p, 8);
          uint64_t x = w ^ (ones * '\n');
          uint64_t t = ((x & low7) + low7) | x;
          acc += (~t >> 7) & ones;
        }
      /* Pairs of lanes into 16-bit sums, then those four summed.  */
      uint64_t pairs = (acc & 0x00ff00ff00ff00ffULL)
                       + ((acc >> 8) & 0x00ff00ff00ff00ffULL);
      n += (pairs * 0x0001000100010001ULL) >> 48;
      len -= words * 8;
    }
  for (size_t i = 0; i < len; i++)
    n += p[i] == '\n';
  return n;
}

/* Write all of len bytes to fd at offset at, retrying on EINTR and
 * partial writes.  At an offset rather than the file's position, so that a
 * spool given back (capture_spool_release) is written over from its start
 * with no seek; a descriptor that cannot seek (a pipe) is written in
 * order.  */
static int
capture_write_all (int fd, const char *p, size_t len, uint64_t at)
{
  bool seekable = true;
  while (len > 0)
    {
      ssize_t n
          = seekable ? pwrite (fd, p, len, (off_t) at) : write (fd, p, len);
      if (n < 0 && errno == ESPIPE && seekable)
        {
          seekable = false;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      p += n;
      at += (uint64_t) n;
      len -= (size_t) n;
    }
  return 0;
}

/* Append len bytes to the spool, up to CAPTURE_SPOOL_MAX, in one write
 * straight from where they are.  The first failure ends spooling.  */
static void
capture_spool_append (struct capture *cap, const char *p, size_t len)
{
  if (cap->spool_failed || len == 0)
    return;
  uint64_t room = CAPTURE_SPOOL_MAX - cap->spooled;
  size_t n = len < room ? len : (size_t) room;
  if (n == 0)
    return;
  if (capture_write_all (cap->spool_fd, p, n, cap->spooled) < 0)
    cap->spool_failed = true;
  else
    cap->spooled += n;
}

static size_t capture_ring_index (const struct capture *cap, uint64_t at);

/* Spool kept bytes for the full view, which needs the spool only for the
 * middle the head and tail drop: while they hold the whole stream
 * nothing is written (most commands print less than that, and write no
 * spool at all); the feed that would first drop a byte writes what they
 * hold, in order, before its own bytes.  From then on each feed is one
 * write straight from where its bytes are (the read buffer, or the
 * masked copy): the kernel's one copy into the file and no more.  */
static void
capture_spool (struct capture *cap, const char *p, size_t len)
{
  if (cap->spool_fd < 0 || cap->spool_failed || len == 0)
    return;
  if (cap->spooled == 0)
    {
      uint64_t whole
          = (uint64_t) cap->limits.head_bytes + cap->limits.tail_bytes;
      if (cap->kept + len <= whole)
        return;
      /* Nothing was dropped yet: the head and ring are the stream.  */
      capture_spool_append (cap, cap->head, cap->head_len);
      if (cap->ring_len > 0)
        {
          size_t size = cap->limits.tail_bytes;
          size_t i = capture_ring_index (cap, cap->kept - cap->ring_len);
          size_t first = size - i < cap->ring_len ? size - i : cap->ring_len;
          capture_spool_append (cap, cap->ring + i, first);
          capture_spool_append (cap, cap->ring, cap->ring_len - first);
        }
    }
  capture_spool_append (cap, p, len);
}

/* Put bytes that follow the head into the tail ring, oldest dropped.  */
static void
capture_ring_put (struct capture *cap, const char *p, size_t len)
{
  size_t size = cap->limits.tail_bytes;
  if (size == 0 || len == 0)
    return;
  buf_ring_put (cap->ring, size, &cap->ring_pos, &cap->ring_len, p, len);
}

/* Keep bytes that are within the ceiling: head first, then the ring.  */
static void
capture_keep (struct capture *cap, const char *p, size_t len)
{
  size_t room = cap->limits.head_bytes - cap->head_len;
  size_t n = len < room ? len : room;
  memcpy (cap->head + cap->head_len, p, n);
  cap->head_len += n;
  capture_ring_put (cap, p + n, len - n);
  cap->kept += len;
}

/* Take len bytes the views are to see, in order: counted, and kept and
 * spooled up to the ceiling.  */
static void
capture_take (struct capture *cap, const char *p, size_t len)
{
  cap->last = p;
  cap->last_len = len;
  if (len == 0)
    return;
  cap->released += len;
  uint64_t newlines = capture_count_newlines (p, len);
  cap->newlines += newlines;
  cap->ends_in_newline = p[len - 1] == '\n';
  uint64_t room = cap->limits.ceiling_bytes - cap->kept;
  size_t keep = len < room ? len : (size_t) room;
  /* Past the ceiling (once per command at most) the kept part is counted
   * on its own.  */
  cap->kept_newlines
      += keep == len ? newlines : capture_count_newlines (p, keep);
  capture_spool (cap, p, keep);
  capture_keep (cap, p, keep);
}

/* Take len bytes that arrived.  With secrets they go through the masker
 * first, so that every count, cut and view sees only masked bytes; the
 * ceiling is counted on the raw bytes.  */
enum capture_status
capture_feed (struct capture *cap, const void *data, size_t len)
{
  cap->last_len = 0;
  if (len == 0)
    return cap->over ? CAPTURE_CEILING : CAPTURE_OK;
  cap->total += len;
  if (cap->mask == NULL)
    capture_take (cap, data, len);
  else
    {
      cap->masked.len = 0;
      mask_feed (cap->mask, data, len, &cap->masked);
      capture_take (cap, cap->masked.data, cap->masked.len);
    }
  if (cap->total > cap->limits.ceiling_bytes)
    cap->over = true;
  return cap->over ? CAPTURE_CEILING : CAPTURE_OK;
}

/* A cut: the bytes held back because they could begin a secret are
 * released as '*'.  */
void
capture_cut (struct capture *cap)
{
  cap->last_len = 0;
  if (cap->mask == NULL)
    return;
  cap->masked.len = 0;
  mask_flush (cap->mask, &cap->masked);
  capture_take (cap, cap->masked.data, cap->masked.len);
}

/* What the last feed or cut released.  */
void
capture_released (const struct capture *cap, const char **bytes, size_t *len)
{
  *bytes = cap->last_len > 0 ? cap->last : "";
  *len = cap->last_len;
}

/* Raw bytes that arrived, including any past the ceiling.  */
uint64_t
capture_total_bytes (const struct capture *cap)
{
  return cap->total;
}

/* Lines: each '\n' ends one, and a last line without one counts too.  */
uint64_t
capture_lines (const struct capture *cap)
{
  bool partial = cap->released > 0 && !cap->ends_in_newline;
  return cap->newlines + (partial ? 1 : 0);
}

/* Whether the ceiling was passed.  */
bool
capture_over_ceiling (const struct capture *cap)
{
  return cap->over;
}

/* The ring's bytes, oldest first, contiguous (copied when it wraps).  */
static const char *
capture_ring_linear (const struct capture *cap)
{
  size_t size = cap->limits.tail_bytes;
  if (cap->ring_len < size || cap->ring_pos == 0)
    return cap->ring;
  size_t older = size - cap->ring_pos;
  memcpy (cap->scratch, cap->ring + cap->ring_pos, older);
  memcpy (cap->scratch + older, cap->ring, cap->ring_pos);
  return cap->scratch;
}

/* The retained head and tail, and the bytes dropped between them.  */
void
capture_retained (const struct capture *cap, const char **head,
                  size_t *head_len, const char **tail, size_t *tail_len,
                  uint64_t *omitted)
{
  *head = cap->head;
  *head_len = cap->head_len;
  *tail = capture_ring_linear (cap);
  *tail_len = cap->ring_len;
  *omitted = cap->kept - cap->head_len - cap->ring_len;
}

/* Released bytes kept, up to the ceiling.  */
uint64_t
capture_kept_bytes (const struct capture *cap)
{
  return cap->kept;
}

/* Where the ring's byte at stream offset at is (at within the ring's
 * span of the stream).  */
static size_t
capture_ring_index (const struct capture *cap, uint64_t at)
{
  size_t size = cap->limits.tail_bytes;
  size_t back = (size_t) (cap->kept - at); /* 1 .. ring_len */
  return (cap->ring_pos + size - back) % size;
}

/* Copy up to max held bytes from stream offset at, which the head or the
 * ring holds, to dst; returns how many.  */
static size_t
capture_copy_held (const struct capture *cap, uint64_t at, char *dst,
                   size_t max)
{
  if (at < cap->head_len)
    {
      size_t n = cap->head_len - (size_t) at;
      n = n < max ? n : max;
      memcpy (dst, cap->head + at, n);
      return n;
    }
  size_t n = (size_t) (cap->kept - at);
  n = n < max ? n : max;
  if (n == 0)
    return 0;
  size_t size = cap->limits.tail_bytes;
  size_t i = capture_ring_index (cap, at);
  size_t first = size - i < n ? size - i : n;
  memcpy (dst, cap->ring + i, first);
  memcpy (dst + first, cap->ring, n - first);
  return n;
}

/* The '\n's of the kept stream before offset at, which the head or the
 * ring holds (or is the end): counted over the shorter side.  */
static uint64_t
capture_lines_before (const struct capture *cap, uint64_t at)
{
  if (at <= cap->head_len)
    return capture_count_newlines (cap->head, (size_t) at);
  uint64_t after = 0;
  size_t size = cap->limits.tail_bytes;
  size_t n = (size_t) (cap->kept - at);
  if (n > 0)
    {
      size_t i = capture_ring_index (cap, at);
      size_t first = size - i < n ? size - i : n;
      after = capture_count_newlines (cap->ring + i, first)
              + capture_count_newlines (cap->ring, n - first);
    }
  return cap->kept_newlines - after;
}

/* Kept bytes from stream offset from on, as far as they are still held. */
size_t
capture_read (const struct capture *cap, uint64_t from, char *dst, size_t max,
              uint64_t *at, uint64_t *lines_before)
{
  uint64_t ring_start = cap->kept - cap->ring_len;
  uint64_t where = from;
  if (where >= cap->head_len && where < ring_start)
    where = ring_start; /* the middle that was dropped */
  if (where > cap->kept)
    where = cap->kept;
  *at = where;
  if (lines_before != NULL)
    *lines_before = capture_lines_before (cap, where);
  return capture_copy_held (cap, where, dst, max);
}

/* Kept bytes from stream offset from on, the dropped middle read from
 * the spool as far as it holds it.  */
size_t
capture_read_all (const struct capture *cap, uint64_t from, char *dst,
                  size_t max, uint64_t *at, uint64_t *lines_before)
{
  uint64_t ring_start = cap->kept - cap->ring_len;
  uint64_t spooled = cap->spooled < ring_start ? cap->spooled : ring_start;
  if (from < cap->head_len || from >= spooled || max == 0)
    return capture_read (cap, from, dst, max, at, lines_before);
  size_t want = spooled - from < max ? (size_t) (spooled - from) : max;
  ssize_t n;
  do
    n = pread (cap->spool_fd, dst, want, (off_t) from);
  while (n < 0 && errno == EINTR);
  /* A spool that cannot be read is a middle not kept.  */
  if (n <= 0)
    return capture_read (cap, ring_start, dst, max, at, lines_before);
  *at = from;
  if (lines_before != NULL)
    *lines_before = UINT64_MAX;
  return (size_t) n;
}

/* The spool descriptor, or -1.  */
int
capture_spool_fd (const struct capture *cap)
{
  return cap->spool_fd;
}

/* Take the spool back for another capture to write over: its pages are
 * allocated already.  A spool whose write failed is closed instead.  */
int
capture_spool_release (struct capture *cap)
{
  int fd = cap->spool_fd;
  uint64_t spooled = cap->spooled;
  cap->spool_fd = -1;
  cap->spooled = 0;
  /* What lies past this stream's own bytes is an earlier one's: cut off,
   * so that a spool waiting for the next command holds no more than the
   * last command's output.  */
  if (fd >= 0 && (cap->spool_failed || ftruncate (fd, (off_t) spooled) < 0))
    {
      close (fd);
      fd = -1;
    }
  return fd;
}

/* Whether writing the spool failed, so the full view is incomplete.  */
bool
capture_spool_failed (const struct capture *cap)
{
  return cap->spool_failed;
}

/* Create a file in dir with mkstemp and unlink it at once, mode 0600.  */
int
capture_spool_open_unlinked (const char *dir, struct cr_error **err)
{
  cleanup_free char *path = xasprintf ("%s/.crucible-spool-XXXXXX", dir);
  cleanup_close int fd = mkostemp (path, O_CLOEXEC);
  if (fd < 0)
    return cr_error_set (err, errno, "creating a spool file in `%s`", dir);
  if (unlink (path) < 0)
    {
      int saved = errno;
      return cr_error_set (err, saved, "unlinking spool file `%s`", path);
    }
  if (fchmod (fd, 0600) < 0)
    return cr_error_set (err, errno, "chmod 0600 spool file in `%s`", dir);
  return steal_fd (&fd);
}

/* Open an anonymous spool file in dir, mode 0600.  */
int
capture_spool_open (const char *dir, struct cr_error **err)
{
  int fd = open (dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0)
    return fd;
  /* Filesystems without O_TMPFILE say EOPNOTSUPP; kernels that predate it
     read the flag as O_DIRECTORY and say EISDIR.  */
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    return cr_error_set (err, errno, "opening a spool file in `%s`", dir);
  return capture_spool_open_unlinked (dir, err);
}
