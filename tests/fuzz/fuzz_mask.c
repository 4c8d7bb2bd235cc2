/* libFuzzer target for the masker (core/mask.c) and its place in the
 * capture (core/capture.c).  The input gives the secrets, how the stream is
 * split into reads and where it is cut, and the stream:
 *
 *   byte 0       alphabet: below 0x80, every secret and stream byte b is
 *                read as 'a' + b % (1 + byte0 % 8), so that occurrences,
 *                overlaps and shared prefixes are common; else raw bytes
 *   byte 1       below 0x80: n = 1 + byte1 % 8 secrets follow, each as a
 *                length byte (1 + b % 64) and that many bytes; from 0x80:
 *                n = 1 + byte1 % 33 (a command's 32 credentials and its
 *                proxy credential), the first as above and each later one
 *                a shape byte S and, for J = S / 4 % i (an earlier one):
 *                  S % 4 == 0  fresh, as above
 *                  S % 4 == 1  a prefix of J: a length byte (1 + b % |J|)
 *                  S % 4 == 2  J extended: J, then a fresh tail as above
 *                  S % 4 == 3  overlapping J: a length byte k (1 + b % |J|)
 *                              and J's last k bytes, then a fresh tail
 *                so several values at once, values that are prefixes of
 *                each other and values that overlap are always there
 *   a byte P     then P plan bytes: each is one read of 1 + b % 64 bytes,
 *                and a cut (flush) after it when its high bit is set; the
 *                plan repeats until the stream is used up
 *   two bytes    the capture's head and tail sizes (1 + b % 64 each) and
 *   one byte     its ceiling (the stream's length less b % 32)
 *   the rest     the stream
 *
 * Checks: the output has the input's length; exactly the bytes that
 * cannot change any more are released after each read; the output is the
 * reference's (tests/fuzz/mask_ref.h: every occurrence masked, and at each
 * cut the held bytes), so every byte outside an occurrence or a cut's held
 * bytes is unchanged; no secret without '*' in it survives; the capture's
 * released bytes, spool-free head and tail and line count agree with the
 * reference.  tests/fuzz/replay.c runs the same function over
 * tests/fuzz/corpus-mask without libFuzzer.  */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/capture.h"
#include "core/mask.h"
#include "lib/buf.h"
#include "lib/xalloc.h"
#include "tests/fuzz/mask_ref.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Secrets one input gives at most: 32 credentials and a proxy's.  */
#define FUZZ_MASK_MAX 33

/* The input, taken apart.  */
struct fuzz_mask_case
{
  unsigned char secrets[FUZZ_MASK_MAX][2 * 64];
  struct mask_ref_secret refs[FUZZ_MASK_MAX];
  size_t n;
  const uint8_t *plan;
  size_t n_plan;
  size_t head, tail, ceiling_less;
  unsigned char *stream;
  size_t len;
};

/* Read one byte of the input, or 0 past its end.  */
static uint8_t
fuzz_mask_byte (const uint8_t **p, const uint8_t *end)
{
  return *p < end ? *(*p)++ : 0;
}

/* Append a fresh run (a length byte, then that many bytes in the
 * alphabet) to secret i, which holds len bytes; returns the new length.  */
static size_t
fuzz_mask_fresh (struct fuzz_mask_case *c, size_t i, size_t len, unsigned mod,
                 const uint8_t **p, const uint8_t *end)
{
  size_t more = 1 + fuzz_mask_byte (p, end) % 64;
  for (size_t j = 0; j < more; j++)
    {
      uint8_t b = fuzz_mask_byte (p, end);
      c->secrets[i][len + j] = mod ? (unsigned char) ('a' + b % mod) : b;
    }
  return len + more;
}

/* Secret i made from an earlier one by its shape byte (see the top).  */
static size_t
fuzz_mask_derived (struct fuzz_mask_case *c, size_t i, unsigned mod,
                   const uint8_t **p, const uint8_t *end)
{
  uint8_t shape = fuzz_mask_byte (p, end);
  const struct mask_ref_secret *j = &c->refs[shape / 4 % i];
  /* An extension of an extension could pass the row: keep j's first 64.  */
  size_t jl = j->len < 64 ? j->len : 64, k;
  switch (shape % 4)
    {
    case 1:
      k = 1 + fuzz_mask_byte (p, end) % jl;
      memcpy (c->secrets[i], j->bytes, k);
      return k;
    case 2:
      memcpy (c->secrets[i], j->bytes, jl);
      return fuzz_mask_fresh (c, i, jl, mod, p, end);
    case 3:
      k = 1 + fuzz_mask_byte (p, end) % jl;
      memcpy (c->secrets[i], j->bytes + j->len - k, k);
      return fuzz_mask_fresh (c, i, k, mod, p, end);
    default:
      return fuzz_mask_fresh (c, i, 0, mod, p, end);
    }
}

/* Take the input apart; false when it is too short to hold a stream.  */
static bool
fuzz_mask_parse (const uint8_t *data, size_t size, struct fuzz_mask_case *c)
{
  const uint8_t *p = data, *end = data + size;
  uint8_t alpha = fuzz_mask_byte (&p, end);
  unsigned mod = alpha < 0x80 ? 1u + alpha % 8u : 0;
  uint8_t count = fuzz_mask_byte (&p, end);
  bool derived = count >= 0x80;
  c->n = derived ? 1 + count % FUZZ_MASK_MAX : 1 + count % 8;
  for (size_t i = 0; i < c->n; i++)
    {
      size_t len = derived && i > 0 ? fuzz_mask_derived (c, i, mod, &p, end)
                                    : fuzz_mask_fresh (c, i, 0, mod, &p, end);
      c->refs[i] = (struct mask_ref_secret){ c->secrets[i], len };
    }
  c->n_plan = fuzz_mask_byte (&p, end);
  c->plan = p;
  if ((size_t) (end - p) < c->n_plan)
    return false;
  p += c->n_plan;
  c->head = 1 + fuzz_mask_byte (&p, end) % 64;
  c->tail = 1 + fuzz_mask_byte (&p, end) % 64;
  c->ceiling_less = fuzz_mask_byte (&p, end) % 32;
  c->len = (size_t) (end - p);
  c->stream = xmalloc (c->len + 1);
  for (size_t i = 0; i < c->len; i++)
    c->stream[i] = mod ? (unsigned char) ('a' + p[i] % mod) : p[i];
  return true;
}

/* The size of read k and whether a cut follows it.  */
static size_t
fuzz_mask_read (const struct fuzz_mask_case *c, size_t k, bool *cut)
{
  uint8_t b = c->n_plan ? c->plan[k % c->n_plan] : 0x3f;
  *cut = (b & 0x80) != 0;
  return 1 + (b & 0x7f) % 64u;
}

/* Whether a secret with no '*' in it occurs in out.  */
static bool
fuzz_mask_survives (const struct fuzz_mask_case *c, const unsigned char *out,
                    size_t len)
{
  if (len == 0 || out == NULL)
    return false;
  for (size_t i = 0; i < c->n; i++)
    if (memchr (c->refs[i].bytes, '*', c->refs[i].len) == NULL
        && memmem (out, len, c->refs[i].bytes, c->refs[i].len) != NULL)
      return true;
  return false;
}

/* Run the masker over the case; abort on any difference.  Returns the cut
 * positions (the last is the stream's end).  */
static size_t
fuzz_mask_run (const struct fuzz_mask_case *c, size_t *cuts)
{
  struct mask *m = mask_new ();
  for (size_t i = 0; i < c->n; i++)
    if (mask_add (m, c->refs[i].bytes, c->refs[i].len, NULL) < 0)
      abort ();
  struct buf out = BUF_INIT;
  size_t at = 0, n_cuts = 0, last_cut = 0;
  for (size_t k = 0; at < c->len; k++)
    {
      bool cut;
      size_t piece = fuzz_mask_read (c, k, &cut);
      if (piece > c->len - at)
        piece = c->len - at;
      mask_feed (m, c->stream + at, piece, &out);
      at += piece;
      size_t hold = mask_ref_hold (c->refs, c->n, c->stream, at);
      size_t want = at - hold > last_cut ? at - hold : last_cut;
      if (out.len != want || mask_held (m) != at - want)
        abort ();
      if (cut && at < c->len)
        {
          mask_flush (m, &out);
          cuts[n_cuts++] = last_cut = at;
          if (out.len != at)
            abort ();
        }
    }
  mask_flush (m, &out);
  cuts[n_cuts++] = c->len;
  unsigned char *want = xmalloc (c->len + 1);
  mask_ref_apply (c->refs, c->n, c->stream, c->len, cuts, n_cuts, want);
  if (out.len != c->len || memcmp (out.data ? out.data : "", want, c->len) != 0
      || fuzz_mask_survives (c, (unsigned char *) out.data, out.len))
    abort ();
  free (want);
  buf_free (&out);
  mask_free (m);
  return n_cuts;
}

/* Check the capture's head and tail are the masked stream's, up to its
 * ceiling.  */
static void
fuzz_mask_check_retained (const struct fuzz_mask_case *c,
                          const struct capture *cap, const unsigned char *want,
                          uint64_t kept)
{
  const char *h, *t;
  size_t hl, tl;
  uint64_t omitted;
  capture_retained (cap, &h, &hl, &t, &tl, &omitted);
  if (hl + tl + omitted != kept || memcmp (h, want, hl) != 0
      || memcmp (t, want + kept - tl, tl) != 0)
    abort ();
  if (hl < c->head && hl != kept)
    abort ();
}

/* Feed the same reads and cuts (the last of which is the end) through a
 * capture with the secrets.  */
static void
fuzz_mask_capture (const struct fuzz_mask_case *c, const size_t *cuts,
                   size_t n_cuts)
{
  uint64_t ceiling = c->len > c->ceiling_less ? c->len - c->ceiling_less : 0;
  struct capture_limits l = { .head_bytes = c->head,
                              .tail_bytes = c->tail,
                              .ceiling_bytes = ceiling };
  struct capture *cap = capture_new (&l, -1);
  for (size_t i = 0; i < c->n; i++)
    if (capture_add_secret (cap, c->refs[i].bytes, c->refs[i].len, NULL) < 0)
      abort ();
  struct buf seen = BUF_INIT;
  const char *r;
  size_t rl, at = 0, next_cut = 0;
  for (size_t k = 0; at < c->len; k++)
    {
      bool cut;
      size_t piece = fuzz_mask_read (c, k, &cut);
      if (piece > c->len - at)
        piece = c->len - at;
      capture_feed (cap, c->stream + at, piece);
      at += piece;
      capture_released (cap, &r, &rl);
      buf_append (&seen, r, rl);
      if (next_cut + 1 < n_cuts && cuts[next_cut] == at)
        {
          capture_cut (cap);
          capture_released (cap, &r, &rl);
          buf_append (&seen, r, rl);
          next_cut++;
        }
    }
  capture_cut (cap);
  capture_released (cap, &r, &rl);
  buf_append (&seen, r, rl);
  unsigned char *want = xmalloc (c->len + 1);
  mask_ref_apply (c->refs, c->n, c->stream, c->len, cuts, n_cuts, want);
  if (seen.len != c->len
      || memcmp (seen.data ? seen.data : "", want, c->len) != 0
      || capture_total_bytes (cap) != c->len
      || capture_over_ceiling (cap) != (c->len > ceiling))
    abort ();
  fuzz_mask_check_retained (c, cap, want, c->len < ceiling ? c->len : ceiling);
  uint64_t lines = 0;
  for (size_t i = 0; i < c->len; i++)
    lines += want[i] == '\n';
  if (c->len > 0 && want[c->len - 1] != '\n')
    lines++;
  if (capture_lines (cap) != lines)
    abort ();
  free (want);
  buf_free (&seen);
  capture_free (cap);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_mask_case c;
  if (!fuzz_mask_parse (data, size, &c))
    return 0;
  /* One cut per read at most, and the end.  */
  size_t *cuts = xmalloc ((c.len + 2) * sizeof *cuts);
  size_t n_cuts = fuzz_mask_run (&c, cuts);
  fuzz_mask_capture (&c, cuts, n_cuts);
  free (cuts);
  free (c.stream);
  return 0;
}
