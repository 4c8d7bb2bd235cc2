/* The masker's meaning, written the slow and obvious way, for the unit
 * tests (tests/unit/test_mask.c) and the fuzz target (fuzz_mask.c) to hold
 * core/mask.c to: every occurrence of every secret is masked, and at each
 * flush the longest suffix so far that is a proper prefix of a secret.  */
#ifndef CRUCIBLE_TESTS_MASK_REF_H
#define CRUCIBLE_TESTS_MASK_REF_H

#include <stddef.h>
#include <string.h>

struct mask_ref_secret
{
  const unsigned char *bytes;
  size_t len;
};

/* Bytes before position at of text that could still become part of an
 * occurrence: the longest suffix of text[0..at) that is a proper prefix of
 * a secret.  */
static inline size_t
mask_ref_hold (const struct mask_ref_secret *s, size_t n,
               const unsigned char *text, size_t at)
{
  size_t best = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t k = s[i].len - 1; k > best && s[i].len > 0; k--)
      if (k <= at && memcmp (text + at - k, s[i].bytes, k) == 0)
        {
          best = k;
          break;
        }
  return best;
}

/* The masked stream: text with every occurrence and every flush's held
 * bytes (flushes[] are positions, any order) turned to '*'.  */
static inline void
mask_ref_apply (const struct mask_ref_secret *s, size_t n,
                const unsigned char *text, size_t len, const size_t *flushes,
                size_t n_flushes, unsigned char *out)
{
  memcpy (out, text, len);
  for (size_t i = 0; i < n; i++)
    for (size_t at = 0; s[i].len > 0 && at + s[i].len <= len; at++)
      if (memcmp (text + at, s[i].bytes, s[i].len) == 0)
        memset (out + at, '*', s[i].len);
  for (size_t f = 0; f < n_flushes; f++)
    {
      size_t h = mask_ref_hold (s, n, text, flushes[f]);
      memset (out + flushes[f] - h, '*', h);
    }
}

#endif
