/* The approval panel.  */
#include <config.h>

#include "tui/approval.h"

#include <stdlib.h>
#include <string.h>

#include "core/cmdline.h"
#include "core/config.h"
#include "core/permit.h"
#include "core/session.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/screen.h"

enum approval_choice
{
  APPROVAL_ALLOW,
  APPROVAL_ALLOW_RULE, /* only when the line could be read */
  APPROVAL_DENY,
  APPROVAL_CHOICES
};

/* The question's state.  */
struct approval
{
  const struct panel_host *host;
  struct approval_where where;
  int sel; /* the selected choice */
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

/* The rules "allow, and from now on" adds for call: an MCP tool call's
 * full name (mcp__<server>__<tool>, the rule that names it); for a
 * command, those permit_propose reads from its line.  */
static void
approval_propose (const struct session_call *call, struct permit_proposal *out)
{
  const char *tool = session_call_tool (call);
  if (tool == NULL)
    {
      permit_propose (session_call_line (call), out);
      return;
    }
  out->rules = xcalloc (2, sizeof *out->rules);
  out->rules[0] = xstrdup (tool);
  out->n = 1;
}

/* The panel's lines for cols columns; none once the question is gone.  */
static void
approval_draw (void *state, int cols, struct screen_lines *out)
{
  struct approval *a = state;
  struct session_call *call = a->host->question (a->host->data);
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
  screen_lines_add (out, THEME_TEXT, _ ("  in: %s"), a->where.workspace);
  if (a->where.confined)
    screen_lines_add (out, THEME_TEXT, "  %s",
                      _ ("confinement: on (it runs inside the sandbox)"));
  else
    screen_lines_add (out, THEME_WARNING, "  %s",
                      _ ("confinement: off (it runs with your own access)"));
  if (session_call_background (call))
    screen_lines_add (out, THEME_WARNING, "  %s",
                      _ ("it will still be running after the turn ends"));
  screen_lines_add (out, THEME_TEXT, "%s", "");
  struct permit_proposal rules;
  approval_propose (call, &rules);
  struct buf joined = BUF_INIT;
  for (size_t i = 0; i < rules.n; i++)
    buf_printf (&joined, "%s%s", i > 0 ? ", " : "", rules.rules[i]);
  permit_proposal_clear (&rules);
  for (int i = 0, row = 1; i < APPROVAL_CHOICES; i++)
    {
      if (i == APPROVAL_ALLOW_RULE && joined.len == 0)
        continue;
      const char *mark = i == a->sel ? "\xe2\x80\xba" : " ";
      enum theme_role role = i == a->sel ? THEME_ACCENT : THEME_TEXT;
      if (i == APPROVAL_ALLOW)
        screen_lines_add (out, role, "%s %d. %s", mark, row++,
                          _ ("Allow once"));
      else if (i == APPROVAL_ALLOW_RULE)
        screen_lines_add (out, role,
                          _ ("%s %d. Allow, and from now on allow %s in "
                             "this workspace"),
                          mark, row++, joined.data);
      else
        screen_lines_add (out, role, "%s %d. %s", mark, row++, _ ("Deny"));
    }
  buf_free (&joined);
  screen_lines_add (out, THEME_DIM, "%s",
                    _ ("enter chooses \xc2\xb7 esc denies"));
}

/* Say in the transcript that the rules were not saved, and why.  */
static void
approval_not_saved (struct approval *a, const char *why)
{
  cleanup_free char *text = xasprintf (
      _ ("the rule was not saved: %s; the command is allowed once"), why);
  a->host->notice (a->host->data, THEME_WARNING, text);
}

/* Write the rules proposed for call's line to the home configuration and
 * add them to this session's rules; say what was added, or why it was
 * not.  */
static void
approval_add_rules (struct approval *a, struct session_call *call)
{
  const struct panel_host *h = a->host;
  struct permit_proposal r;
  struct cr_error *err = NULL;
  approval_propose (call, &r);
  if (a->where.home_file == NULL)
    cr_error_set (&err, 0, "%s",
                  _ ("HOME is not set, so there is no home configuration"));
  if (r.n == 0 || err != NULL
      || config_home_add_allow (a->where.home_file, a->where.workspace, r.rules,
                                r.n, &err)
             < 0)
    {
      approval_not_saved (a, err != NULL ? err->msg
                                         : _ ("the line could not be read"));
      cr_error_free (err);
      permit_proposal_clear (&r);
      return;
    }
  for (size_t i = 0; i < r.n; i++)
    {
      if (rules_add_allow (a->where.rules, r.rules[i], "workspaces.allow", &err)
          < 0)
        {
          h->notice (h->data, THEME_WARNING, err->msg);
          cr_error_clear (&err);
          continue;
        }
      cleanup_free char *text
          = xasprintf (_ ("%s is allowed in this workspace from now on (%s)"),
                       r.rules[i], a->where.home_file);
      h->notice (h->data, THEME_DIM, text);
    }
  permit_proposal_clear (&r);
}

/* Answer the question, which closes the panel.  */
static void
approval_answer (struct approval *a, enum approval_choice choice)
{
  struct session_call *call = a->host->question (a->host->data);
  if (call == NULL)
    return;
  if (choice == APPROVAL_ALLOW_RULE)
    approval_add_rules (a, call);
  a->host->answer (a->host->data, choice != APPROVAL_DENY);
}

/* Whether call's line offers the "allow and add" choice.  */
static bool
approval_has_rule (const struct session_call *call)
{
  struct permit_proposal r;
  approval_propose (call, &r);
  bool has = r.n > 0;
  permit_proposal_clear (&r);
  return has;
}

/* Move the selection by dir, skipping a choice that is not offered.  */
static void
approval_move (struct approval *a, const struct session_call *call, int dir)
{
  int sel = a->sel + dir;
  if (sel == APPROVAL_ALLOW_RULE && !approval_has_rule (call))
    sel += dir;
  if (sel >= 0 && sel < APPROVAL_CHOICES)
    a->sel = sel;
}

/* A key while the question is open.  */
static void
approval_key (void *state, TermKey *tk, const TermKeyKey *key)
{
  struct approval *a = state;
  const struct panel_host *h = a->host;
  struct session_call *call = h->question (h->data);
  if (call == NULL)
    return;
  bool has_rule = approval_has_rule (call);
  if (key->type == TERMKEY_TYPE_KEYSYM)
    switch (key->code.sym)
      {
      case TERMKEY_SYM_ESCAPE:
        approval_answer (a, APPROVAL_DENY);
        break;
      case TERMKEY_SYM_UP:
        approval_move (a, call, -1);
        break;
      case TERMKEY_SYM_DOWN:
        approval_move (a, call, 1);
        break;
      case TERMKEY_SYM_ENTER:
        approval_answer (a, (enum approval_choice) a->sel);
        break;
      default:
        break;
      }
  else if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0)
    {
      /* The numbers as shown: without a rule to add, 2 is Deny.  */
      uint32_t cp = key->code.codepoint;
      if (cp == '1' || cp == 'y')
        approval_answer (a, APPROVAL_ALLOW);
      else if (cp == '2' && has_rule)
        approval_answer (a, APPROVAL_ALLOW_RULE);
      else if ((cp == '2' && !has_rule) || (cp == '3' && has_rule) || cp == 'n')
        approval_answer (a, APPROVAL_DENY);
    }
  h->dirty (h->data);
}

/* Free the question's state.  */
static void
approval_free (void *state)
{
  free (state);
}

const struct panel_ops approval_panel_ops = {
  .name = "approval",
  .draw = approval_draw,
  .key = approval_key,
  .free = approval_free,
};

struct panel
approval_panel_new (const struct panel_host *host,
                    const struct approval_where *where)
{
  struct approval *a = xcalloc (1, sizeof *a);
  a->host = host;
  a->where = *where;
  return (struct panel){ .ops = &approval_panel_ops, .state = a };
}
