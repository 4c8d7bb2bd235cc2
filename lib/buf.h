/* A growable byte buffer, always NUL-terminated after its contents.  */
#ifndef CRUCIBLE_LIB_BUF_H
#define CRUCIBLE_LIB_BUF_H

#include <stddef.h>

struct buf
{
  char *data; /* owned; NULL until the first append */
  size_t len;
  size_t cap;
};

/* clang-format off */
#define BUF_INIT { NULL, 0, 0 }
/* clang-format on */

void buf_append (struct buf *b, const void *data, size_t len);
void buf_puts (struct buf *b, const char *s);
void buf_putc (struct buf *b, char c);
void buf_printf (struct buf *b, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Return the contents (never NULL) and leave the buffer empty; the caller
 * owns the returned string.  */
char *buf_steal (struct buf *b, size_t *len);
void buf_free (struct buf *b);

/* Write the 2 * n lowercase hexadecimal digits of the n bytes at bytes to
 * out, then a NUL: out holds 2 * n + 1.  */
void buf_hex (char *out, const void *bytes, size_t n);

/* Put len bytes at p into a ring of size bytes whose next byte goes at
 * *pos and which holds *len_held, dropping the oldest; size > 0.  */
void buf_ring_put (char *ring, size_t size, size_t *pos, size_t *len_held,
                   const char *p, size_t len);

#endif
