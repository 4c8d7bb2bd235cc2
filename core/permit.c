/* Deciding whether a call runs.  */
#include <config.h>

#include "core/permit.h"

#include <stdlib.h>
#include <string.h>

#include "core/cmdline.h"
#include "core/notes.h"
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
