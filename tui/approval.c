/* The approval panel.  */
#include <config.h>

#include "tui/approval.h"

#include <stdlib.h>
#include <string.h>

#include "core/cmdline.h"
#include "lib/buf.h"
#include "lib/cleanup.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/cmd_sandbox.h"
#include "tui/screen.h"
#include "tui/ui.h"

enum approval_choice
{
  APPROVAL_ALLOW,
  APPROVAL_ALLOW_RULE, /* only when the line could be read */
  APPROVAL_DENY,
  APPROVAL_CHOICES
};

/* The rules an "allow and add" would add, for the home configuration's
 * workspaces.<workspace>.allow.  */
struct approval_rules
{
  const char *workspace;
  char **rules;
  size_t n;
};

/* Append word to b as a rule pattern: '*' and '\' escaped.  */
static void
approval_put_word (struct buf *b, const char *word)
{
  for (const char *c = word; *c != '\0'; c++)
    {
      if (*c == '*' || *c == '\\')
        buf_putc (b, '\\');
      buf_putc (b, *c);
    }
}

/* Whether a word reads as a subcommand (`run`, `build`, `compose`,
 * `sub-command`): a letter, then letters, digits, '-', '_' or ':'.  An
 * option, a path, a number (`sleep 300`), a quoted phrase or an expansion
 * is an argument, and a rule naming it would cover that one call only. */
static bool
approval_subcommand (const char *word)
{
  if (!((*word >= 'a' && *word <= 'z') || (*word >= 'A' && *word <= 'Z')))
    return false;
  for (const char *c = word; *c != '\0'; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')
          || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == ':'))
      return false;
  return true;
}

/* The rule proposed for one command: its program and, when the next word
 * is a subcommand rather than an option or a path, that word too, then
 * anything: `Bash(npm run *)`, `Bash(make *)`.  */
static char *
approval_rule_for (const struct cmdline_command *c)
{
  struct buf b = BUF_INIT;
  buf_puts (&b, "Bash(");
  for (size_t i = 0; i < c->n_assign; i++)
    {
      approval_put_word (&b, c->assign[i]);
      buf_putc (&b, ' ');
    }
  approval_put_word (&b, c->argv[c->program]);
  const char *next = c->program + 1 < c->argc ? c->argv[c->program + 1] : NULL;
  if (next != NULL && approval_subcommand (next))
    {
      buf_putc (&b, ' ');
      approval_put_word (&b, next);
    }
  buf_puts (&b, " *)");
  return buf_steal (&b, NULL);
}

/* The rules for a line, each command once; none when it cannot be read. */
static void
approval_rules_for (const char *line, struct approval_rules *out)
{
  struct cmdline *cl = NULL;
  struct cr_error *err = NULL;
  out->rules = NULL;
  out->n = 0;
  if (cmdline_read (line, strlen (line), &cl, &err) < 0)
    {
      cr_error_free (err);
      return;
    }
  for (size_t i = 0; i < cl->n; i++)
    {
      const struct cmdline_command *c = &cl->cmds[i];
      if (c->argc == 0 || c->transparent)
        continue;
      char *rule = approval_rule_for (c);
      bool seen = false;
      for (size_t k = 0; k < out->n && !seen; k++)
        seen = strcmp (out->rules[k], rule) == 0;
      if (seen)
        {
          free (rule);
          continue;
        }
      out->rules = xrealloc (out->rules, (out->n + 1) * sizeof (char *));
      out->rules[out->n++] = rule;
    }
  cmdline_free (cl);
}

static void
approval_rules_clear (struct approval_rules *r)
{
  for (size_t i = 0; i < r->n; i++)
    free (r->rules[i]);
  free (r->rules);
  r->rules = NULL;
  r->n = 0;
}

/* Generate a string.  */
static void
approval_gen_string (struct jsonw *g, const char *s)
{
  jsonw_cstr (g, s);
}

/* Generate the allow list: what it held, then the new rules not in it
 * (data: the approval_rules).  */
static void
approval_gen_allow (struct jsonw *g, yajl_val allow, const void *data)
{
  const struct approval_rules *r = data;
  if (allow != NULL && !YAJL_IS_ARRAY (allow))
    allow = NULL;
  jsonw_array_open (g);
  for (size_t i = 0; allow != NULL && i < allow->u.array.len; i++)
    cmd_home_gen_value (g, allow->u.array.values[i]);
  for (size_t k = 0; k < r->n; k++)
    {
      bool there = false;
      for (size_t i = 0; allow != NULL && i < allow->u.array.len && !there; i++)
        there
            = YAJL_IS_STRING (allow->u.array.values[i])
              && strcmp (allow->u.array.values[i]->u.string, r->rules[k]) == 0;
      if (!there)
        approval_gen_string (g, r->rules[k]);
    }
  jsonw_array_close (g);
}

/* Generate this workspace's object, its allow list grown.  */
static void
approval_gen_workspace (struct jsonw *g, yajl_val ws, const void *data)
{
  cmd_home_gen_object_with (g, ws, "allow", approval_gen_allow, data);
}

/* Generate the workspaces object with this workspace's rules added.  */
static void
approval_gen_workspaces (struct jsonw *g, yajl_val all, const void *data)
{
  const struct approval_rules *r = data;
  cmd_home_gen_object_with (g, all, r->workspace, approval_gen_workspace, r);
}

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
  struct approval_rules rules;
  approval_rules_for (session_call_line (call), &rules);
  struct buf joined = BUF_INIT;
  for (size_t i = 0; i < rules.n; i++)
    buf_printf (&joined, "%s%s", i > 0 ? ", " : "", rules.rules[i]);
  approval_rules_clear (&rules);
  for (int i = 0, row = 1; i < APPROVAL_CHOICES; i++)
    {
      if (i == APPROVAL_ALLOW_RULE && joined.len == 0)
        continue;
      const char *mark = i == ui->approval_sel ? "\xe2\x80\xba" : " ";
      enum theme_role role = i == ui->approval_sel ? THEME_ACCENT : THEME_TEXT;
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

/* Write the rules for call's line to the home configuration and add them
 * to this session's rules; say what was added, or why it was not.  */
static void
approval_add_rules (struct ui *ui, struct session_call *call)
{
  struct approval_rules r = { .workspace = ui->workspace };
  struct cr_error *err = NULL;
  approval_rules_for (session_call_line (call), &r);
  if (ui->home_file == NULL)
    cr_error_set (&err, 0, "%s",
                  _ ("HOME is not set, so there is no home configuration"));
  if (r.n == 0 || err != NULL
      || cmd_home_update (ui->home_file, "workspaces", approval_gen_workspaces,
                          &r, &err)
             < 0)
    {
      cleanup_free char *text = xasprintf (
          _ ("the rule was not saved: %s; the command is allowed once"),
          err != NULL ? err->msg : _ ("the line could not be read"));
      ui_notice (ui, THEME_WARNING, text);
      cr_error_free (err);
      approval_rules_clear (&r);
      return;
    }
  for (size_t i = 0; i < r.n; i++)
    {
      if (rules_add_allow (ui->rules, r.rules[i], "workspaces.allow", &err) < 0)
        {
          ui_notice (ui, THEME_WARNING, err->msg);
          cr_error_clear (&err);
          continue;
        }
      cleanup_free char *text
          = xasprintf (_ ("%s is allowed in this workspace from now on (%s)"),
                       r.rules[i], ui->home_file);
      ui_notice (ui, THEME_DIM, text);
    }
  approval_rules_clear (&r);
}

/* Answer the question and close the panel.  */
static void
approval_answer (struct ui *ui, enum approval_choice choice)
{
  struct session_call *call = ui->asking;
  ui->asking = NULL;
  ui->panel = UI_PANEL_NONE;
  if (call == NULL)
    return;
  if (choice == APPROVAL_ALLOW_RULE)
    approval_add_rules (ui, call);
  session_answer_approval (ui->session, call, choice != APPROVAL_DENY);
}

/* Whether call's line offers the "allow and add" choice.  */
static bool
approval_has_rule (const struct session_call *call)
{
  struct approval_rules r;
  approval_rules_for (session_call_line (call), &r);
  bool has = r.n > 0;
  approval_rules_clear (&r);
  return has;
}

/* Move the selection by dir, skipping a choice that is not offered.  */
static void
approval_move (struct ui *ui, int dir)
{
  int sel = ui->approval_sel + dir;
  if (sel == APPROVAL_ALLOW_RULE && !approval_has_rule (ui->asking))
    sel += dir;
  if (sel >= 0 && sel < APPROVAL_CHOICES)
    ui->approval_sel = sel;
}

void
approval_key (struct ui *ui, TermKey *tk, const TermKeyKey *key)
{
  if (ui->asking == NULL)
    return;
  bool has_rule = approval_has_rule (ui->asking);
  if (key->type == TERMKEY_TYPE_KEYSYM)
    switch (key->code.sym)
      {
      case TERMKEY_SYM_ESCAPE:
        approval_answer (ui, APPROVAL_DENY);
        break;
      case TERMKEY_SYM_UP:
        approval_move (ui, -1);
        break;
      case TERMKEY_SYM_DOWN:
        approval_move (ui, 1);
        break;
      case TERMKEY_SYM_ENTER:
        approval_answer (ui, (enum approval_choice) ui->approval_sel);
        break;
      default:
        break;
      }
  else if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0)
    {
      /* The numbers as shown: without a rule to add, 2 is Deny.  */
      uint32_t cp = key->code.codepoint;
      if (cp == '1' || cp == 'y')
        approval_answer (ui, APPROVAL_ALLOW);
      else if (cp == '2' && has_rule)
        approval_answer (ui, APPROVAL_ALLOW_RULE);
      else if ((cp == '2' && !has_rule) || (cp == '3' && has_rule) || cp == 'n')
        approval_answer (ui, APPROVAL_DENY);
    }
  ui_dirty (ui);
}
