/* The environment a command starts with: a built set, never an inherited
 * copy.  Exactly PATH, HOME, LC_ALL, LC_CTYPE, LANG, TERM and TMPDIR are
 * copied from crucible's own environment when set, plus the variables the
 * call names; nothing else of crucible's environment reaches the command.  */
#ifndef CRUCIBLE_CORE_ENV_H
#define CRUCIBLE_CORE_ENV_H

#include <stddef.h>

#include "lib/error.h"

#define ENV_MAX_VARS 64     /* variables in all, base ones included */
#define ENV_MAX_NAME 128    /* bytes in one name */
#define ENV_MAX_BYTES 65536 /* NAME=VALUE bytes in all, NULs included */

/* One variable a call names.  value need not be NUL-terminated: value_len
 * says how long it is, so a NUL inside it can be seen and refused.  */
struct env_var
{
  const char *name;
  const char *value;
  size_t value_len;
};

struct env
{
  char **vars; /* NULL-terminated "NAME=VALUE" strings, for execve */
  size_t count;
  size_t bytes;
};

/* The names copied from crucible's own environment, NULL-terminated.  */
extern const char *const env_base_names[];

/* Build the environment from host (crucible's own, e.g. environ) and the
 * named variables.  A named variable replaces a base one of the same name;
 * naming one twice, a bad name, a NUL in a value or passing a bound is an
 * error that says which.  The caller owns *out.  */
int env_build (struct env **out, char *const *host, const struct env_var *named,
               size_t n_named, struct cr_error **err);

/* Split a command-line "NAME=VALUE" into an env_var pointing into arg.  */
int env_parse_assignment (const char *arg, struct env_var *out,
                          struct cr_error **err);

void env_free (struct env *env);

#endif
