/* Cleaning and measuring text for the screen.  */
#include <config.h>

#include "tui/text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "lib/buf.h"
#include "lib/utf8.h"

size_t
text_char_len (const char *s, size_t len)
{
  size_t n = utf8_char_len ((const unsigned char *) s, len);
  return n == 0 ? 1 : n;
}

/* Skip an escape sequence starting at s[0] == ESC; returns its length.  */
static size_t
text_skip_escape (const char *s, size_t len)
{
  if (len < 2)
    return len;
  size_t i = 2;
  if (s[1] == '[')
    {
      while (i < len && !((unsigned char) s[i] >= 0x40 && s[i] != 0x7f))
        i++;
      return i < len ? i + 1 : len;
    }
  if (s[1] == ']' || s[1] == 'P' || s[1] == '_')
    {
      /* A string ends with BEL or ESC \.  */
      while (i < len && s[i] != '\a' && !(s[i] == 0x1b && i + 1 < len))
        i++;
      return i < len ? (s[i] == '\a' ? i + 1 : i + 2) : len;
    }
  return 2;
}

char *
text_clean (const char *s, size_t len, int keep_newlines)
{
  struct buf tmp = BUF_INIT, out = BUF_INIT;
  for (size_t i = 0; i < len;)
    {
      unsigned char c = (unsigned char) s[i];
      if (c == 0x1b)
        {
          i += text_skip_escape (s + i, len - i);
          continue;
        }
      if (c == '\t')
        buf_puts (&tmp, "    ");
      else if (c == '\n' && keep_newlines)
        buf_putc (&tmp, '\n');
      else if (c == '\r' && keep_newlines && i + 1 < len && s[i + 1] == '\n')
        ;
      else if (c < 0x20 || c == 0x7f)
        buf_putc (&tmp, ' ');
      else
        buf_putc (&tmp, (char) c);
      i++;
    }
  /* The shared sanitiser has the last word: invalid UTF-8 and the C1
   * controls (ESC and the C0 ones are gone by now).  */
  utf8_show (&out, tmp.data != NULL ? tmp.data : "", tmp.len,
             UTF8_SHOW_NEWLINES);
  buf_free (&tmp);
  return buf_steal (&out, NULL);
}

/* Columns of the character at s (its length in *n).  */
static int
text_char_width (const char *s, size_t len, size_t *n)
{
  mbstate_t st;
  wchar_t wc;
  memset (&st, 0, sizeof st);
  size_t r = mbrtowc (&wc, s, len, &st);
  if (r == (size_t) -1 || r == (size_t) -2 || r == 0)
    {
      *n = text_char_len (s, len);
      return 1;
    }
  *n = r;
  int w = wcwidth (wc);
  return w < 0 ? 1 : w;
}

int
text_width (const char *s, size_t len)
{
  int w = 0;
  for (size_t i = 0, n; i < len; i += n)
    w += text_char_width (s + i, len - i, &n);
  return w;
}

size_t
text_fit (const char *s, size_t len, int cols, int *used)
{
  int w = 0;
  size_t i = 0, n;
  while (i < len)
    {
      int cw = text_char_width (s + i, len - i, &n);
      if (w + cw > cols)
        break;
      w += cw;
      i += n;
    }
  if (used != NULL)
    *used = w;
  return i;
}

size_t
text_wrap_row (const char *p, size_t len, int width, size_t *advance)
{
  int used = 0;
  size_t n = text_fit (p, len, width, &used);
  if (n == 0 && len > 0)
    n = text_char_len (p, len);
  *advance = n;
  if (n >= len || p[n] == ' ')
    {
      if (n < len)
        *advance = n + 1;
      return n;
    }
  for (size_t i = n; i > 0; i--)
    if (p[i - 1] == ' ')
      {
        if (text_width (p, i - 1) * 2 < width)
          break;
        *advance = i;
        return i - 1;
      }
  return n;
}

/* n (1000 or more) in thousands, millions or billions: one decimal under
 * ten ("3.1 kB"), none from ten on ("48 kB").  */
static void
text_scaled (char *out, size_t size, uint64_t n, const char *k, const char *m,
             const char *g)
{
  double v = (double) n / 1e3;
  const char *unit = k;
  if (v >= 999.5)
    v /= 1e3, unit = m;
  if (v >= 999.5)
    v /= 1e3, unit = g;
  if (v < 9.95)
    snprintf (out, size, "%.1f%s", v, unit);
  else
    snprintf (out, size, "%.0f%s", v, unit);
}

const char *
text_bytes (uint64_t n, int slot)
{
  static char out[2][32];
  char *o = out[slot & 1];
  if (n < 1000)
    snprintf (o, sizeof out[0], "%" PRIu64 " B", n);
  else
    text_scaled (o, sizeof out[0], n, " kB", " MB", " GB");
  return o;
}

void
text_short_count (char *out, size_t size, uint64_t n)
{
  if (n < 1000)
    snprintf (out, size, "%" PRIu64, n);
  else
    text_scaled (out, size, n, "k", "M", "G");
}

void
text_duration (char *out, size_t size, uint64_t ms)
{
  uint64_t s = ms / 1000;
  if (s < 60)
    snprintf (out, size, "%" PRIu64 "s", s);
  else if (s < 3600)
    snprintf (out, size, "%" PRIu64 "m %02" PRIu64 "s", s / 60, s % 60);
  else
    snprintf (out, size, "%" PRIu64 "h %02" PRIu64 "m", s / 3600,
              (s / 60) % 60);
}
