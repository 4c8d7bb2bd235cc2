/* The "Still running" list (Ctrl+B at the prompt): where the box was, a
 * row for each command left running with its number, label, how long, how
 * many lines and how much; Enter shows one in the full view, x stops it
 * with no confirmation (the row goes once it has ended; the list closes
 * with its last row), and a stop that fails keeps the row selected with
 * "Stop failed" until x is pressed again.  */
#ifndef CRUCIBLE_TUI_TASKS_H
#define CRUCIBLE_TUI_TASKS_H

#include "tui/panel.h"

extern const struct panel_ops tasks_panel_ops;

/* Open the list, its first row selected.  host is borrowed for as long as
 * the panel is open.  */
struct panel tasks_panel_new (const struct panel_host *host);

#endif
