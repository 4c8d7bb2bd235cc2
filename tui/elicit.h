/* The question an MCP server asks the person itself (its elicitation/
 * create, issue 16): which server asks and its message, put in a panel,
 * with a field for each property of its requestedSchema when that is what
 * MCP 2025-06-18 allows there (a flat object of primitives: a string, with
 * format, minLength, maxLength; a number or integer, with minimum and
 * maximum; a boolean; a string enum, with enumNames).  The person moves
 * between the fields (up, down, tab), types into a text or number field,
 * toggles a boolean (space), picks an enum (left, right), sees which are
 * required and why a value is refused, and chooses Accept (which sends
 * the values typed: numbers as numbers, a field left empty left out),
 * Decline, or Esc to cancel.  A schema the panel cannot put in fields (a
 * nested object, an array) can only be declined.  The host holds one
 * question at a time.  */
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
  const char *schema;  /* its requestedSchema, JSON text */
};

/* What the panel asks of its host beyond panel_host's dirty.  */
struct elicit_host
{
  /* The question open, NULL once it is gone.  */
  const struct elicit_question *(*question) (void *data);
  /* The answer, which closes the panel; content is the accepted
   * answer's JSON object text (NULL unless accepted).  */
  void (*answer) (void *data, enum mcpclient_elicit_action a,
                  const char *content);
  void *data;
};

extern const struct panel_ops elicit_panel_ops;

/* Open the question the host holds, its first choice selected.  Both
 * hosts are borrowed while it is open.  */
struct panel elicit_panel_new (const struct panel_host *host,
                               const struct elicit_host *ask);

#endif
