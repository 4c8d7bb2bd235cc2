/* The environment a command starts with: a built set, never an inherited
 * copy.  Exactly PATH, HOME, LC_ALL, LC_CTYPE, LANG, TERM and TMPDIR are
 * copied from crucible's own environment when set, plus the variables the
 * call names; nothing else of crucible's environment reaches the command.  */
#ifndef CRUCIBLE_CORE_ENV_H
#define CRUCIBLE_CORE_ENV_H

#include <stdbool.h>
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

/* The proxy variables a command with domains gets, NULL-terminated:
 * HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy (the proxy's URL) and
 * NO_PROXY, no_proxy (ENV_NO_PROXY).  */
extern const char *const env_proxy_names[];
#define ENV_NO_PROXY "localhost,127.0.0.1,::1"

/* The same, for a command whose network goes through the host's proxy at
 * proxy_url (http://USER:PASSWORD@127.0.0.1:3128; NULL: no proxy, which
 * is env_build): the proxy variables are added after the others, within
 * the same bounds, and a call naming one of them is refused, saying so
 * (a variable of its own would send the command around the proxy's
 * credential, or nowhere).  Nothing inherited is ever a proxy setting.  */
int env_build_proxied (struct env **out, char *const *host,
                       const struct env_var *named, size_t n_named,
                       const char *proxy_url, struct cr_error **err);

/* The same, with credentials (core/credentials.c) added after the named
 * variables and before the proxy ones, within the same bounds: a credential
 * with a bad name, a NUL in its value or a name crucible sets itself is
 * refused, and so is a named variable a credential supplies, saying so; one
 * never silently replaces the other.  */
int env_build_with (struct env **out, char *const *host,
                    const struct env_var *named, size_t n_named,
                    const struct env_var *creds, size_t n_creds,
                    const char *proxy_url, struct cr_error **err);

/* Split a command-line "NAME=VALUE" into an env_var pointing into arg.  */
int env_parse_assignment (const char *arg, struct env_var *out,
                          struct cr_error **err);

/* Whether name (NUL-terminated) is a portable shell variable name of at
 * most ENV_MAX_NAME bytes.  */
bool env_name_ok (const char *name);

/* Whether name is one crucible sets itself in some command's environment:
 * a base name, any LC_* or a proxy variable.  A credential may not take
 * one (core/credentials.c).  */
bool env_name_reserved (const char *name);

/* Free env, its strings wiped first: a credential's value may be among
 * them.  NULL is allowed.  */
void env_free (struct env *env);

#endif
