/* `crucible sandbox inspect [--json]`, `crucible --sandbox [--json]`,
 * `crucible sandbox enable` and `crucible sandbox disable`.  */
#ifndef CRUCIBLE_TUI_CMD_SANDBOX_H
#define CRUCIBLE_TUI_CMD_SANDBOX_H

#include "core/config.h"
#include "sandbox/inspect.h"
#include "sandbox/policy.h"

/* Exit statuses: every report variant (ready, refused, unavailable,
 * disabled) and a setting written exit 0; a report that could not be made,
 * or a setting that was not written (enable on a machine that cannot
 * enforce, disable under a project that requires confinement), exits 1; a
 * usage error exits 2.  */
#define SANDBOX_EXIT_OK 0
#define SANDBOX_EXIT_FAILED 1
#define SANDBOX_EXIT_USAGE 2

/* `crucible sandbox SUBCOMMAND ...` (argv[0] is "sandbox").  */
int cmd_sandbox (int argc, char **argv);

/* `crucible --sandbox [--json]` (argv[0] is "--sandbox"): the report.  */
int cmd_sandbox_report (int argc, char **argv);

/* Set sandbox.enabled in the home configuration for workspace, as
 * `crucible sandbox enable|disable` does: enabling only after checking that
 * confinement can be enforced here, disabling never under a project that
 * requires it.  *message (owned) is what the person is told either way.
 * Returns SANDBOX_EXIT_OK or SANDBOX_EXIT_FAILED.  */
int cmd_sandbox_set (bool enabled, const char *workspace, char **message);

#endif
