/* The network question panel.  */
#include <config.h>

#include "tui/netask.h"

#include <stdlib.h>

#include "core/loop.h"
#include "lib/clock.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/screen.h"

/* The choices in the order shown.  */
static const enum netask_answer netask_choices[]
    = { NETASK_COMMAND, NETASK_ALWAYS, NETASK_REFUSE };
#define NETASK_CHOICES 3

/* The question's state.  */
struct netask
{
  const struct panel_host *host;
  struct netask_host ask;
  int sel; /* index into netask_choices */
};

/* Seconds left before the question is refused unanswered.  */
static unsigned
netask_seconds_left (const struct netask_question *q)
{
  uint64_t now = clock_now_ms ();
  if (now >= q->deadline_ms)
    return 0;
  return (unsigned) ((q->deadline_ms - now + 999) / 1000);
}

/* One choice's line.  */
static void
netask_draw_choice (struct screen_lines *out, const struct netask_question *q,
                    int i, bool selected)
{
  const char *mark = selected ? "\xe2\x80\xba" : " ";
  enum theme_role role = selected ? THEME_ACCENT : THEME_TEXT;
  if (netask_choices[i] == NETASK_COMMAND && q->server != NULL)
    screen_lines_add (out, role, _ ("%s %d. Allow %s for this server"), mark,
                      i + 1, q->name);
  else if (netask_choices[i] == NETASK_COMMAND)
    screen_lines_add (out, role, _ ("%s %d. Allow %s for this command"), mark,
                      i + 1, q->name);
  else if (netask_choices[i] == NETASK_ALWAYS)
    screen_lines_add (out, role, _ ("%s %d. Allow %s always in this workspace"),
                      mark, i + 1, q->name);
  else
    screen_lines_add (out, role, "%s %d. %s", mark, i + 1, _ ("Refuse"));
}

/* The panel's lines; none once the question is gone.  */
static void
netask_draw (void *state, int cols, struct screen_lines *out)
{
  struct netask *n = state;
  const struct netask_question *q = n->ask.question (n->ask.data);
  if (q == NULL)
    return;
  char *rule = screen_rule (cols);
  screen_lines_add (out, THEME_BORDER, "%s", rule);
  free (rule);
  /* Who asks: a server's question names it (shown as configured).  */
  if (q->server != NULL)
    screen_lines_add (out, THEME_ACCENT,
                      _ ("MCP server `%s` wants to reach %s, which is not "
                         "allowed"),
                      q->server, q->name);
  else
    screen_lines_add (out, THEME_ACCENT,
                      _ ("A command wants to reach %s, which is not allowed"),
                      q->name);
  if (q->label != NULL)
    screen_lines_add (out, THEME_TEXT, "  %s", q->label);
  screen_lines_add (out, THEME_DIM,
                    _ ("  its connection waits; refused in %u s without an "
                       "answer"),
                    netask_seconds_left (q));
  screen_lines_add (out, THEME_TEXT, "%s", "");
  for (int i = 0; i < NETASK_CHOICES; i++)
    netask_draw_choice (out, q, i, i == n->sel);
  screen_lines_add (out, THEME_DIM, "%s",
                    _ ("enter chooses \xc2\xb7 esc refuses"));
}

/* Answer, which closes the panel.  */
static void
netask_answer (struct netask *n, enum netask_answer a)
{
  if (n->ask.question (n->ask.data) != NULL)
    n->ask.answer (n->ask.data, a);
}

/* A key while the question is open.  */
static void
netask_key (void *state, TermKey *tk, const TermKeyKey *key)
{
  struct netask *n = state;
  const struct panel_host *h = n->host;
  (void) tk;
  if (n->ask.question (n->ask.data) == NULL)
    return;
  if (key->type == TERMKEY_TYPE_KEYSYM)
    switch (key->code.sym)
      {
      case TERMKEY_SYM_ESCAPE:
        netask_answer (n, NETASK_REFUSE);
        return;
      case TERMKEY_SYM_UP:
        n->sel = n->sel > 0 ? n->sel - 1 : 0;
        break;
      case TERMKEY_SYM_DOWN:
        n->sel = n->sel < NETASK_CHOICES - 1 ? n->sel + 1 : n->sel;
        break;
      case TERMKEY_SYM_ENTER:
        netask_answer (n, netask_choices[n->sel]);
        return;
      default:
        break;
      }
  else if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0)
    {
      uint32_t cp = key->code.codepoint;
      if (cp >= '1' && cp < '1' + NETASK_CHOICES)
        {
          netask_answer (n, netask_choices[cp - '1']);
          return;
        }
      if (cp == 'n')
        {
          netask_answer (n, NETASK_REFUSE);
          return;
        }
    }
  h->dirty (h->data);
}

/* Free the question's state.  */
static void
netask_free (void *state)
{
  free (state);
}

const struct panel_ops netask_panel_ops = {
  .name = "netask",
  .draw = netask_draw,
  .key = netask_key,
  .ticks = true,
  .free = netask_free,
};

struct panel
netask_panel_new (const struct panel_host *host, const struct netask_host *ask)
{
  struct netask *n = xcalloc (1, sizeof *n);
  n->host = host;
  n->ask = *ask;
  return (struct panel){ .ops = &netask_panel_ops, .state = n };
}
