/* The full-screen session's state, shared by the modules that draw it and
 * the keys that act on it (screen, tasks, pager, approval, sandbox panel).
 * tui/ui.c owns it: the loop glue, the session's front end and the
 * supervisor's observer.  */
#ifndef CRUCIBLE_TUI_UI_H
#define CRUCIBLE_TUI_UI_H

#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "core/loop.h"
#include "core/rules.h"
#include "core/session.h"
#include "core/supervisor.h"
#include "tui/keys.h"
#include "tui/prompt.h"
#include "tui/sample.h"
#include "tui/transcript.h"

/* The shortest time between two frames: 30 frames a second at most.  */
#define UI_FRAME_MS 33

/* Rows of a finished result the transcript keeps before its hint.  */
#define UI_RESULT_ROWS 3

/* The most of one command's output kept on disk for the full view (the
 * output ceiling is usually lower; a raised one does not fill the disk). */
#define UI_SPOOL_MAX ((uint64_t) 256 * 1024 * 1024)

/* How long a second Ctrl+C on an empty box has to quit.  */
#define UI_CTRL_C_MS 2000

/* A command the UI has seen start, until its slot is free.  */
struct ui_cmd
{
  struct ui_cmd *next;
  struct command *cmd; /* the supervisor's; NULL once cleaned */
  const struct session_call
      *call;   /* compared, never read; NULL once answered */
  char *label; /* the call line: description or Bash(…) */
  uint64_t started_ms;
  uint64_t bytes, lines;
  bool last_newline;
  int spool_fd; /* every raw byte, for the full view; -1 when none */
  uint64_t spooled;
  bool spool_failed;
  struct sample *sample;
  bool in_turn;  /* the running turn waits for it */
  bool stopping; /* x was pressed */
  bool stop_failed;
};

enum ui_panel
{
  UI_PANEL_NONE,
  UI_PANEL_TASKS,    /* the "Still running" list, where the box was */
  UI_PANEL_APPROVAL, /* a question about a call */
  UI_PANEL_SANDBOX,  /* /sandbox */
  UI_PANEL_PAGER     /* Ctrl+O, the whole screen */
};

struct pager;
struct sandbox_panel;

struct ui
{
  struct loop *loop;
  struct supervisor *sup;
  struct session *session;
  struct rules *rules;
  struct config *cfg;
  const char *workspace;
  char *home_file;
  struct keys *keys;

  struct transcript transcript;
  struct prompt prompt;
  struct ui_cmd *cmds;                  /* newest first */
  const struct session_call *announced; /* the call whose command starts next */

  enum ui_panel panel;
  enum ui_panel under_pager; /* what Esc returns to from the full view */
  int task_sel;              /* the selected row of the list */
  uint64_t task_sel_number;  /* its command's number, 0 for none yet */
  struct session_call *asking;
  int approval_sel;
  struct pager *pager;
  struct sandbox_panel *sandbox;

  uint64_t turn_started_ms;
  uint64_t turn_bytes; /* what the turn's commands printed */
  bool busy;
  char *last_result; /* the last result the transcript cut, for Ctrl+O */
  size_t last_result_len;
  char *hint; /* a passing line over the status row, or NULL */
  uint64_t ctrl_c_ms;

  bool dirty;
  uint64_t frame_timer;
  uint64_t tick_timer;
  uint64_t last_frame_ms;
  bool quitting;
  bool quit_now; /* leave the loop */
  int host_signal;
  size_t stopped_at_exit;
  FILE *tty_out;
};

/* Something on screen changed: draw it at the next frame.  */
void ui_dirty (struct ui *ui);

/* The commands left running (each row of the list), in start order; *n is
 * how many.  The array is owned by the caller.  */
struct ui_cmd **ui_left_running (struct ui *ui, size_t *n);

/* Open the full view on a command's output, or on text.  */
void ui_open_pager_cmd (struct ui *ui, struct ui_cmd *c);
void ui_open_pager_text (struct ui *ui, const char *text, size_t len);

/* Lines a command printed, as capture counts them: each '\n' ends one,
 * and a last line without one counts too.  */
uint64_t ui_cmd_lines (const struct ui_cmd *c);

/* Add a notice line to the transcript.  */
void ui_notice (struct ui *ui, enum theme_role role, const char *text);

/* `crucible [DIR]`: the full-screen session.  */
int ui_main (int argc, char **argv);

#endif
