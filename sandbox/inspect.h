/* The inspection report (spec, "Reading the report"): what backend a
 * command here would get, what it can hold, and what a command would run
 * under, for `crucible sandbox inspect` and `crucible --sandbox`, as text
 * or as one line of JSON.  Building it starts nothing and writes nothing:
 * the caller finds the backend without starting it (bwrap_locate and the
 * backend's claims) and hands the result in as an inspect_backend_info.
 *
 * The workspace root is the only path the text prints, and the JSON prints
 * none; a reason that arrives holding a path has it replaced by "<path>".
 * The exact layout and every string the spec does not quote are in
 * doc/strings.md, "The inspection report".  */
#ifndef CRUCIBLE_SANDBOX_INSPECT_H
#define CRUCIBLE_SANDBOX_INSPECT_H

#include <stdbool.h>

#include "lib/error.h"
#include "sandbox/backend.h"
#include "sandbox/policy.h"

/* The enforcing backend a command's preparation would look for, found
 * without starting it.  */
struct inspect_backend_info
{
  const char *id;         /* "linux-bubblewrap" */
  const char *provenance; /* "system" */
  char *build_digest;     /* "sha256:...", owned, or NULL */
  struct sandbox_claims claims;
  bool found;
  char *why_not_found; /* owned, or NULL; should name no path */
};

void inspect_backend_info_clear (struct inspect_backend_info *info);

enum inspect_status
{
  INSPECT_READY,       /* a command would run (confined, or disabled) */
  INSPECT_REFUSED,     /* the backend's matrix will not hold the policy */
  INSPECT_UNAVAILABLE, /* enabled, and no backend was found */
  INSPECT_FAILED       /* the report could not be made */
};

/* The report's word for a status ("ready").  */
const char *inspect_status_name (enum inspect_status s);

struct inspect_report;

/* Build the report for the policy in over backend (ignored, may be NULL,
 * when confinement is disabled: the compatibility backend is reported).  */
int inspect_build (const struct policy_input *in,
                   const struct inspect_backend_info *backend,
                   struct inspect_report **out, struct cr_error **err);
void inspect_report_free (struct inspect_report *r);

enum inspect_status inspect_report_status (const struct inspect_report *r);

/* The text report, newline-terminated; owned by the caller.  */
char *inspect_format_text (const struct inspect_report *r);

/* The JSON report: one line with its newline; owned by the caller.  */
char *inspect_format_json (const struct inspect_report *r);

/* The JSON line of a report that could not be made: status "failed" and
 * the stage that failed ("workspace", "configuration", "policy",
 * "backend"); the message itself, which may name a file, goes to standard
 * error instead.  Owned by the caller.  */
char *inspect_failed_json (const char *stage);

/* What the /sandbox panel's Dependencies tab shows, without parsing the
 * report: whether a backend is there, and if not why; whether its claims
 * hold the policy confinement would run under, and if not which features
 * it lacks.  Worked out for the confined policy even while confinement is
 * disabled, so the tab can say what enabling it would meet.  */
struct inspect_dependencies
{
  bool enabled;           /* sandbox.enabled in effect */
  const char *backend_id; /* static, or NULL when none was found */
  const char *provenance; /* static, or NULL */
  bool available;         /* a backend was found */
  char *why_unavailable;  /* owned, path-free, or NULL */
  char *build_digest;     /* owned, or NULL */
  struct sandbox_claims claims;
  bool holds_policy; /* the claims hold the confined policy */
  char *refusal;     /* owned: why not, by feature name, or NULL */
  bool missing[SANDBOX_FEATURE_COUNT]; /* required and not enforced */
};

int inspect_dependencies (struct inspect_dependencies *out,
                          const struct policy_input *in,
                          const struct inspect_backend_info *backend,
                          struct cr_error **err);
void inspect_dependencies_clear (struct inspect_dependencies *d);

/* One configured MCP server (mcpServers), as the report and the /sandbox
 * panel list it; the caller reads the configuration, which sandbox/ does
 * not.  */
struct inspect_server
{
  const char *name;
  bool optional; /* a failed start skips it */
  bool disabled; /* disabledMcpServers names it: it is not started */
};

/* How a configured server would run here: as a command does, confined
 * behind the boundary or unconfined through the compatibility backend,
 * or not at all.  */
enum inspect_server_run
{
  INSPECT_SERVER_CONFINED,
  INSPECT_SERVER_UNCONFINED,
  INSPECT_SERVER_NOT_STARTED
};

/* How s would run while confinement is enabled or not and a command's
 * report reads status; *why (static, may be NULL) says why it is not
 * confined, or is NULL when it is.  */
enum inspect_server_run inspect_server_run (const struct inspect_server *s,
                                            bool enabled,
                                            enum inspect_status status,
                                            const char **why);

/* The words of a server's row: "confined", "not confined: WHY" or "not
 * started: WHY", then ", optional" for an optional one.  Owned by the
 * caller.  */
char *inspect_server_words (const struct inspect_server *s, bool enabled,
                            enum inspect_status status);

/* Give the report the configured servers (copied), which its text lists
 * in a last section and its JSON as "mcp_servers"; with none (the
 * default) neither appears.  */
void inspect_report_servers (struct inspect_report *r,
                             const struct inspect_server *servers, size_t n);

/* A copy of text with each absolute path ("/..." at the start of a word)
 * replaced by "<path>".  Owned by the caller.  */
char *inspect_redact_paths (const char *text);

#endif
