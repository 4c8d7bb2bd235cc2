/* The "Still running" list.  */
#include <config.h>

#include "tui/tasks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/i18n.h"
#include "lib/xalloc.h"
#include "tui/screen.h"
#include "tui/text.h"
#include "tui/ui.h"

/* Where the counts begin, as the spec draws the list: labels shorter
 * than this leave the counts in one column under each other rather than
 * pushed to a wide window's far edge.  */
#define TASKS_COUNTS_COL 45

/* A row's two halves: "› 1. Bash(npm run dev)" and "4m 12s · 84 lines ·
 * 6.4 kB".  */
static void
tasks_halves (const struct ui_cmd *c, bool selected, char **left, char **right)
{
  char dur[32], lines[64];
  text_duration (dur, sizeof dur, loop_now_ms () - c->started_ms);
  snprintf (lines, sizeof lines,
            P_ ("%" PRIu64 " line", "%" PRIu64 " lines", ui_cmd_lines (c)),
            ui_cmd_lines (c));
  *left = xasprintf ("%s %" PRIu64 ". %s", selected ? "\xe2\x80\xba" : " ",
                     command_number (c->cmd), c->label);
  *right = xasprintf ("%s \xc2\xb7 %s \xc2\xb7 %s", dur, lines,
                      text_bytes (c->bytes, 1));
}

/* The rows, the counts in one column: at TASKS_COUNTS_COL, further right
 * when a label is longer, and further left when the window is too narrow
 * for them there (the labels giving up columns, cut with "…").  */
static void
tasks_rows (struct ui *ui, struct ui_cmd **rows, size_t n, int cols,
            struct screen_lines *out)
{
  char **left = xcalloc (n + 1, sizeof *left);
  char **right = xcalloc (n + 1, sizeof *right);
  int col = TASKS_COUNTS_COL, widest = 0;
  for (size_t i = 0; i < n; i++)
    {
      tasks_halves (rows[i], (int) i == ui->task_sel, &left[i], &right[i]);
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
      screen_lines_add (
          out, (int) i == ui->task_sel ? THEME_ACCENT : THEME_TEXT, "%s", row);
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
tasks_reselect (struct ui *ui, struct ui_cmd **rows, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (ui->task_sel_number != 0
        && command_number (rows[i]->cmd) == ui->task_sel_number)
      {
        ui->task_sel = (int) i;
        return;
      }
  if (ui->task_sel >= (int) n)
    ui->task_sel = n > 0 ? (int) n - 1 : 0;
  ui->task_sel_number = n > 0 ? command_number (rows[ui->task_sel]->cmd) : 0;
}

void
tasks_lines (struct ui *ui, int cols, struct screen_lines *out)
{
  size_t n;
  struct ui_cmd **rows = ui_left_running (ui, &n);
  tasks_reselect (ui, rows, n);
  char *rule = screen_rule (cols);
  screen_lines_add (out, THEME_BORDER, "%s", rule);
  free (rule);
  screen_lines_add (out, THEME_TEXT, "%s", "");
  screen_lines_add (out, THEME_ACCENT, "%s", _ ("Still running"));
  screen_lines_add (out, THEME_TEXT, "%s", "");
  tasks_rows (ui, rows, n, cols, out);
  if (n > 0 && rows[ui->task_sel]->stop_failed)
    screen_lines_add (out, THEME_ERROR, "  %s", _ ("Stop failed"));
  screen_lines_add (out, THEME_TEXT, "%s", "");
  screen_lines_add (out, THEME_DIM, "%s",
                    _ ("esc to close \xc2\xb7 enter shows it \xc2\xb7 x stops "
                       "it"));
  free (rows);
}

void
tasks_key (struct ui *ui, TermKey *tk, const TermKeyKey *key)
{
  size_t n;
  struct ui_cmd **rows = ui_left_running (ui, &n);
  tasks_reselect (ui, rows, n);
  struct ui_cmd *sel = n > 0 ? rows[ui->task_sel] : NULL;
  if (key->type == TERMKEY_TYPE_KEYSYM)
    switch (key->code.sym)
      {
      case TERMKEY_SYM_ESCAPE:
        ui->panel = UI_PANEL_NONE;
        break;
      case TERMKEY_SYM_UP:
        if (ui->task_sel > 0)
          ui->task_sel--;
        break;
      case TERMKEY_SYM_DOWN:
        if (ui->task_sel + 1 < (int) n)
          ui->task_sel++;
        break;
      case TERMKEY_SYM_ENTER:
        if (sel != NULL)
          ui_open_pager_cmd (ui, sel);
        break;
      default:
        break;
      }
  else if (key->type == TERMKEY_TYPE_UNICODE && key->modifiers == 0
           && key->code.codepoint == 'x' && sel != NULL && sel->cmd != NULL)
    {
      /* No confirmation: the command was started by a call the person
       * allowed, and stopping it is what the list is for.  */
      sel->stopping = true;
      sel->stop_failed = false;
      supervisor_stop (ui->sup, sel->cmd);
    }
  else if (key->type == TERMKEY_TYPE_UNICODE
           && key->modifiers == TERMKEY_KEYMOD_CTRL
           && key->code.codepoint == 'b')
    ui->panel = UI_PANEL_NONE;
  if (n > 0)
    ui->task_sel_number = command_number (rows[ui->task_sel]->cmd);
  free (rows);
  ui_dirty (ui);
}
