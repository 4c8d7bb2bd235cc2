/* Tests for core/mask.c and its place in core/capture.c: every occurrence
 * masked across every split, held bytes released as soon as they cannot
 * begin a secret, flushes at cuts, counts unchanged, and the capture's
 * views (head/tail, spool, lines, ceiling, released bytes) masked.  */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/capture.h"
#include "core/mask.h"
#include "core/result.h"
#include "lib/buf.h"
#include "lib/error.h"
#include "lib/xalloc.h"
#include "tests/fuzz/mask_ref.h"

/* A masker with the NULL-terminated secrets given.  */
static struct mask *
make_mask (const char *const *secrets)
{
  struct mask *m = mask_new ();
  for (size_t i = 0; secrets[i] != NULL; i++)
    {
      struct cr_error *err = NULL;
      assert_int_equal (mask_add (m, secrets[i], strlen (secrets[i]), &err), 0);
      assert_null (err);
    }
  return m;
}

/* The secrets as the reference takes them.  */
static size_t
ref_secrets (const char *const *secrets, struct mask_ref_secret *out)
{
  size_t n = 0;
  for (; secrets[n] != NULL; n++)
    out[n] = (struct mask_ref_secret){ (const unsigned char *) secrets[n],
                                       strlen (secrets[n]) };
  return n;
}

/* Feed text in the pieces that cuts[] (increasing positions, ending with
 * len) make, checking after each that exactly the bytes that cannot change
 * any more were released and that they are the reference's; flush at the
 * end when asked.  Returns the output (caller frees).  */
static char *
feed_split (const char *const *secrets, const char *text, const size_t *cuts,
            size_t n_cuts, bool flush)
{
  struct mask_ref_secret s[MASK_MAX_SECRETS];
  size_t n = ref_secrets (secrets, s), len = strlen (text);
  size_t flush_at[1] = { len };
  unsigned char *want = xmalloc (len + 1);
  mask_ref_apply (s, n, (const unsigned char *) text, len, flush_at,
                  flush ? 1 : 0, want);
  struct mask *m = make_mask (secrets);
  struct buf out = BUF_INIT;
  size_t at = 0;
  for (size_t c = 0; c < n_cuts; c++)
    {
      mask_feed (m, text + at, cuts[c] - at, &out);
      at = cuts[c];
      size_t hold = mask_ref_hold (s, n, (const unsigned char *) text, at);
      assert_int_equal (out.len, at - hold);
      assert_int_equal (mask_held (m), hold);
    }
  if (flush)
    mask_flush (m, &out);
  assert_int_equal (out.len, flush ? len : len - mask_held (m));
  if (out.len > 0)
    assert_memory_equal (out.data, want, out.len);
  free (want);
  mask_free (m);
  buf_append (&out, "", 0);
  return buf_steal (&out, NULL);
}

/* Masked whole, in one read, flushed.  */
static char *
mask_whole (const char *const *secrets, const char *text)
{
  size_t cuts[1] = { strlen (text) };
  return feed_split (secrets, text, cuts, 1, true);
}

/* Check text masks to want in one piece, in every split into two and three
 * pieces, and byte by byte.  */
static void
assert_masks_everywhere (const char *const *secrets, const char *text,
                         const char *want)
{
  size_t len = strlen (text);
  char *got = mask_whole (secrets, text);
  assert_string_equal (got, want);
  free (got);
  for (size_t i = 0; i <= len; i++)
    for (size_t j = i; j <= len; j++)
      {
        size_t cuts[3] = { i, j, len };
        got = feed_split (secrets, text, cuts, 3, true);
        assert_string_equal (got, want);
        free (got);
      }
  size_t *bytes = xmalloc ((len + 1) * sizeof *bytes);
  for (size_t i = 0; i < len; i++)
    bytes[i] = i + 1;
  got = feed_split (secrets, text, bytes, len, true);
  assert_string_equal (got, want);
  free (got);
  free (bytes);
}

/* A secret is masked at every split point, byte by byte too.  */
static void
test_every_split (void **state)
{
  const char *secrets[] = { "0123456789abcdef0123456789abcdef", NULL };
  assert_masks_everywhere (secrets,
                           "token=0123456789abcdef0123456789abcdef; next\n",
                           "token=********************************; next\n");
  /* At the very start, and twice in a row.  */
  assert_masks_everywhere (
      secrets,
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.",
      "****************************************************************.");
  /* A near miss stays as it was.  */
  assert_masks_everywhere (secrets, "0123456789abcdef0123456789abcdeX\n",
                           "0123456789abcdef0123456789abcdeX\n");
}

/* Secrets sharing a prefix: each found, neither confused with the other. */
static void
test_shared_prefixes (void **state)
{
  const char *secrets[] = { "abcdef", "abcxyz", "abq", NULL };
  assert_masks_everywhere (secrets, "abcdeabcxyz.abcdef abcx abq ab.",
                           "abcde******.****** abcx *** ab.");
}

/* One secret inside another: both masked wherever either appears.  */
static void
test_substring (void **state)
{
  const char *secrets[] = { "password", "ass", NULL };
  assert_masks_everywhere (secrets, "pass assword password passwor.",
                           "p*** ***word ******** p***wor.");
  const char *nested[] = { "b", "abc", NULL };
  assert_masks_everywhere (nested, "abc ab bc a.", "*** a* *c a.");
}

/* Overlapping and adjacent occurrences are all masked.  */
static void
test_overlaps (void **state)
{
  const char *abab[] = { "abab", NULL };
  assert_masks_everywhere (abab, "xababab abababa abab",
                           "x****** ******a ****");
  const char *aaa[] = { "aaa", NULL };
  assert_masks_everywhere (aaa, "aa aaaaa a aaa", "aa ***** a ***");
  const char *two[] = { "xy", "yz", NULL };
  assert_masks_everywhere (two, "xyz xyyz", "*** ****");
}

/* A secret ending the stream is held until the flush, which masks it; a
 * started one is masked by the flush; bytes that turn out not to begin
 * one are released at once.  */
static void
test_secret_at_end (void **state)
{
  const char *secrets[] = { "s3cret", NULL };
  struct mask *m = make_mask (secrets);
  struct buf out = BUF_INIT;
  mask_feed (m, "log: s3cr", 9, &out);
  assert_int_equal (out.len, 5);
  assert_memory_equal (out.data, "log: ", 5);
  assert_int_equal (mask_held (m), 4);
  mask_feed (m, "X", 1, &out);
  assert_string_equal (out.data, "log: s3crX");
  assert_int_equal (mask_held (m), 0);
  mask_feed (m, " s3cret", 7, &out);
  /* Whole: it cannot grow into anything, so nothing is held.  */
  assert_string_equal (out.data, "log: s3crX ******");
  mask_feed (m, " s3c", 4, &out);
  assert_string_equal (out.data, "log: s3crX ****** ");
  mask_flush (m, &out);
  assert_string_equal (out.data, "log: s3crX ****** ***");
  assert_int_equal (mask_held (m), 0);
  /* A second flush has nothing to release.  */
  mask_flush (m, &out);
  assert_int_equal (out.len, 21);
  buf_free (&out);
  mask_free (m);

  /* Held while it could still be the start of a longer secret.  */
  const char *nested[] = { "key", "key-long", NULL };
  char *got = feed_split (nested, "a key", (size_t[]){ 5 }, 1, false);
  assert_string_equal (got, "a ");
  free (got);
  got = feed_split (nested, "a key", (size_t[]){ 5 }, 1, true);
  assert_string_equal (got, "a ***");
  free (got);
}

/* A flush in the middle of a secret masks both sides of the cut.  */
static void
test_flush_mid_secret (void **state)
{
  const char *secrets[] = { "hunter2", NULL };
  struct mask *m = make_mask (secrets);
  struct buf out = BUF_INIT;
  mask_feed (m, "pw=hun", 6, &out);
  mask_flush (m, &out);
  assert_string_equal (out.data, "pw=***");
  mask_feed (m, "ter2 ok", 7, &out);
  assert_string_equal (out.data, "pw=******* ok");
  /* The held bytes a flush masked that turn out to begin nothing stay
   * masked: they were shown already.  */
  mask_feed (m, " hu", 3, &out);
  mask_flush (m, &out);
  mask_feed (m, "nt", 2, &out);
  assert_string_equal (out.data, "pw=******* ok **");
  mask_feed (m, "X", 1, &out);
  assert_string_equal (out.data, "pw=******* ok **ntX");
  buf_free (&out);
  mask_free (m);
}

/* Random streams with secrets planted: counts unchanged, exactly the
 * reference's bytes, whatever the reads.  */
static void
test_random_streams (void **state)
{
  const char *secrets[] = { "c0ffee", "c0ffeec0de", "ee", "deadbeef", NULL };
  struct mask_ref_secret s[8];
  /* The number of secrets as the compiler counts them, so that no path
   * divides by a zero.  */
  const size_t n = sizeof secrets / sizeof *secrets - 1;
  assert_int_equal (ref_secrets (secrets, s), n);
  srand (13);
  for (int round = 0; round < 200; round++)
    {
      size_t len = (size_t) ((unsigned) rand () % 2000u) + 1;
      unsigned char *text = xmalloc (len), *want = xmalloc (len);
      for (size_t i = 0; i < len; i++)
        text[i] = "abcdef0e"[rand () % 8];
      for (int k = 0; k < 5; k++)
        {
          const struct mask_ref_secret *p = &s[rand () % n];
          size_t at = (size_t) rand () % len;
          if (at + p->len <= len)
            memcpy (text + at, p->bytes, p->len);
        }
      size_t flushes[4], n_flushes = 0;
      struct mask *m = make_mask (secrets);
      struct buf out = BUF_INIT;
      for (size_t at = 0; at < len;)
        {
          size_t piece = 1 + (size_t) rand () % 64;
          if (piece > len - at)
            piece = len - at;
          mask_feed (m, text + at, piece, &out);
          at += piece;
          if (rand () % 50 == 0 && n_flushes < 3)
            {
              mask_flush (m, &out);
              flushes[n_flushes++] = at;
              assert_int_equal (out.len, at);
            }
        }
      mask_flush (m, &out);
      flushes[n_flushes++] = len;
      assert_int_equal (out.len, len);
      mask_ref_apply (s, n, text, len, flushes, n_flushes, want);
      assert_memory_equal (out.data, want, len);
      buf_free (&out);
      mask_free (m);
      free (text);
      free (want);
    }
}

/* Secrets of any bytes: NUL, 0xff, newlines.  */
static void
test_binary_secrets (void **state)
{
  struct mask *m = mask_new ();
  struct cr_error *err = NULL;
  assert_int_equal (mask_add (m, "a\0\xff\n", 4, &err), 0);
  struct buf out = BUF_INIT;
  mask_feed (m, "xa\0\xff\nya\0\xff", 9, &out);
  mask_flush (m, &out);
  assert_int_equal (out.len, 9);
  assert_memory_equal (out.data, "x****y***", 9);
  buf_free (&out);
  mask_free (m);
}

/* The bounds: empty ignored, too long, too many, after the stream began;
 * with no secret, bytes pass unchanged and nothing is held.  */
static void
test_limits (void **state)
{
  struct mask *m = mask_new ();
  struct cr_error *err = NULL;
  assert_int_equal (mask_add (m, "", 0, &err), 0);
  char *big = xmalloc (MASK_MAX_LEN + 1);
  memset (big, 'k', MASK_MAX_LEN + 1);
  assert_int_equal (mask_add (m, big, MASK_MAX_LEN + 1, &err), -1);
  assert_string_equal (err->msg, "adding a secret to mask: it is 65537 bytes, "
                                 "more than the 65536 a masked value may have");
  cr_error_clear (&err);
  assert_int_equal (mask_add (m, big, MASK_MAX_LEN, &err), 0);
  for (int i = 1; i < MASK_MAX_SECRETS; i++)
    assert_int_equal (mask_add (m, "s", 1, &err), 0);
  assert_int_equal (mask_add (m, "t", 1, &err), -1);
  assert_string_equal (err->msg, "adding a secret to mask: a command's output "
                                 "masks at most 64 values");
  cr_error_clear (&err);
  /* The longest secret, whole, among 'k's that begin it everywhere.  */
  struct buf out = BUF_INIT;
  mask_feed (m, "k", 1, &out);
  assert_int_equal (mask_add (m, "u", 1, &err), -1);
  assert_string_equal (err->msg, "adding a secret to mask: the output it "
                                 "masks has begun");
  cr_error_clear (&err);
  mask_feed (m, big, MASK_MAX_LEN, &out);
  mask_feed (m, "x", 1, &out);
  assert_int_equal (out.len, MASK_MAX_LEN + 2);
  for (size_t i = 0; i < MASK_MAX_LEN + 1; i++)
    assert_int_equal (out.data[i], '*');
  assert_int_equal (out.data[MASK_MAX_LEN + 1], 'x');
  buf_free (&out);
  mask_free (m);
  free (big);

  m = mask_new ();
  assert_int_equal (mask_add (m, "", 0, &err), 0);
  mask_feed (m, "plain\n", 6, &out);
  assert_int_equal (mask_held (m), 0);
  mask_flush (m, &out);
  assert_string_equal (out.data, "plain\n");
  buf_free (&out);
  mask_free (m);
}

/* A capture with small head and tail, the given ceiling and secrets.  */
static struct capture *
capture_with (const char *const *secrets, size_t head, size_t tail,
              uint64_t ceiling, int spool_fd)
{
  struct capture_limits l
      = { .head_bytes = head, .tail_bytes = tail, .ceiling_bytes = ceiling };
  struct capture *cap = capture_new (&l, spool_fd);
  for (size_t i = 0; secrets[i] != NULL; i++)
    {
      struct cr_error *err = NULL;
      assert_int_equal (
          capture_add_secret (cap, secrets[i], strlen (secrets[i]), &err), 0);
    }
  return cap;
}

/* Feed text to cap in pieces of `piece` bytes, collecting what it
 * released into seen; cut at the end.  */
static void
capture_pieces (struct capture *cap, const char *text, size_t len, size_t piece,
                struct buf *seen)
{
  const char *r;
  size_t rl;
  for (size_t at = 0; at < len; at += piece)
    {
      capture_feed (cap, text + at, len - at < piece ? len - at : piece);
      capture_released (cap, &r, &rl);
      buf_append (seen, r, rl);
    }
  capture_cut (cap);
  capture_released (cap, &r, &rl);
  buf_append (seen, r, rl);
}

/* The head/tail split falling inside a secret shows none of it on either
 * side, for every read size; what was released is the masked stream.  */
static void
test_capture_split_inside_secret (void **state)
{
  const char *secrets[] = { "SECRETVALUE", NULL };
  /* 30 bytes, the secret at 5..15: the head (10) ends inside it, and the
   * tail (16) begins inside it.  */
  const char *text = "abcd SECRETVALUE efghijklmnop\n";
  const char *want = "abcd *********** efghijklmnop\n";
  size_t len = strlen (text);
  for (size_t piece = 1; piece <= len; piece++)
    {
      struct capture *cap = capture_with (secrets, 10, 16, 1000, -1);
      struct buf seen = BUF_INIT;
      capture_pieces (cap, text, len, piece, &seen);
      assert_int_equal (seen.len, len);
      assert_memory_equal (seen.data, want, len);
      const char *h, *t;
      size_t hl, tl;
      uint64_t omitted;
      capture_retained (cap, &h, &hl, &t, &tl, &omitted);
      assert_int_equal (hl, 10);
      assert_int_equal (tl, 16);
      assert_int_equal (omitted, len - 26);
      assert_memory_equal (h, want, 10);
      assert_memory_equal (t, want + len - 16, 16);
      assert_int_equal (capture_total_bytes (cap), len);
      assert_int_equal (capture_lines (cap), 1);
      buf_free (&seen);
      capture_free (cap);
    }
}

/* Read a whole descriptor from its start.  */
static void
read_all (int fd, struct buf *out)
{
  char chunk[4096];
  ssize_t n;
  assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
  while ((n = read (fd, chunk, sizeof chunk)) > 0)
    buf_append (out, chunk, (size_t) n);
}

/* The spool holds the masked stream, up to the ceiling.  */
static void
test_capture_spool_masked (void **state)
{
  const char *secrets[] = { "pa55word", "tok", NULL };
  struct cr_error *err = NULL;
  int fd = capture_spool_open ("/tmp", &err);
  assert_true (fd >= 0);
  struct buf text = BUF_INIT;
  for (int i = 0; i < 5000; i++)
    buf_printf (&text, "line %d pa55word tok%s\n", i, i % 7 ? "" : "pa");
  /* A secret cut at the end of the stream.  */
  buf_puts (&text, "pa55w");
  struct mask_ref_secret s[2];
  size_t n = ref_secrets (secrets, s), flush_at[1] = { text.len };
  unsigned char *want = xmalloc (text.len);
  mask_ref_apply (s, n, (unsigned char *) text.data, text.len, flush_at, 1,
                  want);
  struct capture *cap = capture_with (secrets, 100, 100, UINT64_MAX, fd);
  struct buf seen = BUF_INIT;
  capture_pieces (cap, text.data, text.len, 4093, &seen);
  struct buf spool = BUF_INIT;
  read_all (fd, &spool);
  assert_int_equal (spool.len, text.len);
  assert_memory_equal (spool.data, want, text.len);
  assert_null (memmem (spool.data, spool.len, "pa55", 4));
  assert_null (memmem (spool.data, spool.len, "tok", 3));
  buf_free (&spool);
  buf_free (&seen);
  buf_free (&text);
  free (want);
  capture_free (cap);
}

/* Lines are counted on what is shown: a secret without a newline leaves
 * the count as it was, one holding a newline takes it with it.  */
static void
test_capture_lines (void **state)
{
  const char *text = "one key\ntwo\nkey\nthree a\nb";
  const char *none[] = { NULL };
  const char *key[] = { "key", NULL };
  const char *span[] = { "a\nb", NULL };
  struct buf seen = BUF_INIT;
  struct capture *cap = capture_with (none, 100, 100, 1000, -1);
  capture_pieces (cap, text, strlen (text), 3, &seen);
  assert_int_equal (capture_lines (cap), 5);
  capture_free (cap);
  cap = capture_with (key, 100, 100, 1000, -1);
  capture_pieces (cap, text, strlen (text), 3, &seen);
  assert_int_equal (capture_lines (cap), 5);
  assert_int_equal (capture_total_bytes (cap), strlen (text));
  capture_free (cap);
  cap = capture_with (span, 100, 100, 1000, -1);
  capture_pieces (cap, text, strlen (text), 3, &seen);
  assert_int_equal (capture_lines (cap), 4);
  assert_int_equal (capture_total_bytes (cap), strlen (text));
  capture_free (cap);
  buf_free (&seen);
}

/* The ceiling falling inside a secret: the bytes kept up to it show none
 * of it, whether the rest of it arrived (then they are masked as part of
 * the occurrence) or the stream was cut there (then the cut masks them). */
static void
test_capture_ceiling_mid_secret (void **state)
{
  const char *secrets[] = { "SECRETVALUE", NULL };
  const char *text = "0123456789SECRETVALUE tail";
  const char *h, *t;
  size_t hl, tl;
  uint64_t omitted;
  /* Ceiling 15: SECRE is within it.  */
  for (size_t piece = 1; piece <= strlen (text); piece++)
    {
      struct capture *cap = capture_with (secrets, 100, 100, 15, -1);
      struct buf seen = BUF_INIT;
      capture_pieces (cap, text, strlen (text), piece, &seen);
      assert_true (capture_over_ceiling (cap));
      capture_retained (cap, &h, &hl, &t, &tl, &omitted);
      assert_int_equal (hl, 15);
      assert_memory_equal (h, "0123456789*****", 15);
      assert_int_equal (capture_total_bytes (cap), strlen (text));
      buf_free (&seen);
      capture_free (cap);
    }
  /* The stream stops at the ceiling (a stop, the command killed): the cut
   * masks what could have begun the secret.  */
  for (size_t stop = 11; stop <= 16; stop++)
    {
      struct capture *cap = capture_with (secrets, 100, 100, 15, -1);
      struct buf seen = BUF_INIT;
      capture_pieces (cap, text, stop, 1, &seen);
      capture_retained (cap, &h, &hl, &t, &tl, &omitted);
      size_t kept = stop < 15 ? stop : 15;
      assert_int_equal (hl, kept);
      assert_memory_equal (h, "0123456789*****", kept);
      assert_int_equal (seen.len, stop);
      buf_free (&seen);
      capture_free (cap);
    }
}

/* The result made from a masked capture, cut to its 30,000-byte cap in
 * its middle and by the capture's head/tail split, holds no byte of the
 * secret (letters the rest of the stream never has).  */
static void
test_result_cuts_masked (void **state)
{
  const char *secrets[] = { "QZXQZXQZXQZXQZXQZXQZXQZXQZXQZXQZ", NULL };
  struct buf text = BUF_INIT;
  for (int i = 0; i < 3000; i++)
    buf_printf (&text, "%05d %s\n", i, secrets[0]);
  for (int pass = 0; pass < 2; pass++)
    {
      /* Pass 0: all kept, result_fit cuts its middle; pass 1: the
       * capture's own split.  */
      struct capture_limits l = capture_limits_for_result (UINT64_MAX);
      if (pass == 0)
        l.head_bytes = text.len;
      struct capture *cap = capture_new (&l, -1);
      struct cr_error *err = NULL;
      assert_int_equal (
          capture_add_secret (cap, secrets[0], strlen (secrets[0]), &err), 0);
      struct buf seen = BUF_INIT;
      capture_pieces (cap, text.data, text.len, 1021, &seen);
      struct result_input in = { .ending = RESULT_EXITED };
      capture_retained (cap, &in.head, &in.head_len, &in.tail, &in.tail_len,
                        &in.omitted_bytes);
      in.total_bytes = capture_total_bytes (cap);
      size_t rl;
      char *r = result_compose (&in, &rl);
      assert_true (rl > 20000);
      assert_null (memchr (r, 'Q', rl));
      assert_null (memchr (r, 'Z', rl));
      assert_null (memchr (r, 'X', rl));
      assert_non_null (strstr (r, "omitted from the middle"));
      free (r);
      buf_free (&seen);
      capture_free (cap);
    }
  buf_free (&text);
}

/* Without secrets the capture hands back the very bytes it was fed.  */
static void
test_capture_no_secret_no_copy (void **state)
{
  const char *none[] = { NULL };
  struct capture *cap = capture_with (none, 10, 10, 100, -1);
  const char *text = "some output\n";
  capture_feed (cap, text, strlen (text));
  const char *r;
  size_t rl;
  capture_released (cap, &r, &rl);
  assert_ptr_equal (r, text);
  assert_int_equal (rl, strlen (text));
  capture_cut (cap);
  capture_released (cap, &r, &rl);
  assert_int_equal (rl, 0);
  struct cr_error *err = NULL;
  assert_int_equal (capture_add_secret (cap, "x", 1, &err), -1);
  cr_error_free (err);
  capture_free (cap);
}

/* Seconds on the monotonic clock.  */
static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The median of n timings (sorted in place).  */
static double
median (double *t, size_t n)
{
  qsort (t, n, sizeof *t, cmp_double);
  return t[n / 2];
}

/* Time rounds feeds of text through memcpy, the masker, and captures
 * without and with secrets, each read timed on its own and the medians
 * compared, so that the other work on a shared machine does not decide
 * the figures; say them and check loose bounds.  */
static void
bench_one (const char *what, const char *text, size_t chunk, size_t rounds,
           const char *const *secrets)
{
  char *copy = xmalloc (chunk);
  double *t[4];
  for (int k = 0; k < 4; k++)
    t[k] = xmalloc (rounds * sizeof *t[k]);
  struct mask *m = make_mask (secrets);
  struct buf out = BUF_INIT;
  struct capture_limits l = capture_limits_for_result (UINT64_MAX);
  struct capture *plain = capture_new (&l, -1);
  struct capture *masked = capture_new (&l, -1);
  struct cr_error *err = NULL;
  for (size_t i = 0; secrets[i] != NULL; i++)
    capture_add_secret (masked, secrets[i], strlen (secrets[i]), &err);
  for (size_t r = 0; r < rounds; r++)
    {
      double t0 = now_s ();
      memcpy (copy, text, chunk);
      __asm__ volatile("" : : "r"(copy) : "memory");
      double t1 = now_s ();
      out.len = 0;
      mask_feed (m, text, chunk, &out);
      double t2 = now_s ();
      capture_feed (plain, text, chunk);
      double t3 = now_s ();
      capture_feed (masked, text, chunk);
      double t4 = now_s ();
      t[0][r] = t1 - t0;
      t[1][r] = t2 - t1;
      t[2][r] = t3 - t2;
      t[3][r] = t4 - t3;
    }
  double t_copy = median (t[0], rounds), t_mask = median (t[1], rounds);
  double t_plain = median (t[2], rounds), t_capmask = median (t[3], rounds);
  double mib = (double) chunk / (1024.0 * 1024.0);
  print_message ("# %s: memcpy %.0f MiB/s, mask %.0f MiB/s (%.1fx memcpy's "
                 "time); capture %.0f MiB/s plain, %.0f MiB/s with two "
                 "secrets (%.2f)\n",
                 what, mib / t_copy, mib / t_mask, t_mask / t_copy,
                 mib / t_plain, mib / t_capmask, t_plain / t_capmask);
#ifndef CRUCIBLE_SANITIZED
  /* Loose enough for any machine this runs on (memcpy of a buffer that
   * stays in cache is very fast); the figures are in the log.  */
  assert_true (t_mask < 40 * t_copy);
  assert_true (mib / t_capmask > 500);
#endif
  capture_free (plain);
  capture_free (masked);
  buf_free (&out);
  mask_free (m);
  for (int k = 0; k < 4; k++)
    free (t[k]);
  free (copy);
}

/* Throughput on 256 MiB in 128 KiB reads (the supervisor's), with the
 * proxy credential and a token: on text where the credential's first byte
 * is common but its opening pair is not, and on random hex, where the
 * pair comes every 256 bytes.  */
static void
test_bench_against_memcpy (void **state)
{
  const size_t chunk = (size_t) 128 * 1024, rounds = 2048;
  const char *secrets[] = { "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
                            "ghp_16C7e42F292c6912E7710c838347Ae178B4a", NULL };
  char *text = xmalloc (chunk);
  for (size_t i = 0; i < chunk; i++)
    text[i] = i % 80 == 79 ? '\n' : "0123456789abcdef xyz=,.-"[(i * 7) % 24];
  memcpy (text + 1000, secrets[0], 32);
  bench_one ("text", text, chunk, rounds, secrets);
  srand (14);
  for (size_t i = 0; i < chunk; i++)
    text[i] = i % 80 == 79 ? '\n' : "0123456789abcdef"[rand () % 16];
  memcpy (text + 1000, secrets[0], 32);
  bench_one ("hex", text, chunk, rounds, secrets);
  free (text);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_every_split),
    cmocka_unit_test (test_shared_prefixes),
    cmocka_unit_test (test_substring),
    cmocka_unit_test (test_overlaps),
    cmocka_unit_test (test_secret_at_end),
    cmocka_unit_test (test_flush_mid_secret),
    cmocka_unit_test (test_random_streams),
    cmocka_unit_test (test_binary_secrets),
    cmocka_unit_test (test_limits),
    cmocka_unit_test (test_capture_split_inside_secret),
    cmocka_unit_test (test_capture_spool_masked),
    cmocka_unit_test (test_capture_lines),
    cmocka_unit_test (test_capture_ceiling_mid_secret),
    cmocka_unit_test (test_result_cuts_masked),
    cmocka_unit_test (test_capture_no_secret_no_copy),
    cmocka_unit_test (test_bench_against_memcpy),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
