/* `crucible sandbox inspect [--json]`, `crucible --sandbox [--json]`,
 * `crucible sandbox enable` and `crucible sandbox disable`.  */
#ifndef CRUCIBLE_TUI_CMD_SANDBOX_H
#define CRUCIBLE_TUI_CMD_SANDBOX_H

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

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

/* Set sandbox.enabled in the home configuration file home_file, keeping
 * every other key and value of it: read, parsed, rewritten and checked to
 * load, then written to a temporary file beside it (mode 0600) and renamed
 * over it.  A symlinked file is written at its target.  */
int cmd_sandbox_write_enabled (const char *home_file, bool enabled,
                               struct cr_error **err);

/* The new text of the home configuration from its parsed value (an
 * object, or NULL for a file that is missing or blank); owned.  */
typedef char *(*cmd_home_rewrite_fn) (yajl_val root, const void *data);

/* Rewrite the home configuration file home_file with rewrite, as
 * cmd_sandbox_write_enabled does: checked to load, written beside it
 * (0600) and renamed over it, a symlink written at its target.  */
int cmd_home_update (const char *home_file, cmd_home_rewrite_fn rewrite,
                     const void *data, struct cr_error **err);

/* Generate a value of a file that loaded into g, as it was.  */
void cmd_home_gen_value (yajl_gen g, yajl_val v);

/* Set sandbox.enabled in the home configuration for workspace, as
 * `crucible sandbox enable|disable` does: enabling only after checking that
 * confinement can be enforced here, disabling never under a project that
 * requires it.  *message (owned) is what the person is told either way.
 * Returns SANDBOX_EXIT_OK or SANDBOX_EXIT_FAILED.  */
int cmd_sandbox_set (bool enabled, const char *workspace, char **message);

#endif
