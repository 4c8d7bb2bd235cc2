/* `crucible [DIR]`: the full-screen session.  This file is the glue: the
 * terminal (curses owns termios and output, termkey decodes keys), the
 * loop's frame timer, the session's front end, the supervisor's observer,
 * and what each key does at the prompt.  */
#include <config.h>

#include "tui/ui.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <curses.h>

#include "core/capture.h"
#include "core/permit.h"
#include "lib/cleanup.h"
#include "lib/clock.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/approval.h"
#include "tui/netask.h"
#include "tui/cmd_sandbox.h"
#include "tui/cmd_session.h"
#include "tui/front.h"
#include "tui/host.h"
#include "tui/options.h"
#include "tui/pager.h"
#include "tui/sandbox_panel.h"
#include "tui/screen.h"
#include "tui/tasks.h"
#include "tui/terminfo.h"
#include "tui/text.h"

extern char **environ;

/* Exit statuses: 0 after quitting, 1 when the session could not start or
 * could not confirm its commands ended, 2 for a usage error.  */
#define UI_EXIT_FAILED 1
#define UI_EXIT_USAGE 2

/* What the terminal is told on the way in and undone on the way out:
 * bracketed paste, and the mouse wheel (SGR reports).  */
#define UI_TERM_ENTER "\x1b[?2004h\x1b[?1000h\x1b[?1006h"
#define UI_TERM_LEAVE "\x1b[?1006l\x1b[?1000l\x1b[?2004l"

struct ui_options
{
  const char *agent;
  const char *theme;
  const char *dir;
  bool help;
  bool version;
};

static void ui_frame (struct loop *loop, void *data);
static const struct panel_host *ui_host (struct ui *ui);
static void ui_net_show (struct ui *ui);
static void ui_panel_open (struct ui *ui, struct panel p);
static void ui_panel_close (struct ui *ui);

/* Something on screen changed: draw it at the next frame.  */
static void
ui_dirty (struct ui *ui)
{
  ui->dirty = true;
  if (ui->frame_timer != 0 || ui->quit_now)
    return;
  /* Frames are capped: damage arriving faster is drawn together.  */
  uint64_t now = clock_now_ms ();
  uint64_t next = ui->last_frame_ms + UI_FRAME_MS;
  ui->frame_timer
      = loop_add_timer (ui->loop, next > now ? next - now : 0, ui_frame, ui);
}

/* Free the panels closed since the last frame.  */
static void
ui_panel_reap (struct ui *ui)
{
  for (size_t i = 0; i < ui->n_retired; i++)
    ui->retired[i].ops->free (ui->retired[i].state);
  free (ui->retired);
  ui->retired = NULL;
  ui->n_retired = 0;
}

/* What the frame shows; the panel's lines go in *panel (the caller's to
 * free), drawn only when the full view is not over it.  */
static void
ui_view (struct ui *ui, struct screen_view *v, struct screen_lines *panel)
{
  *v = (struct screen_view){ .transcript = &ui->transcript,
                             .prompt = &ui->prompt,
                             .hint = ui->hint,
                             .full_access
                             = rules_mode (ui->rules) == RULES_MODE_FULL_ACCESS,
                             .busy = ui->busy,
                             .turn_started_ms = ui->turn_started_ms,
                             .turn_bytes = ui->turn_bytes,
                             .cmds = ui->cmds,
                             .pager = ui->pager };
  free (ui_cmd_left_running (ui->cmds, &v->left_running));
  if (ui->pager == NULL && ui->panel.ops != NULL)
    {
      ui->panel.ops->draw (ui->panel.state, COLS, panel);
      v->panel = panel;
    }
}

/* Give a command's sample what its capture took in since the last frame;
 * when the capture no longer holds all of it, the sample starts again at
 * a line, as it does when more arrives than it keeps.  */
static void
ui_pull_sample (struct ui_cmd *c)
{
  const struct capture *cap = command_capture (c->cmd);
  uint64_t kept = capture_kept_bytes (cap);
  /* The sample never shows more than its ring's worth of the end.  */
  uint64_t from = c->sampled;
  if (kept > SAMPLE_PENDING_MAX && from < kept - SAMPLE_PENDING_MAX)
    from = kept - SAMPLE_PENDING_MAX;
  char chunk[4096];
  uint64_t at;
  size_t n;
  while ((n = capture_read (cap, from, chunk, sizeof chunk, &at, NULL)) > 0)
    {
      if (at != c->sampled)
        sample_drop (c->sample);
      sample_feed (c->sample, chunk, n);
      c->sampled = from = at + n;
    }
}

/* Draw what the frame shows.  With parse, the samples and the full view
 * first take in what waits for them (a bounded amount, so a flood costs a
 * bounded parse per frame); without, they are drawn as they stand.  */
static void
ui_draw (struct ui *ui, bool parse)
{
  if (parse)
    for (struct ui_cmd *c = ui->cmds; c != NULL; c = c->next)
      if (c->in_turn)
        {
          ui_pull_sample (c);
          sample_flush (c->sample);
        }
  struct screen_view view;
  struct screen_lines panel = { 0 };
  ui_view (ui, &view, &panel);
  view.parse = parse;
  if (screen_draw (&view) && parse)
    ui_dirty (ui);
  screen_lines_free (&panel);
}

/* Draw a frame now.  */
static void
ui_frame (struct loop *loop, void *data)
{
  struct ui *ui = data;
  ui->frame_timer = 0;
  ui_panel_reap (ui);
  if (!ui->dirty)
    return;
  ui->dirty = false;
  ui->last_frame_ms = clock_now_ms ();
  ui_draw (ui, true);
}

/* Whether a frame has output to parse: a command shown live (its sample)
 * or the full view.  */
static bool
ui_parse_waits (const struct ui *ui)
{
  if (ui->pager != NULL)
    return true;
  for (const struct ui_cmd *c = ui->cmds; c != NULL; c = c->next)
    if (c->in_turn)
      return true;
  return false;
}

/* What keys changed, drawn in the turn they arrived (after every key of
 * it), not at the next frame tick: the screen as it stands, with the
 * samples and the full view left for their frame (which follows at once
 * when it is due), so a key during a flood waits for no parse of it;
 * with nothing to parse, the frame due now if one is.  */
static void
ui_key_frame (struct loop *loop, void *data)
{
  struct ui *ui = data;
  ui->key_timer = 0;
  if (!ui->dirty || ui->quit_now)
    return;
  if (clock_now_ms () >= ui->last_frame_ms + UI_FRAME_MS
      && !ui_parse_waits (ui))
    {
      loop_cancel_timer (loop, ui->frame_timer);
      ui_frame (loop, ui);
      return;
    }
  ui_panel_reap (ui);
  ui_draw (ui, false);
}

/* A key changed the screen: drawn at once (ui_key_frame), and at the next
 * frame too if the key frame leaves something for it.  */
static void
ui_dirty_now (struct ui *ui)
{
  ui_dirty (ui);
  if (ui->key_timer == 0 && !ui->quit_now)
    ui->key_timer = loop_add_timer (ui->loop, 0, ui_key_frame, ui);
}

/* Once a second while something counts time.  */
static void
ui_tick (struct loop *loop, void *data)
{
  struct ui *ui = data;
  ui->tick_timer = loop_add_timer (loop, 1000, ui_tick, ui);
  if (ui->busy
      || (ui->pager == NULL && ui->panel.ops != NULL && ui->panel.ops->ticks))
    ui_dirty (ui);
}

/* Add a notice line to the transcript.  */
static void
ui_notice (struct ui *ui, enum theme_role role, const char *text)
{
  transcript_add (&ui->transcript, role, TRANSCRIPT_PLAIN, 2, text,
                  strlen (text));
  ui_dirty (ui);
}

/* A passing hint in the status row.  */
static void
ui_hint (struct ui *ui, const char *text)
{
  free (ui->hint);
  ui->hint = text != NULL ? xstrdup (text) : NULL;
  ui_dirty (ui);
}

/* The UI's record of a command.  */
static struct ui_cmd *
ui_find (struct ui *ui, const struct command *cmd)
{
  for (struct ui_cmd *c = ui->cmds; c != NULL; c = c->next)
    if (c->cmd == cmd)
      return c;
  return NULL;
}

/* --- the supervisor's observer ----------------------------------------- */

/* A command started: its call was announced just before.  */
static void
ui_on_started (void *data, struct command *cmd)
{
  struct ui *ui = data;
  struct ui_cmd *c = xcalloc (1, sizeof *c);
  c->cmd = cmd;
  c->call = ui->announced;
  ui->announced = NULL;
  c->label = xstrdup (command_label (cmd));
  c->started_ms = clock_now_ms ();
  c->sample = sample_new (COLS - 4);
  c->in_turn = c->call != NULL;
  c->next = ui->cmds;
  ui->cmds = c;
  ui_dirty (ui);
}

/* Bytes arrived from a command: counted for the turn, drawn at the next
 * frame.  Nothing is copied here: the sample and the full view read what
 * the command's capture holds when they draw (ui_pull_sample, pager.h),
 * so a flood costs the session what it costs crucible run and the
 * capture's one spool write per read (observer.spool_dir).  */
static void
ui_on_output (void *data, struct command *cmd, const char *bytes, size_t len)
{
  struct ui *ui = data;
  (void) bytes;
  struct ui_cmd *c = ui_find (ui, cmd);
  if (c == NULL || len == 0)
    return;
  c->bytes += len;
  if (c->in_turn)
    ui->turn_bytes += len;
  ui_dirty (ui);
}

/* A stop from the list did not finish in time.  */
static void
ui_on_stop_failed (void *data, struct command *cmd)
{
  struct ui *ui = data;
  struct ui_cmd *c = ui_find (ui, cmd);
  if (c != NULL)
    {
      c->stopping = false;
      c->stop_failed = true;
    }
  ui_dirty (ui);
}

/* A command's slot is free: its row goes.  */
static void
ui_on_cleaned (void *data, struct command *cmd)
{
  struct ui *ui = data;
  for (struct ui_cmd **pp = &ui->cmds; *pp != NULL; pp = &(*pp)->next)
    if ((*pp)->cmd == cmd)
      {
        struct ui_cmd *c = *pp;
        *pp = c->next;
        /* The full view keeps what it reads: the capture (its spool
         * too) is the view's from now on.  */
        if (ui->pager_cmd == c)
          {
            pager_detach (ui->pager, command_take_capture (cmd));
            ui->pager_cmd = NULL;
          }
        sample_free (c->sample);
        free (c->label);
        free (c);
        break;
      }
  /* The open panel may show that command (the list closes with its last
   * row), also when it is under the full view.  */
  if (ui->panel.ops != NULL && ui->panel.ops->update != NULL)
    ui->panel.ops->update (ui->panel.state);
  ui_dirty (ui);
}

/* --- the session's front end ------------------------------------------- */

/* A turn starts.  */
static void
ui_turn_started (void *data, enum session_turn_reason reason,
                 const char *prompt)
{
  struct ui *ui = data;
  ui->busy = true;
  ui->turn_started_ms = clock_now_ms ();
  ui->elicit_cancel_told = false;
  ui->turn_bytes = 0;
  if (reason == SESSION_TURN_PROMPT)
    {
      char *line = xasprintf ("\xe2\x80\xba %s", prompt);
      transcript_add (&ui->transcript, THEME_PROMPT, TRANSCRIPT_PLAIN, 2, line,
                      strlen (line));
      free (line);
    }
  else
    ui_notice (ui, THEME_DIM,
               _ ("(a command left running ended; the agent is told)"));
  ui->transcript.scroll = 0;
  ui_dirty (ui);
}

/* The agent's text.  */
static void
ui_text (void *data, const char *text)
{
  struct ui *ui = data;
  char *line = xasprintf ("\xe2\x97\x86 %s", text);
  transcript_add (&ui->transcript, THEME_TEXT, TRANSCRIPT_PLAIN, 2, line,
                  strlen (line));
  free (line);
  ui_dirty (ui);
}

/* A call is about to run: its command, if it starts, is this call's.  */
static void
ui_call (void *data, const struct session_call *call)
{
  struct ui *ui = data;
  /* An MCP tool call starts no command to bind to.  */
  if (session_call_tool (call) == NULL)
    ui->announced = call;
}

/* Where a result's closing note begins ("[exit status 1]", "[left running
 * as #1; …]", which may take several lines), or NULL when it has none.  */
static const char *
ui_result_note (const char *clean)
{
  size_t len = strlen (clean);
  if (len == 0 || clean[len - 1] != ']')
    return NULL;
  const char *line = clean + len;
  for (int rows = 0; rows < 6 && line > clean; rows++)
    {
      line--;
      while (line > clean && line[-1] != '\n')
        line--;
      if (*line == '[')
        return line;
    }
  return NULL;
}

/* Add rows of a result to the transcript, the first marked ⎿.  */
static void
ui_add_rows (struct ui *ui, const char *text, size_t len, bool first,
             enum theme_role role)
{
  struct buf b = BUF_INIT;
  buf_puts (&b, first ? "  \xe2\x8e\xbf  " : "     ");
  for (size_t i = 0; i < len; i++)
    {
      buf_putc (&b, text[i]);
      if (text[i] == '\n' && i + 1 < len)
        buf_puts (&b, "     ");
    }
  transcript_add (&ui->transcript, role, TRANSCRIPT_PLAIN, 5, b.data, b.len);
  buf_free (&b);
}

/* Keep a result in the transcript, cut to UI_RESULT_ROWS rows of output
 * with a hint that Ctrl+O shows it all; its closing note is always kept. */
static void
ui_keep_result (struct ui *ui, const char *text, size_t len, bool is_error)
{
  cleanup_free char *clean = text_clean (text, len, 1);
  const char *note = ui_result_note (clean);
  size_t body_len = note != NULL ? (size_t) (note - clean) : strlen (clean);
  while (body_len > 0 && clean[body_len - 1] == '\n')
    body_len--;
  size_t rows = body_len > 0 ? 1 : 0, shown = body_len;
  for (size_t i = 0; i < body_len; i++)
    if (clean[i] == '\n' && ++rows == UI_RESULT_ROWS + 1 && shown == body_len)
      shown = i;
  enum theme_role role = is_error ? THEME_ERROR : THEME_TEXT;
  if (body_len > 0)
    ui_add_rows (ui, clean, shown, true, THEME_TEXT);
  if (rows > UI_RESULT_ROWS)
    {
      size_t more = rows - UI_RESULT_ROWS;
      char hint[160];
      snprintf (hint, sizeof hint,
                P_ ("\xe2\x80\xa6 +%zu line (ctrl+o to see all)",
                    "\xe2\x80\xa6 +%zu lines (ctrl+o to see all)", more),
                more);
      ui_add_rows (ui, hint, strlen (hint), false, THEME_DIM);
      free (ui->last_result);
      ui->last_result = xmalloc (len + 1);
      memcpy (ui->last_result, text, len);
      ui->last_result[len] = '\0';
      ui->last_result_len = len;
    }
  if (note != NULL)
    ui_add_rows (ui, note, strlen (note), body_len == 0, role);
}

/* A call has its answer: the call line and the result go to the
 * transcript; the sample is taken back.  */
static void
ui_result (void *data, const struct session_call *call, const char *text,
           size_t len, bool is_error)
{
  struct ui *ui = data;
  if (ui->announced == call)
    ui->announced = NULL;
  for (struct ui_cmd *c = ui->cmds; c != NULL; c = c->next)
    if (c->call == call)
      {
        c->call = NULL;
        c->in_turn = false;
      }
  const char *desc = session_call_description (call);
  char *line = xasprintf ("\xe2\x97\x8f %s",
                          desc != NULL ? desc : session_call_label (call));
  transcript_add (&ui->transcript, THEME_TEXT, TRANSCRIPT_PLAIN, 2, line,
                  strlen (line));
  free (line);
  ui_keep_result (ui, text, len, is_error);
  ui_dirty (ui);
}

/* Ask the person about a call: the approval panel takes the place of the
 * box or of the panel there (under the full view, when that is open).  */
static void
ui_ask (void *data, struct session_call *call)
{
  struct ui *ui = data;
  struct approval_where where = { .workspace = ui->workspace,
                                  .home_file = ui->home_file,
                                  .confined = ui->cfg->sandbox_enabled,
                                  .rules = ui->rules };
  ui->asking = call;
  /* A connection waits on the network question, for a short while only:
   * the call's question comes after it.  */
  if (ui->panel.ops != &netask_panel_ops && ui->panel.ops != &elicit_panel_ops)
    ui_panel_open (ui, approval_panel_new (ui_host (ui), &where));
}

/* A question is no longer wanted.  */
static void
ui_withdrawn (void *data, const struct session_call *call)
{
  struct ui *ui = data;
  if (ui->asking != call)
    return;
  ui->asking = NULL;
  if (ui->panel.ops == &approval_panel_ops)
    ui_panel_close (ui);
  ui_notice (ui, THEME_DIM, _ ("(the question was withdrawn)"));
  ui_net_show (ui);
}

/* A command left running ended: said the moment it happens, whatever is
 * in the box.  */
static void
ui_ending (void *data, const char *line)
{
  struct ui *ui = data;
  bool failed = strncmp (line, "\xe2\x9c\x97", 3) == 0;
  transcript_add (&ui->transcript, failed ? THEME_ERROR : THEME_SUCCESS,
                  TRANSCRIPT_ENDING, 0, line, strlen (line));
  ui_dirty (ui);
}

/* A person-facing notice.  */
static void
ui_session_notice (void *data, const char *text)
{
  ui_notice (data, THEME_WARNING, text);
}

/* The turn is over.  */
static void
ui_turn_ended (void *data)
{
  struct ui *ui = data;
  ui->busy = false;
  ui_dirty (ui);
}

/* --- the full view ----------------------------------------------------- */

/* Open the full view on a command's output; the panel stays under it.  */
static void
ui_open_pager_cmd (struct ui *ui, struct ui_cmd *c)
{
  pager_free (ui->pager);
  ui->pager = pager_new_capture (command_capture (c->cmd), c->label);
  ui->pager_cmd = c;
  ui_dirty (ui);
}

/* Open the full view on text.  */
static void
ui_open_pager_text (struct ui *ui, const char *text, size_t len)
{
  pager_free (ui->pager);
  ui->pager = pager_new_text (text, len, _ ("the last result"));
  ui->pager_cmd = NULL;
  ui_dirty (ui);
}

/* Close the full view; the command carries on, and the panel under it, if
 * any, is back (a question answered at quitting is not).  */
static void
ui_close_pager (struct ui *ui)
{
  pager_free (ui->pager);
  ui->pager = NULL;
  ui->pager_cmd = NULL;
  if (ui->panel.ops == &approval_panel_ops && ui->asking == NULL)
    ui_panel_close (ui);
  clearok (curscr, TRUE);
  ui_dirty (ui);
}

/* --- the panels' host -------------------------------------------------- */

/* Close the open panel: the box comes back.  It is freed at the next
 * frame, so that a panel closing itself may still read its state.  */
static void
ui_panel_close (struct ui *ui)
{
  if (ui->panel.ops == NULL)
    return;
  ui->retired
      = xrealloc (ui->retired, (ui->n_retired + 1) * sizeof *ui->retired);
  ui->retired[ui->n_retired++] = ui->panel;
  ui->panel = (struct panel){ 0 };
  ui_dirty (ui);
}

/* Open p where the box was, closing the panel there.  */
static void
ui_panel_open (struct ui *ui, struct panel p)
{
  ui_panel_close (ui);
  ui->panel = p;
  ui_dirty (ui);
}

/* A panel's change is drawn at the next frame (data: the ui, as for each
 * of the host's operations below).  */
static void
ui_host_dirty (void *data)
{
  ui_dirty (data);
}

/* A panel's notice goes to the transcript.  */
static void
ui_host_notice (void *data, enum theme_role role, const char *text)
{
  ui_notice (data, role, text);
}

/* The list's Enter: the full view on a command, the list under it.  */
static void
ui_host_open_full_view (void *data, struct ui_cmd *c)
{
  ui_open_pager_cmd (data, c);
}

/* A panel closes itself.  */
static void
ui_host_close (void *data)
{
  ui_panel_close (data);
}

/* The list's rows.  */
static struct ui_cmd **
ui_host_left_running (void *data, size_t *n)
{
  struct ui *ui = data;
  return ui_cmd_left_running (ui->cmds, n);
}

/* Stop a command from the list; "Stop failed" goes until it fails again. */
static void
ui_host_stop (void *data, struct ui_cmd *c)
{
  struct ui *ui = data;
  c->stopping = true;
  c->stop_failed = false;
  supervisor_stop (ui->sup, c->cmd);
}

/* The call the approval panel asks about, NULL once there is none.  */
static struct session_call *
ui_host_question (void *data)
{
  struct ui *ui = data;
  return ui->asking;
}

/* The person answered the question: the panel closes before the session
 * hears it, as the answer may start the command or ask the next one.  */
static void
ui_host_answer (void *data, bool allowed)
{
  struct ui *ui = data;
  struct session_call *call = ui->asking;
  ui->asking = NULL;
  ui_panel_close (ui);
  if (call != NULL)
    session_answer_approval (ui->session, call, allowed);
  ui_net_show (ui);
}

/* What the panels may do.  */
static const struct panel_host ui_panel_host = {
  .dirty = ui_host_dirty,
  .notice = ui_host_notice,
  .open_full_view = ui_host_open_full_view,
  .close = ui_host_close,
  .left_running = ui_host_left_running,
  .stop = ui_host_stop,
  .question = ui_host_question,
  .answer = ui_host_answer,
};

/* The host the panels see, data: ui (filled here: struct ui starts as
 * zeroes, and the panels keep this address).  */
static const struct panel_host *
ui_host (struct ui *ui)
{
  ui->host = ui_panel_host;
  ui->host.data = ui;
  return &ui->host;
}

/* --- the network question --------------------------------------------- */

/* A question held for the netask panel.  */
struct ui_net
{
  struct netask_question q;
  char *name, *label, *server;
  uint64_t question; /* the asker's id */
  uint64_t timer;    /* NETASK_WAIT_MS from when it was asked */
  ui_net_answer_fn fn;
  void *data;
};

/* Let the held question go with answer a, told to the one who asked.  */
static void
ui_net_settle (struct ui *ui, enum netask_answer a)
{
  struct ui_net *net = ui->net;
  if (net == NULL)
    return;
  ui->net = NULL;
  loop_cancel_timer (ui->loop, net->timer);
  if (ui->panel.ops == &netask_panel_ops)
    ui_panel_close (ui);
  net->fn (net->data, net->question, a);
  free (net->name);
  free (net->label);
  free (net->server);
  free (net);
}

/* Open the netask panel for the held question, unless a call's question
 * is open; the call's question waiting behind it comes after.  */
static void
ui_net_show (struct ui *ui)
{
  if (ui->net != NULL && ui->panel.ops != &netask_panel_ops
      && ui->panel.ops != &approval_panel_ops
      && ui->panel.ops != &elicit_panel_ops)
    ui_panel_open (ui, netask_panel_new (ui_host (ui), &ui->net_host));
  else if (ui->net == NULL && ui->asking != NULL
           && ui->panel.ops != &approval_panel_ops
           && ui->panel.ops != &elicit_panel_ops)
    ui_ask (ui, ui->asking);
  ui_dirty (ui);
}

/* No answer in time: the connection is refused.  */
static void
ui_net_timeout (struct loop *loop, void *data)
{
  struct ui *ui = data;
  (void) loop;
  ui->net->timer = 0;
  cleanup_free char *text
      = xasprintf (_ ("%s was refused: the question about it was not "
                      "answered within %u seconds"),
                   ui->net->name, NETASK_WAIT_MS / 1000);
  ui_net_settle (ui, NETASK_REFUSE);
  ui_notice (ui, THEME_WARNING, text);
  ui_net_show (ui);
}

/* The question the netask panel shows, NULL once there is none.  */
static const struct netask_question *
ui_net_question (void *data)
{
  struct ui *ui = data;
  return ui->net != NULL ? &ui->net->q : NULL;
}

/* Write name to this workspace's domains; false, saying why, when it
 * cannot be.  */
static bool
ui_net_save (struct ui *ui, const char *name)
{
  struct cr_error *err = NULL;
  if (ui->home_file == NULL)
    cr_error_set (&err, 0, "%s",
                  _ ("HOME is not set, so there is no home configuration"));
  else if (config_home_add_domain (ui->home_file, ui->workspace, name, &err)
           == 0)
    {
      /* The session's later commands have it too, as the next session
       * will from the file.  */
      config_allow_domain (ui->cfg, name);
      cleanup_free char *text
          = xasprintf (_ ("%s is allowed in this workspace from now on (%s)"),
                       name, ui->home_file);
      ui_notice (ui, THEME_DIM, text);
      return true;
    }
  cleanup_free char *text
      = xasprintf (_ ("%s was not saved: %s; it is allowed for this command"),
                   name, err->msg);
  cr_error_free (err);
  ui_notice (ui, THEME_WARNING, text);
  return false;
}

/* The person answered the network question.  */
static void
ui_net_answer (void *data, enum netask_answer a)
{
  struct ui *ui = data;
  if (ui->net == NULL)
    return;
  if (a == NETASK_ALWAYS && !ui_net_save (ui, ui->net->name))
    a = NETASK_COMMAND;
  ui_net_settle (ui, a);
  ui_net_show (ui);
}

/* The label of the command whose sandbox ID is id, or NULL.  */
static const char *
ui_net_label (struct ui *ui, const char *id)
{
  for (struct ui_cmd *c = ui->cmds; c != NULL; c = c->next)
    if (strcmp (command_sandbox_id (c->cmd), id) == 0)
      return c->label;
  return NULL;
}

void
ui_net_ask (struct ui *ui, uint64_t question, const char *name,
            const char *sandbox_id, ui_net_answer_fn fn, void *data)
{
  if (ui->quitting)
    {
      fn (data, question, NETASK_REFUSE);
      return;
    }
  /* The asker asks one question at a time: a new one means the one held
   * is over there (its own clock ran out first), so it goes, refused,
   * which the asker ignores.  */
  ui_net_settle (ui, NETASK_REFUSE);
  struct ui_net *net = xcalloc (1, sizeof *net);
  const char *label = ui_net_label (ui, sandbox_id);
  net->name = xstrdup (name);
  net->label = label != NULL ? xstrdup (label) : NULL;
  /* An MCP server's question says which server asks.  */
  const char *server = label == NULL && ui->session != NULL
                           ? session_net_server (ui->session, sandbox_id)
                           : NULL;
  net->server = server != NULL ? xstrdup (server) : NULL;
  net->q = (struct netask_question){ .name = net->name,
                                     .label = net->label,
                                     .server = net->server,
                                     .deadline_ms
                                     = clock_now_ms () + NETASK_WAIT_MS };
  net->question = question;
  net->fn = fn;
  net->data = data;
  net->timer = loop_add_timer (ui->loop, NETASK_WAIT_MS, ui_net_timeout, ui);
  ui->net = net;
  ui->net_host = (struct netask_host){ .question = ui_net_question,
                                       .answer = ui_net_answer,
                                       .data = ui };
  ui_net_show (ui);
}

/* The person's answer, handed back to the proxy that asked.  */
static void
ui_net_answered (void *data, uint64_t question, enum netask_answer a)
{
  struct ui *ui = data;
  static const enum proxy_answer to_proxy[] = {
    [NETASK_REFUSE] = PROXY_ANSWER_REFUSE,
    [NETASK_COMMAND] = PROXY_ANSWER_COMMAND,
    [NETASK_ALWAYS] = PROXY_ANSWER_ALWAYS,
  };
  supervisor_net_answer (ui->sup, question, to_proxy[a]);
}

/* The proxy's question about a name a command's policy does not allow
 * (supervisor_set_net_asker): asked in the netask panel.  */
static void
ui_on_net_question (void *data, uint64_t question, struct proxy_client *c,
                    const char *name)
{
  struct ui *ui = data;
  ui_net_ask (ui, question, name, proxy_client_sandbox_id (c), ui_net_answered,
              ui);
}

/* --- a server's own question ------------------------------------------ */

/* A server's question held for the elicit panel.  */
struct ui_elicit
{
  struct elicit_question q;
  char *server, *message, *schema;
  struct mcphost_elicitation *handle;
};

/* Let the held question go with answer a (accepted: content, the
 * fields' values as a JSON object).  */
static void
ui_elicit_settle (struct ui *ui, enum mcpclient_elicit_action a,
                  const char *content)
{
  struct ui_elicit *e = ui->elicit;
  if (e == NULL)
    return;
  ui->elicit = NULL;
  if (ui->panel.ops == &elicit_panel_ops)
    ui_panel_close (ui);
  session_elicit_answer (ui->session, e->handle, a,
                         a == MCPCLIENT_ELICIT_ACCEPT ? content : NULL);
  free (e->server);
  free (e->message);
  free (e->schema);
  free (e);
}

/* The question the elicit panel shows, NULL once there is none.  */
static const struct elicit_question *
ui_elicit_question (void *data)
{
  struct ui *ui = data;
  return ui->elicit != NULL ? &ui->elicit->q : NULL;
}

/* The person answered the server's question; a question waiting behind
 * it comes next.  */
static void
ui_elicit_answer (void *data, enum mcpclient_elicit_action a,
                  const char *content)
{
  struct ui *ui = data;
  ui_elicit_settle (ui, a, content);
  ui_net_show (ui);
}

/* A server asks the person (session_frontend.elicit): put in the elicit
 * panel, one at a time; one asked while another question is open is
 * cancelled, saying so once a turn.  */
static void
ui_on_elicit (void *data, const char *server, struct mcphost_elicitation *q,
              const char *message, const char *schema)
{
  struct ui *ui = data;
  if (ui->quitting || ui->elicit != NULL || ui->net != NULL
      || ui->panel.ops == &approval_panel_ops)
    {
      session_elicit_answer (ui->session, q, MCPCLIENT_ELICIT_CANCEL, NULL);
      if (ui->elicit_cancel_told)
        return;
      ui->elicit_cancel_told = true;
      cleanup_free char *text = xasprintf (
          _ ("the question of MCP server `%s` was cancelled: another "
             "question was open"),
          server);
      ui_notice (ui, THEME_WARNING, text);
      return;
    }
  struct ui_elicit *e = xcalloc (1, sizeof *e);
  e->server = xstrdup (server);
  e->message = xstrdup (message);
  e->schema = xstrdup (schema != NULL ? schema : "");
  e->handle = q;
  e->q = (struct elicit_question){ .server = e->server,
                                   .message = e->message,
                                   .schema = e->schema };
  ui->elicit = e;
  ui->elicit_host = (struct elicit_host){ .question = ui_elicit_question,
                                          .answer = ui_elicit_answer,
                                          .data = ui };
  ui_panel_open (ui, elicit_panel_new (ui_host (ui), &ui->elicit_host));
  ui_dirty (ui);
}

/* --- quitting ---------------------------------------------------------- */

/* Quit: every process group ends, saying how many first.  */
static void
ui_quit (struct ui *ui)
{
  if (ui->quitting)
    return;
  ui->quitting = true;
  ui->stopped_at_exit = supervisor_slots_held (ui->sup);
  if (ui->stopped_at_exit > 0)
    {
      char text[160];
      snprintf (text, sizeof text,
                P_ ("stopping %zu command that is still running\xe2\x80\xa6",
                    "stopping %zu commands that are still running\xe2\x80\xa6",
                    ui->stopped_at_exit),
                ui->stopped_at_exit);
      ui_notice (ui, THEME_WARNING, text);
      ui->dirty = true;
      ui_frame (ui->loop, ui);
    }
  if (ui->asking != NULL)
    {
      struct session_call *call = ui->asking;
      ui->asking = NULL;
      session_answer_approval (ui->session, call, false);
    }
  ui_net_settle (ui, NETASK_REFUSE);
  ui_elicit_settle (ui, MCPCLIENT_ELICIT_CANCEL, NULL);
  session_end_now (ui->session);
}

/* --- keys at the prompt ------------------------------------------------ */

/* Ctrl+B: leave the turn's command running, or list those left running. */
static void
ui_ctrl_b (struct ui *ui)
{
  if (ui->busy && session_detach (ui->session))
    return;
  size_t n;
  free (ui_cmd_left_running (ui->cmds, &n));
  if (n == 0)
    {
      ui_hint (ui, _ ("nothing is running"));
      return;
    }
  ui_panel_open (ui, tasks_panel_new (ui_host (ui)));
}

/* Ctrl+O: the whole of the running command, or of the last cut result.  */
static void
ui_ctrl_o (struct ui *ui)
{
  struct ui_cmd *newest = NULL;
  for (struct ui_cmd *c = ui->cmds; c != NULL; c = c->next)
    if (c->in_turn)
      newest = newest == NULL ? c : newest;
  if (newest != NULL)
    ui_open_pager_cmd (ui, newest);
  else if (ui->last_result != NULL)
    ui_open_pager_text (ui, ui->last_result, ui->last_result_len);
  else
    ui_hint (ui, _ ("there is nothing to show in full yet"));
}

/* /sandbox, /sandbox enable, /sandbox disable.  */
static void
ui_slash_sandbox (struct ui *ui, const char *arg)
{
  if (*arg == '\0')
    {
      ui_panel_open (ui,
                     sandbox_panel_new (ui_host (ui), ui->cfg, ui->workspace));
      return;
    }
  if (strcmp (arg, "enable") != 0 && strcmp (arg, "disable") != 0)
    {
      ui_notice (ui, THEME_ERROR, _ ("usage: /sandbox [enable|disable]"));
      return;
    }
  cleanup_free char *message = NULL;
  int status
      = cmd_sandbox_set (strcmp (arg, "enable") == 0, ui->workspace, &message);
  ui_notice (ui, status == 0 ? THEME_SUCCESS : THEME_ERROR, message);
  if (status == 0)
    ui_notice (ui, THEME_DIM,
               _ ("the change applies to sessions started from now on"));
}

/* A line starting with '/'.  */
static void
ui_slash (struct ui *ui, const char *line)
{
  const char *arg = line + strcspn (line, " ");
  size_t n = (size_t) (arg - line);
  arg += strspn (arg, " ");
  if (n == 6 && strncmp (line, "/clear", n) == 0)
    {
      /* Commands left running are a fact about the machine, not about the
       * conversation: they stay.  */
      transcript_clear (&ui->transcript);
      ui_dirty (ui);
    }
  else if (n == 5 && strncmp (line, "/quit", n) == 0)
    ui_quit (ui);
  else if (n == 8 && strncmp (line, "/sandbox", n) == 0)
    ui_slash_sandbox (ui, arg);
  else if (n == 5 && strncmp (line, "/help", n) == 0)
    ui_notice (ui, THEME_DIM,
               _ ("/sandbox [enable|disable] · /clear · /help · /quit · "
                  "ctrl+b leaves a command running or lists them · ctrl+o "
                  "shows all of one · esc interrupts · shift+tab changes the "
                  "mode · ctrl+d quits"));
  else
    {
      cleanup_free char *text
          = xasprintf (_ ("unknown command %.*s (try /help)"), (int) n, line);
      ui_notice (ui, THEME_ERROR, text);
    }
}

/* Enter: a slash command, or a prompt (queued while a turn runs).  */
static void
ui_submit (struct ui *ui)
{
  cleanup_free char *line = prompt_take (&ui->prompt);
  if (line[strspn (line, " \t\n")] == '\0')
    return;
  if (line[0] == '/')
    ui_slash (ui, line);
  else
    {
      if (ui->busy)
        ui_hint (ui, _ ("queued for when this turn ends"));
      session_prompt (ui->session, line);
    }
  ui->transcript.scroll = 0;
  ui_dirty (ui);
}

/* Shift+Tab: the next mode.  */
static void
ui_cycle_mode (struct ui *ui)
{
  enum rules_mode m = rules_mode (ui->rules) == RULES_MODE_ASK
                          ? RULES_MODE_FULL_ACCESS
                          : RULES_MODE_ASK;
  rules_set_mode (ui->rules, m);
  ui_dirty (ui);
}

/* Ctrl+Z: give the terminal back, stop, and take it again.  */
static void
ui_suspend (struct ui *ui)
{
  def_prog_mode ();
  fputs (UI_TERM_LEAVE, stdout);
  fflush (stdout);
  endwin ();
  raise (SIGTSTP);
  fputs (UI_TERM_ENTER, stdout);
  fflush (stdout);
  reset_prog_mode ();
  clearok (curscr, TRUE);
  ui_dirty (ui);
}

/* Ctrl+C: clear the box; on an empty box, twice quits.  */
static void
ui_ctrl_c (struct ui *ui)
{
  uint64_t now = clock_now_ms ();
  if (!prompt_empty (&ui->prompt))
    {
      prompt_reset (&ui->prompt);
      ui->ctrl_c_ms = 0;
    }
  else if (ui->ctrl_c_ms != 0 && now - ui->ctrl_c_ms < UI_CTRL_C_MS)
    ui_quit (ui);
  else
    {
      ui->ctrl_c_ms = now;
      ui_hint (ui, _ ("press ctrl+c again to quit"));
    }
}

/* Editing keys of the box, by name.  */
static bool
ui_edit_key (struct ui *ui, const TermKeyKey *key)
{
  static const struct
  {
    TermKeySym sym;
    int mods;
    enum prompt_edit edit;
  } syms[] = {
    { TERMKEY_SYM_LEFT, 0, PROMPT_LEFT },
    { TERMKEY_SYM_RIGHT, 0, PROMPT_RIGHT },
    { TERMKEY_SYM_LEFT, TERMKEY_KEYMOD_CTRL, PROMPT_WORD_LEFT },
    { TERMKEY_SYM_RIGHT, TERMKEY_KEYMOD_CTRL, PROMPT_WORD_RIGHT },
    { TERMKEY_SYM_HOME, 0, PROMPT_HOME },
    { TERMKEY_SYM_END, 0, PROMPT_END },
    { TERMKEY_SYM_BACKSPACE, 0, PROMPT_BACKSPACE },
    { TERMKEY_SYM_DELETE, 0, PROMPT_DELETE },
    { TERMKEY_SYM_UP, 0, PROMPT_HISTORY_UP },
    { TERMKEY_SYM_DOWN, 0, PROMPT_HISTORY_DOWN },
  };
  static const struct
  {
    char c;
    enum prompt_edit edit;
  } ctrls[] = { { 'a', PROMPT_HOME },      { 'e', PROMPT_END },
                { 'k', PROMPT_KILL_END },  { 'u', PROMPT_KILL_HOME },
                { 'w', PROMPT_KILL_WORD }, { 'h', PROMPT_BACKSPACE } };
  if (key->type == TERMKEY_TYPE_KEYSYM)
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
      if (key->code.sym == syms[i].sym && key->modifiers == syms[i].mods)
        {
          prompt_edit (&ui->prompt, syms[i].edit);
          return true;
        }
  if (key->type == TERMKEY_TYPE_UNICODE
      && key->modifiers == TERMKEY_KEYMOD_CTRL)
    for (size_t i = 0; i < sizeof ctrls / sizeof *ctrls; i++)
      if (key->code.codepoint == ctrls[i].c)
        {
          prompt_edit (&ui->prompt, ctrls[i].edit);
          return true;
        }
  return false;
}

/* A control key naming something other than editing.  */
static bool
ui_ctrl_key (struct ui *ui, const TermKeyKey *key)
{
  if (key->type != TERMKEY_TYPE_UNICODE
      || key->modifiers != TERMKEY_KEYMOD_CTRL)
    return false;
  switch (key->code.codepoint)
    {
    case 'b':
      ui_ctrl_b (ui);
      return true;
    case 'o':
      ui_ctrl_o (ui);
      return true;
    case 'c':
      ui_ctrl_c (ui);
      return true;
    case 'd':
      if (!prompt_empty (&ui->prompt))
        return false;
      ui_quit (ui);
      return true;
    case 'z':
      ui_suspend (ui);
      return true;
    case 'l':
      clearok (curscr, TRUE);
      return true;
    default:
      return false;
    }
}

/* A named key naming something other than editing.  */
static bool
ui_sym_key (struct ui *ui, const TermKeyKey *key)
{
  if (key->type != TERMKEY_TYPE_KEYSYM)
    return false;
  if (key->code.sym == TERMKEY_SYM_TAB
      && key->modifiers == TERMKEY_KEYMOD_SHIFT)
    ui_cycle_mode (ui);
  else if (key->code.sym == TERMKEY_SYM_ENTER && key->modifiers == 0)
    ui_submit (ui);
  else if (key->code.sym == TERMKEY_SYM_ESCAPE)
    {
      if (ui->busy && session_cancel (ui->session))
        ui_notice (ui, THEME_WARNING, _ ("interrupted"));
    }
  else if (key->code.sym == TERMKEY_SYM_PAGEUP)
    transcript_scroll (&ui->transcript, LINES / 2);
  else if (key->code.sym == TERMKEY_SYM_PAGEDOWN)
    transcript_scroll (&ui->transcript, -LINES / 2);
  else
    return false;
  return true;
}

/* The mouse wheel scrolls the transcript.  */
static void
ui_mouse (struct ui *ui, TermKey *tk, const TermKeyKey *key)
{
  TermKeyMouseEvent ev;
  int button, line, col;
  if (termkey_interpret_mouse (tk, key, &ev, &button, &line, &col)
          != TERMKEY_RES_KEY
      || ev != TERMKEY_MOUSE_PRESS)
    return;
  if (ui->pager != NULL)
    return;
  if (button == 4)
    transcript_scroll (&ui->transcript, 3);
  else if (button == 5)
    transcript_scroll (&ui->transcript, -3);
}

/* A key from the terminal.  */
static void
ui_on_key (void *data, TermKey *tk, const TermKeyKey *key)
{
  struct ui *ui = data;
  bool was_ctrl_c = key->type == TERMKEY_TYPE_UNICODE
                    && key->modifiers == TERMKEY_KEYMOD_CTRL
                    && key->code.codepoint == 'c';
  if (ui->hint != NULL && !was_ctrl_c)
    ui_hint (ui, NULL);
  if (!was_ctrl_c)
    ui->ctrl_c_ms = 0;
  if (key->type == TERMKEY_TYPE_MOUSE)
    ui_mouse (ui, tk, key);
  else if (ui->pager != NULL)
    {
      if (!pager_key (ui->pager, tk, key))
        ui_close_pager (ui);
    }
  else if (ui->panel.ops != NULL)
    ui->panel.ops->key (ui->panel.state, tk, key);
  else if (ui_ctrl_key (ui, key) || ui_sym_key (ui, key)
           || ui_edit_key (ui, key))
    ;
  else if (key->type == TERMKEY_TYPE_UNICODE
           && (key->modifiers & ~TERMKEY_KEYMOD_SHIFT) == 0)
    prompt_insert (&ui->prompt, key->utf8, strlen (key->utf8));
  ui_dirty_now (ui);
}

/* A bracketed paste goes into the box whole.  */
static void
ui_on_paste (void *data, const char *text, size_t len)
{
  struct ui *ui = data;
  if (ui->pager != NULL || ui->panel.ops != NULL)
    return;
  /* Terminals paste a line break as CR (the Enter key); in the box it is
   * a newline, so the paste runs as the lines it was.  */
  struct buf b = BUF_INIT;
  for (size_t i = 0; i < len; i++)
    {
      if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
        continue;
      buf_putc (&b, text[i] == '\r' ? '\n' : text[i]);
    }
  if (b.len > 0)
    prompt_insert (&ui->prompt, b.data, b.len);
  buf_free (&b);
  ui_dirty_now (ui);
}

/* The keys of one read are in: the key frame is drawn now, before the
 * loop reads what a flood sent meanwhile.  */
static void
ui_on_keys_read (void *data)
{
  struct ui *ui = data;
  if (ui->key_timer == 0)
    return;
  loop_cancel_timer (ui->loop, ui->key_timer);
  ui_key_frame (ui->loop, ui);
}

/* The terminal went away: quit.  */
static void
ui_on_closed (void *data)
{
  struct ui *ui = data;
  if (ui->host_signal == 0)
    ui->host_signal = SIGHUP;
  ui_quit (ui);
}

/* --- signals, the terminal --------------------------------------------- */

/* SIGWINCH: take the new size.  */
static void
ui_resize (struct ui *ui)
{
  struct winsize ws;
  if (ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0
      && ws.ws_col > 0)
    resize_term (ws.ws_row, ws.ws_col);
  for (struct ui_cmd *c = ui->cmds; c != NULL; c = c->next)
    sample_resize (c->sample, COLS - 4);
  if (ui->panel.ops != NULL && ui->panel.ops->resize != NULL)
    ui->panel.ops->resize (ui->panel.state, COLS);
  clearok (curscr, TRUE);
  ui_dirty (ui);
}

/* Signals from the loop.  */
static void
ui_on_signal (struct loop *loop, int signo, void *data)
{
  struct ui *ui = data;
  if (signo == SIGWINCH)
    {
      ui_resize (ui);
      return;
    }
  if (signo == SIGCONT)
    {
      clearok (curscr, TRUE);
      ui_dirty (ui);
      return;
    }
  if (ui->host_signal == 0)
    ui->host_signal = signo;
  ui_quit (ui);
}

/* Take the terminal: curses owns termios and the screen.  */
static int
ui_term_enter (struct ui *ui, struct cr_error **err)
{
  /* Ask terminfo first: a newterm that fails cannot be undone.  */
  SCREEN *scr
      = terminfo_known (STDOUT_FILENO) ? newterm (NULL, stdout, stdin) : NULL;
  if (scr == NULL)
    return cr_error_set (err, 0, _ ("the terminal '%s' is not known"),
                         getenv ("TERM") != NULL ? getenv ("TERM") : "");
  set_term (scr);
  raw ();
  noecho ();
  nonl ();
  intrflush (stdscr, FALSE);
  fputs (UI_TERM_ENTER, stdout);
  fflush (stdout);
  return 0;
}

/* Give the terminal back.  */
static void
ui_term_leave (void)
{
  fputs (UI_TERM_LEAVE, stdout);
  fflush (stdout);
  endwin ();
}

/* --- start and end ----------------------------------------------------- */

/* Print the usage.  */
static void
ui_usage (FILE *out)
{
  fputs (_ ("Usage: crucible [--agent CMD] [--theme NAME] [DIR]\n"
            "Open the full-screen session in DIR (default: the current "
            "directory).\n"
            "Without an agent, each line typed in the box is one bash "
            "call.\n"
            "Keys: ctrl+b leaves a command running or lists them, ctrl+o "
            "shows all of\n"
            "one, esc interrupts the turn, shift+tab changes the mode, "
            "ctrl+d quits.\n"),
         out);
}

/* The full-screen session's options.  */
enum ui_option
{
  UI_OPT_AGENT,
  UI_OPT_THEME,
  UI_OPT_HELP,
  UI_OPT_VERSION
};

static const struct options_spec ui_option_specs[] = {
  { "--agent", NULL, UI_OPT_AGENT, true },
  { "--theme", NULL, UI_OPT_THEME, true },
  { "--help", "-h", UI_OPT_HELP, false },
  { "--version", NULL, UI_OPT_VERSION, false },
};

static const struct options_table ui_option_table
    = OPTIONS_TABLE (ui_option_specs, OPTIONS_OPERANDS);

/* Parse the options; errors say which option and why.  */
static int
ui_parse (struct ui_options *o, int argc, char **argv, struct cr_error **err)
{
  struct options_parser p;
  int c;
  options_begin (&p, &ui_option_table, argc, argv);
  while ((c = options_next (&p)) != OPTIONS_END)
    switch (c)
      {
      case UI_OPT_AGENT:
        o->agent = p.value;
        break;
      case UI_OPT_THEME:
        o->theme = p.value;
        break;
      case UI_OPT_HELP:
        o->help = true;
        break;
      case UI_OPT_VERSION:
        o->version = true;
        break;
      default:
        return options_error (&p, c, err);
      }
  return front_session_operands (argc, argv, p.next, &o->dir, o->agent, err);
}

/* Watch keys and signals.  */
static int
ui_watch (struct ui *ui, struct cr_error **err)
{
  const int signals[] = { SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGCONT };
  for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
    if (loop_add_signal (ui->loop, signals[i], ui_on_signal, ui, err) < 0)
      return -1;
  struct keys_handler kh = { .key = ui_on_key,
                             .paste = ui_on_paste,
                             .closed = ui_on_closed,
                             .read_done = ui_on_keys_read,
                             .data = ui };
  ui->keys = keys_new (ui->loop, STDIN_FILENO, &kh, err);
  return ui->keys != NULL ? 0 : -1;
}

/* The wait for every command to be gone ran out.  */
static void
ui_on_exit_timeout (struct loop *loop, void *data)
{
  struct ui *ui = data;
  ui->quit_now = true;
}

/* Run until the person quits and everything the session started is gone. */
static int
ui_drive (struct ui *ui, struct cr_error **err)
{
  uint64_t exit_timer = 0;
  ui->tick_timer = loop_add_timer (ui->loop, 1000, ui_tick, ui);
  ui_dirty (ui);
  while (!ui->quit_now && !session_done (ui->session))
    {
      if (loop_run_once (ui->loop, -1, err) < 0)
        return -1;
      if (ui->quitting && exit_timer == 0)
        exit_timer = loop_add_timer (ui->loop, SESSION_EXIT_WAIT_MS,
                                     ui_on_exit_timeout, ui);
    }
  loop_cancel_timer (ui->loop, exit_timer);
  return 0;
}

/* Free what the UI holds.  */
static void
ui_clear (struct ui *ui)
{
  while (ui->cmds != NULL)
    {
      struct ui_cmd *c = ui->cmds;
      ui->cmds = c->next;
      sample_free (c->sample);
      free (c->label);
      free (c);
    }
  pager_free (ui->pager);
  ui->pager = NULL;
  ui->pager_cmd = NULL;
  ui_net_settle (ui, NETASK_REFUSE);
  if (ui->panel.ops != NULL)
    ui->panel.ops->free (ui->panel.state);
  ui_panel_reap (ui);
  transcript_clear (&ui->transcript);
  prompt_clear_all (&ui->prompt);
  free (ui->last_result);
  free (ui->hint);
  loop_cancel_timer (ui->loop, ui->frame_timer);
  loop_cancel_timer (ui->loop, ui->key_timer);
  loop_cancel_timer (ui->loop, ui->tick_timer);
}

/* Load the theme; a configured theme that cannot be read falls back to
 * the compiled-in default, saying why in one line.  */
static void
ui_theme (struct ui *ui, const char *name)
{
  struct cr_error *err = NULL;
  if (theme_load (name, NULL, &err) == 0)
    return;
  ui_notice (ui, THEME_WARNING, err->msg);
  cr_error_free (err);
  theme_load_default ();
}

/* The session, with the terminal taken.  */
static int
ui_run (struct ui *ui, const struct ui_options *opts)
{
  struct cr_error *err = NULL;
  int status = 0;
  /* The full view has every byte that arrived: each command's capture
   * spools it into an unlinked file here.  */
  const char *tmp = getenv ("TMPDIR");
  struct supervisor_observer obs
      = { .started = ui_on_started,
          .output = ui_on_output,
          .stop_failed = ui_on_stop_failed,
          .cleaned = ui_on_cleaned,
          .data = ui,
          .spool_dir = tmp != NULL && *tmp ? tmp : "/tmp" };
  supervisor_set_observer (ui->sup, &obs);
  supervisor_set_net_asker (ui->sup, ui_on_net_question, ui);
  struct session_options so
      = { .agent_command
          = opts->agent != NULL ? opts->agent : ui->cfg->agent_command,
          .workspace = ui->workspace,
          .agent_env = environ,
          .rules = ui->rules,
          .servers = ui->servers };
  struct session_frontend fe = { .turn_started = ui_turn_started,
                                 .text = ui_text,
                                 .call = ui_call,
                                 .result = ui_result,
                                 .ask = ui_ask,
                                 .withdrawn = ui_withdrawn,
                                 .ending = ui_ending,
                                 .notice = ui_session_notice,
                                 .turn_ended = ui_turn_ended,
                                 .data = ui,
                                 .elicit = ui_on_elicit };
  ui->session = session_new (ui->loop, ui->sup, &so, &fe);
  cleanup_free char *history = prompt_history_path ();
  prompt_init (&ui->prompt, history);
  if (ui_term_enter (ui, &err) < 0)
    status = -1;
  else
    {
      ui_theme (ui, opts->theme != NULL ? opts->theme : ui->cfg->theme);
      if (ui_watch (ui, &err) < 0 || ui_drive (ui, &err) < 0)
        status = -1;
      keys_free (ui->keys);
      ui_term_leave ();
    }
  if (status < 0)
    {
      fprintf (stderr, "crucible: %s\n", err->msg);
      cr_error_free (err);
      status = UI_EXIT_FAILED;
    }
  else if (!session_done (ui->session))
    {
      fprintf (stderr, _ ("crucible: could not confirm that every process "
                          "the session started has ended\n"));
      status = UI_EXIT_FAILED;
    }
  else if (ui->stopped_at_exit > 0)
    printf (P_ ("crucible: stopped %zu command that was still running\n",
                "crucible: stopped %zu commands that were still running\n",
                ui->stopped_at_exit),
            ui->stopped_at_exit);
  /* A server's question still held goes before its host does.  */
  ui_elicit_settle (ui, MCPCLIENT_ELICIT_CANCEL, NULL);
  session_free (ui->session);
  return status;
}

/* Fail before the terminal was taken.  */
static int
ui_fail (struct cr_error *err)
{
  fprintf (stderr, "crucible: %s\n", err->msg);
  cr_error_free (err);
  return UI_EXIT_FAILED;
}

int
ui_main (int argc, char **argv)
{
  struct ui_options opts = { 0 };
  struct cr_error *err = NULL;
  struct ui ui = { 0 };

  if (ui_parse (&opts, argc, argv, &err) < 0)
    {
      fprintf (stderr, "crucible: %s\n", err->msg);
      cr_error_free (err);
      ui_usage (stderr);
      return UI_EXIT_USAGE;
    }
  if (opts.help || opts.version)
    {
      if (opts.help)
        ui_usage (stdout);
      else
        printf ("crucible %s\n", PACKAGE_VERSION);
      return 0;
    }
  if (!isatty (STDIN_FILENO) || !isatty (STDOUT_FILENO))
    {
      fputs (!isatty (STDIN_FILENO)
                 ? _ ("crucible: the session needs a terminal, and standard "
                      "input is not one; for a session over pipes use "
                      "crucible session, for one command crucible run\n")
                 : _ ("crucible: the session needs a terminal, and standard "
                      "output is not one; for a session over pipes use "
                      "crucible session, for one command crucible run\n"),
             stderr);
      return UI_EXIT_FAILED;
    }
  struct host host;
  if (host_open (&host, HOST_IN_DIR, opts.dir, &err) < 0)
    {
      host_close (&host);
      return ui_fail (err);
    }
  ui.cfg = host.cfg;
  ui.rules = host.rules;
  ui.workspace = host.workspace;
  /* Where the approval panel's rules go; without HOME, nowhere.  */
  struct cr_error *no_home = NULL;
  ui.home_file = config_home_path (&no_home);
  cr_error_free (no_home);
  int status = host_start (&host, &err);
  if (status == HOST_REFUSED)
    {
      fprintf (stderr, "crucible: %s\n", host.refusal);
      status = UI_EXIT_FAILED;
    }
  else if (status < 0)
    status = ui_fail (err);
  else
    {
      ui.loop = host.loop;
      ui.sup = host.sup;
      /* The configured MCP servers, each agent turn a run of theirs.  */
      struct mcphost_config servers = { .loop = host.loop,
                                        .backend = host.backend,
                                        .config = host.cfg,
                                        .workspace = host.workspace,
                                        .host_env = environ,
                                        .journal = host.journal };
      ui.servers = host.backend != NULL ? &servers : NULL;
      transcript_init (&ui.transcript);
      status = ui_run (&ui, &opts);
      ui_clear (&ui);
    }
  host_close (&host);
  free (ui.home_file);
  if (status == 0 && ui.host_signal != 0 && ui.host_signal != SIGHUP)
    return 128 + ui.host_signal;
  return status;
}
