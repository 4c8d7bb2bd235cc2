/* Reading UTF-8 strictly.  */
#include <config.h>

#include "lib/utf8.h"

#include <string.h>

#include "lib/buf.h"

/* Lead bytes of valid multibyte UTF-8 and the range allowed for the byte
 * after each (RFC 3629): the narrowed ranges exclude overlong forms,
 * surrogates (ED A0..BF) and code points above U+10FFFF.  */
static const struct utf8_lead
{
  unsigned char lead_min, lead_max, len, next_min, next_max;
} utf8_leads[] = {
  { 0xc2, 0xdf, 2, 0x80, 0xbf }, { 0xe0, 0xe0, 3, 0xa0, 0xbf },
  { 0xe1, 0xec, 3, 0x80, 0xbf }, { 0xed, 0xed, 3, 0x80, 0x9f },
  { 0xee, 0xef, 3, 0x80, 0xbf }, { 0xf0, 0xf0, 4, 0x90, 0xbf },
  { 0xf1, 0xf3, 4, 0x80, 0xbf }, { 0xf4, 0xf4, 4, 0x80, 0x8f },
};

size_t
utf8_char_len (const unsigned char *s, size_t len)
{
  if (s[0] < 0x80)
    return 1;
  for (size_t i = 0; i < sizeof utf8_leads / sizeof *utf8_leads; i++)
    {
      const struct utf8_lead *l = &utf8_leads[i];
      if (s[0] < l->lead_min || s[0] > l->lead_max)
        continue;
      if (len < l->len || s[1] < l->next_min || s[1] > l->next_max)
        return 0;
      for (size_t k = 2; k < l->len; k++)
        if ((s[k] & 0xc0) != 0x80)
          return 0;
      return l->len;
    }
  return 0;
}

void
utf8_sanitize (struct buf *out, const char *s, size_t len)
{
  const unsigned char *u = (const unsigned char *) s;
  size_t run = 0, i = 0;
  while (i < len)
    {
      size_t n = utf8_char_len (u + i, len - i);
      if (n > 0)
        {
          i += n;
          continue;
        }
      buf_append (out, s + run, i - run);
      buf_append (out, UTF8_REPLACEMENT, 3);
      run = ++i;
    }
  buf_append (out, s + run, len - run);
}

/* Whether the valid character at s (n bytes) is one a terminal acts on,
 * under flags.  */
static int
utf8_is_control (const unsigned char *s, size_t n, int flags)
{
  if (n == 2)
    return s[0] == 0xc2 && s[1] < 0xa0;
  if (n != 1)
    return 0;
  if (s[0] == '\t' || (s[0] == '\n' && (flags & UTF8_SHOW_NEWLINES)))
    return 0;
  return s[0] < 0x20 || s[0] == 0x7f;
}

void
utf8_show (struct buf *out, const char *s, size_t len, int flags)
{
  const unsigned char *u = (const unsigned char *) s;
  size_t run = 0, i = 0;
  buf_append (out, "", 0);
  while (i < len)
    {
      size_t n = utf8_char_len (u + i, len - i);
      if (n > 0 && !utf8_is_control (u + i, n, flags))
        {
          i += n;
          continue;
        }
      buf_append (out, s + run, i - run);
      if (n == 0)
        buf_append (out, UTF8_REPLACEMENT, 3), n = 1;
      else
        for (size_t k = 0; k < n; k++)
          buf_printf (out, "\\x%02x", u[i + k]);
      run = i += n;
    }
  buf_append (out, s + run, len - run);
}

char *
utf8_show_dup (const char *s, int flags)
{
  struct buf b = BUF_INIT;
  utf8_show (&b, s, strlen (s), flags);
  return buf_steal (&b, NULL);
}
