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

/* Keep newlines (for utf8_show).  */
#define UTF8_SHOW_NEWLINES 1

/* Append s to out fit for a person's terminal, the one sanitiser every
 * front end uses for text from a peer or a file (an agent, an MCP client,
 * a configuration file, a command line): invalid UTF-8 becomes U+FFFD as
 * utf8_sanitize does, and every control a terminal would act on -- C0
 * (ESC and BEL among them), DEL and C1 (U+0080..U+009F) -- is shown as
 * \xHH (a C1 control as its two bytes), so nothing a peer sends can move
 * the cursor, retitle the window or clear the screen.  Tabs are kept, and
 * newlines when flags has UTF8_SHOW_NEWLINES.  */
void utf8_show (struct buf *out, const char *s, size_t len, int flags);

/* utf8_show of the NUL-terminated s into a fresh string the caller owns.  */
char *utf8_show_dup (const char *s, int flags);

#endif
