/* The question about an agent's call (a line the person typed is theirs
 * and is never asked about): what will run (the programs the reader
 * found), where, whether confinement applies, and for a call that asked to
 * be left running, that it will still be running after the turn ends.
 * Choices: allow once, or deny; Esc denies.  */
#ifndef CRUCIBLE_TUI_APPROVAL_H
#define CRUCIBLE_TUI_APPROVAL_H

#include <stdbool.h>

#include "core/rules.h"
#include "tui/panel.h"

/* What a question says besides its call, and where "allow from now on"
 * puts its rules.  Borrowed for as long as the panel is open.  */
struct approval_where
{
  const char *workspace; /* where it runs; the rules are for it */
  const char *home_file; /* where the rules are saved; NULL without HOME */
  bool confined;         /* confinement applies */
  struct rules *rules;   /* this session's rules, which the new ones join */
};

extern const struct panel_ops approval_panel_ops;

/* Open the question about the host's call (host->question), its first
 * choice selected.  */
struct panel approval_panel_new (const struct panel_host *host,
                                 const struct approval_where *where);

#endif
