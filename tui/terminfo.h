/* Whether terminfo knows the terminal ($TERM), asked without taking the
 * screen: curses' newterm, when it fails, leaves what it made behind.
 * Kept apart because <term.h> defines names (lines, columns) as macros. */
#ifndef CRUCIBLE_TUI_TERMINFO_H
#define CRUCIBLE_TUI_TERMINFO_H

#include <stdbool.h>

bool terminfo_known (int fd);

#endif
