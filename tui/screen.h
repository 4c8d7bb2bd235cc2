/* The screen's layout, bottom up: the status row, the box (or the panel
 * that takes its place: the list, a question, /sandbox), the running turn
 * (each call line, its sample, its count row, then the running row), and
 * the transcript in what is left.  In a short window the samples give up
 * their rows first; the call lines, the running row and the box keep
 * theirs.  One frame draws everything and calls doupdate once.  */
#ifndef CRUCIBLE_TUI_SCREEN_H
#define CRUCIBLE_TUI_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/theme.h"

struct pager;
struct prompt;
struct transcript;
struct ui_cmd;

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

/* What one frame shows, as the session holds it (all borrowed).  */
struct screen_view
{
  struct transcript *transcript;
  struct prompt *prompt;
  const char *hint;    /* a passing line over the status row, or NULL */
  bool full_access;    /* the mode the status row names */
  size_t left_running; /* commands left running, for the status row */
  bool busy;           /* a turn runs: its commands and the running row */
  uint64_t turn_started_ms;
  uint64_t turn_bytes;        /* what the turn's commands printed */
  struct ui_cmd *cmds;        /* every command, newest first */
  struct pager *pager;        /* the full view, which takes the whole screen */
  struct screen_lines *panel; /* the open panel's lines, or NULL */
  bool parse; /* the full view may parse more of its output (not on a key
               * frame: the parse is the frame tick's) */
};

/* Draw a frame.  Returns whether the full view has more to parse, so that
 * another frame is wanted (false when v->parse is not set).  */
bool screen_draw (const struct screen_view *v);

/* The count row of a command: "41 lines · 3.1 kB · ctrl+b …".  Owned by
 * the caller.  */
char *screen_count_row (const struct ui_cmd *c);

#endif
