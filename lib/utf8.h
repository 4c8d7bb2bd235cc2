/* UTF-8 as RFC 3629 has it: no overlong forms, no surrogates, nothing past
 * U+10FFFF.  One reading of it for every text crucible hands on.  */
#ifndef CRUCIBLE_LIB_UTF8_H
#define CRUCIBLE_LIB_UTF8_H

#include <stddef.h>

struct buf;

/* U+FFFD, which stands for each byte that is not part of a character.  */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Length of the valid character at s (len > 0 bytes available), or 0 when
 * the bytes there are not one.  */
size_t utf8_char_len (const unsigned char *s, size_t len);

/* Append s to out with each byte outside a valid character made U+FFFD
 * (one replacement per byte, so a truncated three-byte character becomes
 * two).  */
void utf8_sanitize (struct buf *out, const char *s, size_t len);

#endif
