/* The live sample: a command's last few rows as a terminal would show
 * them, through a small libvterm screen (a carriage-return progress bar
 * stays one row, colours and wide characters are kept).
 *
 * It parses only what it will draw: bytes wait in a bounded buffer until a
 * frame wants them, and when more arrived than the sample could ever show
 * the older ones are dropped unparsed (those rows are skipped; the count
 * row says how many lines there were).  */
#ifndef CRUCIBLE_TUI_SAMPLE_H
#define CRUCIBLE_TUI_SAMPLE_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include <vterm.h>

/* Rows the sample has at most.  */
#define SAMPLE_ROWS 5

/* The narrowest screen libvterm is given, whatever the window: a wide
 * character written into a one-column libvterm (0.1.4) writes through a null
 * pointer, so a window resized down to a few columns during output would
 * take the session with it.  Columns the window lacks are not drawn.  */
#define SAMPLE_MIN_COLS 2

/* Bytes kept waiting for the next frame: the last rows of output fit in
 * far less, and libvterm parses this in about a millisecond.  */
#define SAMPLE_PENDING_MAX ((size_t) 32 * 1024)

struct sample;

struct sample *sample_new (int cols);
void sample_free (struct sample *s);

/* Bytes that arrived; nothing is parsed yet.  */
void sample_feed (struct sample *s, const char *bytes, size_t len);

/* Bytes were dropped before the next feed (the feed reads what a capture
 * still holds, and it held no more): the screen starts again at the next
 * line, as when the ring overflows.  */
void sample_drop (struct sample *s);

/* Parse what waits (at most SAMPLE_PENDING_MAX bytes; of plain text, only
 * the last lines the screen can show).  Returns whether the screen
 * changed.  */
bool sample_flush (struct sample *s);

/* Follow a change of width.  */
void sample_resize (struct sample *s, int cols);

/* Rows that have something in them, from the top (0 before any output).  */
int sample_rows_used (struct sample *s);

/* Draw the last rows of the used ones at y, x (at most cols columns).  */
void sample_draw (struct sample *s, WINDOW *win, int y, int x, int rows,
                  int cols);

/* Draw one libvterm cell at y, x with its colours and attributes; returns
 * its width in columns (1 or 2).  */
int sample_put_cell (WINDOW *win, int y, int x, const VTermScreenCell *cell);

#endif
