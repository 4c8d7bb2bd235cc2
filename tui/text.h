/* Text as the screen draws it: cleaned of what a terminal would act on,
 * and measured in columns.  */
#ifndef CRUCIBLE_TUI_TEXT_H
#define CRUCIBLE_TUI_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* A copy of s[0..len) fit to draw: escape sequences removed, tabs made
 * spaces, other control characters (newlines too unless keep_newlines)
 * made U+FFFD-free visible spaces, invalid UTF-8 made U+FFFD.  Owned by
 * the caller.  */
char *text_clean (const char *s, size_t len, int keep_newlines);

/* Columns s[0..len) takes.  */
int text_width (const char *s, size_t len);

/* How many bytes of s[0..len) fit in cols columns; *used is their width
 * when not NULL.  */
size_t text_fit (const char *s, size_t len, int cols, int *used);

/* The next row of a wrapped line at width columns: how many bytes it
 * shows, and in *advance how many it takes (a space the row breaks at is
 * not carried to the next row).  A row breaks after the last space that
 * fits when that leaves it at least half full, so prose is not cut
 * mid-word; a word longer than that is cut where the row ends.  */
size_t text_wrap_row (const char *p, size_t len, int width, size_t *advance);

/* Length in bytes of the character at s (1 for a byte that is not one).  */
size_t text_char_len (const char *s, size_t len);

/* Bytes as the count row says them: "292 B", "3.1 kB", "12.4 MB".  The
 * returned string is static per slot (two slots, for one line).  */
const char *text_bytes (uint64_t n, int slot);

/* A count as the running row says it: "912", "1.2k", "3.4M".  */
void text_short_count (char *out, size_t size, uint64_t n);

/* A duration: "43s", "4m 12s", "1h 03m".  */
void text_duration (char *out, size_t size, uint64_t ms);

#endif
