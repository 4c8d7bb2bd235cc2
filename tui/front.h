/* What every front end (run, mcp) does the same way: find the workspace,
 * open the journal, and refuse to run unconfined while confinement is on.  */
#ifndef CRUCIBLE_TUI_FRONT_H
#define CRUCIBLE_TUI_FRONT_H

#include "core/config.h"
#include "core/journal.h"
#include "lib/error.h"

/* Why no command runs while confinement is enabled in this build, in the
 * model's words (the reason of a "[refused: …]").  */
#define FRONT_NO_BACKEND                                                       \
  "confinement is enabled (sandbox.enabled), but no enforcing sandbox "        \
  "backend is available in this build of crucible; commands are never run "    \
  "unconfined while it is enabled"

/* The workspace: the current directory, which the command must be able to
 * enter and read.  The caller owns it.  */
char *front_workspace (struct cr_error **err);

/* Open this session's journal; when it cannot be, say so on standard error
 * once and return NULL (the session goes on, its facts unrecorded).  */
struct journal *front_journal (void);

/* The reason no command may run under cfg, or NULL when they may.  */
const char *front_refusal (const struct config *cfg);

#endif
