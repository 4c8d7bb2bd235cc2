/* The question an MCP server asks the person itself (its elicitation/
 * create, issue 16): which server asks and its message, put in a panel.
 * Choices: accept (offered only when the server's schema requires no
 * field, since the panel fills in none: the answer is then {}), decline;
 * Esc cancels.  The host holds one question at a time.  */
#ifndef CRUCIBLE_TUI_ELICIT_H
#define CRUCIBLE_TUI_ELICIT_H

#include <stdbool.h>

#include "core/mcpclient.h"
#include "tui/panel.h"

/* What the panel asks about.  */
struct elicit_question
{
  const char *server;  /* the server's configured name */
  const char *message; /* its message, shown safe */
  bool can_accept;     /* its schema requires no field */
};

/* What the panel asks of its host beyond panel_host's dirty.  */
struct elicit_host
{
  /* The question open, NULL once it is gone.  */
  const struct elicit_question *(*question) (void *data);
  /* The answer, which closes the panel.  */
  void (*answer) (void *data, enum mcpclient_elicit_action a);
  void *data;
};

extern const struct panel_ops elicit_panel_ops;

/* Whether a schema (JSON text) requires no field: no "required" array,
 * or an empty one.  */
bool elicit_schema_empty (const char *schema);

/* Open the question the host holds, its first choice selected.  Both
 * hosts are borrowed while it is open.  */
struct panel elicit_panel_new (const struct panel_host *host,
                               const struct elicit_host *ask);

#endif
