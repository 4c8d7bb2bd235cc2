/* The approval panel.  */
#include <config.h>

#include "tui/approval.h"

#include <stdlib.h>
#include <string.h>

#include "core/cmdline.h"
#include "lib/buf.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/screen.h"
#include "tui/ui.h"

enum approval_choice
{
  APPROVAL_ALLOW,
  APPROVAL_DENY,
  APPROVAL_CHOICES
};

/* The programs a line runs, as the reader found them ("npm, node"), or
 * NULL when it could not be read.  Owned by the caller.  */
static char *
approval_programs (const char *line)
{
  struct cmdline *cl = NULL;
  struct cr_error *err = NULL;
  if (cmdline_read (line, strlen (line), &cl, &err) < 0)
    {
      cr_error_free (err);
      return NULL;
    }
  struct buf b = BUF_INIT;
  for (size_t i = 0; i < cl->n; i++)
    {
      const struct cmdline_command *c = &cl->cmds[i];
      if (c->argc == 0 || c->transparent)
        continue;
      const char *prog = c->argv[c->program];
      /* Each program once.  */
      if (b.data != NULL && strstr (b.data, prog) != NULL)
        continue;
      if (b.len > 0)
        buf_puts (&b, ", ");
      buf_puts (&b, prog);
    }
  cmdline_free (cl);
  return buf_steal (&b, NULL);
}

void
approval_lines (struct ui *ui, int cols, struct screen_lines *out)
{
  struct session_call *call = ui->asking;
  if (call == NULL)
    return;
  char *rule = screen_rule (cols);
  screen_lines_add (out, THEME_BORDER, "%s", rule);
  free (rule);
  screen_lines_add (out, THEME_ACCENT, "%s",
                    _ ("The agent wants to run a command"));
  const char *desc = session_call_description (call);
  if (desc != NULL)
    screen_lines_add (out, THEME_TEXT, "  %s", desc);
  screen_lines_add (out, THEME_TEXT, "  %s", session_call_label (call));
  char *progs = approval_programs (session_call_line (call));
  if (progs != NULL)
    screen_lines_add (out, THEME_TEXT, _ ("  runs: %s"), progs);
  else
    screen_lines_add (out, THEME_WARNING, "  %s",
                      _ ("the line could not be read far enough to say which "
                         "programs it runs"));
  free (progs);
  screen_lines_add (out, THEME_TEXT, _ ("  in: %s"), ui->workspace);
  if (ui->cfg->sandbox_enabled)
    screen_lines_add (out, THEME_TEXT, "  %s",
                      _ ("confinement: on (it runs inside the sandbox)"));
  else
    screen_lines_add (out, THEME_WARNING, "  %s",
                      _ ("confinement: off (it runs with your own access)"));
  if (session_call_background (call))
    screen_lines_add (out, THEME_WARNING, "  %s",
                      _ ("it will still be running after the turn ends"));
  screen_lines_add (out, THEME_TEXT, "%s", "");
  static const char *const choices[APPROVAL_CHOICES]
      = { N_ ("Allow once"), N_ ("Deny") };
  for (int i = 0; i < APPROVAL_CHOICES; i++)
    screen_lines_add (out, i == ui->approval_sel ? THEME_ACCENT : THEME_TEXT,
                      "%s %d. %s", i == ui->approval_sel ? "\xe2\x80\xba" : " ",
                      i + 1, _ (choices[i]));
  screen_lines_add (out, THEME_DIM, "%s",
                    _ ("enter chooses \xc2\xb7 esc denies"));
}

/* Answer the question and close the panel.  */
static void
approval_answer (struct ui *ui, bool allow)
{
  struct session_call *call = ui->asking;
  ui->asking = NULL;
  ui->panel = UI_PANEL_NONE;
  if (call != NULL)
    session_answer_approval (ui->session, call, allow);
}

void
approval_key (struct ui *ui, TermKey *tk, const TermKeyKey *key)
{
  if (key->type == TERMKEY_TYPE_KEYSYM)
    switch (key->code.sym)
      {
      case TERMKEY_SYM_ESCAPE:
        approval_answer (ui, false);
        break;
      case TERMKEY_SYM_UP:
        if (ui->approval_sel > 0)
          ui->approval_sel--;
        break;
      case TERMKEY_SYM_DOWN:
        if (ui->approval_sel + 1 < APPROVAL_CHOICES)
          ui->approval_sel++;
        break;
      case TERMKEY_SYM_ENTER:
        approval_answer (ui, ui->approval_sel == APPROVAL_ALLOW);
        break;
      default:
        break;
      }
  else if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0)
    {
      if (key->code.codepoint == '1' || key->code.codepoint == 'y')
        approval_answer (ui, true);
      else if (key->code.codepoint == '2' || key->code.codepoint == 'n')
        approval_answer (ui, false);
    }
  ui_dirty (ui);
}
