/* The MCP servers a person configured (mcpServers, home-only) and the
 * names a project disables (disabledMcpServers): the table core/config.c
 * fills and the lifecycle reads.  A server's name becomes part of the
 * names its tools are offered under, mcp__<server>__<tool>, so it is
 * bounded to letters, digits, '-' and single '_' (no "__", none at either
 * end): the first "__" after "mcp__" then always ends the server's name.  */
#ifndef CRUCIBLE_CORE_MCPSERVERS_H
#define CRUCIBLE_CORE_MCPSERVERS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"

/* The longest server name, in bytes.  */
#define MCPSERVERS_NAME_MAX 32

/* One configured server (stdio only), owned by the config.  */
struct mcp_server_config
{
  char *name;                     /* the key under mcpServers */
  char *command;                  /* the program, required */
  struct config_list args;        /* its arguments, in order */
  struct config_list env;         /* "NAME=VALUE", one a variable */
  bool optional;                  /* a failed start skips it */
  struct config_list credentials; /* names in sandbox.credentials */
};

/* Why s cannot be a server's name, or NULL.  */
const char *mcpservers_name_refuse (const char *s);

/* Make a server entry named name, its lists empty.  */
void mcpservers_init (struct mcp_server_config *s, const char *name);

/* Free what an entry holds.  */
void mcpservers_clear (struct mcp_server_config *s);

/* The server named name in cfg, or NULL.  */
const struct mcp_server_config *mcpservers_find (const struct config *cfg,
                                                 const char *name);

/* Whether the configuration (a project's disabledMcpServers, or home's)
 * disables the server named name.  */
bool mcpservers_disabled (const struct config *cfg, const char *name);

/* The name a server's tool is offered and allowed under,
 * mcp__<server>__<tool>; the caller owns it.  */
char *mcpservers_qualified (const char *server, const char *tool);

/* Read mcp__<server>__<tool>, or mcp__<server> (a rule naming every tool
 * the server had; *tool is then NULL), into copies the caller owns.
 * Returns false, setting neither, when name is neither (the server part
 * must pass mcpservers_name_refuse, the tool part be non-empty).  */
bool mcpservers_split (const char *name, char **server, char **tool);

#endif
