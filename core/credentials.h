/* Credentials a command gets in its environment (sandbox.credentials):
 * resolved by the host when the command is prepared, from a variable of
 * crucible's own environment or from a file checked the way ssh checks a
 * key, limited by the entry's "commands" rules and by
 * sandbox.withheldCredentials, and held in memory excluded from core dumps
 * while crucible itself is not dumpable.
 *
 * A value leaves this module only as an env_var for the command's
 * environment and as a secret for its output's masker; handles and values
 * are never in a message, the journal or the inspection report.  Messages
 * answer a call, so they are the model's and never translated
 * (doc/strings.md, "Credentials").  */
#ifndef CRUCIBLE_CORE_CREDENTIALS_H
#define CRUCIBLE_CORE_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"
#include "core/env.h"
#include "lib/error.h"

/* The most bytes a credential file may hold (its newline included).  */
#define CREDENTIALS_FILE_MAX 65536

/* Where a projected value came from.  */
enum credentials_source
{
  CREDENTIALS_FROM_ENV, /* a variable of crucible's own environment */
  CREDENTIALS_FROM_FILE /* a file of the user's */
};

/* One credential a command gets: its variable, an opaque handle naming
 * this projection, its provenance and its value (in pages excluded from
 * core dumps, owned by the set).  */
struct credential
{
  const char *name;
  char handle[24]; /* "cred-" and 16 hex digits, random */
  enum credentials_source source;
  const char *origin; /* the variable or path it was read from (config's) */
  const char *value;
  size_t value_len;
};

/* One credential a command does not get, and why (a static text).  */
struct credential_withheld
{
  const char *name;
  const char *why;
};

/* The credentials of one command line.  */
struct credentials;

/* Resolve cfg's credentials for the command line (as sh -c runs it):
 * each named by sandbox.withheldCredentials, or limited by "commands"
 * that some program of the line does not match (or a line that cannot be
 * read), is withheld; every other one is read now.  A source that cannot
 * be read is an error naming the variable and the check that failed,
 * never the value.  With any credential configured, crucible makes
 * itself not dumpable (prctl PR_SET_DUMPABLE 0) for the rest of its
 * life before any value is read, even when every one is withheld (an
 * "env" one's value is in crucible's own environment): copies of a value
 * (the pipe's reads, the masker) outlive the set.  */
int credentials_resolve (const struct config *cfg, char *const *host_env,
                         const char *line, struct credentials **out,
                         struct cr_error **err);

/* The same for a call in workspace (NULL: not known) that sets n_named
 * environment variables of its own (--env, a tool call's "env"): with
 * any, every credential limited by "commands" is withheld, since a
 * variable can make an allowed program run code no rule sees
 * (LD_PRELOAD, NODE_OPTIONS, GIT_SSH_COMMAND); so too when PATH has a
 * directory a command could fill (relative or empty, in the workspace,
 * in a writable path), where a program the line names may be one a
 * command put there.  */
int credentials_resolve_named (const struct config *cfg, char *const *host_env,
                               const char *line, const char *workspace,
                               size_t n_named, struct credentials **out,
                               struct cr_error **err);

/* How many credentials the set projects, and each one (i < count).  */
size_t credentials_count (const struct credentials *c);
const struct credential *credentials_get (const struct credentials *c,
                                          size_t i);

/* The projected credentials as variables for env_build_with: vars holds
 * room for credentials_count entries.  */
void credentials_env (const struct credentials *c, struct env_var *vars);

/* The result's note naming what was withheld and why, owned by the
 * caller, or NULL when nothing was: "[credentials withheld: NAME (WHY);
 * NAME (WHY)]".  */
char *credentials_withheld_note (const struct credentials *c);

/* Refuse a variable the call names (--env, a tool call's env) that a
 * configured credential supplies: it never silently replaces either.  */
int credentials_check_named (const struct config *cfg,
                             const struct env_var *named, size_t n_named,
                             struct cr_error **err);

/* How many credentials a command of this configuration would get at most
 * (those configured less those withheld by name), for inspection.  */
size_t credentials_configured (const struct config *cfg);

/* Make crucible not dumpable when cfg configures any credential, before
 * it starts anything that does not go through credentials_resolve (an MCP
 * server whose entry names none): a value read from "env" is in crucible's
 * own environment, which a process of the same user reads in /proc while
 * crucible is dumpable.  Never undone.  */
void credentials_guard (const struct config *cfg);

/* Free the set, its values wiped and their pages unmapped.  NULL is
 * allowed.  */
void credentials_free (struct credentials *c);

#endif
