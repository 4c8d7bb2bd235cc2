/* A command the full-screen session has seen start, until its slot is
 * free: what the turn, the count rows, the "Still running" list and the
 * full view show of it.  tui/ui.c makes and frees them (newest first in
 * one list); the screen and the panels read them.  */
#ifndef CRUCIBLE_TUI_UI_CMD_H
#define CRUCIBLE_TUI_UI_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/session.h"
#include "core/supervisor.h"
#include "tui/sample.h"

struct ui_cmd
{
  struct ui_cmd *next;
  struct command *cmd; /* the supervisor's; NULL once cleaned */
  const struct session_call
      *call;   /* compared, never read; NULL once answered */
  char *label; /* the call line: description or Bash(…) */
  uint64_t started_ms;
  uint64_t bytes;
  struct sample *sample;
  uint64_t sampled; /* the capture's offset the sample has read to */
  bool in_turn;     /* the running turn waits for it */
  bool stopping;    /* x was pressed */
  bool stop_failed;
};

/* Lines a command printed, as its capture counts them: each '\n' ends
 * one, and a last line without one counts too.  */
uint64_t ui_cmd_lines (const struct ui_cmd *c);

/* The commands of list (newest first) left running, or whose stop failed:
 * the rows of the list, oldest first; *n is how many.  The array is owned
 * by the caller.  */
struct ui_cmd **ui_cmd_left_running (struct ui_cmd *list, size_t *n);

#endif
