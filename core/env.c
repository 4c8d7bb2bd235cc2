/* Building a command's environment from a fixed list.  Its messages answer
 * a call, so they are the model's and never translated.  */
#include <config.h>

#include "core/env.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/xalloc.h"

const char *const env_base_names[]
    = { "PATH", "HOME", "LC_ALL", "LC_CTYPE", "LANG", "TERM", "TMPDIR", NULL };

const char *const env_proxy_names[]
    = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
        "NO_PROXY",   "no_proxy",    NULL };

/* Whether name is a portable shell variable name.  */
static bool
env_name_valid (const char *name, size_t len)
{
  if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
    return false;
  for (size_t i = 0; i < len; i++)
    {
      char c = name[i];
      if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
            || (c >= '0' && c <= '9')))
        return false;
    }
  return true;
}

/* The value of name in host, or NULL.  */
static const char *
env_host_lookup (char *const *host, const char *name)
{
  size_t len = strlen (name);
  for (; host != NULL && *host != NULL; host++)
    if (strncmp (*host, name, len) == 0 && (*host)[len] == '=')
      return *host + len + 1;
  return NULL;
}

/* Whether name is among the first n named variables.  */
static bool
env_named_before (const struct env_var *named, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (named[i].name, name) == 0)
      return true;
  return false;
}

/* Check one named variable against the per-variable bounds.  */
static int
env_check_named (const struct env_var *named, size_t i, struct cr_error **err)
{
  const struct env_var *v = &named[i];
  size_t name_len = strlen (v->name);

  if (name_len > ENV_MAX_NAME)
    return cr_error_set (
        err, 0, "environment variable name is longer than %d bytes: %.32s...",
        ENV_MAX_NAME, v->name);
  if (!env_name_valid (v->name, name_len))
    return cr_error_set (
        err, 0,
        "environment variable name is not a valid name (letters, digits and _, "
        "not starting with a digit): '%s'",
        v->name);
  if (memchr (v->value, '\0', v->value_len) != NULL)
    return cr_error_set (
        err, 0, "environment variable %s: its value contains a NUL byte",
        v->name);
  if (env_named_before (named, i, v->name))
    return cr_error_set (err, 0, "environment variable %s is named twice",
                         v->name);
  return 0;
}

/* Append NAME=VALUE to env, enforcing the count and total size.  */
static int
env_push (struct env *env, const char *name, const char *value,
          size_t value_len, struct cr_error **err)
{
  size_t name_len = strlen (name);
  size_t size = name_len + 1 + value_len + 1;

  if (env->count + 1 > ENV_MAX_VARS)
    return cr_error_set (err, 0, "more than %d environment variables",
                         ENV_MAX_VARS);
  if (env->bytes + size > ENV_MAX_BYTES)
    return cr_error_set (err, 0, "environment is larger than %d bytes (at %s)",
                         ENV_MAX_BYTES, name);
  char *s = xmalloc (size);
  memcpy (s, name, name_len);
  s[name_len] = '=';
  memcpy (s + name_len + 1, value, value_len);
  s[size - 1] = '\0';
  env->vars[env->count++] = s;
  env->vars[env->count] = NULL;
  env->bytes += size;
  return 0;
}

/* Refuse a named variable crucible sets for the proxy.  */
static int
env_check_proxy_names (const struct env_var *named, size_t n_named,
                       struct cr_error **err)
{
  for (size_t i = 0; i < n_named; i++)
    for (const char *const *p = env_proxy_names; *p != NULL; p++)
      if (strcmp (named[i].name, *p) == 0)
        return cr_error_set (err, 0,
                             "environment variable %s is crucible's own for "
                             "this command: its network goes through the "
                             "host's proxy, which %s names; do not send it",
                             *p, *p);
  return 0;
}

/* Append the proxy variables.  */
static int
env_push_proxy (struct env *env, const char *proxy_url, struct cr_error **err)
{
  for (const char *const *p = env_proxy_names; *p != NULL; p++)
    {
      const char *value
          = strcasecmp (*p, "NO_PROXY") == 0 ? ENV_NO_PROXY : proxy_url;
      if (env_push (env, *p, value, strlen (value), err) < 0)
        return -1;
    }
  return 0;
}

int
env_build (struct env **out, char *const *host, const struct env_var *named,
           size_t n_named, struct cr_error **err)
{
  return env_build_proxied (out, host, named, n_named, NULL, err);
}

/* Check the credentials against the per-variable bounds, the names
 * crucible sets and the variables the call names.  */
static int
env_check_creds (const struct env_var *named, size_t n_named,
                 const struct env_var *creds, size_t n_creds,
                 struct cr_error **err)
{
  for (size_t i = 0; i < n_creds; i++)
    {
      if (env_check_named (creds, i, err) < 0)
        return -1;
      if (env_name_reserved (creds[i].name))
        return cr_error_set (err, 0,
                             "credential %s: the name is one crucible sets "
                             "itself",
                             creds[i].name);
      if (env_named_before (named, n_named, creds[i].name))
        return cr_error_set (err, 0,
                             "environment variable %s is a credential's "
                             "(sandbox.credentials): the call may not set it",
                             creds[i].name);
    }
  return 0;
}

int
env_build_proxied (struct env **out, char *const *host,
                   const struct env_var *named, size_t n_named,
                   const char *proxy_url, struct cr_error **err)
{
  return env_build_with (out, host, named, n_named, NULL, 0, proxy_url, err);
}

int
env_build_with (struct env **out, char *const *host,
                const struct env_var *named, size_t n_named,
                const struct env_var *creds, size_t n_creds,
                const char *proxy_url, struct cr_error **err)
{
  /* The count bound comes before any per-variable check: the check for a
   * name given twice looks back over the names before it.  */
  if (n_named + n_creds > ENV_MAX_VARS)
    return cr_error_set (err, 0, "more than %d environment variables",
                         ENV_MAX_VARS);
  struct env *env = xcalloc (1, sizeof *env);
  env->vars = xcalloc ((size_t) ENV_MAX_VARS + 1, sizeof *env->vars);

  for (size_t i = 0; i < n_named; i++)
    if (env_check_named (named, i, err) < 0)
      goto fail;
  if (proxy_url != NULL && env_check_proxy_names (named, n_named, err) < 0)
    goto fail;
  if (env_check_creds (named, n_named, creds, n_creds, err) < 0)
    goto fail;
  for (const char *const *name = env_base_names; *name != NULL; name++)
    {
      const char *value = env_host_lookup (host, *name);
      if (value != NULL && !env_named_before (named, n_named, *name)
          && env_push (env, *name, value, strlen (value), err) < 0)
        goto fail;
    }
  for (size_t i = 0; i < n_named; i++)
    if (env_push (env, named[i].name, named[i].value, named[i].value_len, err)
        < 0)
      goto fail;
  for (size_t i = 0; i < n_creds; i++)
    if (env_push (env, creds[i].name, creds[i].value, creds[i].value_len, err)
        < 0)
      goto fail;
  if (proxy_url != NULL && env_push_proxy (env, proxy_url, err) < 0)
    goto fail;
  *out = env;
  return 0;

fail:
  env_free (env);
  return -1;
}

int
env_parse_assignment (const char *arg, struct env_var *out,
                      struct cr_error **err)
{
  const char *eq = strchr (arg, '=');
  if (eq == NULL || eq == arg)
    return cr_error_set (err, 0, "--env takes NAME=VALUE, not '%s'", arg);
  /* The name is copied so that it is NUL-terminated; the caller frees it.  */
  out->name = xstrndup (arg, (size_t) (eq - arg));
  out->value = eq + 1;
  out->value_len = strlen (eq + 1);
  return 0;
}

bool
env_name_ok (const char *name)
{
  size_t len = strlen (name);
  return len <= ENV_MAX_NAME && env_name_valid (name, len);
}

bool
env_name_reserved (const char *name)
{
  if (strncmp (name, "LC_", 3) == 0)
    return true;
  for (const char *const *p = env_base_names; *p != NULL; p++)
    if (strcmp (name, *p) == 0)
      return true;
  for (const char *const *p = env_proxy_names; *p != NULL; p++)
    if (strcmp (name, *p) == 0)
      return true;
  return false;
}

void
env_free (struct env *env)
{
  if (env == NULL)
    return;
  /* A credential's value is in one of these strings: wiped, so the heap
   * crucible keeps does not hold it once the command has it.  */
  for (size_t i = 0; i < env->count; i++)
    {
      explicit_bzero (env->vars[i], strlen (env->vars[i]));
      free (env->vars[i]);
    }
  free (env->vars);
  free (env);
}
