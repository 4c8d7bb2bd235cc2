/* The session's record of a command.  */
#include <config.h>

#include "tui/ui_cmd.h"

#include "core/capture.h"
#include "lib/xalloc.h"

uint64_t
ui_cmd_lines (const struct ui_cmd *c)
{
  return c->cmd != NULL ? capture_lines (command_capture (c->cmd)) : 0;
}

/* Whether c is a row of the list.  */
static bool
ui_cmd_is_left_running (const struct ui_cmd *c)
{
  return c->cmd != NULL && (command_left_running (c->cmd) || c->stop_failed);
}

struct ui_cmd **
ui_cmd_left_running (struct ui_cmd *list, size_t *n)
{
  size_t count = 0;
  for (struct ui_cmd *c = list; c != NULL; c = c->next)
    count += ui_cmd_is_left_running (c);
  struct ui_cmd **v = xcalloc (count + 1, sizeof (struct ui_cmd *));
  size_t i = count;
  /* The list is newest first; rows are oldest first.  */
  for (struct ui_cmd *c = list; c != NULL; c = c->next)
    if (ui_cmd_is_left_running (c))
      v[--i] = c;
  *n = count;
  return v;
}
