/* The transcript: what the session has said, oldest first, drawn above the
 * box and scrollable back (PgUp/PgDn, the mouse wheel).  Lines wrap at the
 * window's width; an ending line instead gives up the command's text
 * first, keeping how it ended.  */
#ifndef CRUCIBLE_TUI_TRANSCRIPT_H
#define CRUCIBLE_TUI_TRANSCRIPT_H

#include <curses.h>
#include <stddef.h>

#include "tui/theme.h"

/* Lines kept; older ones are dropped.  */
#define TRANSCRIPT_MAX_LINES 20000

enum transcript_kind
{
  TRANSCRIPT_PLAIN,  /* wraps, at a space where one leaves the row half full */
  TRANSCRIPT_ENDING, /* "✗ LABEL ended on its own · …": one row */
};

struct transcript_line
{
  char *text; /* cleaned, owned */
  enum theme_role role;
  enum transcript_kind kind;
  int indent; /* columns before each wrapped row after the first */
};

struct transcript
{
  struct transcript_line *lines;
  size_t n, cap;
  int scroll; /* rows scrolled back from the bottom */
};

void transcript_init (struct transcript *t);
void transcript_clear (struct transcript *t);

/* Add text (several lines when it holds newlines), cleaned first.  */
void transcript_add (struct transcript *t, enum theme_role role,
                     enum transcript_kind kind, int indent, const char *text,
                     size_t len);

/* Scroll back (delta > 0) or forward; clamped when drawn.  */
void transcript_scroll (struct transcript *t, int delta);

/* Draw the rows that fit in rows rows from y, bottom-aligned.  */
void transcript_draw (struct transcript *t, WINDOW *win, int y, int rows,
                      int cols);

/* An ending line fit to cols: the label is shortened with "…" so that
 * " ended on its own · …" stays whole.  Owned by the caller.  */
char *transcript_fit_ending (const char *line, int cols);

#endif
