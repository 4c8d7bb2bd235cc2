/* What every front end (run, mcp, session, sandbox) does the same way: find
 * the workspace, open the journal, and choose the backend a command runs
 * under (from sandbox/registry.c): compatibility while confinement is off,
 * the one sandbox.backend selects while it is on, and none at all (a
 * refusal) when it is on and cannot be had.  */
#ifndef CRUCIBLE_TUI_FRONT_H
#define CRUCIBLE_TUI_FRONT_H

#include "core/config.h"
#include "core/journal.h"
#include "lib/error.h"
#include "sandbox/backend.h"
#include "sandbox/inspect.h"

/* The workspace: the current directory, which the command must be able to
 * enter and read.  The caller owns it.  */
char *front_workspace (struct cr_error **err);

/* The workspace a session opens in: DIR (the current directory when
 * NULL) made absolute, a directory that can be entered and read.  The
 * caller owns it.  */
char *front_workspace_dir (const char *dir, struct cr_error **err);

/* What follows a session's options, from argv[i]: at most one DIR (into
 * *dir), and an --agent, when given, that is not empty.  */
int front_session_operands (int argc, char **argv, int i, const char **dir,
                            const char *agent, struct cr_error **err);

/* Open this session's journal; when it cannot be opened, say so on
 * standard error once and return NULL (the session goes on, its facts
 * unrecorded).  */
struct journal *front_journal (void);

/* Apply cfg's retention to the ended sessions' files beside j (none when
 * j is NULL); what could not be removed is named on standard error once.  */
void front_journal_retain (const struct config *cfg, const struct journal *j);

/* The backend every command of this configuration runs under.  When
 * confinement is enabled and the backend cannot be used (not found, not
 * trusted, its probe failed), returns NULL with *refusal the reason in the
 * model's words (owned): nothing is ever run unconfined then.  */
struct sandbox_backend *front_backend (const struct config *cfg,
                                       char **refusal);

/* Whether b, from front_backend, runs cfg's commands under process
 * isolation: confinement enabled and the compatibility backend, which only
 * CRUCIBLE_ALLOW_PROCESS_ISOLATION makes front_backend give.  */
bool front_backend_process_isolation (const struct config *cfg,
                                      const struct sandbox_backend *b);

/* What inspection reports about the backend cfg selects for confined
 * commands (sandbox/registry.c), starting nothing.  */
void front_backend_info (const struct config *cfg,
                         struct inspect_backend_info *info);

#endif
