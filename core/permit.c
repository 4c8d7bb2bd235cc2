/* Deciding whether a call runs.  */
#include <config.h>

#include "core/permit.h"

#include <stdlib.h>
#include <string.h>

#include "core/cmdline.h"
#include "core/notes.h"
#include "lib/buf.h"
#include "lib/xalloc.h"

/* Why a line that sleeps first is refused: the move is to leave it running.  */
#define PERMIT_SLEEP_REFUSAL                                                   \
  "[refused: the command begins by sleeping to wait for a later one, which "   \
  "is a wait written as a command; send the same line with background: "       \
  "true, which costs the turn nothing and comes back with what it printed; "   \
  "nothing was run]"

struct rules *
permit_rules (const struct config *cfg, struct cr_error **err)
{
  struct rules *r
      = rules_new (cfg->permissions_mode, cfg->allow.items, cfg->allow.count,
                   cfg->deny.items, cfg->deny.count, err);
  if (r == NULL)
    {
      cr_error_prefix (err, "permissions");
      return NULL;
    }
  /* The rules the person added for this workspace from the approval
   * panel (home-only, like permissions.allow).  */
  for (size_t i = 0; i < cfg->workspace_allow.count; i++)
    if (rules_add_allow (r, cfg->workspace_allow.items[i], "workspaces.allow",
                         err)
        < 0)
      {
        rules_free (r);
        return NULL;
      }
  return r;
}

/* The refusal of a line the deny rules match.  */
static char *
permit_denied (const struct rules *rules, const struct cmdline *cl)
{
  char *why = rules_deny_message (rules, cl);
  char *text = notes_refusal (why);
  free (why);
  return text;
}

void
permit_decide (const struct rules *rules, const char *line,
               bool typed_by_person, bool background, struct permit *out)
{
  struct cmdline *cl = NULL;
  struct cr_error *err = NULL;

  memset (out, 0, sizeof *out);
  /* A line that cannot be read is asked about (or run, when the person
   * typed it): rules_decide takes NULL for it.  */
  if (cmdline_read (line, strlen (line), &cl, &err) < 0)
    cr_error_free (err);
  switch (rules_decide (rules, cl, typed_by_person, NULL))
    {
    case RULES_DENY:
      out->verdict = PERMIT_REFUSE;
      out->refusal = permit_denied (rules, cl);
      break;
    case RULES_ALLOW:
      out->verdict = PERMIT_RUN;
      break;
    case RULES_ASK:
      out->verdict = PERMIT_ASK;
      break;
    }
  /* Waiting is what leaving a command running is for; a model's foreground
   * call that sleeps first is refused whatever the rules say.  */
  if (out->verdict != PERMIT_REFUSE && !typed_by_person && !background
      && cl != NULL && cmdline_begins_with_sleep (cl))
    {
      out->verdict = PERMIT_REFUSE;
      out->refusal = xstrdup (PERMIT_SLEEP_REFUSAL);
    }
  cmdline_free (cl);
}

void
permit_clear (struct permit *p)
{
  free (p->refusal);
  p->refusal = NULL;
}

/* Append word to b as a rule pattern: '*' and '\' escaped.  */
static void
permit_put_word (struct buf *b, const char *word)
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
permit_subcommand (const char *word)
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
 * anything: `Bash(npm run *)`, `Bash(make *)`.  Owned.  */
static char *
permit_rule_for (const struct cmdline_command *c)
{
  struct buf b = BUF_INIT;
  buf_puts (&b, "Bash(");
  for (size_t i = 0; i < c->n_assign; i++)
    {
      permit_put_word (&b, c->assign[i]);
      buf_putc (&b, ' ');
    }
  permit_put_word (&b, c->argv[c->program]);
  const char *next = c->program + 1 < c->argc ? c->argv[c->program + 1] : NULL;
  if (next != NULL && permit_subcommand (next))
    {
      buf_putc (&b, ' ');
      permit_put_word (&b, next);
    }
  buf_puts (&b, " *)");
  return buf_steal (&b, NULL);
}

/* Add rule to out unless it is there already; takes rule.  */
static void
permit_proposal_add (struct permit_proposal *out, char *rule)
{
  for (size_t k = 0; k < out->n; k++)
    if (strcmp (out->rules[k], rule) == 0)
      {
        free (rule);
        return;
      }
  out->rules = xrealloc (out->rules, (out->n + 1) * sizeof (char *));
  out->rules[out->n++] = rule;
}

void
permit_propose (const char *line, struct permit_proposal *out)
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
      if (c->argc > 0 && !c->transparent)
        permit_proposal_add (out, permit_rule_for (c));
    }
  cmdline_free (cl);
}

void
permit_proposal_clear (struct permit_proposal *p)
{
  for (size_t i = 0; i < p->n; i++)
    free (p->rules[i]);
  free (p->rules);
  p->rules = NULL;
  p->n = 0;
}
