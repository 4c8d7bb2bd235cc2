/* The question about a connection a confined command made to a name its
 * policy does not allow (issue 13, "the person's say"): the connection
 * waits while it is asked.  Choices: allow the name for this command, allow
 * it always for this workspace (the home configuration's
 * workspaces.<path>.domains), or refuse; Esc refuses, and so does no
 * answer within NETASK_WAIT_MS.  The host asks one question at a time (the
 * proxy coalesces repeated names into one).  */
#ifndef CRUCIBLE_TUI_NETASK_H
#define CRUCIBLE_TUI_NETASK_H

#include <stdint.h>

#include "tui/panel.h"

/* How long a connection waits for the answer (the proxy's
 * PROXY_ASK_WAIT_MS).  */
#define NETASK_WAIT_MS 60000u

enum netask_answer
{
  NETASK_REFUSE,
  NETASK_COMMAND, /* for the rest of this command's life */
  NETASK_ALWAYS,  /* and from now on in this workspace */
};

/* What the panel asks about.  */
struct netask_question
{
  const char *name;     /* the normalised name (punycode for an IDN) */
  const char *label;    /* the command's label, or NULL when unknown */
  const char *server;   /* the MCP server asking, or NULL for a command */
  uint64_t deadline_ms; /* clock_now_ms () when it is refused unanswered */
};

/* What the panel asks of its host beyond panel_host's dirty and notice.  */
struct netask_host
{
  /* The question open, NULL once it is gone (answered, timed out).  */
  const struct netask_question *(*question) (void *data);
  /* The answer, which closes the panel.  */
  void (*answer) (void *data, enum netask_answer a);
  void *data;
};

extern const struct panel_ops netask_panel_ops;

/* Open the question the host holds, "for this command" selected.  Both
 * hosts are borrowed while it is open.  */
struct panel netask_panel_new (const struct panel_host *host,
                               const struct netask_host *ask);

#endif
