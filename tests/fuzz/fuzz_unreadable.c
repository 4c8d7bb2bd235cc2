/* libFuzzer target for the unreadable-pattern grammar (broker/unreadable.c):
 * the input is a pattern, a NUL, and a relative path.  The grammar check
 * never fails to answer; a pattern it accepts matches exactly the paths a
 * plain recursive reading of the grammar (below: slow, and obviously
 * right) says it matches, and a refused pattern is refused for a reason
 * the grammar gives.  tests/fuzz/replay.c runs the same function over
 * tests/fuzz/corpus-unreadable without libFuzzer.  */
#include <config.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/unreadable.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The longest pattern or path tried: the reference is exponential.  */
#define REF_MAX 64

/* One component of pattern p (length pn) against text s (length sn),
 * '*' matching any run, by the textbook table: m[i][j] says whether the
 * first i pattern bytes match the first j text bytes.  */
static bool
ref_glob (const char *p, size_t pn, const char *s, size_t sn)
{
  bool m[REF_MAX + 1][REF_MAX + 1];
  memset (m, 0, sizeof m);
  m[0][0] = true;
  for (size_t i = 1; i <= pn; i++)
    for (size_t j = 0; j <= sn; j++)
      m[i][j] = p[i - 1] == '*'
                    ? m[i - 1][j] || (j > 0 && m[i][j - 1])
                    : j > 0 && m[i - 1][j - 1] && p[i - 1] == s[j - 1];
  return m[pn][sn];
}

/* The length of the first component of s.  */
static size_t
ref_comp (const char *s)
{
  return strcspn (s, "/");
}

/* Text split at '/': at most REF_MAX + 1 components.  */
struct ref_path
{
  const char *s[REF_MAX + 1];
  size_t n[REF_MAX + 1];
  size_t count;
};

static void
ref_split (const char *text, struct ref_path *out)
{
  out->count = 0;
  for (const char *p = text;;)
    {
      size_t len = ref_comp (p);
      out->s[out->count] = p;
      out->n[out->count++] = len;
      if (p[len] == '\0')
        return;
      p += len + 1;
    }
}

/* Whether pattern components from pi match path components from si,
 * "**" standing for zero or more whole ones.  */
static bool
ref_match_from (const struct ref_path *p, size_t pi, const struct ref_path *s,
                size_t si)
{
  if (pi == p->count)
    return si == s->count;
  if (p->n[pi] == 2 && p->s[pi][0] == '*' && p->s[pi][1] == '*')
    return ref_match_from (p, pi + 1, s, si)
           || (si < s->count && ref_match_from (p, pi, s, si + 1));
  return si < s->count && ref_glob (p->s[pi], p->n[pi], s->s[si], s->n[si])
         && ref_match_from (p, pi + 1, s, si + 1);
}

static bool
ref_match (const char *pattern, const char *rel)
{
  struct ref_path p, s;
  ref_split (pattern, &p);
  ref_split (rel, &s);
  return ref_match_from (&p, 0, &s, 0);
}

/* Whether rel is a plain relative path: no empty, "." or ".."
 * component.  */
static bool
plain_path (const char *rel)
{
  for (const char *p = rel;;)
    {
      size_t len = ref_comp (p);
      if (len == 0 || (len == 1 && p[0] == '.')
          || (len == 2 && p[0] == '.' && p[1] == '.'))
        return false;
      if (p[len] == '\0')
        return true;
      p += len + 1;
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const uint8_t *nul = memchr (data, '\0', size);
  size_t plen = nul != NULL ? (size_t) (nul - data) : size;
  size_t rlen = nul != NULL ? size - plen - 1 : 0;
  if (plen > REF_MAX || rlen > REF_MAX)
    return 0;
  char pattern[REF_MAX + 1], rel[REF_MAX + 1];
  memcpy (pattern, data, plen);
  pattern[plen] = '\0';
  memcpy (rel, nul != NULL ? nul + 1 : data, rlen);
  rel[rlen] = '\0';
  if (memchr (rel, '\0', rlen) != NULL)
    return 0;
  const char *why = unreadable_check (pattern);
  if (why != NULL)
    {
      if (*why == '\0')
        abort ();
      return 0;
    }
  /* An accepted pattern is a plain relative path, "**" at most once as a
   * whole component.  */
  if (pattern[0] == '/' || !plain_path (pattern))
    abort ();
  if (rlen == 0 || !plain_path (rel))
    return 0;
  if (unreadable_match (pattern, rel) != ref_match (pattern, rel))
    abort ();
  return 0;
}
