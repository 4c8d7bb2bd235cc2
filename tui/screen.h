/* The screen's layout, bottom up: the status row, the box (or the panel
 * that takes its place: the list, a question, /sandbox), the running turn
 * (each call line, its sample, its count row, then the running row), and
 * the transcript in what is left.  In a short window the samples give up
 * their rows first; the call lines, the running row and the box keep
 * theirs.  One frame draws everything and calls doupdate once.  */
#ifndef CRUCIBLE_TUI_SCREEN_H
#define CRUCIBLE_TUI_SCREEN_H

#include <stddef.h>

#include "tui/theme.h"

struct ui;

/* Lines a panel draws where the box was.  */
struct screen_lines
{
  struct screen_line
  {
    char *text;
    enum theme_role role;
  } * v;
  size_t n;
};

void screen_lines_add (struct screen_lines *l, enum theme_role role,
                       const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void screen_lines_free (struct screen_lines *l);

/* A row of cols columns: left, then right pushed to the right edge; left
 * gives up columns first.  Owned by the caller.  */
char *screen_row_split (const char *left, const char *right, int cols);

/* The rule drawn above the box and the panels.  */
char *screen_rule (int cols);

/* Draw a frame.  */
void screen_draw (struct ui *ui);

/* The count row of a command: "41 lines · 3.1 kB · ctrl+b …".  Owned by
 * the caller.  */
struct ui_cmd;
char *screen_count_row (const struct ui_cmd *c);

#endif
