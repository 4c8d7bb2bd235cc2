/* The question about an agent's call (a line the person typed is theirs
 * and is never asked about): what will run (the programs the reader
 * found), where, whether confinement applies, and for a call that asked to
 * be left running, that it will still be running after the turn ends.
 * Choices: allow once, or deny; Esc denies.  */
#ifndef CRUCIBLE_TUI_APPROVAL_H
#define CRUCIBLE_TUI_APPROVAL_H

#include <termkey.h>

struct ui;
struct screen_lines;

void approval_lines (struct ui *ui, int cols, struct screen_lines *out);
void approval_key (struct ui *ui, TermKey *tk, const TermKeyKey *key);

#endif
