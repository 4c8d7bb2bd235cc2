/* The panel of an MCP server's own question.  */
#include <config.h>

#include "tui/elicit.h"

#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/screen.h"

/* The question's state.  */
struct elicit
{
  const struct panel_host *host;
  struct elicit_host ask;
  int sel; /* index into the choices shown */
};

bool
elicit_schema_empty (const char *schema)
{
  const char *path[] = { "required", NULL };
  yajl_val v = yajl_tree_parse (schema, NULL, 0);
  if (v == NULL)
    return false;
  yajl_val req = yajl_tree_get (v, path, yajl_t_any);
  bool empty = req == NULL || (YAJL_IS_ARRAY (req) && req->u.array.len == 0);
  yajl_tree_free (v);
  return empty;
}

/* The choices shown for q, in order; *n of them.  */
static const enum mcpclient_elicit_action *
elicit_choices (const struct elicit_question *q, int *n)
{
  static const enum mcpclient_elicit_action all[]
      = { MCPCLIENT_ELICIT_ACCEPT, MCPCLIENT_ELICIT_DECLINE };
  *n = q->can_accept ? 2 : 1;
  return q->can_accept ? all : all + 1;
}

/* The panel's lines; none once the question is gone.  */
static void
elicit_draw (void *state, int cols, struct screen_lines *out)
{
  struct elicit *e = state;
  const struct elicit_question *q = e->ask.question (e->ask.data);
  if (q == NULL)
    return;
  char *rule = screen_rule (cols);
  screen_lines_add (out, THEME_BORDER, "%s", rule);
  free (rule);
  screen_lines_add (out, THEME_ACCENT, _ ("The MCP server `%s` asks"),
                    q->server);
  /* Its message line by line (shown safe: no control but newlines).  */
  for (const char *l = q->message; l != NULL && *l != '\0';)
    {
      const char *nl = strchr (l, '\n');
      int len = nl != NULL ? (int) (nl - l) : (int) strlen (l);
      screen_lines_add (out, THEME_TEXT, "  %.*s", len, l);
      l = nl != NULL ? nl + 1 : NULL;
    }
  if (!q->can_accept)
    screen_lines_add (out, THEME_DIM, "  %s",
                      _ ("it asks for fields this panel cannot fill in; it "
                         "can only be declined"));
  screen_lines_add (out, THEME_TEXT, "%s", "");
  int n;
  const enum mcpclient_elicit_action *c = elicit_choices (q, &n);
  for (int i = 0; i < n; i++)
    {
      const char *mark = i == e->sel ? "\xe2\x80\xba" : " ";
      enum theme_role role = i == e->sel ? THEME_ACCENT : THEME_TEXT;
      screen_lines_add (out, role, "%s %d. %s", mark, i + 1,
                        c[i] == MCPCLIENT_ELICIT_ACCEPT ? _ ("Accept")
                                                        : _ ("Decline"));
    }
  screen_lines_add (out, THEME_DIM, "%s",
                    _ ("enter chooses \xc2\xb7 esc cancels"));
}

/* Answer, which closes the panel.  */
static void
elicit_answer (struct elicit *e, enum mcpclient_elicit_action a)
{
  if (e->ask.question (e->ask.data) != NULL)
    e->ask.answer (e->ask.data, a);
}

/* A key while the question is open.  */
static void
elicit_key (void *state, TermKey *tk, const TermKeyKey *key)
{
  struct elicit *e = state;
  const struct panel_host *h = e->host;
  const struct elicit_question *q = e->ask.question (e->ask.data);
  (void) tk;
  if (q == NULL)
    return;
  int n;
  const enum mcpclient_elicit_action *c = elicit_choices (q, &n);
  if (key->type == TERMKEY_TYPE_KEYSYM)
    switch (key->code.sym)
      {
      case TERMKEY_SYM_ESCAPE:
        elicit_answer (e, MCPCLIENT_ELICIT_CANCEL);
        return;
      case TERMKEY_SYM_UP:
        e->sel = e->sel > 0 ? e->sel - 1 : 0;
        break;
      case TERMKEY_SYM_DOWN:
        e->sel = e->sel < n - 1 ? e->sel + 1 : e->sel;
        break;
      case TERMKEY_SYM_ENTER:
        elicit_answer (e, c[e->sel]);
        return;
      default:
        break;
      }
  else if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0)
    {
      uint32_t cp = key->code.codepoint;
      if (cp >= '1' && cp < '1' + (uint32_t) n)
        {
          elicit_answer (e, c[cp - '1']);
          return;
        }
    }
  h->dirty (h->data);
}

/* Free the question's state.  */
static void
elicit_free (void *state)
{
  free (state);
}

const struct panel_ops elicit_panel_ops = {
  .name = "elicit",
  .draw = elicit_draw,
  .key = elicit_key,
  .free = elicit_free,
};

struct panel
elicit_panel_new (const struct panel_host *host, const struct elicit_host *ask)
{
  struct elicit *e = xcalloc (1, sizeof *e);
  e->host = host;
  e->ask = *ask;
  return (struct panel){ .ops = &elicit_panel_ops, .state = e };
}
