/* The "Still running" list (Ctrl+B at the prompt): where the box was, a
 * row for each command left running with its number, label, how long, how
 * many lines and how much; Enter shows one in the full view, x stops it
 * with no confirmation (the row goes once it has ended; the list closes
 * with its last row), and a stop that fails keeps the row selected with
 * "Stop failed" until x is pressed again.  */
#ifndef CRUCIBLE_TUI_TASKS_H
#define CRUCIBLE_TUI_TASKS_H

#include <termkey.h>

struct ui;
struct screen_lines;

/* The panel's lines for cols columns.  */
void tasks_lines (struct ui *ui, int cols, struct screen_lines *out);

/* A key while the list is open.  */
void tasks_key (struct ui *ui, TermKey *tk, const TermKeyKey *key);

#endif
