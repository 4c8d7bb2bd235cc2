/* The configured MCP servers: name rules and the table's entries.  */
#include <config.h>

#include "core/mcpservers.h"

#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"

/* Whether c may appear in a server's name.  */
static bool
mcpservers_name_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

const char *
mcpservers_name_refuse (const char *s)
{
  static const char *const why
      = N_ ("must be a server name of at most 32 letters, digits, '-' and "
            "'_', with no \"__\" and no '_' at either end");
  size_t n = strlen (s);
  if (n == 0 || n > MCPSERVERS_NAME_MAX || s[0] == '_' || s[n - 1] == '_'
      || strstr (s, "__") != NULL)
    return why;
  for (size_t i = 0; i < n; i++)
    if (!mcpservers_name_char (s[i]))
      return why;
  return NULL;
}

/* An empty list (items holds the terminator).  */
static void
mcpservers_list_init (struct config_list *l)
{
  l->items = xcalloc (1, sizeof *l->items);
  l->count = 0;
}

/* Free a list's entries.  */
static void
mcpservers_list_free (struct config_list *l)
{
  for (size_t i = 0; i < l->count; i++)
    free (l->items[i]);
  free (l->items);
  l->items = NULL;
  l->count = 0;
}

void
mcpservers_init (struct mcp_server_config *s, const char *name)
{
  memset (s, 0, sizeof *s);
  s->name = xstrdup (name);
  mcpservers_list_init (&s->args);
  mcpservers_list_init (&s->env);
  mcpservers_list_init (&s->credentials);
}

void
mcpservers_clear (struct mcp_server_config *s)
{
  free (s->name);
  free (s->command);
  mcpservers_list_free (&s->args);
  mcpservers_list_free (&s->env);
  mcpservers_list_free (&s->credentials);
  memset (s, 0, sizeof *s);
}

const struct mcp_server_config *
mcpservers_find (const struct config *cfg, const char *name)
{
  for (size_t i = 0; i < cfg->n_mcp_servers; i++)
    if (strcmp (cfg->mcp_servers[i].name, name) == 0)
      return &cfg->mcp_servers[i];
  return NULL;
}

bool
mcpservers_disabled (const struct config *cfg, const char *name)
{
  for (size_t i = 0; i < cfg->mcp_disabled.count; i++)
    if (strcmp (cfg->mcp_disabled.items[i], name) == 0)
      return true;
  return false;
}

char *
mcpservers_qualified (const char *server, const char *tool)
{
  return xasprintf ("mcp__%s__%s", server, tool);
}

bool
mcpservers_split (const char *name, char **server, char **tool)
{
  if (strncmp (name, "mcp__", 5) != 0)
    return false;
  /* A server's name holds no "__": the first one ends it.  */
  const char *rest = name + 5, *sep = strstr (rest, "__");
  char *s
      = sep != NULL ? xstrndup (rest, (size_t) (sep - rest)) : xstrdup (rest);
  if (mcpservers_name_refuse (s) != NULL || (sep != NULL && sep[2] == '\0'))
    {
      free (s);
      return false;
    }
  *server = s;
  *tool = sep != NULL ? xstrdup (sep + 2) : NULL;
  return true;
}
