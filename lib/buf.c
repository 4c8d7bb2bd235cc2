/* Growable byte buffers.  */
#include <config.h>

#include "lib/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

/* Make room for len more bytes and the terminating NUL.  */
static void
buf_reserve (struct buf *b, size_t len)
{
  size_t need = b->len + len + 1;
  if (need <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need)
    cap *= 2;
  b->data = xrealloc (b->data, cap);
  b->cap = cap;
}

void
buf_append (struct buf *b, const void *data, size_t len)
{
  buf_reserve (b, len);
  if (len > 0)
    memcpy (b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
}

void
buf_puts (struct buf *b, const char *s)
{
  buf_append (b, s, strlen (s));
}

void
buf_putc (struct buf *b, char c)
{
  buf_append (b, &c, 1);
}

void
buf_printf (struct buf *b, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *s = xvasprintf (fmt, ap);
  va_end (ap);
  buf_puts (b, s);
  free (s);
}

char *
buf_steal (struct buf *b, size_t *len)
{
  char *data = b->data != NULL ? b->data : xcalloc (1, 1);
  if (len != NULL)
    *len = b->len;
  b->data = NULL;
  b->len = b->cap = 0;
  return data;
}

void
buf_free (struct buf *b)
{
  free (b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

void
buf_ring_put (char *ring, size_t size, size_t *pos, size_t *len_held,
              const char *p, size_t len)
{
  if (len >= size)
    {
      memcpy (ring, p + len - size, size);
      *pos = 0;
      *len_held = size;
      return;
    }
  size_t first = size - *pos < len ? size - *pos : len;
  memcpy (ring + *pos, p, first);
  memcpy (ring, p + first, len - first);
  *pos = (*pos + len) % size;
  *len_held = *len_held + len < size ? *len_held + len : size;
}

void
buf_hex (char *out, const void *bytes, size_t n)
{
  static const char digits[] = "0123456789abcdef";
  const unsigned char *b = bytes;
  for (size_t i = 0; i < n; i++)
    {
      out[2 * i] = digits[b[i] >> 4];
      out[2 * i + 1] = digits[b[i] & 0xf];
    }
  out[2 * n] = '\0';
}
