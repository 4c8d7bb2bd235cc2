/* The "Still running" list.  */
#include <config.h>

#include "tui/tasks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/loop.h"
#include "lib/clock.h"
#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/screen.h"
#include "tui/text.h"
#include "tui/ui_cmd.h"

/* Where the counts begin, as the spec draws the list: labels shorter
 * than this leave the counts in one column under each other rather than
 * pushed to a wide window's far edge.  */
#define TASKS_COUNTS_COL 45

/* The list's state.  */
struct tasks
{
  const struct panel_host *host;
  int sel;             /* the selected row */
  uint64_t sel_number; /* its command's number, 0 for none yet */
};

/* A row's two halves: "› 1. Bash(npm run dev)" and "4m 12s · 84 lines ·
 * 6.4 kB".  */
static void
tasks_halves (const struct ui_cmd *c, bool selected, char **left, char **right)
{
  char dur[32], lines[64];
  text_duration (dur, sizeof dur, clock_now_ms () - c->started_ms);
  snprintf (lines, sizeof lines,
            P_ ("%" PRIu64 " line", "%" PRIu64 " lines", ui_cmd_lines (c)),
            ui_cmd_lines (c));
  *left = xasprintf ("%s %" PRIu64 ". %s", selected ? "\xe2\x80\xba" : " ",
                     command_number (c->cmd), c->label);
  char *where = command_where (c->cmd);
  *right = xasprintf ("%s \xc2\xb7 %s \xc2\xb7 %s%s%s", dur, lines,
                      text_bytes (c->bytes, 1), where ? " \xc2\xb7 " : "",
                      where ? where : "");
  free (where);
}

/* The rows, the counts in one column: at TASKS_COUNTS_COL, further right
 * when a label is longer, and further left when the window is too narrow
 * for them there (the labels giving up columns, cut with "…").  */
static void
tasks_rows (struct tasks *t, struct ui_cmd **rows, size_t n, int cols,
            struct screen_lines *out)
{
  char **left = xcalloc (n + 1, sizeof *left);
  char **right = xcalloc (n + 1, sizeof *right);
  int col = TASKS_COUNTS_COL, widest = 0;
  for (size_t i = 0; i < n; i++)
    {
      tasks_halves (rows[i], (int) i == t->sel, &left[i], &right[i]);
      int lw = text_width (left[i], strlen (left[i]));
      int rw = text_width (right[i], strlen (right[i]));
      if (lw + 2 > col)
        col = lw + 2;
      if (rw > widest)
        widest = rw;
    }
  if (col + widest > cols)
    col = cols - widest > 0 ? cols - widest : 0;
  for (size_t i = 0; i < n; i++)
    {
      int rw = text_width (right[i], strlen (right[i]));
      char *row = screen_row_split (left[i], right[i], col + rw);
      screen_lines_add (out, (int) i == t->sel ? THEME_ACCENT : THEME_TEXT,
                        "%s", row);
      free (row);
      free (left[i]);
      free (right[i]);
    }
  free (left);
  free (right);
}

/* Find the selected row again: the selection follows its command, so a
 * row going above it (a command ending on its own) does not slide another
 * command under it for x to stop.  When its own command has gone, the row
 * now in its place is selected.  */
static void
tasks_reselect (struct tasks *t, struct ui_cmd **rows, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (t->sel_number != 0 && command_number (rows[i]->cmd) == t->sel_number)
      {
        t->sel = (int) i;
        return;
      }
  if (t->sel >= (int) n)
    t->sel = n > 0 ? (int) n - 1 : 0;
  t->sel_number = n > 0 ? command_number (rows[t->sel]->cmd) : 0;
}

/* The panel's lines for cols columns.  */
static void
tasks_draw (void *state, int cols, struct screen_lines *out)
{
  struct tasks *t = state;
  size_t n;
  struct ui_cmd **rows = t->host->left_running (t->host->data, &n);
  tasks_reselect (t, rows, n);
  char *rule = screen_rule (cols);
  screen_lines_add (out, THEME_BORDER, "%s", rule);
  free (rule);
  screen_lines_add (out, THEME_TEXT, "%s", "");
  screen_lines_add (out, THEME_ACCENT, "%s", _ ("Still running"));
  screen_lines_add (out, THEME_TEXT, "%s", "");
  tasks_rows (t, rows, n, cols, out);
  if (n > 0 && rows[t->sel]->stop_failed)
    screen_lines_add (out, THEME_ERROR, "  %s", _ ("Stop failed"));
  screen_lines_add (out, THEME_TEXT, "%s", "");
  screen_lines_add (out, THEME_DIM, "%s",
                    _ ("esc to close \xc2\xb7 enter shows it \xc2\xb7 x stops "
                       "it"));
  free (rows);
}

/* A key while the list is open.  */
static void
tasks_key (void *state, TermKey *tk, const TermKeyKey *key)
{
  struct tasks *t = state;
  const struct panel_host *h = t->host;
  size_t n;
  struct ui_cmd **rows = h->left_running (h->data, &n);
  tasks_reselect (t, rows, n);
  struct ui_cmd *sel = n > 0 ? rows[t->sel] : NULL;
  if (key->type == TERMKEY_TYPE_KEYSYM)
    switch (key->code.sym)
      {
      case TERMKEY_SYM_ESCAPE:
        h->close (h->data);
        break;
      case TERMKEY_SYM_UP:
        if (t->sel > 0)
          t->sel--;
        break;
      case TERMKEY_SYM_DOWN:
        if (t->sel + 1 < (int) n)
          t->sel++;
        break;
      case TERMKEY_SYM_ENTER:
        if (sel != NULL)
          h->open_full_view (h->data, sel);
        break;
      default:
        break;
      }
  else if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0
           && key->code.codepoint == 'x' && sel != NULL && sel->cmd != NULL)
    /* No confirmation: the command was started by a call the person
     * allowed, and stopping it is what the list is for.  */
    h->stop (h->data, sel);
  else if (key->type == TERMKEY_TYPE_UNICODE
           && key->modifiers == TERMKEY_KEYMOD_CTRL
           && key->code.codepoint == 'b')
    h->close (h->data);
  if (n > 0)
    t->sel_number = command_number (rows[t->sel]->cmd);
  free (rows);
  h->dirty (h->data);
}

/* A slot was freed: the list closes with its last row, also when it is
 * under the full view of that row's command (Esc then comes back to the
 * box).  */
static void
tasks_update (void *state)
{
  struct tasks *t = state;
  size_t n;
  free (t->host->left_running (t->host->data, &n));
  if (n == 0)
    t->host->close (t->host->data);
}

/* Free the list's state.  */
static void
tasks_free (void *state)
{
  free (state);
}

const struct panel_ops tasks_panel_ops = {
  .name = "tasks",
  .draw = tasks_draw,
  .key = tasks_key,
  .update = tasks_update,
  .ticks = true,
  .free = tasks_free,
};

struct panel
tasks_panel_new (const struct panel_host *host)
{
  struct tasks *t = xcalloc (1, sizeof *t);
  t->host = host;
  return (struct panel){ .ops = &tasks_panel_ops, .state = t };
}
