/* Colours: the roles the screen draws with (text, dim, accent, warning,
 * ...), each mapped for 256-, 16- and 8-colour terminals by a theme file in
 * themes/ (dark, the default; light; high-contrast), and the colours of
 * command output kept in the live sample.  NO_COLOR leaves only
 * attributes (bold, reverse, ...).  Call after initscr/newterm.  */
#ifndef CRUCIBLE_TUI_THEME_H
#define CRUCIBLE_TUI_THEME_H

#include <stdbool.h>

#include "lib/error.h"

enum theme_role
{
  THEME_TEXT,
  THEME_DIM,
  THEME_ACCENT,
  THEME_WARNING,
  THEME_ERROR,
  THEME_SUCCESS,
  THEME_BORDER,
  THEME_SELECTED,
  THEME_PROMPT,
  THEME_ROLE_COUNT
};

/* The theme every session starts with when none is configured.  */
#define THEME_DEFAULT "dark"

/* Load theme name (NULL: THEME_DEFAULT) from dir (NULL: $CRUCIBLE_THEME_DIR,
 * the installed themes, or the source tree of the build directory's own
 * binary) and set up the colour pairs for this terminal.  The default
 * theme found nowhere is the compiled-in one.  A theme that cannot be
 * found, read or parsed is an error naming the file and line; the caller
 * may then fall back with theme_load_default ().  */
int theme_load (const char *name, const char *dir, struct cr_error **err);

/* Set up the compiled-in default theme; it cannot fail.  */
void theme_load_default (void);

/* The curses attributes (pair included) of a role.  */
int theme_attr (enum theme_role role);

/* The curses attributes for a cell of command output: colours as ANSI
 * indexes (0-255, or -1 for the terminal's default), mapped down to what
 * the terminal has.  */
int theme_cell_attr (int fg, int bg);

/* How many colours the terminal was found to have (0 under NO_COLOR).  */
int theme_colors (void);

#endif
