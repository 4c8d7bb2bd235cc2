/* The full-screen session's state.  tui/ui.c owns it: the loop glue, the
 * session's front end, the supervisor's observer, and the host of the
 * panels (tui/panel.h), which see only struct panel_host, never this.  */
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
#include "tui/elicit.h"
#include "tui/netask.h"
#include "tui/panel.h"
#include "tui/prompt.h"
#include "tui/sample.h"
#include "tui/transcript.h"
#include "tui/ui_cmd.h"

/* The shortest time between two frames: 30 frames a second at most.  */
#define UI_FRAME_MS 33

/* Rows of a finished result the transcript keeps before its hint.  */
#define UI_RESULT_ROWS 3

/* How long a second Ctrl+C on an empty box has to quit.  */
#define UI_CTRL_C_MS 2000

struct pager;

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

  struct panel panel;     /* where the box was; ops NULL for the box */
  struct panel_host host; /* what the panels may do, data: this */
  struct panel *retired;  /* closed panels, freed at the next frame */
  size_t n_retired;
  struct session_call *asking; /* the call the approval panel asks about */
  struct ui_net *net; /* the network question held (tui/netask.h), or NULL */
  struct netask_host net_host; /* what the netask panel asks, data: this */
  struct pager *pager;         /* the full view over everything, or NULL */
  struct ui_cmd *pager_cmd;    /* the command it reads, or NULL */

  /* A server's question held (tui/elicit.h), and what its panel asks.  */
  struct ui_elicit *elicit;
  struct elicit_host elicit_host;
  /* A server's question was cancelled this turn and the person told:
   * the next are cancelled unsaid, or a flood of them would push the
   * whole transcript out.  */
  bool elicit_cancel_told;

  uint64_t turn_started_ms;
  uint64_t turn_bytes; /* what the turn's commands printed */
  bool busy;
  char *last_result; /* the last result the transcript cut, for Ctrl+O */
  size_t last_result_len;
  char *hint; /* a passing line over the status row, or NULL */
  uint64_t ctrl_c_ms;

  bool dirty;
  uint64_t frame_timer;
  uint64_t key_timer; /* the key frame, drawn in the turn keys arrived */
  uint64_t tick_timer;
  uint64_t last_frame_ms;
  bool quitting;
  bool quit_now; /* leave the loop */
  int host_signal;
  size_t stopped_at_exit;
  FILE *tty_out;
  /* The configured MCP servers (core/mcphost.h) for the session, or NULL.  */
  const struct mcphost_config *servers;
};

/* The answer to a network question, for whoever asked it (the proxy's
 * asker hook, core/proxy.h: question is its id, and the answers map to
 * PROXY_ANSWER_REFUSE, _COMMAND and _ALWAYS).  */
typedef void (*ui_net_answer_fn) (void *data, uint64_t question,
                                  enum netask_answer a);

/* Ask the person, in the netask panel, whether the command whose sandbox
 * ID is sandbox_id may reach name, which its policy does not allow; fn
 * hears the answer exactly once.  One question at a time: the proxy asks
 * the next only once the last is settled (and coalesces repeated names),
 * so a question asked while one is held replaces it, the held one refused
 * (its wait ran out at the proxy first).  "Always" writes the
 * name to workspaces.<this workspace>.domains in the home file first; if
 * that cannot be written the answer is "this command", and the transcript
 * says why.  Unanswered within NETASK_WAIT_MS it is refused.  A call's
 * approval asked meanwhile waits until it is answered.  */
void ui_net_ask (struct ui *ui, uint64_t question, const char *name,
                 const char *sandbox_id, ui_net_answer_fn fn, void *data);

/* `crucible [DIR]`: the full-screen session.  */
int ui_main (int argc, char **argv);

#endif
